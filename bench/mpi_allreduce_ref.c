/* mpi_allreduce_ref: the MPI reference for bench/compare-collectives (issue 14).
 *
 * Times MPI_Allreduce of floats (MPI_FLOAT, MPI_SUM) the way osu_allreduce does: for each
 * size, W warm-up iterations, then N measured iterations, each an MPI_Barrier followed by
 * one timed MPI_Allreduce (MPI_Wtime around the call alone). Unlike osu_allreduce, which
 * reduces each rank's mean, the local time of every iteration is kept, and one MPI_Reduce
 * (MPI_MAX) after the loop takes the maximum over ranks of each iteration: an iteration
 * lasts until its slowest rank is done. time = mean over iterations of that maximum, which
 * is how nccl-tests and meshperf's collective results (docs/result-schema.md) take it.
 *
 *   algbw = S / time, busbw = algbw * 2(p-1)/p          (nccl-tests' all-reduce factor)
 *
 * S is the per-rank buffer in bytes (S / 4 floats). Every element sent is a small integer,
 * so the float sum is exact: after the last iteration of each size every rank checks its
 * whole result and the wrong elements are summed over ranks (reported as `wrong`). Every
 * figure is checked (finite, positive, min <= p50 <= max, min <= mean <= max) before it
 * is printed; a failed check exits 1.
 *
 * Usage: mpirun ... mpi_allreduce_ref [-b MIN_BYTES] [-e MAX_BYTES] [-n ITERS] [-w WARMUP]
 *        defaults 1 MiB .. 64 MiB doubling, 20 iterations, 5 warm-up (nccl-tests' -n, -w)
 * Output (rank 0, stdout): '#' comment lines, then one line per size:
 *   size_bytes count iterations time_us time_min_us time_p50_us time_max_us
 *   algbw_gbyte_per_s busbw_gbyte_per_s wrong
 * (10^9 byte/s). Build: mpicc -O2 -o mpi_allreduce_ref mpi_allreduce_ref.c
 */
#include <math.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void* a, const void* b) {
    double x = *(const double*)a, y = *(const double*)b;
    return (x > y) - (x < y);
}

static int sane(double v) { return isfinite(v) && v > 0; }

static void die(const char* msg) {
    fprintf(stderr, "mpi_allreduce_ref: %s\n", msg);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

/* The value rank r sends at element i: 1..13 times (r + 1), exact in float for any p the
 * bench runs (the largest sum, 13 p (p + 1) / 2, is far below 2^24). */
static float sent(int r, size_t i) { return (float)((r + 1) * (int)(i % 13 + 1)); }

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int rank = 0, p = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &p);

    uint64_t min_bytes = 1u << 20, max_bytes = 64u << 20;
    long iters = 20, warmup = 5;
    for (int a = 1; a < argc; ++a) {
        const char* v = a + 1 < argc ? argv[a + 1] : NULL;
        if (!v) die("an option without its value");
        if (!strcmp(argv[a], "-b")) min_bytes = strtoull(v, NULL, 10);
        else if (!strcmp(argv[a], "-e")) max_bytes = strtoull(v, NULL, 10);
        else if (!strcmp(argv[a], "-n")) iters = strtol(v, NULL, 10);
        else if (!strcmp(argv[a], "-w")) warmup = strtol(v, NULL, 10);
        else die("unknown option (use -b MIN -e MAX -n ITERS -w WARMUP)");
        ++a;
    }
    if (p < 2) die("needs at least 2 ranks");
    if (min_bytes < sizeof(float) || min_bytes % sizeof(float) || max_bytes < min_bytes) die("bad -b/-e");
    if (iters < 1 || warmup < 0) die("bad -n/-w");

    const size_t max_count = max_bytes / sizeof(float);
    float* send = malloc(max_count * sizeof(float));
    float* recv = malloc(max_count * sizeof(float));
    double* local = malloc((size_t)iters * sizeof(double));
    double* worst = malloc((size_t)iters * sizeof(double));
    if (!send || !recv || !local || !worst) die("out of memory");
    for (size_t i = 0; i < max_count; ++i) send[i] = sent(rank, i);

    if (rank == 0) {
        printf("# mpi_allreduce_ref: %d ranks, MPI_FLOAT MPI_SUM, %ld iterations, %ld warm-up; "
               "time = mean over iterations of the max over ranks\n", p, iters, warmup);
        printf("# size_bytes count iterations time_us time_min_us time_p50_us time_max_us "
               "algbw_gbyte_per_s busbw_gbyte_per_s wrong\n");
        fflush(stdout);
    }
    int failed = 0;
    for (uint64_t size = min_bytes; size <= max_bytes && size >= min_bytes; size *= 2) {
        const size_t count = size / sizeof(float);
        for (long i = 0; i < warmup; ++i) {
            MPI_Barrier(MPI_COMM_WORLD);
            MPI_Allreduce(send, recv, (int)count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        }
        for (long i = 0; i < iters; ++i) {
            MPI_Barrier(MPI_COMM_WORLD);
            const double t0 = MPI_Wtime();
            MPI_Allreduce(send, recv, (int)count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
            local[i] = MPI_Wtime() - t0;
        }
        MPI_Reduce(local, worst, (int)iters, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);

        /* The result of the last iteration, checked element by element. */
        const float ranks_sum = (float)(p * (p + 1) / 2);
        unsigned long long wrong = 0, wrong_all = 0;
        for (size_t i = 0; i < count; ++i)
            if (recv[i] != ranks_sum * (float)(int)(i % 13 + 1)) ++wrong;
        MPI_Reduce(&wrong, &wrong_all, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);

        if (rank == 0) {
            double sum = 0;
            for (long i = 0; i < iters; ++i) sum += worst[i];
            const double mean = sum / (double)iters;
            qsort(worst, (size_t)iters, sizeof(double), cmp_double);
            const double mn = worst[0], mx = worst[iters - 1];
            const double p50 = iters % 2 ? worst[iters / 2] : (worst[iters / 2 - 1] + worst[iters / 2]) / 2;
            const double algbw = (double)size / mean / 1e9;
            const double busbw = algbw * 2.0 * (p - 1) / p;
            if (!sane(mean) || !sane(mn) || !sane(p50) || !sane(mx) || mn > p50 || p50 > mx || mn > mean ||
                mean > mx || !sane(algbw) || !sane(busbw)) {
                fprintf(stderr, "mpi_allreduce_ref: size %llu: implausible figures (mean %g, min %g, p50 %g, max %g s)\n",
                        (unsigned long long)size, mean, mn, p50, mx);
                failed = 1;
            }
            if (wrong_all) {
                fprintf(stderr, "mpi_allreduce_ref: size %llu: %llu wrong elements\n", (unsigned long long)size, wrong_all);
                failed = 1;
            }
            printf("%llu %zu %ld %.3f %.3f %.3f %.3f %.6f %.6f %llu\n", (unsigned long long)size, count, iters,
                   mean * 1e6, mn * 1e6, p50 * 1e6, mx * 1e6, algbw, busbw, wrong_all);
            fflush(stdout);
        }
        if (size > UINT64_MAX / 2) break;
    }
    MPI_Bcast(&failed, 1, MPI_INT, 0, MPI_COMM_WORLD);
    free(send);
    free(recv);
    free(local);
    free(worst);
    MPI_Finalize();
    return failed;
}

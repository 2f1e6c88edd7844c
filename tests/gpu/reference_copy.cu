// Reference for tests/gpu/device-check: the plainest cudaMemcpyAsync loop, independent of
// meshperf's code, to compare meshperf's copy sweep against.
//   reference_copy h2d|d2h|d2d MIN_BYTES MAX_BYTES [DEVICE]
// Sizes double from MIN to MAX. For each: 3 warm-up copies, then 7 trials of back-to-back
// copies (about 256 MiB per trial, 1 to 1000 copies) between two CUDA events; prints the
// median trial rate as CSV "copy,size_bytes,gb_per_s" (GB/s = 10^9 B/s). Host memory is
// pinned (cudaMallocHost). Exit 2 on any CUDA error.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>
#include <vector>

#define CHECK(call)                                                                                    \
    do {                                                                                               \
        cudaError_t e_ = (call);                                                                       \
        if (e_ != cudaSuccess) {                                                                       \
            std::fprintf(stderr, "reference_copy: %s: %s\n", #call, cudaGetErrorString(e_));           \
            std::exit(2);                                                                              \
        }                                                                                              \
    } while (0)

int main(int argc, char** argv) {
    if (argc < 4) {
        std::fprintf(stderr, "usage: reference_copy h2d|d2h|d2d MIN_BYTES MAX_BYTES [DEVICE]\n");
        return 2;
    }
    const char* kind = argv[1];
    const size_t lo = std::strtoull(argv[2], nullptr, 10), hi = std::strtoull(argv[3], nullptr, 10);
    const int device = argc > 4 ? std::atoi(argv[4]) : 0;
    cudaMemcpyKind dir;
    if (!std::strcmp(kind, "h2d")) dir = cudaMemcpyHostToDevice;
    else if (!std::strcmp(kind, "d2h")) dir = cudaMemcpyDeviceToHost;
    else if (!std::strcmp(kind, "d2d")) dir = cudaMemcpyDeviceToDevice;
    else return 2;
    if (lo == 0 || hi < lo) return 2;

    CHECK(cudaSetDevice(device));
    void *dev_a = nullptr, *dev_b = nullptr, *host = nullptr;
    CHECK(cudaMalloc(&dev_a, hi));
    if (dir == cudaMemcpyDeviceToDevice) CHECK(cudaMalloc(&dev_b, hi));
    else CHECK(cudaMallocHost(&host, hi));
    void* src = dir == cudaMemcpyHostToDevice ? host : dev_a;
    void* dst = dir == cudaMemcpyHostToDevice ? dev_a : dir == cudaMemcpyDeviceToHost ? host : dev_b;

    cudaStream_t s;
    cudaEvent_t start, stop;
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CHECK(cudaEventCreate(&start));
    CHECK(cudaEventCreate(&stop));
    for (size_t n = lo; n <= hi; n *= 2) {
        for (int i = 0; i < 3; ++i) CHECK(cudaMemcpyAsync(dst, src, n, dir, s));
        CHECK(cudaStreamSynchronize(s));
        const size_t iters = std::max<size_t>(1, std::min<size_t>(1000, (size_t(256) << 20) / n));
        std::vector<double> rates;
        for (int t = 0; t < 7; ++t) {
            CHECK(cudaEventRecord(start, s));
            for (size_t i = 0; i < iters; ++i) CHECK(cudaMemcpyAsync(dst, src, n, dir, s));
            CHECK(cudaEventRecord(stop, s));
            CHECK(cudaEventSynchronize(stop));
            float ms = 0;
            CHECK(cudaEventElapsedTime(&ms, start, stop));
            rates.push_back(double(n) * double(iters) / (double(ms) / 1e3) / 1e9);
        }
        std::sort(rates.begin(), rates.end());
        std::printf("%s,%zu,%.4f\n", kind, n, rates[rates.size() / 2]);
        std::fflush(stdout);
        if (n > hi / 2) break;  // no overflow past hi
    }
    return 0;
}

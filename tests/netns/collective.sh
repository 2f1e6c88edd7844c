#!/usr/bin/env bash
# Collective test: `meshperf collective` on six hosts in network namespaces (issue 14).
#
#   collective.sh MESHPERFD MESHPERF
#
# Six hosts on one bridge (tests/netns/lib.sh, netns_bridge_hosts), every host's link shaped
# by tbf at RATE_MBIT (default 400) in both directions, MTU 1500; a meshperfd per host, the
# CLI in the bridge's namespace. The link's TCP goodput, what a ring all-reduce's busbw is at
# best, is RATE × 1448/1514 (1500-byte IP packets, 1514 on the wire as tbf counts them,
# 1448 bytes of TCP payload with timestamps).
#
# Checks, each printing what it measured:
#  0. bad input exits 2 with nothing sent: 1 host, a host twice, an unknown op, an unknown
#     dtype;
#  1. ring all-reduce busbw at 16 MiB within TOLERANCE (5%) of the goodput (32 MiB shown: see check 1);
#     ring all-gather likewise;
#  2. --predict: the prediction's relative error (point field predicted.error) <= 10% at
#     every size >= 1 MiB, twice: with the CLI's own probes of the ring links (no --model),
#     then with the links' α and β from `meshperf matrix` (--model matrix.json); incast
#     (10%), tree broadcast (20%) and chain broadcast (10% from 16 MiB) from the matrix,
#     their schedule walked (see 2b). (Until
#     2026-12-02 the probes were a short sweep over 64 B..4 MiB fitted by least squares: β
#     0.63-0.95 Gbit/s on 0.383 Gbit/s links, predictions 62-136% fast, ~110 s a link; they
#     now measure a link as the matrix does.)
#  3. --verify: every point reports wrong == 0;
#  4. host SLOW's link at half the rate (both directions), so the ring links into and out of
#     its rank s are slow: slowest_link has s at one end, and slowest_rank is s or s + 1
#     (each receives over a slow link; here it has been s + 1, 1-2% slower than s: rank time
#     cannot tell the two ends apart); then, from a matrix measured with the slow host, a
#     tree broadcast predicted over each edge's own link within 20% at >= 4 MiB (4b); the
#     rate is restored;
#  5. host CORRUPT's daemon restarted with MESHPERF_TEST_CORRUPT_COLLECTIVE=1 (a test hook:
#     it adds an error to what it sends): --verify reports wrong > 0; restarted normally;
#  6. host VICTIM's daemon SIGKILLed mid-run: the CLI exits non-zero within KILL_BOUND_S
#     (15 s) of the kill, its error names the killed rank, the -o document holds the points
#     of the sizes done before the kill, and every surviving daemon answers /healthz and runs
#     a new 5-host collective right after;
#  7. with VICTIM's daemon still down: a run that includes it exits 3 naming it;
#  8. check --collective over the survivors: OK (0) on the healthy links; then with host
#     FLAP's link set down and up (its bridge port) during the timed iterations, WARNING (1)
#     naming its rank, eth0 and carrier_changes although busbw passes (issue 27); then with
#     host FLAP's egress behind a tbf queue of one packet (it drops, TCP retransmits),
#     CRITICAL (2) naming the ring link it sends over and its TCP retransmits.
#
# Needs root, `ip netns`, tc with tbf, python3; exits 77 (skip) otherwise. Namespaces and
# daemons are removed on every exit path. Every run is bounded by `timeout`. Environment
# overrides: RATE_MBIT (400), TOLERANCE (0.05), KILL_AFTER_S (4), KILL_BOUND_S (15).
set -u

RATE_MBIT=${RATE_MBIT:-400}
TOLERANCE=${TOLERANCE:-0.05}
KILL_AFTER_S=${KILL_AFTER_S:-4}
KILL_BOUND_S=${KILL_BOUND_S:-15}
MTU=1500
HOSTS=6
SLOW=3      # host (1-based) whose link runs at half the rate in check 4
CORRUPT=4   # host whose daemon corrupts what it sends in check 5
VICTIM=5    # host killed in check 6
FLAP=2      # host whose link goes down and up during the check of check 8

NETNS_TAG=netns-collective
NETNS_PREFIX=mpco
. "$(dirname "$0")/lib.sh"
netns_begin "${1:-}" "${2:-}" tc python3

netns_on_failure() {  # the daemons' last errors, and the CLI's, before the logs go
    for f in "$WORK"/meshperfd-*.log "$WORK"/*.err; do
        [[ -s "$f" ]] || continue
        grep -iE 'error|fatal|abort|corrupt|wrong' "$f" | tail -5 | sed "s|^|$NETNS_TAG: $(basename "$f"): |"
    done
}

netns_bridge_hosts "$HOSTS" "$MTU" "$RATE_MBIT"
cat >"$WORK/meshperfd.toml" <<EOF
[limits]
allowed_peer_cidrs = ["$NETNS_SUBNET.0/24"]
EOF
declare -a PIDS
ep() { echo "$(netns_host_addr "$1"):$PORT"; }   # host I's daemon, as the CLI is given it
start_daemon() {  # I [env ASSIGNMENT...]: meshperfd of host I, ready
    local i=$1
    shift
    mkdir -p "$WORK/state-$i"
    ip netns exec "$(netns_host "$i")" env "$@" "$MESHPERFD" --listen "$(ep "$i")" --state-dir "$WORK/state-$i" \
        --token-file "$TOKEN" --config "$WORK/meshperfd.toml" >>"$WORK/meshperfd-$i.log" 2>&1 &
    PIDS[$i]=$!   # ip netns exec and env both exec: $! is meshperfd itself
    netns_track_pid "${PIDS[$i]}"
    netns_wait_ready "$(netns_host "$i")" "$(netns_host_addr "$i")" "${PIDS[$i]}" "$i"
}
stop_daemon() {  # I SIGNAL
    kill "-$2" "${PIDS[$1]}" 2>/dev/null
    wait "${PIDS[$1]}" 2>/dev/null
    PIDS[$1]=""
}
for i in $(seq "$HOSTS"); do start_daemon "$i"; done
HOSTFILE="$WORK/hosts.txt"
{ echo "# the test cluster, rank = line"; for i in $(seq "$HOSTS"); do ep "$i"; done; } >"$HOSTFILE"
GOODPUT=$(python3 -c "print(f'{$RATE_MBIT * 1448 / 1514 / 1000:.6f}')")   # Gbit/s
say "$HOSTS hosts up: every link tbf ${RATE_MBIT} Mbit/s both directions, MTU $MTU, TCP goodput $GOODPUT Gbit/s"

cli() { ip netns exec "$NS_BR" timeout -k 5 180 "$MESHPERF" --token-file "$TOKEN" "$@"; }
# collective NAME ARG...: runs `meshperf collective ARG... --format json -o NAME.json`; sets RC.
collective() {
    local name=$1
    shift
    cli collective "$@" --format json -o "$WORK/$name.json" >"$WORK/$name.out" 2>"$WORK/$name.err"
    RC=$?
    say "$name: exit $RC"
    [[ -s "$WORK/$name.err" ]] && sed "s/^/$NETNS_TAG: $name: stderr: /" "$WORK/$name.err" | tail -5
    return 0
}

# judge.py FILE CHECK ARG...: one check of a collective JSON document; prints what it saw.
cat >"$WORK/judge.py" <<'EOF'
import json, math, sys
path, check, *args = sys.argv[1:]
tag = "netns-collective: " + check
doc = json.load(open(path))
problems = []
if doc.get("schema") != "meshperf.collective/1":
    problems.append(f"schema {doc.get('schema')!r}")
points = doc.get("points") or []
MiB = 1 << 20

def show(p, extra=""):
    print(f"{tag}: {p['op']} {p['algo']} {p['ranks']} ranks {p['size_bytes'] / MiB:g} MiB: "
          f"time {p['time_s'] * 1e3:.2f} ms, busbw {p['busbw_gbit_per_s']:.4f} Gbit/s{extra}")

if check == "busbw":            # OP GOODPUT_GBIT TOLERANCE MIN_BYTES [MAX_BYTES: larger sizes shown, not judged]
    op, goodput, tol, min_bytes = args[0], float(args[1]), float(args[2]), int(args[3])
    max_bytes = int(args[4]) if len(args) > 4 else None
    # a range's sizes are rounded to the op's step (all-gather over 6 ranks: 24 B): 16 MiB may be 16 B short
    big = [p for p in points if p["op"] == op and p["size_bytes"] >= 0.99 * min_bytes]
    if not big:
        problems.append(f"no {op} point at >= {min_bytes} bytes")
    for p in big:
        dev = p["busbw_gbit_per_s"] / goodput - 1
        judged = max_bytes is None or p["size_bytes"] <= 1.01 * max_bytes
        show(p, f" = goodput {dev:+.1%}" + ("" if judged else " (shown, not judged)"))
        if judged and abs(dev) > tol:
            problems.append(f"{op} {p['size_bytes']} B: busbw {p['busbw_gbit_per_s']:.4f} Gbit/s is {dev:+.1%} "
                            f"off the goodput {goodput:.4f} (tolerance {tol:.0%})")
elif check == "predict":        # MIN_BYTES MAX_ERROR
    min_bytes, max_error = int(args[0]), float(args[1])
    big = [p for p in points if p["size_bytes"] >= 0.99 * min_bytes]
    if not big:
        problems.append(f"no point at >= {min_bytes} bytes")
    for p in points:
        judged = p["size_bytes"] >= 0.99 * min_bytes
        pred = p.get("predicted")
        if not isinstance(pred, dict) or not isinstance(pred.get("error"), (int, float)):
            if judged:
                problems.append(f"{p['size_bytes']} B: no predicted.error ({pred!r})")
            continue
        err = pred["error"]
        pt = pred.get("time_s")
        ptxt = f", predicted {pt * 1e3:.2f} ms" if isinstance(pt, (int, float)) else ""
        links = (pred.get("model") or {}).get("links")
        show(p, f"{ptxt}, error {err:+.1%}" + (f", links: {links}" if links else "") + ("" if judged else " (shown, not judged)"))
        if judged and (not math.isfinite(err) or abs(err) > max_error):
            problems.append(f"{p['size_bytes']} B: prediction error {err:+.1%} beyond {max_error:.0%}")
elif check == "wrong":          # zero|positive
    want = args[0]
    if not points:
        problems.append("no points")
    total = 0
    for p in points:
        show(p, f", wrong {p.get('wrong')!r}")
        if not isinstance(p.get("wrong"), int):
            problems.append(f"{p['op']} {p['size_bytes']} B: wrong is {p.get('wrong')!r}, expected a count (--verify)")
            continue
        total += p["wrong"]
        if want == "zero" and p["wrong"] != 0:
            problems.append(f"{p['op']} {p['size_bytes']} B: {p['wrong']} wrong elements")
    print(f"{tag}: wrong elements in all: {total}")
    if want == "positive" and total == 0:
        problems.append("the corrupting rank went unnoticed: 0 wrong elements")
elif check == "slowest":        # SLOW_RANK
    slow = int(args[0])
    if not points:
        problems.append("no points")
    for p in points:
        link, rank, times = p.get("slowest_link"), p.get("slowest_rank"), p.get("rank_time_s") or []
        ltxt = f"{link.get('name')} ({link.get('gbit_per_s')} Gbit/s)" if isinstance(link, dict) else repr(link)
        show(p, f", slowest link {ltxt}, slowest rank {rank}, rank times ms {[round(t * 1e3, 1) for t in times]}")
        if not link or slow not in (link.get("from"), link.get("to")):
            problems.append(f"{p['size_bytes']} B: slowest link {link!r} does not touch rank {slow}")
        links = sorted(p.get("links") or [], key=lambda l: l["gbit_per_s"])
        print(f"{tag}: links by rate (Gbit/s, timed by their receivers): "
              + ", ".join(f"{l['from']}->{l['to']} {l['gbit_per_s']:.4f}" for l in links))
        # Ranks slow and slow + 1 each receive over one of the slow links, so either may finish last.
        right = (slow + 1) % p["ranks"]
        if rank not in (slow, right):
            problems.append(f"{p['size_bytes']} B: slowest rank {rank}, expected {slow} or its right neighbour {right}")
elif check == "killed":         # VICTIM_RANK VICTIM_ENDPOINT STDERR_FILE
    rank, endpoint, errfile = int(args[0]), args[1], args[2]
    error = (doc.get("error") or "") + " " + open(errfile).read()
    kept = ", ".join(f"{p['size_bytes'] / MiB:g} MiB" for p in points)
    print(f"{tag}: state {doc.get('state')!r}, {len(points)} points kept ({kept}), error {doc.get('error')!r}")
    if doc.get("state") == "completed":
        problems.append("the run says completed")
    if not points:
        problems.append("no points kept of the sizes done before the kill")
    asked = [(1 << 20) << k for k in range(7)]   # 1..64 MiB
    if [p["size_bytes"] for p in points] != asked[:len(points)] or len(points) == len(asked):
        problems.append(f"the points kept are not the first sizes of 1..64 MiB short of the last: {kept}")
    if endpoint not in error and f"rank {rank}" not in error:
        problems.append(f"the error names neither {endpoint} nor rank {rank}")
elif check == "ok":             # RANKS
    ranks = int(args[0])
    if doc.get("state") != "completed" or not points:
        problems.append(f"state {doc.get('state')!r}, {len(points)} points, error {doc.get('error')!r}")
    for p in points:
        show(p)
        if p["ranks"] != ranks:
            problems.append(f"{p['ranks']} ranks, expected {ranks}")
else:
    problems.append(f"unknown check {check}")
for p in problems:
    print(f"{tag}: FAIL: {p}")
sys.exit(1 if problems else 0)
EOF
judge() { python3 "$WORK/judge.py" "$@"; }

# A CLI without the command may still exit 0 for --help and 2 for anything: its help must list --op.
cli collective --help 2>&1 | grep -q -- '--op' || fail "$MESHPERF has no collective command (meshperf collective --help lists no --op)"

# 0. Bad input: exit 2.
bad() {  # LABEL ARG...
    local label=$1 out rc
    shift
    out=$(cli collective "$@" --sizes 1M --iterations 1 2>&1)
    rc=$?
    say "bad input ($label): exit $rc: $(echo "$out" | head -2 | tr '\n' ' ')"
    [[ $rc -eq 2 ]] || fail "bad input ($label) exited $rc, expected 2"
    ! grep -qi 'unknown command' <<<"$out" || fail "bad input ($label): refused as an unknown command"
}
bad "1 host" --hosts "$(ep 1)"
bad "a host twice" --hosts "$(ep 1),$(ep 2),$(ep 1)"
bad "unknown op" --hosts "$HOSTFILE" --op allsmash
bad "unknown dtype" --hosts "$HOSTFILE" --dtype fp7

# 1. busbw at >= 16 MiB within 5% of the goodput: ring all-reduce, ring all-gather.
#    Judged at 16 MiB, the size the issue names. At 32 MiB the all-reduce's iterations spread
#    (one run: min 1.169 s, exactly the goodput, p50 1.201 s, max 1.355 s): TCP overflows the
#    tbf queue (50 ms) now and then over the longer steps and recovers, and the mean read
#    -1.2..-5.4% of the goodput in four runs here, so 32 MiB is printed, not judged. A miss
#    fails the test; a job on the shared CPUs is what label rig's second try of the whole test
#    is for (scripts/run-tests reports it).
busbw_check() {  # OP
    local op=$1
    collective "$op" --hosts "$HOSTFILE" --op "$op" --algo ring --sizes 16M..32M --iterations 8 --warmup 1
    [[ $RC -eq 0 ]] || fail "$op exited $RC"
    judge "$WORK/$op.json" busbw "$op" "$GOODPUT" "$TOLERANCE" $((16 << 20)) $((16 << 20)) || fail "$op busbw"
}
busbw_check allreduce
busbw_check allgather

# 2. --predict within 10% at >= 1 MiB (the hosts as a comma list this time): the links' model
#    from the CLI's probes, then from a matrix of the cluster (--model).
HOSTLIST=$(for i in $(seq "$HOSTS"); do ep "$i"; done | paste -sd,)
#    The ring's prediction rests on its slowest link's short reading, so one low probe (a job
#    on the shared CPUs; 15-19% errors were seen under load) misses: a miss fails the test
#    (label rig: scripts/run-tests runs it once more, and says so).
matrix_for_model() {
    cli matrix --hosts "$HOSTFILE" --max-time 0.3 --bad-lat-multiple 10 -q --format json -o "$WORK/matrix.json" \
        >"$WORK/matrix.out" 2>"$WORK/matrix.err"
    local rc=$?
    say "matrix for the model: exit $rc"
    [[ ($rc -eq 0 || $rc -eq 1) && -s "$WORK/matrix.json" ]] || { cat "$WORK/matrix.err"; fail "matrix exited $rc"; }
}
ring_predict_check() {  # probes|matrix
    local how=$1 t0
    t0=$(date +%s)
    if [[ $how == matrix ]]; then
        matrix_for_model
        collective predict-matrix --hosts "$HOSTLIST" --op allreduce --algo ring --sizes 1M..8M --iterations 3 --warmup 1 \
            --predict --model "$WORK/matrix.json"
    else
        collective predict-probes --hosts "$HOSTLIST" --op allreduce --algo ring --sizes 1M..8M --iterations 3 --warmup 1 --predict
    fi
    say "--predict with the $how: $(( $(date +%s) - t0 )) s in all"
    [[ $RC -eq 0 ]] || fail "--predict run ($how) exited $RC"
    judge "$WORK/predict-$how.json" predict $((1 << 20)) 0.10 || fail "prediction error ($how)"
}
ring_predict_check probes
ring_predict_check matrix
# 2b. Incast and tree broadcast, which `meshperf plan` has no formula for, predicted by walking
#     their own schedule (analysis/collective/schedule_costs), each message over its own link from the
#     matrix. Incast within 10% at >= 1 MiB (2026-12-03: -0.5..+0.1% at 1-8 MiB). Tree
#     broadcast within 20% at >= 2 MiB, 12 iterations (-10..+2%): its root's two TCP flows
#     share one tbf-shaped uplink and lose packets in the tbf queue, which spreads the mean,
#     and at 1 MiB (printed, not judged; -15%, other runs to -27%) the tbf's 256 KiB burst
#     lets half of a 512 KiB piece through at once on a link idle before it, so the
#     pipeline fills faster than the model's m/β a level. Chain broadcast within 10% at
#     >= 16 MiB (2026-12-03: -6.0% at 16 MiB, -2.4% at 32 MiB): the walk counts the fill
#     of p-2 pieces of 512 KiB (44 ms here) at β, but each hop's tbf buckets are full when
#     its first piece comes and pass half of it at once, so the fill took ~21 ms; 1-8 MiB
#     (-38..-11%) are printed, not judged. A run that misses (a job on the shared CPUs) fails
#     the test, whose second try (label rig) takes every reading again, the matrix included.
schedule_predict_check() {  # NAME ITERATIONS MAX_ERROR MIN_BYTES SIZES ARG...
    local name=$1 iterations=$2 max_error=$3 min_bytes=$4 sizes=$5
    shift 5
    collective "$name" --hosts "$HOSTLIST" "$@" --sizes "$sizes" --iterations "$iterations" --warmup 1 --predict \
        --model "$WORK/matrix.json"
    [[ $RC -eq 0 ]] || fail "--predict run ($name) exited $RC"
    judge "$WORK/$name.json" predict "$min_bytes" "$max_error" || fail "prediction error ($name)"
}
schedule_predict_check predict-incast 3 0.10 $((1 << 20)) 1M..8M --op incast
schedule_predict_check predict-tree-broadcast 12 0.20 $((2 << 20)) 1M..8M --op broadcast --algo tree
schedule_predict_check predict-chain-broadcast 3 0.10 $((16 << 20)) 1M..32M --op broadcast --algo ring

# 3. --verify: 0 wrong.
collective verify --hosts "$HOSTFILE" --op allreduce --algo ring --sizes 1M..4M --iterations 2 --warmup 1 --verify
[[ $RC -eq 0 ]] || fail "--verify run exited $RC"
judge "$WORK/verify.json" wrong zero || fail "--verify"

# 4. Host SLOW at half the rate: the slowest link and rank name it.
netns_host_rate "$SLOW" $((RATE_MBIT / 2))
collective slow --hosts "$HOSTFILE" --op allreduce --algo ring --sizes 8M --iterations 3 --warmup 1
# 4b. With the slow host measured in a matrix, the tree broadcast is predicted over each edge's
#     own link, within 20% at >= 4 MiB. The slow host (rank SLOW-1, a child of the root with
#     one child) costs the broadcast nothing: the root's link carries a piece's two copies
#     in 2m/β either way, and the slow host passes its one copy on at half the rate in as
#     long. The ring's worst link taken everywhere would predict twice the time.
t0=$(date +%s)
cli matrix --hosts "$HOSTFILE" --max-time 0.3 --bad-lat-multiple 10 -q --format json -o "$WORK/slow-matrix.json" \
    >"$WORK/slow-matrix.out" 2>"$WORK/slow-matrix.err"
rc=$?
say "matrix with host $SLOW slow: exit $rc, $(( $(date +%s) - t0 )) s"
[[ ($rc -eq 0 || $rc -eq 1) && -s "$WORK/slow-matrix.json" ]] || { cat "$WORK/slow-matrix.err"; fail "matrix exited $rc"; }
collective slow-tree --hosts "$HOSTLIST" --op broadcast --algo tree --sizes 4M..8M --iterations 12 --warmup 1 --predict \
    --model "$WORK/slow-matrix.json"
netns_host_rate "$SLOW" "$RATE_MBIT"
[[ $RC -eq 0 ]] || fail "the tree broadcast with a slow host exited $RC"
judge "$WORK/slow-tree.json" predict $((4 << 20)) 0.20 || fail "prediction error (tree broadcast, host $SLOW slow)"
[[ $RC -eq 0 ]] || fail "the run with a slow link exited $RC"
judge "$WORK/slow.json" slowest $((SLOW - 1)) || fail "slow link of host $SLOW ($(ep "$SLOW"), rank $((SLOW - 1)))"

# 5. A corrupting rank: wrong > 0.
stop_daemon "$CORRUPT" TERM
start_daemon "$CORRUPT" MESHPERF_TEST_CORRUPT_COLLECTIVE=1
collective corrupt --hosts "$HOSTFILE" --op allreduce --algo ring --sizes 1M..2M --iterations 2 --warmup 1 --verify
say "corrupt: exit $RC (0 or 1 accepted: the figures are what is checked)"
[[ $RC -eq 0 || $RC -eq 1 ]] || fail "the run with a corrupting rank exited $RC"
judge "$WORK/corrupt.json" wrong positive || fail "corruption by host $CORRUPT ($(ep "$CORRUPT"), rank $((CORRUPT - 1)))"
stop_daemon "$CORRUPT" TERM
start_daemon "$CORRUPT"

# 6. A rank SIGKILLed mid-run.
cli collective --hosts "$HOSTFILE" --op allreduce --algo ring --sizes 1M..64M --iterations 3 --warmup 1 \
    --format json -o "$WORK/killed.json" >"$WORK/killed.out" 2>"$WORK/killed.err" &
cpid=$!
sleep "$KILL_AFTER_S"
kill -0 "$cpid" 2>/dev/null || { wait "$cpid"; fail "the 1..64 MiB run ended (exit $?) before the kill at $KILL_AFTER_S s"; }
say "killing meshperfd of host $VICTIM ($(ep "$VICTIM"), rank $((VICTIM - 1))) ${KILL_AFTER_S} s into the run"
killed_at=$(date +%s.%N)
stop_daemon "$VICTIM" KILL
wait "$cpid"
rc=$?
secs=$(python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f}')" "$killed_at" "$(date +%s.%N)")
say "killed run: exit $rc, ${secs} s after the kill; stderr: $(head -3 "$WORK/killed.err" | tr '\n' ' ')"
[[ $rc -ne 0 ]] || fail "the run with a killed rank exited 0"
python3 -c "import sys; sys.exit(float(sys.argv[1]) > float(sys.argv[2]))" "$secs" "$KILL_BOUND_S" \
    || fail "the CLI took ${secs} s after the kill to exit (bound ${KILL_BOUND_S} s)"
[[ -s "$WORK/killed.json" ]] || fail "no -o document after the kill"
judge "$WORK/killed.json" killed $((VICTIM - 1)) "$(ep "$VICTIM")" "$WORK/killed.err" || fail "the killed run's document"
SURVIVORS=()
for i in $(seq "$HOSTS"); do
    [[ $i -eq $VICTIM ]] && continue
    kill -0 "${PIDS[$i]}" 2>/dev/null || fail "meshperfd of host $i died with the victim"
    ip netns exec "$NS_BR" timeout 5 python3 -c "import sys, urllib.request; sys.exit(urllib.request.urlopen(sys.argv[1], timeout=4).status != 200)" \
        "http://$(ep "$i")/healthz" || fail "meshperfd of host $i does not answer /healthz after the kill"
    SURVIVORS+=("$(ep "$i")")
done
say "the ${#SURVIVORS[@]} surviving daemons answer /healthz"
collective after --hosts "$(IFS=,; echo "${SURVIVORS[*]}")" --op allreduce --algo ring --sizes 1M..2M --iterations 2 --warmup 1
[[ $RC -eq 0 ]] || fail "the 5-host run after the kill exited $RC"
judge "$WORK/after.json" ok $((HOSTS - 1)) || fail "the 5-host run after the kill"

# 7. A host down at the start: exit 3, naming it.
cli collective --hosts "$HOSTFILE" --op allreduce --sizes 1M --iterations 1 -o "$WORK/down.json" >"$WORK/down.out" 2>"$WORK/down.err"
rc=$?
# The error: the document's, or else the CLI's own line on stderr (the table lists every rank's address anyway).
error=$(python3 -c "import json, sys; print(json.load(open(sys.argv[1])).get('error') or '')" "$WORK/down.json" 2>/dev/null)
[[ -n "$error" ]] || error=$(grep '^meshperf:' "$WORK/down.err")
say "host down at the start: exit $rc: error: $error"
[[ $rc -eq 3 ]] || fail "a run with host $VICTIM down exited $rc, expected 3"
grep -qF "$(ep "$VICTIM")" <<<"$error" || fail "the error does not name $(ep "$VICTIM")"

# 8. check --collective: OK, then WARNING for a link that went down and up during it. At 8 MiB
#    over 5 ranks an iteration takes ~0.3 s: the 5 warm-up ones end ~2 s in, the 20 timed ones
#    ~8 s in, so the flap at 3.5 s falls inside the timed window the counters are read around.
SURVIVOR_LIST=$(IFS=,; echo "${SURVIVORS[*]}")
cli check --collective allreduce --hosts "$SURVIVOR_LIST" --size 8M --min-busbw 0.01 >"$WORK/check-ok.out" 2>&1
rc=$?
say "check --collective, healthy links: exit $rc: $(head -1 "$WORK/check-ok.out")"
[[ $rc -eq 0 ]] || fail "check --collective on healthy links exited $rc"
cli check --collective allreduce --hosts "$SURVIVOR_LIST" --size 8M --min-busbw 0.01 >"$WORK/check-flap.out" 2>&1 &
cpid=$!
sleep 3.5
ip -n "$NS_BR" link set "$(netns_host_port "$FLAP")" down && sleep 0.3 && ip -n "$NS_BR" link set "$(netns_host_port "$FLAP")" up \
    || fail "flapping host $FLAP's link"
wait "$cpid"
rc=$?
line=$(head -1 "$WORK/check-flap.out")
say "check --collective, host $FLAP's link down and up: exit $rc: $line"
[[ $rc -eq 1 ]] || fail "check --collective with a flapped link exited $rc, expected 1 (WARNING)"
grep -qF "rank $((FLAP - 1)) ($(ep "$FLAP")) eth0: 2 carrier_changes" <<<"$line" \
    || fail "the check's line does not name rank $((FLAP - 1)) ($(ep "$FLAP")) eth0 and its 2 carrier_changes"
ip netns exec "$(netns_host "$FLAP")" tc qdisc replace dev eth0 root tbf rate "${RATE_MBIT}mbit" burst 3000 limit 12000 \
    || fail "the shallow queue of host $FLAP"
cli check --collective allreduce --hosts "$SURVIVOR_LIST" --size 2M --min-busbw 0.001 >"$WORK/check-loss.out" 2>&1
rc=$?
netns_host_rate "$FLAP" "$RATE_MBIT"
line=$(head -1 "$WORK/check-loss.out")
say "check --collective, host $FLAP's egress dropping: exit $rc: $line"
[[ $rc -eq 2 ]] || fail "check --collective over a dropping link exited $rc, expected 2 (CRITICAL: retransmits above 5%)"
grep -qF "rank $((FLAP - 1)) ($(ep "$FLAP")) sending to rank $FLAP ($(ep $((FLAP + 1)))): TCP retransmits: " <<<"$line" \
    || fail "the check's line does not name rank $((FLAP - 1))'s link to rank $FLAP and its retransmits"

for i in $(seq "$HOSTS"); do
    [[ $i -eq $VICTIM ]] && continue
    kill -0 "${PIDS[$i]}" 2>/dev/null || fail "meshperfd of host $i died during the test"
done
say "PASS"

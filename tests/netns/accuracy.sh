#!/usr/bin/env bash
# Accuracy test: meshperf's TCP bandwidth against a known rate limit.
#
#   accuracy.sh MESHPERFD MESHPERF
#
# Two network namespaces joined by a veth pair; each end's egress is shaped by a tbf qdisc
# (A→B at FWD_RATE, B→A at REV_RATE, deliberately different so a swapped direction shows).
# A meshperfd runs in each namespace; meshperf asks A to measure bandwidth at 64 KiB to B
# (forward: A sends) and with --reverse (B sends). Each figure must lie within ±TOLERANCE
# of the TCP goodput its tbf rate allows (not the nominal rate: framing takes 0.7% of it at
# MTU 9000), and never above the most tbf can pass in the measured window (rate × window +
# bucket, as goodput): a figure above that is meshperf over-counting and FAILS. Needs root and `ip netns`; exits 77 (skip) otherwise. All traffic stays
# inside the two namespaces; namespaces and daemons are removed on every exit path.
#
# Why these tbf settings: tbf limits the bytes it dequeues, Ethernet header included, so
# TCP goodput is rate × (MTU − 52) / (MTU + 14) with timestamps on. At MTU 1500 that is
# 4.4% under the rate and, on a busy 2-core VM, tbf's per-packet timers fell behind
# (iperf3 got 350–460 Mbit/s of 500). At MTU 9000 the framing costs 0.7% and a 256 KiB
# bucket absorbs ~4 ms of timer lateness while adding at most 0.1% over a 3 s window:
# iperf3 measured 495.3–497.8 Mbit/s against 496.3 expected (within ±0.3%) at load 8.
#
# Environment overrides: FWD_RATE_MBIT (500), REV_RATE_MBIT (300), DURATION_S (3),
# TOLERANCE (0.05), MTU (9000), SWEEP_ARGS (more sweep options: netns-accuracy-ofi runs it
# with "--transport ofi --ofi-provider tcp --verify" and TOLERANCE 0.03, libfabric's tcp
# provider under ofi_rxm over the same veth; it skips where the build has no libfabric).
set -u

FWD_RATE_MBIT=${FWD_RATE_MBIT:-500}
REV_RATE_MBIT=${REV_RATE_MBIT:-300}
DURATION_S=${DURATION_S:-3}
read -r -a SWEEP_ARGS <<<"${SWEEP_ARGS:-}"
TOLERANCE=${TOLERANCE:-0.05}
MTU=${MTU:-9000}

NETNS_TAG=netns-accuracy
NETNS_PREFIX=mpacc
. "$(dirname "$0")/lib.sh"
netns_begin "${1:-}" "${2:-}" tc python3
netns_shaped_daemons "$MTU" "$FWD_RATE_MBIT" "$REV_RATE_MBIT"
if [[ " ${SWEEP_ARGS[*]} " == *" ofi "* ]] &&
   ! ip netns exec "$NS_A" curl -sf "http://$ADDR_A:$PORT/v1/info" -H "Authorization: Bearer $(cat "$TOKEN")" |
     python3 -c 'import json,sys; sys.exit(0 if any(t["name"] == "ofi" and t["available"] for t in json.load(sys.stdin)["transports"]) else 1)'; then
    skip "this meshperfd has no libfabric transport (built without libfabric, or no provider here)"
fi

TS=$(ip netns exec "$NS_A" cat /proc/sys/net/ipv4/tcp_timestamps 2>/dev/null || echo 1)
HDR=$(( 40 + (TS != 0 ? 12 : 0) ))

failures=0
measure() {  # LABEL RATE_MBIT EXTRA-ARGS...
    local label=$1 rate=$2; shift 2
    local out="$WORK/$label.json"
    local budget=$(( DURATION_S * 3 + 30 ))
    say "$label: bandwidth 64 KiB, 1 stream, ${DURATION_S} s, tbf ${rate} Mbit/s, MTU $MTU"
    if ! ip netns exec "$NS_A" timeout "$budget" "$MESHPERF" --token-file "$TOKEN" sweep \
            --initiator "$ADDR_A:$PORT" "$ADDR_B:$PORT" --test bandwidth --sizes 64K --streams 1 \
            --duration "$DURATION_S" --warmup 0.5 --format json -o "$out" -q "${SWEEP_ARGS[@]}" "$@" >"$WORK/$label.out" 2>&1; then
        cat "$WORK/$label.out"
        say "$label: FAIL: meshperf sweep failed (exit status above; 124 = hung past ${budget} s)"
        failures=$((failures + 1))
        return
    fi
    if ! python3 - "$out" "$rate" "$MTU" "$HDR" "$TOLERANCE" "$label" "$BUCKET_BYTES" "${SWEEP_ARGS[*]}" <<'EOF'
import json, math, sys
path, rate_mbit, mtu, hdr, tol, label = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5]), sys.argv[6]
bucket = int(sys.argv[7])
verify = "--verify" in sys.argv[8].split()
doc = json.load(open(path))
pts = [p for p in doc.get("points", []) if p.get("test") == "bandwidth"]
if len(pts) != 1:
    print(f"netns-accuracy: {label}: FAIL: expected 1 bandwidth point, got {len(pts)}")
    sys.exit(1)
p = pts[0]
if verify and not p.get("verified"):
    print(f"netns-accuracy: {label}: FAIL: --verify asked but the point says nothing was verified ({p.get('verified')!r})")
    sys.exit(1)
g = p.get("gbit_per_s")
if not isinstance(g, (int, float)) or not math.isfinite(g) or g <= 0:
    print(f"netns-accuracy: {label}: FAIL: gbit_per_s is {g!r}")
    sys.exit(1)
nominal = rate_mbit / 1000.0
goodput = nominal * (mtu - hdr) / (mtu + 14)   # what TCP payload can reach through tbf
ratio = g / goodput   # the window is centred on what TCP can get through, not on the nominal rate
print(f"netns-accuracy: {label}: meshperf {g:.4f} Gbit/s; tbf rate {nominal:.3f} Gbit/s -> ratio {ratio:.4f}"
      f"; expected TCP goodput {goodput:.4f} Gbit/s -> ratio {ratio:.4f} (tolerance ±{tol:.0%})")
for f in p.get("flows", []):
    print(f"netns-accuracy: {label}: flow {f.get('direction')}: {f.get('bytes')} B in {f.get('seconds')} s,"
          f" interval rates {f.get('interval_min_gbit_per_s')}..{f.get('interval_max_gbit_per_s')} Gbit/s")
prec = p.get("precision") or {}
print(f"netns-accuracy: {label}: msg_per_s {p.get('msg_per_s')}, precision achieved {prec.get('achieved')},"
      f" warnings {p.get('warnings')}")
# tbf never dequeues more than rate x T + bucket in a window T: a figure above that bound
# is a measurement error of meshperf, whatever the tolerance says.
# The 0.5% allows for the window's ends being read on 25 ms ticks, nothing more.
secs = max((f.get("seconds") or 0) for f in p.get("flows", [])) if p.get("flows") else 0
if secs <= 0:
    print(f"netns-accuracy: {label}: FAIL: no flow with a measured window ({p.get('flows')})")
    sys.exit(1)
bound = (rate_mbit * 1e6 * secs + 8 * bucket) * (mtu - hdr) / (mtu + 14) / secs / 1e9
if g > bound * 1.005:
    print(f"netns-accuracy: {label}: FAIL: {g:.4f} Gbit/s is {g / bound - 1:.1%} above the most tbf can pass"
          f" in {secs:.3f} s ({bound:.4f} Gbit/s): meshperf over-counts")
    sys.exit(1)
if abs(ratio - 1.0) > tol:
    print(f"netns-accuracy: {label}: FAIL: {g:.4f} Gbit/s is outside ±{tol:.0%} of the goodput {goodput:.4f} Gbit/s"
          f" (tbf rate {nominal:.3f})")
    sys.exit(1)
print(f"netns-accuracy: {label}: ok")
EOF
    then
        failures=$((failures + 1))
        if command -v iperf3 >/dev/null; then   # tell a tbf problem from a meshperf one
            ip netns exec "$NS_B" timeout 20 iperf3 -s -1 -p 5299 >/dev/null 2>&1 &
            local srv=$!; sleep 0.5
            local rev=""; [[ " $* " == *" --reverse "* ]] && rev="-R"
            ip netns exec "$NS_A" timeout 20 iperf3 -c "$ADDR_B" -p 5299 -l 64K -t "$DURATION_S" -O 1 $rev -J 2>/dev/null \
                | python3 -c 'import json,sys; d=json.load(sys.stdin); print("netns-accuracy: reference iperf3 through the same tbf: %.4f Gbit/s" % (d["end"]["sum_received"]["bits_per_second"]/1e9))' \
                || say "reference iperf3 failed"
            wait "$srv" 2>/dev/null
        fi
    fi
}

measure forward "$FWD_RATE_MBIT"
measure reverse "$REV_RATE_MBIT" --reverse

ip netns exec "$NS_A" tc -s qdisc show dev "$IF_A" | sed 's/^/netns-accuracy: tbf A->B: /'
ip netns exec "$NS_B" tc -s qdisc show dev "$IF_B" | sed 's/^/netns-accuracy: tbf B->A: /'
for n in a b; do
    grep -iE 'error|fatal|abort' "$WORK/meshperfd-$n.log" | sed "s/^/netns-accuracy: meshperfd-$n: /"
done
kill -0 "$PID_A" 2>/dev/null || fail "meshperfd in $NS_A died during the test"
kill -0 "$PID_B" 2>/dev/null || fail "meshperfd in $NS_B died during the test"
[[ $failures -eq 0 ]] || fail "$failures of 2 directions outside tolerance or failed"
say "PASS"

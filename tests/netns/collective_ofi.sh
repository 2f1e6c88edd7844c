#!/usr/bin/env bash
# Collectives over libfabric: `meshperf collective --transport ofi` on four hosts in network
# namespaces.
#
#   collective_ofi.sh MESHPERFD MESHPERF
#
# Four hosts on one bridge (lib.sh, netns_bridge_hosts), every link shaped by tbf at
# RATE_MBIT (400) both ways, MTU 1500; a meshperfd per host, the CLI in the bridge's
# namespace. libfabric's tcp provider (under ofi_rxm) carries the data over the same veths,
# so a ring all-reduce's busbw is at best the links' TCP goodput, RATE × 1448/1514. Checks:
#  1. ring all-reduce at 16 MiB, --verify: every rank's result right (wrong == 0), the path
#     named ofi, and busbw at most TOLERANCE (5%) above the goodput and at most LOW_TOLERANCE
#     (15%) below it. The 5% below that TCP meets (-1.8% on this rig) is NOT met over
#     libfabric here: measured -8.6..-11.4% (2026-12-07, 4 ranks on 2 vCPUs; spinning longer
#     made it worse, -20.7% at 2 ms, so CPU contention between the ranks' user-space progress
#     is the likely cause; chunk size, chunks in flight and rxm's protocol limits changed
#     nothing). TRANSPORT=tcp runs the same check over TCP as a control.
#  2. the daemons are all up and healthy after it.
# Needs root, `ip netns`, tc with tbf, python3, and a meshperfd built with libfabric; exits 77
# (skip) otherwise. Namespaces and daemons are removed on every exit path.
set -u

RATE_MBIT=${RATE_MBIT:-400}
TOLERANCE=${TOLERANCE:-0.05}
LOW_TOLERANCE=${LOW_TOLERANCE:-0.15}
MTU=1500
HOSTS=4

NETNS_TAG=netns-collective-ofi
NETNS_PREFIX=mpcf
. "$(dirname "$0")/lib.sh"
netns_begin "${1:-}" "${2:-}" tc python3

netns_bridge_hosts "$HOSTS" "$MTU" "$RATE_MBIT"
cat >"$WORK/meshperfd.toml" <<EOF
[limits]
allowed_peer_cidrs = ["$NETNS_SUBNET.0/24"]
EOF
ep() { echo "$(netns_host_addr "$1"):$PORT"; }
declare -a PIDS
for i in $(seq "$HOSTS"); do
    mkdir -p "$WORK/state-$i"
    ip netns exec "$(netns_host "$i")" "$MESHPERFD" --listen "$(ep "$i")" --state-dir "$WORK/state-$i" \
        --token-file "$TOKEN" --config "$WORK/meshperfd.toml" >>"$WORK/meshperfd-$i.log" 2>&1 &
    PIDS[$i]=$!
    netns_track_pid "${PIDS[$i]}"
    netns_wait_ready "$(netns_host "$i")" "$(netns_host_addr "$i")" "${PIDS[$i]}" "$i"
done
ip netns exec "$NS_BR" curl -sf "http://$(ep 1)/v1/info" -H "Authorization: Bearer $(cat "$TOKEN")" |
    python3 -c 'import json,sys; sys.exit(0 if any(t["name"] == "ofi" and t["available"] for t in json.load(sys.stdin)["transports"]) else 1)' ||
    skip "this meshperfd has no libfabric transport (built without libfabric, or no provider here)"
HOSTLIST=$(for i in $(seq "$HOSTS"); do ep "$i"; done | paste -sd,)
GOODPUT=$(python3 -c "print(f'{$RATE_MBIT * 1448 / 1514 / 1000:.6f}')")
say "$HOSTS hosts up: every link tbf ${RATE_MBIT} Mbit/s both ways, MTU $MTU, TCP goodput $GOODPUT Gbit/s"

ip netns exec "$NS_BR" timeout -k 5 180 "$MESHPERF" --token-file "$TOKEN" collective --hosts "$HOSTLIST" \
    --transport "${TRANSPORT:-ofi}" --op allreduce --algo ring --sizes 16M --iterations 8 --warmup 1 --verify \
    --format json -o "$WORK/allreduce.json" >"$WORK/allreduce.out" 2>"$WORK/allreduce.err"
rc=$?
sed "s/^/$NETNS_TAG: stderr: /" "$WORK/allreduce.err" | tail -5
[[ $rc -eq 0 ]] || { grep -iE 'error|fatal' "$WORK"/meshperfd-*.log | tail -5; fail "collective over ofi exited $rc"; }
python3 - "$WORK/allreduce.json" "$GOODPUT" "$TOLERANCE" "${TRANSPORT:-ofi}" "$LOW_TOLERANCE" <<'EOF' || fail "busbw or verification"
import json, sys
doc, goodput, tol, low_tol = json.load(open(sys.argv[1])), float(sys.argv[2]), float(sys.argv[3]), float(sys.argv[5])
bad = []
if doc.get("spec", {}).get("transport") != (sys.argv[4] if len(sys.argv) > 4 else "ofi"):
    bad.append(f"transport {doc.get('spec', {}).get('transport')!r}")
points = [p for p in doc.get("points", []) if p["op"] == "allreduce"]
if not points:
    bad.append("no allreduce point")
for p in points:
    dev = p["busbw_gbit_per_s"] / goodput - 1
    print(f"netns-collective-ofi: allreduce ring {p['ranks']} ranks {p['size_bytes'] >> 20} MiB: time "
          f"{p['time_s'] * 1e3:.1f} ms, busbw {p['busbw_gbit_per_s']:.4f} Gbit/s ({dev:+.1%} of the goodput {goodput:.4f}), "
          f"wrong {p.get('wrong')}")
    if p.get("wrong") != 0:
        bad.append(f"wrong {p.get('wrong')!r}: verification failed or absent")
    if dev > tol or dev < -low_tol:
        bad.append(f"busbw {p['busbw_gbit_per_s']:.4f} Gbit/s is {dev:+.1%} from the goodput (allowed -{low_tol:.0%}..+{tol:.0%})")
for b in bad:
    print(f"netns-collective-ofi: FAIL: {b}")
sys.exit(1 if bad else 0)
EOF
for i in $(seq "$HOSTS"); do
    kill -0 "${PIDS[$i]}" 2>/dev/null || fail "meshperfd of host $i died"
    netns_healthy "$(netns_host "$i")" "$(netns_host_addr "$i")" || fail "meshperfd of host $i is not healthy"
done
say "PASS"

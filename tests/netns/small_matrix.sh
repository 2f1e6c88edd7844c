#!/usr/bin/env bash
# A matrix of three hosts with one slow still names it (issue 26, item 5).
#
#   small_matrix.sh MESHPERFD MESHPERF
#
# Three namespaces on a bridge (lib.sh's netns_bridge_hosts), links shaped by tbf at
# HEALTHY_MBIT (400), host 2's at SLOW_MBIT (200, half). Of the 6 directed links, 4 touch the
# slow host, so the median bandwidth is the slow figure and a median rule said "bad links:
# none"; with 4 hosts or fewer the matrix judges against the better half of the links. Checks:
# exactly the 4 links to and from host 2 are bad for bandwidth, host 2 is the only suspect,
# the JSON says which reference it used, exit status 1.
# Needs root, `ip netns`, tc with tbf, python3; exits 77 (skip) otherwise. About 20 s.
set -u

HEALTHY_MBIT=${HEALTHY_MBIT:-400}
SLOW_MBIT=${SLOW_MBIT:-200}
SLOW=2

NETNS_TAG=netns-small_matrix
NETNS_PREFIX=mpsm
. "$(dirname "$0")/lib.sh"
netns_begin "${1:-}" "${2:-}" tc python3

netns_bridge_hosts 3 9000 "$HEALTHY_MBIT"
netns_host_rate "$SLOW" "$SLOW_MBIT"
cat >"$WORK/meshperfd.toml" <<EOF
[limits]
allowed_peer_cidrs = ["$NETNS_SUBNET.0/24"]
EOF
HOSTFILE="$WORK/hosts.txt"
declare -a PIDS
for i in 1 2 3; do
    echo "$(netns_host_addr "$i"):$PORT" >>"$HOSTFILE"
    netns_start_daemon "$(netns_host "$i")" "$(netns_host_addr "$i")" "$i" --config "$WORK/meshperfd.toml"
    PIDS[$i]=$NETNS_PID
done
for i in 1 2 3; do netns_wait_ready "$(netns_host "$i")" "$(netns_host_addr "$i")" "${PIDS[$i]}" "$i"; done
say "3 hosts: links $HEALTHY_MBIT Mbit/s, host $SLOW at $SLOW_MBIT Mbit/s"

# Latency is judged loosely (x10): tbf does not slow an 8 B ping-pong, CPU scheduling on a
# shared 2-core machine does (see cluster.sh).
ip netns exec "$NS_BR" timeout 180 "$MESHPERF" --token-file "$TOKEN" matrix --hosts "$HOSTFILE" --max-time 0.3 \
    --bad-lat-multiple 10 -q --format json -o "$WORK/matrix.json" >"$WORK/summary.txt" 2>"$WORK/matrix.err"
rc=$?
sed 's/^/  summary: /' "$WORK/summary.txt"
[[ -s "$WORK/matrix.err" ]] && sed 's/^/  stderr: /' "$WORK/matrix.err"
[[ $rc -eq 1 ]] || fail "matrix exited $rc, expected 1 (bad links found)"
python3 - "$WORK/matrix.json" "$(netns_host_addr "$SLOW"):$PORT" <<'EOF' || fail "matrix verdict"
import json, sys
doc = json.load(open(sys.argv[1]))
slow = sys.argv[2]
problems = []
for l in doc["links"]:
    touches = slow in (l["from"], l["to"])
    print(f"small_matrix: {'BAD ' if l['bad'] else 'ok  '}{l['from']} -> {l['to']}: {l['gbit_per_s']:.3f} Gbit/s "
          f"bandwidth_bad={l.get('bandwidth_bad')} ({l.get('reason') or ''})")
    if bool(l.get("bandwidth_bad")) != touches:
        problems.append(f"{l['from']} -> {l['to']}: bandwidth_bad={l.get('bandwidth_bad')}, expected {touches}")
print(f"small_matrix: suspects {doc['suspects']}, reference {doc.get('reference')}")
if doc["suspects"] != [slow]:
    problems.append(f"suspects {doc['suspects']}, expected [{slow}]")
if not doc.get("reference"):
    problems.append("the JSON does not say which reference the links were judged against")
for p in problems:
    print(f"small_matrix: FAIL: {p}")
sys.exit(1 if problems else 0)
EOF
say "PASS"

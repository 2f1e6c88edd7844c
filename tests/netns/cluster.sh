#!/usr/bin/env bash
# Cluster test: `meshperf matrix` and `meshperf check` on six hosts in network namespaces.
#
#   cluster.sh MESHPERFD MESHPERF
#
# Six namespaces (the hosts) hang on one Linux bridge that lives in a namespace of its own;
# each host is joined to it by a veth pair. Every link is shaped with tbf in both directions
# (the host's egress, and the bridge port's egress towards the host): HEALTHY_MBIT for five
# hosts, SLOW_MBIT (a quarter) for host SLOW. Each host runs meshperfd with the cluster token
# and a config file that allows peers from the cluster subnet only. The CLI runs in the
# bridge namespace, which has an address on the same subnet.
#
# Checks:
#  1. matrix: exactly the 10 links to and from the slow host are bad, the slow host is the
#     only suspect, nothing else is flagged, nobody is unreachable (exit status 1);
#  2. check --min-gbit: against the slow host exits 2, against a healthy host 0, against a
#     stopped daemon 3;
#  3. matrix while a host is killed (SIGKILL) a few seconds in: that host is reported
#     unreachable, every link between the other hosts is measured, the slow host is still
#     the only suspect.
#
# Needs root, `ip netns`, tc with tbf, python3; exits 77 (skip) otherwise. Namespaces and
# daemons are removed on every exit path. Environment overrides: HEALTHY_MBIT (400),
# SLOW_MBIT (100), MAX_TIME (0.3 s per point), MTU (9000), LAT_MULTIPLE (see below).
#
# Why --bad-lat-multiple is raised to LAT_MULTIPLE (default 10): tbf shapes bandwidth, and
# an 8 B ping-pong through it is not slowed; what moves veth latency on a shared 2-core
# test machine is CPU scheduling (three pairs measure at once, next to other jobs), which
# can put one link's median latency at twice another's with nothing wrong on the path. The
# latency rule itself is covered by the unit tests of core/outliers.
set -u

HEALTHY_MBIT=${HEALTHY_MBIT:-400}
SLOW_MBIT=${SLOW_MBIT:-100}
MAX_TIME=${MAX_TIME:-0.3}
MTU=${MTU:-9000}
LAT_MULTIPLE=${LAT_MULTIPLE:-10}
HOSTS=6
SLOW=4          # the host with the slow link (1-based)
STOPPED=3       # the host whose daemon is stopped for the UNKNOWN check
VICTIM=5        # the host killed during the second matrix

NETNS_TAG=netns-cluster
NETNS_PREFIX=mpcl
. "$(dirname "$0")/lib.sh"
netns_begin "${1:-}" "${2:-}" tc python3

declare -a PIDS
SUBNET=$NETNS_SUBNET
ns() { netns_host "$1"; }
addr() { netns_host_addr "$1"; }

netns_on_failure() {  # the daemons' last errors, before their logs go
    for f in "$WORK"/meshperfd-*.log; do
        grep -iE 'error|fatal|abort' "$f" | tail -5 | sed "s|^|netns-cluster: $(basename "$f"): |"
    done
}

netns_bridge_hosts "$HOSTS" "$MTU" "$HEALTHY_MBIT"
netns_host_rate "$SLOW" "$SLOW_MBIT"

cat >"$WORK/meshperfd.toml" <<EOF
[limits]
allowed_peer_cidrs = ["$SUBNET.0/24"]
EOF
HOSTFILE="$WORK/hosts.txt"
{ echo "# the test cluster"; for i in $(seq "$HOSTS"); do echo "$(addr "$i"):$PORT"; done; } >"$HOSTFILE"

start_daemon() {  # I
    netns_start_daemon "$(ns "$1")" "$(addr "$1")" "$1" --config "$WORK/meshperfd.toml"
    PIDS[$1]=$NETNS_PID
}
cli() { ip netns exec "$NS_BR" timeout 300 "$MESHPERF" --token-file "$TOKEN" "$@"; }
wait_ready() {  # I
    netns_wait_ready "$(ns "$1")" "$(addr "$1")" "${PIDS[$1]}" "$1"
}
for i in $(seq "$HOSTS"); do start_daemon "$i"; done
for i in $(seq "$HOSTS"); do wait_ready "$i"; done
say "$HOSTS hosts up: links ${HEALTHY_MBIT} Mbit/s, host $SLOW at ${SLOW_MBIT} Mbit/s, MTU $MTU"

MATRIX_ARGS=(matrix --hosts "$HOSTFILE" --max-time "$MAX_TIME" --bad-lat-multiple "$LAT_MULTIPLE" -q)

# judge.py FILE EXPECTED_SUSPECTS EXPECTED_UNREACHABLE MODE: checks a matrix JSON document.
cat >"$WORK/judge.py" <<'EOF'
import json, sys
path, suspects, unreachable, mode = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
want_suspects = [s for s in suspects.split(",") if s]
want_unreachable = [s for s in unreachable.split(",") if s]
doc = json.load(open(path))
links = doc["links"]
problems = []
n = doc["host_count"]
if len(links) != n * (n - 1):
    problems.append(f"{len(links)} links, expected {n * (n - 1)}")
for l in links:
    tag = "BAD " if l["bad"] else "ok  "
    fig = f"{l['gbit_per_s']:.3f} Gbit/s" if l["gbit_per_s"] else "-"
    lat = f"{l['lat_us']:.1f} us" if l["lat_us"] else "-"
    extra = (" retested" if l.get("retested") else "") + (f" ({l['reason'] or l['error']})" if l["bad"] else "")
    print(f"netns-cluster: {mode}: {tag}{l['from']} -> {l['to']}: {fig}, {lat}{extra}")
    ends = {l["from"], l["to"]}
    touches_slow = bool(ends & set(want_suspects))
    touches_dead = bool(ends & set(want_unreachable))
    if touches_dead:
        continue  # measured before the kill, or not: either is right
    if not l["reachable"]:
        problems.append(f"{l['from']} -> {l['to']} unreachable: {l['error']}")
    elif l["bad"] != touches_slow:
        problems.append(f"{l['from']} -> {l['to']}: bad={l['bad']}, expected {touches_slow} ({l['reason']})")
print(f"netns-cluster: {mode}: median {doc['median']}, suspects {doc['suspects']}, unreachable {doc['unreachable']}")
if doc["suspects"] != want_suspects:
    problems.append(f"suspects {doc['suspects']}, expected {want_suspects}")
if doc["unreachable"] != want_unreachable:
    problems.append(f"unreachable {doc['unreachable']}, expected {want_unreachable}")
for p in problems:
    print(f"netns-cluster: {mode}: FAIL: {p}")
sys.exit(1 if problems else 0)
EOF

# 1. The matrix names the slow host and its links, and nothing else.
start=$(date +%s.%N)
cli "${MATRIX_ARGS[@]}" --format json -o "$WORK/matrix.json" >"$WORK/matrix.summary" 2>"$WORK/matrix.err"
rc=$?
secs=$(python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f}')" "$start" "$(date +%s.%N)")
sed 's/^/netns-cluster: matrix summary: /' "$WORK/matrix.summary"
[[ -s "$WORK/matrix.err" ]] && sed 's/^/netns-cluster: matrix stderr: /' "$WORK/matrix.err"
[[ $rc -eq 1 ]] || fail "matrix exited $rc, expected 1 (bad links found)"
python3 "$WORK/judge.py" "$WORK/matrix.json" "$(addr "$SLOW"):$PORT" "" matrix || fail "matrix verdict"
say "matrix: ok in ${secs} s"
cli "${MATRIX_ARGS[@]}" --format table --no-retest -o "$WORK/matrix.txt" >/dev/null 2>&1
sed 's/^/netns-cluster: table: /' "$WORK/matrix.txt"

# 2. check exit codes.
check() {  # EXPECTED LABEL PEER-HOST
    local want=$1 label=$2 peer=$3 out rc
    # Half the healthy rate: a 0.3 s, 1 MiB check point can read 20% low on this rig, and the slow
    # host (a quarter of it) stays far below; --ignore-counters: a tbf queue's retransmits above
    # 1% would make the healthy check a WARNING, which is not what this step tests.
    out=$(cli check "$(addr "$peer"):$PORT" --initiator "$(addr 1):$PORT" --min-gbit "$(python3 -c "print($HEALTHY_MBIT * 0.5 / 1000)")" \
          --ignore-counters --max-time "$MAX_TIME" --timeout 60 2>&1)
    rc=$?
    say "check $label: exit $rc: $out"
    [[ $rc -eq $want ]] || fail "check $label exited $rc, expected $want"
}
check 2 "slow host" "$SLOW"
check 0 "healthy host" 2
kill -TERM "${PIDS[$STOPPED]}"; wait "${PIDS[$STOPPED]}" 2>/dev/null; PIDS[$STOPPED]=""
check 3 "stopped daemon" "$STOPPED"
start_daemon "$STOPPED"
wait_ready "$STOPPED"

# 3. A host killed during the matrix is reported unreachable; the rest completes. Two pairs
#    at a time (--parallel 2) of the three in each round: every round runs in two waves.
cli "${MATRIX_ARGS[@]}" --parallel 2 --format json -o "$WORK/matrix2.json" >"$WORK/matrix2.summary" 2>"$WORK/matrix2.err" &
mpid=$!
sleep "${KILL_AFTER_S:-3}"
say "killing meshperfd of host $VICTIM ($(addr "$VICTIM")) during the matrix"
kill -KILL "${PIDS[$VICTIM]}"; wait "${PIDS[$VICTIM]}" 2>/dev/null; PIDS[$VICTIM]=""
wait "$mpid"
rc=$?
sed 's/^/netns-cluster: matrix2 summary: /' "$WORK/matrix2.summary"
[[ $rc -eq 1 ]] || { cat "$WORK/matrix2.err"; fail "matrix with a killed host exited $rc, expected 1"; }
python3 "$WORK/judge.py" "$WORK/matrix2.json" "$(addr "$SLOW"):$PORT" "$(addr "$VICTIM"):$PORT" matrix2 \
    || fail "matrix with a killed host"

for i in $(seq "$HOSTS"); do
    [[ $i -eq $VICTIM ]] && continue
    kill -0 "${PIDS[$i]}" 2>/dev/null || fail "meshperfd of host $i died during the test"
done
say "PASS"

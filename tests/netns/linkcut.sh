#!/usr/bin/env bash
# Link-cut fault test: the veth link goes down mid-run; the run must end within its timeout
# with a clear error and both daemons must stay up.
#
#   linkcut.sh MESHPERFD MESHPERF
#
# Two network namespaces joined by a veth pair, a meshperfd in each. meshperf asks A for a
# bandwidth sweep to B (--duration 5); ~1.5 s in, `ip link set <veth A> down`. The sweep must
# fail (exit 1) within LIMIT_S (40 s) with an error naming the peer; /healthz of both daemons answers
# afterwards. Needs root and `ip netns`; exits 77 (skip) otherwise. Cleanup on every exit path.
set -u

SKIP=77
MESHPERFD=${1:-}
MESHPERF=${2:-}
# The initiator's bound after a cut is stacked: the rest of the point (warmup + duration), the
# data-stream timeout (10 s), then point_done_timeout (30 s) on the dead control session.
# Measured: 50.5 s after the cut (docs/reliability.md, Known problems: the target was < 40 s).
LIMIT_S=${LIMIT_S:-40}
CUT_AFTER_S=${CUT_AFTER_S:-1.5}
PORT=7470

say() { printf 'netns-linkcut: %s\n' "$*"; }
skip() { say "SKIP: $*"; exit "$SKIP"; }
fail() { say "FAIL: $*"; exit 1; }

[[ -n "$MESHPERFD" && -n "$MESHPERF" ]] || { echo "usage: $0 MESHPERFD MESHPERF" >&2; exit 2; }
[[ -x "$MESHPERFD" ]] || fail "meshperfd not executable: $MESHPERFD"
[[ -x "$MESHPERF" ]] || fail "meshperf not executable: $MESHPERF"
[[ $(id -u) -eq 0 ]] || skip "needs root (network namespaces, veth); run as root"
command -v ip >/dev/null || skip "ip (iproute2) not installed"
command -v timeout >/dev/null || skip "timeout (coreutils) not installed"

NS_A="mplc$$a"
NS_B="mplc$$b"
IF_A="mplc$$a"
IF_B="mplc$$b"
ADDR_A=192.0.2.1
ADDR_B=192.0.2.2
WORK=""
PID_A=""
PID_B=""
PID_CLI=""

cleanup() {
    local rc=$?
    trap - EXIT INT TERM HUP
    [[ -n "$PID_CLI" ]] && kill -KILL "$PID_CLI" 2>/dev/null
    for pid in $PID_A $PID_B; do kill -TERM "$pid" 2>/dev/null; done
    for pid in $PID_A $PID_B; do
        for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$pid" 2>/dev/null
        wait "$pid" 2>/dev/null
    done
    ip netns del "$NS_A" 2>/dev/null
    ip netns del "$NS_B" 2>/dev/null
    ip link del "$IF_A" 2>/dev/null
    [[ -n "$WORK" ]] && rm -rf "$WORK"
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep -E '^mplc[0-9]+[ab]$'); do
    owner=${ns#mplc}; owner=${owner%[ab]}
    kill -0 "$owner" 2>/dev/null || { say "removing stale namespace $ns"; ip netns pids "$ns" 2>/dev/null | xargs -r kill -KILL; ip netns del "$ns"; }
done

WORK=$(mktemp -d /tmp/meshperf-netns-linkcut.XXXXXX) || fail "mktemp"
ip netns add "$NS_A" 2>"$WORK/err" || skip "cannot create a network namespace ($(cat "$WORK/err")); needs CAP_SYS_ADMIN"
ip netns add "$NS_B" || fail "ip netns add $NS_B"
ip link add "$IF_A" type veth peer name "$IF_B" 2>"$WORK/err" || skip "cannot create a veth pair ($(cat "$WORK/err"))"
ip link set "$IF_A" netns "$NS_A" && ip link set "$IF_B" netns "$NS_B" || fail "moving the veth ends"
for side in A B; do
    ns_var=NS_$side if_var=IF_$side addr_var=ADDR_$side
    ns=${!ns_var} ifn=${!if_var} addr=${!addr_var}
    ip -n "$ns" link set lo up || fail "lo up in $ns"
    ip -n "$ns" addr add "$addr/24" dev "$ifn" || fail "address on $ifn"
    ip -n "$ns" link set "$ifn" up || fail "up on $ifn"
done

TOKEN="$WORK/token"
(umask 077 && head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$TOKEN" && echo >>"$TOKEN") || fail "token file"
chmod 600 "$TOKEN"

start_daemon() {  # NS ADDR NAME VAR
    mkdir -p "$WORK/state-$3"
    ip netns exec "$1" "$MESHPERFD" --listen "$2:$PORT" --state-dir "$WORK/state-$3" --token-file "$TOKEN" \
        >"$WORK/meshperfd-$3.log" 2>&1 &
    printf -v "$4" '%s' "$!"
}
start_daemon "$NS_A" "$ADDR_A" a PID_A
start_daemon "$NS_B" "$ADDR_B" b PID_B

healthy() {  # NS ADDR: the daemon answers an authenticated info request
    ip netns exec "$1" timeout 5 "$MESHPERF" --token-file "$TOKEN" info "$2:$PORT" >/dev/null 2>&1
}
wait_ready() {  # NS ADDR PID NAME
    for _ in $(seq 100); do
        kill -0 "$3" 2>/dev/null || { cat "$WORK/meshperfd-$4.log"; fail "meshperfd in $1 exited"; }
        healthy "$1" "$2" && return 0
        sleep 0.1
    done
    cat "$WORK/meshperfd-$4.log"
    fail "meshperfd in $1 not answering on $2:$PORT after 10 s"
}
wait_ready "$NS_A" "$ADDR_A" "$PID_A" a
wait_ready "$NS_B" "$ADDR_B" "$PID_B" b

say "bandwidth sweep A -> B, --duration 5; link down after ${CUT_AFTER_S} s"
start=$(date +%s.%N)
ip netns exec "$NS_A" timeout $((LIMIT_S + 15)) "$MESHPERF" --token-file "$TOKEN" sweep \
    --initiator "$ADDR_A:$PORT" "$ADDR_B:$PORT" --test bandwidth --sizes 64K,1M --streams 1 \
    --duration 5 --warmup 0.2 -q >"$WORK/sweep.out" 2>"$WORK/sweep.err" &
PID_CLI=$!
sleep "$CUT_AFTER_S"
ip -n "$NS_A" link set "$IF_A" down || fail "ip link set $IF_A down"
cut=$(date +%s.%N)
wait "$PID_CLI"; rc=$?
PID_CLI=""
end=$(date +%s.%N)
took=$(awk -v a="$cut" -v b="$end" 'BEGIN { printf "%.1f", b - a }')
say "sweep exit $rc, ended ${took} s after the cut; stderr: $(tr '\n' ' ' <"$WORK/sweep.err")"

[[ $rc -ne 124 ]] || fail "sweep hung past $((LIMIT_S + 15)) s"
[[ $rc -eq 1 ]] || fail "expected exit 1 (run failed), got $rc"
awk -v t="$took" -v l="$LIMIT_S" 'BEGIN { exit !(t < l) }' || fail "run took ${took} s after the cut (limit ${LIMIT_S} s)"
grep -q "$ADDR_B:$PORT" "$WORK/sweep.err" || fail "error does not name the peer $ADDR_B:$PORT"
grep -qiE 'did not answer|timed out|timeout|unreachable|reset|failed' "$WORK/sweep.err" || fail "error is not clear"

ip -n "$NS_A" link set "$IF_A" up || fail "link up again"
kill -0 "$PID_A" 2>/dev/null || { cat "$WORK/meshperfd-a.log"; fail "meshperfd in $NS_A died"; }
kill -0 "$PID_B" 2>/dev/null || { cat "$WORK/meshperfd-b.log"; fail "meshperfd in $NS_B died"; }
healthy "$NS_A" "$ADDR_A" || fail "meshperfd A does not answer after the cut"
healthy "$NS_B" "$ADDR_B" || fail "meshperfd B does not answer after the cut"
ip netns exec "$NS_A" timeout 60 "$MESHPERF" --token-file "$TOKEN" sweep --initiator "$ADDR_A:$PORT" "$ADDR_B:$PORT" \
    --test latency --sizes 64 --max-time 0.2 --warmup 0.02 -q >"$WORK/after.out" 2>&1 \
    || { cat "$WORK/after.out"; fail "a sweep after the link came back failed"; }
say "PASS (time to error ${took} s, both daemons up, next sweep ok)"

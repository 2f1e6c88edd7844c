#!/usr/bin/env bash
# deploy/nhc/meshperf.nhc against real daemons, sourced in bash with stand-ins for NHC.
#
#   nhc.sh MESHPERFD MESHPERF
#
# NHC is not packaged in Debian 12, so this is not NHC itself: a small harness defines
# NHC's conventions as its documentation gives them — die RC MESSAGE (the check failed: NHC
# marks the node offline with the message), log MESSAGE and dbg MESSAGE, and the global
# TIMEOUT (default 30 s) — sources the shipped file, and calls check_meshperf as an nhc.conf
# line would. Two meshperfd in network namespaces joined by a veth pair, each direction
# shaped by tbf (HEALTHY_MBIT), with a baseline saved on A for B.
#
# Checks: healthy link -> returns 0, no die; A->B shaped to SLOW_MBIT -> die 1 with
# meshperf's CRITICAL line, returns 1; B frozen (SIGSTOP) -> UNKNOWN within -t seconds,
# logged, returns 0 (and with -U dies); bad option, no peer, -t above TIMEOUT -> die.
# Skips (77) without root, ip, tc or tbf. Namespaces and daemons are removed on every exit.
set -u
HEALTHY_MBIT=${HEALTHY_MBIT:-200}
SLOW_MBIT=${SLOW_MBIT:-20}

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
NHC_FILE=${MESHPERF_NHC_FILE:-$root/deploy/nhc/meshperf.nhc}

NETNS_TAG=deploy-nhc
NETNS_PREFIX=mpnh
. "$root/tests/netns/lib.sh"
netns_begin "${1:-}" "${2:-}" tc bash
MESHPERF=$(readlink -f "$MESHPERF")
t0=$(date +%s)
step() { say "[$(( $(date +%s) - t0 )) s] $*"; }

netns_shaped_daemons 1500 "$HEALTHY_MBIT" "$HEALTHY_MBIT"
A="$ADDR_A:$PORT" B="$ADDR_B:$PORT"
ip netns exec "$NS_A" timeout 60 "$MESHPERF" --token-file "$TOKEN" baseline save "$B" --initiator "$A" --test bandwidth \
    >"$WORK/baseline.txt" 2>&1 || fail "baseline save: $(cat "$WORK/baseline.txt")"
step "daemons $A and $B, link at $HEALTHY_MBIT Mbit/s, baseline saved on A"

cat >"$WORK/harness.sh" <<'EOF'
# NHC's conventions (nhc's README, "Writing checks"): die RC MSG, log MSG, dbg MSG, TIMEOUT.
TIMEOUT=${TIMEOUT:-30}
die() { echo "DIE $1 $2"; }
log() { echo "LOG $*"; }
dbg() { echo "DBG $*"; }
. "$NHC_FILE"
check_meshperf "$@"
echo "RETURN $?"
EOF
# nhc_call [ARG...]: runs check_meshperf ARG... in A's namespace; OUT holds what it said, SECS how long.
nhc_call() {
    local s=$(date +%s)
    OUT=$(ip netns exec "$NS_A" env NHC_FILE="$NHC_FILE" MESHPERF="$MESHPERF" ${NHC_TIMEOUT:+TIMEOUT=$NHC_TIMEOUT} \
          timeout 60 bash "$WORK/harness.sh" "$@" 2>&1)
    SECS=$(( $(date +%s) - s ))
}
expect() {  # PATTERN WHAT
    grep -qE "$1" <<<"$OUT" || fail "$2: check_meshperf said:"$'\n'"$OUT"
}
refuse() {  # PATTERN WHAT
    ! grep -qE "$1" <<<"$OUT" || fail "$2: check_meshperf said:"$'\n'"$OUT"
}
common=(-i "$A" -k "$TOKEN" -t 10 -a "--baseline stored --test bandwidth")

# 1. Healthy: passes, no die.
nhc_call "${common[@]}" "$B"
expect '^RETURN 0$' "healthy link: not 0"
refuse '^DIE' "healthy link: died"
# OK, or WARNING (logged, passes: NHC's rule for it) when the short check point reads below
# 0.9 x the baseline on this noisy 2-CPU rig; the return code and no die are the test.
expect '^(DBG|LOG) check_meshperf:  MESHPERF (OK|WARNING) - ' "healthy link: no OK or WARNING line"
step "1. healthy: returns 0; $(grep -E '^(DBG|LOG)' <<<"$OUT")"

# 2. Slow link: dies with meshperf's CRITICAL line.
ip netns exec "$NS_A" tc qdisc replace dev "$IF_A" root tbf rate "${SLOW_MBIT}mbit" burst "$BUCKET_BYTES" latency 50ms \
    || fail "tbf to $SLOW_MBIT Mbit/s"
nhc_call "${common[@]}" "$B"
expect '^DIE 1 check_meshperf:  MESHPERF CRITICAL - tcp from .* to .*: .* \(CRITICAL: below 0.75 x baseline' \
    "slow link ($SLOW_MBIT Mbit/s): no die with the CRITICAL line"
expect '^RETURN 1$' "slow link: did not return 1"
refuse '\|' "slow link: perfdata left in the message"
step "2. link at $SLOW_MBIT Mbit/s: $(grep '^DIE' <<<"$OUT")"
ip netns exec "$NS_A" tc qdisc replace dev "$IF_A" root tbf rate "${HEALTHY_MBIT}mbit" burst "$BUCKET_BYTES" latency 50ms \
    || fail "tbf back to $HEALTHY_MBIT Mbit/s"

# 3. The peer hangs: UNKNOWN within the time limit, logged, passes; with -U it dies.
kill -STOP "$PID_B"
nhc_call -i "$A" -k "$TOKEN" -t 4 -a "--baseline stored --test bandwidth" "$B"
secs_plain=$SECS out_plain=$OUT
nhc_call -U -i "$A" -k "$TOKEN" -t 4 -a "--baseline stored --test bandwidth" "$B"
kill -CONT "$PID_B"
expect '^DIE 1 check_meshperf:  MESHPERF UNKNOWN - ' "frozen peer with -U: no die"
OUT=$out_plain
expect '^LOG check_meshperf:  MESHPERF UNKNOWN - ' "frozen peer: UNKNOWN not logged"
expect '^RETURN 0$' "frozen peer: UNKNOWN did not pass"
[ "$secs_plain" -le 6 ] || fail "frozen peer: check_meshperf -t 4 took $secs_plain s"
step "3. peer frozen: $secs_plain s, $(grep '^LOG' <<<"$OUT")"
nhc_call -U -i "$A" -k "$TOKEN" -t 4 -a "--baseline stored --test bandwidth" "$B"   # peer back: OK again
expect '^RETURN 0$' "after SIGCONT the check did not pass"

# 4. Mistakes in nhc.conf die with NHC's messages.
nhc_call -x "$B";               expect '^DIE 1 check_meshperf:  Invalid option:  -x$' "bad option"
nhc_call -i "$A";               expect '^DIE 1 check_meshperf:  Syntax error' "no peer"
NHC_TIMEOUT=10 nhc_call -t 20 "$B"; expect '^DIE 1 check_meshperf:  Check timeout 20 exceeds NHC timeout 10$' "-t above TIMEOUT"
nhc_call -i "$A" -k "$TOKEN" -t 8 "$ADDR_B:1"   # nobody listens there: UNKNOWN passes
expect '^LOG check_meshperf:  MESHPERF UNKNOWN' "peer port closed: not UNKNOWN"
step "4. bad option, no peer, -t above TIMEOUT: die; closed port: UNKNOWN logged"

say "PASS in $(( $(date +%s) - t0 )) s"
exit 0

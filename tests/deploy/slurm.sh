#!/usr/bin/env bash
# The shipped Slurm integration (deploy/slurm/) under a real Slurm on this machine.
#
#   slurm.sh MESHPERFD MESHPERF
#
# Starts munged, slurmctld and two slurmd (Debian's packages), all with files in a work
# folder: node "mp30a" (the node under test) in the root network namespace, node "mp30b" in
# a namespace of its own, joined by a veth pair (10.230.30.1 <-> .2) whose mp30a->mp30b
# direction is shaped by tbf (the other at HEALTHY_MBIT throughout). Each node runs meshperfd on its address. slurm.conf's
# HealthCheckProgram, Prolog and Epilog are the shipped scripts, unchanged; each slurmd runs
# in a mount namespace where an overlay on /etc gives it its own /etc/slurm/slurm.conf and
# /etc/meshperf/ (slurmd hands its scripts no environment, so they read fixed paths), and
# nothing of the machine's /etc is changed.
#
# Checks (each wait has a deadline):
#  1. healthy link (HEALTHY_MBIT): health checks run and mp30a stays IDLE, no reason;
#  2. the job script, under sbatch -N2, runs meshperf matrix over the allocation (both
#     nodes' daemons, hosts from scontrol show hostnames), measures both links, exits 0;
#  3. link shaped to SLOW_MBIT: mp30a is drained and sinfo -R shows "meshperf: MESHPERF
#     CRITICAL - ..." (meshperf's own line);
#  4. link restored: mp30a is resumed (IDLE, no reason);
#  5. an operator's drain: kept through OK checks and through a CRITICAL one, reason unchanged;
#  6. mp30b's meshperfd frozen (SIGSTOP): a job on mp30a starts within the prolog's budget,
#     the prolog logged UNKNOWN, and the node is not drained;
#  7. a CRITICAL prolog (a job beside a running one, so the health check, IDLE only, does
#     not drain first): the node drains with meshperf's reason, the job does not run and is
#     requeued (Slurm holds it: launch_failed_requeued_held); the running job's epilog reads
#     CRITICAL; restored, the health check resumes the node the prolog drained;
#  8. INSPECT_ARGS with a manifest the node does not meet: the health check's inspection is
#     CRITICAL and drains the node with inspect's line; without it, the node is resumed.
# Skips (77) only for a capability probed up front: not root, a tool missing, no network
# namespace, veth or tbf (tests/netns/lib.sh), or no mount+UTS namespace with an overlay on
# /etc (what each slurmd runs in). After the probes everything is the test's to get right:
# a Slurm daemon that exits, nodes that do not register (the first health check runs before
# registration, so a wrong CRITICAL drains the node there) or a failing tc is a FAIL, so a
# broken health check under MESHPERF_DEPLOY_DIR cannot turn into a skip.
# Every process (munged, slurmctld, slurmd, jobs, daemons) and the namespace are removed on
# every exit path.
set -u

HEALTHY_MBIT=${HEALTHY_MBIT:-200}
SLOW_MBIT=${SLOW_MBIT:-20}
PROLOG_BUDGET=${PROLOG_BUDGET:-6}
HC_INTERVAL=${HC_INTERVAL:-4}

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
deploy="${MESHPERF_DEPLOY_DIR:-$root/deploy}/slurm"   # MESHPERF_DEPLOY_DIR: a modified copy, to prove the test fails

# A port for both daemons and two for Slurm, free on this machine now.
pick_port() {
    local p
    for _ in $(seq 50); do
        p=$(( 20000 + RANDOM % 20000 ))
        ss -Htln "sport = :$p" 2>/dev/null | grep -q . || { echo "$p"; return; }
    done
    echo 27470
}
PORT=$(pick_port)
CTLD_PORT=$(pick_port)
SLURMD_PORT=$(pick_port)

NETNS_TAG=deploy-slurm
NETNS_PREFIX=mpsl
. "$root/tests/netns/lib.sh"
netns_begin "${1:-}" "${2:-}" tc ss unshare nsenter munged mungekey slurmctld slurmd sbatch sinfo scontrol
MESHPERFD=$(readlink -f "$MESHPERFD") MESHPERF=$(readlink -f "$MESHPERF")

NS_B="${NETNS_PREFIX}$$b"
IF_A="${NETNS_PREFIX}$$a" IF_B="${NETNS_PREFIX}$$b"
ADDR_A=10.230.30.1 ADDR_B=10.230.30.2
NODE_A=mp30a NODE_B=mp30b
export SLURM_CONF="$WORK/slurm.conf"

t0=$(date +%s)
elapsed() { echo $(( $(date +%s) - t0 )); }
step() { say "[$(elapsed) s] $*"; }

show_logs() {
    local f
    for f in "$WORK"/log/* "$WORK"/meshperfd-*.log; do
        [ -f "$f" ] || continue
        echo "---- $(basename "$f") (last 25 lines)"
        tail -n 25 "$f"
    done
    echo "---- sinfo -N -l; sinfo -R"
    timeout 5 sinfo -N -l 2>&1
    timeout 5 sinfo -R 2>&1
}
netns_on_failure() { show_logs; }
# Job processes (slurmstepd, batch scripts, checks) outlive slurmd: every process in a
# slurmd's mount namespace is this test's, and is killed on every exit before lib.sh's cleanup.
MNT_NS=()
kill_mount_namespaces() {
    local ns p
    [ ${#MNT_NS[@]} -gt 0 ] || return 0
    for p in /proc/[0-9]*; do
        ns=$(readlink "$p/ns/mnt" 2>/dev/null) || continue
        for m in "${MNT_NS[@]}"; do [ "$ns" = "$m" ] && kill -KILL "${p#/proc/}" 2>/dev/null; done
    done
}
trap 'rc=$?; kill_mount_namespaces; (exit $rc); netns_cleanup' EXIT

# The last capability probe: a mount and UTS namespace with an overlay on /etc, as each
# slurmd gets below. Past this point nothing skips.
mkdir -p "$WORK/probe/upper" "$WORK/probe/work"
unshare --mount --uts sh -c "mount -t overlay overlay -o lowerdir=/etc,upperdir='$WORK/probe/upper',workdir='$WORK/probe/work' /etc && hostname mp30probe" \
    >"$WORK/probe.err" 2>&1 || skip "no mount+UTS namespace with an overlay on /etc here: $(cat "$WORK/probe.err")"
for t in slurmctld slurmd; do "$t" -V >/dev/null 2>&1 || skip "$t -V does not run here"; done

# The namespace, then everything the cleanup of lib.sh does not know about: job processes
# slurmd left behind (slurmstepd), and munged.
mkdir -p "$WORK/log"
chmod 755 "$WORK"
netns_add "$NS_B"
ip link add "$IF_A" type veth peer name "$IF_B" 2>"$WORK/err" || fail "cannot create a veth pair ($(cat "$WORK/err")); veth was probed up front"
NETNS_LINKS+=("$IF_A")
ip link set "$IF_B" netns "$NS_B" || fail "moving $IF_B"
ip addr add "$ADDR_A/24" dev "$IF_A" && ip link set "$IF_A" up || fail "$IF_A"
ip -n "$NS_B" addr add "$ADDR_B/24" dev "$IF_B" && ip -n "$NS_B" link set "$IF_B" up || fail "$IF_B"
shape() {  # RATE_MBIT: the mp30a -> mp30b direction, the one mp30a's check sends on
    ip link set "$IF_A" up
    tc qdisc replace dev "$IF_A" root tbf rate "${1}mbit" burst "$BUCKET_BYTES" latency 50ms 2>"$WORK/err" \
        || fail "tc qdisc replace tbf ${1}mbit on $IF_A failed ($(cat "$WORK/err")); tbf was probed up front"
}
shape "$HEALTHY_MBIT"
# mp30b -> mp30a stays at the healthy rate (the matrix measures both directions)
ip netns exec "$NS_B" tc qdisc add dev "$IF_B" root tbf rate "${HEALTHY_MBIT}mbit" burst "$BUCKET_BYTES" latency 50ms \
    || fail "tbf on $IF_B"

# --- the two meshperfd ---
mkdir -p "$WORK/state-a"
"$MESHPERFD" --listen "$ADDR_A:$PORT" --state-dir "$WORK/state-a" --token-file "$TOKEN" >>"$WORK/log/meshperfd-a.log" 2>&1 &
PID_A=$!
netns_track_pid "$PID_A"
netns_start_daemon "$NS_B" "$ADDR_B" b
PID_B=$NETNS_PID
for _ in $(seq 100); do
    kill -0 "$PID_A" 2>/dev/null || fail "meshperfd a exited: $(cat "$WORK/log/meshperfd-a.log")"
    timeout 5 "$MESHPERF" --token-file "$TOKEN" info "$ADDR_A:$PORT" >/dev/null 2>&1 && break
    sleep 0.1
done
timeout 5 "$MESHPERF" --token-file "$TOKEN" info "$ADDR_A:$PORT" >/dev/null 2>&1 || fail "meshperfd a not answering"
netns_wait_ready "$NS_B" "$ADDR_B" "$PID_B" b
step "meshperfd on $ADDR_A:$PORT and (namespace $NS_B) $ADDR_B:$PORT"

# The baseline of the healthy link, kept by mp30a's daemon: what --baseline stored compares with.
timeout 60 "$MESHPERF" --token-file "$TOKEN" baseline save "$ADDR_B:$PORT" --initiator "$ADDR_A:$PORT" \
    --test bandwidth >"$WORK/log/baseline.txt" 2>&1 || fail "baseline save: $(cat "$WORK/log/baseline.txt")"
step "baseline saved: $(grep -iE 'gbit' "$WORK/log/baseline.txt" | head -n 2 | tr -s ' ' | tr '\n' ' ')"

# --- /etc of each slurmd: slurm.conf and meshperf's settings ---
cat >"$SLURM_CONF" <<EOF
ClusterName=mp30
SlurmctldHost=mp30ctl($ADDR_A)
SlurmctldPort=$CTLD_PORT
SlurmdPort=$SLURMD_PORT
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$WORK/munge/munge.socket
CredType=cred/munge
StateSaveLocation=$WORK/ctld
SlurmdSpoolDir=$WORK/spool-%n
SlurmctldPidFile=$WORK/slurmctld.pid
SlurmdPidFile=$WORK/slurmd-%n.pid
SlurmctldLogFile=$WORK/log/slurmctld.log
SlurmdLogFile=$WORK/log/slurmd-%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
MpiDefault=none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerParameters=sched_interval=2
ReturnToService=2
HealthCheckProgram=$deploy/meshperf-healthcheck
HealthCheckInterval=$HC_INTERVAL
HealthCheckNodeState=IDLE
Prolog=$deploy/meshperf-prolog
Epilog=$deploy/meshperf-epilog
PrologFlags=Alloc
MinJobAge=600
NodeName=$NODE_A NodeAddr=$ADDR_A CPUs=2 State=UNKNOWN
NodeName=$NODE_B NodeAddr=$ADDR_B CPUs=2 State=UNKNOWN
PartitionName=mp30 Nodes=ALL Default=YES MaxTime=10 State=UP
EOF
mkdir -p "$WORK/ctld" "$WORK/spool-$NODE_A" "$WORK/spool-$NODE_B" "$WORK/jobs"
for n in a b; do
    up="$WORK/etc-$n/upper" && mkdir -p "$up/slurm" "$up/meshperf" "$WORK/etc-$n/work"
    cp "$SLURM_CONF" "$up/slurm/slurm.conf"
done
cat >"$WORK/etc-a/upper/meshperf/slurm-check.conf" <<EOF
MESHPERF=$MESHPERF
TOKEN_FILE=$TOKEN
INITIATOR=$ADDR_A:$PORT
# a stored baseline, bandwidth only: an 8 B latency on a busy 2-core machine moves by more
# than the 33% that --crit 0.75 allows, with nothing wrong on the path; --warn 0.7 --crit 0.5:
# a short 1 MiB check point reads 77-90% of a tbf link's rate here (netns-rails), so the
# defaults (0.9, 0.75) left a healthy node a few % from WARNING or a drain; the slow link
# (SLOW_MBIT, a tenth of the rate) is far below either
CHECK_ARGS="--baseline stored --test bandwidth --warn 0.7 --crit 0.5"
CHECK_TIMEOUT=15
PROLOG_BUDGET=$PROLOG_BUDGET
EPILOG_BUDGET=$PROLOG_BUDGET
LOG_FILE=$WORK/log/meshperf-slurm-$NODE_A.log
MESHPERF_PORT=$PORT
# step 8 writes INSPECT_ARGS here (a file outside the overlay, so it can change mid-test)
[ -r "$WORK/extra-settings.conf" ] && . "$WORK/extra-settings.conf"
EOF
: >"$WORK/extra-settings.conf"
echo "$ADDR_B:$PORT   # mp30b's daemon, over the shaped link" >"$WORK/etc-a/upper/meshperf/peers"
cat >"$WORK/etc-b/upper/meshperf/slurm-check.conf" <<EOF
MESHPERF=$MESHPERF
TOKEN_FILE=$TOKEN
INITIATOR=$ADDR_B:$PORT
LOG_FILE=$WORK/log/meshperf-slurm-$NODE_B.log
MESHPERF_PORT=$PORT
EOF
: >"$WORK/etc-b/upper/meshperf/peers"   # mp30b checks nothing: its health check logs "no peers"
hc_log="$WORK/log/meshperf-slurm-$NODE_A.log"
: >"$hc_log"

# --- munged, slurmctld, slurmd ---
mkdir -p "$WORK/munge" && chmod 700 "$WORK/munge"
mungekey -c -k "$WORK/munge/munge.key" >/dev/null 2>&1 || fail "mungekey"
chmod 600 "$WORK/munge/munge.key"
munged -F -f --socket="$WORK/munge/munge.socket" --key-file="$WORK/munge/munge.key" \
    --pid-file="$WORK/munge/munged.pid" --log-file="$WORK/log/munged.log" --seed-file="$WORK/munge/seed" \
    >>"$WORK/log/munged.out" 2>&1 &
netns_track_pid $!
for _ in $(seq 50); do [ -S "$WORK/munge/munge.socket" ] && break; sleep 0.1; done
[ -S "$WORK/munge/munge.socket" ] || fail "munged did not start: $(tail -5 "$WORK/log/munged.log" 2>/dev/null)"

# slurmctld checks that its host name is SlurmctldHost's: a UTS namespace gives it that name.
unshare --uts sh -c "hostname mp30ctl && exec slurmctld -D -f '$SLURM_CONF'" >>"$WORK/log/slurmctld.out" 2>&1 &
PID_CTLD=$!
netns_track_pid "$PID_CTLD"
# slurmd of node N: its own host name (UTS namespace) and /etc (mount namespace, overlay);
# mp30b's also in the peer's network namespace (nsenter keeps /sys, which slurmd's cgroup
# probe reads, where `ip netns exec` would remount it).
start_slurmd() {  # a|b NODE [NETNS]
    local n=$1 node=$2 netns=${3:-} enter=()
    [ -n "$netns" ] && enter=(nsenter "--net=/run/netns/$netns")
    unshare --mount --uts "${enter[@]}" sh -c "
        mount -t overlay overlay -o lowerdir=/etc,upperdir='$WORK/etc-$n/upper',workdir='$WORK/etc-$n/work' /etc || exit 97
        hostname $node && exec slurmd -D" >>"$WORK/log/slurmd-$n.out" 2>&1 &
    netns_track_pid $!
    eval "PID_SLURMD_$n=\$!"
}
start_slurmd a "$NODE_A"
start_slurmd b "$NODE_B" "$NS_B"
sleep 0.2
for p in "$PID_SLURMD_a" "$PID_SLURMD_b"; do
    m=$(readlink "/proc/$p/ns/mnt" 2>/dev/null) && [ "$m" != "$(readlink /proc/self/ns/mnt)" ] && MNT_NS+=("$m")
done

# Both nodes registered: the first health check ran before registration (slurmd does so).
deadline=$(( $(date +%s) + 40 ))
while :; do
    for p in "$PID_CTLD" "$PID_SLURMD_a" "$PID_SLURMD_b"; do
        kill -0 "$p" 2>/dev/null || fail "slurmctld or slurmd exited at start (logs below)"
    done
    states=$(timeout 5 sinfo -h -N -o '%N %T' 2>/dev/null | sort | tr '\n' ' ')
    case $states in *"$NODE_A idle"*"$NODE_B idle"*) break ;; esac
    # The health check ran before registration: a drain now is its verdict on a healthy link.
    case $states in *"$NODE_A drain"*) fail "$NODE_A drained at registration on a healthy link: '$(timeout 5 sinfo -h -N -n "$NODE_A" -o %E)'" ;; esac
    [ "$(date +%s)" -lt "$deadline" ] || fail "the nodes did not register idle in 40 s (states: $states; logs below)"
    sleep 0.5
done
step "Slurm up: $states"

# --- helpers ---
node_field() { timeout 5 sinfo -h -N -n "$NODE_A" -o "$1" 2>/dev/null | head -n 1; }
hc_runs() { grep -c "meshperf-healthcheck\[[0-9]*\] node $NODE_A: check " "$hc_log" 2>/dev/null || true; }
# Waits until COND (a shell expression) holds, up to SECONDS; fails with WHAT otherwise.
wait_for() {  # SECONDS WHAT COND
    local end=$(( $(date +%s) + $1 ))
    while ! eval "$3"; do
        [ "$(date +%s)" -lt "$end" ] || fail "$2 (not within $1 s; state '$(node_field %T)', reason '$(node_field %E)')"
        sleep 0.5
    done
}
# Waits for N more health-check runs on mp30a than now.
wait_hc_runs() {  # N SECONDS
    local target=$(( $(hc_runs) + $1 ))
    wait_for "$2" "$1 more health checks on $NODE_A" '[ "$(hc_runs)" -ge "$target" ]'
}

# 1. Healthy: checks run, the node stays idle with no reason.
wait_hc_runs 2 30
[ "$(node_field %T)" = idle ] || fail "healthy link, but $NODE_A is '$(node_field %T)' ($(node_field %E))"
grep -q 'meshperf-healthcheck.*check .*: OK: MESHPERF OK' "$hc_log" \
    || fail "the health checks did not read OK: $(tail -n 3 "$hc_log")"
step "1. healthy link ($HEALTHY_MBIT Mbit/s): $NODE_A idle; $(grep 'check ' "$hc_log" | tail -n 1 | sed 's/.*check /check /')"

# 2. The job script under sbatch on a two-node allocation.
jobid=$(cd "$WORK/jobs" && sbatch --parsable -N 2 -t 5 -o "$WORK/jobs/matrix-%j.out" "$deploy/meshperf-matrix.sbatch" 2>"$WORK/err") \
    || fail "sbatch: $(cat "$WORK/err")"
jobid=${jobid%%;*}
wait_for 90 "matrix job $jobid to finish" \
    '[ -n "$(timeout 5 scontrol show job -o "$jobid" 2>/dev/null | grep -oE "JobState=(COMPLETED|FAILED|CANCELLED|TIMEOUT|NODE_FAIL|OUT_OF_MEMORY)")" ]'
job=$(timeout 5 scontrol show job -o "$jobid")
out="$WORK/jobs/matrix-$jobid.out"
echo "$job" | grep -q 'JobState=COMPLETED' && echo "$job" | grep -q 'ExitCode=0:0' \
    || fail "matrix job $jobid: $(echo "$job" | grep -oE 'JobState=[A-Z_]+|ExitCode=[0-9:]+|NodeList=[^ ]+' | tr '\n' ' '); output: $(cat "$out" 2>/dev/null)"
echo "$job" | grep -qE " NodeList=(mp30\[a-b\]|mp30a,mp30b) " || fail "matrix job ran on $(echo "$job" | grep -oE ' NodeList=[^ ]+')"
grep -q "2 nodes: $NODE_A $NODE_B" "$out" || fail "the job script did not list both nodes: $(cat "$out")"
grep -q "2 of 2 directed links measured" "$out" || fail "the matrix did not measure both links: $(cat "$out")"
json="$WORK/jobs/meshperf-matrix-$jobid.json"
python3 - "$json" "$ADDR_A:$PORT" "$ADDR_B:$PORT" <<'EOF' || fail "matrix JSON: $(head -c 600 "$json" 2>/dev/null)"
import json, sys
doc = json.load(open(sys.argv[1]))
links = {(l["from"], l["to"]): l for l in doc["links"]}
want = {(sys.argv[2], sys.argv[3]), (sys.argv[3], sys.argv[2])}
assert set(links) == want, links.keys()
assert all(l["reachable"] and l["gbit_per_s"] > 0 for l in links.values()), links
EOF
step "2. sbatch -N2 meshperf-matrix.sbatch: job $jobid COMPLETED, $(grep -m1 'directed links' "$out")"

# 3. The link shaped below the threshold: drained, meshperf's line as the reason.
shape "$SLOW_MBIT"
wait_for 60 "$NODE_A drained after its link was shaped to $SLOW_MBIT Mbit/s" '[ "$(node_field %T)" = drained ]'
reason=$(node_field %E)
case $reason in
    "meshperf: MESHPERF CRITICAL - "*) ;;
    *) fail "drain reason is not meshperf's line: '$reason'" ;;
esac
sinfo_r=$(timeout 5 sinfo -R -h -o '%n|%E' 2>&1)
echo "$sinfo_r" | grep -q "^$NODE_A|meshperf: MESHPERF CRITICAL" || fail "sinfo -R: $sinfo_r"
grep -qF "drained: $reason" "$hc_log" || fail "the health check did not log its drain: $(tail -n 3 "$hc_log")"
step "3. link at $SLOW_MBIT Mbit/s: drained; sinfo -R: $sinfo_r"

# 4. Restored: resumed.
shape "$HEALTHY_MBIT"
wait_for 60 "$NODE_A resumed after its link was restored" '[ "$(node_field %T)" = idle ]'
[ -z "$(node_field %E | sed "s/^none$//")" ] || fail "resumed with a reason left: $(node_field %E)"
grep -q 'meshperf-healthcheck.*resumed' "$hc_log" || fail "no 'resumed' in the health check's log"
step "4. link restored: $NODE_A $(node_field %T)"

# 5. An operator's drain is never lifted, nor its reason replaced.
op_reason="operator: disk swap, ticket 4711"
timeout 10 scontrol update nodename="$NODE_A" state=drain reason="$op_reason" || fail "scontrol drain"
wait_hc_runs 2 30
[ "$(node_field %T)" = drained ] && [ "$(node_field %E)" = "$op_reason" ] \
    || fail "OK checks touched the operator's drain: '$(node_field %T)' '$(node_field %E)'"
grep -q 'OK, node stays drained: its reason is not ours' "$hc_log" || fail "no 'stays drained' in the log"
shape "$SLOW_MBIT"
wait_for 60 "a CRITICAL check on the operator-drained node" 'grep -q "already drained by someone else" "$hc_log"'
[ "$(node_field %E)" = "$op_reason" ] || fail "a CRITICAL check replaced the operator's reason: '$(node_field %E)'"
shape "$HEALTHY_MBIT"
wait_hc_runs 1 30
[ "$(node_field %T)" = drained ] && [ "$(node_field %E)" = "$op_reason" ] \
    || fail "the operator's drain changed after the link was restored: '$(node_field %T)' '$(node_field %E)'"
timeout 10 scontrol update nodename="$NODE_A" state=resume || fail "scontrol resume"
wait_for 20 "$NODE_A idle after the operator's resume" '[ "$(node_field %T)" = idle ]'
step "5. operator's drain ('$op_reason') kept through OK and CRITICAL checks"

# 6. The peer hangs: the prolog's budget holds, UNKNOWN passes, the job runs.
kill -STOP "$PID_B"
stopped_at=$(date +%s)
jobid=$(cd "$WORK/jobs" && sbatch --parsable -N 1 -w "$NODE_A" -t 2 -o "$WORK/jobs/prolog-%j.out" \
    --wrap "date +%s >'$WORK/jobs/started'" 2>"$WORK/err") || { kill -CONT "$PID_B"; fail "sbatch: $(cat "$WORK/err")"; }
jobid=${jobid%%;*}
submitted=$(date +%s)
limit=$(( PROLOG_BUDGET + 12 ))   # the budget, plus Slurm's own scheduling and launch
end=$(( submitted + limit ))
while [ ! -s "$WORK/jobs/started" ] && [ "$(date +%s)" -lt "$end" ]; do sleep 0.2; done
kill -CONT "$PID_B"
[ -s "$WORK/jobs/started" ] || fail "with the peer frozen, job $jobid had not started $limit s after submission (prolog budget $PROLOG_BUDGET s): $(timeout 5 scontrol show job -o "$jobid" | grep -oE 'JobState=[A-Z_]+|Reason=[^ ]+')"
started=$(cat "$WORK/jobs/started")
grep -q "meshperf-prolog.*job $jobid: UNKNOWN" "$hc_log" \
    || fail "the prolog did not log UNKNOWN for job $jobid: $(grep meshperf-prolog "$hc_log" | tail -n 3)"
case $(node_field %T) in drain*) fail "the node was drained while its peer hung: $(node_field %E)" ;; esac
step "6. peer frozen (SIGSTOP, $((submitted - stopped_at)) s before submission): job $jobid started $((started - submitted)) s after sbatch (budget $PROLOG_BUDGET s); prolog: $(grep "meshperf-prolog.*job $jobid:" "$hc_log" | sed 's/.*job /job /')"

# 7. A CRITICAL prolog. The health check would drain an idle node first, so a one-CPU job
# keeps mp30a MIXED (HealthCheckNodeState=IDLE skips it) while a second job's prolog checks.
# (first an OK health check after the thaw: a check just after SIGCONT can read low)
mark=$(wc -l <"$hc_log")
wait_for 40 "an OK health check after the peer was thawed" \
    'tail -n +$((mark + 1)) "$hc_log" | grep -q "meshperf-healthcheck.*: OK: MESHPERF OK"'
wait_for 20 "$NODE_A idle before step 7" '[ "$(node_field %T)" = idle ]'
blocker=$(cd "$WORK/jobs" && sbatch --parsable -N 1 -n 1 -w "$NODE_A" -t 2 -o /dev/null --wrap "sleep 60" 2>"$WORK/err") \
    || fail "sbatch: $(cat "$WORK/err")"
blocker=${blocker%%;*}
wait_for 30 "blocker job $blocker running" 'timeout 5 scontrol show job -o "$blocker" | grep -q "JobState=RUNNING"'
# RUNNING comes with the allocation, before the prolog ends: wait for the prolog's verdict
wait_for 30 "the prolog of job $blocker" 'grep -q "meshperf-prolog.*job $blocker: OK" "$hc_log"'
shape "$SLOW_MBIT"
jobid=$(cd "$WORK/jobs" && sbatch --parsable -N 1 -n 1 -w "$NODE_A" -t 2 -o "$WORK/jobs/prolog7-%j.out" \
    --wrap "date +%s >'$WORK/jobs/started7'" 2>"$WORK/err") || fail "sbatch: $(cat "$WORK/err")"
jobid=${jobid%%;*}
wait_for 40 "the prolog's CRITICAL for job $jobid" 'grep -q "meshperf-prolog.*job $jobid: CRITICAL" "$hc_log"'
wait_for 30 "$NODE_A drained after a CRITICAL prolog" 'case $(node_field %T) in drain*) true ;; *) false ;; esac'
sleep 3
[ -s "$WORK/jobs/started7" ] && fail "job $jobid ran although its prolog was CRITICAL"
reason7=$(node_field %E)
job7=$(timeout 5 scontrol show job -o "$jobid" | grep -oE 'JobState=[A-Z_]+|Reason=[^ ]+|Restarts=[0-9]+' | tr '\n' ' ')
case $reason7 in "meshperf: MESHPERF CRITICAL - "*) ;; *) fail "after a CRITICAL prolog the reason is '$reason7'" ;; esac
case $job7 in *JobState=PENDING*Restarts=1*) ;; *) fail "job $jobid after its CRITICAL prolog: $job7 (expected requeued, pending)" ;; esac
step "7. prolog CRITICAL (job $jobid beside a running job): node $(node_field %T), reason '$reason7'; job: $job7"
# The blocker ends: its epilog checks the slow link too (CRITICAL, logged; the node is
# already drained with meshperf's reason). Restored, the health check resumes the node
# the prolog drained.
timeout 5 scancel "$jobid" "$blocker"
wait_for 40 "the epilog of job $blocker" 'grep -q "meshperf-epilog.*job $blocker ended: CRITICAL" "$hc_log"'
shape "$HEALTHY_MBIT"
wait_for 60 "$NODE_A resumed after the prolog's drain" '[ "$(node_field %T)" = idle ]'
step "7. epilog of job $blocker: CRITICAL logged; link restored: $NODE_A resumed by the health check"

# 8. The node itself (INSPECT_ARGS): a manifest the node does not meet (99 rails) makes the
#    inspection CRITICAL, which drains the node with inspect's line while its link is healthy;
#    the settings back without INSPECT_ARGS, the health check resumes it. (The extra settings
#    file is sourced by this test's slurm-check.conf, above: the shipped scripts read one file.)
printf 'rails = 99\n' >"$WORK/node-99-rails.toml"
echo "INSPECT_ARGS=\"--expect $WORK/node-99-rails.toml\"" >"$WORK/extra-settings.conf"
wait_for 40 "$NODE_A drained by a CRITICAL inspection" '[ "$(node_field %T)" = drained ]'
reason8=$(node_field %E)
case $reason8 in "meshperf: MESHPERF INSPECT CRITICAL - "*"manifest expects 99"*) ;; *) fail "the inspection's drain reason is '$reason8'" ;; esac
grep -q "meshperf-healthcheck.*inspect: CRITICAL: MESHPERF INSPECT CRITICAL" "$hc_log" || fail "the inspection was not logged"
: >"$WORK/extra-settings.conf"
wait_for 40 "$NODE_A resumed after the inspection's drain" '[ "$(node_field %T)" = idle ]'
step "8. INSPECT_ARGS with a manifest of 99 rails: drained, reason '$reason8'; without it: resumed"

# 9. A configuration mistake is the check's own, never the node's: a manifest that is not
#    there (one bad rollout) makes inspect UNKNOWN (exit 3), which is logged, and the node
#    stays up: two health checks later it is still idle, with no drain reason.
echo "INSPECT_ARGS=\"--expect $WORK/no-such-node.toml\"" >"$WORK/extra-settings.conf"
wait_hc_runs 2 30
[ "$(node_field %T)" = idle ] || fail "a missing manifest drained $NODE_A: $(node_field %T) '$(node_field %E)'"
grep -q "meshperf-healthcheck.*inspect: UNKNOWN: MESHPERF INSPECT UNKNOWN - .*no-such-node.toml: no such file" "$hc_log" \
    || fail "the inspection's UNKNOWN was not logged: $(grep inspect "$hc_log" | tail -3)"
: >"$WORK/extra-settings.conf"
step "9. INSPECT_ARGS naming a missing manifest: UNKNOWN logged, $NODE_A still idle"

say "PASS in $(elapsed) s"
exit 0

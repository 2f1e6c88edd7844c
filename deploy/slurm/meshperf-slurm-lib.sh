# meshperf + Slurm: what meshperf-healthcheck, meshperf-prolog and meshperf-epilog share.
# Sourced (POSIX sh), never run. It is looked up next to the script that sources it, so keep
# the files of deploy/slurm/ together (the package installs them in /usr/share/meshperf/slurm/).
#
# slurmd runs HealthCheckProgram, Prolog and Epilog with an almost empty environment (the
# health check gets SLURMD_NODENAME and nothing else: no PATH, no SLURM_CONF), so every
# setting comes from one file, /etc/meshperf/slurm-check.conf (shell assignments; see
# meshperf-slurm-check.conf.example). MESHPERF_SLURM_CONFIG names another file when a script
# is run by hand.

# shellcheck disable=SC2034  # the settings are read by the scripts that source this file
PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export PATH

# Defaults; the config file overrides any of them.
MESHPERF=/usr/bin/meshperf              # the CLI
TOKEN_FILE=/etc/meshperf/token          # the cluster token
PEERS_FILE=/etc/meshperf/peers          # this node's peers (rail neighbours): one HOST[:PORT] a line, # comments
INITIATOR=localhost:7470                # this node's meshperfd, which runs the measurement
CHECK_ARGS="--baseline stored"          # thresholds: a stored baseline (meshperf baseline save), --min-gbit, ...
CHECK_TIMEOUT=20                        # seconds per peer at most
HEALTHCHECK_BUDGET=50                   # seconds for all peers; slurmd kills HealthCheckProgram at 60 s
PROLOG_BUDGET=10                        # seconds the prolog may add to a job's start, all peers together
EPILOG_BUDGET=10                        # seconds the epilog may add to a job's end
PROLOG_ON_CRITICAL=requeue              # requeue: drain and exit 1 (Slurm requeues the job); run: drain, job runs
REASON_PREFIX="meshperf:"               # marks the drains these scripts made, and only those may they resume
INSPECT_ARGS=""                         # set (e.g. "--expect /etc/meshperf/node.toml --gpu-copies"): also meshperf inspect the node
PROM_FILE=""                            # optional node_exporter textfile (meshperf check --prom-file)
LOG_FILE=""                             # optional log file; every line also goes to syslog (logger) and stderr
SCONTROL=scontrol
SINFO=sinfo

MESHPERF_SLURM_CONFIG=${MESHPERF_SLURM_CONFIG:-/etc/meshperf/slurm-check.conf}
if [ -r "$MESHPERF_SLURM_CONFIG" ]; then
    # shellcheck disable=SC1090
    . "$MESHPERF_SLURM_CONFIG"
fi

MP_TAG=${MP_TAG:-meshperf-slurm}
MP_NODE=${SLURMD_NODENAME:-$(hostname -s)}

mp_log() {
    msg="${MP_TAG}[$$] node $MP_NODE: $*"
    printf '%s\n' "$msg" >&2
    if [ -n "$LOG_FILE" ]; then
        printf '%s %s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$msg" >>"$LOG_FILE" 2>/dev/null || true
    fi
    if command -v logger >/dev/null 2>&1; then logger -t "$MP_TAG" -- "node $MP_NODE: $*" 2>/dev/null || true; fi
}

mp_state_name() {
    case $1 in 0) echo OK ;; 1) echo WARNING ;; 2) echo CRITICAL ;; *) echo UNKNOWN ;; esac
}

# Rank for "the worst state wins", as meshperf check ranks figures: CRITICAL > WARNING > UNKNOWN > OK.
mp_rank() {
    case $1 in 2) echo 3 ;; 1) echo 2 ;; 0) echo 0 ;; *) echo 1 ;; esac
}

# The peers of this node, one a line, comments and blanks dropped.
mp_peers() {
    [ -r "$PEERS_FILE" ] || return 0
    sed -e 's/#.*//' -e 's/^[[:space:]]*//' -e 's/[[:space:]]*$//' "$PEERS_FILE" | grep -v '^$' || true
}

# mp_verdict EXIT OUTPUT KILLED_LINE FAILED_PREFIX
# Sets rc (0..3) and line (OUTPUT's Nagios status line, perfdata removed) from a meshperf
# check or inspect that exited EXIT: killed by timeout (124, 137) is UNKNOWN with KILLED_LINE;
# any other code outside 0..3 is UNKNOWN, "FAILED_PREFIX exited CODE: <its first line>".
mp_verdict() {
    rc=$1
    line=$(printf '%s\n' "$2" | head -n 1)
    line=${line%%|*}
    line=$(printf '%s' "$line" | sed 's/[[:space:]]*$//')
    case $rc in
        0|1|2|3) ;;
        124|137) rc=3; line=$3 ;;
        *) line="$4 exited $rc: $line"; rc=3 ;;
    esac
}

# mp_check_peers BUDGET_SECONDS
# Checks every peer within BUDGET seconds in all; sets MP_STATE (0..3, the worst) and MP_LINE
# (that peer's Nagios status line, perfdata removed). A check killed by the budget, or a peer
# the budget left no time for, is UNKNOWN: it never drains, and never holds the caller longer.
mp_check_peers() {
    budget=$1
    deadline=$(( $(date +%s) + budget ))
    MP_STATE=0
    MP_LINE="MESHPERF OK - no peers configured in $PEERS_FILE"
    peers=$(mp_peers)
    if [ -z "$peers" ]; then
        mp_log "no peers in $PEERS_FILE: nothing to check"
        return 0
    fi
    worst=-1
    for peer in $peers; do
        now=$(date +%s)
        left=$(( deadline - now ))
        if [ "$left" -lt 2 ]; then
            rc=3
            line="MESHPERF UNKNOWN - $peer not checked: the ${budget} s budget was spent"
        else
            t=$CHECK_TIMEOUT
            [ "$t" -gt "$left" ] && t=$left
            inner=$(( t > 2 ? t - 1 : 1 ))   # meshperf's own limit ends the check first, with its reason
            set -- --token-file "$TOKEN_FILE" check "$peer" --initiator "$INITIATOR" --timeout "$inner"
            [ -n "$PROM_FILE" ] && set -- "$@" --prom-file "$PROM_FILE"
            # shellcheck disable=SC2086
            out=$(timeout -k 1 "$t" "$MESHPERF" "$@" $CHECK_ARGS 2>&1)
            mp_verdict $? "$out" "MESHPERF UNKNOWN - check of $peer killed after the ${t} s budget" \
                "MESHPERF UNKNOWN - meshperf check $peer"
        fi
        mp_log "check $peer: $(mp_state_name "$rc"): $line"
        if [ "$(mp_rank "$rc")" -gt "$worst" ]; then
            worst=$(mp_rank "$rc")
            MP_STATE=$rc
            MP_LINE=$line
        fi
    done
    return 0
}

# mp_inspect_node DEADLINE (seconds since the epoch)
# With INSPECT_ARGS set: `meshperf inspect INITIATOR INSPECT_ARGS` (this node's daemon inspects
# its node: PCIe links, ACS, GPU-NIC affinity, rails, the manifest, with --gpu-copies every
# GPU's copies, with --loopback each NIC's), killed at DEADLINE. A CRITICAL inspection becomes
# the verdict (MP_STATE 2, MP_LINE its status line) unless a check is already CRITICAL; a
# WARNING or UNKNOWN one is only logged: it is a lasting property of the node (an ACS bit, a
# daemon that may not read configuration space), which must not hold a node drained that the
# links would resume.
mp_inspect_node() {
    [ -n "$INSPECT_ARGS" ] || return 0
    left=$(( $1 - $(date +%s) ))
    if [ "$left" -lt 2 ]; then
        rc=3
        line="MESHPERF INSPECT UNKNOWN - not inspected: the budget was spent"
    else
        # shellcheck disable=SC2086
        out=$(timeout -k 1 "$left" "$MESHPERF" --token-file "$TOKEN_FILE" inspect "$INITIATOR" $INSPECT_ARGS --format nagios 2>&1)
        mp_verdict $? "$out" "MESHPERF INSPECT UNKNOWN - inspection killed after the ${left} s budget" \
            "MESHPERF INSPECT UNKNOWN - meshperf inspect"
    fi
    mp_log "inspect: $(mp_state_name "$rc"): $line"
    if [ "$rc" = 2 ] && [ "$MP_STATE" != 2 ]; then
        MP_STATE=2
        MP_LINE=$line
    fi
    return 0
}

# Sets MP_NODE_STATE (sinfo's long state: idle, drained, draining, mixed, ...) and
# MP_NODE_REASON (empty when none).
mp_node_info() {
    info=$(timeout 10 "$SINFO" -h -N -n "$MP_NODE" -o '%T|%E' 2>/dev/null | head -n 1)
    MP_NODE_STATE=${info%%|*}
    MP_NODE_REASON=${info#*|}
    [ "$MP_NODE_REASON" = none ] && MP_NODE_REASON=""
    [ "$info" = "$MP_NODE_STATE" ] && MP_NODE_REASON=""
    return 0
}

mp_is_drained() {
    case $MP_NODE_STATE in drain*|*drain*) return 0 ;; *) return 1 ;; esac
}

mp_reason_is_ours() {
    case $MP_NODE_REASON in "$REASON_PREFIX"*) return 0 ;; *) return 1 ;; esac
}

# Drains the node with meshperf's line as the reason, unless someone else drained it: an
# operator's reason is never replaced (these scripts would then resume a node they did not drain).
mp_drain() {
    mp_node_info
    if mp_is_drained && ! mp_reason_is_ours; then
        mp_log "CRITICAL, but already drained by someone else (reason: $MP_NODE_REASON): left alone"
        return 0
    fi
    reason="$REASON_PREFIX $1"
    if mp_is_drained && [ "$MP_NODE_REASON" = "$reason" ]; then
        return 0
    fi
    if timeout 10 "$SCONTROL" update nodename="$MP_NODE" state=drain reason="$reason"; then
        mp_log "drained: $reason"
    else
        mp_log "scontrol could not drain the node (reason was: $reason)"
    fi
}

# Resumes the node only when these scripts drained it (its reason starts with REASON_PREFIX).
mp_resume_if_ours() {
    mp_node_info
    mp_is_drained || return 0
    if ! mp_reason_is_ours; then
        mp_log "OK, node stays drained: its reason is not ours ($MP_NODE_REASON)"
        return 0
    fi
    if timeout 10 "$SCONTROL" update nodename="$MP_NODE" state=resume; then
        mp_log "resumed (it was drained with: $MP_NODE_REASON)"
    else
        mp_log "scontrol could not resume the node"
    fi
}

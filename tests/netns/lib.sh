# Shared set-up of the network-namespace tests. Sourced, never run.
#
# A test sets NETNS_TAG (its name in messages) and NETNS_PREFIX (a short namespace-name
# prefix: names are PREFIX<pid><suffix>, interface names stay within 15 characters), then:
#
#   netns_begin MESHPERFD MESHPERF [TOOL...]   arguments, root, required tools; removes stale
#                                              namespaces of a killed earlier run; WORK dir,
#                                              TOKEN file (0600); cleanup trap for every exit
#   netns_begin_tools [TOOL...]                the same without the two binaries (a bench
#                                              that runs other tools only)
#   netns_add NAME                             a namespace (lo up), deleted at exit
#   netns_track_pid PID                        a process stopped (TERM, then KILL) at exit
#   netns_pair MTU                             namespaces NS_A, NS_B joined by veth IF_A/IF_B,
#                                              addresses ADDR_A, ADDR_B (192.0.2.0/24)
#   netns_tbf NS DEV RATE_MBIT                 tbf shaper, 256 KiB bucket (fails if tc fails)
#   netns_start_daemon NS ADDR NAME [ARG...]   meshperfd on ADDR:PORT; pid in NETNS_PID
#   netns_healthy NS ADDR                      the daemon answers an authenticated info request
#   netns_wait_ready NS ADDR PID NAME          waits up to 10 s for it, else fails with its log
#   netns_bridge_hosts N MTU RATE_MBIT         N hosts on one bridge, every link tbf-shaped in
#                                              both directions (see below)
#   netns_host_rate I RATE_MBIT                host I's link shaped at another rate, both ways
#   netns_neigh_room ENTRIES                   room for ENTRIES neighbour entries, all namespaces
#                                              together (restored at exit)
#   netns_sysctl_at_least KEY VALUE            a host-wide sysctl raised for the run (restored)
#
# Capabilities are probed once, up front (netns_begin with tc among its tools: a namespace,
# a veth pair and a tbf qdisc on it; 77 when one is missing). After that a failing ip or tc
# is a failure of the test, never a skip: a tc that breaks mid-test, or a shaping command the
# test got wrong, must not read as "not available here".
# A test may define netns_on_failure, called by the cleanup when the script exits non-zero.
# NETNS_KEEP_WORK=DIR in the environment: the cleanup copies the work folder there first.
# All traffic stays inside the namespaces the test creates.

SKIP=77
PORT=${PORT:-7470}
BUCKET_BYTES=262144   # tbf burst: 256 KiB (see accuracy.sh for why)
WORK=""
TOKEN=""
NETNS_PID=""
declare -a NETNS_NAMESPACES=() NETNS_PIDS=() NETNS_LINKS=() NETNS_SYSCTLS=()

say() { printf '%s: %s\n' "$NETNS_TAG" "$*"; }
skip() { say "SKIP: $*"; exit "$SKIP"; }
fail() { say "FAIL: $*"; exit 1; }

netns_cleanup() {
    local rc=$?
    trap - EXIT INT TERM HUP
    [[ $rc -ne 0 ]] && declare -F netns_on_failure >/dev/null && netns_on_failure
    for pid in "${NETNS_PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null; done
    for pid in "${NETNS_PIDS[@]}"; do
        for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$pid" 2>/dev/null
        wait "$pid" 2>/dev/null
    done
    for ns in "${NETNS_NAMESPACES[@]}"; do ip netns del "$ns" 2>/dev/null; done
    for link in "${NETNS_LINKS[@]}"; do ip link del "$link" 2>/dev/null; done   # never moved into a namespace
    local k   # settings back as they were: the latest change first, so the first value wins
    for (( k = ${#NETNS_SYSCTLS[@]} - 1; k >= 0; k-- )); do sysctl -qw "${NETNS_SYSCTLS[$k]}" 2>/dev/null; done
    if [[ -n "$WORK" && -n "${NETNS_KEEP_WORK:-}" ]]; then   # for a look afterwards: logs, results
        mkdir -p "$NETNS_KEEP_WORK" && cp -r "$WORK"/. "$NETNS_KEEP_WORK"/ && say "work folder copied to $NETNS_KEEP_WORK"
    fi
    [[ -n "$WORK" ]] && rm -rf "$WORK"
    exit "$rc"
}

netns_begin() {
    MESHPERFD=${1:-}
    MESHPERF=${2:-}
    shift 2 || true
    [[ -n "$MESHPERFD" && -n "$MESHPERF" ]] || { echo "usage: $0 MESHPERFD MESHPERF" >&2; exit 2; }
    [[ -x "$MESHPERFD" ]] || fail "meshperfd not executable: $MESHPERFD"
    [[ -x "$MESHPERF" ]] || fail "meshperf not executable: $MESHPERF"
    netns_begin_tools "$@"
}

netns_begin_tools() {
    [[ $(id -u) -eq 0 ]] || skip "needs root (network namespaces, veth, tc); run as root"
    local tool
    for tool in ip timeout "$@"; do
        command -v "$tool" >/dev/null || skip "$tool not installed"
    done
    trap netns_cleanup EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM
    trap 'exit 129' HUP
    # Namespaces left by an earlier run that was SIGKILLed (a ctest timeout) are removed
    # when the script that made them is gone.
    local ns owner
    for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep -E "^${NETNS_PREFIX}[0-9]+[a-z]"); do
        owner=${ns#"$NETNS_PREFIX"}; owner=${owner%%[!0-9]*}
        kill -0 "$owner" 2>/dev/null || { say "removing stale namespace $ns"; ip netns pids "$ns" 2>/dev/null | xargs -r kill -KILL; ip netns del "$ns"; }
    done
    WORK=$(mktemp -d "/tmp/meshperf-${NETNS_TAG}.XXXXXX") || fail "mktemp"
    TOKEN="$WORK/token"
    (umask 077 && head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$TOKEN" && echo >>"$TOKEN") || fail "token file"
    chmod 600 "$TOKEN"
    for tool in "$@"; do [[ $tool == tc ]] && netns_probe_tbf; done
    return 0
}

# The one place a missing capability may skip: a scratch namespace with a veth pair and a
# tbf qdisc, exactly what the tests build. Removed again at once.
netns_probe_tbf() {
    local ns="${NETNS_PREFIX}$$p"
    ip netns add "$ns" 2>"$WORK/err" || skip "cannot create a network namespace ($(cat "$WORK/err")); needs CAP_SYS_ADMIN"
    NETNS_NAMESPACES+=("$ns")
    ip -n "$ns" link add mpprobe0 type veth peer name mpprobe1 2>"$WORK/err" \
        || skip "cannot create a veth pair ($(cat "$WORK/err"))"
    ip netns exec "$ns" tc qdisc add dev mpprobe0 root tbf rate 100mbit burst "$BUCKET_BYTES" latency 50ms 2>"$WORK/err" \
        || skip "tbf qdisc not available ($(cat "$WORK/err"))"
    ip netns del "$ns" 2>/dev/null
    unset 'NETNS_NAMESPACES[-1]'
}

netns_add() {
    # namespaces were probed up front (netns_probe_tbf): one that cannot be made now is a failure
    ip netns add "$1" 2>"$WORK/err" || fail "cannot create network namespace $1 ($(cat "$WORK/err"))"
    NETNS_NAMESPACES+=("$1")
    ip -n "$1" link set lo up || fail "lo up in $1"
}

netns_track_pid() { NETNS_PIDS+=("$1"); }

netns_pair() {  # MTU
    NS_A="${NETNS_PREFIX}$$a" NS_B="${NETNS_PREFIX}$$b"
    IF_A="${NETNS_PREFIX}$$a" IF_B="${NETNS_PREFIX}$$b"
    ADDR_A=192.0.2.1 ADDR_B=192.0.2.2
    netns_add "$NS_A"
    netns_add "$NS_B"
    ip link add "$IF_A" type veth peer name "$IF_B" 2>"$WORK/err" || fail "cannot create a veth pair ($(cat "$WORK/err"))"
    NETNS_LINKS+=("$IF_A")
    ip link set "$IF_A" netns "$NS_A" && ip link set "$IF_B" netns "$NS_B" || fail "moving the veth ends"
    ip -n "$NS_A" addr add "$ADDR_A/24" dev "$IF_A" && ip -n "$NS_A" link set "$IF_A" mtu "$1" up || fail "$IF_A"
    ip -n "$NS_B" addr add "$ADDR_B/24" dev "$IF_B" && ip -n "$NS_B" link set "$IF_B" mtu "$1" up || fail "$IF_B"
}

netns_tbf() {  # NS DEV RATE_MBIT
    # Offloads stay as veth has them: tbf sees GSO packets bigger than its bucket and segments them.
    ip netns exec "$1" tc qdisc add dev "$2" root tbf rate "${3}mbit" burst "$BUCKET_BYTES" latency 50ms 2>"$WORK/err" \
        || fail "tc qdisc add tbf ${3}mbit on $2 in $1 failed ($(cat "$WORK/err")); tbf was probed up front"
}

netns_start_daemon() {  # NS ADDR NAME [ARG...]
    local ns=$1 addr=$2 name=$3
    shift 3
    mkdir -p "$WORK/state-$name"
    ip netns exec "$ns" "$MESHPERFD" --listen "$addr:$PORT" --state-dir "$WORK/state-$name" --token-file "$TOKEN" "$@" \
        >>"$WORK/meshperfd-$name.log" 2>&1 &
    NETNS_PID=$!   # `ip netns exec` execs the command, so $! is meshperfd itself
    netns_track_pid "$NETNS_PID"
}

netns_healthy() {  # NS ADDR
    ip netns exec "$1" timeout 5 "$MESHPERF" --token-file "$TOKEN" info "$2:$PORT" >/dev/null 2>&1
}

netns_wait_ready() {  # NS ADDR PID NAME
    for _ in $(seq 100); do
        kill -0 "$3" 2>/dev/null || { cat "$WORK/meshperfd-$4.log"; fail "meshperfd in $1 exited"; }
        netns_healthy "$1" "$2" && return 0
        sleep 0.1
    done
    cat "$WORK/meshperfd-$4.log"
    fail "meshperfd in $1 not answering on $2:$PORT after 10 s"
}

# A ready daemon on each end of the veth pair (after netns_pair); sets PID_A and PID_B.
netns_pair_daemons() {
    netns_start_daemon "$NS_A" "$ADDR_A" a; PID_A=$NETNS_PID
    netns_start_daemon "$NS_B" "$ADDR_B" b; PID_B=$NETNS_PID
    netns_wait_ready "$NS_A" "$ADDR_A" "$PID_A" a
    netns_wait_ready "$NS_B" "$ADDR_B" "$PID_B" b
}

# The veth pair with MTU, each direction shaped by tbf (A->B at FWD, B->A at REV Mbit/s),
# and a ready daemon on each end; sets PID_A and PID_B.
netns_shaped_daemons() {  # MTU FWD_RATE_MBIT REV_RATE_MBIT
    netns_pair "$1"
    netns_tbf "$NS_A" "$IF_A" "$2"
    netns_tbf "$NS_B" "$IF_B" "$3"
    netns_pair_daemons
}

# A cluster: N hosts (namespaces PREFIX<pid>h1..hN) hang on one Linux bridge br0 that lives
# in a namespace of its own (NS_BR, address SUBNET.254, where a CLI or mpirun runs); host I
# is joined to it by a veth pair, eth0 on its side with address SUBNET.I/24 (SUBNET is
# NETNS_SUBNET, default 10.231.0). Every link is shaped with tbf in both directions: the
# host's egress (eth0) and the bridge port's egress towards the host, at RATE_MBIT.
# netns_host I and netns_host_addr I name host I's namespace and address.
NETNS_SUBNET=${NETNS_SUBNET:-10.231.0}
NS_BR=""
netns_host() { echo "${NETNS_PREFIX}$$h$1"; }
netns_host_addr() { echo "$NETNS_SUBNET.$1"; }
netns_host_port() { echo "${NETNS_PREFIX}$$h${1}b"; }   # the bridge's end of host I's link

netns_bridge_hosts() {  # N MTU RATE_MBIT
    local n=$1 mtu=$2 rate=$3 i h a b
    NS_BR="${NETNS_PREFIX}$$br"
    netns_add "$NS_BR"
    ip -n "$NS_BR" link add br0 type bridge 2>"$WORK/err" || skip "cannot create a bridge ($(cat "$WORK/err"))"
    ip -n "$NS_BR" link set br0 mtu "$mtu" || fail "bridge mtu"
    ip -n "$NS_BR" addr add "$NETNS_SUBNET.254/24" dev br0 || fail "bridge address"
    for i in $(seq "$n"); do
        h=$(netns_host "$i") a="${NETNS_PREFIX}$$h${i}a" b=$(netns_host_port "$i")
        netns_add "$h"
        ip link add "$a" type veth peer name "$b" 2>"$WORK/err" || fail "cannot create a veth pair ($(cat "$WORK/err"))"
        NETNS_LINKS+=("$a")
        ip link set "$a" netns "$h" && ip link set "$b" netns "$NS_BR" || fail "moving veth ends of host $i"
        ip -n "$h" link set "$a" name eth0 || fail "rename in $h"
        ip -n "$h" link set eth0 mtu "$mtu" up && ip -n "$h" addr add "$(netns_host_addr "$i")/24" dev eth0 \
            || fail "eth0 of host $i"
        ip -n "$NS_BR" link set "$b" mtu "$mtu" master br0 up || fail "bridge port of host $i"
        netns_tbf "$h" eth0 "$rate"          # host -> bridge
        netns_tbf "$NS_BR" "$b" "$rate"      # bridge -> host
    done
    ip -n "$NS_BR" link set br0 up || fail "bridge up"
}

# The kernel's neighbour (ARP) table is one for all namespaces: its gc_thresh3 (1024 by
# default) bounds the entries of every namespace together, and past it the kernel logs
# "neighbor table overflow!" and drops new resolutions, which a connection sees as "No route
# to host" or a timeout. Measured: a 200-host triage lost 85-90 hosts to it (2026-12-06).
# netns_neigh_room ENTRIES raises gc_thresh2 and gc_thresh3 (IPv4 and IPv6) to at least
# ENTRIES for the run; the cleanup puts them back.
netns_neigh_room() {  # ENTRIES
    local family key
    for family in ipv4 ipv6; do
        for key in gc_thresh2 gc_thresh3; do netns_sysctl_at_least "net.$family.neigh.default.$key" "$1"; done
    done
}

# netns_sysctl_at_least KEY VALUE: a host-wide setting raised to VALUE for the run (left as
# it is when already higher, or absent); the cleanup puts it back.
netns_sysctl_at_least() {  # KEY VALUE
    local old
    old=$(sysctl -n "$1" 2>/dev/null) || return 0
    (( old >= $2 )) && return 0
    NETNS_SYSCTLS+=("$1=$old")
    sysctl -qw "$1=$2" || fail "cannot set $1 to $2"
}

netns_host_rate() {  # I RATE_MBIT
    local q="tbf rate ${2}mbit burst $BUCKET_BYTES latency 50ms"
    # shellcheck disable=SC2086
    ip netns exec "$(netns_host "$1")" tc qdisc replace dev eth0 root $q && \
        ip netns exec "$NS_BR" tc qdisc replace dev "$(netns_host_port "$1")" root $q || fail "tbf of host $1 to $2 Mbit/s"
}

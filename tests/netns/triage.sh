#!/usr/bin/env bash
# Fleet triage on a leaf-spine cluster of network namespaces: `meshperf matrix --mode triage
# --topology` names a slow host, a slow directed link and a slow leaf uplink, each as what it
# is and nothing else, in the rounds it states; a full matrix of a subset agrees; a host
# killed mid-triage is reported unreachable while the rest goes on.
#
#   triage.sh MESHPERFD MESHPERF
#
# LEAVES leaves (default 8) of LEAF_HOSTS hosts (default 8): 64 host namespaces, one
# meshperfd each. Each leaf is a Linux bridge in a namespace of its own; each host hangs on
# its leaf by a veth pair shaped with tbf at HOST_MBIT (default 50) both ways. Each leaf's
# bridge is joined to the spine bridge (a namespace of its own, where the CLI runs, address
# .254) by a veth pair, the leaf's uplink, shaped with tbf both ways at UPLINK_MBIT (default
# LEAF_HOSTS x HOST_MBIT x 1.5: every host of the leaf can send across at its own rate).
# Faults (0-based host index = leaf x LEAF_HOSTS + position):
#   - slow host: host SLOW_HOST's link at a quarter of HOST_MBIT, both ways;
#   - slow directed link: LINK_FROM -> LINK_TO only (an htb filter on LINK_FROM's egress
#     sends that destination through a tbf at a quarter); both in one leaf, at positions
#     p and p+1, a link of the first in-group shift round (triage measures n links a round,
#     not every pair: a slow link it does not measure is for a full matrix to find);
#   - slow uplink: leaf SLOW_LEAF's uplink at half of HOST_MBIT, both ways.
# The per-link test is one short bandwidth point (--test bandwidth --sizes 64K, --max-time
# MAX_TIME): tbf shapes bandwidth; veth latency on a shared 2-core machine is CPU
# scheduling (see cluster.sh).
#
# Checks:
#  1. triage with --topology: exit 1; 4 shift rounds (2 in-group, 2 cross-group) and at most
#     MAX_LOCAL localisation rounds, both stated in the summary; the slow uplinks are exactly
#     [SLOW_LEAF's]; the suspects exactly [SLOW_HOST]; the only bad link that no host or
#     uplink explains is LINK_FROM -> LINK_TO; every other bad link touches the slow host or
#     crosses the slow leaf's uplink; nothing unreachable;
#  2. full matrix (--no-retest) of a 12-host subset across five leaves, with the subset's
#     topology: the same three named;
#  3. triage while host VICTIM's daemon is killed (SIGKILL) KILL_AFTER_S into it: VICTIM is
#     unreachable, the slow host, link and uplink are still named, every other daemon alive.
# Also printed: the daemons' total RSS, the wall time of each run.
#
# Needs root, `ip netns`, tc with tbf and htb, python3; exits 77 (skip) otherwise. Namespaces
# and daemons are removed on every exit path. About 90 s on 2 cores.
set -u

LEAVES=${LEAVES:-8}
LEAF_HOSTS=${LEAF_HOSTS:-8}
HOST_MBIT=${HOST_MBIT:-50}
UPLINK_MBIT=${UPLINK_MBIT:-$((LEAF_HOSTS * HOST_MBIT * 3 / 2))}
MAX_TIME=${MAX_TIME:-0.3}
MTU=${MTU:-9000}
MAX_LOCAL=${MAX_LOCAL:-6}
KILL_AFTER_S=${KILL_AFTER_S:-2}
HOSTS=$((LEAVES * LEAF_HOSTS))
SLOW_HOST=$((2 * LEAF_HOSTS + 3))
LINK_FROM=$((4 * LEAF_HOSTS + 1))
LINK_TO=$((4 * LEAF_HOSTS + 2))
SLOW_LEAF=6
VICTIM=$((0 * LEAF_HOSTS + 5))
SUBNET=10.232   # host I: 10.232.(1 + leaf).(1 + position)/16; the spine .0.254

NETNS_TAG=netns-triage
NETNS_PREFIX=mptr
. "$(dirname "$0")/lib.sh"
netns_begin "${1:-}" "${2:-}" tc python3
(( LEAVES >= 4 && SLOW_LEAF < LEAVES && LEAF_HOSTS >= 4 )) || fail "needs at least 4 leaves of 4 hosts"

declare -a PIDS
host_ns() { echo "${NETNS_PREFIX}$$h$1"; }
host_addr() { echo "$SUBNET.$((1 + $1 / LEAF_HOSTS)).$((1 + $1 % LEAF_HOSTS))"; }
leaf_ns() { echo "${NETNS_PREFIX}$$l$1"; }
NS_SPINE="${NETNS_PREFIX}$$s"

netns_on_failure() {
    for f in "$WORK"/meshperfd-*.log; do
        grep -iE 'error|fatal|abort' "$f" | tail -3 | sed "s|^|netns-triage: $(basename "$f"): |"
    done
}

bridge_in() {  # NS: a bridge br0 in NS, up
    ip -n "$1" link add br0 type bridge 2>"$WORK/err" || skip "cannot create a bridge ($(cat "$WORK/err"))"
    ip -n "$1" link set br0 mtu "$MTU" up || fail "bridge in $1"
}

# Spine, leaves, uplinks.
netns_add "$NS_SPINE"
bridge_in "$NS_SPINE"
ip -n "$NS_SPINE" addr add "$SUBNET.0.254/16" dev br0 || fail "spine address"
for l in $(seq 0 $((LEAVES - 1))); do
    ns=$(leaf_ns "$l") up="${NETNS_PREFIX}$$u${l}a" down="${NETNS_PREFIX}$$u${l}b"
    netns_add "$ns"
    bridge_in "$ns"
    ip link add "$up" type veth peer name "$down" 2>"$WORK/err" || skip "cannot create a veth pair ($(cat "$WORK/err"))"
    NETNS_LINKS+=("$up")
    ip link set "$up" netns "$ns" && ip link set "$down" netns "$NS_SPINE" || fail "uplink of leaf $l"
    ip -n "$ns" link set "$up" mtu "$MTU" master br0 up && ip -n "$NS_SPINE" link set "$down" mtu "$MTU" master br0 up \
        || fail "uplink ports of leaf $l"
    rate=$UPLINK_MBIT
    [[ $l -eq $SLOW_LEAF ]] && rate=$((HOST_MBIT / 2))
    netns_tbf "$ns" "$up" "$rate"            # leaf -> spine
    netns_tbf "$NS_SPINE" "$down" "$rate"    # spine -> leaf
done

# Hosts.
for i in $(seq 0 $((HOSTS - 1))); do
    h=$(host_ns "$i") l=$((i / LEAF_HOSTS)) a="${NETNS_PREFIX}$$h${i}a" b="${NETNS_PREFIX}$$h${i}b"
    netns_add "$h"
    ip link add "$a" type veth peer name "$b" 2>"$WORK/err" || skip "cannot create a veth pair ($(cat "$WORK/err"))"
    NETNS_LINKS+=("$a")
    ip link set "$a" netns "$h" && ip link set "$b" netns "$(leaf_ns "$l")" || fail "veth ends of host $i"
    ip -n "$h" link set "$a" name eth0 && ip -n "$h" link set eth0 mtu "$MTU" up \
        && ip -n "$h" addr add "$(host_addr "$i")/16" dev eth0 || fail "eth0 of host $i"
    ip -n "$(leaf_ns "$l")" link set "$b" mtu "$MTU" master br0 up || fail "leaf port of host $i"
    rate=$HOST_MBIT
    [[ $i -eq $SLOW_HOST ]] && rate=$((HOST_MBIT / 4))
    netns_tbf "$(leaf_ns "$l")" "$b" "$rate"   # leaf -> host
    [[ $i -eq $LINK_FROM ]] && continue        # shaped below
    netns_tbf "$h" eth0 "$rate"                # host -> leaf
done
# The slow directed link: LINK_FROM's egress classified by destination, each class a tbf.
q="tbf burst $BUCKET_BYTES latency 50ms"
ns=$(host_ns "$LINK_FROM")
{ ip netns exec "$ns" tc qdisc add dev eth0 root handle 1: htb default 10 &&
  ip netns exec "$ns" tc class add dev eth0 parent 1: classid 1:10 htb rate 10gbit quantum 60000 &&
  ip netns exec "$ns" tc class add dev eth0 parent 1: classid 1:20 htb rate 10gbit quantum 60000 &&
  ip netns exec "$ns" tc qdisc add dev eth0 parent 1:10 $q rate "${HOST_MBIT}mbit" &&
  ip netns exec "$ns" tc qdisc add dev eth0 parent 1:20 $q rate "$((HOST_MBIT / 4))mbit" &&
  ip netns exec "$ns" tc filter add dev eth0 parent 1: protocol ip prio 1 u32 match ip dst "$(host_addr "$LINK_TO")/32" flowid 1:20
} 2>"$WORK/err" || skip "htb with tbf classes not available ($(cat "$WORK/err"))"

cat >"$WORK/meshperfd.toml" <<EOF
[limits]
allowed_peer_cidrs = ["$SUBNET.0.0/16"]
EOF
HOSTFILE="$WORK/hosts.txt" TOPO="$WORK/topology.txt"
: >"$HOSTFILE"; echo "# host  leaf (the CLI groups by the first label) and spine" >"$TOPO"
for i in $(seq 0 $((HOSTS - 1))); do
    echo "$(host_addr "$i"):$PORT" >>"$HOSTFILE"
    echo "$(host_addr "$i"):$PORT leaf=l$((i / LEAF_HOSTS)) spine=s0" >>"$TOPO"
done
start_daemon() {  # I
    netns_start_daemon "$(host_ns "$1")" "$(host_addr "$1")" "$1" --config "$WORK/meshperfd.toml" --log-level warn
    PIDS[$1]=$NETNS_PID
}
started=$(date +%s.%N)
for i in $(seq 0 $((HOSTS - 1))); do start_daemon "$i"; done
for i in $(seq 0 $((HOSTS - 1))); do netns_wait_ready "$(host_ns "$i")" "$(host_addr "$i")" "${PIDS[$i]}" "$i"; done
rss_kib=0
for i in $(seq 0 $((HOSTS - 1))); do
    rss_kib=$((rss_kib + $(awk '/^VmRSS/ {print $2}' "/proc/${PIDS[$i]}/status" 2>/dev/null || echo 0)))
done
say "$HOSTS hosts in $LEAVES leaves up in $(python3 -c "import sys,time; print(f'{time.time() - float(sys.argv[1]):.1f}')" "$started") s" \
    "(daemons' RSS $((rss_kib / 1024)) MiB in all): links ${HOST_MBIT} Mbit/s, uplinks ${UPLINK_MBIT} Mbit/s;" \
    "slow host $(host_addr "$SLOW_HOST"), slow link $(host_addr "$LINK_FROM") -> $(host_addr "$LINK_TO"), slow uplink of leaf l$SLOW_LEAF"

cli() { ip netns exec "$NS_SPINE" timeout 200 "$MESHPERF" --token-file "$TOKEN" "$@"; }
ARGS=(matrix --test bandwidth --sizes 64K --max-time "$MAX_TIME" -q --format json)

# judge.py FILE MODE SLOW_HOST LINK_FROM LINK_TO SLOW_LEAF UNREACHABLE MAX_LOCAL
cat >"$WORK/judge.py" <<'EOF'
import json, sys
path, mode, slow, lfrom, lto, leaf, dead, max_local = sys.argv[1:9]
doc = json.load(open(path))
problems = []
tag = f"netns-triage: {mode}:"
print(f"{tag} mode {doc['mode']}, rounds {doc['rounds']} + {doc['retest_rounds']} localisation/retest, "
      f"{len(doc['links'])} links, {doc['wall_s']:.1f} s, median {doc['median']['gbit_per_s']}")
if mode.startswith("triage"):
    if doc["mode"] != "triage": problems.append(f"mode {doc['mode']}")
    kinds = [r["kind"] for r in doc["triage"]["shift_rounds"]]
    if kinds != ["in-group", "in-group", "cross-group", "cross-group"]: problems.append(f"shift rounds {kinds}")
    if doc["rounds"] != 4: problems.append(f"rounds {doc['rounds']}, expected 4")
    if doc["retest_rounds"] > int(max_local): problems.append(f"{doc['retest_rounds']} localisation rounds, more than {max_local}")
for l in doc["links"]:
    if not l["bad"]:
        continue
    if not l["reachable"]:
        if dead not in (l["from"], l["to"]): problems.append(f"{l['from']} -> {l['to']} unreachable: {l['error']}")
        continue
    cause = l.get("cause", "")
    print(f"{tag} BAD {l['from']} -> {l['to']}: {l['gbit_per_s']:.4f} Gbit/s [{cause} {l.get('cause_host', l.get('cause_group', ''))}]")
    if cause == "host" and l.get("cause_host") != slow: problems.append(f"{l['from']} -> {l['to']} blamed on host {l.get('cause_host')}")
    if cause == "uplink" and l.get("cause_group") != leaf: problems.append(f"{l['from']} -> {l['to']} blamed on uplink {l.get('cause_group')}")
    if cause == "" and (l["from"], l["to"]) != (lfrom, lto): problems.append(f"{l['from']} -> {l['to']} bad on its own: {l['reason']}")
own = [(l["from"], l["to"]) for l in doc["links"] if l["bad"] and l["reachable"] and l.get("cause", "") == ""]
if own != [(lfrom, lto)]: problems.append(f"links bad on their own {own}, expected [{lfrom} -> {lto}]")
if doc["slow_uplinks"] != [leaf]: problems.append(f"slow uplinks {doc['slow_uplinks']}, expected [{leaf}]")
if doc["suspects"] != [slow]: problems.append(f"suspects {doc['suspects']}, expected [{slow}]")
want_dead = [dead] if dead else []
if doc["unreachable"] != want_dead: problems.append(f"unreachable {doc['unreachable']}, expected {want_dead}")
print(f"{tag} slow uplinks {doc['slow_uplinks']}, suspects {doc['suspects']}, unreachable {doc['unreachable']}")
for p in problems:
    print(f"{tag} FAIL: {p}")
sys.exit(1 if problems else 0)
EOF

run() {  # NAME ARG...: the CLI with its summary shown; sets RC and SECS
    local name=$1; shift
    local t0; t0=$(date +%s.%N)
    cli "${ARGS[@]}" "$@" -o "$WORK/$name.json" >"$WORK/$name.summary" 2>"$WORK/$name.err"
    RC=$?
    SECS=$(python3 -c "import sys,time; print(f'{time.time() - float(sys.argv[1]):.1f}')" "$t0")
    grep -vE '^  .* -> ' "$WORK/$name.summary" | sed "s/^/netns-triage: $name summary: /"
    [[ -s "$WORK/$name.err" ]] && sed "s/^/netns-triage: $name stderr: /" "$WORK/$name.err"
    say "$name: exit $RC in $SECS s"
}
a() { echo "$(host_addr "$1"):$PORT"; }
FAULTS=("$(a "$SLOW_HOST")" "$(a "$LINK_FROM")" "$(a "$LINK_TO")" "l$SLOW_LEAF")

# 1. Triage of the whole cluster.
run triage --hosts "$HOSTFILE" --mode triage --topology "$TOPO"
[[ $RC -eq 1 ]] || fail "triage exited $RC, expected 1 (bad links found)"
grep -qE "measured in 4 shift rounds \([0-9]+ waves\) \+ [0-9]+ localisation rounds" "$WORK/triage.summary" \
    || fail "the summary does not state the rounds"
python3 "$WORK/judge.py" "$WORK/triage.json" triage "${FAULTS[@]}" "" "$MAX_LOCAL" || fail "triage verdict"

# 2. A full matrix of a subset of 12: three hosts of leaf 0, one of leaf 1, the slow host and
#    two others of its leaf, the slow link's two ends and one more of their leaf, two hosts
#    behind the slow uplink. Most of its links stay healthy (59 of 132 are slow), so the
#    median is a healthy figure, as the rules need.
B=$((SLOW_LEAF * LEAF_HOSTS))
SUB=(0 1 2 "$LEAF_HOSTS" $((SLOW_HOST - 1)) "$SLOW_HOST" $((SLOW_HOST + 1)) "$LINK_FROM" "$LINK_TO" $((LINK_TO + 1)) "$B" $((B + 1)))
: >"$WORK/sub_hosts.txt"; : >"$WORK/sub_topology.txt"
for i in "${SUB[@]}"; do
    a "$i" >>"$WORK/sub_hosts.txt"
    echo "$(a "$i") leaf=l$((i / LEAF_HOSTS))" >>"$WORK/sub_topology.txt"
done
run full --hosts "$WORK/sub_hosts.txt" --mode full --topology "$WORK/sub_topology.txt" --no-retest
[[ $RC -eq 1 ]] || fail "full matrix exited $RC, expected 1"
python3 "$WORK/judge.py" "$WORK/full.json" full "${FAULTS[@]}" "" 0 || fail "full matrix of the subset"

# 3. Triage while a host is killed.
cli "${ARGS[@]}" --hosts "$HOSTFILE" --mode triage --topology "$TOPO" -o "$WORK/killed.json" >"$WORK/killed.summary" 2>"$WORK/killed.err" &
mpid=$!
sleep "$KILL_AFTER_S"
say "killing meshperfd of host $(a "$VICTIM") during the triage"
kill -KILL "${PIDS[$VICTIM]}"; wait "${PIDS[$VICTIM]}" 2>/dev/null
wait "$mpid"; rc=$?
grep -vE '^  .* -> ' "$WORK/killed.summary" | sed "s/^/netns-triage: killed summary: /"
[[ $rc -eq 1 ]] || { cat "$WORK/killed.err"; fail "triage with a killed host exited $rc, expected 1"; }
python3 "$WORK/judge.py" "$WORK/killed.json" triage-killed "${FAULTS[@]}" "$(a "$VICTIM")" "$MAX_LOCAL" || fail "triage with a killed host"
for i in $(seq 0 $((HOSTS - 1))); do
    [[ $i -eq $VICTIM ]] && continue
    kill -0 "${PIDS[$i]}" 2>/dev/null || fail "meshperfd of host $i died during the test"
done
say "PASS"

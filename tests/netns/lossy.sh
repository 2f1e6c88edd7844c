#!/usr/bin/env bash
# A lossy link (issue 47's reproduction): tbf `rate 100mbit burst 16kb limit 3000` on the
# path towards the receiver, a queue so shallow that TCP loses packets all the time and
# retransmits (iperf3 counts 70+ retransmits in 5 s there). Checked:
#   1. every point ends within the bound its start line announces (warm-up + --duration +
#      3 s: up to 2 s for a flow's first bytes, 1 s to close): a bandwidth sweep at --duration 2 with two sizes takes no more than its
#      "in all" bound plus 2 s of session set-up, though the path drains its queue slowly;
#   2. the points' TCP counters cover the whole time their bytes moved: retransmits > 0 in
#      every point (the counters were read before the drain, and missed it all, before);
#   3. `check --min-gbit 0.00001 --timeout 9` (the shipped Slurm prolog's budget) answers
#      within its budget, and not OK: the retransmits are named;
#   4. both daemons stay up and answer /healthz.
#   lossy.sh MESHPERFD MESHPERF     Needs root, ip netns, tc tbf; 77 otherwise. About 20 s.
set -u
NETNS_TAG=netns-lossy
NETNS_PREFIX=mpls
. "$(dirname "$0")/lib.sh"
netns_begin "${1:-}" "${2:-}" tc python3
# Two hosts on a bridge (lib.sh), fast links, then the bridge's port towards host 2 given
# the shallow queue: the drops happen on the path, as on a switch, so the sender's TCP
# retransmits (a tbf on the sender's own egress would drop locally, which TCP re-sends
# without counting a retransmit: no wire loss, nothing for the counters to show).
netns_bridge_hosts 2 1500 1000
ip netns exec "$NS_BR" tc qdisc replace dev "$(netns_host_port 2)" root tbf rate 100mbit burst 16kb limit 3000 2>"$WORK/err" \
    || fail "tbf with a shallow queue on the bridge port: $(cat "$WORK/err")"
NS_A=$(netns_host 1) NS_B=$(netns_host 2) ADDR_A=$(netns_host_addr 1) ADDR_B=$(netns_host_addr 2)
netns_pair_daemons
netns_on_failure() { for f in "$WORK"/meshperfd-*.log; do say "--- $(basename "$f")"; tail -n 20 "$f"; done; }
cli() { ip netns exec "$NS_A" "$MESHPERF" --token-file "$TOKEN" "$@"; }

# 1 and 2: the sweep, timed, with its start line.
t0=$(date +%s.%N)
cli sweep --initiator "$ADDR_A:$PORT" "$ADDR_B:$PORT" --test bandwidth --sizes 64K,1M --duration 2 --warmup 0.1 --progress \
    --format json -o "$WORK/sweep.json" 2>"$WORK/sweep.err" || fail "sweep: $(cat "$WORK/sweep.err")"
t1=$(date +%s.%N)
start_line=$(grep -m1 '^measuring' "$WORK/sweep.err")
say "sweep: $(python3 -c "print(f'{$t1 - $t0:.2f}')") s; $start_line"
python3 - "$WORK/sweep.json" "$t0" "$t1" "$start_line" <<'PY' || fail "sweep bounds or counters"
import json, re, sys
run = json.load(open(sys.argv[1])); took = float(sys.argv[3]) - float(sys.argv[2]); line = sys.argv[4]
ok = True
each = re.search(r"up to about ([0-9.]+) s each", line)
total = re.search(r"at most ([0-9.]+) s in all", line)
if not each or not total:
    print(f"lossy: the start line states no bound: {line!r}"); sys.exit(1)
each, total = float(each.group(1)), float(total.group(1))
print(f"lossy: announced {each} s a point, {total} s in all; the sweep took {took:.2f} s")
if abs(each - (0.1 + 2 + 3.0)) > 0.01:
    print("lossy: a point's bound is warm-up + duration + 3 s (2 s for a flow's first bytes, 1 s to close)"); ok = False
if took > total + 2.0:  # session set-up and the result's storage besides the points
    print(f"lossy: the sweep ran past its bound ({took:.2f} s > {total} + 2 s)"); ok = False
for p in run["points"]:
    c = (p.get("counters") or {}).get("tcp") or {}
    retr, segs = c.get("retransmits"), c.get("segments_sent")
    print(f"lossy: {p['size_bytes']} B: {p['gbit_per_s']*1000:.3f} Mbit/s in {p['duration_s']:.2f} s, "
          f"retransmits {retr} of {segs} segments")
    if not (isinstance(retr, int) and retr > 0):
        print("lossy: a point on a lossy link with no retransmits counted"); ok = False
    if not (isinstance(segs, int) and segs > 0):
        print("lossy: no segments counted"); ok = False
    if not p["gbit_per_s"] > 0 or p["gbit_per_s"] > 0.1:
        print("lossy: a figure outside (0, the link's 100 Mbit/s]"); ok = False
sys.exit(0 if ok else 1)
PY

# 3: a health check within the prolog's budget, not OK on this link.
t0=$(date +%s.%N)
cli check "$ADDR_B:$PORT" --initiator "$ADDR_A:$PORT" --min-gbit 0.00001 --timeout 9 >"$WORK/check.txt" 2>"$WORK/check.err"
rc=$?
took=$(python3 -c "import sys; print(f'{$(date +%s.%N) - $t0:.2f}')")
say "check: exit $rc in $took s: $(head -1 "$WORK/check.txt")"
python3 -c "import sys; sys.exit(0 if $took <= 9.5 else 1)" || fail "check took $took s, past its 9 s budget"
grep -q "no verdict within" "$WORK/check.txt" && fail "check ran out of its budget: $(cat "$WORK/check.txt")"
[[ $rc -eq 1 || $rc -eq 2 ]] || fail "check should be WARNING or CRITICAL on a link that retransmits, got $rc: $(cat "$WORK/check.txt" "$WORK/check.err")"
grep -qi "retransmit" "$WORK/check.txt" || fail "check does not name the retransmits: $(cat "$WORK/check.txt")"

# 4: both daemons up.
for ns_addr in "$NS_A:$ADDR_A" "$NS_B:$ADDR_B"; do
    netns_healthy "${ns_addr%%:*}" "${ns_addr#*:}" || fail "the daemon at ${ns_addr#*:} does not answer after the lossy runs"
done
say "PASS"

#!/usr/bin/env bash
# TCP counters are recorded around each bandwidth point: a shallow queue that drops shows
# retransmits in the JSON and the table's retr column; a deep one shows none.
#
#   retransmits.sh MESHPERFD MESHPERF
#
# Two namespaces joined by a veth pair, tbf at RATE_MBIT (200) both ways, in two set-ups:
#   1. shallow: tbf `limit 3000` (bytes: one full-size 1514-byte packet, a second does not
#      fit) with a bucket of 3000 bytes.
#      The small bucket matters: tbf splits a GSO packet bigger than its bucket into MTU-sized
#      packets, each of which fits the queue; with a bucket above 64 KiB it would hand veth's
#      whole GSO packets to a queue they never fit, and TCP would stall instead of losing
#      some. TCP overflows a one-packet queue all the time: every point must report
#      retransmits > 0, and `meshperf show` must print them in its retr column.
#   2. deep: the same link with `limit 16mb` and the usual 256 KiB bucket. The sockets'
#      buffers (tcp_wmem's 4 MiB) cannot put that much in flight, so the queue never
#      overflows: every point must report 0 retransmits.
# Each set-up runs a forward sweep (bandwidth and bidir: the initiator's streams send, and
# both sides' in bidir) and a reverse one (the peer sends: its counters come back in its
# point_done), so the counters of both daemons are checked; every point must also carry
# both ends' NIC counters (counters.link: the veth each daemon used, the sender's tx_bytes
# at least the bytes the point moved). Then `meshperf check` with its default retransmit
# thresholds (WARNING above 1%, CRITICAL above 5%): exit 2 naming the retransmits on the
# shallow link, 0 on the deep one; a two-host `meshperf matrix` calls both links bad for
# their counters on the shallow link (exit 1: they are equally slow, so only the counters
# tell) and neither on the deep one. Last, on the deep link, the veth is set down and up
# during a point (`flap`): the point must show carrier_changes on both ends, placed in one
# to three of the window's 250 ms intervals, and a warning naming them and when; `check`
# must say WARNING naming carrier_changes.
# Prints what it measured. Needs root, `ip netns` and tc's tbf; exits 77 (skip) otherwise.
# About 60 s.
set -u

RATE_MBIT=${RATE_MBIT:-200}
SHALLOW="burst 3000 limit 3000"
DEEP="burst 256k limit 16mb"

NETNS_TAG=netns-retransmits
NETNS_PREFIX=mprt
. "$(dirname "$0")/lib.sh"
netns_begin "${1:-}" "${2:-}" tc python3
netns_pair 1500
netns_pair_daemons

netns_on_failure() {
    for f in "$WORK"/meshperfd-*.log; do say "--- $(basename "$f")"; tail -n 20 "$f"; done
}

shape() {  # QDISC_ARGS: the same tbf on both ends of the link
    local ns dev
    for ns_dev in "$NS_A:$IF_A" "$NS_B:$IF_B"; do
        ns=${ns_dev%%:*} dev=${ns_dev#*:}
        # shellcheck disable=SC2086
        ip netns exec "$ns" tc qdisc replace dev "$dev" root tbf rate "${RATE_MBIT}mbit" $1 2>"$WORK/err" \
            || fail "tc qdisc replace tbf on $dev in $ns failed ($(cat "$WORK/err")); tbf was probed up front"
    done
}

# On the one-packet queue the session's own control connection shares the queue with the
# saturating data streams (bidir fills both directions), and its TCP can lose a heartbeat and
# its retransmissions often enough to back off past the session's 10 s heartbeat deadline:
# the peer then ends the run, correctly ("sent nothing for 10 s, not even a heartbeat"; one
# clean-clone CI run in several, 2026-12-07). That is the link starving the control path,
# not a counter fault: the test fails, saying so, and label rig's second try of the whole
# test (scripts/run-tests, which reports it) is what absorbs it.
sweep() {  # NAME ARG...: a sweep from A to B, its result in $WORK/NAME.json
    local name=$1
    shift
    ip netns exec "$NS_A" timeout 60 "$MESHPERF" --token-file "$TOKEN" sweep --initiator "$ADDR_A:$PORT" "$ADDR_B:$PORT" \
        --max-time 1 --warmup 0.2 --format json -o "$WORK/$name.json" "$@" 2>"$WORK/$name.err"
    if [[ $? -ne 0 ]]; then
        grep -q "not even a heartbeat" "$WORK/$name.err" &&
            say "the $name sweep lost its control session to the dropping queue (heartbeat deadline): the link starved the control path"
        fail "the $name sweep failed: $(cat "$WORK/$name.err")"
    fi
    timeout 10 "$MESHPERF" show "$WORK/$name.json" >"$WORK/$name.txt" 2>&1 || fail "meshperf show $name: $(cat "$WORK/$name.txt")"
}

check() {  # SETUP (shallow|deep) NAME...
    local setup=$1
    shift
    python3 - "$setup" "$RATE_MBIT" "$WORK" "$@" <<'PY'
import json, re, sys
setup, rate_mbit, work, names = sys.argv[1], float(sys.argv[2]), sys.argv[3], sys.argv[4:]
bad = False
def say(msg): print(f"retransmits: {setup}: {msg}")
for name in names:
    run = json.load(open(f"{work}/{name}.json"))
    for p in run["points"]:
        where = f"{name} {p['test']} {p['size_bytes']} B"
        c = (p.get("counters") or {}).get("tcp")
        if c is None:
            say(f"FAIL: {where}: no counters.tcp in the point: {json.dumps(p)[:300]}")
            bad = True
            continue
        say(f"{where}: {p['gbit_per_s'] * 1000:.1f} Mbit/s, {c['retransmits']} of {c['segments_sent']} segments "
            f"retransmitted ({c['retransmit_share'] * 100:.2f}%), rtt {c['rtt_us']['min']}..{c['rtt_us']['max']} us, "
            f"cwnd {c['cwnd']['min']}..{c['cwnd']['max']} segments, rtt median {c['rtt_us'].get('median')} us over "
            f"{c.get('interval_readings')} readings inside the window, delivery rate "
            f"{(c.get('delivery_rate_bytes_per_s') or {}).get('min')}..{(c.get('delivery_rate_bytes_per_s') or {}).get('max')} B/s, "
            f"lost max {c.get('lost_max')}")
        if not c.get("interval_readings") or c["rtt_us"].get("median") is None:
            say(f"FAIL: {where}: no TCP readings inside the window (a 1 s point has about 40 ticks)")
            bad = True
        if c["segments_sent"] <= 0:
            say(f"FAIL: {where}: bytes moved but no segment counted")
            bad = True
        # The point's sum over the link's rate, with room for tbf's bucket: a check of the set-up.
        if p["gbit_per_s"] * 1000 > 1.1 * rate_mbit * (2 if p["test"] == "bidir" else 1):
            say(f"FAIL: {where}: faster than the tbf rate: the set-up is not what the test assumes")
            bad = True
        if setup == "shallow" and c["retransmits"] == 0:
            say(f"FAIL: {where}: no retransmits through a {setup} queue that drops")
            bad = True
        if setup == "deep" and c["retransmits"] != 0:
            say(f"FAIL: {where}: {c['retransmits']} retransmits through a queue deeper than TCP can fill")
            bad = True
    # The table: the last column of each bandwidth/bidir row is retr.
    text = open(f"{work}/{name}.txt").read()
    rows, in_table = [], False
    for line in text.splitlines():
        cols = re.split(r"\s{2,}", line.strip())
        if cols and cols[-1] == "retr":
            in_table = True
            continue
        if in_table and (not line.strip() or line.startswith("-")):
            in_table = bool(line.startswith("-"))
            continue
        if in_table:
            rows.append(cols[-1])
    say(f"{name} table retr column: {', '.join(rows) or '(none)'}")
    if not rows or not all(r.isdigit() for r in rows):
        say(f"FAIL: {name}: the table has no retr column with a count per point:\n{text}")
        bad = True
    elif setup == "shallow" and not all(int(r) > 0 for r in rows):
        say(f"FAIL: {name}: the table's retr column shows 0 through a queue that drops")
        bad = True
    elif setup == "deep" and any(int(r) != 0 for r in rows):
        say(f"FAIL: {name}: the table's retr column is not 0 through a deep queue")
        bad = True
sys.exit(1 if bad else 0)
PY
}

link_check() {  # NAME...: both ends' NIC counters on every point
    python3 - "$IF_A" "$IF_B" "$WORK" "$@" <<'PY'
import json, sys
if_a, if_b, work, names = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
bad = False
for name in names:
    for p in json.load(open(f"{work}/{name}.json"))["points"]:
        where = f"{name} {p['test']} {p['size_bytes']} B"
        link = (p.get("counters") or {}).get("link") or {}
        for side, dev, sends in (("initiator", if_a, "initiator->peer"), ("peer", if_b, "peer->initiator")):
            nic = (link.get(side) or {}).get("nic")
            if not nic or nic["interface"] != dev:
                print(f"retransmits: FAIL: {where}: {side} has no NIC counters of {dev}: {json.dumps(link)[:300]}")
                bad = True
                continue
            d = nic["counters"]["deltas"]
            moved = sum(f["bytes"] for f in p["flows"] if f["direction"] == sends)
            print(f"retransmits: {where}: {side} {dev}: tx_bytes {d.get('tx_bytes')} (the point moved {moved} B from it), "
                  f"tx_packets {d.get('tx_packets')}, rx_packets {d.get('rx_packets')}, carrier_changes {d.get('carrier_changes')}")
            if d.get("tx_bytes", 0) < moved:
                print(f"retransmits: FAIL: {where}: {side} {dev} sent fewer bytes than the point moved from it")
                bad = True
sys.exit(1 if bad else 0)
PY
}

# --bad-bw-fraction 0.7: with two links the bandwidth rule's reference is the faster one, read
# once (--no-retest) on a noisy rig; this test is about the counters, not the links' symmetry.
matrix_check() {  # NAME BAD(1|0): a two-host matrix over the link; with BAD=1 both links must be bad for their counters
    local rc=0
    ip netns exec "$NS_A" timeout 90 "$MESHPERF" --token-file "$TOKEN" matrix --hosts "$ADDR_A:$PORT,$ADDR_B:$PORT" \
        --test bandwidth --sizes 1M --max-time 1 --warmup 0.2 --no-retest --bad-bw-fraction 0.7 -q --format json -o "$WORK/$1-matrix.json" \
        >/dev/null 2>"$WORK/$1-matrix.err" || rc=$?
    python3 - "$WORK/$1-matrix.json" "$2" "$rc" <<'PY' || fail "matrix $1: see above"
import json, sys
doc, want_bad, rc = json.load(open(sys.argv[1])), sys.argv[2] == "1", int(sys.argv[3])
links = doc["links"]
for l in links:
    print(f"retransmits: matrix: {l['from']} -> {l['to']}: bad={l['bad']} counters_bad={l['counters_bad']}: {l['reason'][:160]}")
ok = len(links) == 2 and all(l["counters_bad"] == want_bad and l["bad"] == want_bad for l in links)
if want_bad:
    ok &= all("counters: TCP retransmits" in l["reason"] for l in links) and rc == 1
else:
    ok &= rc == 0
print(f"retransmits: matrix exit {rc}")
sys.exit(0 if ok else 1)
PY
}

health_check() {  # NAME EXPECTED_EXIT: meshperf check over the link, its verdict in $WORK/NAME.check
    local rc=0
    ip netns exec "$NS_A" timeout 60 "$MESHPERF" --token-file "$TOKEN" check "$ADDR_B:$PORT" --initiator "$ADDR_A:$PORT" \
        --test bandwidth --sizes 1M --max-time 1 --warmup 0.2 --min-gbit 0.0001 >"$WORK/$1.check" 2>&1 || rc=$?
    say "check $1: exit $rc: $(head -c 400 "$WORK/$1.check")"
    [[ $rc == "$2" ]] || fail "check $1: exit $rc, expected $2"
}

say "shallow queue: tbf $RATE_MBIT Mbit/s, $SHALLOW (bytes), both ways"
shape "$SHALLOW"
sweep shallow --test bandwidth,bidir --sizes 64K,1M
sweep shallow-reverse --test bandwidth --reverse --sizes 1M
sed 's/^/  table: /' "$WORK/shallow.txt"
check shallow shallow shallow-reverse || fail "see above"
link_check shallow shallow-reverse || fail "see above"
health_check shallow 2
grep -q "TCP retransmits" "$WORK/shallow.check" || fail "the shallow link's CRITICAL does not name the retransmits"
matrix_check shallow 1

say "deep queue: tbf $RATE_MBIT Mbit/s, $DEEP, both ways"
shape "$DEEP"
sweep deep --test bandwidth,bidir --sizes 64K,1M
sweep deep-reverse --test bandwidth --reverse --sizes 1M
sed 's/^/  table: /' "$WORK/deep.txt"
check deep deep deep-reverse || fail "see above"
link_check deep deep-reverse || fail "see above"
health_check deep 0
matrix_check deep 0

flap() {  # DELAY_S: the veth set down and up while a point runs
    sleep "$1"
    ip -n "$NS_B" link set "$IF_B" down
    sleep 0.3
    ip -n "$NS_B" link set "$IF_B" up
}
say "link flap: $IF_B down for 0.3 s, 1 s into a 3 s bandwidth point"
flap 1 &
FLAP_PID=$!
sweep flap --test bandwidth --sizes 1M --duration 3
wait "$FLAP_PID"
python3 - "$WORK/flap.json" <<'PY' || fail "see above"
import json, sys
p = json.load(open(sys.argv[1]))["points"][0]
link = p["counters"]["link"]
flaps = {side: link[side]["nic"]["counters"]["deltas"].get("carrier_changes") for side in ("initiator", "peer")}
print(f"retransmits: flap: {p['gbit_per_s'] * 1000:.1f} Mbit/s, carrier_changes {flaps}, warnings {p['warnings']}")
if not all(v and v >= 1 for v in flaps.values()):
    sys.exit("retransmits: FAIL: flap: a link set down and up shows no carrier_changes on both ends")
if not any("carrier_changes" in w for w in p["warnings"]):
    sys.exit("retransmits: FAIL: flap: no warning names carrier_changes")
# Read every 250 ms inside the 3 s window: the flap (down, 0.3 s, up) lands in one to three
# intervals of about 12, at a time inside the window; traffic is not followed per interval.
for side in ("initiator", "peer"):
    end = link[side]
    spread = end["nic"]["counters"].get("intervals", {})
    flap = spread.get("carrier_changes")
    print(f"retransmits: flap: {side} {end['nic']['interface']}: {end.get('intervals')} intervals in "
          f"{end['window_s']:.2f} s, carrier_changes {flap}, followed: {sorted(spread)}")
    if not (end.get("intervals") or 0) >= 8:
        sys.exit(f"retransmits: FAIL: flap: the {side}'s counters were not read in intervals inside the 3 s window")
    if not flap or not 1 <= flap["moved_in"] <= 3 or not 0 < flap["first_at_s"] <= end["window_s"]:
        sys.exit(f"retransmits: FAIL: flap: the {side}'s carrier_changes are not placed in one to three intervals of the window")
    if "tx_bytes" in spread or "rx_packets" in spread:
        sys.exit("retransmits: FAIL: flap: traffic counters followed per interval")
if not any("intervals, first by" in w for w in p["warnings"] if "carrier_changes" in w):
    sys.exit("retransmits: FAIL: flap: the carrier_changes warning does not say when in the window")
PY
flap 0.6 &  # the check's point: 0.2 s warm-up and 1 s, after its session opens
FLAP_PID=$!
health_check flap 1
wait "$FLAP_PID"
grep -q "carrier_changes" "$WORK/flap.check" || fail "the flap's WARNING does not name carrier_changes"
say "PASS"

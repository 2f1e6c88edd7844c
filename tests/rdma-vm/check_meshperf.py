"""Checks what meshperf printed in the rdma-vm guest (guest-tests.sh's tagged lines in the
serial log): every RDMA sweep figure positive, finite and verified, and each bandwidth point's
rxe hw_counters deltas present on both ends and consistent with the bytes it moved; a daemon
corrupting what it sends (MESHPERF_TEST_CORRUPT_RDMA=1) fails every op's and test's point
under --verify naming the corruption and the end that saw it, and passes unverified without
it; every collective point
(over RDMA: each rank's rxe0 counters present and consistent with what the rank moved)
verified with 0 wrong and its figures positive, finite and consistent (algbw = S / time,
busbw = algbw x the op's bus factor); the collectives' rdma/tcp busbw ratios printed; the
GPUDirect collectives (emulated GPU) state for every rank that the NIC registered the device
memory (peermem), and a corrupting rank's run counts wrong elements at every point;
inspect --loopback measures rxe0 writing to itself (OK, sane figure) and calls it CRITICAL
below a manifest floor; rails over RDMA (rxe0 and rxe1 at once) give per-rail figures that
add up, each rail's counters from its own device.

    python3 check_meshperf.py SERIAL_LOG      exit 0 when every check passed
"""
import json
import math
import sys

FACTOR = {"allreduce": lambda p: 2 * (p - 1) / p, "allgather": lambda p: (p - 1) / p,
          "reduce-scatter": lambda p: (p - 1) / p, "alltoall": lambda p: (p - 1) / p,
          "broadcast": lambda p: 1.0, "incast": lambda p: p - 1}
SHOWN = ("MESHPERF-ERROR", "MESHPERF-GPUDIRECT-CORRUPT-EXIT", "MESHPERF-COLLECTIVE-KILLED", "MESHPERF-COLLECTIVE-EXIT", "MESHPERF-COLLECTIVE-RESOURCES",
         "MESHPERF-COLLECTIVE-ERROR")


def positive(*values):
    return all(isinstance(v, (int, float)) and math.isfinite(v) and v > 0 for v in values)


def documents(lines, prefix, key, what):
    """(key value, document) of each completed "PREFIX-JSON KEY=value | document" line; False
    as the second item of the result when one did not complete."""
    ok, out = True, []
    for line in lines:
        if not line.startswith(prefix + "-JSON "):
            continue
        tag, _, body = line.partition(" | ")
        value = tag.split(key + "=")[1].strip()
        doc = json.loads(body)
        if doc["state"] != "completed":
            print(f"rdma-vm: {what} {value}: {doc['state']}: {doc.get('error')}")
            ok = False
            continue
        out.append((value, doc))
    return out, ok


def rxe_counters_consistent(op, p):
    """Both ends' RDMA port counters are on the point (counters.link.*.rdma), and rxe's
    hw_counters moved with the traffic: each end's rxe0 sent and received at least one
    packet per 4096 bytes (the largest RoCE MTU) of what the point moved. Both daemons use
    the guest's one rxe0, so each end's deltas hold both directions."""
    link = (p.get("counters") or {}).get("link") or {}
    moved = sum(f["bytes"] for f in p["flows"])
    good = True
    for side in ("initiator", "peer"):
        rdma = (link.get(side) or {}).get("rdma")
        hw = (rdma or {}).get("hw_counters", {}).get("deltas", {})
        sent, rcvd = hw.get("sent_pkts"), hw.get("rcvd_pkts")
        print(f"rdma-vm: meshperf rdma {op:5} {p['test']:9} {p['size_bytes']:>6} B {side} "
              f"{(rdma or {}).get('device')}: sent_pkts {sent}, rcvd_pkts {rcvd} for {moved} B moved")
        if rdma is None or sent is None or rcvd is None:
            print(f"rdma-vm: no rxe hw_counters on the {side}'s side of the point  <-- MISSING")
            good = False
        elif sent * 4096 < moved or rcvd * 4096 < moved:
            print(f"rdma-vm: rxe counted fewer packets than the point's bytes need  <-- INCONSISTENT")
            good = False
    return good


def checked(p):
    """The point's data was really compared with the pattern (`verified` no longer echoes
    --verify: it says which end checked how many bytes)."""
    return p["verified"] is True and p.get("verified_bytes", 0) >= p["size_bytes"] and p.get("verified_by") in ("initiator", "peer", "both")


def check_sweeps(lines):
    docs, ok = documents(lines, "MESHPERF", "op", "meshperf rdma")
    for op, doc in docs:
        for p in doc["points"]:
            figs = [p["lat_ns"]["p50"], p["lat_ns"]["min"], p["lat_ns"]["max"]] if p["test"] == "latency" else \
                   [p["gbit_per_s"], p["msg_per_s"]] + [f["gbit_per_s"] for f in p["flows"]]
            good = positive(*figs) and checked(p)
            desc = f"p50 {p['lat_ns']['p50'] / 1000:.1f} us" if p["test"] == "latency" else f"{p['gbit_per_s'] * 1000:.1f} Mbit/s"
            print(f"rdma-vm: meshperf rdma {op:5} {p['test']:9} {p['size_bytes']:>6} B {desc} verified={p['verified']} ({p.get('verified_bytes')} B by {p.get('verified_by')})"
                  + ("" if good else "  <-- INSANE"))
            ok &= good
            if p["test"] != "latency":
                ok &= rxe_counters_consistent(op, p)
    for op in sorted({"write", "read", "send"} - {op for op, _ in docs}):
        print(f"rdma-vm: no meshperf result for rdma {op}")
        ok = False
    return ok


# The end that receives a corrupting daemon's data in guest-tests.sh's corrupted sweeps: the
# peer for write and send (the corrupting daemon initiates), the initiator for read (the
# corrupting daemon is the peer, whose memory the initiator's QPs read).
CORRUPT_SEEN_AT = {"write": "at the peer", "read": "at the initiator", "send": "at the peer"}


def corrupt_runs(lines):
    """{(op, test, verify): (exit status, stderr, document or None)} of guest-tests.sh's
    "MESHPERF-CORRUPT-EXIT op=O test=T verify=V STATUS STDERR" and "-JSON ... | document" lines."""
    runs = {}
    for line in lines:
        if line.startswith(("MESHPERF-CORRUPT-EXIT ", "MESHPERF-CORRUPT-JSON ")):
            tag, _, rest = line.partition(" ")
            words = rest.split(None, 3)
            key = tuple(w.split("=", 1)[1] for w in words[:3])
            status, _, err = (words[3] if len(words) > 3 else "").partition(" ")
            exit_, err_, doc = runs.get(key, (None, "", None))
            if tag.endswith("-EXIT"):
                runs[key] = (status, err.strip(), doc)
            else:
                runs[key] = (exit_, err_, json.loads(line.partition(" | ")[2]))
    return runs


def check_corrupt_sweeps(lines):
    """Sweeps with the daemon that corrupts what its QPs give the peer (MESHPERF_TEST_CORRUPT_RDMA=1)
    on the sending end. Under --verify, each op (write, read, send) and test (latency,
    bandwidth, bidir) exits 1 with its run failed and no point kept, and both stderr and the
    run's error name the corruption ("data verification failed", "data corrupted") and the
    end that received the data (CORRUPT_SEEN_AT). Without --verify, each op's sweep over every
    test passes with every point measured and said unverified: the hook alone breaks nothing,
    so the failures above are the check's."""
    runs, ok = corrupt_runs(lines), True
    for op in ("write", "read", "send"):
        for test in ("latency", "bandwidth", "bidir"):
            st, err, doc = runs.get((op, test, "1"), (None, "", None))
            named = f"data verification failed {CORRUPT_SEEN_AT[op]}"
            error = (doc or {}).get("error") or ""
            good = st == "1" and named in err and "data corrupted" in err
            good = good and doc is not None and doc["state"] == "failed" and named in error and "data corrupted" in error
            good = good and doc["spec"].get("op") == op and doc["spec"].get("transport") == "rdma" and doc["points"] == []
            print(f"rdma-vm: corrupted rdma {op:5} {test:9} --verify: exit {st}, "
                  f"{doc['state'] if doc else 'no document'}, {len((doc or {}).get('points', []))} points kept: {error[:200]}"
                  + ("" if good else f"  <-- NOT CAUGHT (want exit 1 and the run failed, naming '{named}' and 'data corrupted')"))
            ok &= good
        st, err, doc = runs.get((op, "all", "0"), (None, "", None))
        points = (doc or {}).get("points", [])
        good = st == "0" and doc is not None and doc["state"] == "completed" and len(points) == 3
        for p in points:
            figs = [p["lat_ns"]["p50"]] if p["test"] == "latency" else [p["gbit_per_s"]]
            good = good and p["verified"] is False and positive(*figs)
        print(f"rdma-vm: corrupted rdma {op:5} every test without --verify: exit {st}, "
              f"{doc['state'] if doc else 'no document'}, {len(points)} points, verified {[p['verified'] for p in points]}"
              + ("" if good else f"  <-- WRONG (want exit 0, 3 points measured, none verified): {err[:300]}"))
        ok &= good
    return ok


def check_collectives(lines):
    docs, ok = documents(lines, "MESHPERF-COLLECTIVE", "transport", "collective over")
    busbw = {}
    for transport, doc in docs:
        if doc["spec"]["transport"] != transport.split("-")[0]:
            print(f"rdma-vm: collective tagged {transport} ran over {doc['spec']['transport']}")
            ok = False
        n = len(doc["hosts"])
        for p in doc["points"]:
            t, algbw, bus = p["time_s"], p["algbw_gbyte_per_s"], p["busbw_gbyte_per_s"]
            good = positive(t, algbw, bus) and p["wrong"] == 0 and p["iterations"] >= 1
            good = good and abs(algbw - p["size_bytes"] / t / 1e9) <= 1e-6 * algbw
            good = good and abs(bus - algbw * FACTOR[p["op"]](n)) <= 1e-6 * bus
            busbw.setdefault((p["op"], p["algo"], p["size_bytes"]), {}).setdefault(transport, []).append(bus)
            print(f"rdma-vm: collective {transport:9} {p['op']:14} {p['algo']:6} {p['size_bytes']:>8} B "
                  f"{t * 1e6:10.1f} us busbw {bus * 8:.3f} Gbit/s wrong={p['wrong']}" + ("" if good else "  <-- INSANE"))
            ok &= good
            if transport.startswith("rdma"):
                ok &= rank_port_counters_consistent(transport, p, n)
    for transport, doc in docs:
        if doc["spec"].get("memory", "host") == "host":
            continue
        if doc["spec"]["memory"] != "cuda:0":
            print(f"rdma-vm: collective tagged {transport} ran from {doc['spec']['memory']}")
            ok = False
        if transport.startswith("rdma"):
            ok &= gpudirect_stated(transport, doc)
    for t in sorted({"rdma", "tcp", "rdma-tree", "rdma-gpudirect", "rdma-gpudirect-tree", "tcp-staged"} - {t for t, _ in docs}):
        print(f"rdma-vm: no collective result over {t}")
        ok = False
    for (op, algo, size), by in sorted(busbw.items()):
        if "rdma" in by and "tcp" in by:
            r = sorted(by["rdma"])[len(by["rdma"]) // 2] / by["tcp"][0]
            print(f"rdma-vm: collective busbw rdma/tcp {op} {algo} {size} B: {r:.2f} (TCG: functional figures)")
    return ok


# A rank's counter window below this is not judged for movement (see rank_port_counters_consistent).
SHORT_WINDOW_S = 0.05


def rank_port_counters_consistent(transport, p, n):
    """Every rank of an RDMA collective point read the port its QPs use (counters.ranks[r].rdma,
    rxe0's hw_counters) around the size's timed iterations. In the symmetric ops (ring
    allreduce, allgather, reduce-scatter, alltoall) each rank sends and receives S x the bus
    factor per iteration, all of it inside its own window, so its port counted at least one
    packet per 4096 B (the largest RoCE MTU) of that; the ranks share the guest's one rxe0,
    so the counts hold the other ranks' packets too."""
    ranks = (p.get("counters") or {}).get("ranks") or []
    if len(ranks) != n:
        print(f"rdma-vm: collective {transport} {p['op']} {p['size_bytes']} B: counters for {len(ranks)} of {n} ranks  <-- MISSING")
        return False
    own = p["iterations"] * p["size_bytes"] * FACTOR[p["op"]](n)
    symmetric = p["op"] in ("allreduce", "allgather", "reduce-scatter", "alltoall") and p["algo"] != "tree"
    good = True
    for r, c in enumerate(ranks):
        rdma = (c or {}).get("rdma")
        hw = (rdma or {}).get("hw_counters", {}).get("deltas", {})
        sent, rcvd = hw.get("sent_pkts"), hw.get("rcvd_pkts")
        # The kernel serves hw_counters from a cache refreshed at most every `lifespan` ms
        # (rdma core's default 10 ms; rxe lists the file among its counters): a rank whose
        # timed iterations took less than a few lifespans can read the same values before and
        # after (seen: 0 or every packet, never a part, at 5 x 3 ms). Not judged then, and said.
        rank_times = p.get("rank_time_s") or []
        window = p["iterations"] * rank_times[r] if r < len(rank_times) else None
        if rdma is not None and sent == 0 and rcvd == 0 and window is not None and window < SHORT_WINDOW_S:
            print(f"rdma-vm: collective {transport} {p['op']} {p['size_bytes']} B rank {r}: counters did not move in a "
                  f"{window * 1e3:.1f} ms window, shorter than {SHORT_WINDOW_S * 1e3:.0f} ms (the kernel's counter cache): not judged")
            continue
        if rdma is None or sent is None or rcvd is None or sent < 1 or rcvd < 1:
            print(f"rdma-vm: collective {transport} {p['op']} {p['size_bytes']} B rank {r}: no rxe hw_counters moved "
                  f"({(rdma or {}).get('device')}: sent_pkts {sent}, rcvd_pkts {rcvd})  <-- MISSING")
            good = False
        elif symmetric and (sent * 4096 < own or rcvd * 4096 < own):
            print(f"rdma-vm: collective {transport} {p['op']} {p['size_bytes']} B rank {r}: sent_pkts {sent}, rcvd_pkts {rcvd} "
                  f"for {own:.0f} B sent and received by the rank  <-- INCONSISTENT")
            good = False
    if good and ranks and (ranks[0] or {}).get("rdma"):
        hw = ranks[0]["rdma"]["hw_counters"]["deltas"]
        what = f"for {own:.0f} B it sent and received" if symmetric else f"({own:.0f} bus bytes)"
        print(f"rdma-vm: collective {transport} {p['op']} {p['size_bytes']} B: every rank's {ranks[0]['rdma']['device']} "
              f"counted (rank 0: sent_pkts {hw['sent_pkts']}, rcvd_pkts {hw['rcvd_pkts']} {what})")
    return good


def gpudirect_stated(what, doc):
    """Whether the result says, for every rank, that the NIC registered its device memory."""
    want = "GPUDirect RDMA, cuda:0 (emulated in host memory) registered with rxe0"
    said = [w for w in doc.get("warnings", []) if want in w and "by peermem" in w]
    print(f"rdma-vm: {what}: {len(said)} of {len(doc['hosts'])} ranks say GPUDirect: {said[:1]}")
    return len(said) == len(doc["hosts"])


def check_corrupt(lines):
    """The GPUDirect run with a corrupting rank completed, said GPUDirect and counted wrong
    elements at every point."""
    docs, ok = documents(lines, "MESHPERF-GPUDIRECT-CORRUPT", "corrupt", "GPUDirect run with a corrupting rank")
    if not docs:
        print("rdma-vm: no result of the GPUDirect run with a corrupting rank")
        return False
    for _, doc in docs:
        ok &= gpudirect_stated("GPUDirect with a corrupting rank", doc)
        for p in doc["points"]:
            good = isinstance(p["wrong"], int) and p["wrong"] > 0
            print(f"rdma-vm: GPUDirect, rank 2 corrupting: {p['op']} {p['size_bytes']} B wrong={p['wrong']}"
                  + ("" if good else "  <-- NOT CAUGHT"))
            ok &= good
    return ok


def check_rails(lines):
    """sweep --transport rdma --rails all over rdma0/rxe0 and rdma1/rxe1: every point has both
    rails with a positive, finite figure that adds up to the point's, verified; each rail's
    counters (counters.rails) read its own device on both ends (rxe0 for rdma0, rxe1 for
    rdma1), and that device sent at least one packet per 4096 B of the rail's share of the
    bytes (each rxe loops back to itself, so each end's count holds both directions)."""
    docs, ok = documents(lines, "MESHPERF-RAILS", "op", "rdma rails")
    for op, doc in docs:
        for p in doc["points"]:
            rails = p.get("rails") or []
            names = [r["name"] for r in rails]
            total = sum(r["gbit_per_s"] for r in rails)
            good = names == ["rdma0", "rdma1"] and positive(p["gbit_per_s"], *[r["gbit_per_s"] for r in rails]) and checked(p)
            good = good and abs(total - p["gbit_per_s"]) <= 0.01 * p["gbit_per_s"]
            print(f"rdma-vm: rails rdma {op:5} {p['test']:9} {p['size_bytes']} B: "
                  + ", ".join(f"{r['name']} {r['gbit_per_s'] * 1000:.1f} Mbit/s" for r in rails)
                  + f", aggregate {p['gbit_per_s'] * 1000:.1f} Mbit/s" + ("" if good else "  <-- INSANE"))
            moved = sum(f["bytes"] for f in p["flows"])
            by_rail = {c["rail"]: c for c in (p.get("counters") or {}).get("rails", [])}
            for k, r in enumerate(rails):
                share = moved * r["gbit_per_s"] / p["gbit_per_s"] if p["gbit_per_s"] > 0 else 0
                want = "rxe0" if r["name"] == "rdma0" else "rxe1"
                for side in ("initiator", "peer"):
                    rdma = ((by_rail.get(r["name"]) or {}).get(side) or {}).get("rdma") or {}
                    hw = (rdma.get("hw_counters") or {}).get("deltas", {})
                    sent = hw.get("sent_pkts")
                    fine = rdma.get("device") == want and sent is not None and sent * 4096 >= share
                    print(f"rdma-vm: rails rdma {op:5} {p['test']:9} rail {r['name']} {side}: {rdma.get('device')} "
                          f"sent_pkts {sent} for {share:.0f} B" + ("" if fine else "  <-- MISSING OR INCONSISTENT"))
                    good &= fine
            ok &= good
    for op in sorted({"write", "send"} - {op for op, _ in docs}):
        print(f"rdma-vm: no result of rdma rails with {op}")
        ok = False
    return ok


def check_rail_down(lines):
    """The rdma rails sweep with rdma1 set down mid-run: exit 0 within 30 s of the cut, the run
    completed with two points; point 1 keeps rdma0's positive figure (not failed) as its
    aggregate, rdma1 failed with an error naming it and a zero figure; point 2 measured rdma0
    with rdma1 "not measured"; both daemons answered /v1/info afterwards."""
    ok = True
    exits = [l for l in lines if l.startswith("MESHPERF-RAILDOWN-EXIT ")]
    print(f"rdma-vm: rail down: {exits[0][:400] if exits else 'no exit line'}")
    if not exits:
        return False
    parts = exits[0].split()
    ok &= parts[1] == "0" and int(parts[2]) < 30
    docs, done = documents(lines, "MESHPERF-RAILDOWN", "cut", "rdma rail down")
    ok &= done and len(docs) == 1
    for _, doc in docs:
        points = doc["points"]
        warned = [w for w in doc.get("warnings", []) if "rail rdma1 failed in point 1" in w]
        print(f"rdma-vm: rail down: run warning: {warned[0] if warned else None}" + ("" if warned else "  <-- MISSING"))
        ok &= len(points) == 2 and len(warned) == 1
        for n, p in enumerate(points, 1):
            rails = {r["name"]: r for r in p.get("rails") or []}
            kept, cut = rails.get("rdma0", {}), rails.get("rdma1", {})
            err = cut.get("error", "")
            good = positive(kept.get("gbit_per_s", 0)) and not kept.get("failed", False) and checked(p)
            good = good and abs(p["gbit_per_s"] - kept["gbit_per_s"]) <= 0.01 * kept["gbit_per_s"]
            good = good and cut.get("failed") is True and "rail rdma1" in err and "rdma0" not in err
            good = good and cut.get("gbit_per_s", 1) == 0
            if n == 2:
                good = good and "not measured" in err
            print(f"rdma-vm: rail down point {n} {p['size_bytes']} B: rdma0 {kept.get('gbit_per_s', 0) * 1000:.1f} Mbit/s, "
                  f"aggregate {p['gbit_per_s'] * 1000:.1f} Mbit/s; rdma1 failed={cut.get('failed')}: {err}"
                  + ("" if good else "  <-- WRONG"))
            ok &= good
    for port in ("7477", "7478"):
        alive = f"MESHPERF-RAILDOWN-ALIVE {port}" in [l.strip() for l in lines]
        print(f"rdma-vm: rail down: daemon :{port} " + ("answers" if alive else "does not answer  <-- DEAD"))
        ok &= alive
    return ok


def check_inspect(lines):
    """inspect --loopback in the guest: through the daemon and in process, rxe0's loopback
    finding is OK with a positive, finite figure that agrees with its bytes and seconds; with
    a manifest floor of 10,000 Gbit/s it is CRITICAL and the exit code 2."""
    seen, ok = set(), True
    for line in lines:
        if not line.startswith("MESHPERF-INSPECT-JSON "):
            continue
        tag, _, body = line.partition(" | ")
        where = tag.split("where=")[1].split()[0]
        code = int(tag.split("exit=")[1].split()[0])
        seen.add(where)
        try:
            doc = json.loads(body)
        except ValueError:
            print(f"rdma-vm: inspect --loopback ({where}): exit {code}, no JSON: {tag[:300]}  <-- FAILED")
            ok = False
            continue
        found = [f for f in doc["findings"] if f["check"] == "rnic_loopback"]
        readings = doc.get("loopback", [])
        print(f"rdma-vm: inspect --loopback ({where}): exit {code}: {[(f['state'], f['subject'], f['message']) for f in found]}")
        r = next((r for r in readings if r["device"] == "rxe0"), None)
        good = r is not None and positive(r["gbit_per_s"], r["seconds"], r["bytes"])
        good = good and abs(r["gbit_per_s"] - r["bytes"] * 8 / r["seconds"] / 1e9) <= 1e-6 * r["gbit_per_s"]
        f = next((f for f in found if "rxe0" in f["subject"]), None)
        if where == "floor":
            good = good and code == 2 and f is not None and f["state"] == "CRITICAL" and "below the manifest's floor" in f["message"]
        else:
            good = good and f is not None and f["state"] == "OK" and code == doc["exit_code"]
            # Soft-RoCE has no PCI position: rxe0 is matched to rdma0 by its GIDs' netdev.
            rails = [(r.get("netdev"), r.get("rdma_device"), r.get("rate_gbit_per_s")) for r in doc["node"]["rails"]]
            print(f"rdma-vm: inspect ({where}): rails {rails}")
            if ("rdma0", "rxe0") not in [(n, d) for n, d, _ in rails]:
                print(f"rdma-vm: inspect ({where}): rail rdma0 is not matched with rxe0  <-- FAILED")
                good = False
        if not good:
            print(f"rdma-vm: inspect --loopback ({where}): rxe0's loopback is missing, insane or misjudged  <-- FAILED")
            ok = False
    for where in sorted({"daemon", "here", "floor"} - seen):
        print(f"rdma-vm: no inspect --loopback result ({where})")
        ok = False
    return ok


def main(path):
    lines = list(open(path, errors="replace"))
    for line in lines:
        if line.startswith(SHOWN):
            print("rdma-vm:", line.strip()[:400])
    sweeps_ok = check_sweeps(lines)
    collectives_ok = check_collectives(lines)
    corrupt_ok = check_corrupt(lines)
    corrupt_sweeps_ok = check_corrupt_sweeps(lines)
    inspect_ok = check_inspect(lines)
    rails_ok = check_rails(lines)
    rail_down_ok = check_rail_down(lines)
    return 0 if sweeps_ok and collectives_ok and corrupt_ok and corrupt_sweeps_ok and inspect_ok and rails_ok and rail_down_ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))

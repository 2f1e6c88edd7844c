"""`meshperf collective`, `show`, `runs` and `check --collective` through the real CLI binary
(issue 14). CollectiveCliTests run against a stand-in coordinator that speaks the HTTP
contract of POST /v1/collectives (the NDJSON events of POST /v1/runs, then the
meshperf.collective/1 document) with made-up points, sane by core's rules, so that failures
the daemons rarely produce (a run failed mid-way at a chosen size) are tested exactly.
RealDaemonTests run the CLI against real meshperfd on loopback. No figure here is judged:
on loopback they mean nothing.
"""
import http.server
import json
import os
import tempfile
import threading
import unittest

from meshperf_harness import Daemon, free_port, run_cli

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_UNREACHABLE = 0, 1, 2, 3
RUN_ID = "c-20261201-220000-abcdef"


def point(size, t0, t1, s0, s1):
    """A ring all-reduce over 2 ranks of `size` bytes of fp32, 3 iterations, each rank always
    as fast: rank r takes t_r, its send to its neighbour s_r."""
    t = max(t0, t1)
    algbw = size / t / 1e9

    def link(a, b, s):
        return {"name": f"rank {a} -> rank {b}", "from": a, "to": b, "bytes": size, "send_s": s,
                "gbit_per_s": size * 8 / s / 1e9}

    links = [link(0, 1, s0), link(1, 0, s1)]
    return {"op": "allreduce", "algo": "ring", "ranks": 2, "dtype": "fp32", "redop": "sum", "size_bytes": size,
            "count": size // 4, "iterations": 3, "time_s": t, "time_min_s": t, "time_p50_s": t, "time_max_s": t,
            "algbw_gbyte_per_s": algbw, "busbw_gbyte_per_s": algbw, "algbw_gbit_per_s": algbw * 8,
            "busbw_gbit_per_s": algbw * 8, "wrong": None, "rank_time_s": [t0, t1],
            "rank_spread": {"min_s": min(t0, t1), "max_s": t, "max_over_min": t / min(t0, t1)},
            "slowest_rank": 0 if t0 >= t1 else 1, "links": links,
            "slowest_link": links[0] if s0 >= s1 else links[1], "incast": None}


class Coordinator:
    """POST /v1/collectives on 127.0.0.1:<free port>. `mode`: "ok", "fail" (the second size
    fails, the first is kept), "nostart" (failed before any rank described itself)."""

    def __init__(self, mode="ok"):
        self.mode, self.specs = mode, []
        self.port = free_port()
        self.address = f"127.0.0.1:{self.port}"
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                if self.path != "/v1/collectives":
                    self.send_response(404)
                    self.end_headers()
                    return
                outer.specs.append(body)
                self.send_response(200)
                self.send_header("Content-Type", "application/x-ndjson")
                self.end_headers()
                for event in outer.events(body):
                    event["run_id"] = RUN_ID
                    self.wfile.write((json.dumps(event) + "\n").encode())
                self.close_connection = True

            def log_message(self, *args):
                pass

        self.server = http.server.HTTPServer(("127.0.0.1", self.port), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def events(self, spec):
        points = [point(s, 100e-6 + s / 1e9, 120e-6 + s / 1e9, 50e-6 + s / 2e9, 60e-6 + s / 2e9) for s in spec["sizes"]]
        hosts = [{"address": h, "hostname": h.split(":")[0]} for h in spec["hosts"]]
        state, error = "completed", None
        if self.mode == "fail":
            points, state = points[:1], "failed"
            error = f"rank 1 ({spec['hosts'][1]}) stopped answering in allreduce 8 KiB, iteration 2, step 1: reset"
        if self.mode == "nostart":
            points, hosts, state = [], [], "failed"
            error = f"rank 1 ({spec['hosts'][1]}): cannot reach meshperfd"
        doc = {"schema": "meshperf.collective/1", "id": RUN_ID, "state": state, "created_at": "2026-12-01T22:00:00.000Z",
               "finished_at": "2026-12-01T22:00:01.000Z", "spec": spec, "hosts": hosts, "points": points,
               "error": error, "warnings": [], "failed_rank": 1 if error else None,
               "failed_at_start": self.mode == "nostart"}
        events = [{"event": "queued", "position": 0}, {"event": "running"}]
        if hosts:
            events.append({"event": "started", "hosts": hosts})
        events += [{"event": "point", "index": i + 1, "total": len(spec["sizes"]), "point": p} for i, p in enumerate(points)]
        return events + [{"event": "result", "result": doc}]

    def close(self):
        self.server.shutdown()
        self.server.server_close()


class CollectiveCliTests(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="meshperf-collective-")
        self.coordinators = []

    def tearDown(self):
        for c in self.coordinators:
            c.close()

    def coordinator(self, mode="ok"):
        c = Coordinator(mode)
        self.coordinators.append(c)
        return c

    def collective(self, c, *args):
        other = f"127.0.0.1:{free_port()}"  # rank 1: the stand-in never calls it
        return run_cli("collective", "--hosts", f"{c.address},{other}", "--sizes", "4K,8K", "-q", *args, timeout=60)

    def test_completed_run_table_json_csv_and_show_file(self):
        c = self.coordinator()
        saved = os.path.join(self.dir, "r.json")
        rc, out, err = self.collective(c, "-o", saved)
        self.assertEqual(rc, EXIT_OK, out + err)
        self.assertIn("allreduce  ring  2 ranks  tcp  memory host", out)
        header = next(line for line in out.splitlines() if line.startswith("size"))
        self.assertLess(header.index("count"), header.index("type"))
        self.assertLess(header.index("time (µs)"), header.index("algbw (GB/s)"))
        self.assertLess(header.index("busbw (GB/s)"), header.index("#wrong"))
        self.assertLess(header.index("#wrong"), header.index("spread (max/min)"))
        self.assertTrue(any(line.startswith("8192") for line in out.splitlines()), out)
        # What was sent: core's spec form, hosts as the daemons write them, no model_file.
        spec = c.specs[0]
        self.assertEqual(spec["sizes"], [4096, 8192])
        self.assertEqual(spec["ops"], ["allreduce"])
        self.assertNotIn("model_file", spec)
        with open(saved) as f:
            doc = json.load(f)
        self.assertEqual(doc["schema"], "meshperf.collective/1")
        self.assertEqual(len(doc["points"]), 2)
        rc, shown, err = run_cli("show", saved)
        self.assertEqual(rc, EXIT_OK, err)
        self.assertEqual(shown, out)
        rc, csv, err = run_cli("show", saved, "--format", "csv")
        self.assertEqual(rc, EXIT_OK, err)
        self.assertTrue(csv.startswith("size,count,type,redop,time_us,algbw_gbyte_per_s,busbw_gbyte_per_s,wrong,"), csv)
        self.assertEqual(len(csv.strip().splitlines()), 3)
        rc, svg, err = run_cli("plot", saved)
        self.assertEqual(rc, EXIT_OK, err)
        self.assertTrue(svg.startswith("<svg"), svg[:200])
        rc, out, err = run_cli("plot", saved, saved)  # plot draws one collective alone
        self.assertEqual(rc, EXIT_USAGE)
        self.assertIn("is a collective result", err)
        rc, out, err = run_cli("model", saved)
        self.assertEqual(rc, EXIT_USAGE)
        self.assertIn("draw it alone with meshperf plot", err)

    def test_failed_mid_way_keeps_its_points_and_exits_1(self):
        c = self.coordinator("fail")
        rc, out, err = self.collective(c)
        self.assertEqual(rc, EXIT_FAILED, out + err)
        self.assertTrue(any(line.startswith("4096") for line in out.splitlines()), out)
        self.assertIn("error: rank 1 (", out)
        self.assertIn("stopped answering in allreduce 8 KiB", err)

    def test_failed_before_it_started_exits_3(self):
        c = self.coordinator("nostart")
        rc, out, err = self.collective(c)
        self.assertEqual(rc, EXIT_UNREACHABLE, out + err)
        self.assertIn("cannot reach meshperfd", err)

    def test_unreachable_coordinator_exits_3_naming_it(self):
        closed = f"127.0.0.1:{free_port()}"
        rc, out, err = run_cli("collective", "--hosts", f"{closed},127.0.0.1:1", "-q", timeout=30)
        self.assertEqual(rc, EXIT_UNREACHABLE, out + err)
        self.assertIn(f"cannot reach meshperfd at {closed}", err)

    def test_bad_input_exits_2_before_anything_is_sent(self):
        c = self.coordinator()
        cases = [
            (["--op", "alltoall", "--algo", "tree"], "--algo tree cannot run alltoall"),
            (["--dtype", "int8"], "int8"),
            (["--iterations", "5", "--duration", "1"], "give one of them"),
            (["--sizes", "6"], "size 6 B is not a whole number of fp32 elements"),
        ]
        for args, fragment in cases:
            with self.subTest(args=args):
                rc, out, err = run_cli("collective", "--hosts", f"{c.address},127.0.0.1:1", "-q", *args, timeout=30)
                self.assertEqual(rc, EXIT_USAGE, out + err)
                self.assertIn(fragment, err)
        rc, out, err = run_cli("collective", "--hosts", f"{c.address},{c.address}", timeout=30)
        self.assertEqual(rc, EXIT_USAGE)
        self.assertIn("is given twice", err)
        self.assertEqual(c.specs, [])

    def test_predict_from_a_matrix(self):
        c = self.coordinator()
        other = f"127.0.0.1:{free_port()}"
        matrix = os.path.join(self.dir, "m.json")
        with open(matrix, "w") as f:
            json.dump({"schema": "meshperf.matrix/1", "hosts": [{"host": c.address}, {"host": other}],
                       "links": [{"from": c.address, "to": other, "gbit_per_s": 1.2, "lat_us": 40},
                                 {"from": other, "to": c.address, "gbit_per_s": 0.9, "lat_us": 30}]}, f)
        rc, out, err = run_cli("collective", "--hosts", f"{c.address},{other}", "--sizes", "4K", "-q", "--predict",
                               "--model", matrix, "--format", "json", timeout=60)
        self.assertEqual(rc, EXIT_OK, out + err)
        doc = json.loads(out)
        predicted = doc["points"][0]["predicted"]
        # 2(p−1) α = 80 µs, plus 2(p−1)/p · 4096 B at 0.9 Gbit/s = 36.4 µs.
        self.assertAlmostEqual(predicted["time_s"], 80e-6 + 4096 * 8 / 0.9e9, delta=1e-9)
        self.assertAlmostEqual(predicted["error"], (doc["points"][0]["time_s"] - predicted["time_s"]) / predicted["time_s"])
        self.assertEqual(predicted["model"]["beta_link"], f"{other} -> {c.address}")
        self.assertTrue(c.specs[0]["predict"])

    def test_check_collective_verdicts(self):
        c = self.coordinator()
        hosts = f"{c.address},127.0.0.1:{free_port()}"
        rc, out, err = run_cli("check", "--collective", "allreduce", "--hosts", hosts, "--min-busbw", "0.01", "--size", "8K")
        self.assertEqual(rc, 0, out + err)
        self.assertTrue(out.startswith("MESHPERF OK - allreduce ring over 2 ranks"), out)
        self.assertIn("| busbw_gbyte=", out)
        rc, out, err = run_cli("check", "--collective", "allreduce", "--hosts", hosts, "--min-busbw", "100", "--size", "8K")
        self.assertEqual(rc, 2, out + err)
        self.assertIn("below --min-busbw 100 GB/s", out)
        self.assertTrue(c.specs[-1]["verify"])
        rc, out, err = run_cli("check", "--collective", "allreduce", "--hosts", hosts)
        self.assertEqual(rc, 3, out + err)
        self.assertIn("needs --min-busbw", out)
        rc, out, err = run_cli("check")  # neither a peer nor --collective
        self.assertEqual(rc, 3, out + err)
        self.assertTrue(out.startswith("MESHPERF UNKNOWN"), out)
        self.assertIn("give the peer HOST[:PORT], or --collective OP", out)

    def test_check_collective_baseline_and_prom_file(self):
        c = self.coordinator()
        hosts = f"{c.address},127.0.0.1:{free_port()}"
        with tempfile.TemporaryDirectory() as tmp:
            base = os.path.join(tmp, "base.json")
            rc, out, err = run_cli("collective", "--hosts", hosts, "--sizes", "8K", "-q", "--format", "json", "-o", base)
            self.assertEqual(rc, EXIT_OK, out + err)
            busbw = json.load(open(base))["points"][0]["busbw_gbyte_per_s"]
            prom = os.path.join(tmp, "check.prom")
            # The same stand-in measures the same busbw: 100% of the baseline, OK.
            rc, out, err = run_cli("check", "--collective", "allreduce", "--hosts", hosts, "--baseline", base, "--size", "8K",
                                   "--prom-file", prom)
            self.assertEqual(rc, 0, out + err)
            self.assertIn("100% of the baseline's", out)
            self.assertIn(f"run {RUN_ID}", out)
            text = open(prom).read()
            labels = 'op="allreduce",algo="ring",transport="tcp",memory="host"'
            self.assertIn(f"meshperf_collective_check_status{{{labels}}} 0\n", text)
            line = [l for l in text.splitlines() if l.startswith("meshperf_collective_check_busbw_bits_per_second{")]
            self.assertEqual(len(line), 1, text)
            self.assertIn(',ranks="2",size_bytes="8192"}', line[0])
            self.assertAlmostEqual(float(line[0].split()[-1]), busbw * 8e9, delta=busbw * 8e9 * 1e-9)
            # A baseline twice as fast: now at 50%, below --crit 0.75: CRITICAL, and so in the file.
            doc = json.load(open(base))
            pt = doc["points"][0]
            for key in ("time_s", "time_min_s", "time_p50_s", "time_max_s"):
                pt[key] /= 2
            for key in ("algbw_gbyte_per_s", "busbw_gbyte_per_s", "algbw_gbit_per_s", "busbw_gbit_per_s"):
                pt[key] *= 2
            pt["rank_time_s"] = [t / 2 for t in pt["rank_time_s"]]
            pt["rank_spread"] = {k: (v / 2 if k.endswith("_s") else v) for k, v in pt["rank_spread"].items()}
            for link in pt["links"] + [pt["slowest_link"]]:
                link["send_s"] /= 2
                link["gbit_per_s"] *= 2
            fast = os.path.join(tmp, "fast.json")
            json.dump(doc, open(fast, "w"))
            rc, out, err = run_cli("check", "--collective", "allreduce", "--hosts", hosts, "--baseline", fast, "--size", "8K",
                                   "--prom-file", prom)
            self.assertEqual(rc, 2, out + err)
            self.assertIn("50% of the baseline's", out)
            self.assertIn("below --crit 0.75 of the baseline", out)
            self.assertIn(f"meshperf_collective_check_status{{{labels}}} 2\n", open(prom).read())
            # A size the baseline lacks: UNKNOWN naming what it has, nothing run.
            runs = len(c.specs)
            rc, out, err = run_cli("check", "--collective", "allreduce", "--hosts", hosts, "--baseline", base, "--size", "16K",
                                   "--prom-file", prom)
            self.assertEqual(rc, 3, out + err)
            self.assertIn("has no allreduce ring point over 2 ranks at 16 KiB (it has: allreduce ring over 2 ranks at 8 KiB)", out)
            self.assertEqual(len(c.specs), runs)
            self.assertIn(f"meshperf_collective_check_status{{{labels}}} 3\n", open(prom).read())
            rc, out, err = run_cli("check", "--collective", "allreduce", "--hosts", hosts, "--baseline", "stored")
            self.assertEqual(rc, 3, out + err)
            self.assertIn("--baseline stored is for a path", out)


class RealDaemonTests(unittest.TestCase):
    """The CLI against two real daemons: a verified run, show and runs, --predict with the ring
    probes, and a rank down at the start."""

    @classmethod
    def setUpClass(cls):
        cls.daemons = [Daemon(), Daemon()]
        cls.hosts = ",".join(d.address for d in cls.daemons)

    @classmethod
    def tearDownClass(cls):
        for d in cls.daemons:
            d.cleanup()

    def test_verified_run_then_show_and_runs(self):
        rc, out, err = run_cli("collective", "--hosts", self.hosts, "--op", "allreduce,incast", "--sizes", "64K",
                               "--iterations", "3", "--verify", "-q", "--format", "json", timeout=120)
        self.assertEqual(rc, EXIT_OK, err)
        doc = json.loads(out)
        self.assertEqual(doc["state"], "completed")
        self.assertEqual([p["op"] for p in doc["points"]], ["allreduce", "incast"])
        self.assertEqual([p["wrong"] for p in doc["points"]], [0, 0])
        coordinator = self.daemons[0].address
        rc, table, err = run_cli("show", coordinator, doc["id"])
        self.assertEqual(rc, EXIT_OK, err)
        self.assertIn("allreduce  ring  2 ranks  tcp  memory host", table)
        self.assertIn("incast  direct  2 ranks", table)
        rc, listing, err = run_cli("runs", coordinator)
        self.assertEqual(rc, EXIT_OK, err)
        row = next(line for line in listing.splitlines() if line.startswith(doc["id"]))
        self.assertIn("collective", row)
        self.assertIn("2 hosts", row)

    def test_predict_with_ring_probes(self):
        rc, out, err = run_cli("collective", "--hosts", self.hosts, "--sizes", "1M", "--iterations", "3", "--predict", "-q",
                               "--format", "json", timeout=180)
        self.assertEqual(rc, EXIT_OK, err)
        doc = json.loads(out)
        predicted = doc["points"][0]["predicted"]
        self.assertGreater(predicted["time_s"], 0)
        self.assertAlmostEqual(predicted["error"], (doc["points"][0]["time_s"] - predicted["time_s"]) / predicted["time_s"])
        self.assertEqual(len(doc["prediction"]["links"]), 2)  # a -> b and b -> a, each probed
        self.assertTrue(doc["prediction"]["source"].startswith("probes"))

    def test_a_rank_down_at_the_start_exits_3_naming_it(self):
        dead = f"127.0.0.1:{free_port()}"
        rc, out, err = run_cli("collective", "--hosts", f"{self.hosts},{dead}", "--sizes", "64K", "--iterations", "2", "-q",
                               timeout=60)
        self.assertEqual(rc, EXIT_UNREACHABLE, out + err)
        self.assertIn(f"rank 2 ({dead})", err)


if __name__ == "__main__":
    unittest.main()

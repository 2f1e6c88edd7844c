"""Sweeps between two real daemons on loopback: every test kind, every output format."""
import csv
import io
import json
import unittest

from meshperf_harness import QUICK, Daemon, check_point_sane, run_cli

SIZES = "1,64,4K,64K,1M"
SIZE_LIST = [1, 64, 4096, 65536, 1048576]


class SweepTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.a = Daemon()
        cls.b = Daemon()

    @classmethod
    def tearDownClass(cls):
        cls.a.cleanup()
        cls.b.cleanup()

    def sweep_json(self, *extra):
        rc, out, err = run_cli("sweep", "--initiator", self.a.address, self.b.address, "--format", "json", *QUICK, *extra)
        self.assertEqual(rc, 0, f"sweep failed: {err}")
        doc = json.loads(out)
        self.assertEqual(doc["schema"], "meshperf.run/1")
        self.assertEqual(doc["state"], "completed")
        for p in doc["points"]:
            check_point_sane(self, p)
        return doc

    def test_latency_every_size(self):
        doc = self.sweep_json("--test", "latency", "--sizes", SIZES)
        self.assertEqual([p["size_bytes"] for p in doc["points"]], SIZE_LIST)
        self.assertEqual(doc["peer"]["address"], self.b.address)
        self.assertTrue(doc["peer"]["hostname"])
        self.assertTrue(doc["initiator"]["kernel"])

    def test_bandwidth_every_size(self):
        doc = self.sweep_json("--test", "bandwidth", "--sizes", SIZES)
        self.assertEqual([p["size_bytes"] for p in doc["points"]], SIZE_LIST)
        for p in doc["points"]:
            self.assertEqual([f["direction"] for f in p["flows"]], ["initiator->peer"])

    def test_bidir_reports_both_directions_and_sum(self):
        doc = self.sweep_json("--test", "bidir", "--sizes", "64K,1M")
        for p in doc["points"]:
            self.assertEqual(sorted(f["direction"] for f in p["flows"]), ["initiator->peer", "peer->initiator"])

    def test_reverse_and_streams(self):
        doc = self.sweep_json("--test", "bandwidth", "--sizes", "64K", "--streams", "3", "--reverse")
        flow = doc["points"][0]["flows"][0]
        self.assertEqual(flow["direction"], "peer->initiator")
        self.assertEqual(len(flow["streams_gbit_per_s"]), 3)

    def test_verify(self):
        doc = self.sweep_json("--test", "latency,bandwidth,bidir", "--sizes", "1,1000,64K", "--verify")
        self.assertEqual(len(doc["points"]), 9)
        self.assertTrue(all(p["verified"] for p in doc["points"]))

    def test_fixed_iterations(self):
        doc = self.sweep_json("--test", "latency,bandwidth", "--sizes", "64,64K", "--iterations", "2000")
        lat = [p for p in doc["points"] if p["test"] == "latency"]
        self.assertTrue(all(p["lat_ns"]["count"] == 2000 for p in lat))
        bw = [p for p in doc["points"] if p["test"] == "bandwidth"]
        for p in bw:
            self.assertEqual(p["flows"][0]["bytes"], 2000 * p["size_bytes"])
            self.assertFalse(p["precision"]["adaptive"])

    def test_fixed_duration(self):
        doc = self.sweep_json("--test", "bandwidth", "--sizes", "64K", "--duration", "0.5")
        self.assertGreater(doc["points"][0]["duration_s"], 0.4)

    def test_tuning_options(self):
        # --cpu A pins both sides' stream threads to A, --busy-poll spins for latency, --window sets buffers.
        doc = self.sweep_json("--test", "latency,bandwidth", "--sizes", "64,64K", "--cpu", "0", "--window", "1M")
        self.assertEqual((doc["spec"]["initiator_cpus"], doc["spec"]["peer_cpus"]), ([0], [0]))
        self.assertEqual(doc["spec"]["window_bytes"], 1 << 20)
        self.assertEqual(len(doc["points"]), 4)
        # Busy-polling spins: not combined with pinning both ends to one CPU.
        doc = self.sweep_json("--test", "latency", "--sizes", "64", "--busy-poll")
        self.assertTrue(doc["spec"]["busy_poll"])

    def test_csv_has_a_row_per_point(self):
        rc, out, err = run_cli("sweep", "--initiator", self.a.address, self.b.address, "--format", "csv",
                               "--test", "latency,bandwidth", "--sizes", SIZES, *QUICK)
        self.assertEqual(rc, 0, err)
        rows = list(csv.reader(io.StringIO(out)))
        header, body = rows[0], rows[1:]
        self.assertEqual(len(body), 2 * len(SIZE_LIST))
        for r in body:
            self.assertEqual(len(r), len(header))
        col = {n: i for i, n in enumerate(header)}
        for r in body:
            if r[col["test"]] == "latency":
                self.assertGreater(float(r[col["lat_ns_p50"]]), 0)
            else:
                self.assertGreater(float(r[col["gbit_per_s"]]), 0)
        self.assertEqual(sorted({int(r[col["size_bytes"]]) for r in body}), SIZE_LIST)

    def test_table_output_and_file(self):
        path = f"{self.a.state_dir}/out.txt"
        rc, out, err = run_cli("sweep", "--initiator", self.a.address, self.b.address, "--test", "latency,bandwidth",
                               "--sizes", "64,1M", "-o", path, *QUICK)
        self.assertEqual(rc, 0, err)
        text = open(path).read()
        self.assertIn("p50 µs", text)
        self.assertIn("Gbit/s", text)
        self.assertIn("1 MiB", text)

    def test_show_and_runs(self):
        doc = self.sweep_json("--test", "latency", "--sizes", "64")
        rc, out, err = run_cli("show", self.a.address, doc["id"], "--format", "json")
        self.assertEqual(rc, 0, err)
        self.assertEqual(json.loads(out)["points"], doc["points"])
        rc, out, err = run_cli("runs", self.a.address)
        self.assertEqual(rc, 0, err)
        self.assertIn(doc["id"], out)
        rc, out, err = run_cli("info", self.a.address)
        self.assertEqual(rc, 0, err)
        self.assertIn("tcp", out)


if __name__ == "__main__":
    unittest.main()

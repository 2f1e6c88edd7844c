"""`meshperf matrix --mode triage` and `--topology` through the CLI, on loopback daemons.

What the netns test (tests/netns/triage.sh, root) cannot cover without root: the JSON shape
of a triage (mode, rounds, waves, the shift rounds, links judged as a matrix's), a topology
file that leaves hosts out or names unknown ones (exit 2, naming them, nothing measured),
and triage on fewer than 4 hosts (says a full matrix is the better tool, runs it), and
that the coordinator reuses one connection per daemon across rounds (its JSON's
`connections`). Loopback
links all read alike only roughly, so no verdict on them is checked here.
"""
import json
import os
import tempfile
import unittest

from meshperf_harness import QUICK, Daemon, run_cli

TEST = ["--test", "bandwidth", "--sizes", "64K"] + QUICK


class TriageTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.daemons = [Daemon() for _ in range(5)]
        cls.tmp = tempfile.mkdtemp(prefix="meshperf-triage-")
        cls.hosts = ",".join(d.address for d in cls.daemons)

    @classmethod
    def tearDownClass(cls):
        for d in cls.daemons:
            d.cleanup()

    @staticmethod
    def load(path):
        with open(path) as f:
            return json.load(f)

    def write(self, name, text):
        path = os.path.join(self.tmp, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def test_triage_json_has_the_matrix_shape_and_its_rounds(self):
        topo = self.write("topo.txt", "".join(f"{d.address} leaf={'a' if i < 3 else 'b'}\n" for i, d in enumerate(self.daemons)))
        out = os.path.join(self.tmp, "t.json")
        rc, stdout, stderr = run_cli("matrix", "--hosts", self.hosts, "--mode", "triage", "--topology", topo, *TEST,
                                     "--format", "json", "-o", out)
        self.assertIn(rc, (0, 1), stderr)
        doc = self.load(out)
        self.assertEqual(doc["mode"], "triage")
        kinds = [r["kind"] for r in doc["triage"]["shift_rounds"]]
        self.assertEqual(doc["rounds"], len(kinds))
        self.assertIn("in-group", kinds)
        self.assertIn("cross-group", kinds)
        for r in doc["triage"]["shift_rounds"]:
            self.assertLessEqual(r["waves"], 3)
            if r["links"] == len(self.daemons):  # every host sends once and receives once: it cannot do both at once
                self.assertGreaterEqual(r["waves"], 2)
        self.assertEqual(doc["waves"], sum(r["waves"] for r in doc["triage"]["shift_rounds"]))
        self.assertEqual(doc["retest_rounds"], doc["triage"]["localisation_rounds"])
        shift_links = sum(r["links"] for r in doc["triage"]["shift_rounds"])
        self.assertGreaterEqual(len(doc["links"]), shift_links)
        for key in ("suspects", "unreachable", "median", "reference", "hosts", "slow_uplinks"):
            self.assertIn(key, doc)
        self.assertEqual(doc["topology"]["key"], "leaf")
        self.assertEqual(doc["topology"]["groups"], ["a", "b"])
        self.assertIn(f"measured in {doc['rounds']} shift rounds ({doc['waves']} waves)", stdout)
        # Connections are reused wave after wave: one per daemon unless one was dropped.
        conns = doc["connections"]
        self.assertGreaterEqual(conns["opened"], len(self.daemons), conns)
        self.assertGreaterEqual(conns["requests"], len(self.daemons) + shift_links, conns)
        self.assertLess(conns["opened"], conns["requests"] / 2, conns)

    def test_topology_that_leaves_out_or_names_unknown_hosts_exits_2(self):
        lines = [f"{d.address} leaf=a\n" for d in self.daemons[:4]] + ["10.255.0.9:7470 leaf=b\n"]
        topo = self.write("bad.txt", "".join(lines))
        rc, stdout, stderr = run_cli("matrix", "--hosts", self.hosts, "--mode", "triage", "--topology", topo, *TEST)
        self.assertEqual(rc, 2, stderr)
        self.assertIn(f"leaves out 1 host(s) of --hosts: {self.daemons[4].address}", stderr)
        self.assertIn("not in --hosts: 10.255.0.9:7470", stderr)
        self.assertNotIn("matrix (triage)", stdout)

    def test_triage_of_three_hosts_runs_a_full_matrix(self):
        hosts = ",".join(d.address for d in self.daemons[:3])
        out = os.path.join(self.tmp, "three.json")
        rc, stdout, stderr = run_cli("matrix", "--hosts", hosts, "--mode", "triage", *TEST, "--format", "json", "-o", out)
        self.assertIn(rc, (0, 1), stderr)
        self.assertIn("a full matrix", stderr)
        doc = self.load(out)
        self.assertEqual(doc["mode"], "full")
        self.assertEqual(len(doc["links"]), 6)
        # One connection to each daemon, kept open across the rounds (HTTP keep-alive): the
        # /v1/info probe and every run that daemon initiated went over it.
        self.assertEqual(doc["connections"]["opened"], 3, doc["connections"])
        self.assertGreaterEqual(doc["connections"]["requests"], 3 + 6, doc["connections"])


if __name__ == "__main__":
    unittest.main()

"""Where the measuring threads run: two daemons on one host, threads forced apart and
together (--cpu, taskset), the default placement, refusals and warnings. (The default
latency curve's monotonicity is test_placement_curve.py.)

Needs a host on which this process may use at least two CPUs (skipped otherwise).
"""
import json
import os
import unittest

from meshperf_harness import QUICK, Daemon, check_point_sane, run_cli

ALLOWED = sorted(os.sched_getaffinity(0))


def cpulist(cpus):
    """The kernel's cpulist form, as meshperfd writes it: 0-3,6."""
    out, i = [], 0
    while i < len(cpus):
        j = i
        while j + 1 < len(cpus) and cpus[j + 1] == cpus[j] + 1:
            j += 1
        out.append(str(cpus[i]) if i == j else f"{cpus[i]}-{cpus[j]}")
        i = j + 1
    return ",".join(out)


def numa_node(cpu):
    """The NUMA node sysfs names for a CPU, or None."""
    try:
        for entry in os.listdir(f"/sys/devices/system/cpu/cpu{cpu}"):
            if entry.startswith("node") and entry[4:].isdigit():
                return int(entry[4:])
    except OSError:
        pass
    return None


def side_words(cpu):
    node = numa_node(cpu)
    return f"CPU {cpu}" + ("" if node is None else f" (NUMA {node})")


@unittest.skipIf(len(ALLOWED) < 2, "needs two usable CPUs")
class PlacementTests(unittest.TestCase):
    A, B = ALLOWED[0], ALLOWED[1]

    def setUp(self):
        self.daemons = []

    def tearDown(self):
        for d in self.daemons:
            d.cleanup()

    def daemon(self, cpus=None):
        d = Daemon(prefix=["taskset", "-c", cpulist(cpus)] if cpus is not None else ())
        self.daemons.append(d)
        return d

    def sweep(self, initiator, peer, *extra, fmt="json", expect=0):
        rc, out, err = run_cli("sweep", "--initiator", initiator.address, peer.address, "--format", fmt, *QUICK, *extra)
        self.assertEqual(rc, expect, f"sweep: exit {rc}: {err}{out[-2000:]}")
        return out, err

    def sweep_json(self, initiator, peer, *extra):
        out, _ = self.sweep(initiator, peer, *extra)
        doc = json.loads(out)
        self.assertEqual(doc["state"], "completed", doc.get("error"))
        for p in doc["points"]:
            check_point_sane(self, p)
        return doc

    def assert_placement(self, doc, initiator_cpu, peer_cpu, pinned_by):
        """Every point: each side pinned to its one CPU, on one host, shared exactly when equal."""
        self.assertTrue(doc["points"])
        for p in doc["points"]:
            where = p["placement"]
            self.assertEqual(where["initiator"]["cpus"], [initiator_cpu], where)
            self.assertEqual(where["peer"]["cpus"], [peer_cpu], where)
            for side, cpu in (("initiator", initiator_cpu), ("peer", peer_cpu)):
                self.assertTrue(where[side]["pinned"], where)
                self.assertEqual(where[side]["pinned_by"], pinned_by, where)
                node = numa_node(cpu)
                self.assertEqual(where[side]["numa_nodes"], [] if node is None else [node])
            self.assertIs(where["same_host"], True)
            self.assertIs(where["shared_cpu"], initiator_cpu == peer_cpu)
        self.assertFalse([w for w in doc["warnings"] if "placement changed" in w], doc["warnings"])

    def header(self, initiator, peer, *extra):
        out, _ = self.sweep(initiator, peer, "--test", "latency", "--sizes", "64", *extra, fmt="table")
        lines = [l for l in out.splitlines() if l.startswith("placement")]
        self.assertEqual(len(lines), 1, out)
        return lines[0]

    # --- forced apart and together

    def test_cpu_a_b_puts_the_sides_apart(self):
        a, b = self.daemon(), self.daemon()
        doc = self.sweep_json(a, b, "--test", "latency,bandwidth", "--sizes", "64,64K", "--cpu", f"{self.A},{self.B}")
        self.assertEqual((doc["spec"]["initiator_cpus"], doc["spec"]["peer_cpus"]), ([self.A], [self.B]))
        self.assert_placement(doc, self.A, self.B, "spec")
        self.assertEqual(self.header(a, b, "--cpu", f"{self.A},{self.B}"),
                         f"placement: initiator {side_words(self.A)}, peer {side_words(self.B)}, separate CPUs on one host")

    def test_cpu_a_a_puts_the_sides_together(self):
        a, b = self.daemon(), self.daemon()
        doc = self.sweep_json(a, b, "--test", "latency,bandwidth", "--sizes", "64,64K", "--cpu", f"{self.A},{self.A}")
        self.assert_placement(doc, self.A, self.A, "spec")
        self.assertEqual(self.header(a, b, "--cpu", str(self.A)),
                         f"placement: initiator {side_words(self.A)}, peer {side_words(self.A)}, "
                         f"sharing CPU {self.A} on one host")

    def test_daemons_under_taskset_on_one_cpu_share_it(self):
        a, b = self.daemon([self.A]), self.daemon([self.A])
        doc = self.sweep_json(a, b, "--test", "latency", "--sizes", "1,64,4K")
        self.assert_placement(doc, self.A, self.A, "default")
        self.assertIn(f"sharing CPU {self.A} on one host", self.header(a, b))

    # --- the default

    def test_default_pins_the_sides_apart_for_the_whole_run(self):
        a, b = self.daemon(), self.daemon()
        doc = self.sweep_json(a, b, "--test", "latency", "--sizes", "1,16,256,4K")
        self.assert_placement(doc, self.A, self.B, "default")
        self.assertEqual(self.header(a, b),
                         f"placement: initiator {side_words(self.A)}, peer {side_words(self.B)}, separate CPUs on one host")

    def test_default_respects_the_daemons_affinity(self):
        # The initiator may use only B: the peer, which may use any, goes elsewhere.
        a, b = self.daemon([self.B]), self.daemon()
        self.assert_placement(self.sweep_json(a, b, "--test", "latency", "--sizes", "64"), self.B, self.A, "default")
        # The peer may use only A and the initiator chose A first: the initiator moves off it.
        a, b = self.daemon(), self.daemon([self.A])
        self.assert_placement(self.sweep_json(a, b, "--test", "latency", "--sizes", "64"), self.B, self.A, "default")

    def test_streams_spread_over_each_sides_cpus(self):
        a, b = self.daemon(), self.daemon()
        # The default on one host: each side keeps to its own CPUs, whatever the streams.
        doc = self.sweep_json(a, b, "--test", "bandwidth", "--sizes", "64K", "--streams", "2")
        self.assert_placement(doc, self.A, self.B, "default")
        if self.B != self.A + 1:
            return
        # A range spreads a side's streams over it (round-robin).
        doc = self.sweep_json(a, b, "--test", "bandwidth", "--sizes", "64K", "--streams", "2", "--cpu", f"{self.A}-{self.B}")
        where = doc["points"][0]["placement"]
        for side in ("initiator", "peer"):
            self.assertEqual(where[side]["cpus"], [self.A, self.B], where)
            self.assertTrue(where[side]["pinned"])
        self.assertIs(where["shared_cpu"], True)

    # --- refusals and warnings

    def test_unavailable_cpu_is_refused_at_submission(self):
        a, b = self.daemon(), self.daemon()
        out, err = self.sweep(a, b, "--test", "latency", "--sizes", "64", "--cpu", "99", expect=2)
        self.assertIn(f"CPU 99 is not available to this meshperfd: it may use {cpulist(ALLOWED)}", err)

    def test_peer_refuses_a_cpu_it_may_not_use(self):
        a, b = self.daemon(), self.daemon([self.A])
        out, err = self.sweep(a, b, "--test", "latency", "--sizes", "64", "--cpu", f"{self.A},{self.B}", expect=1)
        self.assertIn(f"peer {b.address}", err)
        self.assertIn(f"CPU {self.B} is not available to this meshperfd: it may use {self.A}", err)
        self.assertTrue(a.alive() and b.alive())

    def test_busy_poll_on_one_cpu_is_refused_when_pinned(self):
        a, b = self.daemon(), self.daemon()
        out, err = self.sweep(a, b, "--test", "latency", "--sizes", "64", "--busy-poll", "--cpu", str(self.A), expect=2)
        self.assertIn(f"busy_poll (--busy-poll) with both sides pinned to CPU {self.A} of this host", err)

    def test_busy_poll_on_a_shared_cpu_by_default_is_warned(self):
        a, b = self.daemon([self.A]), self.daemon([self.A])
        # Two spinners on one CPU take a scheduler slice per round trip: a few fixed round trips.
        doc = self.sweep_json(a, b, "--test", "latency", "--sizes", "64", "--busy-poll", "--iterations", "20")
        self.assertTrue(doc["points"][0]["placement"]["shared_cpu"])
        self.assertTrue([w for w in doc["warnings"] if w.startswith(f"busy-poll with both sides on CPU {self.A} of one host")],
                        doc["warnings"])


if __name__ == "__main__":
    unittest.main()

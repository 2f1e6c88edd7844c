"""The libfabric transport (--transport ofi) between daemons on loopback: sweeps over the tcp
(with ofi_rxm) and shm providers, tagged and untagged messages, every test, sizes 1 B..8 MiB,
--verify clean and failing on real corruption, bad input refused with exit 2, a peer killed or
frozen mid-point ending the run within its bound while the daemons stay up; collectives over
4 ranks (tcp provider) verified, a corrupting rank caught, a rank killed mid-run.

Run: python3 test_ofi.py (CTest: integration-ofi). Exits 77 (skip) when the daemon was built
without libfabric or libfabric finds no tcp or shm provider here: probed once, up front.
"""
import json
import os
import signal
import subprocess
import sys
import time
import unittest

from meshperf_harness import CLI, Daemon, check_point_sane, run_cli

PROVIDERS = ("tcp", "shm")
OPS = ("tagged", "msg")
# A point's bound when the peer dies or freezes: the loops' peer timeout (5 s), the session's
# silence limit after it (the peer answers point_stop within its timeout + 3 s), and the run's
# end. Measured 6-9 s here.
FAULT_BOUND_S = 25


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


class OfiTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.a, cls.b = Daemon(), Daemon()

    @classmethod
    def tearDownClass(cls):
        cls.a.cleanup()
        cls.b.cleanup()

    def sweep(self, peer, *args, initiator=None, timeout=180):
        return run_cli("sweep", "--initiator", (initiator or self.a).address, peer.address, "--transport", "ofi",
                       "--format", "json", "--warmup", "0.02", "-q", *args, *([] if "--max-time" in args else ["--max-time", "0.2"]),
                       timeout=timeout)

    def assert_daemon_ok(self, d):
        self.assertTrue(d.alive(), d.read_log()[-2000:])
        t0 = time.monotonic()
        status, _ = d.http("GET", "/healthz", raw=True, timeout=5)
        self.assertEqual(status, 200)
        self.assertLess(time.monotonic() - t0, 1.0, "/healthz slow")
        self.assertLess(rss_kib(d.proc.pid), 512 * 1024, "RSS above 512 MiB")

    def assert_clean_run(self, doc, provider, tests, sizes, verify):
        self.assertEqual(doc["state"], "completed", doc.get("error"))
        self.assertEqual(doc["spec"]["transport"], "ofi")
        self.assertEqual(len(doc["points"]), len(tests) * len(sizes))
        for p in doc["points"]:
            check_point_sane(self, p)
            if verify:
                # What was checked, not what was asked: every point compared bytes.
                self.assertTrue(p["verified"], p)
                self.assertGreaterEqual(p["verified_bytes"], p["size_bytes"])
        path = [w for w in doc["warnings"] if w.startswith("libfabric ")]
        self.assertTrue(path and path[0].startswith(f"libfabric {provider}"), doc["warnings"])

    def test_every_provider_and_op_sweeps_clean(self):
        sizes = ["1", "4K", "64K", "1M", "8M"]
        tests = ["latency", "bandwidth", "bidir"]
        for provider in PROVIDERS:
            for op in OPS:
                with self.subTest(provider=provider, op=op):
                    rc, out, err = self.sweep(self.b, "--ofi-provider", provider, "--ofi-op", op, "--test", ",".join(tests),
                                              "--sizes", ",".join(sizes), "--max-time", "0.1", "--verify", "--streams", "2")
                    self.assertEqual(rc, 0, err)
                    self.assert_clean_run(json.loads(out), provider, tests, sizes, verify=True)

    def test_whole_range_by_default_provider(self):
        # No --ofi-provider: of efa, cxi, verbs, tcp, the two daemons share tcp here.
        rc, out, err = self.sweep(self.b, "--test", "latency,bandwidth", "--sizes", "1..8M", "--max-time", "0.05")
        self.assertEqual(rc, 0, err)
        doc = json.loads(out)
        self.assert_clean_run(doc, "tcp", ["latency", "bandwidth"], list(range(24)), verify=False)
        bw = [p for p in doc["points"] if p["test"] == "bandwidth"]
        self.assertGreater(bw[-1]["gbit_per_s"], bw[0]["gbit_per_s"], "8 MiB messages no faster than 1 B ones")

    def test_corruption_fails_the_point_at_the_receiving_end(self):
        corrupt = Daemon(env={"MESHPERF_TEST_CORRUPT_OFI": "1"})
        try:
            cases = [  # (initiator, peer, extra args, the end that receives corrupted data)
                (self.a, corrupt, ["--test", "latency"], "at the initiator"),
                (self.a, corrupt, ["--test", "bandwidth", "--reverse"], "at the initiator"),
                (corrupt, self.b, ["--test", "bandwidth"], "at the peer"),
            ]
            for initiator, peer, args, where in cases:
                for provider in PROVIDERS:
                    with self.subTest(args=args, provider=provider):
                        rc, out, err = self.sweep(peer, "--ofi-provider", provider, "--sizes", "4K", "--verify", *args,
                                                  initiator=initiator)
                        self.assertEqual(rc, 1, err)
                        doc = json.loads(out)
                        self.assertEqual(doc["state"], "failed")
                        self.assertIn("data verification failed", doc["error"])
                        self.assertIn(where, doc["error"])
            # Without --verify nothing is compared, and a point says so.
            rc, out, err = self.sweep(corrupt, "--ofi-provider", "tcp", "--sizes", "4K", "--test", "latency")
            self.assertEqual(rc, 0, err)
            self.assertFalse(json.loads(out)["points"][0]["verified"])
        finally:
            corrupt.cleanup()
        self.assert_daemon_ok(self.a)
        self.assert_daemon_ok(self.b)

    def collective(self, ranks, *args, timeout=180):
        hosts = ",".join(d.address for d in ranks)
        return run_cli("collective", "--hosts", hosts, "--transport", "ofi", "--format", "json", "-q", "--iterations", "5",
                       "--warmup", "1", *args, timeout=timeout)

    def test_collectives_over_ofi_are_verified_and_a_corrupting_rank_is_caught(self):
        more = [Daemon(), Daemon()]
        corrupt = None
        try:
            ranks = [self.a, self.b, *more]
            rc, out, err = self.collective(ranks, "--op", "allreduce,allgather,alltoall,broadcast", "--sizes", "4K,1M",
                                           "--verify")
            self.assertEqual(rc, 0, err)
            doc = json.loads(out)
            self.assertEqual(doc["spec"]["transport"], "ofi")
            self.assertEqual(len(doc["points"]), 8)
            for p in doc["points"]:
                self.assertEqual(p["wrong"], 0, p)
                self.assertGreater(p["busbw_gbyte_per_s"], 0)
            # A rank whose daemon corrupts what it sends (the engine's test hook): --verify counts it.
            corrupt = Daemon(env={"MESHPERF_TEST_CORRUPT_COLLECTIVE": "1"})
            rc, out, err = self.collective([self.a, self.b, corrupt], "--op", "allreduce", "--sizes", "64K", "--verify")
            doc = json.loads(out) if out.strip() else {}
            wrong = [p["wrong"] for p in doc.get("points", [])]
            self.assertTrue(wrong and all(w > 0 for w in wrong), f"exit {rc}, wrong {wrong}: {err}")
        finally:
            for d in more + ([corrupt] if corrupt else []):
                d.cleanup()
        self.assert_daemon_ok(self.a)
        self.assert_daemon_ok(self.b)

    def test_collective_rank_killed_mid_run(self):
        victim, other = Daemon(), Daemon()
        try:
            cli = subprocess.Popen([CLI, "collective", "--hosts", ",".join(d.address for d in (self.a, self.b, victim, other)),
                                    "--transport", "ofi", "--op", "allreduce", "--sizes", "64K..64M", "--iterations", "20",
                                    "--format", "json", "-q"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            time.sleep(2)
            self.assertIsNone(cli.poll(), "the collective ended before the kill")
            victim.proc.send_signal(signal.SIGKILL)
            at = time.monotonic()
            out, err = cli.communicate(timeout=FAULT_BOUND_S + 30)
            took = time.monotonic() - at
            self.assertNotEqual(cli.returncode, 0, err)
            self.assertLess(took, FAULT_BOUND_S, err)
            self.assertIn(victim.address.split(":")[1], err + out)
            for d in (self.a, self.b, other):
                self.assert_daemon_ok(d)
            rc, out, err = self.collective([self.a, self.b, other], "--op", "allreduce", "--sizes", "64K", "--verify")
            self.assertEqual(rc, 0, err)
        finally:
            victim.cleanup()
            other.cleanup()

    def test_bad_input_is_refused_with_exit_2(self):
        before = len(self.a.http("GET", "/v1/runs?limit=1000")[1]["runs"])
        cases = [
            (["--ofi-provider", "carrier-pigeon"], "is not on this daemon: it has ["),
            (["--ofi-op", "write"], "not in this meshperf yet"),
            (["--ofi-op", "semaphore"], "unknown libfabric operation 'semaphore'"),
            (["--memory", "cuda:0"], "FI_HMEM"),
            (["--test", "bandwidth", "--iterations", "10"], "--iterations is not supported"),
        ]
        for args, fragment in cases:
            with self.subTest(args=args):
                rc, out, err = self.sweep(self.b, "--sizes", "1K", *args)
                self.assertEqual(rc, 2, err)
                self.assertIn(fragment, err)
        rc, _, err = run_cli("sweep", "--initiator", self.a.address, self.b.address, "--ofi-provider", "tcp", "-q")
        self.assertEqual(rc, 2, err)
        self.assertIn("are for transport ofi", err)
        self.assertEqual(before, len(self.a.http("GET", "/v1/runs?limit=1000")[1]["runs"]))
        self.assert_daemon_ok(self.a)

    def run_fault(self, inflict, expect_rc):
        """A bandwidth sweep a -> a new peer, `inflict`ed on the peer 2.6 s in (its first point, of 1 s, done even on a
        busy host); returns the peer."""
        peer = Daemon()
        cli = subprocess.Popen([CLI, "sweep", "--initiator", self.a.address, peer.address, "--transport", "ofi",
                                "--ofi-provider", "tcp", "--test", "bandwidth", "--sizes", "64K,128K,256K,512K,1M",
                                "--duration", "1", "--format", "json", "-q"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            time.sleep(2.6)
            self.assertIsNone(cli.poll(), "the sweep ended before the fault")
            inflict(peer)
            at = time.monotonic()
            out, err = cli.communicate(timeout=FAULT_BOUND_S + 30)
            took = time.monotonic() - at
        finally:
            if cli.poll() is None:
                cli.kill()
                cli.communicate()
        self.assertEqual(cli.returncode, expect_rc, err)
        self.assertLess(took, FAULT_BOUND_S, err)
        doc = json.loads(out)
        self.assertEqual(doc["state"], "failed")
        self.assertIn(peer.address, doc["error"])
        self.assertGreaterEqual(len(doc["points"]), 1, "the points measured before the fault were lost")
        for p in doc["points"]:
            check_point_sane(self, p)
        return peer

    def test_peer_killed_mid_point(self):
        peer = self.run_fault(lambda d: d.proc.send_signal(signal.SIGKILL), 1)
        peer.cleanup()
        self.assert_daemon_ok(self.a)
        rc, out, err = self.sweep(self.b, "--ofi-provider", "tcp", "--sizes", "64K")
        self.assertEqual(rc, 0, err)

    def test_peer_frozen_mid_point(self):
        peer = self.run_fault(lambda d: d.proc.send_signal(signal.SIGSTOP), 1)
        try:
            self.assert_daemon_ok(self.a)
            peer.proc.send_signal(signal.SIGCONT)
            time.sleep(1)
            self.assert_daemon_ok(peer)
            # Both serve the next run, the thawed peer included.
            rc, out, err = self.sweep(peer, "--ofi-provider", "tcp", "--sizes", "64K")
            self.assertEqual(rc, 0, err)
        finally:
            peer.cleanup()


def ofi_here():
    """Why the suite cannot run here, or None: the daemon's /v1/info must list ofi with tcp and shm."""
    d = Daemon()
    try:
        _, info = d.http("GET", "/v1/info")
    finally:
        d.cleanup()
    entry = [t for t in info["transports"] if t["name"] == "ofi"]
    if not entry or not entry[0]["available"]:
        return f"ofi not available: {entry[0].get('reason') if entry else 'not a transport of this meshperfd'}"
    missing = [p for p in PROVIDERS if p not in info.get("ofi", {}).get("providers", [])]
    return f"libfabric has no {', '.join(missing)} provider here" if missing else None


if __name__ == "__main__":
    why = ofi_here()
    if why:
        print(f"SKIP: {why}")
        sys.exit(77)
    unittest.main(verbosity=2)

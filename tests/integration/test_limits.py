"""[limits] of the daemon's configuration: each limit refuses or caps, with its message.

max_bytes_per_point (fixed runs refused at submission and by the serving peer; adaptive and
duration points stopped at the cap by either side's limit), max_qps and max_streams (both
sides), max_queued_runs (503 with Retry-After), and all of them in GET /v1/info.
"""
import json
import os
import tempfile
import time
import unittest
import urllib.error
import urllib.request

from meshperf_harness import Daemon, check_point_sane


def config_daemon(text):
    """A daemon started with --config holding `text`."""
    fd, path = tempfile.mkstemp(prefix="meshperf-limits-", suffix=".toml")
    with os.fdopen(fd, "w") as f:
        f.write(text)
    d = Daemon(extra_args=["--config", path])
    d.config_path = path
    return d


def wait_finished(daemon, run_id, timeout=120):
    deadline = time.time() + timeout
    while time.time() < deadline:
        s, doc = daemon.http("GET", f"/v1/runs/{run_id}")
        if doc["state"] not in ("queued", "running"):
            return doc
        time.sleep(0.1)
    raise AssertionError(f"run {run_id} still {doc['state']} after {timeout} s")


def bandwidth(peer, **kw):
    spec = {"peer": peer, "tests": ["bandwidth"], "sizes": [65536], "warmup_s": 0.0}
    spec.update(kw)
    return spec


class LimitTests(unittest.TestCase):
    daemons = []

    @classmethod
    def setUpClass(cls):
        # capped: small limits of its own; free: the defaults.
        cls.capped = config_daemon('[limits]\nmax_streams = 4\nmax_qps = 2\nmax_bytes_per_point = "256M"\n'
                                   'max_queued_runs = 1\nmax_connections = 300\n')
        cls.free = Daemon()
        cls.daemons = [cls.capped, cls.free]

    @classmethod
    def tearDownClass(cls):
        for d in cls.daemons:
            d.cleanup()
            if hasattr(d, "config_path"):
                os.unlink(d.config_path)

    def submit(self, daemon, spec):
        return daemon.http("POST", "/v1/runs", spec)

    def test_info_lists_every_limit(self):
        s, info = self.capped.http("GET", "/v1/info")
        self.assertEqual(s, 200)
        lim = info["limits"]
        self.assertEqual(lim["max_streams"], 4)
        self.assertEqual(lim["max_qps"], 2)
        self.assertEqual(lim["max_bytes_per_point"], 256 << 20)
        self.assertEqual(lim["max_queued_runs"], 1)
        self.assertEqual(lim["max_connections"], 300)
        for key in ("max_iterations", "max_duration_s", "max_run_s"):
            self.assertIn(key, lim)
        s, info = self.free.http("GET", "/v1/info")
        self.assertEqual(info["limits"]["max_bytes_per_point"], 16 << 40)
        self.assertEqual(info["limits"]["max_connections"], 1024)
        self.assertEqual(info["limits"]["max_queued_runs"], 64)
        self.assertEqual(info["limits"]["max_qps"], 64)

    def test_fixed_run_beyond_byte_limit_is_refused_at_submission(self):
        # 5000 x 64 KiB x 2 streams = 625 MiB per direction > 256 MiB.
        s, b = self.submit(self.capped, bandwidth(self.free.address, iterations=5000, streams=2))
        self.assertEqual(s, 400, b)
        self.assertIn("would move 625 MiB per direction (5000 iterations x 64 KiB x 2 streams)", b["error"])
        self.assertIn("more than 256 MiB allowed per point", b["error"])
        self.assertIn("limits.max_bytes_per_point", b["error"])
        self.assertIn("use at most 2048 iterations", b["error"])

    def test_serving_peer_refuses_a_fixed_run_beyond_its_byte_limit(self):
        # free accepts it (its limit is 16 TiB); capped, serving, refuses it in the hello.
        s, doc = self.submit(self.free, bandwidth(self.capped.address, iterations=5000))
        self.assertEqual(s, 202, doc)
        doc = wait_finished(self.free, doc["id"])
        self.assertEqual(doc["state"], "failed", doc)
        self.assertIn("refuses the run spec", doc["error"])
        self.assertIn("more than 256 MiB allowed per point", doc["error"])

    def test_streams_and_qps_limits_both_sides(self):
        s, b = self.submit(self.capped, bandwidth(self.free.address, streams=5))
        self.assertEqual(s, 400, b)
        self.assertIn("limits.max_streams of this daemon is 4", b["error"])
        s, b = self.submit(self.capped, bandwidth(self.free.address, streams=3, transport="rdma"))
        self.assertEqual(s, 400, b)
        self.assertIn("streams 3 is out of range for RDMA: use 1..2 queue pairs per direction", b["error"])
        self.assertIn("limits.max_qps", b["error"])
        # Served side: free initiates 3 QPs towards capped, which refuses before any RDMA setup.
        s, doc = self.submit(self.free, bandwidth(self.capped.address, streams=3, transport="rdma", duration_s=0.5))
        self.assertEqual(s, 202, doc)
        doc = wait_finished(self.free, doc["id"])
        self.assertEqual(doc["state"], "failed", doc)
        self.assertIn("queue pairs per direction", doc["error"])
        self.assertIn("max_qps", doc["error"])
        # And 5 TCP streams towards capped.
        s, doc = self.submit(self.free, bandwidth(self.capped.address, streams=5, duration_s=0.5))
        doc = wait_finished(self.free, doc["id"])
        self.assertEqual(doc["state"], "failed", doc)
        self.assertIn("limits.max_streams of this daemon is 4", doc["error"])

    def check_capped_point(self, doc, cap):
        self.assertEqual(doc["state"], "completed", doc.get("error"))
        p = doc["points"][0]
        check_point_sane(self, p)
        self.assertTrue(any("stopped at the byte limit: 256 MiB per direction" in w for w in p["warnings"]), p["warnings"])
        # Stopped long before its 8 s, having moved no more than the cap.
        self.assertLess(p["duration_s"], 6.0)
        for f in p["flows"]:
            self.assertLessEqual(f["bytes"], cap)
            self.assertGreater(f["bytes"], cap // 4)  # most of it is in the measured window (no warm-up)

    def test_duration_point_stops_at_the_initiators_byte_limit(self):
        s, doc = self.submit(self.capped, bandwidth(self.free.address, duration_s=8.0))
        self.assertEqual(s, 202, doc)
        self.check_capped_point(wait_finished(self.capped, doc["id"]), 256 << 20)

    def test_adaptive_reverse_point_stops_at_the_serving_peers_byte_limit(self):
        # free initiates; capped serves and sends (reverse): its own limit stops its senders.
        s, doc = self.submit(self.free, bandwidth(self.capped.address, reverse=True, max_point_s=8.0, precision=0.0001))
        self.assertEqual(s, 202, doc)
        self.check_capped_point(wait_finished(self.free, doc["id"]), 256 << 20)

    def test_full_queue_is_503_with_retry_after(self):
        # One run measuring (3 s), one waiting: the queue (max_queued_runs = 1) is full.
        s, running = self.submit(self.capped, bandwidth(self.free.address, tests=["latency"], sizes=[64], duration_s=3.0))
        self.assertEqual(s, 202, running)
        deadline = time.time() + 20
        while time.time() < deadline:
            s, doc = self.capped.http("GET", f"/v1/runs/{running['id']}")
            if doc["state"] == "running":
                break
            time.sleep(0.05)
        s, waiting = self.submit(self.capped, bandwidth(self.free.address, tests=["latency"], sizes=[64], duration_s=0.2))
        self.assertEqual(s, 202, waiting)
        req = urllib.request.Request(f"http://{self.capped.address}/v1/runs", method="POST",
                                     data=json.dumps(bandwidth(self.free.address)).encode(),
                                     headers={"Content-Type": "application/json"})
        with self.assertRaises(urllib.error.HTTPError) as cm:
            urllib.request.urlopen(req, timeout=10)
        e = cm.exception
        self.assertEqual(e.code, 503)
        self.assertEqual(e.headers["Retry-After"], "10")
        body = json.loads(e.read())
        self.assertIn("the run queue is full: 1 runs are already waiting", body["error"])
        self.assertIn("limits.max_queued_runs = 1", body["error"])
        self.assertIn("retry in 10 s", body["error"])
        self.assertEqual(body["retry_after_s"], 10)
        # Both accepted runs still complete; afterwards there is room again.
        for r in (running, waiting):
            self.assertEqual(wait_finished(self.capped, r["id"])["state"], "completed")
        s, doc = self.submit(self.capped, bandwidth(self.free.address, tests=["latency"], sizes=[64], duration_s=0.2))
        self.assertEqual(s, 202, doc)
        self.assertEqual(wait_finished(self.capped, doc["id"])["state"], "completed")


if __name__ == "__main__":
    unittest.main()

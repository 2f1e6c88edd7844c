"""A frozen initiator must not lock its peer out (issue 25, attack 8).

"A peer whose initiator has made no progress for a bounded time (heartbeats on the session;
default <= 15 s, configurable) releases its gate and ends the session." Two cases:
  - real daemons A and B: a bandwidth run from A to B, A frozen with SIGSTOP mid-point; B's
    measurement gate (GET /v1/info queue.measuring) must be free within RELEASE_S, and a
    run from a third daemon C to B must then complete;
  - a session opened by hand (the upgrade answered 101) that then sends nothing at all.
The gate is polled every 0.25 s; POLL_SLACK_S covers the poll interval and scheduling.
Stopped processes get SIGCONT before they are killed.
"""
import json
import os
import re
import signal
import socket
import time
import unittest

from hostile_harness import Daemon, api_get, api_post_json, check_daemon, strict_json, wait_run_end

RELEASE_S = float(os.environ.get("MESHPERF_HOSTILE_RELEASE_S", "15"))
POLL_SLACK_S = 1.0


def measuring(tc, d):
    status, raw = api_get(d, "/v1/info", timeout=3)
    if status != 200:
        return None
    return strict_json(tc, raw, "GET /v1/info")["queue"]["measuring"]


def wait_until(pred, limit_s, step=0.25):
    """Polls pred() until it is true or limit_s passes; returns the seconds it took or None."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < limit_s:
        if pred():
            return time.monotonic() - t0
        time.sleep(step)
    return None


class FrozenInitiatorTests(unittest.TestCase):
    def setUp(self):
        self.daemons = []
        self.socks = []

    def tearDown(self):
        for s in self.socks:
            s.close()
        for d in self.daemons:
            if d.proc and d.proc.poll() is None:
                d.proc.send_signal(signal.SIGCONT)  # before the kill: a stopped process is killed only once it runs
            d.cleanup()

    def daemon(self):
        d = Daemon()
        self.daemons.append(d)
        return d

    def assert_gate_released_and_usable(self, b, since, what):
        released = wait_until(lambda: measuring(self, b) == "", RELEASE_S + POLL_SLACK_S)
        print(f"\nhostile: {what}: peer's gate {'free after %.1f s' % (time.monotonic() - since) if released is not None else 'still held after %.0f s' % (RELEASE_S + POLL_SLACK_S)} "
              f"(holder now {measuring(self, b)!r})", flush=True)
        check_daemon(self, b, what)
        self.assertIsNotNone(released, f"{what}: the peer still holds its measurement gate "
                                       f"{RELEASE_S + POLL_SLACK_S:.0f} s later ({measuring(self, b)!r})")
        c = self.daemon()
        spec = json.dumps({"peer": b.address, "tests": ["latency"], "sizes": [64], "max_point_s": 0.1,
                           "warmup_s": 0.01}).encode()
        status, raw = api_post_json(c, "/v1/runs", spec)
        self.assertEqual(status, 202, raw)
        status, raw = wait_run_end(c, strict_json(self, raw, "POST /v1/runs")["id"], 60)
        doc = strict_json(self, raw, "the run from C")
        self.assertEqual(doc["state"], "completed", f"{what}: a run from another daemon to the peer: {doc.get('error')}")
        check_daemon(self, b, f"{what}: after a run from another daemon")

    def test_initiator_frozen_mid_point(self):
        a, b = self.daemon(), self.daemon()
        spec = json.dumps({"peer": b.address, "tests": ["bandwidth"], "sizes": [65536], "duration_s": 30,
                           "warmup_s": 0.1}).encode()
        status, raw = api_post_json(a, "/v1/runs", spec)
        self.assertEqual(status, 202, raw)
        held = wait_until(lambda: (measuring(self, b) or "").startswith("session from"), 20, step=0.1)
        self.assertIsNotNone(held, f"the peer never took the session: {measuring(self, b)!r}")
        time.sleep(1.0)  # inside the 30 s point: its end must not be what frees the gate
        a.proc.send_signal(signal.SIGSTOP)
        frozen_at = time.monotonic()
        self.assert_gate_released_and_usable(b, frozen_at, "initiator frozen (SIGSTOP) mid-point")

    def test_session_opened_then_silent(self):
        b = self.daemon()
        with socket.create_connection(("127.0.0.1", b.port), timeout=5) as s:
            s.sendall(b"GET /v1/session HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: meshperf-session/1\r\n\r\n")
            refusal = s.recv(4096)
        version = re.search(rb"speaks version (\d+)", refusal)
        self.assertIsNotNone(version, refusal)
        s = socket.create_connection(("127.0.0.1", b.port), timeout=5)
        self.socks.append(s)
        s.sendall(b"GET /v1/session HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: meshperf-session/1\r\n"
                  b"X-Meshperf-Protocol: " + version.group(1) + b"\r\n\r\n")
        self.assertIn(b" 101 ", s.recv(4096))
        opened_at = time.monotonic()
        self.assertTrue((measuring(self, b) or "").startswith("session from"))
        self.assert_gate_released_and_usable(b, opened_at, "session opened by hand, then silent")


if __name__ == "__main__":
    unittest.main()

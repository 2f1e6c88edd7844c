"""The HTTP API: bad input, queueing, cancellation, history across restarts."""
import json
import socket
import threading
import time
import unittest

from meshperf_harness import QUICK, Daemon, run_cli, write_token_file


def spec(peer, **kw):
    s = {"peer": peer, "tests": ["latency"], "sizes": [64], "max_point_s": 0.2, "warmup_s": 0.02}
    s.update(kw)
    return s


class ApiTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.a = Daemon()
        cls.b = Daemon()

    @classmethod
    def tearDownClass(cls):
        cls.a.cleanup()
        cls.b.cleanup()

    def assert_error(self, status, body, code, fragment):
        self.assertEqual(status, code, body)
        self.assertIn(fragment, body["error"])

    def test_malformed_json(self):
        s, b = self.a.http("POST", "/v1/runs", b"{not json")
        self.assert_error(s, b, 400, "not valid JSON")

    def test_wrong_types(self):
        s, b = self.a.http("POST", "/v1/runs", spec(self.b.address, streams="two"))
        self.assert_error(s, b, 400, "streams")
        s, b = self.a.http("POST", "/v1/runs", spec(self.b.address, sizes=[0]))
        self.assert_error(s, b, 400, "size")

    def test_unknown_field(self):
        s, b = self.a.http("POST", "/v1/runs", spec(self.b.address, colour="blue"))
        self.assert_error(s, b, 400, "unknown field 'colour'")

    def test_oversized_body(self):
        s, b = self.a.http("POST", "/v1/runs", b"{" + b" " * (200 * 1024) + b"}")
        self.assert_error(s, b, 413, "too large")

    def test_unknown_endpoint_and_method(self):
        s, b = self.a.http("GET", "/v2/nothing")
        self.assertEqual(s, 404)
        s, b = self.a.http("PUT", "/v1/runs", b"{}")
        self.assertEqual(s, 405)
        s, b = self.a.http("GET", "/v1/runs/r-does-not-exist")
        self.assertEqual(s, 404)
        s, b = self.a.http("GET", "/v1/runs?limit=abc")
        self.assert_error(s, b, 400, "limit")

    def test_garbage_bytes_do_not_hurt(self):
        for payload in (b"\x00\xff" * 500, b"GET / HTTP/1.1\r\nHost", b"MPF1\x00\x01\x00\x00\xff\xff\xff\xff", b"\r\n\r\n"):
            with socket.create_connection(("127.0.0.1", self.a.port), timeout=5) as c:
                try:  # the daemon may answer 400 and close before we finish
                    c.sendall(payload)
                    c.shutdown(socket.SHUT_WR)
                    c.recv(4096)
                except OSError:
                    pass
        self.assertTrue(self.a.alive())
        self.assertEqual(self.a.http("GET", "/healthz", raw=True)[0], 200)

    def test_two_concurrent_runs_queue_and_complete(self):
        results = {}

        def one(name):
            results[name] = run_cli("sweep", "--initiator", self.a.address, self.b.address, "--test", "bandwidth",
                                    "--sizes", "64K,1M", "--format", "json", "--max-time", "0.5", "-q")

        threads = [threading.Thread(target=one, args=(n,)) for n in ("x", "y")]
        threads[0].start()
        time.sleep(0.3)
        # While the first measures, a submitted run waits with a visible position.
        s, doc = self.a.http("POST", "/v1/runs", spec(self.b.address))
        self.assertEqual(s, 202)
        self.assertEqual(doc["state"], "queued")
        self.assertGreaterEqual(doc["queue_position"], 1)
        threads[1].start()
        for t in threads:
            t.join(120)
        for name, (rc, out, err) in results.items():
            self.assertEqual(rc, 0, f"{name}: {err}")
            self.assertEqual(json.loads(out)["state"], "completed")
        deadline = time.time() + 30
        while time.time() < deadline:
            s, d = self.a.http("GET", f"/v1/runs/{doc['id']}")
            if d["state"] == "completed":
                break
            time.sleep(0.2)
        self.assertEqual(d["state"], "completed")

    def test_cancel_running_run(self):
        s, doc = self.a.http("POST", "/v1/runs", spec(self.b.address, tests=["bandwidth"], sizes=[65536, 1048576],
                                                       duration_s=5.0))
        self.assertEqual(s, 202)
        time.sleep(1.0)
        s, b = self.a.http("DELETE", f"/v1/runs/{doc['id']}")
        self.assertEqual(s, 202, b)
        deadline = time.time() + 20
        while time.time() < deadline:
            s, d = self.a.http("GET", f"/v1/runs/{doc['id']}")
            if d["state"] not in ("queued", "running"):
                break
            time.sleep(0.1)
        self.assertEqual(d["state"], "cancelled")
        s, b = self.a.http("DELETE", f"/v1/runs/{doc['id']}")
        self.assertEqual(s, 409)
        # The daemons are free again.
        rc, out, err = run_cli("sweep", "--initiator", self.a.address, self.b.address, "--test", "latency",
                               "--sizes", "64", *QUICK)
        self.assertEqual(rc, 0, err)

    def test_ndjson_stream_events(self):
        import urllib.request
        req = urllib.request.Request(f"http://{self.a.address}/v1/runs", method="POST",
                                     data=json.dumps(spec(self.b.address, sizes=[1, 64])).encode(),
                                     headers={"Content-Type": "application/json", "Accept": "application/x-ndjson"})
        with urllib.request.urlopen(req, timeout=60) as r:
            self.assertEqual(r.headers["Content-Type"], "application/x-ndjson")
            events = [json.loads(l) for l in r.read().decode().splitlines() if l.strip()]
        kinds = [e["event"] for e in events]
        self.assertEqual(kinds.count("point"), 2)
        self.assertEqual(kinds[-1], "result")
        self.assertTrue(all("run_id" in e for e in events))
        self.assertEqual(events[-1]["result"]["state"], "completed")


class RestartTests(unittest.TestCase):
    def test_history_survives_restart(self):
        a, b = Daemon(), Daemon()
        try:
            rc, out, err = run_cli("sweep", "--initiator", a.address, b.address, "--test", "latency", "--sizes", "64",
                                   "--format", "json", *QUICK)
            self.assertEqual(rc, 0, err)
            run_id = json.loads(out)["id"]
            a.stop()
            a.start()
            s, doc = a.http("GET", f"/v1/runs/{run_id}")
            self.assertEqual(s, 200)
            self.assertEqual(doc["state"], "completed")
            self.assertEqual(len(doc["points"]), 1)
            s, lst = a.http("GET", "/v1/runs?limit=5")
            self.assertIn(run_id, [r["id"] for r in lst["runs"]])
        finally:
            a.cleanup()
            b.cleanup()


class AuthTests(unittest.TestCase):
    def test_token_required_and_checked(self):
        import os
        import subprocess
        import tempfile
        from meshperf_harness import DAEMON
        d = tempfile.mkdtemp(prefix="meshperf-auth-")
        token = os.path.join(d, "token")
        with open(token, "w") as f:
            f.write("s3cret-token-for-tests\n")
        os.chmod(token, 0o644)
        p = subprocess.run([DAEMON, "--listen", "127.0.0.1:1", "--state-dir", d, "--token-file", token],
                           capture_output=True, text=True, timeout=10)
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("chmod 600", p.stderr)
        os.chmod(token, 0o600)
        a = Daemon(extra_args=["--token-file", token])
        b = Daemon(extra_args=["--token-file", token])
        try:
            self.assertEqual(a.http("GET", "/healthz", raw=True)[0], 200)
            s, body = a.http("GET", "/v1/info")
            self.assertEqual(s, 401)
            self.assertIn("bearer token", body["error"])
            s, body = a.http("GET", "/v1/info", headers={"Authorization": "Bearer wrong"})
            self.assertEqual(s, 401)
            s, body = a.http("GET", "/v1/info", headers={"Authorization": "Bearer s3cret-token-for-tests"})
            self.assertEqual(s, 200)
            self.assertTrue(body["auth"])
            rc, out, err = run_cli("sweep", "--initiator", a.address, b.address, "--test", "latency", "--sizes", "64", *QUICK)
            self.assertEqual(rc, 2)
            self.assertIn("token", err)
            rc, out, err = run_cli("--token-file", token, "sweep", "--initiator", a.address, b.address, "--test",
                                   "latency,bandwidth", "--sizes", "64", *QUICK)
            self.assertEqual(rc, 0, err)
        finally:
            a.cleanup()
            b.cleanup()


class ThrottleTests(unittest.TestCase):
    def test_repeated_bad_tokens_are_slowed_down(self):
        import urllib.request
        token = write_token_file("good-token", "meshperf-throttle-")
        a = Daemon(extra_args=["--token-file", token])
        try:
            statuses = [a.http("GET", "/v1/info", headers={"Authorization": "Bearer bad"})[0] for _ in range(5)]
            self.assertEqual(statuses[0], 401)
            self.assertEqual(statuses[-1], 429)
            req = urllib.request.Request(f"http://{a.address}/v1/info", headers={"Authorization": "Bearer bad"})
            try:
                urllib.request.urlopen(req, timeout=10)
                self.fail("a throttled request succeeded")
            except urllib.error.HTTPError as e:
                self.assertEqual(e.code, 429)
                self.assertGreaterEqual(int(e.headers["Retry-After"]), 1)
            self.assertEqual(a.http("GET", "/healthz", raw=True)[0], 200)
        finally:
            a.cleanup()


class ListenTests(unittest.TestCase):
    """Issue 26 item 8: a --listen the daemon cannot honour ends it with the reason (exit 2),
    instead of a healthy-looking unit serving 127.0.0.1 that nobody can reach."""

    def run_daemon(self, *args):
        import subprocess
        import tempfile
        from meshperf_harness import DAEMON
        d = tempfile.mkdtemp(prefix="meshperf-listen-")
        return subprocess.run([DAEMON, "--state-dir", d, *args], capture_output=True, text=True, timeout=10)

    def test_not_an_address(self):
        p = self.run_daemon("--listen", "nonsense")
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("'nonsense' is not an IP address", p.stderr)
        self.assertNotIn("listening on", p.stderr)

    def test_non_loopback_without_token(self):
        p = self.run_daemon("--listen", "10.77.0.1:8150")
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("without authentication", p.stderr)
        self.assertIn("--token-file", p.stderr)

    def test_loopback_fallback_only_when_asked(self):
        import subprocess
        import tempfile
        import urllib.request
        from meshperf_harness import DAEMON, free_port
        port = free_port()
        state = tempfile.mkdtemp(prefix="meshperf-listen-")
        p = subprocess.Popen([DAEMON, "--state-dir", state, "--listen", f"0.0.0.0:{port}", "--loopback-fallback"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        status = None
        try:
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline and status is None and p.poll() is None:
                try:
                    with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=1) as r:
                        status = r.status
                except OSError:
                    time.sleep(0.1)
        finally:
            p.terminate()
            _, err = p.communicate(timeout=10)
        self.assertEqual(status, 200, err)
        self.assertIn("--loopback-fallback", err)

if __name__ == "__main__":
    unittest.main()

"""Bad input and faults: each ends with a clear error, nothing lost, the daemon stays up."""
import http.server
import json
import signal
import socket
import subprocess
import threading
import time
import unittest

from meshperf_harness import CLI, QUICK, Daemon, free_port, run_cli


class FaultTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.a = Daemon()

    @classmethod
    def tearDownClass(cls):
        cls.a.cleanup()

    def sweep(self, peer, *extra):
        return run_cli("sweep", "--initiator", self.a.address, peer, "--test", "latency", "--sizes", "64", *QUICK, *extra)

    def assert_daemon_ok(self):
        self.assertTrue(self.a.alive())
        self.assertEqual(self.a.http("GET", "/healthz", raw=True)[0], 200)

    def test_unreachable_peer(self):
        rc, out, err = self.sweep(f"127.0.0.1:{free_port()}")
        self.assertEqual(rc, 1)
        self.assertIn("cannot reach peer", err)
        self.assertIn("refused", err.lower())
        self.assert_daemon_ok()

    def test_unreachable_initiator(self):
        rc, out, err = run_cli("sweep", "--initiator", f"127.0.0.1:{free_port()}", "127.0.0.1:7470", *QUICK)
        self.assertEqual(rc, 3)
        self.assertIn("cannot reach meshperfd", err)

    def test_peer_is_an_http_server_not_meshperfd(self):
        server = http.server.HTTPServer(("127.0.0.1", 0), http.server.SimpleHTTPRequestHandler)
        t = threading.Thread(target=server.serve_forever, daemon=True)
        t.start()
        try:
            rc, out, err = self.sweep(f"127.0.0.1:{server.server_address[1]}")
        finally:
            server.shutdown()
        self.assertEqual(rc, 1)
        self.assertIn("not a meshperfd", err)
        self.assert_daemon_ok()

    def test_peer_speaks_garbage(self):
        listener = socket.socket()
        listener.bind(("127.0.0.1", 0))
        listener.listen(4)

        def serve():
            try:
                c, _ = listener.accept()
                c.recv(4096)
                c.sendall(b"SSH-2.0-OpenSSH_9.2\r\n" + bytes(range(256)))
                c.close()
            except OSError:
                pass

        threading.Thread(target=serve, daemon=True).start()
        rc, out, err = self.sweep(f"127.0.0.1:{listener.getsockname()[1]}")
        listener.close()
        self.assertEqual(rc, 1)
        self.assertIn("not a meshperfd", err)
        self.assert_daemon_ok()

    def test_version_mismatch(self):
        other = Daemon(env={"MESHPERF_SESSION_PROTOCOL": "2"})
        try:
            rc, out, err = self.sweep(other.address)
            # The peer refused the session with 426; it must still be up (it used to crash).
            try:
                peer_health = other.http("GET", "/healthz", raw=True, timeout=10)[0]
            except OSError as e:
                peer_health = f"no answer ({e})"
            self.assertEqual(peer_health, 200, "the peer stopped serving after refusing the session")
            self.assertTrue(other.alive(), f"the peer exited after refusing the session: {other.read_log()[-2000:]}")
        finally:
            other.cleanup()
        self.assertEqual(rc, 1)
        self.assertIn("protocol mismatch", err)
        self.assert_daemon_ok()

    def test_invalid_options_send_nothing(self):
        cases = [
            (["--sizes", "0"], "zero"),
            (["--sizes", "4M..1K"], "backwards"),
            (["--test", "latncy"], "unknown test 'latncy'"),
            (["--sizes", "2G"], "larger than the maximum"),
            (["--streams", "0"], "streams 0"),
            (["--iterations", "10", "--duration", "1"], "give one of them"),
            (["--sizes", "12Q"], "unknown unit"),
        ]
        before = self.a.http("GET", "/v1/runs?limit=1000")[1]["runs"]
        for args, fragment in cases:
            rc, out, err = run_cli("sweep", "--initiator", self.a.address, "127.0.0.1:1", *args, "-q")
            self.assertEqual(rc, 2, f"{args}: {err}")
            self.assertIn(fragment, err, f"{args}")
            self.assertEqual(err.count("\n"), 1, f"one line expected: {err!r}")
        after = self.a.http("GET", "/v1/runs?limit=1000")[1]["runs"]
        self.assertEqual(len(before), len(after))

    def test_peer_killed_mid_run(self):
        b = Daemon()
        proc = subprocess.Popen([CLI, "sweep", "--initiator", self.a.address, b.address, "--test", "bandwidth",
                                 "--sizes", "64K,128K,256K,512K,1M", "--duration", "1", "--format", "json", "-q"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        time.sleep(1.6)
        b.proc.send_signal(signal.SIGKILL)
        out, err = proc.communicate(timeout=60)
        b.cleanup()
        self.assertEqual(proc.returncode, 1, err)
        doc = json.loads(out) if out.strip() else None
        msg = doc["error"] if doc else err
        self.assertIn(b.address, msg)
        self.assertRegex(msg, r"point \d+/5 \(bandwidth")
        self.assert_daemon_ok()
        # The next run works.
        c = Daemon()
        try:
            rc, out, err = self.sweep(c.address)
            self.assertEqual(rc, 0, err)
        finally:
            c.cleanup()


if __name__ == "__main__":
    unittest.main()


class NoRdmaDeviceTests(unittest.TestCase):
    """On a node without RDMA devices the daemon serves TCP and says plainly why RDMA cannot run."""

    def test_rdma_without_device(self):
        import os
        if os.path.isdir("/sys/class/infiniband") and os.listdir("/sys/class/infiniband"):
            self.skipTest("this machine has RDMA devices")
        a, b = Daemon(), Daemon()
        try:
            s, info = a.http("GET", "/v1/info")
            rdma = [t for t in info["transports"] if t["name"] == "rdma"][0]
            self.assertFalse(rdma["available"])
            self.assertTrue(rdma.get("reason"))
            rc, out, err = run_cli("sweep", "--initiator", a.address, b.address, "--transport", "rdma", "--test",
                                   "latency", "--sizes", "8", *QUICK)
            self.assertEqual(rc, 1, err)
            self.assertRegex(err.lower(), r"no rdma device|not built")
            rc, out, err = run_cli("sweep", "--initiator", a.address, b.address, "--test", "latency", "--sizes", "8", *QUICK)
            self.assertEqual(rc, 0, err)
        finally:
            a.cleanup()
            b.cleanup()

    def test_gpu_memory_without_gpu(self):
        a, b = Daemon(), Daemon()
        try:
            s, info = a.http("GET", "/v1/info")
            if info["gpus"]["available"]:
                self.skipTest("this machine has a usable GPU")
            reason = r"(no NVIDIA driver|driver too old|no CUDA device|GPU support is not built)"
            rc, out, err = run_cli("sweep", "--initiator", a.address, b.address, "--memory", "cuda:0", "--test",
                                   "latency", "--sizes", "8", *QUICK)
            self.assertEqual(rc, 1, err)
            self.assertRegex(err, r"initiator memory:? cuda:0: " + reason)
            # Only the peer's memory is on a GPU: the peer refuses the session and says why.
            rc, out, err = run_cli("sweep", "--initiator", a.address, b.address, "--remote-memory", "cuda:0", "--test",
                                   "bandwidth", "--sizes", "64K", *QUICK)
            self.assertEqual(rc, 1, err)
            self.assertRegex(err, r"peer memory:? cuda:0: " + reason)
            # GPU memory over RDMA with --verify is refused at submission, before any device is needed.
            rc, out, err = run_cli("sweep", "--initiator", a.address, b.address, "--transport", "rdma", "--memory",
                                   "cuda:0", "--verify", "--test", "bandwidth", "--sizes", "64K", *QUICK)
            self.assertNotEqual(rc, 0, err)
            self.assertIn("--verify with GPU memory over RDMA", err)
            # Both daemons still serve host-memory sweeps.
            rc, out, err = run_cli("sweep", "--initiator", a.address, b.address, "--test", "latency", "--sizes", "8", *QUICK)
            self.assertEqual(rc, 0, err)
        finally:
            a.cleanup()
            b.cleanup()

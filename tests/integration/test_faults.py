"""Bad input and faults: each ends with a clear error, nothing lost, the daemon stays up."""
import http.server
import json
import signal
import socket
import subprocess
import threading
import time
import unittest
import urllib.parse

from meshperf_harness import CLI, QUICK, Daemon, free_port, run_cli, write_token_file

# A name that cannot resolve and that glibc refuses without asking a name server (a label
# may not begin with '-'), so the tests send nothing off this host.
UNRESOLVABLE = "-no-such-host-"


class TcpForwarder:
    """Forwards connections from 127.0.0.1:<port> to `target_port`, as NAT would: a daemon
    reached through it cannot tell by the address that it is talking to itself."""

    def __init__(self, target_port, max_connections=16):
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(8)
        self.listener.settimeout(0.2)
        self.port = self.listener.getsockname()[1]
        self.target_port = target_port
        self.max_connections = max_connections
        self.stopping = False
        self.thread = threading.Thread(target=self.accept_loop, daemon=True)
        self.thread.start()

    def accept_loop(self):
        for _ in range(self.max_connections):
            while not self.stopping:
                try:
                    client, _ = self.listener.accept()
                    break
                except socket.timeout:
                    continue
            if self.stopping:
                return
            upstream = socket.create_connection(("127.0.0.1", self.target_port), timeout=5)
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self.pump, args=(a, b), daemon=True).start()

    @staticmethod
    def pump(src, dst):
        src.settimeout(30)
        try:
            while data := src.recv(65536):
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for s in (src, dst):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
            src.close()  # the other direction's pump closes dst

    def close(self):
        self.stopping = True
        self.thread.join(5)
        self.listener.close()


def own_non_loopback_ipv4():
    """An IPv4 address of this host that is not loopback, or None."""
    try:
        out = subprocess.run(["hostname", "-I"], capture_output=True, text=True, timeout=5).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    for a in out.split():
        if "." in a and not a.startswith("127."):
            return a
    return None


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
        # Version 1 is the protocol before heartbeat frames (2026-12-03): a real older daemon.
        other = Daemon(env={"MESHPERF_SESSION_PROTOCOL": "1"})
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

    def test_initiator_and_peer_the_same_daemon(self):
        """Refused at submission (exit 2, nothing queued), however the peer names this daemon."""
        before = len(self.a.http("GET", "/v1/runs?limit=1000")[1]["runs"])
        for peer in (self.a.address, f"localhost:{self.a.port}", f"LocalHost:{self.a.port}"):
            t0 = time.monotonic()
            rc, out, err = self.sweep(peer)
            elapsed = time.monotonic() - t0
            print(f"\nfaults: sweep --initiator {self.a.address} {peer}: exit {rc} in {elapsed:.2f} s")
            self.assertEqual(rc, 2, err)
            self.assertIn("initiator and peer are the same daemon", err)
            self.assertIn("peer", err)
            self.assertLess(elapsed, 5)
        status, body = self.a.http("POST", "/v1/runs", {"peer": self.a.address})
        self.assertEqual(status, 400)
        self.assertTrue(body["error"].startswith("peer: initiator and peer are the same daemon"), body)
        # Another port of this host is another daemon: not refused at submission.
        status, body = self.a.http("POST", "/v1/runs", {"peer": f"127.0.0.1:{free_port()}", "tests": "latency",
                                                        "sizes": "64"})
        self.assertEqual(status, 202, body)
        self.assertEqual(len(self.a.http("GET", "/v1/runs?limit=1000")[1]["runs"]), before + 1)
        self.assert_daemon_ok()

    def test_same_daemon_on_every_address(self):
        """A daemon listening on 0.0.0.0 is also named by 127.0.0.1 and by the host's own addresses."""
        token_file = write_token_file("same-daemon-token")
        port = free_port()

        class WildcardDaemon(Daemon):
            def start(self):
                self.extra_args = ["--token-file", token_file]
                self.address = f"0.0.0.0:{self.port}"
                try:
                    super().start()
                finally:
                    self.address = f"127.0.0.1:{self.port}"

        d = WildcardDaemon(port=port)
        try:
            peers = [f"127.0.0.1:{port}", f"localhost:{port}"]
            if own := own_non_loopback_ipv4():
                peers.append(f"{own}:{port}")
            for peer in peers:
                t0 = time.monotonic()
                rc, out, err = run_cli("--token-file", token_file, "sweep", "--initiator", f"127.0.0.1:{port}", peer,
                                       "--test", "latency", "--sizes", "64", *QUICK, timeout=60)
                elapsed = time.monotonic() - t0
                print(f"\nfaults: daemon on 0.0.0.0:{port}, peer {peer}: exit {rc} in {elapsed:.2f} s")
                self.assertEqual(rc, 2, err)
                self.assertIn("initiator and peer are the same daemon", err)
                self.assertLess(elapsed, 5)
        finally:
            d.cleanup()

    def test_session_to_itself_through_a_forwarder_fails_at_once(self):
        """What the submission cannot see (NAT, an alias): the session carries the daemon's
        instance id and the daemon refuses its own session at once, never waiting 120 s for
        its own measurement gate."""
        fwd = TcpForwarder(self.a.port)
        try:
            t0 = time.monotonic()
            try:
                rc, out, err = run_cli("sweep", "--initiator", self.a.address, f"127.0.0.1:{fwd.port}", "--test",
                                       "latency", "--sizes", "64", *QUICK, timeout=30)
            except subprocess.TimeoutExpired:
                self.fail("a session to itself did not fail within 30 s (it waited for its own gate)")
            elapsed = time.monotonic() - t0
        finally:
            fwd.close()
        print(f"\nfaults: session to itself through a forwarder: exit {rc} in {elapsed:.2f} s: {err.strip()}")
        self.assertEqual(rc, 1, err)
        self.assertIn("initiator and peer are the same daemon", err)
        self.assertNotIn("busy", err)
        self.assertLess(elapsed, 5)
        self.assert_daemon_ok()

    def test_unresolvable_initiator(self):
        rc, out, err = run_cli("sweep", f"--initiator={UNRESOLVABLE}:7470", "127.0.0.1:7470", *QUICK)
        self.assertEqual(rc, 3, err)
        self.assertIn(f"cannot resolve {UNRESOLVABLE}", err)
        self.assertNotIn("No route to host", err)
        rc, out, err = run_cli("info", "--", UNRESOLVABLE)
        self.assertEqual(rc, 3, err)
        self.assertIn(f"cannot resolve {UNRESOLVABLE}", err)

    def test_unresolvable_peer(self):
        rc, out, err = run_cli("sweep", "--initiator", self.a.address, "--test", "latency", "--sizes", "64", *QUICK,
                               "--", f"{UNRESOLVABLE}:7470")
        self.assertEqual(rc, 1, err)
        self.assertIn(f"cannot resolve peer {UNRESOLVABLE}", err)
        self.assertNotIn("No route to host", err)
        runs = self.a.http("GET", "/v1/runs?limit=1")[1]["runs"]
        run = self.a.http("GET", f"/v1/runs/{runs[0]['id']}")[1]
        self.assertEqual(run["state"], "failed")
        self.assertIn(f"cannot resolve peer {UNRESOLVABLE}", run["error"])
        self.assert_daemon_ok()

    def test_peer_query_parameter_is_validated_alike(self):
        for bad in ("::::", "node:0", "node:65536", "[::1", "[::1]x"):
            for path in ("/v1/runs", "/v1/baselines"):
                status, body = self.a.http("GET", f"{path}?peer={urllib.parse.quote(bad)}")
                self.assertEqual(status, 400, f"{path}?peer={bad}: {body}")
                self.assertTrue(body["error"].startswith("peer: "), body)
        for good in ("node2", "node2:7470", "[::1]:7470", "10.0.0.2"):
            for path in ("/v1/runs", "/v1/baselines"):
                status, body = self.a.http("GET", f"{path}?peer={urllib.parse.quote(good)}")
                self.assertEqual(status, 200, f"{path}?peer={good}: {body}")

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


if __name__ == "__main__":
    unittest.main()

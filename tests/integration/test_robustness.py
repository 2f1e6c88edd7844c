"""Robustness under faults: a frozen peer, connection floods, fuzzed HTTP, a full state disk.

Every case is bounded in time and in count, uses loopback only, and checks that the daemon
stays up and still completes a sweep afterwards. Restart keeps history: see test_api.RestartTests.
"""
import json
import os
import random
import resource
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
import unittest

from meshperf_harness import CLI, QUICK, Daemon, run_cli

IDLE_CONNECTIONS = 500
API_CLIENTS = 200
FUZZ_CASES = 300
FUZZ_SEED = 20261129


def latency_sweep(initiator, peer, *extra):
    return run_cli("sweep", "--initiator", initiator.address, peer.address, "--test", "latency", "--sizes", "64",
                   *QUICK, *extra, timeout=120)


class RobustnessBase(unittest.TestCase):
    def assert_daemon_ok(self, d):
        self.assertTrue(d.alive(), "meshperfd exited")
        self.assertEqual(d.http("GET", "/healthz", raw=True, timeout=10)[0], 200)


class FrozenPeerTests(RobustnessBase):
    def test_peer_frozen_with_sigstop(self):
        a, b = Daemon(), Daemon()
        try:
            proc = subprocess.Popen([CLI, "sweep", "--initiator", a.address, b.address, "--test", "bandwidth",
                                     "--sizes", "64K,128K,256K,512K,1M", "--duration", "1", "--format", "json", "-q"],
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            time.sleep(1.6)
            b.proc.send_signal(signal.SIGSTOP)
            frozen_at = time.monotonic()
            try:
                out, err = proc.communicate(timeout=90)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.communicate()
                self.fail("the run against a frozen peer did not end within 90 s")
            elapsed = time.monotonic() - frozen_at
            print(f"\nrobustness: frozen peer: run ended {elapsed:.1f} s after SIGSTOP, exit {proc.returncode}")
            self.assertEqual(proc.returncode, 1, err)
            doc = json.loads(out) if out.strip() else None
            msg = doc["error"] if doc else err
            self.assertIn(b.address, msg)
            self.assertRegex(msg, r"point \d+/5 \(bandwidth")
            self.assertRegex(msg, r"did not answer in time|timed out|timeout")
            self.assert_daemon_ok(a)
        finally:
            b.proc.send_signal(signal.SIGCONT)
            b.cleanup()
        c = None
        try:
            c = Daemon()
            rc, out, err = latency_sweep(a, c)
            self.assertEqual(rc, 0, err)
        finally:
            if c:
                c.cleanup()
            a.cleanup()


class FloodTests(RobustnessBase):
    def test_idle_connections_and_concurrent_clients(self):
        need = IDLE_CONNECTIONS + API_CLIENTS + 200
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        if soft != resource.RLIM_INFINITY and soft < need:
            if hard != resource.RLIM_INFINITY and hard < need:
                self.skipTest(f"ulimit -n hard limit {hard} < {need}")
            resource.setrlimit(resource.RLIMIT_NOFILE, (need, hard))
        a, b = Daemon(), Daemon()
        idle = []
        try:
            # Slowloris: half send nothing, half a partial request header.
            for i in range(IDLE_CONNECTIONS):
                s = socket.create_connection(("127.0.0.1", a.port), timeout=5)
                if i % 2:
                    s.sendall(b"GET /v1/info HTTP/1.1\r\nHost: x\r\nX-Slow: ")
                idle.append(s)
            self.assert_daemon_ok(a)

            served, failed = [0], [0]
            lock = threading.Lock()
            paths = ["/v1/info", "/healthz"]

            def client(k):
                ok = bad = 0
                for j in range(5):
                    try:
                        s, _ = a.http("GET", paths[(k + j) % 2], raw=True, timeout=20)
                        if s == 200:
                            ok += 1
                        else:
                            bad += 1
                    except OSError:
                        bad += 1
                with lock:
                    served[0] += ok
                    failed[0] += bad

            threads = [threading.Thread(target=client, args=(k,), daemon=True) for k in range(API_CLIENTS)]
            t0 = time.monotonic()
            for t in threads:
                t.start()
            # While the flood runs: /healthz answers and a sweep completes.
            self.assert_daemon_ok(a)
            rc, out, err = latency_sweep(a, b)
            self.assertEqual(rc, 0, err)
            for t in threads:
                t.join(120)
            self.assertFalse(any(t.is_alive() for t in threads), "API clients still running after 120 s")
            elapsed = time.monotonic() - t0

            # How many idle connections the daemon still holds (no EOF, no reset).
            held = 0
            for s in idle:
                s.setblocking(False)
                try:
                    held += 0 if s.recv(1) == b"" else 1
                except BlockingIOError:
                    held += 1
                except OSError:
                    pass
            print(f"\nrobustness: flood: {IDLE_CONNECTIONS} idle connections opened, {held} still held; "
                  f"{API_CLIENTS} clients: {served[0]} requests served, {failed[0]} failed in {elapsed:.1f} s; "
                  f"sweep during the flood completed")
            self.assertEqual(failed[0], 0)
            self.assertEqual(served[0], API_CLIENTS * 5)
            self.assert_daemon_ok(a)
        finally:
            for s in idle:
                s.close()
            a.cleanup()
            b.cleanup()
        # File descriptors released: a fresh request and sweep still work is covered above.


class ConnectionLimitTests(RobustnessBase):
    def test_idle_connections_are_dropped_at_the_limit_oldest_first(self):
        limit, opened = 50, 80
        state = tempfile.mkdtemp(prefix="meshperf-it-")
        config = os.path.join(state, "meshperfd.toml")
        with open(config, "w") as f:
            f.write(f"[limits]\nmax_connections = {limit}\n")
        a, b = Daemon(state_dir=state, extra_args=["--config", config]), Daemon()
        idle = []
        try:
            for _ in range(opened):
                idle.append(socket.create_connection(("127.0.0.1", a.port), timeout=5))
                time.sleep(0.005)  # accepted in order, so "oldest" is well defined
            time.sleep(0.5)
            # Over the limit, the daemon made room by dropping the longest-idle ones.
            self.assert_daemon_ok(a)
            rc, out, err = latency_sweep(a, b)
            self.assertEqual(rc, 0, err)
            closed = []
            for i, s in enumerate(idle):
                s.setblocking(False)
                try:
                    if s.recv(1) == b"":
                        closed.append(i)
                except BlockingIOError:
                    pass
                except OSError:
                    closed.append(i)
            print(f"\nrobustness: max_connections={limit}: {opened} idle connections opened, {len(closed)} dropped "
                  f"(first {closed[:3]}..., last {closed[-3:]}), /healthz and a sweep served")
            self.assertGreaterEqual(len(closed), opened - limit)
            # The dropped ones are the oldest: the newest connection is still held.
            self.assertNotIn(opened - 1, closed)
            self.assertEqual(closed[: opened - limit], list(range(opened - limit)))
            self.assertIn("connection limit (50) reached", a.read_log())
        finally:
            for s in idle:
                s.close()
            a.cleanup()
            b.cleanup()
            shutil.rmtree(state, ignore_errors=True)


class FuzzTests(RobustnessBase):
    def fuzz_case(self, rng, i):
        kind = i % 4
        if kind == 0:  # random bytes
            return bytes(rng.getrandbits(8) for _ in range(rng.randint(1, 2048)))
        valid = (b"POST /v1/runs HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                 b"Content-Length: 40\r\n\r\n{\"peer\": \"127.0.0.1:1\", \"test\": \"x\"}xx")
        if kind == 1:  # truncated HTTP
            return valid[:rng.randint(1, len(valid) - 1)]
        if kind == 2:  # mutated HTTP
            b = bytearray(valid)
            for _ in range(rng.randint(1, 8)):
                b[rng.randrange(len(b))] = rng.getrandbits(8)
            return bytes(b)
        # hostile header values
        choice = rng.choice([b"Content-Length: -1", b"Content-Length: 99999999999999999999",
                             b"Transfer-Encoding: chunked", b"X: " + b"A" * rng.randint(1000, 70000),
                             b"Content-Length: 5\r\nContent-Length: 7", b"\x00\x00: \xff"])
        return b"GET /v1/info HTTP/1.1\r\nHost: x\r\n" + choice + b"\r\n\r\n"

    def test_random_bytes_and_truncated_http(self):
        a, b = Daemon(), Daemon()
        rng = random.Random(FUZZ_SEED)
        cases = [self.fuzz_case(rng, i) for i in range(FUZZ_CASES)]
        outcome = {"answered": 0, "dropped": 0, "held": 0}
        lock = threading.Lock()

        def send(data):
            try:
                with socket.create_connection(("127.0.0.1", a.port), timeout=5) as s:
                    s.settimeout(3)
                    try:
                        s.sendall(data)
                        s.shutdown(socket.SHUT_WR)
                        got = s.recv(4096)
                        res = "answered" if got else "dropped"
                    except socket.timeout:
                        res = "held"
                    except OSError:
                        res = "dropped"
            except OSError:
                res = "dropped"
            with lock:
                outcome[res] += 1

        try:
            t0 = time.monotonic()
            for start in range(0, len(cases), 20):
                batch = [threading.Thread(target=send, args=(c,), daemon=True) for c in cases[start:start + 20]]
                for t in batch:
                    t.start()
                for t in batch:
                    t.join(30)
                self.assertTrue(a.alive(), f"meshperfd died during fuzz batch starting at case {start}")
            print(f"\nrobustness: fuzz: {FUZZ_CASES} cases (seed {FUZZ_SEED}) in {time.monotonic() - t0:.1f} s: "
                  f"{outcome}")
            self.assertEqual(sum(outcome.values()), FUZZ_CASES)
            self.assert_daemon_ok(a)
            rc, out, err = latency_sweep(a, b)
            self.assertEqual(rc, 0, err)
        finally:
            a.cleanup()
            b.cleanup()


class FullStateDirTests(RobustnessBase):
    def test_state_dir_on_full_tmpfs(self):
        if os.geteuid() != 0:
            self.skipTest("needs root (mounts a tmpfs)")
        if not shutil.which("mount") or not shutil.which("umount"):
            self.skipTest("mount/umount not installed")
        work = tempfile.mkdtemp(prefix="meshperf-fulltmpfs-")
        mnt = os.path.join(work, "state")
        os.mkdir(mnt)
        p = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m,mode=0755", "tmpfs", mnt],
                           capture_output=True, text=True)
        if p.returncode != 0:
            shutil.rmtree(work, ignore_errors=True)
            self.skipTest(f"cannot mount a tmpfs: {p.stderr.strip()}")
        log_path = os.path.join(work, "daemon.log")
        a = b = None

        class OutsideLogDaemon(Daemon):
            def start(self):
                self.log_path = log_path   # the log must not need the full disk
                super().start()

        try:
            a = OutsideLogDaemon(state_dir=mnt)
            b = Daemon()
            rc, out, err = latency_sweep(a, b, "--format", "json")
            self.assertEqual(rc, 0, err)
            before = len(a.http("GET", "/v1/runs?limit=1000")[1]["runs"])
            # Fill the disk.
            with open(os.path.join(mnt, "filler"), "wb") as f:
                try:
                    while True:
                        f.write(b"\0" * 65536)
                        f.flush()
                except OSError:
                    pass
            rc, out, err = run_cli("sweep", "--initiator", a.address, b.address, "--test", "latency",
                                   "--sizes", "64,1K", "--format", "json", *QUICK, timeout=120)
            print(f"\nrobustness: full tmpfs: sweep exit {rc}; stderr {err.strip()!r}")
            doc = json.loads(out)
            self.assertEqual(len(doc["points"]), 2, out)
            warnings = json.dumps(doc.get("warnings", [])) + json.dumps([p.get("warnings") for p in doc["points"]])
            self.assertIn("result not stored", warnings + err, out)
            print(f"robustness: full tmpfs: result returned with {len(doc['points'])} points, "
                  f"warnings {doc.get('warnings')}")
            self.assert_daemon_ok(a)
            with open(log_path) as f:
                log = f.read()
            self.assertRegex(log.lower(), r"not stored|full|no space|sqlite|store", log[-2000:])
            # Space again: storing works again and the daemon did not lose its earlier history.
            os.unlink(os.path.join(mnt, "filler"))
            rc, out, err = latency_sweep(a, b, "--format", "json")
            self.assertEqual(rc, 0, err)
            self.assertNotIn("result not stored", out)
            after = len(a.http("GET", "/v1/runs?limit=1000")[1]["runs"])
            self.assertGreaterEqual(after, before + 1)
        finally:
            for d in (a, b):
                if d:
                    d.cleanup()
            subprocess.run(["umount", "-l", mnt], capture_output=True)
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    unittest.main()

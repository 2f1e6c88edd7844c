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
import ssl
import subprocess
import tempfile
import threading
import time
import unittest

from meshperf_harness import CLI, QUICK, Daemon, run_cli, write_token_file

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


def upgrade_exchange(port, path, headers=(), timeout=5):
    """Sends `GET path` asking for a connection upgrade, with `headers` ("Name: value"), and
    reads the answer until the daemon closes the connection. Returns (status, body)."""
    head = [f"GET {path} HTTP/1.1", "Host: 127.0.0.1", "Connection: Upgrade", *headers]
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall(("\r\n".join(head) + "\r\n\r\n").encode())
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    status_line, _, rest = data.partition(b"\r\n")
    _, _, body = rest.partition(b"\r\n\r\n")
    return int(status_line.split()[1]), body.decode(errors="replace")


class UpgradeRefusalTests(RobustnessBase):
    """Every way meshperfd refuses a session or data-stream upgrade: each refusal is answered
    with its status and message, and the daemon stays up after each (a 426 used to kill it)."""

    PROTOCOL = "3"   # pinned with MESHPERF_SESSION_PROTOCOL, so the cases do not follow the default
    ENV = {"MESHPERF_SESSION_PROTOCOL": PROTOCOL}

    def refuse_each(self, d, cases, auth=()):
        for path, headers, status, fragment in cases:
            with self.subTest(path=path, headers=headers):
                got, body = upgrade_exchange(d.port, path, [*auth, *headers])
                self.assertEqual(got, status, body)
                self.assertIn(fragment, body)
            # Outside the subTest: a dead daemon stops the test at the case that killed it.
            self.assert_still_serving(d, f"{path} {headers}")

    def assert_still_serving(self, d, after):
        try:
            status = d.http("GET", "/healthz", raw=True, timeout=10)[0]
        except OSError as e:
            status = f"no answer ({e})"
        self.assertEqual(status, 200, f"meshperfd stopped serving after the refusal of {after}")
        self.assertTrue(d.alive(), f"meshperfd exited after the refusal of {after}")

    def protocol_cases(self):
        """Refusals every daemon gives, whatever its authentication."""
        proto = f"X-Meshperf-Protocol: {self.PROTOCOL}"
        return [
            ("/v1/stream", ["Upgrade: meshperf-data"], 426, "protocol mismatch"),
            ("/v1/stream", ["Upgrade: meshperf-data/1", "X-Meshperf-Protocol: 2"], 426, "version 2"),
            ("/v1/stream", ["Upgrade: meshperf-data/1", "X-Meshperf-Protocol: not-a-number"], 426, "protocol mismatch"),
            ("/v1/session", ["Upgrade: meshperf-session/1"], 426, "the initiator version none"),
            ("/v1/session", ["Upgrade: meshperf-session/1", "X-Meshperf-Protocol: 999999999999"], 426, "protocol mismatch"),
            ("/v1/session", ["Upgrade: websocket", proto], 400, "meshperf-session/1 expected"),
            ("/v1/session", [proto], 400, "meshperf-session/1 expected"),
            ("/v1/stream", ["Upgrade: websocket", proto], 403, "no session expects this data stream"),
            ("/v1/stream", ["Upgrade: meshperf-data/1", proto], 403, "no session expects this data stream"),
            ("/v1/stream?token=0123456789abcdef&index=0", ["Upgrade: meshperf-data/1", proto], 403,
             "no session expects this data stream"),
            ("/v1/stream?token=x&index=99999999999999999999999", ["Upgrade: meshperf-data/1", proto], 403,
             "no session expects this data stream"),
        ]

    def test_refusals_without_a_token(self):
        d = Daemon(env=self.ENV)
        try:
            self.refuse_each(d, self.protocol_cases())
            # The one-measurement gate: a second session while one holds it gets 503.
            proto = f"X-Meshperf-Protocol: {self.PROTOCOL}"
            with socket.create_connection(("127.0.0.1", d.port), timeout=5) as holder:
                holder.sendall(("GET /v1/session HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\n"
                                f"Upgrade: meshperf-session/1\r\n{proto}\r\n\r\n").encode())
                self.assertIn(b" 101 ", holder.recv(4096))
                self.refuse_each(d, [("/v1/session", ["Upgrade: meshperf-session/1", proto], 503, "measuring")])
            self.assert_still_serving(d, "a session upgrade (accepted)")
        finally:
            d.cleanup()

    def test_refusals_with_a_token(self):
        token_file = write_token_file("upgrade-refusal-token")
        d = Daemon(env=self.ENV, extra_args=["--token-file", token_file])
        try:
            self.refuse_each(d, self.protocol_cases(), auth=["Authorization: Bearer upgrade-refusal-token"])
            upgrade = ["Upgrade: meshperf-session/1", f"X-Meshperf-Protocol: {self.PROTOCOL}"]
            # Failures last: three in a row are free, the fourth makes the address wait (429).
            self.refuse_each(d, [
                ("/v1/session", upgrade, 401, "bearer token"),
                ("/v1/stream", ["Upgrade: meshperf-data/1", "Authorization: Bearer wrong"], 401, "bearer token"),
                ("/v1/session", [*upgrade, "Authorization: Bearer wrong"], 401, "bearer token"),
                ("/v1/stream?token=x&index=0", ["Upgrade: meshperf-data/1", f"X-Meshperf-Protocol: {self.PROTOCOL}",
                                                "Authorization: Bearer wrong"], 401, "bearer token"),
                ("/v1/session", [*upgrade, "Authorization: Bearer wrong"], 429, "too many failed authentications"),
            ])
        finally:
            d.cleanup()
            shutil.rmtree(os.path.dirname(token_file), ignore_errors=True)

    def test_refusal_by_allowed_peer_cidrs(self):
        fd, path = tempfile.mkstemp(prefix="meshperf-cidrs-", suffix=".toml")
        with os.fdopen(fd, "w") as f:
            f.write('[limits]\nallowed_peer_cidrs = ["10.255.0.0/16"]\n')
        d = Daemon(env=self.ENV, extra_args=["--config", path])
        try:
            self.refuse_each(d, [
                ("/v1/session", ["Upgrade: meshperf-session/1", f"X-Meshperf-Protocol: {self.PROTOCOL}"], 403,
                 "allowed_peer_cidrs"),
                ("/v1/stream", ["Upgrade: meshperf-data"], 403, "allowed_peer_cidrs"),
            ])
        finally:
            d.cleanup()
            os.unlink(path)

    @unittest.skipUnless(shutil.which("openssl"), "needs the openssl command to make certificates")
    def test_refusals_of_a_tls_daemon(self):
        import test_tls as certs   # a module import: its TestCase is not collected here
        work = tempfile.mkdtemp(prefix="meshperf-upgrade-tls-")
        certs.make_ca(work, "ca")
        certs.make_leaf(work, "ca", "node")
        d = Daemon(env=self.ENV, extra_args=["--tls-cert", os.path.join(work, "node.pem"), "--tls-key",
                                             os.path.join(work, "node.key"), "--tls-ca", os.path.join(work, "ca.pem")])
        try:
            proto = f"X-Meshperf-Protocol: {self.PROTOCOL}"
            # Plain beside TLS: sessions must use TLS; data streams are still refused on their merits.
            self.refuse_each(d, [
                ("/v1/session", ["Upgrade: meshperf-session/1", proto], 403, "requires TLS for peer sessions"),
                ("/v1/stream", ["Upgrade: meshperf-data"], 426, "protocol mismatch"),
                ("/v1/stream", ["Upgrade: meshperf-data/1", proto], 403, "no session expects"),
            ])
            # Over TLS: data streams are refused (plain TCP by design).
            ctx = ssl.create_default_context(cafile=os.path.join(work, "ca.pem"))
            ctx.load_cert_chain(os.path.join(work, "node.pem"), os.path.join(work, "node.key"))
            with socket.create_connection(("127.0.0.1", d.port), timeout=10) as raw:
                with ctx.wrap_socket(raw, server_hostname="127.0.0.1") as s:
                    s.sendall(("GET /v1/stream HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\n"
                               f"Upgrade: meshperf-data/1\r\n{proto}\r\n\r\n").encode())
                    data = b""
                    while chunk := s.recv(65536):
                        data += chunk
            self.assertIn(b" 400 ", data.split(b"\r\n")[0])
            self.assertIn(b"data streams are plain TCP", data)
            self.assert_still_serving(d, "a data stream over TLS")
        finally:
            d.cleanup()
            shutil.rmtree(work, ignore_errors=True)


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

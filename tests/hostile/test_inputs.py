"""Issue 47: inputs the daemon and the CLI take from configuration, sysfs and requests, each
against the real binaries, each case ending with the hostile check (alive, /healthz < 1 s,
RSS bounded; hostile_harness.check_daemon).

- item 10: a rail's peer_address outside allowed_peer_cidrs, or not the peer's own address,
  gets no connection (and so no token) from the daemon;
- item 11: TOML nested 100,000 deep (config, [inspect] manifest, inspect --expect): exit 2
  with the reason, never a crash;
- items 8, 9: interfaces named c@tl, ra"q and ra\\xff\\xfe in a sysfs fixture: /v1/inspect
  and /metrics answer, /metrics and --prom-file pass `promtool check metrics`, `meshperf
  inspect --format json` prints valid JSON;
- item 13: runs to 30 dead peers with metrics_max_peers = 5: /metrics keeps 5, counts 25;
- item 15: 40 POST /v1/inspect at once on a large fixture: one runs, the others 503 with
  Retry-After, /healthz fast, RSS bounded; a client that leaves stops its inspection;
- item 12: /v1/info polled by two clients on a node with 1,000 interfaces (a network
  namespace of veths, root only): /healthz stays under 1 s.

Needs $MESHPERF_SYSFS_FIXTURE (tests/node/make_sysfs_fixture) for the sysfs cases and
promtool for the exposition checks; a case whose tool is missing is skipped, saying so.
"""
import json
import os
import shutil
import socket
import subprocess
import tempfile
import threading
import time
import unittest

from hostile_harness import (CLI, DAEMON, Daemon, api_get, api_post_json, check_daemon, free_port, run_cli,
                             timed_healthz, wait_run_end, write_token_file)

FIXTURE = os.environ.get("MESHPERF_SYSFS_FIXTURE", "")
PROMTOOL = shutil.which("promtool")
NAMES = [b"c@tl", b'ra"q', b"ra\xff\xfe"]  # legal Linux interface names (dev_valid_name)


def deep_toml(kind):
    if kind == "arrays":
        return b"[daemon]\nlisten = " + b"[" * 100_000 + b"1" + b"]" * 100_000 + b"\n"
    if kind == "tables":
        return b"gpus = " + b"{a = " * 30_000 + b"1" + b"}" * 30_000 + b"\n"
    return b"a." * 100_000 + b"b = 1\n"


def promtool_check(tc, text, what):
    """promtool check metrics on `text` (bytes): no parse error (exit 1); lint notes (exit 3) are
    printed, not failed."""
    p = subprocess.run([PROMTOOL, "check", "metrics"], input=text, capture_output=True, timeout=30)
    out = (p.stdout + p.stderr).decode("utf-8", "replace")
    print(f"hostile: promtool check metrics on {what}: exit {p.returncode} {out.strip()[:300]}", flush=True)
    tc.assertNotIn("error while linting", out, f"{what}: {out}")
    tc.assertNotIn("parsing error", out, f"{what}: {out}")
    tc.assertIn(p.returncode, (0, 3), f"{what}: {out}")


def post_inspect(d, timeout=120):
    """(status, body) of POST /v1/inspect {} on a new connection that stays open both ways until
    the answer (the daemon takes a client that shuts its sending side for one that left)."""
    raw = b"POST /v1/inspect HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: application/json\r\n" \
          b"Content-Length: 2\r\n\r\n{}"
    with socket.create_connection(("127.0.0.1", d.port), timeout=timeout) as s:
        s.sendall(raw)
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    return (int(head.split(b" ", 2)[1]) if head.startswith(b"HTTP/1.1 ") else None), body


class Listener:
    """A TCP listener on (host, port) that records every connection it accepts and what it read."""

    def __init__(self, host, port):
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind((host, port))
        self.sock.listen(16)
        self.sock.settimeout(0.2)
        self.seen = []
        self.stop = False
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def serve(self):
        while not self.stop:
            try:
                c, _ = self.sock.accept()
            except OSError:
                continue
            c.settimeout(1)
            try:
                self.seen.append(c.recv(4096))
            except OSError:
                self.seen.append(b"")
            c.close()

    def close(self):
        self.stop = True
        self.thread.join(2)
        self.sock.close()


class InputTests(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="meshperf-hostile-inputs-")
        self.daemons = []

    def tearDown(self):
        for d in self.daemons:
            d.stop()
        shutil.rmtree(self.tmp, ignore_errors=True)

    def write(self, name, data):
        path = os.path.join(self.tmp, name)
        with open(path, "wb") as f:
            f.write(data if isinstance(data, bytes) else data.encode())
        return path

    def daemon(self, config=None, args=()):
        extra = list(args)
        if config is not None:
            extra += ["--config", self.write(f"d{len(self.daemons)}.toml", config)]
        d = Daemon(extra_args=extra)
        self.daemons.append(d)
        return d

    def tree(self, name, devices=0):
        if not FIXTURE or not os.access(FIXTURE, os.X_OK):
            self.skipTest("MESHPERF_SYSFS_FIXTURE (tests/node/make_sysfs_fixture) is not set")
        path = os.path.join(self.tmp, name)
        subprocess.run([FIXTURE, path], check=True, timeout=20)
        pci = os.path.join(path, "bus/pci/devices")
        for i in range(devices):  # plain PCI functions in domain 0001 (neither GPU nor NIC): work for every walk
            bdf = f"0001:{i // 256:02x}:{(i // 8) % 32:02x}.{i % 8}"
            dev = os.path.join(path, "devices/pci0001:00", bdf)
            os.makedirs(dev, exist_ok=True)
            for f, v in (("vendor", "0x8086"), ("device", "0x1234"), ("class", "0x088000")):
                with open(os.path.join(dev, f), "w") as fh:
                    fh.write(v + "\n")
            os.symlink(dev, os.path.join(pci, bdf))
        return path

    def rename_netdevs(self, tree):
        """Renames three of the fixture's rails to legal but unusual names; returns them."""
        net = os.fsencode(os.path.join(tree, "class/net"))
        old = sorted(n for n in os.listdir(net) if n.startswith(b"enp"))[:len(NAMES)]
        for o, n in zip(old, NAMES):
            link = os.path.join(net, o)
            target = os.path.realpath(link)  # the device's net/<name>: renamed as the kernel would
            renamed = os.path.join(os.path.dirname(target), n)
            os.rename(target, renamed)
            os.unlink(link)
            os.symlink(renamed, os.path.join(net, n))
        return NAMES

    # item 10 ------------------------------------------------------------------------------

    def rail_run(self, a, b, peer_address):
        spec = {"peer": b.address, "tests": ["bandwidth"], "sizes": [65536], "iterations": 10,
                "rails": [{"name": "lo", "peer_name": "lo", "local_address": "127.0.0.1", "peer_address": peer_address}]}
        status, raw = api_post_json(a, "/v1/runs", json.dumps(spec).encode(), headers=[f"Authorization: Bearer {self.token}"])
        self.assertEqual(status, 202, raw[:300])
        run_id = json.loads(raw)["id"]
        end = time.monotonic() + 30
        while time.monotonic() < end:
            status, doc = a.http("GET", f"/v1/runs/{run_id}", headers={"Authorization": f"Bearer {self.token}"})
            if status != 200 or doc.get("state") not in ("queued", "running"):
                return doc if status == 200 else {"state": f"GET answered {status}"}
            time.sleep(0.1)
        return {"state": "still running after 30 s"}

    def test_rail_addresses_pass_the_allow_list_and_the_peers_inventory(self):
        self.token = "issue47-item10-token"
        token_file = write_token_file(self.token)
        b = self.daemon(args=["--token-file", token_file])
        fake = Listener("127.0.0.5", b.port)  # where the rail would take the stream, and its token
        try:
            a = self.daemon('[limits]\nallowed_peer_cidrs = ["127.0.0.1/32"]\n', ["--token-file", token_file])
            doc = self.rail_run(a, b, "127.0.0.5")
            self.assertEqual(doc.get("state"), "failed", doc)
            self.assertIn("127.0.0.5 is not in this daemon's allowed_peer_cidrs", doc.get("error", ""), doc)
            # No allow-list at the initiator: the peer refuses a rail address that is not its own.
            a2 = self.daemon(args=["--token-file", token_file])
            doc = self.rail_run(a2, b, "127.0.0.5")
            self.assertEqual(doc.get("state"), "failed", doc)
            self.assertIn("peer_address 127.0.0.5 is not an address of this peer's interfaces", doc.get("error", ""), doc)
            time.sleep(0.3)
            self.assertEqual(fake.seen, [], "a daemon connected to the rail address 127.0.0.5")
            for d, case in ((a, "rail outside allowed_peer_cidrs"), (a2, "rail not the peer's"), (b, "peer")):
                check_daemon(self, d, case)
        finally:
            fake.close()

    # item 11 ------------------------------------------------------------------------------

    def test_deep_toml_is_refused_with_exit_2(self):
        for kind in ("arrays", "tables", "dotted"):
            path = self.write(f"deep-{kind}.toml", deep_toml(kind))
            p = subprocess.run([DAEMON, "--listen", f"127.0.0.1:{free_port()}", "--state-dir", self.tmp, "--config", path],
                               capture_output=True, timeout=30)
            err = p.stdout.decode("utf-8", "replace") + p.stderr.decode("utf-8", "replace")
            print(f"hostile: meshperfd --config deep {kind}: exit {p.returncode}: {err.strip()[-200:]}", flush=True)
            self.assertEqual(p.returncode, 2, err[-500:])
            self.assertTrue("nested deeper than 64" in err or "more than 64 parts" in err, err[-500:])
            manifest_config = self.write(f"manifest-{kind}.toml", f'[inspect]\nmanifest = "{path}"\n')
            p = subprocess.run([DAEMON, "--listen", f"127.0.0.1:{free_port()}", "--state-dir", self.tmp, "--config",
                                manifest_config], capture_output=True, timeout=30)
            err = p.stdout.decode("utf-8", "replace") + p.stderr.decode("utf-8", "replace")
            print(f"hostile: meshperfd [inspect] manifest deep {kind}: exit {p.returncode}: {err.strip()[-200:]}", flush=True)
            self.assertEqual(p.returncode, 2, err[-500:])
            rc, out, err = run_cli("inspect", "--expect", path, "--sysfs-root", self.tmp, timeout=30)
            print(f"hostile: meshperf inspect --expect deep {kind}: exit {rc}: {(out + err).strip()[-200:]}", flush=True)
            self.assertIn(rc, (2, 3), out + err)  # a usage error (2, or UNKNOWN 3 for the Nagios verdict), no signal
            self.assertTrue("nested deeper than 64" in out + err or "more than 64 parts" in out + err, out + err)

    # items 8 and 9 ------------------------------------------------------------------------

    def test_interface_names_linux_allows_reach_every_output(self):
        tree = self.tree("odd-names")
        self.rename_netdevs(tree)
        d = self.daemon('[rails]\ninclude = ["enp*", "c@*", "ra*"]\n[inspect]\ninterval = 0\n', ["--sysfs-root", tree])
        status, raw = post_inspect(d)
        self.assertEqual(status, 200, raw[:300])
        doc = json.loads(raw.decode("utf-8"))  # strict: valid UTF-8
        names = {r.get("name") for r in doc.get("inventory", {}).get("rails", [])} | {
            f.get("subject", "") for f in doc.get("findings", [])}
        self.assertTrue(any("c@tl" in n for n in names), sorted(names)[:20])
        status, metrics = api_get(d, "/metrics")
        self.assertEqual(status, 200)
        metrics.decode("utf-8")  # strict
        self.assertIn(b"ra\xef\xbf\xbd\xef\xbf\xbd", metrics)  # U+FFFD for each byte that is not UTF-8
        if PROMTOOL:
            promtool_check(self, metrics, "/metrics with odd interface names")
        check_daemon(self, d, "inspection of interfaces c@tl, ra\"q, ra\\xff\\xfe")
        prom = os.path.join(self.tmp, "inspect.prom")
        rc, out, err = run_cli("inspect", "--sysfs-root", tree, "--format", "json", "--prom-file", prom, timeout=60)
        self.assertIn(rc, (0, 1, 2, 3), err)
        self.assertTrue(out, f"meshperf inspect printed nothing: exit {rc}: {err}")
        json.loads(out)
        with open(prom, "rb") as f:
            textfile = f.read()
        textfile.decode("utf-8")
        if PROMTOOL:
            promtool_check(self, textfile, "inspect --prom-file with odd interface names")
        else:
            print("hostile: promtool not installed: exposition checked as UTF-8 only", flush=True)

    # item 13 ------------------------------------------------------------------------------

    def test_metrics_keep_at_most_metrics_max_peers(self):
        d = self.daemon("[limits]\nmetrics_max_peers = 5\n")
        ids = []
        for _ in range(30):
            spec = {"peer": f"127.0.0.1:{free_port()}", "tests": ["latency"], "sizes": [64], "iterations": 10}
            status, raw = api_post_json(d, "/v1/runs", json.dumps(spec).encode())
            self.assertEqual(status, 202, raw[:300])
            ids.append(json.loads(raw)["id"])
        for run_id in ids:
            wait_run_end(d, run_id, deadline_s=30)
        status, metrics = api_get(d, "/metrics")
        self.assertEqual(status, 200)
        text = metrics.decode("utf-8")
        self.assertIn("meshperf_metrics_evicted_peers_total 25\n", text)
        self.assertEqual(text.count("meshperf_last_run_success{"), 5, text[-2000:])
        print(f"hostile: /metrics after 30 runs to dead peers: {len(metrics)} bytes", flush=True)
        if PROMTOOL:
            promtool_check(self, metrics, "/metrics after evictions")
        check_daemon(self, d, "30 runs to dead peers, metrics_max_peers = 5")

    # item 15 ------------------------------------------------------------------------------

    def test_inspections_are_bounded_and_stop_when_their_client_leaves(self):
        tree = self.tree("large", devices=int(os.environ.get("MESHPERF_HOSTILE_PCI_DEVICES", "6000")))
        d = self.daemon('[rails]\ninclude = ["enp*"]\n', ["--sysfs-root", tree])
        t0 = time.monotonic()
        status, _ = post_inspect(d)
        alone_s = time.monotonic() - t0
        print(f"hostile: one inspection of the large tree: {status} in {alone_s:.2f} s", flush=True)
        self.assertEqual(status, 200)
        answers, slowest = [], [0.0]
        stop = threading.Event()

        def probe():
            while not stop.is_set():
                st, el, _ = timed_healthz(d.port)
                slowest[0] = max(slowest[0], el if st == 200 else 99)
                time.sleep(0.05)

        def client():
            raw = b"POST /v1/inspect HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: application/json\r\n" \
                  b"Content-Length: 2\r\n\r\n{}"
            with socket.create_connection(("127.0.0.1", d.port), timeout=120) as s:
                s.sendall(raw)
                data = b""
                while True:
                    chunk = s.recv(65536)
                    if not chunk:
                        break
                    data += chunk
            answers.append(data)

        prober = threading.Thread(target=probe, daemon=True)
        prober.start()
        clients = [threading.Thread(target=client, daemon=True) for _ in range(40)]
        for c in clients:
            c.start()
        for c in clients:
            c.join(180)
        stop.set()
        prober.join(5)
        statuses = sorted(int(a.split(b" ", 2)[1]) for a in answers if a.startswith(b"HTTP/1.1 "))
        print(f"hostile: 40 POST /v1/inspect at once: {statuses.count(200)} x 200, {statuses.count(503)} x 503; "
              f"slowest /healthz {slowest[0] * 1000:.0f} ms", flush=True)
        self.assertEqual(len(statuses), 40)
        self.assertTrue(set(statuses) <= {200, 503}, statuses)
        self.assertGreaterEqual(statuses.count(200), 1)
        # 40 arrive within milliseconds, each inspection takes a tenth of a second or more: a bound
        # refuses most (the daemon before it ran all 40, 40 x 200).
        self.assertGreater(statuses.count(503), statuses.count(200), statuses)
        for a in answers:
            if b" 503 " in a.split(b"\r\n", 1)[0]:
                self.assertIn(b"retry-after: 5", a.lower())
        self.assertLess(slowest[0], 1.0)
        check_daemon(self, d, "40 concurrent inspections of a large tree")
        # A client that leaves: its inspection stops, so the next one is taken well before a
        # whole inspection's time (it would be refused with 503 while the first still ran).
        s = socket.create_connection(("127.0.0.1", d.port))
        s.sendall(b"POST /v1/inspect HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}")
        time.sleep(0.05)
        s.close()
        t0 = time.monotonic()
        status = None
        while time.monotonic() - t0 < alone_s * 3 + 5:
            status, _ = post_inspect(d)
            if status == 200:
                break
            time.sleep(0.05)
        self.assertEqual(status, 200)
        print(f"hostile: inspection after a client left: 200 {time.monotonic() - t0:.2f} s after the close "
              f"(a whole inspection: {alone_s:.2f} s)", flush=True)
        check_daemon(self, d, "an inspection whose client left")

    # item 12 ------------------------------------------------------------------------------

    def test_info_polled_on_a_node_with_1000_interfaces(self):
        if os.geteuid() != 0 or not shutil.which("ip"):
            self.skipTest("needs root and iproute2 (a network namespace of 1,000 veth interfaces)")
        ns = f"mp-inputs-{os.getpid()}"
        veth = f"mpi{os.getpid() % 100000}"
        subprocess.run(["ip", "netns", "add", ns], check=True)
        try:
            # veth pairs (500 pairs: 1,000 interfaces), as a Kubernetes node has one per pod;
            # dummies need a kernel module a container may lack.
            batch = "".join(f"link add v{i}a type veth peer name v{i}b\n" for i in range(500))
            subprocess.run(["ip", "-n", ns, "-batch", "-"], input=batch.encode(), check=True, timeout=60)
            subprocess.run(["ip", "link", "add", veth, "type", "veth", "peer", "name", "mpi-in", "netns", ns], check=True)
            subprocess.run(["ip", "addr", "add", "10.251.47.1/30", "dev", veth], check=True)
            subprocess.run(["ip", "link", "set", veth, "up"], check=True)
            for cmd in (["addr", "add", "10.251.47.2/30", "dev", "mpi-in"], ["link", "set", "mpi-in", "up"],
                        ["link", "set", "lo", "up"]):
                subprocess.run(["ip", "-n", ns, *cmd], check=True)
            token = "issue47-item12"
            port = free_port()
            with open(os.path.join(self.tmp, "ns-daemon.log"), "w") as log:
                proc = subprocess.Popen(["ip", "netns", "exec", ns, DAEMON, "--listen", f"10.251.47.2:{port}", "--state-dir",
                                         self.tmp, "--token-file", write_token_file(token)], stdout=log,
                                        stderr=subprocess.STDOUT)
                try:
                    self.poll_info_while_probing(proc, port, token)
                finally:
                    proc.terminate()
                    proc.wait(10)
        finally:
            subprocess.run(["ip", "link", "del", veth], check=False)
            subprocess.run(["ip", "netns", "del", ns], check=False)

    def poll_info_while_probing(self, proc, port, token):
        def get(path, auth=False, timeout=10):
            req = f"GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n" + \
                  (f"Authorization: Bearer {token}\r\n" if auth else "") + "\r\n"
            t0 = time.monotonic()
            with socket.create_connection(("10.251.47.2", port), timeout=timeout) as s:
                s.sendall(req.encode())
                data = b""
                while chunk := s.recv(65536):
                    data += chunk
            return data.split(b" ", 2)[1] if data else b"", time.monotonic() - t0

        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                if get("/healthz")[0] == b"200":
                    break
            except OSError:
                time.sleep(0.1)
        self.assertIsNone(proc.poll(), "meshperfd in the namespace exited")
        status, first = get("/v1/info", auth=True, timeout=60)
        self.assertEqual(status, b"200")
        stop = threading.Event()

        def poll():
            while not stop.is_set():
                get("/v1/info", auth=True, timeout=60)

        pollers = [threading.Thread(target=poll, daemon=True) for _ in range(2)]
        for p in pollers:
            p.start()
        worst = 0.0
        end = time.monotonic() + 5
        while time.monotonic() < end:
            st, el = get("/healthz", timeout=5)
            self.assertEqual(st, b"200")
            worst = max(worst, el)
            time.sleep(0.05)
        stop.set()
        for p in pollers:
            p.join(60)
        print(f"hostile: /v1/info with 1,000 interfaces ({first * 1000:.0f} ms alone), two pollers: slowest /healthz "
              f"{worst * 1000:.1f} ms", flush=True)
        # On the I/O thread the scan delayed /healthz by about its own time, once a second; off
        # it, /healthz waits for nothing but the CPU. On a shared 2-CPU machine both the scan
        # (0.16 to 6 s here) and that wait (0.1 to 1.7 s) vary too much for a tighter bound than
        # the suite's 1 s: the figures are printed.
        self.assertLess(worst, 1.0)
        self.assertIsNone(proc.poll())


if __name__ == "__main__":
    unittest.main()

"""Shared harness for the integration tests: real meshperfd processes on loopback.

Binaries come from $MESHPERF_DAEMON and $MESHPERF_CLI (set by CTest). Every daemon gets a
free port and its own state directory, and is killed when the test ends.
"""
import json
import math
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request

DAEMON = os.environ.get("MESHPERF_DAEMON", "build/daemon/meshperfd")
CLI = os.environ.get("MESHPERF_CLI", "build/client/meshperf")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Daemon:
    """One meshperfd on 127.0.0.1:<free port>."""

    def __init__(self, state_dir=None, env=None, port=None, extra_args=(), prefix=()):
        self.port = port or free_port()
        self.address = f"127.0.0.1:{self.port}"
        self.own_dir = state_dir is None
        self.state_dir = state_dir or tempfile.mkdtemp(prefix="meshperf-it-")
        self.log_path = os.path.join(self.state_dir, "daemon.log")
        self.env = dict(os.environ, **(env or {}))
        self.extra_args = list(extra_args)
        self.prefix = list(prefix)  # e.g. ["taskset", "-c", "0"]
        self.proc = None
        self.start()

    def start(self):
        self.log = open(self.log_path, "a")
        self.proc = subprocess.Popen(
            [*self.prefix, DAEMON, "--listen", self.address, "--state-dir", self.state_dir, *self.extra_args],
            stdout=self.log, stderr=subprocess.STDOUT, env=self.env)
        deadline = time.time() + 10
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"meshperfd exited early: {self.read_log()}")
            try:
                if self.http("GET", "/healthz", raw=True)[0] == 200:
                    return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("meshperfd did not become healthy in 10 s")

    def read_log(self):
        with open(self.log_path) as f:
            return f.read()

    def alive(self):
        return self.proc.poll() is None

    def http(self, method, path, body=None, headers=None, raw=False, timeout=30):
        data = body if isinstance(body, (bytes, type(None))) else json.dumps(body).encode()
        req = urllib.request.Request(f"http://{self.address}{path}", data=data, method=method, headers=headers or {})
        if data is not None and "Content-Type" not in (headers or {}):
            req.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(req, timeout=timeout) as r:
                payload = r.read()
                status = r.status
        except urllib.error.HTTPError as e:
            payload = e.read()
            status = e.code
        if raw:
            return status, payload
        return status, json.loads(payload) if payload else None

    def stop(self, sig=signal.SIGTERM):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.proc:
            self.log.close()

    def cleanup(self):
        self.stop(signal.SIGKILL)
        if self.own_dir:
            shutil.rmtree(self.state_dir, ignore_errors=True)


def write_token_file(token, prefix="meshperf-token-"):
    """Writes `token` to a new file, mode 0600 as meshperfd demands, and returns its path."""
    path = os.path.join(tempfile.mkdtemp(prefix=prefix), "token")
    with open(path, "w") as f:
        f.write(token + "\n")
    os.chmod(path, 0o600)
    return path


def run_cli(*args, timeout=180, env=None):
    """Runs the meshperf CLI; returns (exit code, stdout, stderr)."""
    p = subprocess.run([CLI, *args], capture_output=True, text=True, timeout=timeout,
                       env=dict(os.environ, **(env or {})))
    return p.returncode, p.stdout, p.stderr


# Quick settings for functional tests: short points, few sizes.
QUICK = ["--max-time", "0.2", "--warmup", "0.02", "-q"]


def finite_positive(x):
    return isinstance(x, (int, float)) and math.isfinite(x) and x > 0


def check_point_sane(tc, p):
    """Asserts every figure of a result point is positive, finite and consistent."""
    tc.assertIn(p["test"], ("latency", "bandwidth", "bidir"))
    tc.assertTrue(p["size_bytes"] > 0)
    if p["test"] == "latency":
        lat, rtt = p["lat_ns"], p["rtt_ns"]
        for k in ("min", "p50", "p90", "p99", "p999", "max", "mean"):
            tc.assertTrue(finite_positive(lat[k]), f"lat_ns.{k}={lat[k]}")
        tc.assertTrue(lat["min"] <= lat["p50"] <= lat["p90"] <= lat["p99"] <= lat["p999"] <= lat["max"])
        tc.assertAlmostEqual(rtt["p50"], 2 * lat["p50"], delta=1e-6 * rtt["p50"])
        tc.assertGreater(lat["count"], 0)
    else:
        tc.assertTrue(finite_positive(p["gbit_per_s"]))
        tc.assertTrue(finite_positive(p["msg_per_s"]))
        total = 0.0
        for f in p["flows"]:
            tc.assertTrue(finite_positive(f["bytes"]) and finite_positive(f["seconds"]))
            expect = f["bytes"] * 8 / f["seconds"] / 1e9
            tc.assertAlmostEqual(f["gbit_per_s"], expect, delta=1e-6 * expect)
            tc.assertAlmostEqual(f["msg_per_s"], f["bytes"] / p["size_bytes"] / f["seconds"], delta=1e-6 * f["msg_per_s"])
            total += f["gbit_per_s"]
        tc.assertAlmostEqual(total, p["gbit_per_s"], delta=1e-9 * total)
    cpu = p["cpu"]
    tc.assertTrue(math.isfinite(cpu["initiator_percent"]) and cpu["initiator_percent"] >= 0)
    tc.assertTrue(math.isfinite(cpu["peer_percent"]) and cpu["peer_percent"] >= 0)

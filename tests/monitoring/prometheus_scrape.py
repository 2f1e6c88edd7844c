#!/usr/bin/env python3
"""A real Prometheus server scrapes a meshperfd on loopback; after a scheduled probe has run,
Prometheus' query API returns meshperf's metrics.

Two daemons share a token; daemon A probes B every second ([schedule] in its config) and
requires the token on /metrics, which Prometheus sends from a credentials file, as
docs/operations.md shows. Prometheus scrapes A every second, keeps its storage in a
temporary directory, listens on a free loopback port and has no other target. Exit 0 pass,
1 fail, 77 skip (no prometheus binary). Prometheus and the daemons are killed at the end.
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
from meshperf_harness import Daemon, free_port  # noqa: E402

TOKEN = "prometheus-test-token"


def say(msg):
    print(f"prometheus-scrape: {msg}", flush=True)


def write(path, text, mode=0o600):
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, mode)
    return path


def get_json(url, timeout=5):
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return json.loads(r.read())


def query(base, expr):
    doc = get_json(f"{base}/api/v1/query?" + urllib.parse.urlencode({"query": expr}))
    if doc.get("status") != "success":
        raise RuntimeError(f"query {expr}: {doc}")
    return doc["data"]["result"]


def main():
    prometheus = shutil.which("prometheus")
    if not prometheus:
        say("SKIP: the prometheus binary is not installed (apt-get install prometheus)")
        return 77
    tmp = tempfile.mkdtemp(prefix="meshperf-prom-")
    daemons, prom = [], None
    try:
        token_file = write(os.path.join(tmp, "token"), TOKEN + "\n")
        b = Daemon(extra_args=["--token-file", token_file])
        daemons.append(b)
        config = write(os.path.join(tmp, "meshperfd.toml"), f"""
[auth]
metrics_require_token = true

[schedule]
peers = ["{b.address}"]
tests = ["latency", "bandwidth"]
sizes = ["64", "64K"]
interval = "1s"
jitter = "0s"
point_duration = "100ms"
""", 0o644)
        a = Daemon(extra_args=["--token-file", token_file, "--config", config])
        daemons.append(a)
        auth = {"Authorization": f"Bearer {TOKEN}"}
        if a.http("GET", "/metrics", raw=True)[0] != 401:
            say("FAIL: /metrics answered without the token although the config requires it")
            return 1

        port = free_port()
        base = f"http://127.0.0.1:{port}"
        write(os.path.join(tmp, "prom-token"), TOKEN, 0o600)
        write(os.path.join(tmp, "prometheus.yml"), f"""
global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: meshperf
    authorization:
      credentials_file: {tmp}/prom-token
    static_configs:
      - targets: ["{a.address}"]
""", 0o644)
        log = open(os.path.join(tmp, "prometheus.log"), "w")
        prom = subprocess.Popen([prometheus, f"--config.file={tmp}/prometheus.yml", f"--storage.tsdb.path={tmp}/data",
                                 f"--web.listen-address=127.0.0.1:{port}", "--log.level=warn"],
                                stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.time() + 60
        while time.time() < deadline:
            if prom.poll() is not None:
                say(f"FAIL: prometheus exited with {prom.returncode}:\n" + open(os.path.join(tmp, "prometheus.log")).read())
                return 1
            try:
                with urllib.request.urlopen(f"{base}/-/ready", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            time.sleep(0.2)
        else:
            say("FAIL: prometheus not ready after 60 s")
            return 1
        say(f"prometheus ready on {base}, scraping {a.address}/metrics every 1 s")

        # A probe has run: the daemon itself says so.
        deadline = time.time() + 60
        while time.time() < deadline:
            _, runs = a.http("GET", f"/v1/runs?peer={b.address}&limit=10", headers=auth)
            if any(r["state"] == "completed" for r in runs["runs"]):
                break
            time.sleep(0.3)
        else:
            say(f"FAIL: no probe completed in 60 s: {runs}\n{a.read_log()}")
            return 1
        say("a scheduled probe completed")

        wanted = {
            "up": f'up{{job="meshperf"}} == 1',
            "bandwidth": f'meshperf_bandwidth_bits_per_second{{peer="{b.address}",test="bandwidth",size_bytes="65536"}}',
            "latency p50": f'meshperf_latency_seconds{{peer="{b.address}",size_bytes="64",quantile="0.5"}}',
            "completed runs": 'meshperf_runs_total{state="completed"} > 0',
            "build info": "meshperf_build_info",
            "queue": "meshperf_run_queue_length",
        }
        found = {}
        deadline = time.time() + 60
        while time.time() < deadline and len(found) < len(wanted):
            for name, expr in wanted.items():
                if name in found:
                    continue
                result = query(base, expr)
                if result:
                    found[name] = result
            time.sleep(0.5)
        for name, expr in wanted.items():
            if name not in found:
                targets = get_json(f"{base}/api/v1/targets")
                say(f"FAIL: {expr} returned nothing in 60 s; targets: {json.dumps(targets)[:2000]}")
                return 1
            for series in found[name]:
                say(f"{name}: {json.dumps(series['metric'], sort_keys=True)} = {series['value'][1]}")
        bw = float(found["bandwidth"][0]["value"][1])
        lat = float(found["latency p50"][0]["value"][1])
        if not (bw > 1e6 and 0 < lat < 1):
            say(f"FAIL: implausible figures: {bw} bit/s, {lat} s")
            return 1
        say("PASS")
        return 0
    finally:
        if prom and prom.poll() is None:
            os.killpg(prom.pid, signal.SIGTERM)
            try:
                prom.wait(15)
            except subprocess.TimeoutExpired:
                os.killpg(prom.pid, signal.SIGKILL)
                prom.wait()
        for d in daemons:
            d.cleanup()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())

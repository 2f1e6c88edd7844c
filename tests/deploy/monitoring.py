#!/usr/bin/env python3
"""The shipped Grafana dashboard and Prometheus rules against a real Prometheus.

    monitoring.py grafana   every PromQL expression of deploy/grafana/meshperf-dashboard.json
                            (panels and template variables) returns data
    monitoring.py rules     promtool check rules + promtool test rules on
                            deploy/prometheus/meshperf-alerts.yml, with series from the scrape

Both start the same stack on loopback, with files in a temporary folder:
  - two meshperfd (A, B) with a token; A probes B every second ([schedule]: latency and
    bandwidth), so the per-peer series exist; one `meshperf collective` over A and B
    (meshperf_collective_busbw_bits_per_second on A);
  - `meshperf check B --initiator A --prom-file` into a textfile folder, served by a real
    node_exporter (prometheus-node-exporter, textfile collector only);
  - a real Prometheus scraping A and B (job meshperf, the token from a credentials file) and
    node_exporter (job node) every second.

grafana: each expression, Grafana's variables replaced by what "All" sends ($instance, $peer,
$transport: .*; $job: meshperf; $__rate_interval: 1m), is sent to /api/v1/query and must
return at least one series within 60 s; label_values(M, L) must find series of M with label
L. Then, as a control, each metric name the dashboard uses is renamed in one expression that
uses it: that expression must now return nothing (so an empty answer is caught, and a metric
renamed in the daemon breaks the test).

rules: promtool check rules passes on the shipped file and fails on a copy with a syntax
error. The unit-test file for promtool test rules is generated from the scrape: the label
sets of the series the rules read (meshperf_bandwidth_bits_per_second,
meshperf_last_run_timestamp_seconds, meshperf_last_run_success, meshperf_link_counter_increase,
meshperf_inspect_state of A's scheduled inspection ([inspect], at once: jitter 0), up, and
meshperf_check_status from node_exporter) and the bandwidth figure are the scraped ones;
their histories over the test's hours are made up (a link falling to half its figure, a
probe that stops, a daemon that goes down, a check that turns CRITICAL, a node inspection
that turns CRITICAL). promtool test rules must pass, and must fail on
a copy of the rules where one metric is renamed.

MESHPERF_DASHBOARD / MESHPERF_RULES name other files (to show the test failing on a broken
one). Exit 0 pass, 1 fail, 77 skip (prometheus, promtool or node_exporter missing).
"""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "integration"))
from meshperf_harness import CLI, Daemon, free_port  # noqa: E402

DASHBOARD = os.environ.get("MESHPERF_DASHBOARD", os.path.join(ROOT, "deploy", "grafana", "meshperf-dashboard.json"))
RULES = os.environ.get("MESHPERF_RULES", os.path.join(ROOT, "deploy", "prometheus", "meshperf-alerts.yml"))
TOKEN = "deploy-monitoring-token"
MODE = sys.argv[1] if len(sys.argv) > 1 else ""
TAG = {"grafana": "grafana-queries", "rules": "prometheus-rules"}.get(MODE, "deploy-monitoring")
T0 = time.time()


def say(msg):
    print(f"{TAG}: [{time.time() - T0:.0f} s] {msg}", flush=True)


class Fail(Exception):
    pass


def write(path, text, mode=0o644):
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
        raise Fail(f"query {expr}: {doc}")
    return doc["data"]["result"]


def wait_http(url, proc, what, log, seconds=60):
    deadline = time.time() + seconds
    while time.time() < deadline:
        if proc.poll() is not None:
            raise Fail(f"{what} exited with {proc.returncode}:\n{open(log).read()[-3000:]}")
        try:
            with urllib.request.urlopen(url, timeout=2) as r:
                if r.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.2)
    raise Fail(f"{what} not ready after {seconds} s:\n{open(log).read()[-3000:]}")


def run(args, timeout=120):
    p = subprocess.run(args, capture_output=True, text=True, timeout=timeout)
    return p.returncode, p.stdout + p.stderr


class Stack:
    """meshperfd A and B, node_exporter, Prometheus; stop() ends them all."""

    def __init__(self, tmp):
        self.tmp = tmp
        self.daemons, self.procs = [], []

    def spawn(self, args, name):
        log = os.path.join(self.tmp, f"{name}.log")
        p = subprocess.Popen(args, stdout=open(log, "w"), stderr=subprocess.STDOUT, start_new_session=True)
        self.procs.append(p)
        return p, log

    def start(self, prometheus, node_exporter):
        tmp = self.tmp
        token_file = write(os.path.join(tmp, "token"), TOKEN + "\n", 0o600)
        self.b = Daemon(extra_args=["--token-file", token_file])
        self.daemons.append(self.b)
        config = write(os.path.join(tmp, "meshperfd.toml"), f"""
[auth]
metrics_require_token = true

[schedule]
peers = ["{self.b.address}"]
tests = ["latency", "bandwidth"]
sizes = ["64", "64K"]
interval = "1s"
jitter = "0s"
point_duration = "100ms"

[inspect]
jitter = "0s"
""")
        self.a = Daemon(extra_args=["--token-file", token_file, "--config", config])
        self.daemons.append(self.a)
        say(f"meshperfd A {self.a.address} (probes B every 1 s), B {self.b.address}")

        hosts = f"{self.a.address},{self.b.address}"
        rc, out = run([CLI, "--token-file", token_file, "collective", "--hosts", hosts, "--op", "allreduce",
                       "--sizes", "1M", "--format", "json", "-o", os.path.join(tmp, "coll.json")], timeout=120)
        if rc != 0:
            raise Fail(f"meshperf collective exited {rc}: {out[-2000:]}")
        textfiles = os.path.join(tmp, "textfile")
        os.mkdir(textfiles)
        rc, out = run([CLI, "--token-file", token_file, "check", self.b.address, "--initiator", self.a.address,
                       "--min-gbit", "0.001", "--max-lat-us", "1000000",
                       # The figures only: loopback TCP retransmits 1% now and then under
                       # load (a CI run read 1.18%, a WARNING), and counters are not what
                       # this test is about.
                       "--ignore-counters",
                       "--prom-file", os.path.join(textfiles, "meshperf.prom")], timeout=120)
        if rc != 0:
            raise Fail(f"meshperf check exited {rc}: {out}")
        say(f"collective over A and B done; meshperf check: {out.strip().split('|')[0]}")

        ne_port = free_port()
        self.node_exporter_address = f"127.0.0.1:{ne_port}"
        ne, ne_log = self.spawn([node_exporter, "--collector.disable-defaults", "--collector.textfile",
                                 f"--collector.textfile.directory={textfiles}",
                                 f"--web.listen-address={self.node_exporter_address}"], "node_exporter")
        wait_http(f"http://{self.node_exporter_address}/metrics", ne, "node_exporter", ne_log)

        port = free_port()
        self.base = f"http://127.0.0.1:{port}"
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
      - targets: ["{self.a.address}", "{self.b.address}"]
  - job_name: node
    static_configs:
      - targets: ["{self.node_exporter_address}"]
""")
        prom, prom_log = self.spawn([prometheus, f"--config.file={tmp}/prometheus.yml", f"--storage.tsdb.path={tmp}/data",
                                     f"--web.listen-address=127.0.0.1:{port}", "--log.level=warn"], "prometheus")
        wait_http(f"{self.base}/-/ready", prom, "prometheus", prom_log)
        say(f"prometheus on {self.base} scraping A, B (job meshperf) and node_exporter {self.node_exporter_address} (job node)")

    def stop(self):
        for p in self.procs:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGTERM)
        for p in self.procs:
            try:
                p.wait(15)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
        for d in self.daemons:
            d.cleanup()


# --- grafana ---------------------------------------------------------------------------------
VARIABLES = {"instance": ".*", "peer": ".*", "transport": ".*", "job": "meshperf",
             "__rate_interval": "1m", "__interval": "15s", "__range": "1h"}


def substitute(expr):
    def one(m):
        name = m.group(1) or m.group(2)
        if name not in VARIABLES:
            raise Fail(f"expression uses a variable the test does not know: ${name} in {expr}")
        return VARIABLES[name]
    return re.sub(r"\$\{(\w+)\}|\$(\w+)", one, expr)


def dashboard_queries(doc):
    """(where, kind, text): kind 'expr' (PromQL) or 'label_values' (a template variable)."""
    out = []

    def walk(panels):
        for p in panels:
            for t in p.get("targets", []):
                if t.get("expr"):
                    out.append((f"panel '{p.get('title')}' {t.get('refId')}", "expr", t["expr"]))
            walk(p.get("panels", []))
    walk(doc.get("panels", []))
    for v in doc.get("templating", {}).get("list", []):
        if v.get("type") == "query":
            q = v["query"]["query"] if isinstance(v.get("query"), dict) else v.get("query")
            out.append((f"variable ${v['name']}", "label_values", q))
    return out


def evaluate(base, kind, text):
    """Returns a short description of the data found, or None when there is none."""
    if kind == "label_values":
        m = re.fullmatch(r"\s*label_values\((.*),\s*(\w+)\s*\)\s*", text)
        if not m:
            raise Fail(f"template query is not label_values(METRIC, LABEL): {text}")
        result = query(base, substitute(m.group(1)))
        values = sorted({r["metric"][m.group(2)] for r in result if m.group(2) in r["metric"]})
        return f"{m.group(2)} = {values}" if values else None
    result = query(base, substitute(text))
    if not result:
        return None
    return f"{len(result)} series, e.g. {json.dumps(result[0]['metric'], sort_keys=True)} = {result[0]['value'][1]}"


def grafana(stack):
    doc = json.load(open(DASHBOARD))
    queries = dashboard_queries(doc)
    if len(queries) < 10:
        raise Fail(f"only {len(queries)} queries found in {DASHBOARD}")
    found = {}
    deadline = time.time() + 60
    while time.time() < deadline and len(found) < len(queries):
        for i, (_, kind, text) in enumerate(queries):
            if i not in found:
                r = evaluate(stack.base, kind, text)
                if r:
                    found[i] = r
        time.sleep(0.5)
    missing = [q for i, q in enumerate(queries) if i not in found]
    for i, (where, kind, text) in enumerate(queries):
        if i in found:
            say(f"ok: {where}: {text}\n      -> {found[i]}")
    if missing:
        raise Fail("no data within 60 s for:\n" + "\n".join(f"  {w}: {t}" for w, _, t in missing))
    say(f"all {len(queries)} queries of the dashboard returned data")

    # Control: a renamed metric returns nothing, so the check above can fail.
    names = sorted({n for _, kind, t in queries for n in re.findall(r"\b(meshperf_\w+|up)\b(?=\s*[{\[)]|\s*$|\s*,)", t)})
    for name in names:
        where, kind, text = next(q for q in queries if re.search(rf"\b{name}\b", q[2]))
        renamed = re.sub(rf"\b{name}\b", name + "_renamed", text)
        if evaluate(stack.base, kind, renamed) is not None:
            raise Fail(f"control: with {name} renamed, {renamed} still returned data")
    say(f"control: each of the {len(names)} metric names renamed makes its query empty: {', '.join(names)}")


# --- rules -----------------------------------------------------------------------------------
def humanize(v):
    for prefix in ["", "k", "M", "G", "T", "P", "E"]:
        if abs(v) < 1000 or prefix == "E":
            return f"{v:.4g}{prefix}"
        v /= 1000


def labels_text(labels):
    return "{" + ", ".join(f'{k}="{v}"' for k, v in sorted(labels.items())) + "}"


def one_series(base, expr, what):
    deadline = time.time() + 60
    while time.time() < deadline:
        result = query(base, expr)
        if result:
            return result[0]["metric"], float(result[0]["value"][1])
        time.sleep(0.5)
    raise Fail(f"no series for {what} ({expr}) in 60 s")


def yaml_quoted(text):
    """The inside of a single-quoted YAML scalar: a quote is written twice."""
    return text.replace("'", "''")


def rules_test_file(stack, rules_path):
    base = stack.base
    bw_l, bw = one_series(base, 'meshperf_bandwidth_bits_per_second{test="bandwidth"}', "bandwidth")
    ts_l, _ = one_series(base, "meshperf_last_run_timestamp_seconds", "last run")
    ok_l, _ = one_series(base, "meshperf_last_run_success == 1", "last run success")
    up_l, _ = one_series(base, f'up{{job="meshperf", instance="{stack.a.address}"}}', "up of A")
    ck_l, _ = one_series(base, "meshperf_check_status", "check status (node_exporter)")
    ct_l, _ = one_series(base, "meshperf_check_last_run_timestamp_seconds", "check time (node_exporter)")
    er_l, _ = one_series(base, 'meshperf_link_counter_increase{meaning="error"}', "an error counter's increase")
    in_l, _ = one_series(base, f'meshperf_inspect_state{{instance="{stack.a.address}"}}', "A's scheduled inspection")
    for name, l in [("bandwidth", bw_l), ("last run", ts_l), ("success", ok_l), ("up", up_l), ("check", ck_l),
                    ("check time", ct_l), ("error counter", er_l), ("inspection", in_l)]:
        say(f"scraped {name}: {l.get('__name__')}{labels_text({k: v for k, v in l.items() if k != '__name__'})}")
    say(f"scraped bandwidth figure: {bw:.6g} bit/s")

    def series(l, values):
        name = l["__name__"]
        rest = {k: v for k, v in l.items() if k != "__name__"}
        return f"      - series: '{name}{labels_text(rest)}'\n        values: '{values}'\n"

    def alert(name, l, severity, annotations):
        rest = {k: v for k, v in l.items() if k != "__name__"}
        lab = "".join(f"              {k}: '{v}'\n" for k, v in sorted({**rest, "severity": severity}.items()))
        ann = "".join(f"              {k}: '{yaml_quoted(v)}'\n" for k, v in annotations.items())
        return f"          - exp_labels:\n{lab}            exp_annotations:\n{ann}"

    def case(at, name, alerts=""):
        body = f"      - eval_time: {at}\n        alertname: {name}\n"
        return body + ("        exp_alerts:\n" + alerts if alerts else "        exp_alerts: []\n")

    # The same series as a fatal counter (link_downed): the scraped labels with its name and meaning.
    fa_l = {**er_l, "counter": "link_downed", "meaning": "fatal"}

    def counter_summary(l):
        return (f"meshperf: {l['counter']} rose by 3 on the {l['side']}'s {l['device']} during the latest run from "
                f"{l['instance']} to {l['peer']}")

    half = bw / 2
    inst, peer = bw_l["instance"], bw_l["peer"]
    bw_desc = (f"{bw_l['test']} at {bw_l['size_bytes']} B over {bw_l['transport']} reads {humanize(half)}bit/s, "
               f"under 75% of its 7-day baseline, for 45 minutes.")
    rest_bw = {k: v for k, v in bw_l.items() if k != "__name__"}
    text = f"""rule_files:
  - {rules_path}
evaluation_interval: 1m
tests:
  # the scraped bandwidth series: 10 h at the scraped figure, then half of it
  - interval: 1m
    input_series:
{series(bw_l, f"{bw}+0x600 {half}+0x120")}    promql_expr_test:
      - expr: meshperf:bandwidth_bits_per_second:baseline_7d
        eval_time: 9h
        exp_samples:
          - labels: 'meshperf:bandwidth_bits_per_second:baseline_7d{labels_text(rest_bw)}'
            value: {bw}
    alert_rule_test:
{case("9h", "MeshperfLinkBelowBaseline")}{case("10h30m", "MeshperfLinkBelowBaseline")}{case("11h", "MeshperfLinkBelowBaseline",
        alert("MeshperfLinkBelowBaseline", bw_l, "critical", {
            "summary": f"meshperf: {inst} -> {peer} below its baseline", "description": bw_desc}))}
  # probes every minute for 100 min, then none: at 3 h the last one is 80 min old (stale after 45)
  - interval: 1m
    input_series:
{series(ts_l, "0+60x100 6000+0x100")}    alert_rule_test:
{case("2h", "MeshperfProbeStale")}{case("3h", "MeshperfProbeStale",
        alert("MeshperfProbeStale", ts_l, "warning", {
            "summary": f"meshperf: no probe from {ts_l['instance']} to {ts_l['peer']} for 1h 20m 0s"}))}
  # runs succeed for 10 min, then fail
  - interval: 1m
    input_series:
{series(ok_l, "1+0x10 0+0x60")}    alert_rule_test:
{case("30m", "MeshperfPeerFailing")}{case("45m", "MeshperfPeerFailing",
        alert("MeshperfPeerFailing", ok_l, "warning", {
            "summary": f"meshperf: runs from {ok_l['instance']} to {ok_l['peer']} fail"}))}
  # the daemon answers for 10 min, then not
  - interval: 1m
    input_series:
{series({**up_l, "__name__": "up"}, "1+0x10 0+0x30")}    alert_rule_test:
{case("13m", "MeshperfDaemonDown")}{case("20m", "MeshperfDaemonDown",
        alert("MeshperfDaemonDown", up_l, "critical", {
            "summary": f"meshperfd on {up_l['instance']} does not answer /metrics"}))}
  # meshperf check (node_exporter textfile) OK for 10 min, then CRITICAL
  - interval: 1m
    input_series:
{series(ck_l, "0+0x10 2+0x10")}    alert_rule_test:
{case("5m", "MeshperfCheckCritical")}{case("15m", "MeshperfCheckCritical",
        alert("MeshperfCheckCritical", ck_l, "critical", {
            "summary": f"meshperf check CRITICAL on {ck_l['instance']} towards {ck_l['peer']}"}))}
  # the check cannot run (UNKNOWN) from 10 min on: an alert after 1 h of it
  - interval: 1m
    input_series:
{series(ck_l, "0+0x10 3+0x80")}    alert_rule_test:
{case("1h", "MeshperfCheckUnknown")}{case("1h15m", "MeshperfCheckUnknown",
        alert("MeshperfCheckUnknown", ck_l, "warning", {
            "summary": f"meshperf check on {ck_l['instance']} towards {ck_l['peer']} could not run for 1 h"}))}
  # the check ran every 15 min until 60 min, then stopped: at 3 h its last run is 2 h old
  - interval: 15m
    input_series:
{series(ct_l, "0+900x4 3600+0x8")}    alert_rule_test:
{case("2h", "MeshperfCheckStale")}{case("3h15m", "MeshperfCheckStale",
        alert("MeshperfCheckStale", ct_l, "warning", {
            "summary": f"meshperf check on {ct_l['instance']} towards {ct_l['peer']} last ran 2h 15m 0s ago"}))}
  # the scraped error counter rose by nothing for 10 min, then by 3 in the latest run
  - interval: 1m
    input_series:
{series(er_l, "0+0x10 3+0x10")}    alert_rule_test:
{case("5m", "MeshperfLinkErrors")}{case("15m", "MeshperfLinkErrors",
        alert("MeshperfLinkErrors", er_l, "warning", {"summary": counter_summary(er_l)}))}
  # a fatal counter (link_downed) the same way: critical
  - interval: 1m
    input_series:
{series(fa_l, "0+0x10 3+0x10")}    alert_rule_test:
{case("5m", "MeshperfLinkDown")}{case("15m", "MeshperfLinkDown",
        alert("MeshperfLinkDown", fa_l, "critical", {"summary": counter_summary(fa_l)}))}
  # A's scheduled inspection OK for 10 min, then CRITICAL: not yet after 5 min of it, after 15 min yes
  - interval: 1m
    input_series:
{series(in_l, "0+0x10 2+0x20")}    alert_rule_test:
{case("15m", "MeshperfNodeInspectCritical")}{case("25m", "MeshperfNodeInspectCritical",
        alert("MeshperfNodeInspectCritical", in_l, "critical", {
            "summary": f"meshperf inspect CRITICAL on {in_l['instance']} ({in_l['host']}): GET /v1/inspect/last says why"}))}
"""
    return text


def rules(stack, promtool):
    rc, out = run([promtool, "check", "rules", RULES])
    if rc != 0:
        raise Fail(f"promtool check rules {RULES}:\n{out}")
    say("promtool check rules: " + " ".join(out.split()))
    broken = write(os.path.join(stack.tmp, "broken-rules.yml"),
                   open(RULES).read().replace("expr: meshperf_check_status == 2", "expr: meshperf_check_status == (2"))
    rc, out = run([promtool, "check", "rules", broken])
    if rc == 0:
        raise Fail("control: promtool check rules accepted a rules file with an unbalanced parenthesis")
    say("control: promtool check rules refuses a copy with a syntax error")

    test_file = write(os.path.join(stack.tmp, "rules-test.yml"), rules_test_file(stack, RULES))
    rc, out = run([promtool, "test", "rules", test_file])
    if rc != 0:
        raise Fail(f"promtool test rules:\n{out}\n--- test file:\n{open(test_file).read()}")
    say("promtool test rules: " + " ".join(out.split()))

    renamed = write(os.path.join(stack.tmp, "renamed-rules.yml"),
                    open(RULES).read().replace("meshperf_last_run_timestamp_seconds", "meshperf_last_probe_timestamp_seconds"))
    control = write(os.path.join(stack.tmp, "rules-test-renamed.yml"), rules_test_file(stack, renamed))
    rc, out = run([promtool, "test", "rules", control])
    if rc == 0:
        raise Fail("control: promtool test rules passed with meshperf_last_run_timestamp_seconds renamed in the rules")
    say("control: with meshperf_last_run_timestamp_seconds renamed in the rules, promtool test rules fails")


def main():
    if MODE not in ("grafana", "rules"):
        print(__doc__)
        return 2
    tools = {t: shutil.which(t) for t in ("prometheus", "promtool", "prometheus-node-exporter")}
    if not tools["prometheus-node-exporter"]:
        tools["prometheus-node-exporter"] = shutil.which("node_exporter")
    missing = [t for t, p in tools.items() if not p]
    if missing:
        say(f"SKIP: not installed: {', '.join(missing)} (scripts/setup installs prometheus and prometheus-node-exporter)")
        return 77
    tmp = tempfile.mkdtemp(prefix=f"meshperf-{TAG}-")
    stack = Stack(tmp)
    try:
        stack.start(tools["prometheus"], tools["prometheus-node-exporter"])
        if MODE == "grafana":
            grafana(stack)
        else:
            rules(stack, tools["promtool"])
        say("PASS")
        return 0
    except Fail as e:
        say(f"FAIL: {e}")
        for name in ("prometheus.log", "node_exporter.log"):
            p = os.path.join(tmp, name)
            if os.path.exists(p):
                print(f"---- {name}\n{open(p).read()[-2000:]}")
        return 1
    finally:
        stack.stop()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())

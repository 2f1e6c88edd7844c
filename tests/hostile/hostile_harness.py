"""Shared pieces of the hostile suite: real meshperfd processes on loopback, raw-socket
exchanges, fake peers, and the check every case ends with.

After each case `check_daemon` asserts that the daemon
  - is alive: its process has not exited (Popen.poll), os.kill(pid, 0) succeeds and
    /proc/PID/status does not say zombie;
  - answers GET /healthz with 200 within HEALTHZ_LIMIT_S (1 s) on a new connection;
  - has a resident set (VmRSS) below RSS_LIMIT_MB (200 MB, MESHPERF_HOSTILE_RSS_MB).
and prints one line with the figures (healthz time, VmRSS, VmHWM = the peak RSS so far).

Inputs that killed a daemon are written to $MESHPERF_HOSTILE_FOUND (CTest sets it to
<build>/hostile-found; default a temporary directory) so they can be added to found/.
Binaries: $MESHPERF_DAEMON and $MESHPERF_CLI, as for tests/integration.
"""
import hashlib
import json
import os
import socket
import ssl
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))

from meshperf_harness import CLI, DAEMON, Daemon, free_port, run_cli, write_token_file  # noqa: E402,F401

HEALTHZ_LIMIT_S = 1.0
RSS_LIMIT_MB = int(os.environ.get("MESHPERF_HOSTILE_RSS_MB", "200"))
READ_TIMEOUT_S = 3.0  # every read of a case's answer
SEED = 20261203
FOUND_DIR = os.path.join(HERE, "found")
OUT_DIR = os.environ.get("MESHPERF_HOSTILE_FOUND") or os.path.join(tempfile.gettempdir(), "meshperf-hostile-found")


def proc_status(pid):
    """The fields of /proc/PID/status as a dict of strings; {} when the process is gone."""
    try:
        with open(f"/proc/{pid}/status") as f:
            return dict(line.rstrip("\n").split(":\t", 1) for line in f if ":\t" in line)
    except OSError:
        return {}


def kb(field):
    return int(field.split()[0]) if field else 0


def daemon_dead_reason(d):
    """None while the daemon lives; else why it counts as dead (exit status, zombie)."""
    rc = d.proc.poll()
    if rc is not None:
        return f"meshperfd exited with status {rc} (negative: killed by that signal)"
    try:
        os.kill(d.proc.pid, 0)
    except ProcessLookupError:
        return "meshperfd's PID no longer exists"
    if proc_status(d.proc.pid).get("State", "").startswith("Z"):
        return "meshperfd is a zombie"
    return None


def timed_healthz(port, timeout=HEALTHZ_LIMIT_S):
    """(status or None, seconds, error text) of GET /healthz on a new plain connection,
    the whole exchange bounded by `timeout`."""
    t0 = time.monotonic()
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
            s.settimeout(max(0.01, timeout - (time.monotonic() - t0)))
            s.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
            data = b""
            while b"\r\n\r\n" not in data:
                s.settimeout(max(0.01, timeout - (time.monotonic() - t0)))
                chunk = s.recv(4096)
                if not chunk:
                    break
                data += chunk
        elapsed = time.monotonic() - t0
        return status_of(data), elapsed, ""
    except OSError as e:
        return None, time.monotonic() - t0, str(e) or type(e).__name__


def status_of(data):
    """The status code of an HTTP/1.x answer, or None when `data` does not begin with one."""
    if not data.startswith(b"HTTP/1."):
        return None
    parts = data.split(b"\r\n", 1)[0].split(b" ")
    try:
        return int(parts[1])
    except (IndexError, ValueError):
        return None


def all_statuses(data):
    """Status codes of every answer in `data` (pipelined answers, each with a Content-Length)."""
    codes = []
    at = 0
    while True:
        i = data.find(b"HTTP/1.1 ", at)
        if i < 0:
            return codes
        try:
            codes.append(int(data[i + 9:i + 12]))
        except ValueError:
            pass
        at = i + 12


class Figures:
    """The worst figures seen over a test's cases, for the summary line and docs/reliability.md."""

    def __init__(self):
        self.cases = 0
        self.max_healthz_s = 0.0
        self.max_rss_kb = 0
        self.max_hwm_kb = 0

    def add(self, healthz_s, rss_kb, hwm_kb):
        self.cases += 1
        self.max_healthz_s = max(self.max_healthz_s, healthz_s)
        self.max_rss_kb = max(self.max_rss_kb, rss_kb)
        self.max_hwm_kb = max(self.max_hwm_kb, hwm_kb)

    def line(self):
        return (f"{self.cases} checks: /healthz at most {self.max_healthz_s * 1000:.1f} ms, VmRSS at most "
                f"{self.max_rss_kb / 1024:.0f} MB, peak (VmHWM) {self.max_hwm_kb / 1024:.0f} MB")


def check_daemon(tc, d, case, figures=None, rss_limit_mb=RSS_LIMIT_MB):
    """The assertions every case ends with (see the module's text). Prints the figures."""
    dead = daemon_dead_reason(d)
    if dead:
        tc.fail(f"after {case}: {dead}; log tail: {log_tail(d)}")
    status, elapsed, err = timed_healthz(d.port)
    st = proc_status(d.proc.pid)
    rss, hwm = kb(st.get("VmRSS")), kb(st.get("VmHWM"))
    print(f"hostile: {case}: alive, /healthz {status} in {elapsed * 1000:.1f} ms, VmRSS {rss / 1024:.1f} MB "
          f"(peak {hwm / 1024:.1f} MB)", flush=True)
    if figures is not None:
        figures.add(elapsed, rss, hwm)
    tc.assertEqual(status, 200, f"after {case}: GET /healthz not answered 200 within {HEALTHZ_LIMIT_S} s "
                                f"({elapsed:.2f} s, {err or 'answer ' + str(status)})")
    tc.assertLess(elapsed, HEALTHZ_LIMIT_S, f"after {case}: GET /healthz took {elapsed:.2f} s")
    tc.assertLess(rss, rss_limit_mb * 1024, f"after {case}: VmRSS {rss / 1024:.0f} MB >= {rss_limit_mb} MB")
    return rss, hwm


def log_tail(d, n=800):
    try:
        return d.read_log()[-n:]
    except OSError:
        return "(no log)"


def save_found(kind, name, data):
    """Writes an input that killed a daemon to OUT_DIR as `<kind>-<name>-<sha1 prefix>.bin`;
    returns its path. kind: "request" (bytes sent to the API port) or "peer-reply" (what a
    fake peer answered to the session upgrade)."""
    os.makedirs(OUT_DIR, exist_ok=True)
    safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in name)[:60]
    path = os.path.join(OUT_DIR, f"{kind}-{safe}-{hashlib.sha1(data).hexdigest()[:10]}.bin")
    with open(path, "wb") as f:
        f.write(data)
    print(f"hostile: input that killed meshperfd saved as {path}", flush=True)
    return path


def complete_answers(data):
    """How many whole HTTP answers (head plus Content-Length body) `data` begins with, and
    whether it ends exactly after the last of them."""
    n = 0
    at = 0
    while True:
        end = data.find(b"\r\n\r\n", at)
        if end < 0 or not data.startswith(b"HTTP/1.", at):
            return n, at == len(data)
        length = 0
        for line in data[at:end].split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                try:
                    length = int(value.strip())
                except ValueError:
                    return n, False
        if len(data) < end + 4 + length:
            return n, False
        n += 1
        at = end + 4 + length


def exchange(port, data, timeout=READ_TIMEOUT_S, tls=None, answers=1, quiet_s=0.15, max_answer=64 << 20):
    """Sends `data` on a new connection (TLS when `tls` is an SSLContext) and reads the answer
    until `answers` whole answers came, the daemon closes, or `timeout` passes. When the
    daemon says nothing for `quiet_s` (it waits for the rest of a request), the sending side
    is shut so that it sees the end of the input. Returns (answer bytes, how): how is
    "answered" (the answers came), "closed", "reset" or "held" (still open at the timeout)."""
    got = bytearray()
    how = "closed"
    try:
        raw = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    except OSError as e:
        return b"", f"refused ({e})"
    s = raw
    deadline = time.monotonic() + timeout
    shut = False
    try:
        if tls is not None:
            s = tls.wrap_socket(raw, server_hostname="127.0.0.1")
        s.settimeout(timeout)
        try:
            s.sendall(data)
        except (BrokenPipeError, ConnectionResetError):
            how = "reset"
        except socket.timeout:
            how = "held"
        while len(got) < max_answer:
            left = deadline - time.monotonic()
            if left <= 0:
                how = "held"
                break
            s.settimeout(min(left, quiet_s) if not shut else left)
            try:
                chunk = s.recv(65536)
            except socket.timeout:
                if not shut and tls is None:
                    shut = True
                    try:
                        s.shutdown(socket.SHUT_WR)
                    except OSError:
                        pass
                elif not shut:
                    shut = True  # TLS: no half-close; wait for the daemon until the deadline
                continue
            except (ConnectionResetError, ssl.SSLError, OSError):
                how = "reset"
                break
            if not chunk:
                how = "closed"
                break
            got += chunk
            if answers:
                n, exact = complete_answers(got)
                if n >= answers and exact:
                    how = "answered"
                    break
    except (ssl.SSLError, OSError):
        how = "reset"
    finally:
        s.close()
    return bytes(got), how


class FakePeer:
    """A listening socket on 127.0.0.1 that answers every connection with `reply` once it has
    read the request head (or after 5 s, or a 64 KiB head), then closes (after `hold_s`; a
    byte every `drip_s` when given). It stands where a peer meshperfd should be: the
    initiator's session upgrade is what it answers."""

    def __init__(self, reply, hold_s=0.0, drip_s=0.0, wait_head=True, tls=None):
        self.reply = reply
        self.tls = tls  # an ssl server context: the handshake is completed, then the reply sent over TLS
        self.wait_head = wait_head  # False: answer the first bytes (a TLS ClientHello has no blank line)
        self.hold_s = hold_s  # keep the connection open this long after the reply
        self.drip_s = drip_s  # send the reply a byte at a time, this far apart
        self.requests = []
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.address = f"127.0.0.1:{self.port}"
        self.stopping = False
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def serve(self):
        while not self.stopping:
            try:
                c, _ = self.sock.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            conn = c  # the TLS socket once wrapped (wrapping detaches `c`): closed below either way
            try:
                c.settimeout(5)
                head = b""
                if self.tls is not None:
                    conn = self.tls.wrap_socket(c, server_side=True)
                while b"\r\n\r\n" not in head and len(head) < 65536:
                    chunk = conn.recv(65536)
                    if not chunk:
                        break
                    head += chunk
                    if not self.wait_head:
                        break
                self.requests.append(head)
                if self.drip_s:
                    for i in range(len(self.reply)):
                        if self.stopping:
                            break
                        conn.sendall(self.reply[i:i + 1])
                        time.sleep(self.drip_s)
                else:
                    conn.sendall(self.reply)
                end = time.monotonic() + self.hold_s
                while time.monotonic() < end and not self.stopping:
                    time.sleep(0.05)
            except OSError:
                pass
            finally:
                conn.close()
                c.close()

    def close(self):
        self.stopping = True
        self.sock.close()
        self.thread.join(5)


def strict_json(tc, raw, what):
    """Asserts `raw` is valid UTF-8 and JSON; returns the document."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        tc.fail(f"{what}: not valid UTF-8 ({e}): {raw[:200]!r}")
    try:
        return json.loads(text)
    except ValueError as e:
        tc.fail(f"{what}: not JSON ({e}): {raw[:200]!r}")


def api_get(d, path, timeout=10, tls=None):
    """(status, raw body) of GET path on a new connection (TLS with the client context `tls`);
    (None, b"") when no answer."""
    req = f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".encode()
    data, _ = exchange(d.port, req, timeout=timeout, answers=0, tls=tls)
    head, _, body = data.partition(b"\r\n\r\n")
    if b"transfer-encoding: chunked" in head.lower():
        body = dechunk(body)
    return status_of(data), body


def dechunk(body):
    out = b""
    while body:
        line, _, rest = body.partition(b"\r\n")
        try:
            n = int(line.split(b";")[0], 16)
        except ValueError:
            return out
        if n == 0:
            return out
        out += rest[:n]
        body = rest[n + 2:]
    return out


def api_post_json(d, path, body_bytes, timeout=10, headers=(), tls=None):
    """(status, raw body) of POST path with a JSON body given as bytes."""
    head = [f"POST {path} HTTP/1.1", "Host: 127.0.0.1", "Connection: close", "Content-Type: application/json",
            f"Content-Length: {len(body_bytes)}", *headers]
    data, _ = exchange(d.port, ("\r\n".join(head) + "\r\n\r\n").encode() + body_bytes, timeout=timeout, answers=0,
                       tls=tls)
    return status_of(data), data.partition(b"\r\n\r\n")[2]


def wait_run_end(d, run_id, deadline_s=30, tls=None):
    """Polls GET /v1/runs/{id} until the run is no longer queued or running; returns
    (status, raw body) of the last answer. Bounded by deadline_s."""
    end = time.monotonic() + deadline_s
    status, raw = None, b""
    while time.monotonic() < end:
        if daemon_dead_reason(d):
            return None, b""
        status, raw = api_get(d, f"/v1/runs/{run_id}", tls=tls)
        if status == 200:
            try:
                if json.loads(raw.decode("utf-8", errors="replace")).get("state") not in ("queued", "running"):
                    return status, raw
            except ValueError:
                return status, raw
        elif status is None or status >= 500:
            return status, raw
        time.sleep(0.1)
    return status, raw


def make_certs(work):
    """A CA and a certificate for 127.0.0.1 (server and client) under `work`, with the openssl
    command, as tests/integration/test_tls.py makes them. Returns (ca.pem, node.pem, node.key)."""
    import test_tls as certs  # tests/integration, on sys.path; a module import collects no TestCase here
    certs.make_ca(work, "ca")
    certs.make_leaf(work, "ca", "node")
    return tuple(os.path.join(work, n) for n in ("ca.pem", "node.pem", "node.key"))


def client_tls(ca, cert=None, key=None):
    ctx = ssl.create_default_context(cafile=ca)
    if cert:
        ctx.load_cert_chain(cert, key)
    return ctx

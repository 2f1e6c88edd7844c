"""Fake peers (issue 25, attack 2): a python socket server stands where a peer meshperfd
should be and answers the initiator's session upgrade with hostile bytes (non-UTF-8 status
lines and headers, framing attacks, other protocols; http_corpus.peer_reply_corpus). A real
meshperfd is driven to it with POST /v1/runs naming that peer. Each run must end (failed)
within 30 s, its stored document (GET /v1/runs/{id}) and the history (GET /v1/runs) must be
valid UTF-8 JSON with the error as a string, and the daemon must pass the check every case
ends with (hostile_harness.check_daemon).
"""
import glob
import json
import os
import shutil
import tempfile
import time
import unittest

from hostile_harness import (FOUND_DIR, Daemon, FakePeer, Figures, api_get, api_post_json, check_daemon,
                             daemon_dead_reason, log_tail, make_certs, save_found, strict_json, wait_run_end)
import http_corpus as corpus

RUN_END_S = 30  # a refused or broken session ends well within the 10 s handshake timeout
SLOW_PEER_S = 15  # a peer that stalls or drips its answer: the upgrade's 10 s deadline, and slack


class PeerReplyRunner:
    def __init__(self, tc, extra_args=(), tls=None):
        self.tc = tc
        self.extra_args = list(extra_args)
        self.tls = tls  # the client context for a TLS daemon's API
        self.d = Daemon(extra_args=self.extra_args)
        self.figures = Figures()
        self.killed = []
        self.errors = {}

    def restart(self):
        self.d.cleanup()
        self.d = Daemon(extra_args=self.extra_args)

    def run_against(self, name, reply, **peer_args):
        tc = self.tc
        peer = FakePeer(reply, **peer_args)
        try:
            spec = json.dumps({"peer": peer.address, "tests": ["latency"], "sizes": [64], "max_point_s": 0.05,
                               "warmup_s": 0}).encode()
            status, raw = api_post_json(self.d, "/v1/runs", spec, tls=self.tls)
            tc.assertEqual(status, 202, f"{name}: POST /v1/runs answered {status}: {raw[:200]!r}")
            run_id = strict_json(tc, raw, f"{name}: the 202 answer")["id"]
            t0 = time.monotonic()
            status, raw = wait_run_end(self.d, run_id, RUN_END_S, tls=self.tls)
            elapsed = time.monotonic() - t0
            dead = daemon_dead_reason(self.d)
            if dead:
                self.killed.append(name)
                save_found("peer-reply", name, reply)
                log = log_tail(self.d, 400)
                self.restart()
                tc.fail(f"{name}: the peer's reply killed meshperfd: {dead}; log: {log}")
            tc.assertEqual(status, 200, f"{name}: GET /v1/runs/{run_id} answered {status}: {raw[:200]!r}")
            doc = strict_json(tc, raw, f"{name}: the stored run")
            tc.assertNotIn(doc.get("state"), ("queued", "running"), f"{name}: the run did not end in {RUN_END_S} s")
            tc.assertEqual(doc.get("state"), "failed", f"{name}: {doc.get('state')}, error {doc.get('error')!r}")
            tc.assertIsInstance(doc.get("error"), str)
            tc.assertIn(peer.address, doc["error"])
            self.errors[name] = (doc["error"], elapsed)
            status, raw = api_get(self.d, "/v1/runs?limit=5", tls=self.tls)
            tc.assertEqual(status, 200, f"{name}: GET /v1/runs answered {status}: {raw[:200]!r}")
            listed = strict_json(tc, raw, f"{name}: the history")
            tc.assertIn(run_id, [r["id"] for r in listed["runs"]])
        finally:
            peer.close()

    def run(self, cases, **peer_args):
        t0 = time.monotonic()
        for name, reply in cases:
            with self.tc.subTest(peer_reply=name):
                try:
                    self.run_against(name, reply, **peer_args)
                finally:
                    check_daemon(self.tc, self.d, f"peer reply {name}", self.figures)
        print(f"\nhostile: fake peers: {len(cases)} replies in {time.monotonic() - t0:.1f} s; {len(self.killed)} killed "
              f"meshperfd ({', '.join(self.killed) or 'none'}); {self.figures.line()}", flush=True)
        for name, (error, elapsed) in sorted(self.errors.items()):
            print(f"hostile: fake peer {name}: failed in {elapsed:.1f} s: {error[:160]}", flush=True)

    def close(self):
        self.d.cleanup()


class FakePeerTests(unittest.TestCase):
    def test_attack_2_status_line_ete(self):
        """The issue's case: `HTTP/1.1 404 \\xe9t\\xe9` killed the initiator (type_error.316, SIGABRT)."""
        runner = PeerReplyRunner(self)
        try:
            runner.run([("status_reason_ete_404", b"HTTP/1.1 404 \xe9t\xe9\r\n\r\n")])
        finally:
            runner.close()

    def test_peer_reply_corpus(self):
        runner = PeerReplyRunner(self)
        try:
            runner.run(corpus.peer_reply_corpus())
        finally:
            runner.close()

    def test_slow_peers(self):
        """A peer that stops mid-answer, and one that drips a long reason phrase a byte every
        0.5 s: the run must still fail within SLOW_PEER_S (the upgrade has one deadline)."""
        runner = PeerReplyRunner(self)
        try:
            runner.run([("partial_head_then_silence", b"HTTP/1.1 404 \xe9t\xe9\r\nX-A: b")], hold_s=SLOW_PEER_S + 5)
            runner.run([("reason_dripped_a_byte_every_half_second", b"HTTP/1.1 404 " + b"\xe9" * 60 + b"\r\n\r\n")],
                       drip_s=0.5)
            for name, (error, elapsed) in runner.errors.items():
                self.assertLess(elapsed, SLOW_PEER_S, f"{name}: the run took {elapsed:.1f} s to fail: {error}")
        finally:
            runner.close()

    def test_replies_found_earlier(self):
        """tests/hostile/found/peer-reply-*: every peer reply that once killed meshperfd."""
        files = sorted(glob.glob(os.path.join(FOUND_DIR, "peer-reply-*")))
        if not files:
            self.skipTest("no peer-reply-* file in tests/hostile/found")
        cases = []
        for path in files:
            with open(path, "rb") as f:
                cases.append((os.path.basename(path), f.read()))
        runner = PeerReplyRunner(self)
        try:
            runner.run(cases)
        finally:
            runner.close()



@unittest.skipUnless(shutil.which("openssl"), "needs the openssl command to make certificates")
class TlsInitiatorTests(unittest.TestCase):
    """The initiator speaks TLS to its peers (--tls-cert/--tls-key/--tls-ca): a fake peer that
    answers its ClientHello with plain HTTP in non-UTF-8, a TLS alert, or garbage."""

    def test_fake_peers_of_a_tls_initiator(self):
        work = tempfile.mkdtemp(prefix="meshperf-hostile-tls-peer-")
        try:
            ca, cert, key = make_certs(work)
            from hostile_harness import client_tls
            runner = PeerReplyRunner(self, ["--tls-cert", cert, "--tls-key", key, "--tls-ca", ca],
                                     tls=client_tls(ca, cert, key))
            try:
                runner.run([
                    ("tls_initiator_plain_http_non_utf8", b"HTTP/1.1 404 \xe9t\xe9\r\nContent-Length: 0\r\n\r\n"),
                    ("tls_initiator_alert", b"\x15\x03\x03\x00\x02\x02\x28"),
                    ("tls_initiator_handshake_garbage", b"\x16\x03\x03\x00\x30" + b"\xe9" * 48),
                    ("tls_initiator_nothing", b""),
                ], wait_head=False)
                # A peer with a good certificate that completes the handshake, then answers
                # the upgrade with hostile bytes over TLS.
                import ssl
                server = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
                server.load_cert_chain(cert, key)
                server.load_verify_locations(ca)
                server.verify_mode = ssl.CERT_REQUIRED
                replies = dict(corpus.peer_reply_corpus(count=0))
                runner.run([(f"tls_peer_{n}", replies[n]) for n in (
                    "status_reason_ete_404", "status_101_upgrade_header_non_utf8", "status_101_then_garbage",
                    "status_101_then_error_frame_non_utf8", "header_70KiB", "chunked_size_overflow",
                    "status_code_503_non_utf8_error_body", "nothing_then_close")], tls=server)
            finally:
                runner.close()
        finally:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    unittest.main()

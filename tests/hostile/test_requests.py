"""Hostile requests on the API port of a real meshperfd (issue 25, attacks 1, 3 and 9, and the
generated corpus of HTTP framing attacks in http_corpus.py).

After every case: the daemon's process alive (not a zombie), GET /healthz answered 200 in
under 1 s, VmRSS under the bound (hostile_harness.check_daemon). A case that kills the
daemon is reported as a failure of its own, its input saved (hostile_harness.save_found),
and the daemon restarted so the remaining cases still run.
"""
import collections
import glob
import os
import shutil
import socket
import tempfile
import time
import unittest

from hostile_harness import (FOUND_DIR, RSS_LIMIT_MB, Daemon, Figures, check_daemon, client_tls, daemon_dead_reason,
                             exchange, kb, log_tail, make_certs, proc_status, save_found, status_of, strict_json,
                             write_token_file)
import http_corpus as corpus


def judge(tc, name, exp, answer, how):
    """Asserts what the case's Expect asks of the daemon's answer."""
    status = status_of(answer)
    if exp.sequence is not None:
        codes = []
        at = 0
        while (i := answer.find(b"HTTP/1.1 ", at)) >= 0:
            codes.append(int(answer[i + 9:i + 12]) if answer[i + 9:i + 12].isdigit() else 0)
            at = i + 12
        tc.assertEqual(len(codes), len(exp.sequence), f"{name}: {len(codes)} answers, {len(exp.sequence)} expected "
                                                      f"({how}; statuses {sorted(set(codes))})")
        for k, (code, allowed) in enumerate(zip(codes, exp.sequence)):
            tc.assertIn(code, allowed, f"{name}: answer {k + 1} is {code}")
        return
    if exp.answer and status is None and not (exp.allow_reset and how == "reset"):
        tc.fail(f"{name}: no HTTP answer (connection {how}, {len(answer)} bytes: {answer[:80]!r})")
    if exp.statuses is not None and status is not None:
        first_line = answer.split(b"\r\n", 1)[0]
        tc.assertIn(status, exp.statuses, f"{name}: answered {first_line!r}")
    if status is not None:
        head, _, body = answer.partition(b"\r\n\r\n")
        if b"application/json" in head.lower() and b"content-length" in head.lower():
            length = next(int(line.split(b":", 1)[1]) for line in head.split(b"\r\n")
                          if line.lower().startswith(b"content-length:"))
            strict_json(tc, body[:length], f"{name}: the JSON answer")


class CorpusRunner:
    """Sends cases one by one to a daemon, judging each and checking the daemon after each."""

    def __init__(self, tc, make_daemon, tls=None, tag=""):
        self.tc = tc
        self.make_daemon = make_daemon
        self.tls = tls
        self.tag = tag
        self.d = make_daemon()
        self.figures = Figures()
        self.killed = []
        self.outcomes = {}

    def run(self, cases):
        t0 = time.monotonic()
        for name, data, exp in cases:
            case = f"{self.tag}{name}"
            with self.tc.subTest(case=case):
                answer, how = exchange(self.d.port, data, tls=self.tls,
                                       answers=len(exp.sequence) if exp.sequence else 1)
                dead = daemon_dead_reason(self.d)
                if dead:
                    self.killed.append(case)
                    save_found("request", case, data)
                    log = log_tail(self.d, 300)
                    self.d.cleanup()
                    self.d = self.make_daemon()
                    self.tc.fail(f"{case} killed meshperfd: {dead}; log: {log}")
                st = status_of(answer)
                self.outcomes[case] = st if st is not None else how
                print(f"hostile: {case}: answered {st}" if st is not None else f"hostile: {case}: no answer ({how})",
                      flush=True)
                try:
                    judge(self.tc, case, exp, answer, how)
                finally:
                    check_daemon(self.tc, self.d, case, self.figures)
        print(f"\nhostile: {self.tag or 'plain '}corpus: {len(cases)} cases in {time.monotonic() - t0:.1f} s; "
              f"{len(self.killed)} killed meshperfd ({', '.join(self.killed) or 'none'}); {self.figures.line()}; "
              f"answers: {dict(sorted(collections.Counter(map(str, self.outcomes.values())).items()))}", flush=True)

    def close(self):
        self.d.cleanup()


class RequestCorpusTests(unittest.TestCase):
    def test_corpus_without_token(self):
        runner = CorpusRunner(self, lambda: Daemon())
        try:
            runner.run(corpus.request_corpus())
        finally:
            runner.close()

    def test_trailer_and_chunk_cases_with_token_file(self):
        token = write_token_file("hostile-token")
        runner = CorpusRunner(self, lambda: Daemon(extra_args=["--token-file", token]), tag="token:")
        try:
            runner.run(corpus.trailer_cases() + corpus.chunk_cases())
        finally:
            runner.close()
            shutil.rmtree(os.path.dirname(token), ignore_errors=True)

    def test_inputs_found_earlier(self):
        """tests/hostile/found/request-*: every request that once killed meshperfd."""
        files = sorted(glob.glob(os.path.join(FOUND_DIR, "request-*")))
        if not files:
            self.skipTest("no request-* file in tests/hostile/found")
        cases = []
        for path in files:
            with open(path, "rb") as f:
                cases.append((os.path.basename(path), f.read(), corpus.ANY))
        runner = CorpusRunner(self, lambda: Daemon(), tag="found:")
        try:
            runner.run(cases)
        finally:
            runner.close()


@unittest.skipUnless(shutil.which("openssl"), "needs the openssl command to make certificates")
class TlsTests(unittest.TestCase):
    """Attack 1 over mutual TLS, TLS handshakes gone wrong, plain HTTP on the TLS port."""

    @classmethod
    def setUpClass(cls):
        cls.work = tempfile.mkdtemp(prefix="meshperf-hostile-tls-")
        cls.ca, cls.cert, cls.key = make_certs(cls.work)
        cls.args = ["--tls-cert", cls.cert, "--tls-key", cls.key, "--tls-ca", cls.ca]

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.work, ignore_errors=True)

    def test_trailer_cases_over_mutual_tls(self):
        tls = client_tls(self.ca, self.cert, self.key)
        cases = [(n, b.replace(b"Host: 127.0.0.1\r\n", b"Host: 127.0.0.1\r\nConnection: close\r\n", 1), e)
                 for n, b, e in corpus.trailer_cases()]
        runner = CorpusRunner(self, lambda: Daemon(extra_args=self.args), tls=tls, tag="mtls:")
        try:
            runner.run(cases)
        finally:
            runner.close()

    def test_plain_and_broken_tls_on_the_tls_port(self):
        hello_no_cert = corpus.client_hello()
        cases = [
            ("plain_healthz", corpus.request(), corpus.Expect(statuses={200})),
            ("plain_info_refused", corpus.request(target=b"/v1/info"), corpus.Expect(statuses={403})),
            ("plain_trailer_65534", corpus.chunked(trailers=corpus.trailer_of(65534)), corpus.REFUSED_BIG),
            ("plain_trailer_2MiB_small_fields", corpus.chunked(trailers=corpus.small_trailers(2 << 20)),
             corpus.REFUSED_BIG),
            ("plain_non_utf8_path", corpus.request(target=b"/v1/runs/\xe9t\xe9"), corpus.Expect(statuses={400, 403})),
            ("tls_hello_without_client_certificate", hello_no_cert, corpus.ANY),
            ("tls_record_header_only", b"\x16\x03\x01\x00\x05", corpus.ANY),
            ("tls_record_garbage", b"\x16\x03\x01\x40\x00" + b"\xe9" * 16384, corpus.ANY),
            ("tls_hello_truncated", hello_no_cert[:40], corpus.ANY),
        ]
        runner = CorpusRunner(self, lambda: Daemon(extra_args=self.args), tag="tls-port:")
        try:
            runner.run(cases)
        finally:
            runner.close()


class MemoryTests(unittest.TestCase):
    """Attack 3: 17 MB of small trailer fields on each of 4 connections held open at once (and
    the same with one 17 MB chunk extension each). The daemon's RSS, sampled while all four
    are held, must stay under RSS_LIMIT_MB: every limit holds for the whole request."""

    CONNECTIONS = 4
    BYTES = 17_000_000

    def hold(self, head, filler):
        d = Daemon()
        socks = []
        try:
            base = kb(proc_status(d.proc.pid).get("VmRSS"))
            refused = 0
            for _ in range(self.CONNECTIONS):
                s = socket.create_connection(("127.0.0.1", d.port), timeout=10)
                socks.append(s)
                try:
                    s.sendall(head)
                    for at in range(0, len(filler), 1 << 20):
                        s.sendall(filler[at:at + (1 << 20)])
                except OSError:
                    refused += 1  # the daemon refused and closed: what a bounded daemon does
                if daemon_dead_reason(d):
                    break
            time.sleep(0.5)  # the daemon reads what is still in flight
            st = proc_status(d.proc.pid)
            held_rss, peak = kb(st.get("VmRSS")), kb(st.get("VmHWM"))
            print(f"\nhostile: memory: {self.CONNECTIONS} connections x {self.BYTES / 1e6:.0f} MB held: VmRSS "
                  f"{base / 1024:.0f} -> {held_rss / 1024:.0f} MB (peak {peak / 1024:.0f} MB); {refused} refused "
                  f"while sending", flush=True)
            answers = []
            for s in socks:
                try:
                    s.sendall(b"\r\n")
                except OSError:
                    pass
                try:
                    answers.append(status_of(s.recv(4096)))
                except OSError:
                    answers.append(None)
            print(f"hostile: memory: answers {answers}", flush=True)
            check_daemon(self, d, "memory: four connections held")
            self.assertLess(held_rss, RSS_LIMIT_MB * 1024,
                            f"VmRSS {held_rss / 1024:.0f} MB while {self.CONNECTIONS} connections held "
                            f"{self.BYTES / 1e6:.0f} MB each (bound {RSS_LIMIT_MB} MB)")
        finally:
            for s in socks:
                s.close()
            d.cleanup()

    def test_17MB_of_small_trailer_fields_on_4_connections(self):
        self.hold(b"GET /healthz HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n",
                  corpus.small_trailers(self.BYTES, field=40))

    def test_17MB_chunk_extension_on_4_connections(self):
        self.hold(b"POST /v1/runs HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n1;e=",
                  b"x" * self.BYTES)


if __name__ == "__main__":
    unittest.main()

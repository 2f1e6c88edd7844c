"""Control-plane TLS: the API and peer sessions over TLS with client certificates (mutual
TLS), data streams still plain TCP, and every way to get it wrong refused with a sentence
that says what to do. Certificates are made here with the openssl command for 127.0.0.1."""
import json
import os
import shutil
import socket
import ssl
import subprocess
import tempfile
import unittest

from meshperf_harness import QUICK, Daemon, check_point_sane, run_cli


def openssl(*args, cwd):
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


def make_ca(d, name):
    openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "2",
            "-subj", f"/CN={name}", "-keyout", f"{name}.key", "-out", f"{name}.pem", cwd=d)


def make_leaf(d, ca, name, san="IP:127.0.0.1"):
    """A certificate for 127.0.0.1 signed by `ca`, good as both server and client."""
    with open(os.path.join(d, f"{name}.ext"), "w") as f:
        f.write(f"subjectAltName={san}\nextendedKeyUsage=serverAuth,clientAuth\n")
    openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-subj", f"/CN={name}",
            "-keyout", f"{name}.key", "-out", f"{name}.csr", cwd=d)
    openssl("x509", "-req", "-in", f"{name}.csr", "-CA", f"{ca}.pem", "-CAkey", f"{ca}.key", "-CAcreateserial",
            "-days", "2", "-extfile", f"{name}.ext", "-out", f"{name}.pem", cwd=d)
    os.chmod(os.path.join(d, f"{name}.key"), 0o600)


@unittest.skipUnless(shutil.which("openssl"), "needs the openssl command to make certificates")
class TlsTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="meshperf-tls-")
        d = cls.dir
        make_ca(d, "ca")
        make_ca(d, "rogue-ca")
        make_leaf(d, "ca", "node-a")
        make_leaf(d, "ca", "node-b")
        make_leaf(d, "ca", "operator")
        make_leaf(d, "rogue-ca", "rogue")
        make_leaf(d, "ca", "wrong-name", san="DNS:somewhere.example")
        cls.a = Daemon(extra_args=cls.tls_args("node-a"))
        cls.b = Daemon(extra_args=cls.tls_args("node-b"))

    @classmethod
    def tearDownClass(cls):
        cls.a.cleanup()
        cls.b.cleanup()
        shutil.rmtree(cls.dir, ignore_errors=True)

    @classmethod
    def path(cls, name):
        return os.path.join(cls.dir, name)

    @classmethod
    def tls_args(cls, leaf, ca="ca"):
        return ["--tls-cert", cls.path(f"{leaf}.pem"), "--tls-key", cls.path(f"{leaf}.key"), "--tls-ca", cls.path(f"{ca}.pem")]

    def cli(self, *args, leaf="operator", ca="ca"):
        return run_cli(*self.tls_args(leaf, ca), *args)

    def tls_get(self, daemon, path, leaf="operator"):
        """GET over TLS with Python's own TLS stack (an independent client)."""
        ctx = ssl.create_default_context(cafile=self.path("ca.pem"))
        if leaf:
            ctx.load_cert_chain(self.path(f"{leaf}.pem"), self.path(f"{leaf}.key"))
        with socket.create_connection(("127.0.0.1", daemon.port), timeout=10) as raw:
            with ctx.wrap_socket(raw, server_hostname="127.0.0.1") as s:
                s.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode())
                data = b""
                while chunk := s.recv(65536):
                    data += chunk
        head, _, body = data.partition(b"\r\n\r\n")
        return int(head.split()[1]), body

    def test_sweep_over_tls_with_client_certificates(self):
        rc, out, err = self.cli("sweep", "--initiator", self.a.address, self.b.address, "--test", "latency,bandwidth",
                                "--sizes", "64,64K", *QUICK, "--format", "json")
        self.assertEqual(rc, 0, err)
        doc = json.loads(out)
        self.assertEqual(len(doc["points"]), 4)
        for p in doc["points"]:
            check_point_sane(self, p)
        self.assertIn("TLS with client certificates", self.a.read_log())

    def test_independent_tls_client_is_served(self):
        status, body = self.tls_get(self.a, "/v1/info")
        self.assertEqual(status, 200)
        self.assertIn("host", json.loads(body))

    def test_client_without_certificate_is_refused(self):
        with self.assertRaises((ssl.SSLError, ConnectionResetError, BrokenPipeError)):
            self.tls_get(self.a, "/v1/info", leaf=None)
        self.assertEqual(self.tls_get(self.a, "/healthz")[0], 200, "daemon still serves after a refused handshake")

    def test_plain_http_gets_a_sentence_but_health_checks_work(self):
        status, body = self.a.http("GET", "/v1/info")
        self.assertEqual(status, 403)
        self.assertIn("over TLS only", body["error"])
        self.assertEqual(self.a.http("GET", "/healthz", raw=True)[0], 200)
        rc, _, err = run_cli("info", self.a.address)
        self.assertNotEqual(rc, 0)
        self.assertIn("--tls-ca", err)

    def test_wrong_ca_is_refused_by_the_cli(self):
        rc, _, err = self.cli("info", self.a.address, ca="rogue-ca")
        self.assertEqual(rc, 3, err)
        self.assertIn("not accepted", err)
        self.assertIn("--tls-ca", err)

    def test_certificate_for_another_name_is_refused(self):
        other = Daemon(extra_args=self.tls_args("wrong-name"))
        try:
            rc, _, err = self.cli("info", other.address)
            self.assertEqual(rc, 3, err)
            self.assertIn("not accepted", err)
            self.assertIn("subjectAltName", err)
        finally:
            other.cleanup()

    def test_tls_cli_against_plain_daemon_says_so(self):
        plain = Daemon()
        try:
            rc, _, err = self.cli("info", plain.address)
            self.assertEqual(rc, 3, err)
            self.assertIn("TLS enabled", err)
            self.assertTrue(plain.alive())
        finally:
            plain.cleanup()

    def test_peer_with_certificate_from_another_ca_is_refused(self):
        rogue = Daemon(extra_args=self.tls_args("rogue", ca="rogue-ca"))
        try:
            rc, _, err = self.cli("sweep", "--initiator", self.a.address, rogue.address, "--test", "latency", "--sizes", "64", *QUICK)
            self.assertNotEqual(rc, 0)
            self.assertIn("not accepted", err)
            self.assertTrue(rogue.alive() and self.a.alive())
        finally:
            rogue.cleanup()

    def test_plain_daemon_cannot_open_a_session_with_a_tls_daemon(self):
        plain = Daemon()
        try:
            rc, _, err = run_cli("sweep", "--initiator", plain.address, self.b.address, "--test", "latency", "--sizes", "64", *QUICK)
            self.assertNotEqual(rc, 0)
            self.assertIn("requires TLS for peer sessions", err)
        finally:
            plain.cleanup()

    def test_key_readable_by_others_is_refused_at_start(self):
        key = self.path("loose.key")
        shutil.copy(self.path("node-a.key"), key)
        os.chmod(key, 0o644)
        with self.assertRaises(RuntimeError) as cm:
            Daemon(extra_args=["--tls-cert", self.path("node-a.pem"), "--tls-key", key])
        self.assertIn("readable by others", str(cm.exception))

    def test_missing_and_mismatched_files_are_refused_at_start(self):
        with self.assertRaises(RuntimeError) as cm:
            Daemon(extra_args=["--tls-cert", self.path("node-a.pem")])
        self.assertIn("--tls-key", str(cm.exception))
        with self.assertRaises(RuntimeError) as cm:
            Daemon(extra_args=["--tls-cert", self.path("node-a.pem"), "--tls-key", self.path("node-b.key")])
        self.assertIn("does not belong", str(cm.exception))
        with self.assertRaises(RuntimeError) as cm:
            Daemon(extra_args=["--tls-cert", self.path("nothing.pem"), "--tls-key", self.path("node-a.key")])
        self.assertIn("no such file", str(cm.exception))


if __name__ == "__main__":
    unittest.main()

"""`meshperf local HOST` and POST /v1/local: a copy sweep run by a daemon on its node.

Where the daemon cannot use a GPU (this build machine: no NVIDIA driver), the route must
answer 503 with the classified reason of /v1/info's GPU check and the CLI must print it and
exit 1 (run failed); bad input is a 400 naming the field (CLI: exit 2); without the token,
401. Where a GPU is usable, a tiny sweep must come back as a meshperf.local/1 document.
The daemon stays up throughout.
"""
import ctypes.util
import json
import os
import shutil
import unittest

from meshperf_harness import Daemon, run_cli, write_token_file

EXIT_RUN_FAILED = 1
EXIT_USAGE = 2
EXIT_UNREACHABLE = 3
# The first words of gpu::cuda_status::message for each state (docs/gpu.md, "Without a GPU").
REASON_PREFIX = {
    "no_driver": "no NVIDIA driver",
    "driver_too_old": "NVIDIA driver too old for this CUDA runtime",
    "no_device": "no CUDA device",
    "unavailable": "CUDA unavailable",
    "not_built": "GPU support is not built into this meshperfd",
}


def no_driver_here():
    """True when this machine plainly has no NVIDIA driver (no libcuda, no /dev/nvidiactl)."""
    return ctypes.util.find_library("cuda") is None and not os.path.exists("/dev/nvidiactl")


class LocalRouteTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.d = Daemon()
        s, info = cls.d.http("GET", "/v1/info")
        assert s == 200, info
        cls.gpus = info["gpus"]

    @classmethod
    def tearDownClass(cls):
        cls.d.cleanup()

    def tearDown(self):
        self.assertTrue(self.d.alive(), self.d.read_log())
        self.assertEqual(self.d.http("GET", "/healthz", raw=True)[0], 200)

    def post(self, body, **kw):
        return self.d.http("POST", "/v1/local", body, **kw)

    def assert_400(self, body, *fragments):
        s, b = self.post(body)
        self.assertEqual(s, 400, b)
        self.assertIsInstance(b["error"], str)
        for f in fragments:
            self.assertIn(f, b["error"])
        return b["error"]

    def test_without_gpu_the_classified_reason_with_503(self):
        if self.gpus["available"]:
            self.skipTest("a GPU is usable here: LocalOnGpuTests covers this node")
        s, b = self.post({"copies": "h2d,d2h,d2d", "sizes": "4K..64M"})
        self.assertEqual(s, 503, b)
        state = b["cuda_state"]
        self.assertIn(state, REASON_PREFIX)
        self.assertTrue(b["error"].startswith(REASON_PREFIX[state]), b)
        # The same sentence /v1/info gives for the node's GPUs.
        self.assertEqual(b["error"], self.gpus["reason"])
        if no_driver_here():
            self.assertEqual(state, "no_driver")
            self.assertTrue(b["error"].startswith("no NVIDIA driver"), b)
        # It will not change by waiting: no Retry-After.
        import urllib.request
        req = urllib.request.Request(f"http://{self.d.address}/v1/local", data=b"{}", method="POST",
                                     headers={"Content-Type": "application/json"})
        with self.assertRaises(urllib.error.HTTPError) as cm:
            urllib.request.urlopen(req, timeout=10)
        self.assertEqual(cm.exception.code, 503)
        self.assertIsNone(cm.exception.headers.get("Retry-After"))
        # Nothing holds the measurement gate afterwards.
        s, info = self.d.http("GET", "/v1/info")
        self.assertEqual(info["queue"]["measuring"], "")

    def test_bad_input_is_400_naming_the_field(self):
        s, b = self.post(b"{not json")
        self.assertEqual(s, 400, b)
        self.assertIn("not valid JSON", b["error"])
        self.assert_400([1, 2], "JSON object")
        self.assert_400({"copies": "x2y"}, "field 'copies'", "unknown copy 'x2y'")
        self.assert_400({"copies": ["h2d", "dtoh"]}, "field 'copies'", "unknown copy 'dtoh'")
        self.assert_400({"copies": "h2d,"}, "field 'copies'", "unknown copy ''")
        self.assert_400({"copies": 7}, "field 'copies'")
        self.assert_400({"copies": ""}, "field 'copies'")
        self.assert_400({"sizes": "0"}, "field 'sizes'")
        self.assert_400({"sizes": [0]}, "field 'sizes'", "out of range")
        self.assert_400({"sizes": "4G"}, "field 'sizes'")
        self.assert_400({"sizes": [4096 * (i + 1) for i in range(65)]}, "field 'sizes'", "at most 64")
        self.assert_400({"device": -1}, "field 'device'", "0..1023")
        self.assert_400({"device": "0"}, "field 'device'")
        self.assert_400({"device": 1.5}, "field 'device'")
        self.assert_400({"verify": "yes"}, "field 'verify'")
        self.assert_400({"colour": "blue"}, "unknown field 'colour'")
        self.assert_400({"all_gpus": "yes"}, "field 'all_gpus'")
        self.assert_400({"copies": "h2d,p2p", "all_gpus": True}, "field 'all_gpus' with p2p")

    def test_method_and_content_type(self):
        s, b = self.d.http("GET", "/v1/local")
        self.assertEqual(s, 405, b)
        self.assertIn("POST /v1/local", b["error"])
        s, b = self.post(b"{}", headers={"Content-Type": "text/plain"})
        self.assertEqual(s, 415, b)

    def test_cli_prints_the_daemons_reason_and_fails(self):
        if self.gpus["available"]:
            self.skipTest("a GPU is usable here: LocalOnGpuTests covers this node")
        rc, out, err = run_cli("local", self.d.address, "--copy", "h2d,d2h", "--sizes", "4K..1M")
        self.assertEqual(rc, EXIT_RUN_FAILED, err)
        self.assertEqual(out, "")
        self.assertIn(self.d.address, err)
        self.assertIn(self.gpus["reason"], err)
        if no_driver_here():
            self.assertIn(f"{self.d.address}: no NVIDIA driver", err)
        rc, out, err = run_cli("local", self.d.address, "--format", "json")
        self.assertEqual(rc, EXIT_RUN_FAILED, err)
        self.assertEqual(out, "")

    def test_cli_usage_errors(self):
        rc, out, err = run_cli("local", self.d.address, "--copy", "bogus")
        self.assertEqual(rc, EXIT_USAGE, err)
        self.assertIn("bogus", err)
        rc, out, err = run_cli("local", self.d.address, "--sizes", "0")
        self.assertEqual(rc, EXIT_USAGE, err)
        self.assertIn("size", err)
        rc, out, err = run_cli("local", self.d.address, "--device", "-1")
        self.assertEqual(rc, EXIT_USAGE, err)
        self.assertIn("device", err)
        # --all-gpus: every GPU, so no --device; --expect only with it, and with a floor in it.
        rc, out, err = run_cli("local", self.d.address, "--all-gpus", "--device", "1")
        self.assertEqual(rc, EXIT_USAGE, err)
        self.assertIn("leave out --device", err)
        rc, out, err = run_cli("local", self.d.address, "--all-gpus", "--copy", "h2d,p2p")
        self.assertEqual(rc, EXIT_USAGE, err)
        self.assertIn("p2p", err)
        manifest = os.path.join(self.d.state_dir, "floors.toml")
        with open(manifest, "w") as f:
            f.write("gpus = 8\n")
        rc, out, err = run_cli("local", self.d.address, "--expect", manifest)
        self.assertEqual(rc, EXIT_USAGE, err)
        self.assertIn("add --all-gpus", err)
        rc, out, err = run_cli("local", self.d.address, "--all-gpus", "--expect", manifest)
        self.assertEqual(rc, EXIT_USAGE, err)
        self.assertIn("no h2d_floor_gb_per_s or d2h_floor_gb_per_s", err)
        with open(manifest, "w") as f:
            f.write("h2d_floor_gb_per_s = -3\n")
        rc, out, err = run_cli("local", self.d.address, "--all-gpus", "--expect", manifest)
        self.assertEqual(rc, EXIT_USAGE, err)
        self.assertIn("h2d_floor_gb_per_s must be a number of GB/s", err)

    def test_cli_unreachable_daemon(self):
        rc, out, err = run_cli("local", "127.0.0.1:1", "--copy", "h2d", timeout=60)
        self.assertEqual(rc, EXIT_UNREACHABLE, err)
        self.assertIn("cannot reach meshperfd", err)


class LocalAuthTests(unittest.TestCase):
    def test_token_required(self):
        token = write_token_file("local-sweep-token", "meshperf-local-auth-")
        a = Daemon(extra_args=["--token-file", token])
        try:
            # Authentication comes before the body is looked at (bad input here, too). Two
            # failures only: a third in a row would make this address wait (auth throttle).
            s, b = a.http("POST", "/v1/local", {"device": -1})
            self.assertEqual(s, 401, b)
            self.assertIn("bearer token", b["error"])
            s, b = a.http("POST", "/v1/local", {"copies": "h2d"}, headers={"Authorization": "Bearer wrong",
                                                                       "Content-Type": "application/json"})
            self.assertEqual(s, 401, b)
            auth = {"Authorization": "Bearer local-sweep-token", "Content-Type": "application/json"}
            s, b = a.http("POST", "/v1/local", {"device": -1}, headers=auth)
            self.assertEqual(s, 400, b)
            s, info = a.http("GET", "/v1/info", headers=auth)
            if not info["gpus"]["available"]:
                s, b = a.http("POST", "/v1/local", {"copies": "h2d", "sizes": "4K"}, headers=auth)
                self.assertEqual(s, 503, b)
                self.assertEqual(b["error"], info["gpus"]["reason"])
            rc, out, err = run_cli("local", a.address, "--copy", "h2d", "--sizes", "4K")
            self.assertEqual(rc, EXIT_USAGE, err)
            self.assertIn("token", err)
            if not info["gpus"]["available"]:
                rc, out, err = run_cli("--token-file", token, "local", a.address, "--copy", "h2d", "--sizes", "4K")
                self.assertEqual(rc, EXIT_RUN_FAILED, err)
                self.assertIn(info["gpus"]["reason"], err)
            self.assertEqual(a.http("GET", "/healthz", raw=True)[0], 200)
        finally:
            a.cleanup()
            shutil.rmtree(os.path.dirname(token), ignore_errors=True)


class LocalOnGpuTests(unittest.TestCase):
    """Runs only where the daemon can use a GPU (tests/gpu/device-check runs more)."""

    def test_tiny_sweep_comes_back_as_the_local_document(self):
        d = Daemon()
        try:
            s, info = d.http("GET", "/v1/info")
            if not info["gpus"]["available"]:
                self.skipTest(f"no usable GPU here: {info['gpus'].get('reason')}")
            s, doc = d.http("POST", "/v1/local", {"copies": "h2d,d2h", "sizes": "4K,1M", "verify": True}, timeout=300)
            self.assertEqual(s, 200, doc)
            self.assertEqual(doc["schema"], "meshperf.local/1")
            self.assertEqual(doc["host"], info["host"]["hostname"])
            self.assertEqual([c["copy"] for c in doc["copies"]], ["h2d", "d2h"])
            for c in doc["copies"]:
                self.assertEqual([p["size_bytes"] for p in c["points"]], [4096, 1048576])
                for p in c["points"]:
                    self.assertGreater(p["gb_per_s"], 0)
                    self.assertTrue(p["verified"])
            s, b = d.http("POST", "/v1/local", {"copies": "h2d", "device": 1023})
            self.assertEqual(s, 400, b)
            self.assertIn("cuda:1023 does not exist", b["error"])
            rc, out, err = run_cli("local", d.address, "--copy", "h2d", "--sizes", "64K", "--format", "json", timeout=300)
            self.assertEqual(rc, 0, err)
            self.assertEqual(json.loads(out)["copies"][0]["copy"], "h2d")
        finally:
            d.cleanup()


if __name__ == "__main__":
    unittest.main()

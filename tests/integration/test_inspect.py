"""`meshperf inspect` and /v1/info's rails on a DGX-H100-like sysfs fixture tree.

The tree comes from tests/node/make_sysfs_fixture ($MESHPERF_SYSFS_FIXTURE, the generator
the unit tests use); meshperfd reads it through --sysfs-root and picks its rails with a
[rails] include pattern (the fixture's NICs have no addresses on this host). Checked: the
rails and the GPU pairing in /v1/info, the verdict's exit code for a healthy node, a
downgraded GPU link (CRITICAL), an ACS redirect bit (WARNING), configuration space a
non-root reader gets (UNKNOWN), a manifest's mismatches named, and bad input. Every mistake
of the caller's own is UNKNOWN (exit 3) with its Nagios line, never CRITICAL (2 drains a
node): a wrong manifest key, a manifest that is missing, a directory, a FIFO, /dev/zero or
too large, a missing token file, a bad option, a host that does not resolve, a daemon that
does not answer. A bad [rails] pattern makes the daemon refuse to start.
"""
import json
import os
import shutil
import subprocess
import tempfile
import unittest

from meshperf_harness import Daemon, free_port, run_cli

FIXTURE = os.environ.get("MESHPERF_SYSFS_FIXTURE", "build/tests/node/make_sysfs_fixture")
RAILS_CONFIG = '[rails]\ninclude = ["enp*"]\n'
# Fixture bus ids (tests/node/sysfs_fixture.cpp): switch 1 is on bus 0x30, switch 2 on 0x90.
GPU_SWITCH1_A = "0000:33:00.0"
NIC_SWITCH0_A = "enp21s0np0"
BRIDGE_SWITCH2_DSP0 = "0000:92:00.0"


class InspectTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="meshperf-inspect-")
        self.daemons = []

    def tearDown(self):
        for d in self.daemons:
            d.cleanup()
        shutil.rmtree(self.tmp, ignore_errors=True)

    def tree(self, name, *faults):
        path = os.path.join(self.tmp, name)
        subprocess.run([FIXTURE, path, *faults], check=True, timeout=10)
        return path

    def write(self, name, text):
        path = os.path.join(self.tmp, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def daemon(self, tree, config=RAILS_CONFIG):
        d = Daemon(extra_args=["--sysfs-root", tree, "--config", self.write("meshperfd.toml", config)])
        self.daemons.append(d)
        return d

    def inspect_json(self, *args):
        rc, out, err = run_cli("inspect", *args, "--format", "json", timeout=30)
        self.assertTrue(out, err)
        return rc, json.loads(out)

    def states(self, doc, state):
        return [f for f in doc["findings"] if f["state"] == state]

    def test_info_lists_rails_with_their_nearest_gpus(self):
        d = self.daemon(self.tree("healthy"))
        status, info = d.http("GET", "/v1/info")
        self.assertEqual(status, 200)
        rails = info["rails"]
        self.assertEqual(len(rails), 8, rails)
        first = next(r for r in rails if r["name"] == NIC_SWITCH0_A)
        self.assertEqual(first["rdma_device"], "mlx5_0")
        self.assertEqual(first["rdma_port"], 1)
        self.assertEqual(first["rate_gbit_per_s"], 400)
        self.assertEqual(first["mtu"], 9000)
        self.assertEqual(first["numa_node"], 0)
        self.assertEqual(first["pci_bus_id"], "0000:15:00.0")
        self.assertEqual(first["nearest_gpus"], [{"pci_bus_id": "0000:13:00.0", "cuda_index": None, "path": "PIX"}])
        pairs = info["gpu_rail_pairs"]
        self.assertEqual(len(pairs), 8)
        self.assertEqual({p["path"] for p in pairs}, {"PIX"})
        self.assertEqual(len({p["rail"] for p in pairs}), 8, "one rail per GPU")

    def test_healthy_node_is_ok(self):
        d = self.daemon(self.tree("healthy"))
        rc, out, err = run_cli("inspect", d.address, timeout=30)
        self.assertEqual(rc, 0, out + err)
        self.assertTrue(out.startswith("MESHPERF INSPECT OK - "), out)
        self.assertIn("8 GPUs, 8 rails", out.splitlines()[0])
        self.assertIn("rail_enp21s0np0_gbit=400;;;0;", out)
        rc, doc = self.inspect_json(d.address)
        self.assertEqual((rc, doc["state"], doc["exit_code"]), (0, "OK", 0))
        self.assertEqual(len(doc["node"]["gpus"]), 8)
        self.assertEqual(len(self.states(doc, "OK")), len(doc["findings"]))

    def test_downgraded_link_is_critical_and_acs_a_warning(self):
        d = self.daemon(self.tree("faulty", "--narrow-gpu", GPU_SWITCH1_A, "--acs-bridge", BRIDGE_SWITCH2_DSP0))
        rc, doc = self.inspect_json(d.address)
        self.assertEqual((rc, doc["state"]), (2, "CRITICAL"))
        [crit] = self.states(doc, "CRITICAL")
        self.assertEqual(crit["subject"], f"GPU {GPU_SWITCH1_A}")
        self.assertIn("x8 of x16", crit["message"])
        [warn] = self.states(doc, "WARNING")
        self.assertEqual(warn["subject"], f"bridge {BRIDGE_SWITCH2_DSP0}")
        self.assertIn("P2P Request Redirect", warn["message"])

        d2 = self.daemon(self.tree("acs", "--acs-bridge", BRIDGE_SWITCH2_DSP0))
        rc, out, _ = run_cli("inspect", d2.address, "--format", "nagios", timeout=30)
        self.assertEqual(rc, 1, out)
        self.assertTrue(out.startswith("MESHPERF INSPECT WARNING - "), out)
        self.assertIn(BRIDGE_SWITCH2_DSP0, out.splitlines()[0])

    def test_prom_file(self):
        d = self.daemon(self.tree("faulty", "--narrow-gpu", GPU_SWITCH1_A))
        prom = os.path.join(self.tmp, "inspect.prom")
        rc, out, err = run_cli("inspect", d.address, "--prom-file", prom, "--format", "nagios", timeout=30)
        self.assertEqual(rc, 2, out + err)
        with open(prom) as f:
            text = f.read()
        self.assertIn('meshperf_inspect_state{host="', text)
        self.assertRegex(text, r'meshperf_inspect_state\{host="[^"]*"\} 2\n')
        self.assertRegex(text, r'meshperf_inspect_findings\{host="[^"]*",state="CRITICAL"\} 1\n')
        self.assertIn('rail="enp21s0np0",rdma_device="mlx5_0"} 400000000000\n', text)
        self.assertIn(f'device="{GPU_SWITCH1_A}",kind="gpu",bound="current"}} 8', text)
        self.assertIn('path="PIX"} 1', text)
        self.assertEqual(oct(os.stat(prom).st_mode & 0o777), "0o644")
        rc, out, err = run_cli("inspect", d.address, "--prom-file", os.path.join(self.tmp, "no", "x.prom"), timeout=30)
        self.assertUnknown(rc, out, err, "does not exist")

    def test_unreadable_config_space_is_unknown(self):
        d = self.daemon(self.tree("short", "--short-config"))
        rc, doc = self.inspect_json(d.address)
        self.assertEqual((rc, doc["state"]), (3, "UNKNOWN"))
        unknown = self.states(doc, "UNKNOWN")
        self.assertTrue(unknown and all(f["check"] == "acs" for f in unknown), unknown)

    def test_manifest(self):
        # No scheduled inspection: an asked one then sets /metrics (test_inspect_schedule.py
        # has the daemon's own schedule, whose series they are otherwise).
        d = self.daemon(self.tree("healthy"), RAILS_CONFIG + "[inspect]\ninterval = 0\n")
        good = self.write("good.toml", 'gpus = 8\nrails = 8\nrail_rate_gbit = 400\nmtu = 9000\nnic_firmware = "28.39.1002"\n')
        rc, out, err = run_cli("inspect", d.address, "--expect", good, timeout=30)
        self.assertEqual(rc, 0, out + err)
        bad = self.write("bad.toml", "gpus = 8\nrails = 4\nmtu = 4200\n")
        rc, doc = self.inspect_json(d.address, "--expect", bad)
        self.assertEqual(rc, 2)
        messages = [f["message"] for f in self.states(doc, "CRITICAL")]
        self.assertIn("8 rails, manifest expects 4", messages)
        self.assertIn("MTU 9000, manifest expects 4200", messages)
        wrong = self.write("wrong.toml", "gpu = 8\n")
        rc, out, err = run_cli("inspect", d.address, "--expect", wrong, timeout=30)
        self.assertUnknown(rc, out, err, "'gpu' is not a manifest key")
        status, body = d.http("POST", "/v1/inspect", {"expect": {"gpu": 8}})
        self.assertEqual(status, 400)
        self.assertIn("'gpu' is not a manifest key", body["error"])
        status, body = d.http("POST", "/v1/inspect", {"expected": {"gpus": 8}})
        self.assertEqual((status, body["error"]), (400, "unknown key 'expected' (known: expect, loopback, gpu_copies)"))
        status, body = d.http("POST", "/v1/inspect", {"loopback": "yes"})
        self.assertEqual((status, body["error"]), (400, "'loopback' must be true or false"))
        status, body = d.http("POST", "/v1/inspect", b"[8]")
        self.assertEqual(status, 400)
        status, body = d.http("POST", "/v1/inspect", b"gpus=8", headers={"Content-Type": "text/plain"})
        self.assertEqual(status, 415)
        status, body = d.http("DELETE", "/v1/inspect")
        self.assertEqual((status, body["error"]), (405, "use GET or POST on /v1/inspect"))
        status, body = d.http("POST", "/v1/inspect", {"expect": {"gpus": 7}})
        self.assertEqual((status, body["state"]), (200, "CRITICAL"))
        # The latest inspection is on /metrics: its verdict, findings and the node's links.
        status, text = d.http("GET", "/metrics", raw=True)
        self.assertEqual(status, 200)
        text = text.decode()
        host = body["host"]
        self.assertIn(f'meshperf_inspect_state{{host="{host}"}} 2\n', text)
        criticals = sum(f["state"] == "CRITICAL" for f in body["findings"])
        self.assertIn(f'meshperf_inspect_findings{{host="{host}",state="CRITICAL"}} {criticals}\n', text)
        self.assertIn("meshperf_pcie_link_width_lanes{", text)
        self.assertEqual(text.count("# TYPE meshperf_inspect_state gauge"), 1)
        self.assertTrue(d.alive())

    def test_loopback_without_rdma_devices_is_unknown(self):
        # This host has no RDMA device (its kernel has no RDMA): asked for, the loopback
        # cannot be made, which is UNKNOWN (exit 3), never a pass; through the daemon and in
        # process alike. tests/rdma-vm measures it on Soft-RoCE.
        d = self.daemon(self.tree("healthy"))
        for args in ([d.address], ["--sysfs-root", self.tree("here"), "--rails-include", "enp*"]):
            rc, doc = self.inspect_json(*args, "--loopback")
            found = [f for f in doc["findings"] if f["check"] == "rnic_loopback"]
            self.assertEqual(len(found), 1, doc["findings"])
            self.assertEqual(found[0]["state"], "UNKNOWN")
            self.assertTrue(found[0]["message"].startswith("no loopback measured: "), found[0])
            self.assertEqual(doc["loopback"], [])
            if args[0] == d.address:  # the healthy node: the loopback alone is not OK
                self.assertEqual((rc, doc["state"]), (3, "UNKNOWN"), doc["summary"])
            self.assertNotEqual(rc, 0, doc["summary"])
        rc, doc = self.inspect_json(d.address)  # without --loopback: no such finding
        self.assertFalse([f for f in doc["findings"] if f["check"] == "rnic_loopback"])
        self.assertEqual(rc, 0, doc["summary"])

    def test_gpu_copies_without_a_gpu_are_unknown(self):
        # This host has no GPU: asked for, the all-GPU copies cannot be made, which is UNKNOWN
        # (exit 3) naming CUDA's reason, never a pass; through the daemon and in process.
        # tests/gpu/device-check runs them on a GPU; node_unit judges their figures.
        d = self.daemon(self.tree("healthy"))
        for args in ([d.address], ["--sysfs-root", self.tree("here"), "--rails-include", "enp*"]):
            rc, doc = self.inspect_json(*args, "--gpu-copies")
            found = [f for f in doc["findings"] if f["check"] == "gpu_copy"]
            self.assertEqual(len(found), 1, doc["findings"])
            self.assertEqual((found[0]["state"], found[0]["subject"]), ("UNKNOWN", "GPUs"), found[0])
            self.assertTrue(found[0]["message"].startswith("no host<->GPU copy measured: "), found[0])
            self.assertGreater(len(found[0]["message"]), len("no host<->GPU copy measured: ") + 10, found[0])
            self.assertEqual(doc["gpu_copies"], [])
            if args[0] == d.address:
                self.assertEqual((rc, doc["state"]), (3, "UNKNOWN"), doc["summary"])
            self.assertNotEqual(rc, 0, doc["summary"])
        status, body = d.http("POST", "/v1/inspect", {"gpu_copies": 1})
        self.assertEqual((status, body["error"]), (400, "'gpu_copies' must be true or false"))
        # A daemon busy measuring does not wait, and says so.
        self.assertTrue(d.alive())
        self.assertTrue(d.alive())

    def assertUnknown(self, rc, out, err, why):
        """A health check's own mistake: UNKNOWN, exit 3, its Nagios line first on stdout."""
        self.assertEqual(rc, 3, out + err)
        first = out.splitlines()[0] if out else ""
        self.assertTrue(first.startswith("MESHPERF INSPECT UNKNOWN - "), out + err)
        self.assertIn(why, first)

    def test_callers_mistakes_are_unknown_never_critical(self):
        """A bad rollout of a manifest or a token must not drain a fleet (exit 2 would)."""
        d = self.daemon(self.tree("healthy"), RAILS_CONFIG + "[inspect]\ninterval = 0\n")
        fifo = os.path.join(self.tmp, "fifo.toml")
        os.mkfifo(fifo)
        big = self.write("big.toml", "# " + "x" * (2 << 20) + "\n")
        cases = [
            (["--expect", os.path.join(self.tmp, "none.toml")], "no such file"),
            (["--expect", self.tmp], "is a directory, not a regular file"),
            (["--expect", fifo], "is a FIFO, not a regular file"),  # never waits for a writer
            (["--expect", "/dev/zero"], "is a character device, not a regular file"),  # never grows
            (["--expect", big], "more than the 1 MiB"),
            (["--no-such-option"], "bad options"),
        ]
        local = ["--sysfs-root", self.tree("local")]  # in process, no daemon
        for args, why in cases:
            for where in ([d.address], local):
                with self.subTest(args=args, where=where[0]):
                    rc, out, err = run_cli("inspect", *where, *args, timeout=30)
                    self.assertUnknown(rc, out, err, why)
        rc, out, err = run_cli("inspect", d.address, "--expect", self.tmp, "--format", "json", timeout=30)
        self.assertEqual(rc, 3, out + err)
        doc = json.loads(out)
        self.assertEqual((doc["state"], doc["exit_code"]), ("UNKNOWN", 3))
        rc, out, err = run_cli("--token-file", os.path.join(self.tmp, "no-token"), "inspect", d.address, timeout=30)
        self.assertUnknown(rc, out, err, "no-token")
        self.assertTrue(d.alive())

    def test_bad_hosts(self):
        rc, out, err = run_cli("inspect", "no-such-host.invalid", timeout=30)
        self.assertUnknown(rc, out, err, "cannot resolve")
        rc, out, err = run_cli("inspect", f"127.0.0.1:{free_port()}", timeout=30)
        self.assertEqual(rc, 3, out + err)
        self.assertTrue(out.startswith("MESHPERF INSPECT UNKNOWN - "), out)

    def test_this_machine_in_process(self):
        # No daemon: the CLI reads the tree itself. This host's addresses name none of the
        # fixture's NICs, so by the default rule there is no rail: WARNING, and each GPU's
        # affinity is unknown.
        rc, doc = self.inspect_json("--sysfs-root", self.tree("healthy"))
        self.assertEqual((rc, doc["state"]), (1, "WARNING"), doc["summary"])
        self.assertEqual(len(doc["node"]["gpus"]), 8)
        self.assertEqual(doc["node"]["rails"], [])
        self.assertEqual(len([f for f in self.states(doc, "UNKNOWN") if f["check"] == "affinity"]), 8)

    def test_this_machine_with_rail_patterns(self):
        tree = self.tree("healthy", "--acs-bridge", BRIDGE_SWITCH2_DSP0)
        rc, doc = self.inspect_json("--sysfs-root", tree, "--rails-include", "enp*,mlx5_*", "--rails-exclude", "mlx5_7")
        self.assertEqual((rc, doc["state"]), (1, "WARNING"), doc["summary"])
        self.assertEqual(len(doc["node"]["rails"]), 7)
        [warn] = self.states(doc, "WARNING")
        self.assertEqual(warn["subject"], f"bridge {BRIDGE_SWITCH2_DSP0}")
        rc, out, err = run_cli("inspect", "127.0.0.1:1", "--rails-include", "enp*", timeout=30)
        self.assertUnknown(rc, out, err, "[rails] table")

    def test_bad_rails_pattern_stops_the_daemon(self):
        with self.assertRaises(RuntimeError) as e:
            self.daemon(self.tree("healthy"), '[rails]\ninclude = ["enp 1"]\n')
        self.assertIn("[rails] include", str(e.exception))


if __name__ == "__main__":
    unittest.main()

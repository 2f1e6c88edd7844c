"""Models, plots, reports and plans through the CLI: real sweeps between two daemons on
loopback, then `plot`, `report`, `plan` and `model` on the files they wrote. SVG is parsed
as XML; the HTML report is rendered by headless Chromium (skipped when it is not installed)
and the screenshot checked not to be blank."""
import json
import os
import shutil
import struct
import subprocess
import tempfile
import unittest
import xml.etree.ElementTree as ET
import zlib

from meshperf_harness import QUICK, Daemon, run_cli

SVG_NS = "{http://www.w3.org/2000/svg}"
CHROMIUM = "/usr/bin/chromium"


def read(path, mode="r"):
    with open(path, mode, **({} if "b" in mode else {"encoding": "utf-8"})) as f:
        return f.read()


def write(path, text):
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def decode_png(path):
    """(width, height, channels, rows) of an 8-bit RGB/RGBA/grey PNG; rows are bytes."""
    data = read(path, "rb")
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, ihdr = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            ihdr = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    width, height, depth, colour, _, _, interlace = ihdr
    assert depth == 8 and interlace == 0, f"unsupported PNG: depth {depth}, interlace {interlace}"
    channels = {0: 1, 2: 3, 4: 2, 6: 4}[colour]
    raw = zlib.decompress(idat)
    stride = width * channels
    rows, prev = [], bytearray(stride)
    for y in range(height):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        if f == 1:
            for i in range(channels, stride):
                line[i] = (line[i] + line[i - channels]) & 0xFF
        elif f == 2:
            line = bytearray((a + b) & 0xFF for a, b in zip(line, prev))
        elif f == 3:
            for i in range(stride):
                left = line[i - channels] if i >= channels else 0
                line[i] = (line[i] + ((left + prev[i]) >> 1)) & 0xFF
        elif f == 4:
            for i in range(stride):
                a = line[i - channels] if i >= channels else 0
                b, c = prev[i], prev[i - channels] if i >= channels else 0
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 0xFF
        rows.append(bytes(line))
        prev = line
    return width, height, channels, rows


class ReportTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.a = Daemon()
        cls.b = Daemon()
        cls.dir = tempfile.mkdtemp(prefix="meshperf-reports-")
        cls.run1 = os.path.join(cls.dir, "run1.json")
        cls.run2 = os.path.join(cls.dir, "run2.json")
        cls.svg1 = os.path.join(cls.dir, "run1.svg")
        rc, out, err = run_cli("sweep", "--initiator", cls.a.address, cls.b.address, "--test", "latency,bandwidth",
                               "--sizes", "64,1K,16K,256K,1M", "--format", "json", "-o", cls.run1, "--svg", cls.svg1, *QUICK)
        assert rc == 0, f"sweep failed: {err}"
        rc, out, err = run_cli("sweep", "--initiator", cls.b.address, cls.a.address, "--test", "latency,bandwidth",
                               "--sizes", "64,4K,64K,1M", "--format", "json", "-o", cls.run2, *QUICK)
        assert rc == 0, f"second sweep failed: {err}"
        cls.matrix = os.path.join(cls.dir, "matrix.json")
        rc, out, err = run_cli("matrix", "--hosts", f"{cls.a.address},{cls.b.address}", "--format", "json",
                               "-o", cls.matrix, "--max-time", "0.2", "--warmup", "0.02", "-q")
        assert rc in (0, 1) and os.path.exists(cls.matrix), f"matrix failed ({rc}): {err}"

    @classmethod
    def tearDownClass(cls):
        cls.a.cleanup()
        cls.b.cleanup()
        shutil.rmtree(cls.dir, ignore_errors=True)

    def parse_svg(self, path):
        root = ET.parse(path).getroot()
        self.assertEqual(root.tag, SVG_NS + "svg")
        return root, " ".join(t.text or "" for t in root.iter(SVG_NS + "text"))

    def test_sweep_json_and_table_carry_the_model(self):
        doc = json.loads(read(self.run1))
        m = doc["model"]
        self.assertIsNotNone(m, doc.get("model_error"))
        for k in ("alpha_us", "beta_gbit_per_s", "beta_gbyte_per_s", "n_half_bytes", "r_squared", "worst_rel_residual"):
            self.assertIn(k, m)
        self.assertGreater(m["beta_gbit_per_s"], 0)
        self.assertGreaterEqual(m["alpha_us"], 0)
        self.assertIn("piecewise", m)
        rc, out, err = run_cli("show", self.a.address, doc["id"])
        self.assertEqual(rc, 0, err)
        self.assertIn("model t(n) = α + n/β", out)
        self.assertIn("Gbit/s", out.split("model t(n)")[1])
        self.assertIn("R²", out)
        rc, out, err = run_cli("show", self.a.address, doc["id"], "--format", "json")
        self.assertEqual(rc, 0, err)
        self.assertAlmostEqual(json.loads(out)["model"]["alpha_us"], m["alpha_us"], delta=1e-9 * max(1, m["alpha_us"]))

    def test_sweep_svg(self):
        root, text = self.parse_svg(self.svg1)
        self.assertIn("Gbit/s", text)
        self.assertIn("µs", text)
        self.assertGreater(len(list(root.iter(SVG_NS + "path"))) + len(list(root.iter(SVG_NS + "polyline"))), 1)

    def test_plot_two_runs(self):
        out = os.path.join(self.dir, "both.svg")
        rc, _, err = run_cli("plot", self.run1, self.run2, "-o", out, "--title", "two runs")
        self.assertEqual(rc, 0, err)
        _, text = self.parse_svg(out)
        self.assertIn("two runs", text)
        # one legend entry per run: by host, or by file when both runs name the same hosts (loopback)
        self.assertTrue(("run1.json" in text and "run2.json" in text) or (self.a.address in text and self.b.address in text),
                        text[:2000])

    def test_plot_matrix_heatmap(self):
        out = os.path.join(self.dir, "matrix.svg")
        rc, _, err = run_cli("plot", self.matrix, "-o", out)
        self.assertEqual(rc, 0, err)
        root, text = self.parse_svg(out)
        self.assertGreaterEqual(len(list(root.iter(SVG_NS + "rect"))), 2)
        rc, _, err = run_cli("plot", self.matrix, self.run1, "-o", out)
        self.assertEqual(rc, 2)
        self.assertIn("one matrix", err)

    def test_plot_rejects_other_json(self):
        bad = os.path.join(self.dir, "other.json")
        write(bad, '{"hello": 1}')
        rc, _, err = run_cli("plot", bad, "-o", os.path.join(self.dir, "x.svg"))
        self.assertEqual(rc, 2)
        self.assertIn("neither", err)
        rc, _, err = run_cli("plot", os.path.join(self.dir, "missing.json"))
        self.assertEqual(rc, 2)

    def test_report_renders_in_chromium(self):
        html = os.path.join(self.dir, "report.html")
        rc, _, err = run_cli("report", self.run1, self.run2, self.matrix, "-o", html, "--title", "loopback report")
        self.assertEqual(rc, 0, err)
        page = read(html)
        self.assertIn("loopback report", page)
        self.assertIn("<svg", page)
        self.assertNotIn("<script", page)
        for ref in ('src="http', "src='http", 'href="http', "@import", "url(http"):
            self.assertNotIn(ref, page, "the report must be self-contained")
        if not os.path.exists(CHROMIUM):
            self.skipTest(f"{CHROMIUM} not installed: the HTML was not rendered (apt-get install chromium)")
        png = os.path.join(self.dir, "report.png")
        profile = tempfile.mkdtemp(prefix="meshperf-chromium-")
        try:
            p = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                                "--disable-background-networking", "--disable-component-update", "--disable-sync",
                                f"--user-data-dir={profile}", f"--screenshot={png}", "--window-size=1200,2000",
                                "file://" + html], capture_output=True, text=True, timeout=120)
        finally:
            shutil.rmtree(profile, ignore_errors=True)
        self.assertTrue(os.path.exists(png), f"chromium wrote no screenshot (exit {p.returncode}): {p.stderr[-2000:]}")
        if os.environ.get("MESHPERF_KEEP_PNG"):
            shutil.copy(png, os.environ["MESHPERF_KEEP_PNG"])
        width, height, channels, rows = decode_png(png)
        self.assertEqual((width, height), (1200, 2000))
        colours, ink = set(), 0
        for row in rows:
            for x in range(0, width * channels, channels):
                px = row[x:x + 3]
                colours.add(px)
                ink += px != b"\xff\xff\xff"
        share = ink / (width * height)
        self.assertGreater(len(colours), 50, "the screenshot has almost no colours: blank page?")
        self.assertGreater(share, 0.02, f"only {share:.1%} of the screenshot is not white")

    def test_plan_json_fields(self):
        rc, out, err = run_cli("plan", "--alpha-us", "4.5", "--beta-gbit", "370", "--nodes", "64", "--gpus-per-node", "8",
                               "--intra-alpha-us", "2", "--intra-beta-gbit", "2800", "--params", "70e9", "--dtype", "bf16", "--bucket", "25M", "--step-compute-ms", "15000",
                               "--format", "json")
        self.assertEqual(rc, 0, err)
        doc = json.loads(out)
        self.assertEqual(doc["schema"], "meshperf.plan/1")
        colls = set()
        for p in doc["predictions"]:
            for k in ("collective", "algorithm", "bytes", "nodes", "time_s", "algbw_gbit_per_s", "busbw_gbit_per_s"):
                self.assertIn(k, p)
            self.assertEqual(p["nodes"], 64)
            self.assertEqual(p["bytes"], 25 << 20)
            self.assertGreater(p["time_s"], 0)
            self.assertAlmostEqual(p["algbw_gbit_per_s"], p["bytes"] * 8 / p["time_s"] / 1e9, delta=1e-6 * p["algbw_gbit_per_s"])
            colls.add(p["collective"])
            if p["collective"] == "all_reduce":
                self.assertAlmostEqual(p["busbw_gbit_per_s"], p["algbw_gbit_per_s"] * 2 * 511 / 512, delta=1e-6 * p["busbw_gbit_per_s"])
        self.assertEqual(colls, {"all_reduce", "all_gather", "reduce_scatter", "all_to_all", "broadcast"})
        step = doc["dp_step"]
        self.assertEqual(step["buckets"], 5341)
        self.assertAlmostEqual(step["comm_s"], 1.20, delta=0.02)          # docs/capacity-planning.md §4
        self.assertAlmostEqual(step["efficiency_no_overlap"], 0.926, delta=0.005)
        rc, out, err = run_cli("plan", "--alpha-us", "4.5", "--beta-gbit", "370", "--nodes", "2", "--bytes", "1M")
        self.assertEqual(rc, 0, err)
        self.assertIn("busbw", out)
        self.assertIn("all_reduce", out)
        rc, out, err = run_cli("plan", "--alpha-us", "4.5", "--beta-gbit", "370", "--nodes", "2", "--bytes", "1M", "--format", "csv")
        self.assertEqual(rc, 0, err)
        lines = out.strip().split("\n")
        self.assertTrue(lines[0].startswith("collective,algorithm,bytes,nodes"))
        self.assertEqual(len(lines), 1 + len([1 for _ in json.loads(run_cli(
            "plan", "--alpha-us", "4.5", "--beta-gbit", "370", "--nodes", "2", "--bytes", "1M", "--format", "json")[1])["predictions"]]))

    def test_plan_from_result_and_matrix(self):
        rc, out, err = run_cli("plan", "--from", self.run1, "--nodes", "4", "--bytes", "64M", "--format", "json")
        self.assertEqual(rc, 0, err)
        doc = json.loads(out)
        self.assertEqual(doc["link"]["source"], "result")
        self.assertIn("alpha_us", doc["link"]["model"])
        self.assertTrue(all(p["time_s"] > 0 and p["nodes"] == 4 for p in doc["predictions"]))
        # of 64 MiB, a tree step sends 32 MiB (S/2), a ring step over 4 ranks 16 MiB; the sweep went up to 1 MiB
        kinds = [w["kind"] for w in doc["warnings"]]
        self.assertIn("extrapolation_above", kinds)
        self.assertIn("up to 32 MiB", next(w["message"] for w in doc["warnings"] if w["kind"] == "extrapolation_above"))
        rc, out, err = run_cli("plan", "--from", self.run1, "--nodes", "4", "--bytes", "1M", "--format", "json")
        self.assertEqual(rc, 0, err)
        self.assertFalse([w for w in json.loads(out)["warnings"] if w["kind"].startswith("extrapolation")])
        rc, out, err = run_cli("plan", "--from", self.run1, "--nodes", "4", "--params", "1e9", "--step-compute-ms", "500")
        self.assertEqual(rc, 0, err)
        self.assertIn("efficiency", out)
        self.assertIn("model t(n)", out)
        self.assertIn("\nwarnings:\n", out)  # 25 MiB buckets: ring steps of 6.25 MiB, beyond 4 x 1 MiB
        rc, out, err = run_cli("plan", "--matrix", self.matrix, "--bytes", "64M", "--format", "json")
        self.assertEqual(rc, 0, err)
        doc = json.loads(out)
        self.assertEqual(doc["link"]["source"], "matrix")
        self.assertIn(doc["link"]["bounding_link"]["from"], (self.a.address, self.b.address))
        self.assertEqual(doc["topology"]["nodes"], 2)
        self.assertEqual(doc["warnings"], [])  # a matrix carries no measured size range to check against

    def test_plan_bad_options_exit_2(self):
        cases = [
            ["--nodes", "4", "--bytes", "1M"],                                              # no link
            ["--alpha-us", "2", "--beta-gbit", "100", "--from", self.run1, "--nodes", "4", "--bytes", "1M"],  # two links
            ["--alpha-us", "2", "--nodes", "4", "--bytes", "1M"],                           # half a link
            ["--alpha-us", "2", "--beta-gbit", "100", "--nodes", "4"],                      # no size
            ["--alpha-us", "2", "--beta-gbit", "100", "--nodes", "4", "--bytes", "1M", "--params", "1e9"],
            ["--alpha-us", "2", "--beta-gbit", "100", "--nodes", "4", "--params", "1e9", "--dtype", "int3"],
            ["--alpha-us", "2", "--beta-gbit", "100", "--nodes", "4", "--bytes", "lots"],
            ["--alpha-us", "2", "--beta-gbit", "-1", "--nodes", "4", "--bytes", "1M"],
            ["--alpha-us", "2", "--beta-gbit", "100", "--nodes", "1", "--bytes", "1M"],     # one rank
            ["--alpha-us", "2", "--beta-gbit", "100", "--nodes", "4", "--bytes", "1M", "--step-compute-ms", "10"],
            ["--from", self.matrix, "--nodes", "4", "--bytes", "1M"],                       # wrong kind of file
            ["--from", os.path.join(self.dir, "missing.json"), "--nodes", "4", "--bytes", "1M"],
        ]
        for args in cases:
            with self.subTest(args=args):
                rc, out, err = run_cli("plan", *args)
                self.assertEqual(rc, 2, f"stdout {out!r} stderr {err!r}")
                self.assertEqual(len(err.strip().splitlines()), 1, err)
                self.assertEqual(out, "")

    def test_model_held_out(self):
        rc, out, err = run_cli("model", self.run1, "--every-other", "--format", "json")
        self.assertEqual(rc, 0, err)
        doc = json.loads(out)
        self.assertTrue(doc["held_out"])
        self.assertEqual(doc["fit_sizes"], [64, 16384, 1048576])
        self.assertEqual(sorted({p["size_bytes"] for p in doc["predictions"]}), [1024, 262144])
        for p in doc["predictions"]:
            self.assertFalse(p["fitted"])
            self.assertAlmostEqual(p["rel_error"], (p["predicted_s"] - p["measured_s"]) / p["measured_s"], delta=1e-9)
        rc, out, err = run_cli("model", self.run1)
        self.assertEqual(rc, 0, err)
        self.assertIn("worst |error|", out)


if __name__ == "__main__":
    unittest.main()

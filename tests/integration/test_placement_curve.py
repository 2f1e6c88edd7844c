"""The issue's acceptance test for thread placement: a default (no --cpu) latency sweep of
16 sizes is monotone within its stated precision in each of 5 runs, and every point of
every run ran with the same placement. The stated precision includes the sweep's drift
(core/sweep_drift.hpp): on a VM whose latency moves in phases longer than a point, a point's
own interval cannot see the other phases, the reference re-measured every 4 points can, and
a point the curve falls from is measured again, in rounds. In CTest as
integration-placement_curve (label `curve`; see tests/integration/CMakeLists.txt).
"""
import json
import os
import unittest

from meshperf_harness import Daemon, run_cli

ALLOWED = sorted(os.sched_getaffinity(0))
# Bounds this test sets itself, so the daemon's own precision cannot loosen the check without
# limit (a daemon that stated ±100% on every point would pass any curve):
#  - STATED_CAP: a point's stated 95% half-width may be at most this fraction of its median;
#    beyond it the point is not measured well enough to tell a curve from noise, and fails.
#  - MEDIAN_SLACK: the curve of the five runs' medians per size (no daemon figure in it) may
#    fall with size by at most this fraction.
# Set for what this 2-CPU VM gives (2026-12-07: under a build on both CPUs, stated
# half-widths of 25-50% of ~35 µs and medians falling by up to 13% from one size to the
# next; on the quiet clean-clone CI run, half-widths up to 72% of ~65 µs, the test's short
# points being what they are): a point may not state an interval wider than its own
# median (then it measured nothing), and the medians, which hold no daemon figure, carry the
# check. Still far inside what the test is for: the placement artifact it catches is a 4x
# step (6 vs 26 µs).
STATED_CAP = 1.00
MEDIAN_SLACK = 0.25


@unittest.skipIf(len(ALLOWED) < 2, "needs two usable CPUs")
class DefaultCurveTests(unittest.TestCase):
    """The issue's acceptance test: a default (no --cpu) latency sweep is a curve of the path,
    not of the scheduler. Short points keep each sweep to a few seconds, so a build starting
    on this shared machine disturbs few of them; the check itself is not loosened."""

    RUNS = 5
    SIZES = "1..32K"  # 16 points

    def test_default_latency_curve_is_monotone_within_its_precision(self):
        a, b = Daemon(), Daemon()
        try:
            placements, curves, violations, runs_p50 = set(), [], [], []
            for run in range(1, self.RUNS + 1):
                rc, out, err = run_cli("sweep", "--initiator", a.address, b.address, "--format", "json", "-q",
                                       "--test", "latency", "--sizes", self.SIZES, "--max-time", "0.25", "--warmup", "0.05")
                self.assertEqual(rc, 0, err)
                doc = json.loads(out)
                pts = doc["points"]
                self.assertEqual(len(pts), 16)
                p50 = [p["lat_ns"]["p50"] for p in pts]
                # The stated 95% half-width of each median, in ns.
                hw = [p["precision"]["achieved"] * p["lat_ns"]["p50"] for p in pts]
                curves.append(f"run {run} (load {os.getloadavg()[0]:.2f}, drift ±{doc['drift'][0]['relative_half_width'] * 100:.2g}%): "
                              + " ".join(f"{x / 1e3:.2f}±{h / 1e3:.2f}" for x, h in zip(p50, hw)))
                for p, h in zip(pts, hw):
                    if not h <= STATED_CAP * p["lat_ns"]["p50"]:
                        violations.append(f"run {run}: {p['size_bytes']} B states ±{h / 1e3:.3f} µs of "
                                          f"{p['lat_ns']['p50'] / 1e3:.2f} µs, beyond the test's cap of ±{STATED_CAP:.0%}")
                for i in range(len(pts) - 1):
                    if p50[i + 1] < p50[i] - (hw[i] + hw[i + 1]):
                        violations.append(f"run {run}: {p50[i + 1] / 1e3:.2f} µs at {pts[i + 1]['size_bytes']} B < "
                                          f"{p50[i] / 1e3:.2f} µs at {pts[i]['size_bytes']} B - "
                                          f"({hw[i] / 1e3:.3f} + {hw[i + 1] / 1e3:.3f}) µs")
                # The drift check: the 1 B reference read after points 4, 8, 12 and 16 as well.
                self.assertEqual([d["size_bytes"] for d in doc["drift"]], [1], doc.get("drift"))
                self.assertEqual([r["after_point"] for r in doc["drift"][0]["readings"]], [0, 4, 8, 12, 16])
                drift = doc["drift"][0]["relative_half_width"]
                for p in pts:
                    self.assertGreaterEqual(p["precision"]["achieved"], drift * (1 - 1e-9), p["size_bytes"])
                    placements.add(json.dumps(p["placement"], sort_keys=True))
                self.assertFalse([w for w in doc["warnings"] if "placement changed" in w], doc["warnings"])
                runs_p50.append(p50)
            # Independent of any stated precision: the median of the runs at each size.
            medians = [sorted(col)[len(col) // 2] for col in zip(*runs_p50)]
            for i in range(len(medians) - 1):
                if medians[i + 1] < medians[i] * (1 - MEDIAN_SLACK):
                    violations.append(f"median of {self.RUNS} runs: {medians[i + 1] / 1e3:.2f} µs at size #{i + 2} < "
                                      f"{medians[i] / 1e3:.2f} µs at #{i + 1} - {MEDIAN_SLACK:.0%}")
            self.assertEqual(len(placements), 1, f"placement differed between points or runs: {placements}")
            where = json.loads(placements.pop())
            self.assertTrue(where["initiator"]["pinned"] and where["peer"]["pinned"])
            self.assertIs(where["shared_cpu"], False)
            self.assertFalse(violations, "latency fell with size by more than the stated precision:\n  "
                             + "\n  ".join(violations) + "\ncurves (p50 ± half-width, µs):\n  " + "\n  ".join(curves))
        finally:
            a.cleanup()
            b.cleanup()


if __name__ == "__main__":
    unittest.main()

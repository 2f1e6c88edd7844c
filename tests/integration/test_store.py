"""The result store under faults (issue 25 items 4-7, issue 26 item 6): points kept through
kill -9 and SIGTERM, a full disk (a small tmpfs), a damaged file, damaged rows, retention and
the paginated history. Real daemons on loopback; about a minute."""
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
import unittest

from meshperf_harness import QUICK, Daemon, run_cli


def wait_for(predicate, timeout, what):
    """Polls `predicate` until it returns something true; fails the test after `timeout` s."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")


def long_sweep_spec(peer):
    """17 latency points of about 0.15 s each: time to act between points."""
    return {"peer": peer, "tests": "latency", "sizes": "1..64K", "max_point_s": 0.1, "warmup_s": 0.01}


def short_sweep(a, b, *extra):
    return run_cli("sweep", "--initiator", a.address, b.address, "--test", "latency", "--sizes", "64,1K",
                   "--format", "json", *QUICK, *extra, timeout=60)


def write_config(text):
    path = os.path.join(tempfile.mkdtemp(prefix="meshperf-store-cfg-"), "meshperfd.toml")
    with open(path, "w") as f:
        f.write(text)
    return path


class StoreBase(unittest.TestCase):
    def setUp(self):
        self.daemons = []

    def tearDown(self):
        for d in self.daemons:
            d.cleanup()

    def daemon(self, **kw):
        d = Daemon(**kw)
        self.daemons.append(d)
        return d

    def start_measuring(self, a, b, points):
        """Starts a long sweep on `a` and returns (run id, live document) once `points` are measured."""
        status, doc = a.http("POST", "/v1/runs", long_sweep_spec(b.address))
        self.assertEqual(status, 202, doc)
        run_id = doc["id"]
        live = wait_for(lambda: (lambda d: d if len(d[1]["points"]) >= points else None)(a.http("GET", f"/v1/runs/{run_id}")),
                        30, f"{points} points of {run_id}")[1]
        return run_id, live

    def restart(self, d):
        d.start()
        return d


class PointsKeptTests(StoreBase):
    def test_kill_9_keeps_every_point_measured(self):
        b = self.daemon()
        a = self.daemon()
        run_id, live = self.start_measuring(a, b, 2)
        # The run is listed as running, with its points as they are committed (issue 26 item 6).
        row = next(r for r in a.http("GET", "/v1/runs")[1]["runs"] if r["id"] == run_id)
        self.assertEqual(row["state"], "running", row)
        self.assertGreaterEqual(row["points"], 2, row)
        info = a.http("GET", "/v1/info")[1]
        self.assertEqual(info["queue"]["measuring_run_id"], run_id, info["queue"])
        live = a.http("GET", f"/v1/runs/{run_id}")[1]
        seen = [p["size_bytes"] for p in live["points"]]
        a.proc.send_signal(signal.SIGKILL)
        a.proc.wait(10)
        a.log.close()
        self.restart(a)
        status, doc = a.http("GET", f"/v1/runs/{run_id}")
        self.assertEqual(status, 200, doc)
        print(f"\nstore: kill -9 after {len(seen)} points seen; stored {len(doc['points'])}: {doc['error']}")
        self.assertEqual(doc["state"], "failed")
        self.assertTrue(doc["error"].startswith("interrupted: the daemon stopped before this run finished"), doc["error"])
        self.assertIn("points measured before are kept", doc["error"])
        self.assertGreaterEqual(len(doc["points"]), len(seen))
        self.assertEqual([p["size_bytes"] for p in doc["points"]][:len(seen)], seen)
        row = next(r for r in a.http("GET", "/v1/runs")[1]["runs"] if r["id"] == run_id)
        self.assertEqual((row["state"], row["points"]), ("failed", len(doc["points"])))

    def test_kill_9_keeps_a_collectives_points(self):
        ranks = [self.daemon() for _ in range(2)]
        spec = {"hosts": [d.address for d in ranks], "ops": "allreduce", "sizes": "4K,8K,16K,32K,64K,128K,256K,512K",
                "duration_s": 0.15, "warmup_iterations": 1}
        status, doc = ranks[0].http("POST", "/v1/collectives", spec)
        self.assertEqual(status, 202, doc)
        run_id = doc["id"]
        wait_for(lambda: len(ranks[0].http("GET", f"/v1/runs/{run_id}")[1]["points"]) >= 2, 30, "2 collective points")
        seen = len(ranks[0].http("GET", f"/v1/runs/{run_id}")[1]["points"])
        ranks[0].proc.send_signal(signal.SIGKILL)
        ranks[0].proc.wait(10)
        ranks[0].log.close()
        self.restart(ranks[0])
        doc = ranks[0].http("GET", f"/v1/runs/{run_id}")[1]
        print(f"\nstore: collective kill -9 after {seen} points: stored {len(doc['points'])}")
        self.assertEqual(doc["state"], "failed")
        self.assertTrue(doc["error"].startswith("interrupted:"), doc["error"])
        self.assertGreaterEqual(len(doc["points"]), seen)

    def test_sigterm_stores_interrupted_daemon_stopping(self):
        b = self.daemon()
        a = self.daemon()
        run_id, live = self.start_measuring(a, b, 2)
        seen = len(a.http("GET", f"/v1/runs/{run_id}")[1]["points"])
        a.stop(signal.SIGTERM)
        self.assertIn("shutting down", a.read_log())
        self.restart(a)
        doc = a.http("GET", f"/v1/runs/{run_id}")[1]
        print(f"\nstore: SIGTERM after {seen} points: stored {len(doc['points'])}: {doc['error']}")
        self.assertEqual(doc["state"], "failed")
        self.assertTrue(doc["error"].startswith("interrupted: daemon stopping"), doc["error"])
        self.assertNotIn("cancelled by request", doc["error"])
        self.assertGreaterEqual(len(doc["points"]), seen)


class HistoryTests(StoreBase):
    def test_pages_cursor_limit_cap_and_retention_by_count(self):
        cfg = write_config("[store]\nmax_runs = 3\n")
        b = self.daemon()
        a = self.daemon(extra_args=["--config", cfg])
        ids = []
        for _ in range(4):
            rc, out, err = short_sweep(a, b)
            self.assertEqual(rc, 0, err)
            ids.append(json.loads(out)["id"])
        status, page = a.http("GET", "/v1/runs?limit=2")
        self.assertEqual(status, 200, page)
        self.assertEqual([r["id"] for r in page["runs"]], [ids[3], ids[2]])
        self.assertEqual(page["next"], ids[2])
        status, page = a.http("GET", f"/v1/runs?limit=2&before={page['next']}")
        self.assertEqual([r["id"] for r in page["runs"]], [ids[1]])  # ids[0]: deleted by max_runs = 3
        self.assertIsNone(page["next"])
        self.assertEqual([r["id"] for r in a.http("GET", "/v1/runs?limit=10")[1]["runs"]], [ids[3], ids[2], ids[1]])
        # The CLI pages through the history: more than one page (here of 2, a test hook) and
        # more than the daemon's 1000 cap both work.
        rc, out, err = run_cli("runs", a.address, "--limit", "3", "--format", "json",
                               env={"MESHPERF_TEST_RUNS_PAGE": "2"}, timeout=30)
        self.assertEqual(rc, 0, err)
        self.assertEqual([r["id"] for r in json.loads(out)["runs"]], [ids[3], ids[2], ids[1]])
        rc, out, err = run_cli("runs", a.address, "--limit", "1500", "--format", "json", timeout=30)
        self.assertEqual(rc, 0, err)
        self.assertEqual(len(json.loads(out)["runs"]), 3)
        status, err = a.http("GET", "/v1/runs?limit=1001")
        self.assertEqual(status, 400)
        self.assertIn("1..1000", err["error"])
        status, err = a.http("GET", "/v1/runs?before=r-nonexistent")
        self.assertEqual(status, 400)
        self.assertIn("before", err["error"])


class CorruptStoreTests(StoreBase):
    def stopped_daemon_with_runs(self, n):
        b = self.daemon()
        a = self.daemon()
        ids = []
        for _ in range(n):
            rc, out, err = short_sweep(a, b)
            self.assertEqual(rc, 0, err)
            ids.append(json.loads(out)["id"])
        a.stop(signal.SIGTERM)  # closes the store: the WAL goes into the file
        return a, ids

    def test_zeroed_page_moves_the_file_aside(self):
        a, ids = self.stopped_daemon_with_runs(2)
        db = os.path.join(a.state_dir, "meshperf.db")
        size = os.path.getsize(db)
        self.assertGreater(size, 3 * 4096)
        with open(db, "r+b") as f:
            f.seek(2 * 4096)
            f.write(b"\0" * 4096)
        self.restart(a)
        log = a.read_log()
        aside = [n for n in os.listdir(a.state_dir) if n.startswith("meshperf.db.corrupt-")]
        print(f"\nstore: zeroed page: moved aside as {aside}")
        self.assertTrue(aside, os.listdir(a.state_dir))
        self.assertRegex(log, re.escape(db) + r" is damaged .*moved it to " + re.escape(os.path.join(a.state_dir, aside[0])))
        self.assertEqual(a.http("GET", "/v1/runs")[1]["runs"], [])
        self.assertIn(b"ok", a.http("GET", "/healthz", raw=True)[1])

    def test_flipped_bytes_answer_500_never_a_made_up_document(self):
        a, ids = self.stopped_daemon_with_runs(3)
        db = os.path.join(a.state_dir, "meshperf.db")
        with open(db, "r+b") as f:
            data = bytearray(f.read())
            # Inside the document text of the middle run: after its id.
            at = data.find(b'"id":"' + ids[1].encode())
            self.assertGreater(at, 0)
            for i in range(at + 40, at + 104):
                data[i] ^= 0x5A
            f.seek(0)
            f.write(data)
        self.restart(a)
        status, body = a.http("GET", f"/v1/runs/{ids[1]}", raw=True)
        print(f"\nstore: flipped bytes: GET /v1/runs/{ids[1]} -> {status} {body[:160]!r}")
        self.assertEqual(status, 500, body)
        self.assertIn(b"damaged", body)
        self.assertIn(db.encode(), body)
        self.assertNotIn(b"discarded", body)
        status, page = a.http("GET", "/v1/runs?limit=22")
        self.assertEqual(status, 200, page)
        rows = {r["id"]: r for r in page["runs"]}
        self.assertTrue(rows[ids[1]].get("damaged"), rows[ids[1]])
        for good in (ids[0], ids[2]):
            self.assertEqual(a.http("GET", f"/v1/runs/{good}")[0], 200)


class FullDiskTests(StoreBase):
    def setUp(self):
        super().setUp()
        if os.geteuid() != 0:
            self.skipTest("needs root to mount a small tmpfs as the state directory")
        self.work = tempfile.mkdtemp(prefix="meshperf-store-full-")
        self.mnt = os.path.join(self.work, "state")
        os.mkdir(self.mnt)
        p = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=300k,mode=0755", "tmpfs", self.mnt],
                           capture_output=True, text=True)
        if p.returncode != 0:
            shutil.rmtree(self.work, ignore_errors=True)
            self.skipTest(f"cannot mount a tmpfs (mount -t tmpfs -o size=300k): {p.stderr.strip()}")

    def tearDown(self):
        super().tearDown()
        subprocess.run(["umount", "-l", self.mnt], capture_output=True)
        shutil.rmtree(self.work, ignore_errors=True)

    def fill(self):
        """Fills the tmpfs to the last block (it may be full already: the WAL grows too)."""
        try:
            with open(os.path.join(self.mnt, "filler"), "ab") as f:
                while True:
                    f.write(b"\0" * 4096)
                    f.flush()
        except OSError:
            pass
        try:
            with open(os.path.join(self.mnt, "filler"), "ab") as f:
                while True:
                    f.write(b"\0")
                    f.flush()
        except OSError:
            pass

    def free(self):
        try:
            os.unlink(os.path.join(self.mnt, "filler"))
        except FileNotFoundError:
            pass

    def metric(self, a, name):
        text = a.http("GET", "/metrics", raw=True)[1].decode()
        m = re.search(rf"^{name} (\S+)$", text, re.M)
        self.assertIsNotNone(m, text[-500:])
        return float(m.group(1))

    def test_full_disk_keeps_serving_reports_not_stored_and_never_rewrites_history(self):
        cfg = write_config('[store]\nretry_interval = "0.5s"\n')
        log_path = os.path.join(self.work, "a.log")

        class OutsideLog(Daemon):
            def start(self):
                self.log_path = log_path  # the log must not need the full disk
                super().start()

        b = self.daemon()
        a = OutsideLog(state_dir=self.mnt, extra_args=["--config", cfg])
        self.daemons.append(a)
        rc, out, err = short_sweep(a, b)
        self.assertEqual(rc, 0, err)
        first = json.loads(out)["id"]
        self.fill()
        rc, out, err = short_sweep(a, b)
        print(f"\nstore: full disk: sweep exit {rc}: {err.strip()[:300]}")
        self.assertNotEqual(rc, 0, "a result the daemon could not store must not exit 0")
        self.assertIn("did not store it", err)
        doc = json.loads(out)
        unstored = doc["id"]
        self.assertTrue(any("result not stored" in w for w in doc["warnings"]), doc["warnings"])
        self.assertTrue(a.alive())
        status, body = a.http("GET", "/healthz", raw=True)
        self.assertEqual(status, 200)
        self.assertIn(b"store:", body)
        self.assertEqual(self.metric(a, "meshperf_store_writable"), 0)
        status, live = a.http("GET", f"/v1/runs/{unstored}")
        self.assertEqual(status, 200, live)
        self.assertEqual((live["state"], live.get("stored")), ("completed", False), live)
        self.assertEqual(len(live["points"]), 2)
        # Space again: the retry stores it, and nothing is marked unstored any more.
        self.free()
        wait_for(lambda: a.http("GET", f"/v1/runs/{unstored}")[1].get("stored", True), 15, "the retry to store the result")
        self.assertEqual(self.metric(a, "meshperf_store_writable"), 1)
        # A restart on a full disk: the daemon starts, read-only, and history is untouched.
        a.stop(signal.SIGTERM)
        self.fill()
        a.start()
        status, body = a.http("GET", "/healthz", raw=True)
        print(f"store: started on a full disk: /healthz {status} {body!r}")
        self.assertEqual(status, 200)
        self.assertIn(b"store:", body)
        self.assertEqual(self.metric(a, "meshperf_store_writable"), 0)
        runs = {r["id"]: r for r in a.http("GET", "/v1/runs")[1]["runs"]}
        for rid in (first, unstored):
            self.assertEqual(runs[rid]["state"], "completed", runs[rid])
            self.assertEqual(runs[rid]["points"], 2)
        self.free()
        wait_for(lambda: self.metric(a, "meshperf_store_writable") == 1, 15, "the store to become writable again")
        rc, out, err = short_sweep(a, b)
        self.assertEqual(rc, 0, err)
        runs = {r["id"]: r for r in a.http("GET", "/v1/runs")[1]["runs"]}
        self.assertEqual(runs[unstored]["state"], "completed")


if __name__ == "__main__":
    unittest.main()

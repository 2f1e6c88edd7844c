"""History must not block the daemon (issue 25, attack 7): with 10,120 stored runs, 70
parallel GET /v1/runs?limit=10000 must leave GET /healthz answered in under 1 s.

The store is seeded without knowing its schema: one real run is stored by a daemon, the
daemon is stopped, and every row of every table that names that run (a column equal to its
id) is copied with a new id into the same table (an INTEGER PRIMARY KEY is left to SQLite);
documents are not touched (a store may checksum them). Then the daemon starts again on that
store. A daemon that applies retention at start may keep fewer runs: the count it lists is
printed, and the /healthz bound holds whatever it is. A daemon that caps `limit` (400 naming
the range, with pages through `before=<next>`) gets its largest page instead, and each
client then reads PAGES_PER_CLIENT pages of it (the whole history is read once, alone, to
check that paging reaches every run).
"""
import json
import multiprocessing
import os
import queue
import re
import signal
import sqlite3
import threading
import time
import unittest

from hostile_harness import (HEALTHZ_LIMIT_S, Daemon, api_get, api_post_json, check_daemon, strict_json,
                             timed_healthz, wait_run_end)

RUNS = 10_120
CLIENTS = 70
CLIENT_TIMEOUT_S = 60
# Pages each parallel client reads when the daemon caps `limit`: 70 x 2 pages of 1000 is a
# fifth of the load (70 x 10,000 rows), enough to keep both of a 2-core machine's
# cores and both history workers busy for seconds; the whole load took 47 s here.
PAGES_PER_CLIENT = int(os.environ.get("MESHPERF_HOSTILE_HISTORY_PAGES", "2"))
STORE_FILE = "meshperf.db"


def seed_copies(db_path, run_id, copies):
    """Copies every row naming `run_id` `copies` times with new ids; returns the ids and
    (table, column) of the first table found naming it, for stored_ids."""
    con = sqlite3.connect(db_path)
    try:
        tables = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table' "
                                            "AND name NOT LIKE 'sqlite_%'")]
        plans = []
        for t in tables:
            info = list(con.execute(f"PRAGMA table_info('{t}')"))
            cols = [c[1] for c in info]
            rowid_alias = [c[1] for c in info if c[5] == 1 and c[2].upper() == "INTEGER"]
            rows = []
            for c in cols:
                rows += [(c, row) for row in con.execute(f'SELECT * FROM "{t}" WHERE "{c}" = ?', (run_id,))]
            if rows:
                plans.append((t, cols, rowid_alias, rows))
        if not plans:
            raise RuntimeError(f"no table of {db_path} names run {run_id}")
        ids = []
        with con:
            for i in range(copies):
                new_id = f"{run_id[:-6]}{i:06x}" if len(run_id) > 6 else f"{run_id}-{i}"
                ids.append(new_id)
                for t, cols, rowid_alias, rows in plans:
                    for _, row in rows:
                        values = [None if c in rowid_alias else (new_id if v == run_id else v)
                                  for c, v in zip(cols, row)]
                        con.execute(f'INSERT INTO "{t}" ({", ".join(chr(34) + c + chr(34) for c in cols)}) '
                                    f'VALUES ({", ".join("?" * len(cols))})', values)
        return ids, (plans[0][0], plans[0][3][0][0])
    finally:
        con.close()


def stored_ids(db_path, where, candidates):
    """Which of `candidates` the store still holds (read from SQLite itself, not the API):
    what retention at start left, i.e. every run paging must reach."""
    table, col = where
    con = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True)
    try:
        held = {r[0] for r in con.execute(f'SELECT DISTINCT "{col}" FROM "{table}"')}
    finally:
        con.close()
    return held & set(candidates)


def read_history(tc, d, limit, pages, deadline=None):
    """Every run id of GET /v1/runs?limit=LIMIT, following `next` (before=) for at most
    `pages` pages; asserts each page is 200 and valid JSON."""
    ids, before = [], None
    for _ in range(pages):
        path = f"/v1/runs?limit={limit}" + (f"&before={before}" if before else "")
        status, raw = api_get(d, path, timeout=CLIENT_TIMEOUT_S)
        tc.assertEqual(status, 200, f"GET {path}: {raw[:200]!r}")
        page = strict_json(tc, raw, f"GET {path}")
        ids += [r["id"] for r in page["runs"]]
        before = page.get("next")
        if not before or (deadline and time.monotonic() > deadline):
            break
    return ids


class _Checks(unittest.TestCase):
    """Assertions for code outside a test (the client process)."""

    def runTest(self):
        pass


def run_clients(port, limit, pages, results):
    """The parallel clients, in a process of their own: their JSON parsing must not hold the
    GIL of the process that times /healthz. Puts [(runs read or -1, seconds)] on `results`."""
    d = type("Endpoint", (), {"port": port})()
    done = []
    lock = threading.Lock()

    def client():
        t = time.monotonic()
        try:
            n = len(read_history(_Checks(), d, limit, pages=pages, deadline=t + CLIENT_TIMEOUT_S))
        except AssertionError:
            n = -1
        with lock:
            done.append((n, time.monotonic() - t))

    threads = [threading.Thread(target=client, daemon=True) for _ in range(CLIENTS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(CLIENT_TIMEOUT_S + 5)
    results.put(done)


class HistoryLoadTests(unittest.TestCase):
    def test_70_parallel_history_requests_with_10120_runs(self):
        a, b = Daemon(), Daemon()
        try:
            spec = json.dumps({"peer": b.address, "tests": ["latency"], "sizes": [64], "max_point_s": 0.05,
                               "warmup_s": 0.01}).encode()
            status, raw = api_post_json(a, "/v1/runs", spec)
            self.assertEqual(status, 202, raw)
            run_id = strict_json(self, raw, "POST /v1/runs")["id"]
            status, raw = wait_run_end(a, run_id, 60)
            self.assertEqual(strict_json(self, raw, "the run")["state"], "completed", raw[:300])
            a.stop(signal.SIGTERM)
            t0 = time.monotonic()
            seeded, where = seed_copies(os.path.join(a.state_dir, STORE_FILE), run_id, RUNS - 1)
            seeded_s = time.monotonic() - t0
            a.start()
            limit = 10000
            status, raw = api_get(a, f"/v1/runs?limit={limit}", timeout=CLIENT_TIMEOUT_S)
            cap = re.search(rb"not a number in 1\.\.(\d+)", raw) if status == 400 else None
            if cap:
                limit = int(cap.group(1))
            paged = read_history(self, a, limit, pages=RUNS // limit + 3)
            listed = len(paged)
            # Paging must reach every run the store holds (after any retention at start):
            # compared with the store itself (SQLite read here), not with a count the daemon
            # gives. By count: the copies keep the original run's document, so the API lists
            # every copy under the original id.
            held = stored_ids(os.path.join(a.state_dir, STORE_FILE), where, seeded + [run_id])
            print(f"\nhostile: history: {RUNS} runs seeded in {seeded_s:.1f} s; GET /v1/runs?limit=10000 answered "
                  f"{status}{f' (limit capped at {limit}: paged)' if cap else ''}; {listed} runs listed", flush=True)
            self.assertEqual(listed, len(held), f"paging listed {listed} runs; the store holds {len(held)}")
            self.assertGreater(len(held), limit, "fewer runs held than one page: paging was not exercised")

            ctx = multiprocessing.get_context("fork")
            results = ctx.Queue()
            clients = ctx.Process(target=run_clients, args=(a.port, limit, PAGES_PER_CLIENT if cap else 1, results),
                                  daemon=True)
            t0 = time.monotonic()
            clients.start()
            worst, unanswered, probes = 0.0, 0, 0
            done = []
            try:
                while time.monotonic() - t0 < CLIENT_TIMEOUT_S + 10:
                    st, elapsed, _ = timed_healthz(a.port, timeout=5)
                    probes += 1
                    worst = max(worst, elapsed)
                    unanswered += st != 200
                    try:
                        done = results.get(timeout=0.1)
                        break
                    except queue.Empty:
                        pass
            finally:
                clients.join(5)
                if clients.is_alive():
                    clients.kill()
                    clients.join(5)
            took = time.monotonic() - t0
            print(f"hostile: history: {CLIENTS} clients reading the history (limit={limit}) in parallel: {len(done)} "
                  f"ended in {took:.1f} s (runs read each: {sorted({d[0] for d in done})}, slowest "
                  f"{max((d[1] for d in done), default=0):.1f} s); /healthz probed {probes} times meanwhile: "
                  f"slowest {worst * 1000:.0f} ms, {unanswered} not answered 200", flush=True)
            check_daemon(self, a, "70 parallel history requests")
            self.assertEqual(unanswered, 0, "GET /healthz not answered while history was read")
            self.assertLess(worst, HEALTHZ_LIMIT_S, f"GET /healthz took {worst:.2f} s while history was read")
            self.assertEqual(len(done), CLIENTS, "history requests still running")
            self.assertEqual({d[0] for d in done}, {min(listed, limit * (PAGES_PER_CLIENT if cap else 1))},
                             "a client did not read its pages of history")
        finally:
            a.cleanup()
            b.cleanup()


if __name__ == "__main__":
    unittest.main()

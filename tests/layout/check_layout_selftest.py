#!/usr/bin/env python3
"""check_layout_selftest: check_layout.py fails on each kind of problem it is meant to find.

Builds a small source tree in a temporary folder with one planted problem of each kind and
a clean one, runs check_layout.py on both, and fails unless the clean tree passes and every
planted problem is reported (and nothing else). CTest: `layout-selftest`, label unit.
"""
import os
import subprocess
import sys
import tempfile

CHECKER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "check_layout.py")

CLEAN = {
    "core/README.md": "core\n",
    "core/a.hpp": '#pragma once\n/// A.\nstruct a { int x; };\n',
    "core/a.cpp": '#include "core/a.hpp"\n',
    "daemon/README.md": "daemon\n",
    "daemon/sweep/README.md": "sweep\n",
    "daemon/sweep/s.cpp": '#include "core/a.hpp"\n#include "daemon/session/t.hpp"\n'
                          'void f(int fd) { char c; (void)c; /* ::recv(fd) in a comment */ }\n',
    "daemon/session/README.md": "session\n",
    "daemon/session/t.hpp": '#pragma once\nconst char* text = "::send( in a string";\n',
    "daemon/transports/README.md": "transports\n",
    "daemon/transports/x.cpp": 'bool x(const char* transport) { return transport == "rdma"; }  // the registry may\n',
}

PLANTED = {
    # file -> (content, the words its expected report line holds)
    "core/up.cpp": ('#include "daemon/sweep/s.hpp"\n', "core/ may not include daemon/sweep/s.hpp"),
    "daemon/session/back.cpp": ('#include "daemon/sweep/s.hpp"\n', "daemon/session/ may not include daemon/sweep/s.hpp"),
    "daemon/sweep/verbs.cpp": ("void g(void* qp) { ibv_destroy_qp(qp); }\n", "ibv_ call outside transport/"),
    "daemon/sweep/fabric.cpp": ("void f(void* i) { fi_freeinfo(i); }\n", "libfabric fi_ call outside transport/ofi/"),
    "daemon/sweep/raw.cpp": ("long h(int fd, char* b) { return ::recv(fd, b, 1, 0); }\n", "raw socket call recv()"),
    "daemon/sweep/cite.cpp": ("// works around the bug of issue 12\n", "cites an issue number"),
    "daemon/sweep/long.hpp": ("#pragma once\nclass long_one {\n" + "    int x;\n" * 205 + "};\n", "long_one is 206 lines long"),
    "daemon/sweep/loop_a.hpp": ('#pragma once\n#include "daemon/sweep/loop_b.hpp"\n', "include loop"),
    "daemon/sweep/loop_b.hpp": ('#pragma once\n#include "daemon/sweep/loop_a.hpp"\n', None),
    "daemon/runs/r.cpp": ("int r;\n", "daemon/runs/: no README.md"),
    "daemon/sweep/branch.cpp": ('bool b(const char* transport) { return transport == "rdma"; }\n',
                                "branches on a transport's name"),
}


def write_tree(root, files):
    for path, text in files.items():
        full = os.path.join(root, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w", encoding="utf-8") as f:
            f.write(text)


def run_checker(root):
    p = subprocess.run([sys.executable, CHECKER, root], capture_output=True, text=True, timeout=60)
    return p.returncode, p.stdout.splitlines()


def main():
    failures = []
    with tempfile.TemporaryDirectory(prefix="meshperf-layout-") as clean, \
            tempfile.TemporaryDirectory(prefix="meshperf-layout-") as dirty:
        write_tree(clean, CLEAN)
        rc, lines = run_checker(clean)
        if rc != 0:
            failures.append(f"the clean tree failed (exit {rc}): {lines}")
        write_tree(dirty, CLEAN)
        write_tree(dirty, {path: text for path, (text, _) in PLANTED.items()})
        rc, lines = run_checker(dirty)
        if rc != 1:
            failures.append(f"the tree with planted problems exited {rc}, not 1")
        problems = [l for l in lines if not l.startswith("check_layout:")]
        for path, (_, words) in PLANTED.items():
            if words and not any(words in l for l in problems):
                failures.append(f"not reported: {path} ({words!r})")
        expected = sum(1 for _, w in PLANTED.values() if w)
        if len(problems) != expected:
            failures.append(f"{len(problems)} problems reported, {expected} planted: {problems}")
    for f in failures:
        print("FAIL:", f)
    print(f"check_layout_selftest: {len(PLANTED)} planted problems, {len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

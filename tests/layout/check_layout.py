#!/usr/bin/env python3
"""check_layout: the source tree keeps the shape docs/architecture.md draws.

Reads every C++ source under the project root (not tests/, not build trees) and fails,
naming the file and line, when:

  1. an #include runs against the folder order: a folder may include only itself and the
     folders listed for it in ALLOWED below (daemon/ and client/ are layered inside too);
  2. an ibv_ call appears outside transport/ and gpu/, or a libfabric fi_ call outside
     transport/ofi/ (the verbs and libfabric APIs stay in the data path);
  3. a raw socket call (::socket, ::connect, ::accept, ::bind, ::listen, ::send, ::recv,
     ::sendmsg, ::recvmsg, ::setsockopt, ::getsockopt, ::poll, ...) appears outside transport/;
  4. two source units (a .hpp with its .cpp) include each other, directly or around a loop;
  5. a class or struct body runs longer than MAX_CLASS_LINES lines;
  6. a comment cites an issue number ("issue 14") instead of saying what it means;
  7. a source folder has no README.md;
  8. code branches on a transport's name (compares a transport with a name such as "rdma",
     or names core::transport_kind) outside the transport registry: core/transport_rules.*,
     core/<name>_rules.cpp, daemon/transports/ and transport/ (docs/transports.md).

Run: tests/layout/check_layout.py [ROOT]   (CTest: `layout`, label unit; exit 0 or 1)
"""
import os
import re
import sys

MAX_CLASS_LINES = 200

# folder -> folders it may include (besides itself). Sub-folders are named in full.
ALLOWED = {
    "core": set(),
    "core/collective": {"core"},
    "analysis": {"core", "core/collective"},
    "analysis/collective": {"analysis", "core", "core/collective"},
    "transport": {"core", "core/collective"},
    "transport/tcp": {"transport", "core", "core/collective"},
    "transport/rdma": {"transport", "core", "core/collective"},
    "transport/ofi": {"transport", "core", "core/collective"},
    "transport/mesh": {"transport", "transport/tcp", "transport/rdma", "transport/ofi", "core", "core/collective"},
    "gpu": {"core", "core/collective", "transport", "transport/rdma"},
    "node": {"core", "core/collective", "gpu", "transport"},
}
_BELOW_DAEMON = {"core", "core/collective", "analysis", "analysis/collective", "transport", "transport/tcp",
                 "transport/rdma", "transport/ofi", "transport/mesh", "gpu", "node"}
_DAEMON_ORDER = {
    "daemon/test_hooks": set(),
    "daemon/runtime": {"daemon/test_hooks"},
    "daemon/store": {"daemon/runtime"},
    "daemon/session": {"daemon/runtime", "daemon/test_hooks"},
    "daemon/sweep": {"daemon/session", "daemon/runtime"},
    "daemon/collective": {"daemon/session", "daemon/runtime", "daemon/test_hooks"},
    "daemon/transports": {"daemon/sweep", "daemon/collective", "daemon/session", "daemon/runtime", "daemon/test_hooks"},
    "daemon/runs": {"daemon/transports", "daemon/sweep", "daemon/collective", "daemon/session", "daemon/runtime",
                    "daemon/store"},
    "daemon/api": {"daemon/runs", "daemon/transports", "daemon/sweep", "daemon/collective", "daemon/session",
                   "daemon/runtime", "daemon/store"},
}
_DAEMON_ORDER["daemon"] = set(_DAEMON_ORDER) | {"daemon/test_hooks"}  # main.cpp
_CLIENT_ORDER = {
    "client/support": set(),
    "client/render": {"client/support"},
    "client/collective": {"client/render", "client/support"},
    "client/fleet": {"client/support"},
    "client/commands": {"client/collective", "client/fleet", "client/render", "client/support"},
}
_CLIENT_ORDER["client"] = set(_CLIENT_ORDER)  # main.cpp and the command table
for part, allowed in _DAEMON_ORDER.items():
    ALLOWED[part] = allowed | _BELOW_DAEMON
for part, allowed in _CLIENT_ORDER.items():
    ALLOWED[part] = allowed | _BELOW_DAEMON

SOURCE_ROOTS = ("core", "analysis", "transport", "gpu", "node", "daemon", "client")
EXTENSIONS = (".cpp", ".hpp", ".cu")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
IBV_CALL = re.compile(r"\bibv_[a-z_0-9]+\s*\(")
FI_CALL = re.compile(r"\bfi_(?:getinfo|fabric|domain|endpoint|enable|close|cq_\w+|av_\w+|mr_\w+|t?send|t?recv|cancel|getname|ep_bind|read|write|inject|tinject|freeinfo|allocinfo|strerror|tostr)\s*\(")
# The project calls POSIX by its global name (::send), which tells a socket call from a member.
SOCKET_CALL = re.compile(r"(?<![\w:])::(socket|connect|accept4?|bind|listen|send|recv|sendmsg|recvmsg|"
                         r"sendto|recvfrom|setsockopt|getsockopt|poll|shutdown)\s*\(")
ISSUE_CITE = re.compile(r"\bissues?\s+#?\d+\b|\(issues?\b", re.IGNORECASE)
TRANSPORT_BRANCH = re.compile(r'\btransport\w*(?:\(\))?\s*(?:[!=]=|\.compare\()\s*"[a-z_]+"|'
                              r'"[a-z_]+"\s*[!=]=\s*[\w.>()-]*transport\w*\b|\btransport_kind\b')
TRANSPORT_REGISTRY = re.compile(r"^(core/transport_rules\.|core/\w+_rules\.cpp$|daemon/transports/|transport/)")
CLASS_OPEN = re.compile(r"^(\s*)(?:template\s*<[^>]*>\s*)?(class|struct)\s+(\w+)[^;()]*\{\s*(//.*)?$")


def strip_comments_and_strings(line, in_block):
    """The code of one line without comments or string literals; and whether a block comment
    is still open at its end."""
    out, i = [], 0
    while i < len(line):
        if in_block:
            end = line.find("*/", i)
            if end < 0:
                return "".join(out), True
            i, in_block = end + 2, False
        elif line.startswith("//", i):
            break
        elif line.startswith("/*", i):
            in_block, i = True, i + 2
        elif line[i] in "\"'":  # a string or character literal: kept as an empty pair of quotes
            quote, j = line[i], i + 1
            while j < len(line) and line[j] != quote:
                j += 2 if line[j] == "\\" else 1
            out.append(quote * 2)
            i = j + 1
        else:
            out.append(line[i])
            i += 1
    return "".join(out), in_block


def folder_of(path):
    """The layout folder of a path: "daemon/sweep" for daemon/sweep/x.cpp, "core" for core/x.hpp."""
    parts = path.split("/")
    if len(parts) >= 3:
        sub = parts[0] + "/" + parts[1]
        if sub in ALLOWED:
            return sub
    if parts[0] == "gpu":
        return "gpu"
    return parts[0]


def unit_of(path):
    """A .hpp and its .cpp are one unit."""
    return os.path.splitext(path)[0]


def sources(root):
    for top in SOURCE_ROOTS:
        for dirpath, _, names in os.walk(os.path.join(root, top)):
            for name in sorted(names):
                if name.endswith(EXTENSIONS):
                    yield os.path.relpath(os.path.join(dirpath, name), root)


def check_file(root, path, problems, unit_edges):
    folder = folder_of(path)
    with open(os.path.join(root, path), encoding="utf-8") as f:
        lines = f.read().split("\n")
    in_block = False
    open_classes = []  # (indent, name, first line)
    for number, line in enumerate(lines, 1):
        where = f"{path}:{number}"
        m = INCLUDE.match(line)
        if m:
            target = m.group(1)
            if "/" in target and target.split("/")[0] in SOURCE_ROOTS:
                to = folder_of(target)
                if to != folder and to not in ALLOWED.get(folder, set()):
                    problems.append(f"{where}: {folder}/ may not include {target} ({to}/ is not below it)")
                if unit_of(target) != unit_of(path):
                    unit_edges.setdefault(unit_of(path), set()).add(unit_of(target))
        comment_part = line.split("//", 1)[1] if "//" in line else (line if in_block or "/*" in line else "")
        if ISSUE_CITE.search(comment_part):
            problems.append(f"{where}: a comment cites an issue number; say what it means instead")
        code, in_block = strip_comments_and_strings(line, in_block)
        if IBV_CALL.search(code) and not path.startswith(("transport/", "gpu/")):
            problems.append(f"{where}: ibv_ call outside transport/ and gpu/")
        if FI_CALL.search(code) and not path.startswith("transport/ofi/"):
            problems.append(f"{where}: libfabric fi_ call outside transport/ofi/")
        if not in_block and not TRANSPORT_REGISTRY.match(path) and TRANSPORT_BRANCH.search(line.split("//", 1)[0]):
            problems.append(f"{where}: branches on a transport's name outside the registry; ask core/transport_rules.hpp "
                            "or daemon/transports/registry.hpp instead")
        s = SOCKET_CALL.search(code)
        if s and not path.startswith("transport/"):
            problems.append(f"{where}: raw socket call {s.group(1)}() outside transport/")
        c = CLASS_OPEN.match(line)
        if c:
            open_classes.append((c.group(1), c.group(3), number))
        elif open_classes and re.match(r"^" + re.escape(open_classes[-1][0]) + r"\};", line):
            indent, name, first = open_classes.pop()
            if number - first > MAX_CLASS_LINES:
                problems.append(f"{path}:{first}: {name} is {number - first} lines long (at most {MAX_CLASS_LINES})")


def find_cycles(unit_edges):
    """Each include loop between units, once, as a list of units."""
    cycles, state, stack = [], {}, []

    def visit(u):
        state[u] = 1
        stack.append(u)
        for v in sorted(unit_edges.get(u, ())):
            if state.get(v) == 1:
                cycles.append(stack[stack.index(v):] + [v])
            elif v not in state:
                visit(v)
        stack.pop()
        state[u] = 2

    for u in sorted(unit_edges):
        if u not in state:
            visit(u)
    return cycles


def check_readmes(root, problems):
    for top in SOURCE_ROOTS:
        for dirpath, _, names in os.walk(os.path.join(root, top)):
            if any(n.endswith(EXTENSIONS) for n in names) and "README.md" not in names:
                problems.append(f"{os.path.relpath(dirpath, root)}/: no README.md saying what lives there")


def main(argv):
    root = argv[1] if len(argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
    root = os.path.abspath(root)
    problems, unit_edges, count = [], {}, 0
    for path in sources(root):
        check_file(root, path, problems, unit_edges)
        count += 1
    for cycle in find_cycles(unit_edges):
        problems.append("include loop: " + " -> ".join(cycle))
    check_readmes(root, problems)
    for p in problems:
        print(p)
    print(f"check_layout: {count} sources, {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

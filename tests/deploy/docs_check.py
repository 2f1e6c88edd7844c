#!/usr/bin/env python3
"""The pages point at files that exist, and carry no copies of them.

- every /usr/share/meshperf/PATH and deploy/PATH named in docs/integrations.md,
  docs/operations.md and the READMEs of deploy/ is a file or folder of deploy/ (the package
  installs deploy/ as /usr/share/meshperf/);
- the slurm.conf lines of docs/integrations.md name executable files;
- docs/operations.md holds none of the scripts inline any more (no scontrol drain, no NHC
  function, no NPD wrapper, no alert rules): it points at deploy/ instead.
Exit 0 pass, 1 fail.
"""
import os
import re
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
pages = ["docs/integrations.md", "docs/operations.md", "deploy/README.md"] + \
        [f"deploy/{d}/README.md" for d in ("slurm", "nhc", "kubernetes", "grafana", "prometheus")]
problems = []
named = 0
for page in pages:
    text = open(os.path.join(ROOT, page)).read()
    for m in re.finditer(r"(/usr/share/meshperf/|(?<![\w/])deploy/)([\w./-]*[\w/])", text):
        rel = m.group(2).rstrip("/.")
        named += 1
        if not os.path.exists(os.path.join(ROOT, "deploy", rel)):
            problems.append(f"{page}: {m.group(0)}: no deploy/{rel}")
integ = open(os.path.join(ROOT, "docs/integrations.md")).read()
for key, path in re.findall(r"^(HealthCheckProgram|Prolog|Epilog)=/usr/share/meshperf/(\S+)", integ, re.M):
    if not os.access(os.path.join(ROOT, "deploy", path), os.X_OK):
        problems.append(f"docs/integrations.md: {key}={path} is not an executable file of deploy/")
ops = open(os.path.join(ROOT, "docs/operations.md")).read()
for pattern, what in [(r"scontrol update", "the Slurm health check"), (r"function check_meshperf", "the NHC check"),
                      (r"case \$rc in 0\|1\) exit 0", "the NPD wrapper"), (r"- alert: Meshperf", "alert rules")]:
    if re.search(pattern, ops):
        problems.append(f"docs/operations.md still holds {what} inline ({pattern}); point at deploy/ instead")
if "integrations.md" not in ops:
    problems.append("docs/operations.md does not link docs/integrations.md")
if problems:
    print("deploy-docs: FAIL:\n  " + "\n  ".join(problems))
    sys.exit(1)
print(f"deploy-docs: PASS: {named} paths named in {len(pages)} pages exist in deploy/; operations.md points at them")

"""Run warplint --confirm (the Python API) on tests/confirm_programs/gpu_demo.py with hand-built findings.

    python scripts/gpu_confirm_demo.py [OUT_DIR]

Prints the verdicts, the runtime-only findings of a second judgement without static findings, and the
text summary; writes confirm.json (+ raw events) to OUT_DIR when given.
"""

import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from warplint.confirm import analyze, render_summary, run_confirm  # noqa: E402 - after the sys.path insert
from warplint.diagnostic import Diagnostic, Span  # noqa: E402 - after the sys.path insert

PROGS = os.path.join(ROOT, "tests", "confirm_programs")
PROG = os.path.join(PROGS, "gpu_demo.py")


def mark(name):
    with open(PROG, encoding="utf-8") as fh:
        return next(i for i, ln in enumerate(fh, 1) if f"# MARK:{name}" in ln)


def diag(name, mech, code, **data):
    line = mark(name)
    return Diagnostic(PROG, Span(line, 0, line, 0), code, "demo", mech, "hand-built demo finding", "medium", data=data)


diags = [
    diag("bd256", "CS-5", "WC302", module="gpu_demo", block_dims=[128, 256]),
    diag("late_opts", "CS-3", "WC102", module="late_opts", option="fast_math"),
]
out = sys.argv[1] if len(sys.argv) > 1 else None
r = run_confirm(diags, [sys.executable, "gpu_demo.py"], cwd=PROGS, timeout=300, keep_artifacts=out, echo=print)
print("\n== verdicts")
for d in r.diagnostics:
    print(f"{os.path.basename(d.path)}:{d.line} {d.mechanism}: {d.confirm}")
r2 = analyze([], *r.passes, cwd=PROGS, command=r.command)
print("\n== runtime-only findings when no static finding is given")
for d in r2.runtime_findings:
    print(f"{d.path}:{d.line} {d.code} {d.name}: {d.message}")
print("\n== summary")
print(render_summary(r))
sys.exit(2 if r.failed else 0)

#!/usr/bin/env python3
"""A CLI run after a one-file edit, counted in function calls rather than seconds, per installed version.

    python benchmarks/call_counts.py --site before=/tmp/site-a --site after=/tmp/site-b
    python benchmarks/call_counts.py --site head=/tmp/site-head --corpus warp-lang --edits 3

Wall time on a shared machine moves by more than the differences worth finding (this machine's speed has moved
by 1.5x within minutes); how many Python function calls a run makes, and how many pickles it reads back, do not.
For each ``--site LABEL=DIR`` (a copy installed with ``pip install --no-deps --target DIR SRC``, as
``benchmarks/run.py --site`` takes them) this fills a cache of its own with a cold run over a copy of the corpus,
then, ``--edits`` times, appends a module-level assignment to one kernel-defining file and runs
``warplint --cache-dir C --jobs 2 --format json`` under ``cProfile`` (around ``warplint.cli.main``, in a
subprocess with ``PYTHONPATH=DIR``). It prints, per run: function calls, ``pickle.loads`` calls (models and stored
fields read back), the profiled seconds and the wall seconds; and the functions whose call counts differ most
between the first two sites. The versions' own outputs are written beside the profiles and compared.
"""

from __future__ import annotations

import argparse
import filecmp
import os
import pstats
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run import fetch, pick_file_to_touch  # benchmarks/ is not a package: its folder on the path

# run inside each version's interpreter: cProfile around the CLI's main (the console script leaves with
# os._exit, which would skip writing the profile)
_PROFILED = """
import cProfile, sys
from warplint.cli import main
out = sys.argv[1]
profile = cProfile.Profile()
profile.enable()
try:
    main(sys.argv[2:])
except SystemExit:
    pass
profile.disable()
profile.dump_stats(out)
"""


def _counts(path: str) -> tuple[int, int, float, dict[str, int]]:
    """(function calls, ``pickle.loads`` calls, profiled seconds, calls per function) of one profile."""
    stats = pstats.Stats(path)
    per_function: dict[str, int] = {}
    loads = 0
    for (filename, _line, name), (_, calls, *_rest) in stats.stats.items():  # type: ignore[attr-defined]
        where = filename.split("/warplint/")[-1] if "/warplint/" in filename else os.path.basename(filename)
        key = f"{where}:{name}"
        per_function[key] = per_function.get(key, 0) + calls
        if name == "<built-in method _pickle.loads>":
            loads += calls
    return stats.total_calls, loads, stats.total_tt, per_function  # type: ignore[attr-defined]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--site", action="append", required=True, metavar="LABEL=DIR",
                   help="an installed copy of warplint (pip install --no-deps --target DIR SRC); repeatable")
    p.add_argument("--corpus", default="newton", choices=["warp-lang", "newton", "mujoco-warp"])
    p.add_argument("--edits", type=int, default=2, help="edit runs per site (each a new assignment)")
    p.add_argument("--top", type=int, default=15, help="functions listed whose call counts differ most")
    args = p.parse_args(argv)
    sites = []
    for spec in args.site:
        label, _, directory = spec.partition("=")
        if not label or not os.path.isdir(directory):
            print(f"call_counts: --site {spec!r}: expected LABEL=DIR with DIR an installed copy", file=sys.stderr)
            return 2
        sites.append((label, os.path.abspath(directory)))

    source = fetch(args.corpus)
    work = tempfile.mkdtemp(prefix=f"warplint-calls-{args.corpus}-")
    tree = os.path.join(work, os.path.basename(source))
    shutil.copytree(source, tree)
    with open(os.path.join(tree, "pyproject.toml"), "w", encoding="utf-8") as fh:
        fh.write("[tool.warplint]\n")
    touched = pick_file_to_touch(tree)
    with open(touched, encoding="utf-8") as fh:
        original = fh.read()
    print(f"{args.corpus}: editing {os.path.relpath(touched, tree)}  ({tree})", flush=True)

    rows: list[tuple[str, int, int, int, float, float]] = []
    functions: dict[str, dict[str, int]] = {}
    outputs: dict[str, str] = {}
    for label, directory in sites:
        env = {**os.environ, "PYTHONPATH": directory}
        cache = os.path.join(work, f"cache-{label}")
        lint = ["--cache-dir", cache, "--jobs", "2", "--format", "json"]
        with open(touched, "w", encoding="utf-8") as fh:
            fh.write(original)
        # -P: the copy under test, not a checkout in the working directory
        subprocess.run([sys.executable, "-P", "-m", "warplint", *lint, "--output-file", os.devnull, tree],
                       env=env, cwd=work, check=False, capture_output=True)
        for i in range(1, args.edits + 1):
            with open(touched, "w", encoding="utf-8") as fh:
                fh.write(f"{original}\n_call_counts_edit_{i} = {i}\n")
            profile = os.path.join(work, f"{label}-{i}.prof")
            output = os.path.join(work, f"{label}-{i}.json")
            start = time.perf_counter()
            subprocess.run([sys.executable, "-P", "-c", _PROFILED, profile, *lint, "--output-file", output, tree],
                           env=env, cwd=work, check=False, capture_output=True)
            wall = time.perf_counter() - start
            if not os.path.exists(profile):
                print(f"call_counts: [{label}] edit {i} wrote no profile", file=sys.stderr)
                return 1
            calls, loads, profiled, per_function = _counts(profile)
            rows.append((label, i, calls, loads, profiled, wall))
            functions.setdefault(label, per_function)
            outputs.setdefault(f"{label}-{i}", output)
    with open(touched, "w", encoding="utf-8") as fh:
        fh.write(original)

    print(f"\n{'site':<12} {'edit':>4} {'function calls':>15} {'pickle.loads':>13} {'profiled s':>11} {'wall s':>7}")
    for label, i, calls, loads, profiled, wall in rows:
        print(f"{label:<12} {i:>4} {calls:>15,} {loads:>13,} {profiled:>11.2f} {wall:>7.2f}")
    if len(sites) >= 2:
        (a, _), (b, _) = sites[:2]
        for i in range(1, args.edits + 1):
            same = filecmp.cmp(outputs[f"{a}-{i}"], outputs[f"{b}-{i}"], shallow=False)
            print(f"edit {i}: [{a}] and [{b}] reports {'identical' if same else 'DIFFER'}")
        fa, fb = functions[a], functions[b]
        moved = sorted(set(fa) | set(fb), key=lambda k: -abs(fb.get(k, 0) - fa.get(k, 0)))[:args.top]
        print(f"\ncalls per function, first edit ([{a}] -> [{b}]), largest differences:")
        for key in moved:
            print(f"{fb.get(key, 0) - fa.get(key, 0):>+12,}  {fa.get(key, 0):>11,} -> {fb.get(key, 0):>11,}  {key}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""The project index (``Project(...)``) of a cold run, in CPU seconds, and what it spends them on.

    python benchmarks/index_phase.py --corpus warp-lang --save /tmp/warp.index      # a cold --no-cache run
    python benchmarks/index_phase.py --load /tmp/warp.index                         # the index alone, again
    python benchmarks/index_phase.py --load /tmp/warp.index --profile 30            # ... under cProfile

The first form runs the CLI cold (``--no-cache``, ``--jobs``) on a corpus fetched by
``scripts/fetch_corpora.py`` and prints the CPU seconds of the whole run and of each index it builds
(``time.process_time``: a loaded machine inflates it far less than wall time); ``--save`` keeps the
largest index's inputs (the file models, the installed modules read, the Warp environment and the run
answers), so that ``--load`` rebuilds that index alone in seconds, with any version of the layer, and says
where it goes: the project decorators it evaluates (``semantic.kernels``), the costliest first.
"""

from __future__ import annotations

import argparse
import collections
import cProfile
import gc
import os
import pickle
import pstats
import subprocess
import sys
import time
from typing import Any

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def cold_run(corpus: str, jobs: int, save: str | None) -> None:
    root = subprocess.run(
        [sys.executable, os.path.join(ROOT, "scripts", "fetch_corpora.py"), corpus],
        check=True, capture_output=True, text=True,
    ).stdout.strip().splitlines()[-1]
    import warplint.index as index
    from warplint.cli import main

    builds: list[tuple[int, float]] = []
    largest: dict[str, Any] = {}
    build = index.Project.__init__

    def timed(self, files, load_external=None, warp_environment=None, runs_as_main=None, file_facts=None,
              kept_facts=None, call_resolution=None):
        files = list(files)
        answers: dict[tuple, bool] = {}

        def recorded(*question):
            answers[question] = runs_as_main(*question)
            return answers[question]

        start = time.process_time()
        build(self, files, load_external, warp_environment, recorded if runs_as_main is not None else None, file_facts,
              kept_facts, call_resolution)
        builds.append((len(files), time.process_time() - start))
        if len(files) >= largest.get("files", -1):
            external = getattr(getattr(load_external, "__self__", None), "_external", {})
            largest.update(files=len(files), inputs=(files, external, warp_environment, answers))

    index.Project.__init__ = timed  # type: ignore[method-assign]
    start = time.process_time()
    with open(os.devnull, "w") as out:
        main([root, "--no-cache", "--jobs", str(jobs), "-q", "--format", "json"], out=out)
    total = time.process_time() - start
    print(f"{corpus}: cold --no-cache --jobs {jobs}: {total:.1f} CPU s in the main process; "
          f"index {sum(s for _, s in builds):.2f} CPU s "
          f"({', '.join(f'{n} files {s:.2f} s' for n, s in sorted(builds, reverse=True)[:3])})")
    if save:
        with open(save, "wb") as fh:
            pickle.dump(largest["inputs"], fh, protocol=pickle.HIGHEST_PROTOCOL)


def rebuild(load: str, profile: int) -> None:
    import warplint.semantic.kernels as kernels
    from warplint.index import Project

    with open(load, "rb") as fh:
        files, external, warp_environment, answers = pickle.load(fh)
    per_decorator: collections.Counter[str] = collections.Counter()
    evaluations: collections.Counter[str] = collections.Counter()
    evaluate = kernels._kernel_options

    def timed(bindings, evaluator, file, fn, decorator):
        start = time.process_time()
        try:
            return evaluate(bindings, evaluator, file, fn, decorator)
        finally:
            callee = decorator.text.partition("(")[0]
            per_decorator[callee] += time.process_time() - start
            evaluations[callee] += 1

    kernels._kernel_options = timed
    profiler = cProfile.Profile() if profile else None
    start = time.process_time()
    if profiler is not None:
        profiler.enable()
    project = Project(files, external.get, warp_environment, lambda *question: answers.get(question, False))
    if profiler is not None:
        profiler.disable()
    spent = time.process_time() - start
    derived = sum(1 for f in project.files for k in f.kernels if k.derived)
    print(f"{len(files)} files: index {spent:.2f} CPU s; {sum(evaluations.values())} project decorators "
          f"evaluated in {sum(per_decorator.values()):.2f} CPU s; {derived} kernels made by them")
    for callee, seconds in per_decorator.most_common(8):
        print(f"  @{callee}: {evaluations[callee]} x, {seconds:.2f} CPU s")
    if profiler is not None:
        pstats.Stats(profiler).sort_stats("cumulative").print_stats(profile)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--corpus", choices=["warp-lang", "newton", "mujoco-warp"], help="run the CLI cold on it")
    p.add_argument("--jobs", type=int, default=1)
    p.add_argument("--save", help="with --corpus: keep the largest index's inputs in this file")
    p.add_argument("--load", help="rebuild the index from inputs --save kept")
    p.add_argument("--profile", type=int, default=0, metavar="N", help="with --load: the N costliest calls")
    args = p.parse_args(argv)
    if (args.corpus is None) == (args.load is None):
        p.error("give --corpus or --load")
    sys.setrecursionlimit(10_000)
    gc.disable()  # as in a lint run (the CLI keeps the collector off)
    if args.corpus:
        cold_run(args.corpus, args.jobs, args.save)
    else:
        rebuild(args.load, args.profile)
    return 0


if __name__ == "__main__":
    sys.exit(main())

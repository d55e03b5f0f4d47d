#!/usr/bin/env python3
"""Pass 1 per file, as a multiple of a bare LibCST parse of the same file, in one process.

    python benchmarks/per_file.py              # every warp-lang file that mentions warp
    python benchmarks/per_file.py --every 2    # every second file (quicker)

Each file is parsed bare, then analysed (``warplint.engine.analyze``: parse, extraction,
positions), one right after the other, so load on a noisy machine hits both alike; the
ratio is what ``docs/performance.md`` tracks. Uses the corpora fetched by
``scripts/fetch_corpora.py``.
"""

from __future__ import annotations

import argparse
import gc
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--corpus", default="warp-lang", choices=["warp-lang", "newton", "mujoco-warp"])
    p.add_argument("--every", type=int, default=1, help="take every n-th file")
    args = p.parse_args(argv)
    root = subprocess.run(
        [sys.executable, os.path.join(ROOT, "scripts", "fetch_corpora.py"), args.corpus],
        check=True, capture_output=True, text=True,
    ).stdout.strip().splitlines()[-1]
    import libcst

    from warplint.engine import analyze

    sys.setrecursionlimit(10_000)
    gc.disable()  # as in a lint run (the CLI keeps the collector off)
    paths = sorted(
        os.path.join(d, n) for d, _, names in os.walk(root) for n in names if n.endswith(".py")
    )[:: args.every]
    parse_s = analyze_s = 0.0
    count = 0
    for path in paths:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
        if "warp" not in text:
            continue
        count += 1
        start = time.perf_counter()
        tree = libcst.parse_module(text)
        parse_s += time.perf_counter() - start
        del tree
        start = time.perf_counter()
        analyze(path, text, "m", False)
        analyze_s += time.perf_counter() - start
    print(f"{args.corpus}: {count} files; bare parse {parse_s:.1f} s, analyze {analyze_s:.1f} s, "
          f"analyze / bare parse {analyze_s / parse_s:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())

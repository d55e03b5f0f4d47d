#!/usr/bin/env python3
"""``parse_guard.classify`` on every .py file of the corpora: verdicts, and what they cost.

    python benchmarks/parse_guard_corpus.py          # newton, mujoco-warp, warp-lang (fetched if missing)
    python benchmarks/parse_guard_corpus.py DIR...   # other trees

Each file is classified (best of 5 timings) and compiled by CPython (``compile``; the
corpora are ordinary code, so in process). Prints the verdict counts, every file CPython
accepts but the guard calls invalid (must be none), the isolated ones, and the time per file
against its size. The numbers are in docs/robustness.md.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import warnings

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from warplint import parse_guard  # noqa: E402
from warplint.engine import decode  # noqa: E402


def corpus_roots() -> list[str]:
    fetch = os.path.join(ROOT, "scripts", "fetch_corpora.py")
    out = subprocess.run([sys.executable, fetch], check=True, capture_output=True, text=True).stdout
    return out.split()


def main(argv: list[str]) -> int:
    roots = argv or corpus_roots()
    warnings.simplefilter("ignore")
    counts = dict.fromkeys(parse_guard.Kind, 0)
    wrongly_invalid: list[str] = []
    isolated: list[str] = []
    timings: list[tuple[int, float]] = []
    largest_stack = 0
    for root in roots:
        for directory, _, names in sorted(os.walk(root)):
            for name in sorted(names):
                if not name.endswith(".py"):
                    continue
                path = os.path.join(directory, name)
                with open(path, "rb") as fh:
                    text = decode(fh.read())
                best = float("inf")
                for _ in range(5):
                    start = time.perf_counter()
                    verdict = parse_guard.classify(text)
                    best = min(best, time.perf_counter() - start)
                timings.append((len(text), best))
                counts[verdict.kind] += 1
                largest_stack = max(largest_stack, verdict.stack)
                try:
                    compile(text, path, "exec")
                    valid = True
                except (SyntaxError, ValueError):
                    valid = False
                if verdict.kind is parse_guard.Kind.INVALID and valid:
                    wrongly_invalid.append(f"{path}: {verdict.reason}")
                if verdict.kind is parse_guard.Kind.ISOLATE:
                    isolated.append(f"{path}: {verdict.reason}")
    files = sum(counts.values())
    print(f"{files} files: " + ", ".join(f"{n} {kind.value}" for kind, n in counts.items()))
    print(f"valid files classified invalid: {len(wrongly_invalid)}", *wrongly_invalid, sep="\n  ")
    print(f"isolated: {len(isolated)}", *isolated, sep="\n  ")
    print(f"largest stack asked for: {largest_stack >> 20} MiB")
    total_chars = sum(size for size, _ in timings)
    total_time = sum(t for _, t in timings)
    print(f"classify: {total_time * 1e3:.1f} ms for {total_chars / 1e6:.1f} M characters "
          f"({total_time / total_chars * 1e5 * 1e3:.3f} ms per 100 k characters on average)")
    for low, high in ((0, 10_000), (10_000, 100_000), (100_000, 300_000), (300_000, 10**9)):
        band = [(s, t) for s, t in timings if low <= s < high]
        if band:
            worst = max(band, key=lambda st: st[1])
            print(f"  files of {low:,}-{high:,} chars: {len(band)}, "
                  f"slowest {worst[1] * 1e3:.3f} ms ({worst[0]:,} chars), "
                  f"mean {sum(t for _, t in band) / len(band) * 1e3:.3f} ms")
    return 1 if wrongly_invalid else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

#!/usr/bin/env python3
"""Where each parser gives up on the shapes of ``chains.py``: the thresholds in docs/robustness.md.

    python benchmarks/parse_limits.py                   # every shape, every stage
    python benchmarks/parse_limits.py --shape and --stage libcst --stack 512k

Each probe runs in its own subprocess (a segfault there only ends the probe). For each
shape and stage the smallest chain length that fails is searched (x4 steps, then
bisection to 3 %); printed as a Markdown table with the first failing outcome.

Stages: ``compile`` (CPython's ``compile``), ``ast`` (``ast.parse``), ``libcst``
(``libcst.parse_module``), ``analyze`` (``warplint.engine.analyze``: guard, parse,
traversal). Stacks: ``main`` (the main thread: ``ulimit -s``), or a thread with that
stack size (``512k``: a macOS secondary thread; ``8m``: glibc's default).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from chains import SHAPES  # noqa: E402

LARGEST = 400_000
PROBE_TIMEOUT = 120


def _size(text: str) -> int:
    units = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30}
    return int(text[:-1]) * units[text[-1].lower()] if text[-1].lower() in units else int(text)


def _run_stage(stage: str, text: str) -> str:
    import warnings

    warnings.simplefilter("ignore")
    try:
        if stage == "compile":
            compile(text, "<probe>", "exec")
        elif stage == "ast":
            import ast

            ast.parse(text)
        elif stage == "libcst":
            import libcst

            libcst.parse_module(text)
        else:
            from warplint.engine import analyze

            model = analyze("probe.py", text)
            if model.error:
                return f"WC000: {model.error}"
    except SyntaxError as exc:
        return f"SyntaxError: {exc.msg}"
    except Exception as exc:  # noqa: BLE001 - the outcome is what is measured
        return f"{type(exc).__name__}: {str(exc).splitlines()[0][:60] if str(exc) else ''}".rstrip(": ")
    return "ok"


def probe(shape: str, n: int, stage: str, stack: str) -> None:
    """Child side: print the outcome of one stage on one generated module."""
    import threading

    text = SHAPES[shape](n)
    if stage in ("libcst", "analyze"):
        import libcst  # noqa: F401 - imported before the clock of a thread starts (its import recurses too)
        if stage == "analyze":
            import warplint.engine  # noqa: F401
    if stack == "main":
        outcome = _run_stage(stage, text)
    else:
        found: list[str] = []
        threading.stack_size(_size(stack))
        worker = threading.Thread(target=lambda: found.append(_run_stage(stage, text)))
        worker.start()
        worker.join()
        outcome = found[0] if found else "no outcome"
    print(outcome, flush=True)


def outcome_of(shape: str, n: int, stage: str, stack: str) -> str:
    command = [sys.executable, __file__, "--probe", shape, str(n), stage, stack]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=PROBE_TIMEOUT, cwd=os.path.dirname(HERE),
                              check=False)
    except subprocess.TimeoutExpired:
        return f"hang (> {PROBE_TIMEOUT} s)"
    if done.returncode < 0:
        import signal

        return f"crash ({signal.Signals(-done.returncode).name})"
    if done.returncode != 0:
        tail = (done.stderr.strip().splitlines() or ["?"])[-1]
        return f"crash (exit {done.returncode}: {tail[:60]})"
    return done.stdout.strip()


def threshold(shape: str, stage: str, stack: str) -> tuple[int | None, str]:
    """(smallest failing n found, its outcome); None when all up to LARGEST pass."""
    low, high, outcome = 0, 16, ""
    while True:
        outcome = outcome_of(shape, high, stage, stack)
        if outcome != "ok":
            break
        if high >= LARGEST:
            return None, "ok"
        low, high = high, min(high * 4, LARGEST)
    while high - low > max(1, high // 33):
        middle = (low + high) // 2
        found = outcome_of(shape, middle, stage, stack)
        if found == "ok":
            low = middle
        else:
            high, outcome = middle, found
    return high, outcome


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--probe", nargs=4, metavar=("SHAPE", "N", "STAGE", "STACK"), help=argparse.SUPPRESS)
    p.add_argument("--shape", action="append", choices=sorted(SHAPES))
    p.add_argument("--stage", action="append", choices=["compile", "ast", "libcst", "analyze"])
    p.add_argument("--stack", action="append", help="main, or a thread stack size such as 512k / 8m")
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--largest", type=int, default=LARGEST, help="longest chain tried (default %(default)s)")
    args = p.parse_args(argv)
    globals()["LARGEST"] = args.largest
    if args.probe:
        shape, n, stage, stack = args.probe
        probe(shape, int(n), stage, stack)
        return 0
    shapes = args.shape or list(SHAPES)
    runs = [(stage, stack) for stage in (args.stage or ["compile", "ast", "libcst", "analyze"])
            for stack in (args.stack or (["main", "512k"] if stage == "libcst" else ["main"]))]
    print("| shape | " + " | ".join(f"{stage} ({stack})" for stage, stack in runs) + " |")
    print("|---" * (len(runs) + 1) + "|")
    with ThreadPoolExecutor(args.jobs) as pool:
        rows = {shape: [pool.submit(threshold, shape, stage, stack) for stage, stack in runs] for shape in shapes}
        for shape, futures in rows.items():
            cells = []
            for future in futures:
                n, outcome = future.result()
                cells.append(f"ok to {LARGEST:,}" if n is None else f"{n:,}: {outcome}")
            print(f"| {shape} | " + " | ".join(cells) + " |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

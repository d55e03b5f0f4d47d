#!/usr/bin/env python3
"""A daemon's run after an edit, counted in Python function calls (deterministic where seconds are not).

    python benchmarks/daemon_calls.py ROOT FILE [--edits 4] [--top N]

Answers the CLI's run over ROOT in this process as the daemon does (``daemon_server.Sessions``: one session kept
across runs), appending a module-level assignment to FILE (relative to ROOT; put back at the end) before each run.
The first two runs build and settle the session; each later one runs under ``cProfile`` and prints its function
calls (``--top N``: the last run's N costliest functions by own time too). Compare versions by putting each on
``PYTHONPATH`` in turn (installed with ``pip install --no-deps --target DIR SRC``): on a machine whose speed drifts
by a third within the hour, a tenth fewer calls is a finding that timings cannot make.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import io
import os
import pstats
import sys
import tempfile
import time


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root")
    parser.add_argument("file", help="relative to ROOT")
    parser.add_argument("--edits", type=int, default=4)
    parser.add_argument("--top", type=int, default=0, help="print the last run's costliest functions")
    args = parser.parse_args()

    from warplint.cli import main as cli_main
    from warplint.daemon_server import Sessions

    path = os.path.join(args.root, args.file)
    with open(path, encoding="utf-8") as fh:
        original = fh.read()
    sessions = Sessions()
    stamp = time.time_ns()
    with tempfile.TemporaryDirectory() as temporary:
        argv = ["check", "--exit-zero", "--format", "json", "-o", os.path.join(temporary, "out.json"),
                "--cache-dir", temporary, args.root]
        try:
            for edit in range(args.edits + 1):
                with open(path, "w", encoding="utf-8") as fh:
                    fh.write(f"{original}\n_DAEMON_CALLS = {stamp + edit}\n")
                profile = cProfile.Profile() if edit >= 2 else None
                if profile is not None:
                    profile.enable()
                cli_main(argv, io.StringIO(), io.StringIO(), sessions=sessions)
                if profile is not None:
                    profile.disable()
                    stats = pstats.Stats(profile)
                    print(f"edit {edit}: {stats.total_calls} function calls", flush=True)  # type: ignore[attr-defined]
                    if args.top and edit == args.edits:
                        stats.sort_stats("tottime").print_stats(args.top)
                sessions.after_answer()
                gc.collect()
                gc.disable()  # (as the daemon: the collector only between runs)
        finally:
            with open(path, "w", encoding="utf-8") as fh:
                fh.write(original)
    return 0


if __name__ == "__main__":
    sys.exit(main())

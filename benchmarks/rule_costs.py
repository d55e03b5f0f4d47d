"""What each rule costs in a daemon's run after an edit: the CLI's run answered in this process by a kept session
(``daemon_server.Sessions``, as the daemon answers it), one file edited before each run, and the seconds each
rule's per-file ``check`` (over every file) and its ``check_project`` took in it.

    python benchmarks/rule_costs.py ROOT FILE [--edits N] [--cache-dir DIR] [--one-file] [--calls]

FILE is relative to ROOT; it is edited by appending a line (put back at the end). The first run builds the index
and is not reported. ``--one-file``: flake8's run through the daemon instead (``flake8_plugin.check_in_daemon``: the
edited text's findings alone, every rule), the path the language server's check of the edited file takes too. A
rule that asks a whole-project fact first pays for it, so the split between rules depends on their order; the total
is the checks' share of the run. ``--calls``: each run from the second edit on counted in Python function calls
under ``cProfile`` instead (the rules not timed): deterministic, where this machine's seconds drift by a third
within the hour; compare versions by putting each on ``PYTHONPATH`` in turn.
"""

from __future__ import annotations

import argparse
import collections
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
    parser.add_argument("--edits", type=int, default=3)
    parser.add_argument("--cache-dir", help="the cache directory (default: a temporary one)")
    parser.add_argument("--one-file", action="store_true", help="flake8's run of the edited file through the daemon")
    parser.add_argument("--calls", action="store_true", help="count each run's function calls instead")
    args = parser.parse_args()

    from warplint.cli import main as cli_main
    from warplint.daemon_server import Sessions
    from warplint.flake8_plugin import check_in_daemon
    from warplint.registry import all_rules

    spent: collections.Counter[str] = collections.Counter()

    def timed(code: str, method):
        def run(self, *arguments):
            start = time.perf_counter()
            found = tuple(method(self, *arguments))
            spent[code] += time.perf_counter() - start
            return found
        return run

    # each session makes its own rule objects: their classes are timed (not while counting calls)
    for code, rule in () if args.calls else all_rules().items():
        kind = type(rule)
        kind.check = timed(code, kind.check)  # type: ignore[method-assign]
        kind.check_project = timed(f"{code} (project)", kind.check_project)  # type: ignore[method-assign]

    path = os.path.join(args.root, args.file)
    with open(path, encoding="utf-8") as fh:
        original = fh.read()
    with tempfile.TemporaryDirectory() as temporary:
        cache = args.cache_dir or temporary
        argv = ["check", "--exit-zero", "--format", "json", "-o", os.path.join(temporary, "out.json"),
                "--cache-dir", cache, args.root]
        sessions = Sessions()
        stamp = time.time_ns()
        try:
            for edit in range(args.edits + 1):
                text = f"{original}\n_RULE_COSTS = {stamp + edit}\n"
                with open(path, "w", encoding="utf-8") as fh:
                    fh.write(text)
                spent.clear()
                start, cpu = time.perf_counter(), time.process_time()
                profile = cProfile.Profile() if args.calls and edit >= 2 else None
                if profile is not None:
                    profile.enable()
                if args.one_file:
                    check_in_daemon(os.path.abspath(path), text, frozenset(all_rules()), False, sessions)
                else:
                    cli_main(argv, io.StringIO(), io.StringIO(), sessions=sessions)
                if profile is not None:
                    profile.disable()
                wall, cpu = time.perf_counter() - start, time.process_time() - cpu
                sessions.after_answer()
                gc.collect()
                gc.disable()  # (as the daemon: the collector only between runs)
                if profile is not None:
                    calls = pstats.Stats(profile).total_calls  # type: ignore[attr-defined]
                    print(f"edit {edit}: {calls} function calls", flush=True)
                elif edit and not args.calls:
                    costliest = ", ".join(f"{code} {seconds:.3f}" for code, seconds in spent.most_common(8))
                    print(f"edit {edit}: {wall:.2f} s ({cpu:.2f} CPU s); rules {sum(spent.values()):.3f} s: "
                          f"{costliest}", flush=True)
        finally:
            with open(path, "w", encoding="utf-8") as fh:
                fh.write(original)
    return 0


if __name__ == "__main__":
    sys.exit(main())

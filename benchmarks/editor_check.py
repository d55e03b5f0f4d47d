#!/usr/bin/env python3
"""The CPU the editor's check spends after an edit (issue 28), without the language server around it.

    python benchmarks/editor_check.py ROOT FILE [--edits 4] [--as-server]

Indexes ROOT's project in one ``Session`` (as the language server does; not timed), then appends a module-level
assignment to FILE (relative to ROOT) ``--edits`` times, each a new text, and times ``Session.check_text`` for each
(process CPU). ``--as-server`` checks as the language server does (lsp.py): the cyclic collector off during the
check, the index the edit replaced freed after it, and 0.3 s between edits (the debounce), and also prints the
wall seconds of each check and of the free. ``--reads`` also prints, per edit, what re-checking the kept facts'
reads cost (``HeldReads.advance``, the checks of the facts taken over, the entries held and dropped) and the
binder's questions asked again (the costliest kinds: count and seconds). Prints one line per edit and
``median: SECONDS`` last. Compare versions by putting each on ``PYTHONPATH`` in turn, alternated: the machine's noise
is larger than most changes.
"""

from __future__ import annotations

import argparse
import collections
import gc
import os
import statistics
import tempfile
import time
from typing import Any

from warplint.config import load_config
from warplint.engine import Session
from warplint.registry import all_rules


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("root")
    parser.add_argument("file", help="relative to ROOT")
    parser.add_argument("--edits", type=int, default=4)
    parser.add_argument("--as-server", action="store_true", help="the collector off, the replaced index freed after")
    parser.add_argument("--reads", action="store_true", help="what re-checking the kept facts' reads costs")
    args = parser.parse_args()
    reads = _ReadsProbe() if args.reads else None
    session = Session(load_config(args.root, set(all_rules())))
    session.retire_indexes = args.as_server
    with tempfile.TemporaryDirectory() as cache:
        session.configure_cache(True, cache)
        path = os.path.join(args.root, args.file)
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
        session.check_text(path, text)
        session.free_retired()
        spent = []
        for edit in range(args.edits):
            if args.as_server:
                time.sleep(0.3)
                gc.disable()
            start, wall = time.process_time(), time.perf_counter()
            found = session.check_text(path, f"{text}\n_EDIT_{edit} = {edit}\n")
            checked = time.perf_counter()
            if args.as_server:
                session.free_retired()
                gc.enable()
            spent.append(time.process_time() - start)
            timing = (f"; wall {checked - wall:.3f} s, freed in {time.perf_counter() - checked:.3f} s"
                      if args.as_server else "")
            print(f"edit {edit}: {spent[-1]:.3f} s ({len(found)} findings{timing})", flush=True)
            if reads is not None:
                reads.report()
    print(f"median: {statistics.median(spent):.3f}")


class _ReadsProbe:
    """Times what checking the kept facts' reads costs per edit: ``HeldReads.advance`` (the entries an edit can change
    dropped, every question kept asked again), ``HeldReads.holds`` (entries not held yet checked whole) and
    ``ReadsCheck.holds`` (the kernel phase's own check), with the questions asked of the binder again."""

    def __init__(self) -> None:
        from warplint.semantic import reads

        self.seconds: dict[str, float] = collections.defaultdict(float)
        self.entries = self.failed = self.dropped = self.held = 0
        self.asked: collections.Counter[str] = collections.Counter()
        self.asked_seconds: dict[str, float] = collections.defaultdict(float)
        probe = self

        def timed(owner: Any, name: str, label: str, counts: bool = False) -> None:
            method = getattr(owner, name)

            def run(*arguments: Any) -> Any:
                start = time.perf_counter()
                answer = method(*arguments)
                probe.seconds[label] += time.perf_counter() - start
                if counts:
                    probe.entries += 1
                    probe.failed += not answer
                return answer

            setattr(owner, name, run)

        def timed_advance(held: Any, *arguments: Any) -> Any:
            start = time.perf_counter()
            check = advance(held, *arguments)
            probe.seconds["advance"] += time.perf_counter() - start
            probe.dropped += held.dropped
            probe.held = len(held)
            return check

        def timed_ask_again(bindings: Any, layer: Any = None) -> Any:
            ask = ask_again(bindings, layer)

            def timed_ask(method: Any, arguments: tuple, keywords: tuple) -> Any:
                start = time.perf_counter()
                name = method if isinstance(method, str) else method.__qualname__  # a fact asked by key
                try:
                    return ask(method, arguments, keywords)
                finally:
                    probe.asked[name] += 1
                    probe.asked_seconds[name] += time.perf_counter() - start

            return timed_ask

        advance, ask_again = reads.HeldReads.advance, reads.ask_again
        reads.HeldReads.advance = timed_advance  # type: ignore[method-assign,assignment]
        reads.ask_again = timed_ask_again
        timed(reads.HeldReads, "holds", "held check", counts=True)
        timed(reads.ReadsCheck, "holds", "kernel phase check", counts=True)

    def report(self) -> None:
        costliest = sorted(self.asked_seconds.items(), key=lambda item: -item[1])[:6]
        kinds = ", ".join(f"{method} {self.asked[method]} ({seconds:.3f} s)" for method, seconds in costliest)
        parts = ", ".join(f"{label} {seconds:.3f} s" for label, seconds in sorted(self.seconds.items()))
        print(f"  reads: {parts}; {self.entries} facts checked ({self.failed} failed), {self.held} entries held, "
              f"{self.dropped} dropped; asked again {sum(self.asked.values())} "
              f"({sum(self.asked_seconds.values()):.3f} s): {kinds}", flush=True)
        self.seconds.clear()
        self.entries = self.failed = self.dropped = 0
        self.asked.clear()
        self.asked_seconds.clear()


if __name__ == "__main__":
    main()

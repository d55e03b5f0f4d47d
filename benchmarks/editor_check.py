#!/usr/bin/env python3
"""The CPU the editor's check spends after an edit (issue 28), without the language server around it.

    python benchmarks/editor_check.py ROOT FILE [--edits 4]

Indexes ROOT's project in one ``Session`` (as the language server does; not timed), then appends a module-level
assignment to FILE (relative to ROOT) ``--edits`` times, each a new text, and times ``Session.check_text`` for each
(process CPU). Prints one line per edit and ``median: SECONDS`` last. Compare versions by putting each on
``PYTHONPATH`` in turn, alternated: the machine's noise is larger than most changes.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time

from warplint.config import load_config
from warplint.engine import Session
from warplint.registry import all_rules


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("root")
    parser.add_argument("file", help="relative to ROOT")
    parser.add_argument("--edits", type=int, default=4)
    args = parser.parse_args()
    session = Session(load_config(args.root, set(all_rules())))
    with tempfile.TemporaryDirectory() as cache:
        session.configure_cache(True, cache)
        path = os.path.join(args.root, args.file)
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
        session.check_text(path, text)
        spent = []
        for edit in range(args.edits):
            start = time.process_time()
            found = session.check_text(path, f"{text}\n_EDIT_{edit} = {edit}\n")
            spent.append(time.process_time() - start)
            print(f"edit {edit}: {spent[-1]:.3f} s ({len(found)} findings)", flush=True)
    print(f"median: {statistics.median(spent):.3f}")


if __name__ == "__main__":
    main()

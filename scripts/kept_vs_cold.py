"""A session kept across edits answers as a cold run, on a real corpus (issue 28 item 1).

    python scripts/kept_vs_cold.py CORPUS_DIR [--seed N] [--steps N] [--jobs N]

Copies CORPUS_DIR (e.g. ``.cache/corpora/newton``) to a temporary directory, builds one session that records
what its facts read (as the daemon's and the language server's do: facts, checks and WC106's findings kept across
its layers), then edits files at random, one per step, and compares the kept session's findings after each edit
with a cold ``--no-cache`` session's. The edits are ``tests/test_incremental.py``'s (a model change, a comment, a
Warp line repeated or removed, a module option set) and, one step in three, a ``wp.config`` or module-option line
appended. Prints each step; exits 1 if any step differs.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from tests.test_incremental import _answer, _edit, _python_files  # the test's own edits
from warplint.config import Config
from warplint.engine import Session

APPENDED = (
    '\nimport warp as wp\nwp.config.mode = "debug"\n',
    '\nimport warp as wp\nwp.config.kernel_cache_dir = "/tmp/kernels"\n',
    '\nimport warp as wp\nwp.set_module_options({"enable_backward": False})\n',
)


def _text(path: str) -> str:
    with open(path, encoding="utf-8") as fh:
        return fh.read()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus")
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--steps", type=int, default=6)
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as temporary:
        tree = os.path.join(temporary, "tree")
        shutil.copytree(args.corpus, tree, ignore=shutil.ignore_patterns("__pycache__", ".warplint_cache", ".git"))
        with open(os.path.join(tree, "pyproject.toml"), "w", encoding="utf-8") as fh:
            fh.write("[tool.warplint]\n")
        config = Config(root=tree)
        kept = Session(config, cache=False, jobs=args.jobs)
        kept.records_reads = True
        rng = random.Random(args.seed)
        files = [f for f in _python_files(tree) if "warp" in _text(f)]
        kept.lint_paths([tree])
        differing = 0
        for step in range(args.steps):
            if rng.random() < 0.3:
                path = rng.choice(files)
                with open(path, "a", encoding="utf-8") as fh:
                    fh.write(rng.choice(APPENDED))
            else:
                path = _edit(rng, tree, files)
            start = time.perf_counter()
            found = _answer(kept.lint_paths([tree]).diagnostics)
            seconds = time.perf_counter() - start
            cold = _answer(Session(config, cache=False, jobs=args.jobs).lint_paths([tree]).diagnostics)
            same = found == cold
            differing += not same
            print(f"step {step} {os.path.relpath(path, tree)}: kept session {seconds:.2f} s, "
                  f"{'the same as' if same else 'DIFFERENT from'} a cold run ({len(cold)} findings)", flush=True)
            if not same:
                print("  only kept:", [f for f in found if f not in cold][:3])
                print("  only cold:", [c for c in cold if c not in found][:3])
        print(f"{differing} of {args.steps} steps differed")
        return 1 if differing else 0


if __name__ == "__main__":
    sys.exit(main())

"""``warplint --watch``: lint, then lint again whenever a Python file or a config under the paths changes
(as ``ruff check --watch``). Changes are seen by polling modification times and sizes (no dependency, every
platform); a terminal is cleared before each run, other output gets a separator line. Ctrl-C ends it with
status 0: stopping the watch is how it is meant to end."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import TextIO

from .discovery import DEFAULT_EXCLUDES

POLL_S = 0.3
CLEAR = "\x1b[2J\x1b[H"
WATCHED_NAMES = ("pyproject.toml", ".gitignore")  # besides Python files: what changes the findings too


def snapshot(paths: list[str]) -> dict[str, tuple[int, int]]:
    """path -> (mtime_ns, size) of the Python files and configs under ``paths`` (default excludes skipped)."""
    seen: dict[str, tuple[int, int]] = {}

    def note(path: str) -> None:
        try:
            info = os.stat(path)
        except OSError:
            return
        seen[path] = (info.st_mtime_ns, info.st_size)

    for top in paths:
        if os.path.isfile(top):
            note(top)
            continue
        for directory, dirnames, filenames in os.walk(top):
            dirnames[:] = [d for d in dirnames if d not in DEFAULT_EXCLUDES and not d.endswith(".egg-info")]
            for name in filenames:
                if name.endswith((".py", ".pyi")) or name in WATCHED_NAMES:
                    note(os.path.join(directory, name))
    return seen


def watch(run: Callable[[], int], paths: list[str], out: TextIO, poll_s: float = POLL_S) -> int:
    """``run`` now and after every change under ``paths``, until Ctrl-C (then 0)."""
    terminal = out.isatty()
    try:
        first = True
        while True:
            if not first:
                out.write(CLEAR if terminal else f"\n---- {time.strftime('%H:%M:%S')} files changed, checking again\n")
            first = False
            before = snapshot(paths)
            run()
            out.write("Watching for file changes (Ctrl-C to stop).\n")
            out.flush()
            while snapshot(paths) == before:
                time.sleep(poll_s)
    except KeyboardInterrupt:
        out.write("\n")
        return 0

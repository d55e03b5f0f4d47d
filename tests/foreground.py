"""Start a child as a terminal starts a foreground command, whatever the test runner inherited.

A shell runs a background command (``pytest ... &``, a CI step under ``nohup sh -c '... &'``) with SIGINT
ignored, and an ignored signal stays ignored across ``exec``: Python then installs no KeyboardInterrupt
handler, and a test that presses Ctrl-C (``killpg(..., SIGINT)``) on warplint waits for nothing. A
foreground command never starts that way; the tests that signal warplint start it as one."""

from __future__ import annotations

import sys


def foreground(command: list[str]) -> list[str]:
    """``command`` (its first item a path) run with SIGINT at its default action: a small Python puts it
    back and ``exec``s the command in the same process (the pid the test signals stays the command's)."""
    reset = "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); os.execv(sys.argv[1], sys.argv[1:])"
    return [sys.executable, "-c", reset, *command]

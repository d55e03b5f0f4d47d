"""Signals as exceptions, so every ``finally`` (worker pools, ``--confirm``'s temp dir and the
program it runs) gets to clean up whatever ends the run.

``install()`` makes SIGTERM and SIGHUP raise ``Terminated`` in the main thread (SIGINT already
raises ``KeyboardInterrupt``). Both derive from ``BaseException``, so ``except Exception`` in the
engine never swallows them. The CLI maps them to the shell's exit codes (``exit_code``).
"""

from __future__ import annotations

import signal
import threading


class Terminated(BaseException):
    """SIGTERM or SIGHUP arrived; ``signum`` says which."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _raise_terminated(signum: int, _frame: object) -> None:
    raise Terminated(signum)


def install() -> None:
    """Turn SIGTERM/SIGHUP into ``Terminated`` (main thread only; elsewhere a no-op)."""
    if threading.current_thread() is not threading.main_thread():
        return
    for name in ("SIGTERM", "SIGHUP"):
        signum = getattr(signal, name, None)
        if signum is not None:
            try:
                signal.signal(signum, _raise_terminated)
            except (OSError, ValueError):
                pass


def exit_code(exc: BaseException) -> int:
    """128 + the signal number, as a shell reports a process ended by that signal."""
    if isinstance(exc, Terminated):
        return 128 + exc.signum
    return 128 + int(signal.SIGINT)

"""A progress line on a terminal's stderr while a cold run models its files.

Only on a terminal (never in a pipe, a file or CI logs), only once the run has gone on for
a moment (a warm or small run never flashes one), redrawn at most ``1 / interval`` times a
second, and erased when the run is done or interrupted.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable
from typing import TextIO


def wanted(stream: TextIO) -> bool:
    """Whether ``stream`` is a terminal that can redraw a line in place."""
    try:
        return stream.isatty() and os.environ.get("TERM", "") != "dumb"
    except (AttributeError, ValueError, OSError):  # a closed or foreign stream
        return False


_ON_SCREEN: list[ProgressBar] = []  # bars drawn and not yet erased (an interrupt erases them)


def erase_progress() -> None:
    """Erase every progress line still on screen (before an interrupted run says so)."""
    for bar in list(_ON_SCREEN):
        bar.close()


class ProgressBar:
    """``bar(done, total, phase)`` after each file modelled; ``bar.close()`` at the end. A run models in
    phases (the files named, then the files that import their Warp code): each phase is named on the line,
    so a count that starts again is not the same count going backwards, and each has its own time left."""

    def __init__(self, stream: TextIO, delay: float = 1.0, interval: float = 0.1,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.stream = stream
        self.clock = clock
        self.started = clock()
        self.delay = delay
        self.interval = interval
        self.drawn_at: float | None = None  # when the line was last drawn (None: not on screen)
        self.phase: str | None = None
        self.phase_started = self.started

    def __call__(self, done: int, total: int, phase: str = "modelling files") -> None:
        now = self.clock()
        if phase != self.phase:  # the first phase began with the bar, a later one with its first report
            self.phase, self.phase_started = phase, (now if self.phase is not None else self.started)
        if now - self.started < self.delay or total <= 0:
            return
        if self.drawn_at is not None and now - self.drawn_at < self.interval and done < total:
            return
        if self.drawn_at is None:
            _ON_SCREEN.append(self)
        self.drawn_at = now
        self._write("\r\x1b[K" + self.line(done, total, self.eta(done, total, now)))

    def eta(self, done: int, total: int, now: float) -> float | None:
        """Seconds left in this phase at its rate so far; None until the rate means something."""
        spent = now - self.phase_started
        if done <= 0 or done >= total or spent < 2.0:
            return None
        return spent / done * (total - done)

    def line(self, done: int, total: int, left: float | None = None) -> str:
        label = f"warplint: {self.phase or 'modelling files'} {done}/{total} "
        tail = f" ~{_duration(left)} left" if left is not None else ""
        room = shutil.get_terminal_size((80, 24)).columns - len(label) - 8 - len(tail)
        width = max(0, min(40, room))
        filled = width * done // total
        bar = f"[{'#' * filled}{'.' * (width - filled)}] " if width >= 10 else ""
        return f"{label}{bar}{100 * done // total:3d}%{tail}"

    def close(self) -> None:
        """Erase the line, if it was drawn."""
        if self.drawn_at is not None:
            self._write("\r\x1b[K")
            self.drawn_at = None
            _ON_SCREEN.remove(self)

    def _write(self, text: str) -> None:
        try:
            self.stream.write(text)
            self.stream.flush()
        except (OSError, ValueError):  # a terminal that went away must not end the run
            pass


def _duration(seconds: float) -> str:
    """``42 s``, ``3 min``: a time left, as precise as an estimate deserves."""
    return f"{max(1, round(seconds))} s" if seconds < 90 else f"{round(seconds / 60)} min"

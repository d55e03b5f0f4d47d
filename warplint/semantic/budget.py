"""The one bound on every walk of the semantic layer: a budget per question.

A question is what is asked of the layer from outside a walk: the values of one expression, where an array was
made, the modules a function launches, whether a scope runs at import. Answering it walks the project (names to
their bindings, parameters to call sites, calls to the functions they call), and every walk, in the evaluator
or in a fact module, draws on the budget of the question that started it: ``MAX_STEPS`` answers not yet
memoised, nested at most ``MAX_NESTING`` deep (Python's own stack). There is no depth per walk: a memoised
answer costs nothing, so a long ordinary chain (a tuple returned, unpacked, passed to a constructor, unpacked
again, many times over) resolves however deep it is, and a per-function summary (what a function launches,
whether it runs at import) is computed once and read by every later chain through that function.

An answer cut short inside a question (the budget spent) is not memoised: asked first, on its own, it may
resolve. A fact memoised for the whole project (``Layer.cached``) is computed apart, as questions of its own,
so that it never depends on how much budget its first asker had left.

This module is the bottom of the layer: it knows nothing of values, files or Warp.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any, Protocol, TypeVar

T = TypeVar("T")


class Recorder(Protocol):
    """What a summary's reads are recorded by (reads.py's ``ReadRecorder``; this module knows no reads)."""

    def hit(self, reads_of: dict[Any, Any], key: Any) -> None: ...

    def open(self) -> Any: ...

    def close(self, reads: Any) -> None: ...

MAX_STEPS = 2000  # answers not yet memoised that one question may compute, over every walk it starts
MAX_NESTING = 60  # nested answers within one question (name -> parameter -> call site -> ...): Python's stack
_NONE_OPEN = 1 << 62  # no cycle came back to an open summary


class Budget:
    """The budget of the question being answered (none between questions), shared by every walk of a project."""

    __slots__ = ("_low", "_open", "_reads", "_recorder", "cuts", "left", "nesting")

    def __init__(self, recorder: Recorder | None = None) -> None:
        self.left: int | None = None  # steps left to the open question; None when no question is open
        self.nesting = 0  # answers being computed, one inside the other, in the open question
        self.cuts = 0  # answers cut short so far (a walk compares it before and after to know it was cut)
        self._open: dict[tuple[int, Hashable], int] = {}  # summaries being computed -> their place in the stack
        self._low = _NONE_OPEN  # the lowest place of an open summary a cycle came back to, in the current one
        # what each summary read (reads.py), where a session records it: a hit adds it to the computation that hit
        self._recorder = recorder
        self._reads: dict[tuple[int, Hashable], Any] = {}

    def enter(self) -> bool | None:
        """Take one step (an answer not yet memoised) of the open question, opening one when none is: True when
        this step opened the question, False when it continues it, None when the budget is spent (the walk
        answers "not followed"; counted in ``cuts``). Each step that is not None is closed by ``leave``."""
        left = self.left
        if left is None:
            self.left = MAX_STEPS - 1
            self.nesting = 1
            return True
        if left <= 0 or self.nesting >= MAX_NESTING:
            self.cuts += 1
            return None
        self.left = left - 1
        self.nesting += 1
        return False

    def leave(self, opened: bool) -> None:
        self.nesting -= 1
        if opened:
            self.left = None

    def step(self, compute: Callable[[], T], cut_short: T) -> T:
        """``compute()`` as one step of the open question (a walk that memoises nothing: parts of an expression,
        bindings of a name); ``cut_short`` when the budget is spent."""
        opened = self.enter()
        if opened is None:
            return cut_short
        try:
            return compute()
        finally:
            self.leave(opened)

    def summary(self, memo: dict[Any, Any], key: Hashable, compute: Callable[[], T], cycle: T,
                spent: T | None = None) -> T:
        """``compute()``, memoised in ``memo`` under ``key``, as one step of the open question: a summary (of a
        function, a scope) that every later walk through it reads for free. While it is being computed, a walk
        that comes back to it (a cycle) reads ``cycle`` (a cycle adds nothing of its own); a walk that finds the
        budget spent reads ``spent`` (``cycle`` when None).

        ``cycle`` is what a cycle adds (nothing, for a union of what is reached): the summary that a cycle comes
        back to is whole when its walk ends, the ones inside the cycle are not (they read it unfinished) and are
        not memoised (Tarjan's lowlink: computed again when asked again). Nor is a summary whose walk the budget
        cut, unless it opened the question (asked again, it would be cut again)."""
        if key in memo:
            place = self._open.get((id(memo), key))
            if place is not None and place < self._low:
                self._low = place
            if self._recorder is not None:
                self._recorder.hit(self._reads, (id(memo), key))
            return memo[key]
        opened = self.enter()
        if opened is None:
            return cycle if spent is None else spent
        memo[key] = cycle
        place = len(self._open)
        self._open[(id(memo), key)] = place
        cuts, outer_low = self.cuts, self._low
        self._low = _NONE_OPEN
        reads = self._recorder.open() if self._recorder is not None else None
        try:
            result = compute()
        except BaseException:
            memo.pop(key, None)
            raise
        finally:
            if reads is not None:
                self._recorder.close(reads)  # type: ignore[union-attr]
            del self._open[(id(memo), key)]
            self.leave(opened)
            low, self._low = self._low, min(outer_low, self._low)
        if low >= place and (self.cuts == cuts or opened):
            memo[key] = result
            if reads is not None:
                self._reads[(id(memo), key)] = reads
        else:
            del memo[key]
        return result

    def cached(self, memo: dict[Any, Any], key: Hashable, compute: Callable[[], T]) -> T:
        """``compute()`` once, memoised in ``memo`` under ``key``, apart from the open question (``apart``), with
        its reads recorded as a summary's are."""
        if key in memo:
            if self._recorder is not None:
                self._recorder.hit(self._reads, (id(memo), key))
            return memo[key]
        reads = self._recorder.open() if self._recorder is not None else None
        try:
            result = self.apart(compute)
        finally:
            if reads is not None:
                self._recorder.close(reads)  # type: ignore[union-attr]
        memo[key] = result
        if reads is not None:
            self._reads[(id(memo), key)] = reads
        return result

    def apart(self, compute: Callable[[], T]) -> T:
        """``compute()`` outside the open question: the walks it starts open questions of their own (a fact
        memoised for the project does not depend on the budget its first asker had left), and what they cut is
        theirs (the asker reads a fact that is the same whoever asks: its own answer is not cut by it)."""
        left, nesting, cuts = self.left, self.nesting, self.cuts
        self.left, self.nesting = None, 0
        try:
            return compute()
        finally:
            self.left, self.nesting, self.cuts = left, nesting, cuts

"""The built base every identity fact reads: the binder's tables, the one evaluator, and one memo.

``Layer`` is what the fact modules below the launches take (devices, option changes, paths,
argument types); ``launches.IdentityFacts`` extends it with the launches and their order, and is
what the fact modules above it take.

A fact of one file may be kept across an edit (``Layer.kept``, reads.py): in a session that records reads, the
binder the layer and the evaluator read is recorded (``RecordedBindings``) and every memo entry carries its
reads, so a fact of one file knows what it read, and the next layer a session builds after an edit takes the
fact over when those reads still hold.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any, TypeVar

from warplint.model import FileModel

from .bindings import Bindings
from .evaluator import Evaluator
from .reads import LastingCheck

T = TypeVar("T")


class Layer:
    def __init__(self, bindings: Bindings, evaluator: Evaluator) -> None:
        self.bindings = evaluator.bindings  # recorded in a session that records reads (reads.py)
        self.evaluator = evaluator
        self.memo: dict[Hashable, Any] = {}  # derived facts, once per project (keyed by the asker)
        self._unrecorded = bindings
        self._kept: dict[tuple[str, int, tuple[int, ...]], Any] = {}  # (family, id(file), ids of part) -> a fact
        self._check: LastingCheck | None = None

    def cached(self, key: Hashable, compute: Callable[[], T]) -> T:
        """``compute()`` once per project: for facts derived from the whole project and asked for again and
        again (the memo dies with the project). Computed apart from the question that asks it first (budget.py):
        the fact is the same whoever asks."""
        return self.evaluator.budget.cached(self.memo, key, compute)

    def kept(self, family: str, file: FileModel, compute: Callable[[Layer], T], part: tuple = ()) -> T:
        """``compute(self)``, a fact of ``file``, once per project (as ``cached``) with what it reads recorded:
        the session's next layer over the same model takes it over while those reads hold (reads.py), instead of
        computing it again. ``compute`` must read the project only through this layer (its binder, evaluator
        and memos), and not change what it returns afterwards. ``part``: the objects the fact is of, when the file
        has several facts of the family (a kernel of it; a launch's call, site and kernel): a later layer takes the
        fact over only for the same objects (held by the fact kept, so their ids stay theirs)."""
        def computed() -> T:
            if self._check is None:
                self._check = self._unrecorded.kept_facts.check_in(self._unrecorded)
            return self.evaluator.kept(family, file, lambda: compute(self), self._check, part)

        return self.evaluator.budget.cached(self._kept, (family, id(file), tuple(map(id, part))), computed)

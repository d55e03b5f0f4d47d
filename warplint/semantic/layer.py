"""The built base every identity fact reads: the binder's tables, the one evaluator, and one memo.

``Layer`` is what the fact modules below the launches take (devices, option changes, paths,
argument types); ``launches.IdentityFacts`` extends it with the launches and their order, and is
what the fact modules above it take.

A fact of one file may be computed with its reads recorded (``Layer.kept``, reads.py): it is handed a
``ReadingLayer``, a view of the layer that records what the fact reads, and the next layer a session builds
after an edit takes the fact over when its reads still hold.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any, TypeVar, cast

from warplint.model import FileModel

from .bindings import Bindings
from .evaluator import Evaluator
from .reads import ReadRecorder, Reads

T = TypeVar("T")


class Layer:
    def __init__(self, bindings: Bindings, evaluator: Evaluator) -> None:
        self.bindings = bindings
        self.evaluator = evaluator
        self.memo: dict[Hashable, Any] = {}  # derived facts, once per project (keyed by the asker)
        self._kept: dict[tuple[str, int], tuple[Any, Reads]] = {}  # (family, id(file)) -> a recorded fact

    def cached(self, key: Hashable, compute: Callable[[], T]) -> T:
        """``compute()`` once per project: for facts derived from the whole project and asked for again and
        again (the memo dies with the project). Computed apart from the question that asks it first (budget.py):
        the fact is the same whoever asks."""
        if key not in self.memo:
            self.memo[key] = self.evaluator.budget.apart(compute)
        return self.memo[key]

    def kept(self, family: str, file: FileModel, compute: Callable[[Layer], T]) -> T:
        """``compute(reading)``, a fact of ``file``, once per project (as ``cached``) with what it reads
        recorded through ``reading`` (a ``ReadingLayer`` over this one): the session's next layer over the same
        model takes it over while those reads hold (reads.py), instead of computing it again. ``compute`` must
        read the project only through ``reading``, and not change what it returns afterwards."""
        key = (family, id(file))
        found = self._kept.get(key)
        if found is None:
            kept = self.bindings.kept_facts
            found = kept.get(family, file, self.bindings.by_path)
            if found is None:
                recorder = self.bindings.reads
                with recorder.recording() as reads:
                    recorder.model(file)
                    value = self.evaluator.budget.apart(lambda: compute(ReadingLayer(self)))
                found = (value, reads)
                kept.put(family, file, value, reads)
            self._kept[key] = found
        self.bindings.reads.add(found[1])  # asked inside another recorded fact: that one read all this did
        return cast(T, found[0])


class ReadingLayer(Layer):
    """A layer as a recorded fact sees it: each read goes to the layer's recorder (reads.py). The binder's
    methods that read one file's own records record that file; the file's kernel list is recorded as such;
    every other read (an evaluator question, a table over every file, a memo without recorded reads) records
    ``everything``, so what this view does not know to attribute is never kept."""

    def __init__(self, layer: Layer) -> None:  # a view: shares the layer's state, so no super().__init__
        recorder = layer.bindings.reads
        self._layer = layer
        self._recorder = recorder
        self.bindings = cast(Bindings, _ReadingBindings(layer.bindings, recorder))
        self.evaluator = cast(Evaluator, _ReadingEvaluator(layer.evaluator, recorder))
        self.memo = layer.memo
        self._kept = layer._kept

    def cached(self, key: Hashable, compute: Callable[[], T]) -> T:
        self._recorder.everything()  # the memo keeps no reads
        return self._layer.cached(key, compute)

    def kept(self, family: str, file: FileModel, compute: Callable[[Layer], T]) -> T:
        return self._layer.kept(family, file, compute)


class _ReadingBindings:
    """The binder, each read recorded."""

    # methods whose answer is read from the own records of the file they are given (their first argument)
    OWN_RECORDS = frozenset({"calls_to", "calls_where", "warp_calls", "name_assignments", "subscript_assignments"})

    def __init__(self, bindings: Bindings, recorder: ReadRecorder) -> None:
        self._bindings = bindings
        self._recorder = recorder
        self.file_facts = _ReadingFileFacts(bindings, recorder)

    def kernels_in(self, file: FileModel) -> list:
        self._recorder.kernel_list(file)
        return self._bindings.kernels_in(file)

    def __getattr__(self, name: str) -> Any:
        found = getattr(self._bindings, name)
        if name in self.OWN_RECORDS:
            def own(file: FileModel, *args: Any) -> Any:
                self._recorder.model(file)
                return found(file, *args)

            return own
        self._recorder.everything()
        return found


class _ReadingFileFacts:
    """``FileFacts``: a table of one model is read from that model alone (file_facts.py)."""

    def __init__(self, bindings: Bindings, recorder: ReadRecorder) -> None:
        self._file_facts = bindings.file_facts
        self._recorder = recorder

    def cached(self, file: FileModel, table: Callable[[FileModel], T]) -> T:
        self._recorder.model(file)
        return self._file_facts.cached(file, table)


class _ReadingEvaluator:
    """The evaluator: every question reads ``everything`` (its memos are shared across questions and keep no
    reads: the next slice of issue 28 item 1); its budget's ``step`` and ``apart`` read nothing."""

    def __init__(self, evaluator: Evaluator, recorder: ReadRecorder) -> None:
        self._evaluator = evaluator
        self._recorder = recorder
        self.budget = _ReadingBudget(evaluator, recorder)

    def __getattr__(self, name: str) -> Any:
        self._recorder.everything()
        return getattr(self._evaluator, name)


class _ReadingBudget:
    READ_NOTHING = frozenset({"step", "apart"})  # steps of the open question, counted; no fact read

    def __init__(self, evaluator: Evaluator, recorder: ReadRecorder) -> None:
        self._budget = evaluator.budget
        self._recorder = recorder

    def __getattr__(self, name: str) -> Any:
        if name not in self.READ_NOTHING:
            self._recorder.everything()  # ``summary``: a memo hit keeps no reads
        return getattr(self._budget, name)

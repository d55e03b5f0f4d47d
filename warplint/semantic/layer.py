"""The built base every identity fact reads: the binder's tables, the one evaluator, and one memo.

``Layer`` is what the fact modules below the launches take (devices, option changes, paths,
argument types); ``launches.IdentityFacts`` extends it with the launches and their order, and is
what the fact modules above it take.

A fact of one file may be kept across an edit (``Layer.kept``, reads.py): in a session that records reads, the
binder the layer and the evaluator read is recorded (``RecordedBindings``) and every memo entry carries its
reads, so a fact of one file knows what it read, and the next layer a session builds after an edit takes the
fact over when those reads still hold. A fact of the whole project that such facts ask with narrow arguments is
asked by key (``asked_by_key``): they read its answer, not every file, so an edit elsewhere that leaves the answer
as it was keeps them. A file's rule checks are such a kept fact (the engine's), so after an edit the rules run
again only where what they read changed.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Hashable
from typing import Any, Concatenate, ParamSpec, TypeVar

from warplint.model import FileModel

from .bindings import Bindings
from .evaluator import Evaluator
from .reads import LastingCheck, argument_key, question

T = TypeVar("T")
P = ParamSpec("P")
L = TypeVar("L", bound="Layer")


def asked_by_key(fact: Callable[Concatenate[L, P], T]) -> Callable[Concatenate[L, P], T]:
    """A fact of the whole project, asked by key (``Layer.asked``): for a fact that reads every file but whose answer
    to its arguments (plain values or tuples of them, models, a call or kernel of a model among them) an edit
    elsewhere seldom changes. What asks it reads its answer, not every file: a later layer asks it again, once,
    when a kept fact that read it is next checked."""
    @functools.wraps(fact)
    def asked(layer: L, *arguments: P.args, **keywords: P.kwargs) -> T:
        assert not keywords, "a fact asked by key takes its arguments by position"
        return layer.asked(fact, arguments)

    return asked


class Layer:
    def __init__(self, bindings: Bindings, evaluator: Evaluator) -> None:
        self.bindings = evaluator.bindings  # recorded in a session that records reads (reads.py)
        self.evaluator = evaluator
        self.memo: dict[Hashable, Any] = {}  # derived facts, once per project (keyed by the asker)
        self._unrecorded = bindings
        self._kept: dict[tuple[str, int, tuple[int, ...]], Any] = {}  # (family, id(file), ids of part) -> a fact
        self._check: LastingCheck | None = None
        # facts asked by key -> (answer, reads, the question a recorded asker reads or None (it reads the reads), the
        # arguments, held: their ids stay theirs)
        self._asked: dict[tuple, tuple[Any, Any, tuple | None, tuple]] = {}
        self._objects: dict[int, frozenset[int]] = {}  # id of a model -> ids of its calls and kernels

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
                self._check = self._unrecorded.kept_facts.check_in(self._unrecorded, self)
            return self.evaluator.kept(family, file, lambda: compute(self), self._check, part)

        return self.evaluator.budget.cached(self._kept, (family, id(file), tuple(map(id, part))), computed)

    def _askable(self, arguments: tuple) -> bool:
        """Whether a fact asked with ``arguments`` can be asked again in a later layer: each is a plain value (or a
        tuple of them), a model, or a call or kernel of a model among them (the model the same object there, so
        is the call: ``ask_again``)."""
        models = [a for a in arguments if isinstance(a, FileModel)]
        return all(isinstance(a, FileModel) or argument_key(a) is a
                   or any(id(a) in self._objects_of(model) for model in models) for a in arguments)

    def _objects_of(self, model: FileModel) -> frozenset[int]:
        """The ids of ``model``'s calls and kernels (alive with it: the layer holds its models)."""
        found = self._objects.get(id(model))
        if found is None:
            found = self._objects[id(model)] = frozenset(map(id, (*model.calls, *model.kernels)))
        return found

    def asked(self, fact: Callable[..., T], arguments: tuple) -> T:
        """``fact(self, *arguments)`` (``asked_by_key``), once per layer, computed apart from its asker. Read by a
        recorded computation as what it read, or, when it read every file and its arguments can be asked again
        (``_askable``), as a question whose answer a later layer compares (``ask_again``)."""
        key = (fact, *map(argument_key, arguments))
        found = self._asked.get(key)
        recorder = self.evaluator.recorder
        if found is None:
            reads = recorder.open()
            try:
                answer = self.evaluator.budget.apart(lambda: fact(self, *arguments))
            finally:
                recorder.set_apart(reads)
            asked = (question(fact, arguments, (), answer) if reads is not None and reads.everything
                     and self._askable(arguments) else None)
            found = self._asked[key] = (answer, reads, asked, arguments)
        answer, reads, asked, _ = found
        if reads is not None and recorder.stack:
            if asked is not None:
                recorder.stack[-1].append(asked)
            else:
                recorder.add(reads)
        return answer

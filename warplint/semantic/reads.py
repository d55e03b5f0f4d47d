"""What a fact read of the project while it was computed, so that a later layer may keep it (issue 28 item 1).

A session that lives across edits builds the layer again after each one, though one file changed. A fact
computed with its reads recorded can be taken over by the next layer when none of what it read changed:

- ``models``: the files whose own records (their calls, assignments, kernels as the extractor made them) it
  read, by model object: still read the same when the new layer holds the same object at that path (a model
  object is never changed by an edit: an edited file gets a new one);
- ``kernel_lists``: the files whose kernel list it read. A project adds ``derived`` kernels to a model (a
  project decorator that makes kernels, found by data flow over every file), so a list is read the same only
  while it holds none, then and now;
- ``everything``: a read that cannot be attributed to files (an evaluator question, whose memos are shared
  across questions; a table over every file; a derived kernel): the fact is never kept.

The recorder is the layer's base: the layer hands a recorded computation a reading view of itself
(``layer.ReadingLayer``), which records each read here; what is not read through a per-file method of the view
counts as ``everything``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from warplint.model import FileModel


class Reads:
    """One computation's reads."""

    __slots__ = ("everything", "kernel_lists", "models")

    def __init__(self) -> None:
        self.models: dict[str, FileModel] = {}  # path -> the model object whose own records were read
        self.kernel_lists: set[str] = set()  # paths whose kernel list (without derived kernels) was read
        self.everything = False

    def add(self, other: Reads) -> None:
        self.everything = self.everything or other.everything
        if not self.everything:
            self.models.update(other.models)
            self.kernel_lists |= other.kernel_lists

    def hold_in(self, by_path: Mapping[str, FileModel]) -> bool:
        """Whether a layer over the models ``by_path`` reads the same: the same model object at every path read,
        and no derived kernel in a kernel list read (``add_decorated_kernels`` has run when a fact is asked)."""
        if self.everything:
            return False
        if any(by_path.get(path) is not model for path, model in self.models.items()):
            return False
        return not any(k.derived for path in self.kernel_lists for k in by_path[path].kernels)


class ReadRecorder:
    """The reads of the computations being recorded, innermost last (a recorded fact asked inside another
    adds its reads to the outer one)."""

    def __init__(self) -> None:
        self._open: list[Reads] = []

    @property
    def active(self) -> bool:
        return bool(self._open)

    def model(self, file: FileModel) -> None:
        if self._open:
            self._open[-1].models[file.path] = file

    def kernel_list(self, file: FileModel) -> None:
        if self._open:
            if any(k.derived for k in file.kernels):
                self._open[-1].everything = True
            else:
                self._open[-1].models[file.path] = file
                self._open[-1].kernel_lists.add(file.path)

    def everything(self) -> None:
        if self._open:
            self._open[-1].everything = True

    def add(self, reads: Reads) -> None:
        """A memo hit inside a recorded computation: the entry's own reads are read again."""
        if self._open:
            self._open[-1].add(reads)

    @contextmanager
    def recording(self) -> Iterator[Reads]:
        reads = Reads()
        self._open.append(reads)
        try:
            yield reads
        finally:
            self._open.pop()
            if self._open:
                self._open[-1].add(reads)


class KeptFacts:
    """Facts of one file, with their reads, kept by a session across the layers it builds (as ``FileFacts``,
    handed to each): a layer takes one over when its file is the same model object and its reads hold
    (``Reads.hold_in``)."""

    def __init__(self) -> None:
        self._facts: dict[tuple[str, str], tuple[FileModel, Any, Reads]] = {}  # (family, path) -> fact
        self.taken_over = 0  # how many facts layers took over (the tests and the benchmarks read it)

    def get(self, family: str, file: FileModel, by_path: Mapping[str, FileModel]) -> tuple[Any, Reads] | None:
        """The fact ``family`` of ``file`` kept from an earlier layer, if it still holds in the one over
        ``by_path``."""
        entry = self._facts.get((family, file.path))
        if entry is None or entry[0] is not file or not entry[2].hold_in(by_path):
            return None
        self.taken_over += 1
        return entry[1], entry[2]

    def put(self, family: str, file: FileModel, value: Any, reads: Reads) -> None:
        if reads.everything:
            self._facts.pop((family, file.path), None)
        else:
            self._facts[(family, file.path)] = (file, value, reads)

    def keep_only(self, files: Iterable[FileModel]) -> None:
        """Forget the facts of models no longer indexed (replaced by an edit, or removed), and those that read
        one (never to hold again; forgotten, they keep no replaced model alive)."""
        current = {f.path: f for f in files}
        for key in [k for k, (file, _, reads) in self._facts.items() if current.get(k[1]) is not file
                    or any(current.get(path) is not model for path, model in reads.models.items())]:
            del self._facts[key]

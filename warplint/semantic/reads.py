"""What a fact read of the project while it was computed, so that a later layer may keep it (issue 28 item 1).

A session that lives across edits builds the layer again after each one, though one file changed. A fact
computed with its reads recorded can be taken over by the next layer when none of what it read changed. A
computation's reads (``Reads``, a list) are:

- a model: the file whose own records (its calls, assignments, functions as the extractor made them) it read,
  or the file the binder handed out as the owner of a name or the file at a path. Still read the same when the
  new layer holds the same object at that path (a model object is never changed by an edit: an edited file
  gets a new one);
- a kernel list: a project adds ``derived`` kernels to a model (a project decorator that makes kernels, found
  by data flow over every file), so a list is read the same only while it holds none, then and now;
- a question asked of the binder's tables (``call_sites(fq)``, ``function(fq)``, ``callee_of(file, call)``,
  ...), with its arguments and answer. The key of a table is the arguments; whether the edit contributes to
  that key is checked by asking the new layer's binder again: the read holds when the answer is the same,
  every model object in it the same object (``_same``). The binder is below the evaluator and asks nothing
  above it, so its answer is a function of its arguments and the models;
- a fact of the whole project asked by key (``layer.asked_by_key``: the option changes a file's calls make through
  project functions, the kernels of a module), with its arguments and answer: a question of the layer, not of the
  binder. Its computation read every file, but what asked it reads only its answer, compared as a binder
  question's is. It is asked again lazily, in the first check of the new layer that meets it (``HeldReads``
  drops every entry holding one at each layer), since computing it again is the costly part;
- the reads of a memo entry (the evaluator's, a budget summary, the layer's) computed or hit inside, held as
  they are (a graph, shared: each entry is checked once per layer, ``ReadsCheck``);
- ``everything``: a read that cannot be attributed (a table over every file, ``bindings.files``; a derived
  kernel): the fact is never kept.

A layer checks the reads of the facts it takes over through the entries its session found to hold before
(``HeldReads``): after an edit only the entries that read what the edit changed are dropped, with every entry
holding one of them, and the rest hold without being looked at again.

Every memo entry carries the reads of its own computation (recorded always in a session that records, since an
entry filled by an unrecorded question is hit by a recorded one later), and a hit adds them to the computation
that hit it. The binder's hand-outs are recorded by ``RecordedBindings``, the binder as the evaluator and the
layer see it. Names that only the set of files decides (``fqname``, ``canonical_ref``, ``is_warp_api``: the
module names are the paths') are not recorded: ``KeptFacts.keep_only`` forgets every fact when the set of files
changes.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from warplint.model import FileModel

_MODEL_MODULE = FileModel.__module__
_PLAIN = (str, int, float, bool, bytes, type(None))  # values compared by equality, not by object


_UNASKED = object()
_NO_ANSWER = object()  # a fact that cannot be asked of a layer: the same as no answer recorded (``ask_again``)
_EVERYTHING = object()  # first item of the reads of a computation that read what cannot be attributed


class Reads(list):
    """One computation's reads, as a list (made in C, appended to in C: recording runs on every memo entry): a
    ``FileModel`` (its own records read), a ``(KERNEL_LIST, model)`` pair (its kernel list read), a
    ``question(...)`` (method, arguments, keywords, answer, key) asked of the binder, or the ``Reads`` of a memo entry
    computed or hit inside. ``everything`` is a mark in first place."""

    __slots__ = ()

    @property
    def everything(self) -> bool:
        return bool(self) and self[0] is _EVERYTHING

    def mark_everything(self) -> None:
        if not (self and self[0] is _EVERYTHING):
            self.clear()  # nothing else read matters: a fact that read everything is never kept
            self.append(_EVERYTHING)

    @property
    def models(self) -> dict[str, FileModel]:
        """path -> the model object whose own records (or kernel list) were read, in these reads alone."""
        found: dict[str, FileModel] = {}
        for item in self:
            if isinstance(item, FileModel):
                found[item.path] = item
            elif isinstance(item, tuple) and len(item) == 2:
                found[item[1].path] = item[1]
        return found

    @property
    def asked(self) -> list[tuple[str, tuple, Any]]:
        """The questions asked of the binder in these reads alone: (method, (arguments, keywords), answer)."""
        return [(item[0], (item[1], item[2]), item[3]) for item in self
                if isinstance(item, tuple) and len(item) == 5]

    @property
    def inner(self) -> list[Reads]:
        return [item for item in self if isinstance(item, Reads)]

    def graph(self) -> list[Reads]:
        """These reads and every entry's inside, each once."""
        seen: dict[int, Reads] = {}
        stack = [self]
        while stack:
            current = stack.pop()
            if id(current) not in seen:
                seen[id(current)] = current
                stack.extend(current.inner)
        return list(seen.values())

    def add(self, other: Reads) -> None:
        if other is self or not other:
            return
        if other[0] is _EVERYTHING:
            self.mark_everything()
        else:
            self.append(other)


KERNEL_LIST = "kernel list"


class DerivedKernels:
    """Whether a kernel list holds a kernel a project derived (``Kernel.derived``), answered once per list object and
    length: a list is read again and again (every kernel reference into it), a project adds derived kernels by
    appending and removes them by making a new list, and an id is not reused while the list is held here."""

    def __init__(self) -> None:
        self._known: dict[int, tuple[list, int, bool]] = {}  # id(a kernel list) -> (it, its length, derived in it)

    def __call__(self, kernels: list) -> bool:
        found = self._known.get(id(kernels))
        if found is None or found[0] is not kernels or found[1] != len(kernels):
            found = self._known[id(kernels)] = (kernels, len(kernels), any(k.derived for k in kernels))
        return found[2]


class ReadRecorder:
    """The reads of the computations being recorded, innermost last (a recorded computation inside another
    adds its reads to the outer one). ``enabled`` in a session that keeps facts across edits (an editor's); a
    run that builds one layer records nothing (``open`` gives None)."""

    def __init__(self, enabled: bool = False) -> None:
        self.enabled = enabled
        self.stack: list[Reads] = []  # the computations being recorded (never another list: wrappers hold it)
        self._has_derived = DerivedKernels()

    @property
    def active(self) -> bool:
        return bool(self.stack)

    def model(self, file: FileModel) -> None:
        if self.stack:
            self.stack[-1].append(file)

    def kernel_list(self, file: FileModel) -> None:
        if self.stack:
            reads = self.stack[-1]
            if self._has_derived(file.kernels):
                reads.mark_everything()
            else:
                reads.append((KERNEL_LIST, file))

    def asked(self, method: str, arguments: tuple, answer: Any) -> None:
        if self.stack:
            self.stack[-1].append(question(method, arguments, (), answer))

    def everything(self) -> None:
        if self.stack:
            self.stack[-1].mark_everything()

    def add(self, reads: Reads | None) -> None:
        """A memo hit inside a recorded computation: the entry's own reads are read again."""
        if reads is not None and self.stack:
            self.stack[-1].add(reads)

    def hit(self, reads_of: Mapping[Any, Reads], key: Any) -> None:
        """A hit on the memo entry ``key`` whose reads ``reads_of`` holds (none while it is being computed: a
        cycle back to it, inside its own recording)."""
        stack = self.stack
        if stack:
            reads = reads_of.get(key)
            if reads:  # (an entry that read nothing adds nothing)
                if reads[0] is _EVERYTHING:
                    stack[-1].mark_everything()
                else:
                    stack[-1].append(reads)

    def open(self) -> Reads | None:
        """Start recording a computation (a memo entry's); None when the session records nothing."""
        if not self.enabled:
            return None
        reads = Reads()
        self.stack.append(reads)
        return reads

    def set_apart(self, reads: Reads | None) -> None:
        """End recording ``reads`` without adding them to the computation that was open (the asker adds what it
        should: ``Layer.asked``)."""
        if reads is not None:
            self.stack.pop()

    def close(self, reads: Reads | None) -> None:
        if reads is None:
            return
        stack = self.stack
        stack.pop()
        if stack and reads:
            if reads[0] is _EVERYTHING:
                stack[-1].mark_everything()
            else:
                stack[-1].append(reads)

    @contextmanager
    def recording(self) -> Iterator[Reads]:
        reads = Reads()
        self.stack.append(reads)
        try:
            yield reads
        finally:
            self.stack.pop()
            if self.stack:
                self.stack[-1].add(reads)


def argument_key(argument: Any) -> Any:
    """An argument as a key: a plain value, or a tuple of them, as itself; any other object by its id."""
    if isinstance(argument, _PLAIN) or (type(argument) is tuple and all(isinstance(a, _PLAIN) for a in argument)):
        return argument
    return id(argument)


def question(method: str | Callable[..., Any], arguments: tuple, keywords: tuple, answer: Any) -> tuple:
    """A question asked of the binder (``method``, the name of its method) or of the layer (a fact asked by key: its
    function), as a read: (method, arguments, keywords, the answer as it is now, the key ``ReadsCheck`` keeps its
    answer in a layer under). The key is made here, once, not by every layer's check: objects by id, which stays
    theirs while the read holds them."""
    key = (method, tuple(map(argument_key, arguments)), tuple((k, argument_key(v)) for k, v in keywords))
    return (method, arguments, keywords, _snapshot(answer), key)


def _snapshot(answer: Any) -> Any:
    """An answer as it is now: a table's list may be the binder's own, filled further later."""
    if isinstance(answer, list):
        return tuple(answer)
    if isinstance(answer, set):
        return frozenset(answer)
    if isinstance(answer, dict):
        return dict(answer)
    return answer


def _same(a: Any, b: Any) -> bool:
    """The same answer: equal plain values and containers, and every model object in it the same object (an
    equal object of another model is not: a fact kept holds the objects it was computed from)."""
    if a is b:
        return True
    kind = type(a)
    if kind is not type(b) and not (isinstance(a, tuple | list) and isinstance(b, tuple | list)):
        return False
    if isinstance(a, _PLAIN):
        return bool(a == b)
    if isinstance(a, tuple | list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, frozenset | set):
        return bool(a == b)  # hashable elements: plain values or values of the layer (model objects are not)
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if kind.__module__ == _MODEL_MODULE or not dataclasses.is_dataclass(a):
        return False  # a model object (or another object of the layer) is the same only if it is that object
    return all(_same(getattr(a, f.name), getattr(b, f.name)) for f in dataclasses.fields(a))


class ReadsCheck:
    """Whether reads hold in one layer (over ``by_path``, its binder answering ``ask``): the same model object
    at every path read, no derived kernel in a kernel list read, the binder's answer to each question the same.
    Each entry of the graph is checked once per layer (the layer's memo entries are shared by many facts)."""

    def __init__(self, by_path: Mapping[str, FileModel], ask: Callable[[str, tuple, tuple], Any]) -> None:
        self._by_path = by_path
        self._ask = ask
        # entries found to hold, with everything inside, and those whose own reads do not, by id (held here:
        # an id is not reused by another entry while the layer checks)
        self._held: dict[int, Reads] = {}
        self._failed: dict[int, Reads] = {}
        # each question's answer in this layer, by its arguments, objects by id (many entries ask the same one): an
        # object asked about was made before this layer and is alive while asked, so no object made since shares its id
        self._answers: dict[tuple, Any] = {}
        # whether an answer recorded (by the key of its question and its id) is this layer's, with the answer (held:
        # its id stays its own while this check lives)
        self._compared: dict[tuple[tuple, int], tuple[bool, Any]] = {}
        self.asked = 0  # questions asked of the binder again (the benchmarks read it)
        self._has_derived = DerivedKernels()

    @classmethod
    def over(cls, bindings: Any) -> ReadsCheck:
        """A check against ``bindings`` (a layer's binder, unrecorded): its files, and its answers asked again."""
        return cls(bindings.by_path, ask_again(bindings))

    def holds(self, reads: Reads) -> bool:
        found = self.newly_held(reads, self._held)
        if found is None:
            return False
        self._held.update((id(r), r) for r in found)
        return True

    def newly_held(self, reads: Reads, held: Mapping[int, Reads]) -> list[Reads] | None:
        """The entries of ``reads``' graph not in ``held`` (by id), each found to hold in this layer; None when one
        does not (remembered: asked again, it fails at once)."""
        if reads.everything:
            return None
        failed = self._failed
        seen: list[Reads] = []
        stack = [reads]
        marked: set[int] = set()
        while stack:
            current = stack.pop()
            key = id(current)
            if key in held or key in marked:
                continue
            if key in failed or not self._own_reads_hold(current, stack):
                failed[key] = current
                return None
            marked.add(key)
            seen.append(current)
        return seen

    def _own_reads_hold(self, reads: Reads, inner: list[Reads]) -> bool:
        """Whether the reads of this entry alone hold (the entries inside go onto ``inner``)."""
        by_path = self._by_path
        for item in reads:
            if isinstance(item, Reads):
                inner.append(item)
            elif item is _EVERYTHING:
                return False
            elif isinstance(item, FileModel):
                if by_path.get(item.path) is not item:
                    return False
            elif len(item) == 2:
                listed: FileModel = item[1]
                if by_path.get(listed.path) is not listed or self._has_derived(listed.kernels):
                    return False
            else:
                method, arguments, keywords, answer, key = item
                compared = (key, id(answer))  # (many entries read one question: a fact asked by key's, shared)
                verdict = self._compared.get(compared)
                if verdict is None:
                    now = self._answers.get(key, _UNASKED)
                    if now is _UNASKED:
                        self.asked += 1
                        now = self._answers[key] = _snapshot(self._ask(method, arguments, keywords))
                    verdict = self._compared[compared] = (_same(now, answer), answer)
                if not verdict[0]:
                    return False
        return True


class HeldReads:
    """The entries found to hold, kept across the layers a session builds (its ``KeptFacts``' own), so that a
    layer after an edit looks again only at what the edit can change instead of every entry of every fact taken
    over (a fresh ``ReadsCheck``'s work: on newton, some 22,000 entries of 120,000 reads after each edit).

    An entry held in the layer before holds in the next unless it reads a model the edit replaced, a kernel list
    that now holds a derived kernel, or a question whose answer is another now, or holds such an entry inside:
    ``advance`` asks each question kept again (once, whoever asked it), drops the entries that read what changed
    and every entry holding one of those (each entry knows the entries that hold it), and keeps the rest. An
    entry not held yet is checked whole, as ``ReadsCheck`` checks it, and held from then on.

    A layer's kernel lists are whole only once its project decorators' kernels are added (``add_decorated_kernels``):
    a check made before then is a ``ReadsCheck`` of its own, never this one."""

    # swept again once the entries held are more than this many times those held after the last sweep, and this many
    # more (a sweep goes through every kept fact's reads)
    SWEEP_GROWTH = 2
    SWEEP_AFTER = 10_000

    def __init__(self) -> None:
        self.generation = 0  # the layers advanced to: a check of an earlier layer no longer reads these
        self._by_path: Mapping[str, FileModel] = {}  # the layer these hold in
        self._held: dict[int, Reads] = {}
        self._holders: dict[int, list[Reads]] = {}  # id(an entry) -> the entries that hold it inside
        self._model_readers: dict[str, list[Reads]] = {}  # path -> the entries that read its model
        self._list_readers: dict[str, list[Reads]] = {}  # path -> the entries that read its kernel list
        self._askers: dict[tuple, list[Reads]] = {}  # a question's key -> the entries that asked it
        self._questions: dict[tuple, tuple] = {}  # a question's key -> (method, arguments, keywords, answer now)
        # the entries that asked a fact by key (``Layer.asked``): such a fact is computed again only when a layer
        # asks for it, so these are looked at again in each layer, lazily, by the first check that meets them
        self._fact_askers: list[Reads] = []
        self._has_derived = DerivedKernels()
        self._kept_after_sweep = 0
        self.dropped = 0  # entries the last advance dropped (the tests read it)

    def __len__(self) -> int:
        return len(self._held)

    def advance(self, by_path: Mapping[str, FileModel], ask: Callable[[str, tuple, tuple], Any],
                roots: Callable[[], Iterable[Reads]]) -> LastingCheck:
        """A check of the layer over ``by_path`` (whose binder answers ``ask``), the next one this session
        builds; ``roots`` gives the reads of every fact kept, to forget the entries none of them holds now and then
        (an entry held stays held until what it read changes, though the fact that held it was computed again)."""
        self.generation += 1
        self.dropped = 0
        if by_path.keys() != self._by_path.keys():
            self._forget()
        else:
            stale: list[Reads] = []
            before = self._by_path
            for path, model in by_path.items():
                if before[path] is not model:
                    stale.extend(self._model_readers.pop(path, ()))
                    stale.extend(self._list_readers.pop(path, ()))
            for path in [p for p in self._list_readers if self._has_derived(by_path[p].kernels)]:
                stale.extend(self._list_readers.pop(path))
            for key, (method, arguments, keywords, answer) in list(self._questions.items()):
                if not _same(_snapshot(ask(method, arguments, keywords)), answer):
                    stale.extend(self._askers.pop(key, ()))
                    del self._questions[key]
            stale.extend(self._fact_askers)
            self._fact_askers = []
            self._drop(stale)
        self._by_path = dict(by_path)
        if not self._kept_after_sweep:
            # the entries the first layer checked (every fact then taken over): what a sweep would keep
            self._kept_after_sweep = len(self._held)
        elif len(self._held) > self.SWEEP_GROWTH * self._kept_after_sweep + self.SWEEP_AFTER:
            self._sweep(roots())
        return LastingCheck(self, ReadsCheck(by_path, ask))

    def holds(self, reads: Reads, check: ReadsCheck) -> bool:
        """Whether ``reads`` hold in the layer last advanced to, ``check`` (of that layer) checking the entries
        not held yet."""
        if id(reads) in self._held:
            return True
        found = check.newly_held(reads, self._held)
        if found is None:
            return False
        for entry in found:
            self._hold(entry, check._answers)
        return True

    def _hold(self, reads: Reads, answers: Mapping[tuple, Any]) -> None:
        """Hold an entry found to hold, ``answers`` holding this layer's answer to each question it asked."""
        self._held[id(reads)] = reads
        for item in reads:
            if isinstance(item, Reads):
                self._holders.setdefault(id(item), []).append(reads)
            elif isinstance(item, FileModel):
                self._model_readers.setdefault(item.path, []).append(reads)
            elif len(item) == 2:
                self._list_readers.setdefault(item[1].path, []).append(reads)
            else:
                method, arguments, keywords, _, key = item
                if not isinstance(method, str):  # a fact asked of the layer: asked again lazily (``advance``)
                    if not self._fact_askers or self._fact_askers[-1] is not reads:
                        self._fact_askers.append(reads)
                    continue
                self._askers.setdefault(key, []).append(reads)
                if key not in self._questions:
                    self._questions[key] = (method, arguments, keywords, answers[key])

    def _drop(self, stale: list[Reads]) -> None:
        """Forget ``stale`` and every entry holding one of them inside (the lists read hold entries dropped
        before too: each is gone through once)."""
        held, holders = self._held, self._holders
        while stale:
            entry = stale.pop()
            if held.pop(id(entry), None) is not None:
                self.dropped += 1
                stale.extend(holders.pop(id(entry), ()))

    def _sweep(self, roots: Iterable[Reads]) -> None:
        """Keep only the entries a kept fact holds now (``roots``), with the tables of what they read made again."""
        held = self._held
        reachable: dict[int, Reads] = {}
        stack = list(roots)
        while stack:
            current = stack.pop()
            if id(current) in reachable:
                continue
            if id(current) in held:
                reachable[id(current)] = current
            stack.extend(item for item in current if isinstance(item, Reads))
        answers = {key: asked[3] for key, asked in self._questions.items()}
        self._forget()
        for entry in reachable.values():
            self._hold(entry, answers)
        self._kept_after_sweep = len(self._held)

    def _forget(self) -> None:
        for table in (self._held, self._holders, self._model_readers, self._list_readers, self._askers,
                      self._questions):
            table.clear()
        self._fact_askers = []


class LastingCheck:
    """``ReadsCheck``'s question, answered through the entries a session holds across its layers (``HeldReads``)
    while no later layer was advanced to; then by a check of this layer alone (a layer asked again after the
    session built another)."""

    def __init__(self, held: HeldReads, check: ReadsCheck) -> None:
        self._held = held
        self._generation = held.generation
        self._check = check

    def holds(self, reads: Reads) -> bool:
        if self._held.generation != self._generation:
            return self._check.holds(reads)
        return self._held.holds(reads, self._check)


class KeptFacts:
    """Facts of one file, with their reads, kept by a session across the layers it builds (as ``FileFacts``,
    handed to each): a layer takes one over when its file is the same model object and its reads hold
    (``ReadsCheck``, or across layers ``HeldReads``)."""

    UNUSED_LAYERS = 4  # a fact of objects (``part``) no layer asked for in this many layers is forgotten

    def __init__(self) -> None:
        # (family, path, ids of the part's objects) -> (the model, the fact, its reads, the part's objects)
        self._facts: dict[tuple[str, str, tuple[int, ...]], tuple[FileModel, Any, Reads, tuple]] = {}
        self._paths: frozenset[str] = frozenset()  # the files indexed (their module names are their paths')
        self.held = HeldReads()
        self._layers = 0  # layers built over these facts
        self._used: dict[tuple[str, str, tuple[int, ...]], int] = {}  # a fact of objects -> the last layer that read it
        self.taken_over = 0  # how many facts layers took over (the tests and the benchmarks read it)
        self.taken_over_of: dict[str, int] = {}  # the same, by family
        self.computed = 0  # how many recorded facts layers computed

    def check_in(self, bindings: Any, layer: Any) -> LastingCheck:
        """The check of ``layer`` over ``bindings`` (its binder, unrecorded), whose kernel lists are whole: the next
        layer of this session (``HeldReads.advance``)."""
        return self.held.advance(bindings.by_path, ask_again(bindings, layer),
                                 lambda: (fact[2] for fact in self._facts.values()))

    def get(self, family: str, file: FileModel, check: ReadsCheck | LastingCheck, part: tuple = ()
            ) -> tuple[Any, Reads] | None:
        """The fact ``family`` of ``file`` (of the objects ``part``: a kernel of it, a launch's call and site, ...)
        kept from an earlier layer, if it is of the same objects and still holds in the one ``check`` checks
        against."""
        key = (family, file.path, tuple(map(id, part)))
        entry = self._facts.get(key)
        if entry is None:
            return None
        if (entry[0] is not file or any(a is not b for a, b in zip(entry[3], part, strict=True))
                or not check.holds(entry[2])):
            del self._facts[key]  # never to hold again: forgotten, it keeps no replaced model alive
            return None
        if part:
            self._used[key] = self._layers
        self.taken_over += 1
        self.taken_over_of[family] = self.taken_over_of.get(family, 0) + 1
        return entry[1], entry[2]

    def put(self, family: str, file: FileModel, value: Any, reads: Reads, part: tuple = ()) -> None:
        self.computed += 1
        key = (family, file.path, tuple(map(id, part)))
        if reads.everything:
            self._facts.pop(key, None)
        else:
            self._facts[key] = (file, value, reads, part)  # (the part's objects held: their ids stay theirs)
            if part:
                self._used[key] = self._layers

    def keep_only(self, files: Iterable[FileModel]) -> None:
        """Forget the facts of models no longer indexed (replaced by an edit, or removed), and the facts of objects
        no layer asked for lately (objects of an earlier layer's facts, made again since); every fact when the set
        of files changed (a name's module, an import's target, may then be another file)."""
        self._layers += 1
        current = {f.path: f for f in files if f.error is None}
        paths = frozenset(current)
        if paths != self._paths:
            self._facts.clear()
            self._used.clear()
            self._paths = paths
        for key in [k for k, (file, *_) in self._facts.items() if current.get(k[1]) is not file]:
            del self._facts[key]
        oldest = self._layers - self.UNUSED_LAYERS
        unused = [k for k, layer in self._used.items() if layer < oldest or k not in self._facts]
        for key in unused:
            del self._used[key]
            self._facts.pop(key, None)


class RecordedBindings:
    """The binder as the evaluator and the layer see it in a session that records: each hand-out is recorded
    in the open computation's reads. A method that reads only the own records of the file it is given records
    that model; a kernel list, as such; a name only the set of files decides, nothing; a table over every file
    read whole (``files``, ``by_path``, ``cached``), everything; every other method, the question and its
    answer (asked again of the next layer's binder)."""

    OWN_RECORDS = frozenset({"calls_to", "calls_where", "warp_calls", "warp_aliases", "name_assignments",
                             "subscript_assignments", "assignments_in", "global_assignments"})
    KERNEL_LISTS = frozenset({"kernels_in", "kernel_index"})
    # decided by the module names (the set of files: ``KeptFacts.keep_only``) and Warp's own facts
    BY_FILE_SET = frozenset({"fqname", "canonical_ref", "canonical_module", "is_warp_api", "warp", "reads",
                             "kept_facts"})
    # the model of the file at a path or owning a name: which file the set of files decides, and its model
    # object whether it changed (an external model is in no layer's files: read so, it never holds)
    MODEL_BY_FILE_SET = frozenset({"owner_of", "file_at", "file_of_module"})
    WHOLE = frozenset({"files", "by_path", "by_module", "memo", "cached"})

    def __init__(self, bindings: Any, recorder: ReadRecorder) -> None:
        self.unrecorded = bindings
        self._recorder = recorder
        self.file_facts = _RecordedFileFacts(bindings.file_facts, recorder)

    def __getattr__(self, name: str) -> Any:
        found = getattr(self.unrecorded, name)
        recorder = self._recorder
        stack = recorder.stack
        if name in self.WHOLE or name.startswith("_"):
            recorder.everything()
            return found  # not kept here: each read records
        if name in self.BY_FILE_SET:
            wrapped = found
        elif name in self.OWN_RECORDS:
            def wrapped(file: FileModel, *arguments: Any) -> Any:
                if stack:
                    stack[-1].append(file)
                return found(file, *arguments)
        elif name in self.MODEL_BY_FILE_SET:
            def wrapped(*arguments: Any) -> Any:
                answer = found(*arguments)
                if stack and answer is not None:
                    stack[-1].append(answer)
                return answer
        elif name in self.KERNEL_LISTS:
            def wrapped(file: FileModel, *arguments: Any) -> Any:
                recorder.kernel_list(file)
                return found(file, *arguments)
        elif callable(found):
            def wrapped(*arguments: Any, **keywords: Any) -> Any:
                answer = found(*arguments, **keywords)
                if stack:
                    stack[-1].append(question(name, arguments, tuple(keywords.items()) if keywords else (), answer))
                return answer
        else:
            recorder.everything()
            return found
        self.__dict__[name] = wrapped  # found directly from now on
        return wrapped


def ask_again(bindings: Any, layer: Any = None) -> Callable[[Any, tuple, tuple], Any]:
    """Ask ``bindings`` (a layer's binder, unrecorded) a question ``RecordedBindings`` recorded, or ``layer`` (the
    layer over them) a fact asked by key (``Layer.asked``: the method is the fact's function). A fact of a model
    that is not the layer's (replaced by an edit) has no answer in it; nor has a fact with no layer to ask."""
    by_path = bindings.by_path

    def ask(method: Any, arguments: tuple, keywords: tuple) -> Any:
        if isinstance(method, str):
            return getattr(bindings, method)(*arguments, **dict(keywords))
        if layer is None or any(isinstance(a, FileModel) and by_path.get(a.path) is not a for a in arguments):
            return _NO_ANSWER
        return layer.asked(method, arguments)

    return ask


class _RecordedFileFacts:
    """``FileFacts``: a table of one model is read from that model alone (file_facts.py)."""

    def __init__(self, file_facts: Any, recorder: ReadRecorder) -> None:
        self._file_facts = file_facts
        self._recorder = recorder

    def cached(self, file: FileModel, table: Callable[[FileModel], Any]) -> Any:
        self._recorder.model(file)
        return self._file_facts.cached(file, table)

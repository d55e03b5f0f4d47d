"""The abstract values an expression can have: what the evaluator concludes.

Each value carries the reason it was concluded (``reason`` takes no part in equality, so a
set of values holds each value once). A ``ValueSet`` is the finite set an expression can
have at a point; ``Unknown`` in it means "and possibly something not known statically",
``Varies`` "a value computed at run time: one more variant per value", ``PerProcess`` "one of these
values per process, the same one for every read in that process".
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from warplint.model import Value


@dataclass(frozen=True, eq=False)
class Const:
    """A literal (a string, number, bool, None, tuple or dict)."""

    value: object
    reason: str = field(default="literal")

    def _key(self) -> tuple:
        return (type(self.value).__name__, repr(self.value))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Const) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())


@dataclass(frozen=True)
class KernelRef:
    """A Warp kernel: ``file.kernels[index]`` of the file at ``path``."""

    path: str
    index: int
    reason: str = field(default="", compare=False)


@dataclass(frozen=True)
class WarpModule:
    """A ``wp.Module`` object: ``wp.get_module(name)``."""

    name: str
    reason: str = field(default="", compare=False)


@dataclass(frozen=True)
class PythonModule:
    """An imported Python module object (``import app.kernels as k``; ``module=k``)."""

    name: str
    reason: str = field(default="", compare=False)


@dataclass(frozen=True)
class FunctionRef:
    """A project function (``fqname`` ``pkg.mod.Class.method``); ``memoized`` for ``functools.cache`` and co."""

    fqname: str
    memoized: bool = False
    reason: str = field(default="", compare=False)


@dataclass(frozen=True)
class ClassRef:
    """A project class, by its dotted name."""

    fqname: str
    reason: str = field(default="", compare=False)


@dataclass(frozen=True)
class EnumMember:
    """A member of a project ``enum.Enum`` class (``Color.RED``): an object of its own, not the value written
    for it in the class body, which ``.value`` reads (and ``.name`` its name)."""

    cls: str
    name: str
    reason: str = field(default="", compare=False)


@dataclass(frozen=True)
class Instance:
    """An instance of a project class (constructed, or promised by an annotation)."""

    cls: str
    reason: str = field(default="", compare=False)
    # the construction ``Cls(...)`` it came from (the evaluator's call site of ``Cls.__init__``): its own
    # arguments decide its attributes. None when only the class is known (an annotation).
    made: object | None = None


@dataclass(frozen=True, eq=False)
class Sequence:
    """A tuple or list literal whose items are not all constants: each item's own set."""

    items: tuple[ValueSet, ...]
    reason: str = field(default="sequence literal")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sequence) and self.items == other.items

    def __hash__(self) -> int:
        return hash(self.items)


@dataclass(frozen=True, eq=False)
class Lambda:
    """A ``lambda``: calling it gives its body (evaluated where it was written)."""

    body: Value
    path: str
    scope: str
    reason: str = field(default="lambda")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Lambda) and self.body is other.body

    def __hash__(self) -> int:
        return id(self.body)


@dataclass(frozen=True, eq=False)
class Mapping:
    """A dict literal whose items are not all constants: each (key set, value set) pair."""

    items: tuple[tuple[ValueSet, ValueSet], ...]
    reason: str = field(default="dict literal")
    # the items written into a dict after it was made (``d[k] = v``): the dict also holds those of what it was
    # made from, and the writes may not all run, so which keys it lacks is not known
    filled: bool = False

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Mapping) and self.items == other.items and self.filled == other.filled

    def __hash__(self) -> int:
        return hash(self.items)


# The standard library's class whose instances carry the keywords they were made with as attributes
NAMESPACE_CONSTRUCTOR = "types.SimpleNamespace"
# the standard library's executors (``concurrent.futures``): ``submit(fn, *args, **kwargs)`` calls ``fn`` with those
# arguments, in a worker, in the order work is submitted (``result()`` waits for it)
EXECUTORS_MODULE = "concurrent.futures"


# The standard library's functions that copy an object with some fields given new values (``dataclasses.replace``;
# ``copy.replace`` since Python 3.13): the copy is made by the object's class from the new values and the old ones
FIELD_REPLACERS = frozenset({"dataclasses.replace", "copy.replace"})


@dataclass(frozen=True)
class Replacement:
    """How an instance was made by ``dataclasses.replace(original, **changes)``: a field ``changes`` names holds
    its new value set, every other field what ``original`` holds."""

    original: Instance
    changes: tuple[tuple[str, ValueSet], ...]


@dataclass(frozen=True)
class Namespace:
    """An object whose attributes are the keywords it was made with (``types.SimpleNamespace(module=...)``):
    each attribute's value set."""

    attrs: tuple[tuple[str, ValueSet], ...]
    reason: str = field(default="a SimpleNamespace", compare=False)


@dataclass(frozen=True)
class WarpType:
    """One of Warp's value types: a scalar (``wp.float32``), a vector, matrix, quaternion or transformation type
    (``wp.vec3``, ``wp.types.vector(length=3, dtype=wp.float32)``). Identified as Warp hashes it into a kernel's
    content: by its constructor (empty for a scalar), the constructor's arguments but ``dtype``, and its scalar.
    Two spellings of one class object are one value (``wp.vec3`` is ``wp.vec3f``); so is a construction of the
    same shape (``vector(3, float32)`` is another class object than ``vec3f``, but a kernel reading either hashes
    the same: Warp hashes a type by its type code, warp-facts §4; measured on 1.19 by test_warp_versions), and any
    two different values make different kernel content (``transformation(float32)`` is not ``vector(7, float32)``).
    A Python scalar type given as the ``dtype`` is the Warp scalar Warp makes of it (``vector(3, float)`` is
    ``vec3f``: ``Evaluator.dtype_values``); Python's ``float`` read as a value is no ``WarpType``.
    ``name``: Warp's own name of the class (``vec3f``), for messages."""

    constructor: str
    arguments: tuple
    scalar: str
    name: str = field(default="", compare=False)
    reason: str = field(default="", compare=False)


@dataclass(frozen=True)
class Varies:
    """Computed at run time (``x.shape[1]``, ``1 << (n - 1).bit_length()``)."""

    reason: str = field(default="computed at run time", compare=False)


@dataclass(frozen=True)
class Unknown:
    """Not known statically (an external call, a parameter nobody passes, a bound hit). ``external``: an
    argument of a call from outside the project (a required parameter of a function it never calls), which
    its callers choose at run time."""

    reason: str = field(default="not known statically", compare=False)
    external: bool = False


@dataclass(frozen=True)
class PerProcess:
    """A value that varies per process, not within one: a runner outside the project starts a fresh process for
    each of ``choices`` and every read in that process sees the same one (asv runs each combination of a
    benchmark's ``params`` in its own process and passes it to ``setup`` and the benchmark method). ``source``
    names what chooses it (``pkg.bench.Class.params[0]``): two reads of one source agree within a process."""

    source: str
    choices: ValueSet
    reason: str = field(default="one value per process", compare=False)


AbstractValue = (Const | KernelRef | WarpModule | PythonModule | FunctionRef | ClassRef | EnumMember | Instance
                 | Sequence | Mapping | Namespace | Lambda | WarpType | Varies | Unknown | PerProcess)


@dataclass(frozen=True)
class ValueSet:
    """The values an expression can have. Empty only for a binding that adds none (``x: int``)."""

    items: frozenset[AbstractValue] = frozenset()

    @staticmethod
    def of(*values: AbstractValue) -> ValueSet:
        return ValueSet(frozenset(values))

    @staticmethod
    def union(sets: Iterable[ValueSet]) -> ValueSet:
        found: set[AbstractValue] = set()
        for s in sets:
            found |= s.items
        return ValueSet(frozenset(found))

    def __iter__(self) -> Iterator[AbstractValue]:
        return iter(self.items)

    def __len__(self) -> int:
        return len(self.items)

    def __or__(self, other: ValueSet) -> ValueSet:
        return ValueSet(self.items | other.items)

    @property
    def known(self) -> bool:
        """Every value is known statically (no ``Unknown``, no ``Varies``; a per-process value when its choices
        are)."""
        return bool(self.items) and all(v.choices.known if isinstance(v, PerProcess)
                                        else not isinstance(v, (Unknown, Varies)) for v in self.items)

    @property
    def varies(self) -> bool:
        return any(isinstance(v, Varies) for v in self.items)

    def constants(self) -> list[object]:
        """The literal values, in a stable order."""
        return [v.value for v in sorted((v for v in self.items if isinstance(v, Const)), key=Const._key)]

    def single_constant(self) -> tuple[bool, object]:
        """(True, literal) when the expression can only be one literal, else (False, None)."""
        if len(self.items) == 1:
            (only,) = self.items
            if isinstance(only, Const):
                return True, only.value
        return False, None

    def own_constant(self) -> tuple[bool, object]:
        """(True, literal) when the program itself gives the expression one literal and what else it can be is
        decided outside the program, once per process (the environment, a caller outside the project:
        ``Unknown``, not ``Varies``): ``int(os.environ.get("N", "16"))`` is 16 unless the run says otherwise."""
        constants = {v for v in self.items if isinstance(v, Const)}
        if len(constants) == 1 and all(isinstance(v, (Const, Unknown)) for v in self.items):
            return True, constants.pop().value
        return False, None

    def dict_keys(self) -> frozenset[str] | None:
        """Every key the expression's dict can have, when each value it can be is a dict whose keys are known
        strings (a literal, or a dict literal whose values need not be known); None otherwise."""
        keys: set[str] = set()
        for v in self.items:
            if isinstance(v, Const) and isinstance(v.value, dict) and all(isinstance(k, str) for k in v.value):
                keys.update(v.value)
            elif isinstance(v, Mapping):
                for key_set, _ in v.items:
                    known, key = key_set.single_constant()
                    if not (known and isinstance(key, str)):
                        return None
                    keys.add(key)
            else:
                return None
        return frozenset(keys) if self.items else None

    def kernels(self) -> list[KernelRef]:
        return sorted((v for v in self.items if isinstance(v, KernelRef)), key=lambda k: (k.path, k.index))

    def reasons(self) -> list[str]:
        return sorted({v.reason for v in self.items if v.reason})


def several_in_one_process(reads: Iterable[ValueSet]) -> bool:
    """Whether ``reads`` (the value sets of several reads, e.g. every launch's block size in one module) can
    give two different values in one process. A plain set's members all count (a loop takes each, a branch may);
    a ``PerProcess`` value is one of its choices per process, the same for every read of its source, while
    different sources are chosen independently (asv runs every combination). ``Varies`` is one more value
    (computed at run time: it differs from the known ones); ``Unknown`` is left out: it proves nothing."""
    fixed: set[AbstractValue] = set()
    sources: dict[str, set[AbstractValue]] = {}
    for read in reads:
        for v in read:
            if isinstance(v, PerProcess):
                sources.setdefault(v.source, set()).update(
                    c for c in v.choices if not isinstance(c, (Unknown, PerProcess)))
            elif not isinstance(v, Unknown):
                fixed.add(v)
    if len(fixed) >= 2:
        return True
    choices = [c for c in sources.values() if c]
    if fixed:
        return any(c - fixed for c in choices)
    return len(choices) >= 2 and len(set().union(*choices)) >= 2

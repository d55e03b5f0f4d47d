"""The per-file Warp model: what one traversal of a file extracts for the rules.

Everything here is plain, picklable data (no CST nodes), so a file's model can be
cached by content hash and shared between worker processes. Names are resolved
through the file's imports: ``wp.launch`` -> ``"warp.launch"``, a call of a helper
imported from ``app.config`` -> ``"app.config.configure"``.
"""

from __future__ import annotations

import copyreg
import functools
import operator
import pickle
import sys
from collections.abc import Callable, Iterator
from dataclasses import MISSING, dataclass, field, fields
from typing import Any, ClassVar

from . import warp_api
from .diagnostic import SPAN_PICKLE_CODE, Span
from .warp_api import signature_of

NO_SPAN = Span(0, 0, 0, 0)


class Compact:
    """Pickles as a tuple of field values with the trailing defaults left out: models are
    cached and sent between processes, and a pickled ``__dict__`` repeats every field name
    of every one of the (hundreds of thousands of) values, calls and contexts."""

    __slots__ = ()  # a subclass with slots then has no instance dict (each costs ~50 bytes more per value)

    def __reduce__(self) -> tuple[type, tuple[Any, ...]]:
        cls = type(self)
        plan = _REDUCE.get(cls)
        if plan is None:
            plan = _REDUCE[cls] = _reduce_plan(cls)
        read, defaults = plan
        values = read(self)
        n = len(values)
        # Fields with defaults come last in a dataclass, so this never drops a required one.
        while n and defaults[n - 1] is not MISSING and values[n - 1] == defaults[n - 1]:
            n -= 1
        return cls, values if n == len(values) else values[:n]


_REDUCE: dict[type, tuple[Callable[[Any], tuple[Any, ...]], list[Any]]] = {}


def _reduce_plan(cls: type) -> tuple[Callable[[Any], tuple[Any, ...]], list[Any]]:
    """How ``__reduce__`` reads a class's fields: one C-level attrgetter call, not a getattr per field."""
    names = [f.name for f in _fields_of(cls)]
    getter = operator.attrgetter(*names)
    if len(names) == 1:
        return (lambda obj: (getter(obj),)), _defaults_of(cls)
    return getter, _defaults_of(cls)


_FIELDS: dict[type, tuple] = {}
_DEFAULTS: dict[type, list[Any]] = {}


def _fields_of(cls: type) -> tuple:
    found = _FIELDS.get(cls)
    if found is None:
        found = _FIELDS[cls] = fields(cls)
    return found


def _defaults_of(cls: type) -> list[Any]:
    found = _DEFAULTS.get(cls)
    if found is None:
        found = []
        for f in _fields_of(cls):
            if f.default is not MISSING:
                found.append(f.default)
            elif f.default_factory is not MISSING:
                found.append(f.default_factory())
            else:
                found.append(MISSING)
        _DEFAULTS[cls] = found
    return found


class _Stored:
    """A field of a record read back from the cache, kept pickled (with the record's other ``_stored``
    fields) until it is first read: a project's calls and assignments hold most of its values, and an
    edit re-checks the project reading the arguments of a few percent of the calls and the value of about
    one assignment in six. Unpickling every one of them was most of the time an edit took."""

    def __init__(self, index: int) -> None:
        self.index = index

    def __get__(self, obj: Any, owner: type | None = None) -> Any:
        if obj is None:
            return self
        state = obj.__dict__
        values = state.get("_unpacked")
        if values is None:  # the bytes go once read: ``__reduce__`` pickles the values again
            values = state["_unpacked"] = list(pickle.loads(state.pop("_packed")))
        return values[self.index]

    def __set__(self, obj: Any, value: Any) -> None:
        state = obj.__dict__
        values = state.get("_unpacked")
        if values is None:
            packed = state.pop("_packed", None)
            values = state["_unpacked"] = list(pickle.loads(packed)) if packed else [None] * len(obj._stored)
        values[self.index] = value
        state.pop("_packed", None)  # no longer what the fields hold (``stored_without``)


def stored_without(record: Any, word: str) -> bool:
    """True when ``record`` was read back from the cache and the bytes its stored fields were read from hold no
    ``word``: no text or name among them contains it (a pickle keeps each string whole), told without
    unpickling them. The bytes are dropped when a stored field is set."""
    packed = record.__dict__.get("_packed")
    return packed is not None and word.encode() not in packed


def glimpse(record: Any, name: str) -> Any:
    """The field ``name`` of ``record``, a stored field read without keeping it unpickled: for a question asked
    of many records whose answer is rarely more than a yes or no (is this name bound to a class's instance?),
    where keeping every record read unpacked would grow a project's memory by a tenth for nothing."""
    packed = record.__dict__.get("_packed")
    stored = getattr(type(record), "_stored", ())
    if packed is None or name not in stored:
        return getattr(record, name)
    return pickle.loads(packed)[stored.index(name)]


def _stored_variant(cls: type, stored: tuple[str, ...]) -> type:
    """``cls`` as read back from the cache: the ``stored`` fields stay pickled until first read."""
    names = [f.name for f in fields(cls)]
    kept = [n for n in names if n not in stored]
    read_all, read_kept = _reader(names), _reader(kept)

    def reduce(self: Any) -> tuple[Any, ...]:
        state = self.__dict__
        packed = state["_packed"] if "_unpacked" not in state else pickle.dumps(
            tuple(state["_unpacked"]), protocol=pickle.HIGHEST_PROTOCOL)
        return _stored_state(variant, read_kept(self), packed)

    def eq(self: Any, other: object) -> bool:  # a stored record equals the same record not stored
        return isinstance(other, cls) and read_all(self) == read_all(other)

    namespace: dict[str, Any] = {name: _Stored(i) for i, name in enumerate(stored)}
    defaults = {f.name: f.default for f in fields(cls) if f.default is not MISSING}
    namespace.update(_stored=stored, _kept=tuple(kept), _read_kept=staticmethod(read_kept),
                     _kept_defaults=tuple(defaults.get(n, MISSING) for n in kept),
                     _read_stored=staticmethod(_reader(stored)), __reduce__=reduce, __eq__=eq, __hash__=None,
                     __doc__=cls.__doc__)
    variant = type(cls.__name__, (cls,), namespace)
    variant.__qualname__ = f"{cls.__qualname__}.Stored"
    return variant


def _reader(names: list[str] | tuple[str, ...]) -> Callable[[Any], tuple[Any, ...]]:
    """The named attributes of an object as a tuple (one name too)."""
    getter = operator.attrgetter(*names)
    return (lambda obj: (getter(obj),)) if len(names) == 1 else getter


def _stored_state(variant: Any, kept: tuple[Any, ...], packed: bytes) -> tuple[Any, ...]:
    """How a record pickles as its ``Stored`` variant: created by ``object.__new__`` and given its instance
    dict by pickle itself, both in C (a Python restore function per record was a fifth of reading a
    project's models back), with the kept fields that hold their class default left out (the dataclass's
    class attribute answers for them)."""
    state = {name: value for name, value, default in zip(variant._kept, kept, variant._kept_defaults, strict=True)
             if not (type(value) is type(default) and value == default)}
    state["_packed"] = packed
    return object.__new__, (variant,), state


def _reduce_storing(self: Any) -> tuple[Any, ...]:
    """``__reduce__`` of a record whose ``Stored`` variant reads some fields back lazily (``_Stored``)."""
    variant = type(self).Stored
    return _stored_state(variant, variant._read_kept(self),
                         pickle.dumps(variant._read_stored(self), protocol=pickle.HIGHEST_PROTOCOL))


class _NoKeywords(dict):
    """The one empty ``kwargs`` that every value without keywords shares (an empty dict of its own per value
    was about a tenth of a project's models in memory). Never written to: a write raises."""

    __slots__ = ()

    def _read_only(self, *args: Any, **kwargs: Any) -> Any:
        raise TypeError("the shared empty keywords of a Value are read-only")

    __setitem__ = __delitem__ = __ior__ = update = setdefault = pop = popitem = clear = _read_only

    def __reduce__(self) -> tuple[Callable[[], dict], tuple[()]]:
        return _no_keywords, ()


NO_KEYWORDS: dict[str, Any] = _NoKeywords()


def _no_keywords() -> dict[str, Any]:
    return NO_KEYWORDS


@dataclass(slots=True)
class Value(Compact):
    """A summary of an expression, enough to compare constants and follow names.

    kind: ``const`` (``const`` holds the literal), ``name``/``attr`` (``ref`` is the
    resolved dotted name, ``local`` whether it is a local of the enclosing function),
    ``call`` (``ref`` is the callee, ``args``/``kwargs`` summarised), ``seq`` and
    ``dict`` (``items``; ``const`` holds the literal when every item is constant),
    ``subscript`` (``base``/``key``; also ``a`` of ``a, b = rhs``: ``rhs[0]``),
    ``fstring``/``binop`` (``items`` are the parts; ``text`` names a binop's operator),
    ``ifexp`` (``items`` the two branches, ``base`` the test), ``compare`` (``items`` the operands,
    ``text`` the operators: ``"in"``, ``"== !="``), ``not`` (``base``), ``boolop`` (``text`` ``and``/``or``,
    ``items`` the operands of the whole chain), ``element`` (one item of the
    iterable ``base``: a ``for`` target), ``lambda`` (``base`` is the body), ``unset`` (a
    class field declared without a value), ``unpack`` (one ``*x`` / ``**x`` argument of a call, in the
    call's ``unpacked``: ``text`` is ``*`` or ``**``, ``base`` the unpacked expression, ``const`` for ``*x``
    the number of plain positional arguments written before it), ``other``.
    """

    kind: str
    text: str = ""
    const: Any = None
    ref: str | None = None
    local: bool = False
    args: tuple[Value, ...] = ()
    kwargs: dict[str, Value] = field(default_factory=_no_keywords)
    items: tuple[Any, ...] = ()
    base: Value | None = None
    key: Value | None = None
    span: Span = NO_SPAN
    # a call's ``*x`` / ``**x`` arguments in the order written (``unpack`` values; ``args`` and ``kwargs`` hold
    # the others): Python binds the callee's parameters from what they hold; a display's ``*x`` / ``**x``
    # elements (``items`` holds the others)
    unpacked: tuple[Value, ...] = ()

    def __post_init__(self) -> None:
        # One string object per distinct kind, text and name across the project: each value's strings came from
        # a pickle of its own (a record's stored fields, each file's model) and were copies, a sixth of the
        # memory of a project's models.
        intern = sys.intern
        self.kind = intern(self.kind)
        if self.text:
            self.text = intern(self.text)
        if self.ref is not None:
            self.ref = intern(self.ref)
        if not self.kwargs:
            self.kwargs = NO_KEYWORDS

    @property
    def is_const(self) -> bool:
        return self.kind == "const" or (self.kind in ("seq", "dict") and self.const is not None)

    def parts(self) -> Iterator[Value]:
        """The expressions directly inside this one: arguments, items (both sides of a dict's pairs), base, key."""
        yield from self.args
        yield from self.kwargs.values()
        for unpack in self.unpacked:
            if unpack.base is not None:
                yield unpack.base
        for item in self.items:
            if isinstance(item, Value):
                yield item
            elif isinstance(item, tuple):
                yield from (v for v in item if isinstance(v, Value))
        if self.base is not None:
            yield self.base
        if self.key is not None:
            yield self.key

    def names(self) -> set[str]:
        """Every plain or dotted name this value mentions (for 'depends on x' questions)."""
        found: set[str] = set()
        if self.kind in ("name", "attr", "call") and self.ref:
            found.add(self.ref)
        for part in self.parts():
            found |= part.names()
        return found


@dataclass(slots=True)
class ExitBranch:
    """An ``if``/``else`` body that leaves its function or program at its end (``return``, ``raise``,
    ``sys.exit()``): nothing in it runs before the statements after it. ``end`` is the source order
    of its last statement."""

    end: int = 0


@dataclass(slots=True)
class LoopExtent:
    """A loop (``for``, ``while``, a comprehension's clauses) that encloses statements of a function: what it
    repeats. ``end`` is the source order of its last statement (a comprehension's is the statement holding it):
    a statement after it runs once the loop is done, never between two of its turns. Compared by value, as
    ``ExitBranch``: a file extracted again from the same text gives an equal model (the editor keeps its index)."""

    end: int = 0


@dataclass(slots=True)
class Context(Compact):
    """Where a statement sits inside its function: the control flow around it."""

    scope: str  # qualname of the enclosing function within the file; "" at module level
    order: int  # source order of the statement in the file
    conditions: tuple[str, ...] = ()  # text of enclosing if/while tests ("not ..." in else branches)
    condition_names: tuple[str, ...] = ()  # names those tests read (resolved)
    in_loop: bool = False
    try_index: int | None = None  # index into FileModel.tries when inside a try body
    in_handler: bool = False  # inside an except handler
    in_finally: bool = False  # inside a finally block
    in_main_guard: bool = False  # under `if __name__ == "__main__":`
    exit_branch: ExitBranch | None = None  # the innermost enclosing branch that leaves the scope
    tests: tuple[Value, ...] = ()  # the expressions of ``conditions`` (a ``not`` value in else branches)
    # in the last statement of a `with pytest.raises(E)` / `self.assertRaises(E)` body (or of a `with` there):
    # the exceptions the test expects that statement to raise (resolved names, "?" for one not a name)
    expects_raise: tuple[str, ...] = ()
    # a call the statement makes once per item of a `for` over a literal sequence of functions (`for step in
    # (setup, run): step()`, ``Bindings.calls_in``): the item's place in the sequence, from 1; those run in turn
    item: int = 0
    loop: LoopExtent | None = None  # the outermost loop around the statement within its function
    loop_depth: int = 0  # how many loops enclose the statement within its function (``in_loop``: any)

    def runs_before(self, order: int, item: int = 0) -> bool:
        """Whether this statement can run before the statement at ``order`` of the same scope (before its call of
        the ``item``-th function of a sequence the statement calls in turn, when it makes such calls)."""
        return (self.order, self.item) < (order, item) and (self.exit_branch is None or order <= self.exit_branch.end)

    def precedes(self, other: Context) -> bool:
        """``runs_before`` the statement of ``other`` (its call of a sequence's function in turn included)."""
        return self.runs_before(other.order, other.item)


BoundMethod = Callable[["Call", str], "Value | None"]


def _checked_in_tests(bound: BoundMethod) -> BoundMethod:
    """``Call.bound`` as it is, or, in the test suite (``warp_api.STRICT``), a ``bound`` that first refuses a
    question the Warp API table cannot answer (``warp_api.check_parameter``)."""
    if not warp_api.STRICT:
        return bound

    @functools.wraps(bound)
    def checked(call: Call, parameter: str) -> Value | None:
        warp_api.check_parameter(call.callee, parameter)
        return bound(call, parameter)

    return checked


@dataclass
class Call(Compact):
    callee: str
    span: Span
    args: tuple[Value, ...]
    kwargs: dict[str, Value]
    ctx: Context
    assigned_to: tuple[str, ...] = ()  # `x = call()` / `a, b = call()`
    has_star_args: bool = False
    receiver: Value | None = None  # for `f(...).method(...)`: the summarised `f(...)` call
    # what the callee is read off when the binder knows it: "instance" / "class" for an attribute of the instance
    # or class a method runs on (`self.m()` in an ordinary method, `cls.m()` in a classmethod), else ""
    read_off: str = ""
    # the callee is read off what another call returns (``make(c).run()``, ``Solver(c)()``): set with ``receiver``
    # and kept beside it, so that asking whether there is one reads no stored field
    on_call_result: bool = False
    # its ``*x`` / ``**x`` arguments (``Value.unpacked``); ``has_star_args`` says whether there are any
    unpacked: tuple[Value, ...] = ()

    __reduce__ = _reduce_storing
    Stored: ClassVar[type]  # set below: read back from the cache, the arguments and span stay pickled until read

    def arg(self, position: int | None, keyword: str | None = None) -> Value | None:
        """The argument at ``position`` or passed as ``keyword``; for calls outside Warp's API
        (``os.environ.setdefault``, ``shutil.rmtree``). Warp calls: ``bound``."""
        if keyword is not None and keyword in self.kwargs:
            return self.kwargs[keyword]
        if position is not None and position < len(self.args):
            return self.args[position]
        return None

    @_checked_in_tests
    def bound(self, parameter: str) -> Value | None:
        """The argument bound to ``parameter`` of this Warp call (``warp_api``), positional or keyword.
        None when it was not passed (or the callee is not in the table: then only keywords count; the test
        suite makes a Warp callee or parameter missing from the table an error, ``warp_api.STRICT``)."""
        if parameter in self.kwargs:
            return self.kwargs[parameter]
        signature = signature_of(self.callee)
        position = signature.position_of(parameter) if signature is not None else None
        if position is not None and position < len(self.args):
            return self.args[position]
        return None


@dataclass
class Assignment(Compact):
    target: Value  # the assigned expression: name, attr (wp.config.x) or subscript (os.environ[k])
    value: Value
    span: Span
    ctx: Context
    augmented: bool = False
    annotation: str | None = None  # the resolved class of `name: Class = ...` (class fields, locals)

    __reduce__ = _reduce_storing
    Stored: ClassVar[type]  # set below: read back from the cache, the value and span stay pickled until read


# Spans too: only the few records a rule reports or relates read theirs.
Call.Stored = _stored_variant(Call, ("args", "kwargs", "receiver", "span", "unpacked"))
Assignment.Stored = _stored_variant(Assignment, ("value", "span"))


@dataclass(slots=True)
class Param(Compact):
    name: str
    default: Value | None = None
    annotation: str = ""
    annotation_ref: str | None = None  # the resolved class the annotation names (`settings: Settings`)
    generic: bool = False  # the annotation is a type Warp takes for generic (`Any`, `wp.array(ndim=1)`, ...)
    star: str = ""  # "*" for `*args` (the extra positional arguments), "**" for `**kwargs` (the extra keywords)


@dataclass
class Function:
    qualname: str  # within the file: "run", "Sim.step", "make.inner"
    name: str
    span: Span  # the name in `def name(`
    params: list[Param]
    decorators: list[str]  # resolved dotted names of the decorator callees
    ctx: Context  # where the def statement sits
    class_name: str | None = None
    is_warp: bool = False  # a wp.kernel / wp.func / wp.struct body: Warp code, not Python
    locals: set[str] = field(default_factory=set)
    loaded: set[str] = field(default_factory=set)  # names read in the body (nested included)
    static_loaded: set[str] = field(default_factory=set)  # names read inside wp.static(...)
    warp_calls: set[str] = field(default_factory=set)  # resolved callees inside a Warp body
    returns: list[Value] = field(default_factory=list)
    generic: bool = False  # a parameter's annotation is a generic Warp type (Param.generic)
    decorator_values: list[Value] = field(default_factory=list)  # each decorator expression (`@make(k=1)`)
    declared_global: tuple[str, ...] = ()  # names its `global` statements declare: its assignments bind the module's
    # source order of the statement holding the body's first `yield` (0: none, not a generator): a pytest fixture's
    # code up to there runs before the test that requests it, the rest after (its teardown)
    first_yield: int = 0
    first_return: int = 0  # the source order of the first `return` statement in the body (0: none)
    source_digest: str = ""  # of a decorated def's text (decorators, signature, body; indentation kept relative)
    # Warp bodies only (filled by the extractor's Warp-body call visit):
    # parameter -> ("array" | "tile", resolved dtype name) from its annotation ("" dtype: not a plain name)
    param_dtypes: dict[str, tuple[str, str]] = field(default_factory=dict)
    # the dtype of each tile a call of the body creates (tile_load of a parameter, tile_zeros(dtype=...),
    # tile_astype, ...): a resolved dotted name, or "" when the call does not tell it (wp.tile(x), tile_map)
    tile_dtypes: list[str] = field(default_factory=list)
    # precision= of each tile_matmul in the body: the literal, "default" when not given, "" when not literal
    matmul_precisions: list[str] = field(default_factory=list)

    __reduce__ = _reduce_storing
    Stored: ClassVar[type]  # set below: read back, the name sets and returns stay pickled until read

    @property
    def binds(self) -> str:
        """What Python passes for the first parameter of a function defined in a class body when the function is
        read off the class or an instance of it: "instance" for an ordinary method (the instance it is read off;
        read off the class it is a plain function), "class" for a classmethod (the class, read off either),
        "" for a staticmethod, a Warp body (the decorator makes a Warp object, no Python function) and a function
        not defined in a class body (nothing), whatever the parameter is named."""
        if self.class_name is None or self.is_warp or STATICMETHOD in self.decorators:
            return ""
        return "class" if CLASSMETHOD in self.decorators else "instance"

    @property
    def bound_parameter(self) -> str | None:
        """The named parameter Python fills with the instance or class the function is read off (``binds``)."""
        return self.params[0].name if self.binds and self.params and not self.params[0].star else None


# Most functions of a project are never asked which names they bind or read (their sets were a tenth of a
# cold newton run's memory), nor what they return.
Function.Stored = _stored_variant(Function, ("locals", "loaded", "static_loaded", "warp_calls", "returns",
                                             "param_dtypes", "tile_dtypes", "matmul_precisions"))


# Python's builtin descriptors that decide what a function read off a class receives first (decorator names as
# the binder resolves them: ``from builtins import staticmethod as sm`` is the builtin too, names.canonical).
STATICMETHOD = "staticmethod"
CLASSMETHOD = "classmethod"


@dataclass
class Kernel:
    name: str  # the Python function name (kernel key without the hash)
    function: str  # qualname of the decorated/wrapped Function in this file ("" if unknown)
    span: Span
    ctx: Context  # where the kernel is created (scope "" = at import time)
    form: str  # "decorator" | "call" | "Kernel"
    options: dict[str, Value]  # decorator/call keywords: module=, module_options=, enable_backward=, ...
    assigned_to: tuple[str, ...] = ()
    captured: set[str] = field(default_factory=set)  # enclosing-function locals the body reads
    static_captured: set[str] = field(default_factory=set)  # ... of those, read inside wp.static()
    warp_calls: set[str] = field(default_factory=set)
    generic: bool = False
    derived: bool = False  # made by the project index from a project decorator that wraps wp.kernel
    target: Value | None = None  # `wp.kernel(f)` / `wp.kernel(**options)(f)`: the function argument `f`
    # the module of the file that defines the function, when the layer found it outside this file
    # (`wp.kernel(other.f)`): the module the kernel joins by default, as Warp's `f.__module__`; None when the
    # function is not known (a helper's parameter nobody in the project passes a function to)
    defined_in: str | None = ""
    # its decorated function's ``source_digest``: Warp hashes a kernel by its key and source, so two definitions
    # of one text reading nothing that varies are identical content
    source_digest: str = ""
    # a kernel a decorator's function stores into a module-level container when the decorated ``def`` runs
    # (``REGISTRY[name] = wp.kernel(f)``): the container's canonical name and the key it is stored under
    # (a literal, or ``other`` when the key is not known); the decorated name stays the function
    stored_in: str = ""
    stored_key: Value | None = None

    @property
    def module_value(self) -> Value | None:
        return self.options.get("module")

    def option_span(self, name: str) -> Span:
        """Where the kernel's option ``name`` is written; the kernel itself when the option has no position in this
        file's text (a project decorator's keyword passed on to ``wp.kernel``: a derived kernel's options)."""
        value = self.options.get(name)
        return value.span if value is not None and value.span.line > 0 else self.span

    @property
    def module_span(self) -> Span:
        """``option_span("module")``."""
        return self.option_span("module")

    @property
    def is_unique(self) -> bool:
        value = self.module_value
        return value is not None and value.kind == "const" and value.const == "unique"


@dataclass
class Import:
    module: str  # absolute dotted module the statement imports from
    names: tuple[tuple[str, str], ...]  # (name, bound alias) for `from m import name as alias`; () for `import m`
    alias: str | None  # `import a.b as c` -> "c"; `import a.b` -> "a"
    span: Span
    ctx: Context


@dataclass
class Handler:
    types: tuple[str, ...]  # resolved exception names; () for a bare except
    action: str  # "swallow" | "reraise" | "log" | "handle"
    span: Span


@dataclass
class Try:
    span: Span
    ctx: Context
    handlers: list[Handler]


@dataclass(slots=True)
class WithBlock(Compact):
    """A ``with`` statement: its context managers (``wp.ScopedDevice("cpu")``) and the statements
    of its body, those of ``ctx.scope`` whose order is in ``(ctx.order, end]``."""

    items: tuple[Value, ...]
    ctx: Context
    end: int = 0

    def holds(self, ctx: Context) -> bool:
        return ctx.scope == self.ctx.scope and self.ctx.order < ctx.order <= self.end


def enclosing_names(functions: dict[str, Function], scope: str) -> set[str]:
    """The names the functions around ``scope`` bind (their locals and parameters, outwards): what a function
    defined in ``scope`` reads from them is a closure capture."""
    names: set[str] = set()
    while scope:
        outer = functions.get(scope)
        if outer is None:
            break
        names |= outer.locals | {p.name for p in outer.params}
        scope = outer.ctx.scope
    return names


@dataclass
class FileModel:
    path: str
    module: str  # dotted Python module name ("app.filters"); the file stem for loose scripts
    is_package: bool = False
    mentions_warp: bool = False
    imports_warp: bool = False
    has_main_guard: bool = False
    imports: list[Import] = field(default_factory=list)
    calls: list[Call] = field(default_factory=list)
    assignments: list[Assignment] = field(default_factory=list)
    functions: dict[str, Function] = field(default_factory=dict)
    # earlier `def`s of a qualname defined again in the file (`functions` holds the last, the one Python's name
    # is bound to in the end): each ran its decorators when its statement ran
    redefined: list[Function] = field(default_factory=list)
    kernels: list[Kernel] = field(default_factory=list)
    tries: list[Try] = field(default_factory=list)
    with_blocks: list[WithBlock] = field(default_factory=list)
    constants: dict[str, Value] = field(default_factory=dict)  # module-level NAME = value
    toplevel: set[str] = field(default_factory=set)  # names bound at module level
    classes: dict[str, tuple[str, ...]] = field(default_factory=dict)  # class qualname -> resolved bases
    # the file's top-level functions whose names code outside every function body reads or binds (module level,
    # class bodies, decorators, defaults) or a string literal contains (a test run by name in a subprocess: `-c
    # "from m import f; f()"`): with the functions' own ``loaded``, every mention of one in the file
    functions_named_outside_bodies: tuple[str, ...] = ()
    # those of them no code of the file names, only a string literal: a function a child process runs by name
    functions_named_only_in_strings: tuple[str, ...] = ()
    # where each read of a module-level name whose value depends on statement order is written (a name the module
    # binds more than once, or a function rebinds through `global`): the read's span -> its statement's context
    read_contexts: dict[Span, Context] = field(default_factory=dict)
    # the model's own tables made where it was extracted (``semantic.file_facts.MADE_AT_EXTRACTION``, in that
    # order), read back with it from the cache rather than made again by every run; empty: made when first asked
    tables_at_extraction: tuple[Any, ...] = ()
    rule_facts: dict[str, Any] = field(default_factory=dict)  # per-rule extras from Rule.collect()
    error: str | None = None  # why the file could not be read or parsed

    def function_at(self, scope: str) -> Function | None:
        return self.functions.get(scope)

    def module_kernels(self) -> list[Kernel]:
        """Kernels created at import time (module scope)."""
        return [k for k in self.kernels if k.ctx.scope == ""]

    def bound_name(self, module: str) -> str | None:
        """The name a module-level ``import MODULE`` (or ``import MODULE as NAME``) binds here: what code a
        fix writes calls it by (``wp`` for ``import warp as wp``); None without such an import."""
        for imp in self.imports:
            if imp.module == module and not imp.names and imp.ctx.scope == "" and imp.alias is not None and (
                    imp.alias != module.partition(".")[0] or imp.alias == module):
                return imp.alias
        return None


def _register_pickle_codes() -> None:
    """Name the classes a model's pickles repeat by a one-byte code of copyreg's extension registry (the range
    Python leaves to private use, 240-255) instead of by module and name. Each stored record's fields are a
    pickle of their own (hundreds of thousands of small pickles per project, kept as bytes until read), and
    naming ``Span``, ``Value`` and the empty keywords in each was about a fifth of their bytes (279 -> 221 bytes
    a record on average, over 27,654 records of 150 newton files)."""
    named: tuple[type | Callable[..., Any], ...] = (Value, _no_keywords, Context, Param, ExitBranch, WithBlock)
    for code, obj in enumerate(named, start=SPAN_PICKLE_CODE + 1):  # Span's code: diagnostic.py
        copyreg.add_extension(obj.__module__, obj.__qualname__, code)


_register_pickle_codes()

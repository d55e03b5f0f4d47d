"""The Warp types a launch's argument can have: which instances of a generic kernel a launch makes.

A generic kernel (``Any`` in its signature) gets one instance per distinct signature it is launched with, so
the question rules ask is "which Warp types can the argument bound to parameter P of launch L have?". The
answer (``Types``) is the set of types every expression the argument can come from (``Evaluator.sources``)
tells, and whether every such expression tells one:

- ``wp.array/zeros/ones/empty/full/from_numpy/from_torch(..., dtype=D)`` is an array of ``D`` (and
  ``zeros_like(a)`` etc. one of ``a``'s type, or of their own ``dtype=``);
- ``wp.float64(...)`` and the other Warp scalar, vector and matrix constructors are that type; Python
  ``int``/``float``/``bool`` literals are ``int32``/``float32``/``bool``, as Warp maps their types (the
  version's tables: ``Evaluator.warp_scalar_of_python_type``);
- a ``dtype=`` is a Warp type (also one Warp's constructors make: ``wp.types.vector(3, float)``) or a Python
  scalar (the Warp scalar Warp maps it to) named directly or through names, parameters and helper returns, or an
  item of a dict literal: with a key the evaluator knows, the item stored under it, else
  any of the dict's values (``_WARP_DTYPES[t.dtype]`` of ``{torch.float32: wp.float32, torch.float64:
  wp.float64}`` can be either: a dispatch table is there to give each of them). A table that code fills
  later (``TABLE[k] = ...``) has no type here; a ``**other`` inside the literal is not seen. A call the
  sources end at is the types the evaluator finds it gives, when each is a Warp type
  (``OPTIONS.get("dtype", wp.float64)``: the item its key selects, else the default).

A ``for`` target over a literal tuple or list (or a name bound to one: ``for t in (wp.float32, wp.float64)``)
is each of its items (``Evaluator.sources``). Anything else (an array passed in from outside, a ``for`` target
over what the caller passes, a call of a library) has no type here and makes the answer not ``known``.
Types are names: ``warp.float32``, ``array[warp.float64]``; a Warp type is named by Warp's own name of its
class, read from the Warp version's tables (``wp.vec3`` and ``wp.vec3f`` are one class: ``warp.vec3f``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from warplint.model import FileModel, Value
from warplint.names import is_warp

from .evaluator import Site, Source
from .values import WarpType

if TYPE_CHECKING:
    from .events import Launch
    from .layer import Layer

# Warp calls that create an array whose dtype is their `dtype=` argument (or the given positional one).
ARRAY_MAKERS = {"array": 1, "zeros": 1, "ones": 1, "empty": 1, "full": 2, "from_numpy": 1, "from_torch": 1}
LIKE_MAKERS = ("zeros_like", "ones_like", "empty_like", "clone", "full_like")


@dataclass(frozen=True)
class Types:
    """The Warp types an expression can have (``names``); ``known`` is False when some expression it can
    come from has no type told here (then other types are possible too)."""

    names: frozenset[str] = frozenset()
    known: bool = False

    @property
    def one(self) -> str | None:
        """The type, when it can have exactly one."""
        return next(iter(self.names)) if self.known and len(self.names) == 1 else None

    @property
    def several(self) -> bool:
        """It can have two types or more, all of them known (a dtype chosen at run time from a table)."""
        return self.known and len(self.names) > 1


UNKNOWN = Types()


def _union(parts: list[Types]) -> Types:
    if not parts:
        return UNKNOWN
    return Types(frozenset().union(*(p.names for p in parts)), all(p.known for p in parts))


def launch_arguments(layer: Layer, launch: Launch) -> list[Source] | None:
    """The kernel arguments of a launch, in parameter order: the items of ``inputs=[...]`` then of
    ``outputs=[...]`` (or of a name bound to one list literal); None when a list cannot be read."""
    call = launch.call
    args: list[Source] = []
    for keyword in ("inputs", "outputs"):
        listed = call.bound(keyword)
        if listed is None:
            continue
        lists = layer.evaluator.sources(launch.file, listed, call.ctx.scope, launch.site)
        if len(lists) != 1 or lists[0].value.kind != "seq" or lists[0].attrs:
            return None
        where = lists[0]
        args.extend(Source(where.file, item, where.scope, where.site) for item in where.value.items)
    return args


def launch_argument_types(layer: Layer, launch: Launch) -> list[Types] | None:
    """``Types`` of each kernel argument of a launch (``launch_arguments``), once per launch: a fact of the launch's
    file kept across an edit (``Layer.kept``), of its call, site and kernel (a kernel a project decorator derives is
    made again by each layer: its launches' types are never taken over)."""
    def compute(recorded: Layer) -> list[Types] | None:
        args = launch_arguments(recorded, launch)
        if args is None:
            return None
        return [value_types(recorded, a.file, a.value, a.scope, a.site) for a in args]

    return layer.kept("launch argument types", launch.file, compute, (launch.call, launch.site, launch.kernel))


def launch_signature(layer: Layer, launch: Launch) -> tuple[str, ...] | None:
    """The one type each kernel argument of a launch has: the instance of a generic kernel it makes; None when
    an argument can have another type or none known."""
    types = launch_argument_types(layer, launch)
    if types is None or any(t.one is None for t in types):
        return None
    return tuple(t.one for t in types if t.one is not None)


def value_types(layer: Layer, file: FileModel, value: Value | None, scope: str = "", site: Site | None = None
                ) -> Types:
    """The Warp types ``value`` (written in ``scope`` of ``file``) can have (arrays made ``*_like`` other arrays
    followed, each one step of the question's budget)."""
    if value is None:
        return UNKNOWN
    return layer.evaluator.budget.step(lambda: _union([
        _source_types(layer, s) for s in layer.evaluator.sources(file, value, scope, site)]), UNKNOWN)


def _source_types(layer: Layer, source: Source) -> Types:
    value = source.value
    if source.attrs or not source.complete:
        return UNKNOWN
    if value.kind == "const":  # a Python scalar: Warp infers the Warp scalar of its type
        scalar = layer.evaluator.warp_scalar_of_python_type(type(value.const).__name__)
        return Types(frozenset({f"warp.{scalar.name}"}), True) if scalar is not None else UNKNOWN
    if value.kind != "call" or not value.ref or not is_warp(value.ref):
        return UNKNOWN
    own = _warp_type_name(layer, value.ref)
    if own is not None:  # `wp.float32(x)`, `wp.vec3(...)`: a value of that type
        return Types(frozenset({own}), True)
    short = value.ref[len("warp."):]
    if short in ARRAY_MAKERS:
        position = ARRAY_MAKERS[short]
        dtype = dtype_types(layer, source, value.kwargs.get("dtype") or (
            value.args[position] if len(value.args) > position else None))
        return _arrays(dtype)
    if short in LIKE_MAKERS and value.args:
        if "dtype" in value.kwargs:
            return _arrays(dtype_types(layer, source, value.kwargs["dtype"]))
        return value_types(layer, source.file, value.args[0], source.scope, source.site)
    return UNKNOWN


def _warp_type_name(layer: Layer, ref: str) -> str | None:
    """``warp.<Warp's own name>`` of the value type the Warp API name ``ref`` reads, as the Warp version's tables
    bind it (``warp.vec3`` is ``warp.vec3f``: one class, one type); None for any other name."""
    found = layer.evaluator.warp_type(ref)
    return f"warp.{found.name}" if found is not None else None


def _made_type_name(made: WarpType) -> str:
    """A made type by Warp's name of its class when it has one (``vector(3, float32)`` is ``warp.vec3f``), else by
    its identity (``warp.vector(5, float32)``)."""
    if made.name:
        return f"warp.{made.name}"
    return f"warp.{made.constructor}({', '.join([*map(repr, made.arguments), made.scalar])})"


def _arrays(dtype: Types) -> Types:
    return Types(frozenset(f"array[{d}]" for d in dtype.names), dtype.known and bool(dtype.names))


def dtype_types(layer: Layer, where: Source, value: Value | None) -> Types:
    """The scalar types a ``dtype=`` argument (written where ``where`` is) can name: Warp's types and Python's
    scalars, followed through names like any value, and through items of dict literals (each one step of the
    question's budget)."""
    if value is None:
        return UNKNOWN
    return layer.evaluator.budget.step(lambda: _dtype_types(layer, where, value), UNKNOWN)


def _dtype_types(layer: Layer, where: Source, value: Value) -> Types:
    parts: list[Types] = []
    for source in layer.evaluator.sources(where.file, value, where.scope, where.site):
        v = source.value
        if source.attrs or not source.complete:
            return UNKNOWN
        if v.kind == "subscript" and v.base is not None:
            parts.append(_table_item(layer, source))
            continue
        if v.kind == "call":
            # a call the sources end at: the types the evaluator finds it gives (`wp.types.vector(3, float)`,
            # `OPTIONS.get("dtype", wp.float64)`: the item a key selects, or the default where none can match)
            made = layer.evaluator.values(source.file, v, source.scope, source.site)
            if not made.items or not all(isinstance(t, WarpType) for t in made):
                return UNKNOWN
            parts.append(Types(frozenset(_made_type_name(t) for t in made if isinstance(t, WarpType)), True))
            continue
        if v.kind not in ("name", "attr") or not v.ref or v.local:
            return UNKNOWN
        if (scalar := layer.evaluator.python_scalar(source)) is not None:
            parts.append(Types(frozenset({f"warp.{scalar.name}"}), True))
        elif (own := _warp_type_name(layer, v.ref)) is not None:
            parts.append(Types(frozenset({own}), True))
        else:
            return UNKNOWN
    return _union(parts)


def _table_item(layer: Layer, source: Source) -> Types:
    """``TABLE[key]`` as a dtype, where ``TABLE`` is a dict literal: the item its key selects when the
    evaluator knows the key and the literal's keys are constants, else any of its values."""
    value = source.value
    assert value.base is not None
    tables = layer.evaluator.sources(source.file, value.base, source.scope, source.site)
    if not tables or any(t.attrs or not t.complete or t.value.kind != "dict" for t in tables):
        return UNKNOWN
    known_key, key = layer.evaluator.constant(source.file, value.key, source.scope, source.site)
    parts: list[Types] = []
    for f, write in layer.evaluator.item_writes(source.file, value.base, source.scope):
        # `TABLE[k] = wp.float64` somewhere: the table holds what is written too (under a key that can match)
        written_key = write.target.key
        if known_key and written_key is not None and written_key.kind == "const" and written_key.const != key:
            continue
        parts.append(dtype_types(layer, Source(f, write.value, write.ctx.scope), write.value))
    for table in tables:
        items = [item for item in table.value.items if isinstance(item, tuple) and len(item) == 2]
        if len(items) != len(table.value.items) or not (items or parts):
            return UNKNOWN  # `**other` in the literal: not every value is written here
        chosen = items
        if known_key and parts and not any(isinstance(k, Value) and k.kind == "const" and k.const == key
                                          for k, _ in items):
            chosen = []  # the key is one a write stored, none of the literal's
        elif known_key:
            keyed = [(k, v) for k, v in items if isinstance(k, Value) and k.kind == "const" and k.const == key]
            if keyed:
                chosen = keyed
        for _, item in chosen:
            if not isinstance(item, Value):
                return UNKNOWN
            parts.append(dtype_types(layer, Source(table.file, item, table.scope, table.site), item))
    return _union(parts)

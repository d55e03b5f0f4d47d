"""Facts of one file's model alone, kept for as long as that model object is.

A session that lives across edits (the language server, flake8 checking file after file) keeps the model
object of every file whose text did not change, and builds the project's layer again after an edit. The
tables below are read from one model and nothing else (its calls, assignments and functions as the extractor
made them), so the new layer takes them over for every file but the edited one. The project's tables over
every file are merged from them (``Bindings``).

What may live here: a function of the model's own extracted records only. Not what a project adds to or
completes in the model (the ``derived`` kernels it finds by data flow, a completed kernel's function and module:
``kernels.add_decorated_kernels``), not a name resolved against other files, nothing the evaluator answers.
A table is shared by every layer built over the model: read it, never change it (``answered`` keeps the answers
of a question of the model alone, filled as asked).
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, TypeVar

from warplint.model import Assignment, Call, FileModel, Function, Value

T = TypeVar("T")


class FileFacts:
    """Per model object, its own tables (``cached``); a session hands the same ``FileFacts`` to each layer it
    builds over its models."""

    def __init__(self) -> None:
        self._by_model: dict[int, tuple[FileModel, dict[Callable, Any]]] = {}

    def cached(self, file: FileModel, table: Callable[[FileModel], T]) -> T:
        """``table(file)``, once per model object."""
        entry = self._by_model.get(id(file))
        if entry is None or entry[0] is not file:  # the model is held with its facts: an id is not reused meanwhile
            entry = self._by_model[id(file)] = (file, {})
        facts = entry[1]
        if table not in facts:
            facts[table] = own_table(file, table)
        return facts[table]

    def answered(self, file: FileModel, question: Callable[[FileModel, str], T], key: str) -> T:
        """``question(file, key)``, once per model object and key: a question of the model alone asked of a few of
        its parts (answered for every part up front, it would cost more than the parts asked)."""
        answers: dict[str, T] = self.cached(file, _no_answers).setdefault(question, {})
        if key not in answers:
            answers[key] = question(file, key)
        return answers[key]

    def keep_only(self, files: Iterable[FileModel]) -> None:
        """Forget the tables of the models not among ``files`` (replaced by an edit, or no longer indexed)."""
        kept = {id(f) for f in files}
        for key in [k for k in self._by_model if k not in kept]:
            del self._by_model[key]


def _no_answers(file: FileModel) -> dict[Callable, dict]:
    """Where ``FileFacts.answered`` keeps a model's answers, by question (filled as asked)."""
    return {}


@dataclass(frozen=True)
class CallTables:
    """A file's own calls, grouped three ways in one pass over them (a project's tables ask all three of nearly
    every file, and a pass over every call of every file was a large part of an edit's re-check)."""

    # callee as resolved by the extractor -> the positions of its calls in ``file.calls`` (an array of machine
    # ints: a (position, call) pair per call and their lists were about 20 MiB of a cold newton run)
    by_callee: dict[str, array[int]]
    by_scope: dict[str, list[Call]]  # the scope a call is written in -> its calls, in source order
    by_last_name: dict[str, tuple[Call, ...]]  # the last part of the callee (``self.solver.step``: ``step``) -> calls


def call_tables(file: FileModel) -> CallTables:
    by_callee: dict[str, array[int]] = {}
    scoped: dict[str, list[Call]] = {}
    by_last_name: dict[str, list[Call]] = {}
    for index, call in enumerate(file.calls):
        callee = call.callee
        positions = by_callee.get(callee)
        if positions is None:
            positions = by_callee[callee] = array("l")
        positions.append(index)
        scoped.setdefault(call.ctx.scope, []).append(call)
        by_last_name.setdefault(callee.rpartition(".")[2], []).append(call)
    return CallTables(by_callee, scoped, _tuples(by_last_name))


def _tuples(table: dict[str, list[T]]) -> dict[str, tuple[T, ...]]:
    """A table's groups as tuples: a list keeps room to grow, and a project's tables hold hundreds of thousands
    of groups, most of one item."""
    return {key: tuple(group) for key, group in table.items()}


def by_scope(calls: Iterable[Call]) -> dict[str, list[Call]]:
    """``calls`` by the scope each is written in, in their order."""
    table: dict[str, list[Call]] = {}
    for call in calls:
        table.setdefault(call.ctx.scope, []).append(call)
    return table


@dataclass(frozen=True)
class AssignmentTables:
    """A file's own assignments, grouped by what they assign, in one pass over them."""

    by_scope: dict[str, list[Assignment]]  # the scope an assignment is written in -> its assignments, in order
    # scope -> name -> ``name = ...`` written directly there (a tuple: most names are bound once, and a table
    # keyed by (scope, name) pairs with a list each was about 20 MiB of a cold newton run)
    names: dict[str, dict[str, tuple[Assignment, ...]]]
    subscripts: dict[tuple[str, str], list[Assignment]]  # (scope, name) -> ``name[key] = ...`` written there
    keyed: list[Assignment]  # ``x[key] = value`` (any ``x``), in source order
    attributes: dict[str, list[Assignment]]  # ``pkg.mod.Class.attr`` -> class body and ``self.attr = ...``
    # (the module-level name as the file refers to it, the assignment) for each ``NAME[key] = value``, in order
    items: list[tuple[str, Assignment]]
    assigned: frozenset[str]  # the names bound by ``name = ...``, in any scope
    # (scope, name) of each name some ``name = ...`` there binds to what a call through it dispatches on: a ``for``
    # target, or ``functools.partial(...)`` (``Bindings.calls_made``)
    dispatching: frozenset[tuple[str, str]]


def assignment_tables(file: FileModel) -> AssignmentTables:
    scoped: dict[str, list[Assignment]] = {}
    names: dict[str, dict[str, list[Assignment]]] = {}
    subscripts: dict[tuple[str, str], list[Assignment]] = {}
    keyed: list[Assignment] = []
    attributes: dict[str, list[Assignment]] = {}
    items: list[tuple[str, Assignment]] = []
    for a in file.assignments:
        scoped.setdefault(a.ctx.scope, []).append(a)
        target = a.target
        kind = target.kind
        if kind == "name":
            names.setdefault(a.ctx.scope, {}).setdefault(target.text, []).append(a)
        elif kind == "subscript":
            if target.key is not None:
                keyed.append(a)
            base = target.base
            if base is not None and base.kind == "name":
                subscripts.setdefault((a.ctx.scope, base.text), []).append(a)
                if base.ref and not base.local:
                    items.append((base.ref, a))
        elif kind == "attr" and target.ref:
            attributes.setdefault(target.ref, []).append(a)
    bound_names = {scope: _tuples(table) for scope, table in names.items()}
    assigned = frozenset(name for table in names.values() for name in table)
    # read where the model is extracted (``MADE_AT_EXTRACTION``), while every value is at hand: a model read back
    # from the cache carries this table and unpickles no value for it
    dispatching = frozenset((scope, name) for scope, table in names.items() for name, bound in table.items()
                            if any(_dispatches_on(a.value) for a in bound))
    return AssignmentTables(scoped, bound_names, subscripts, keyed, attributes, items, assigned, dispatching)


def _dispatches_on(value: Value) -> bool:
    """A ``for`` target's element, or ``functools.partial(...)``: what a call through the name dispatches on."""
    return value.kind == "element" or (value.kind == "call" and value.ref == "functools.partial")


def attribute_reads(file: FileModel) -> dict[str, list[tuple[Call | Assignment, Value]]]:
    """Attribute name -> (statement, read) for every attribute read in a call's arguments or receiver or an
    assignment's value."""
    table: dict[str, list[tuple[Call | Assignment, Value]]] = {}
    statements: list[tuple[Call | Assignment, Iterable[Value | None]]] = [
        (c, (*c.args, *c.kwargs.values(), c.receiver)) for c in file.calls]
    statements += [(a, (a.value,)) for a in file.assignments]
    for statement, values in statements:
        for value in values:
            for read in _attribute_reads(value):
                table.setdefault(read.text.rpartition(".")[2], []).append((statement, read))
    return table


def _attribute_reads(value: Value | None) -> Iterable[Value]:
    """Every attribute read (``a.b``, ``f().b``) inside ``value``."""
    if value is None:
        return
    stack = [value]
    while stack:
        v = stack.pop()
        if v.kind == "attr":
            yield v
        stack.extend(p for p in (*v.args, *v.kwargs.values(), v.base, v.key) if isinstance(p, Value))
        for item in v.items:
            stack.extend(i for i in (item if isinstance(item, tuple) else (item,)) if isinstance(i, Value))


def positions_by_last_name(file: FileModel) -> dict[str, array[int]]:
    """The last part of a callee's name -> the positions of its calls in ``file.calls``, in source order."""
    found: dict[str, list[int]] = {}
    for callee, positions in own_table(file, call_tables).by_callee.items():
        found.setdefault(callee.rpartition(".")[2], []).extend(positions)
    return {name: array("l", sorted(positions)) for name, positions in found.items()}


def functions_by_decorator(file: FileModel) -> dict[str, tuple[Function, ...]]:
    """Each decorator written on a function of the file, as the extractor resolved it -> those functions, in source
    order (a project's tables look for one decorator across every file: ``@wp.overload`` stubs)."""
    found: dict[str, list[Function]] = {}
    for fn in file.functions.values():
        for decorator in dict.fromkeys(fn.decorators):
            found.setdefault(decorator, []).append(fn)
    return _tuples(found)


def global_assignments(file: FileModel) -> dict[str, list[tuple[str, Assignment]]]:
    """A module-level name -> (scope, assignment) for each ``name = ...`` of it in a function that declares it
    ``global``, in the file's function order."""
    names = own_table(file, assignment_tables).names
    table: dict[str, list[tuple[str, Assignment]]] = {}
    for fn in file.functions.values():
        for declared in fn.declared_global:
            table.setdefault(declared, []).extend(
                (fn.qualname, a) for a in names.get(fn.qualname, {}).get(declared, ()))
    return table


def imported_names(file: FileModel) -> tuple[str, ...]:
    """Every module name the file's imports run, each once in the order first named: ``import a.b.c`` runs ``a``,
    ``a.b`` and ``a.b.c``; ``from a import b`` runs ``a`` and, when ``b`` is a submodule, ``a.b``."""
    names: dict[str, None] = {}
    for imp in file.imports:
        parts = imp.module.split(".")
        names[imp.module] = None
        names.update((f"{imp.module}.{name}", None) for name, _ in imp.names)
        names.update((".".join(parts[:i]), None) for i in range(1, len(parts)))
    return tuple(names)


# The tables a model carries from its extraction (``FileModel.tables_at_extraction``), in this order: made where the
# file is parsed (a worker of a cold run) and read back with the model from the cache, instead of by every run over
# every file. Only tables of the records a model keeps unpickled (a call's callee and context, an assignment's
# target): a table holding values of a record's stored fields would pickle them a second time, apart from the record.
MADE_AT_EXTRACTION: tuple[Callable[[FileModel], Any], ...] = (call_tables, assignment_tables)


def own_table(file: FileModel, table: Callable[[FileModel], T]) -> T:
    """``table(file)``: the one made where the model was extracted, else computed (not kept: ``FileFacts``)."""
    made = file.tables_at_extraction
    return made[MADE_AT_EXTRACTION.index(table)] if made and table in MADE_AT_EXTRACTION else table(file)


def tables_at_extraction(file: FileModel) -> tuple[Any, ...]:
    """``MADE_AT_EXTRACTION``'s tables of ``file``, for its model to carry."""
    return tuple(table(file) for table in MADE_AT_EXTRACTION)

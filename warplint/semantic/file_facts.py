"""Facts of one file's model alone, kept for as long as that model object is.

A session that lives across edits (the language server, flake8 checking file after file) keeps the model
object of every file whose text did not change, and builds the project's layer again after an edit. The
tables below are read from one model and nothing else (its calls, assignments and functions as the extractor
made them), so the new layer takes them over for every file but the edited one. The project's tables over
every file are merged from them (``Bindings``).

What may live here: a function of the model's own extracted records only. Not what a project adds to or
completes in the model (the ``derived`` kernels it finds by data flow, a completed kernel's function and module:
``kernels.add_decorated_kernels``), not a name resolved against other files, nothing the evaluator answers.
A table is shared by every layer built over the model: read it, never change it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from warplint.model import Assignment, Call, FileModel, Value

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
            facts[table] = table(file)
        return facts[table]

    def keep_only(self, files: Iterable[FileModel]) -> None:
        """Forget the tables of the models not among ``files`` (replaced by an edit, or no longer indexed)."""
        kept = {id(f) for f in files}
        for key in [k for k in self._by_model if k not in kept]:
            del self._by_model[key]


def calls_by_callee(file: FileModel) -> dict[str, list[tuple[int, Call]]]:
    """Callee as written and resolved by the extractor -> (position among the file's calls, call)."""
    table: dict[str, list[tuple[int, Call]]] = {}
    for index, call in enumerate(file.calls):
        table.setdefault(call.callee, []).append((index, call))
    return table


def calls_by_scope(file: FileModel) -> dict[str, list[Call]]:
    """The file's own calls by the scope they are written in, in source order."""
    return by_scope(file.calls)


def by_scope(calls: Iterable[Call]) -> dict[str, list[Call]]:
    """``calls`` by the scope each is written in, in their order."""
    table: dict[str, list[Call]] = {}
    for call in calls:
        table.setdefault(call.ctx.scope, []).append(call)
    return table


def calls_by_last_name(file: FileModel) -> dict[str, list[Call]]:
    """The file's calls by the last part of their callee (``self.solver.step`` under ``step``), source order."""
    table: dict[str, list[Call]] = {}
    for call in file.calls:
        table.setdefault(call.callee.rpartition(".")[2], []).append(call)
    return table


def names_by_scope(file: FileModel) -> dict[tuple[str, str], list[Assignment]]:
    """(scope, name) -> the assignments ``name = ...`` written directly in that scope."""
    table: dict[tuple[str, str], list[Assignment]] = {}
    for a in file.assignments:
        if a.target.kind == "name":
            table.setdefault((a.ctx.scope, a.target.text), []).append(a)
    return table


def assigned_names(file: FileModel) -> frozenset[str]:
    """The names the file's assignments bind, in any scope."""
    return frozenset(a.target.text for a in file.assignments if a.target.kind == "name")




def subscripts_by_scope(file: FileModel) -> dict[tuple[str, str], list[Assignment]]:
    """(scope, name) -> the assignments ``name[key] = ...`` written directly in that scope."""
    table: dict[tuple[str, str], list[Assignment]] = {}
    for a in file.assignments:
        base = a.target.base
        if a.target.kind == "subscript" and base is not None and base.kind == "name":
            table.setdefault((a.ctx.scope, base.text), []).append(a)
    return table


def keyed_stores(file: FileModel) -> list[Assignment]:
    """The assignments ``x[key] = value`` (any ``x``), in source order."""
    return [a for a in file.assignments if a.target.kind == "subscript" and a.target.key is not None]


def attribute_assignments(file: FileModel) -> dict[str, list[Assignment]]:
    """The attribute (``pkg.mod.Class.attr``) -> its assignments: class body and ``self.attr = ...``."""
    table: dict[str, list[Assignment]] = {}
    for a in file.assignments:
        if a.target.kind == "attr" and a.target.ref:
            table.setdefault(a.target.ref, []).append(a)
    return table


def item_assignments(file: FileModel) -> list[tuple[str, Assignment]]:
    """(the module-level name as the file refers to it, the assignment) for each ``NAME[key] = value``, in
    source order."""
    found: list[tuple[str, Assignment]] = []
    for a in file.assignments:
        base = a.target.base
        if a.target.kind == "subscript" and base is not None and base.kind == "name" and base.ref and not base.local:
            found.append((base.ref, a))
    return found


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

"""Where a file changes Warp module options, and which module each change targets.

Shapes (warp-facts §2, §3): ``wp.set_module_options(opts, module=...)`` (module None ->
the module where the call is *written*), ``wp.get_module(m).options[k] = v``,
``wp.get_module(m).options.update({...})``, and the same through a local bound to
``wp.get_module(m)``.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from warplint.model import Call, FileModel, Value
from warplint.names import is_warp

from . import file_facts
from .events import OptionChange, OptionForm
from .layer import asked_by_key

if TYPE_CHECKING:
    from .evaluator import Site
    from .layer import Layer


def module_of(layer: Layer, file: FileModel, value: Value | None, scope: str = "") -> str | None:
    """The one Warp module an expression names (the evaluator's answer: a string, a Python
    module object, ``__name__``, ``wp.get_module("x")``, a local or constant bound to one)."""
    names, complete = layer.evaluator.module_names(file, value, scope)
    return next(iter(names)) if complete and len(names) == 1 else None


def _literal_dict(value: Value | None) -> dict[str, Any] | None:
    if value is not None and value.kind == "dict" and isinstance(value.const, dict):
        return value.const
    return None


def option_changes(file: FileModel, layer: Layer) -> list[OptionChange]:
    """Every module option change written in ``file``, in source order (memoised per project): the calls
    and assignments that change a module's options, and the ``module_options=`` of its unique kernels.
    Recorded with what it reads (``Layer.kept``): after an edit of another file, the session's next layer takes
    it over unless it read what the edit changed."""
    return layer.kept("option_changes", file, lambda recorded: _option_changes(recorded, file))


def shared_option_changes(file: FileModel, layer: Layer) -> list[OptionChange]:
    """The changes of a shared module's options (every form but a unique kernel's own ``module_options=``)."""
    return [c for c in option_changes(file, layer) if c.form is not OptionForm.KERNEL]


# ``wp.get_module(m).options.update`` and ``wp.get_module_options().update``, as the extractor spells the callee
_CHAINED_UPDATES = ("warp.get_module().options.update", "warp.get_module_options().update")


def _may_change_options(callee: str) -> bool:
    return callee == "warp.set_module_options" or callee.endswith(".update")


def _option_changes(layer: Layer, file: FileModel) -> list[OptionChange]:
    changes: list[OptionChange] = []
    for call in layer.bindings.calls_where(file, _may_change_options):
        if is_warp(call.callee, "set_module_options"):
            target = call.bound("module")
            module = file.module if target is None else module_of(layer, file, target, call.ctx.scope)
            options = call.bound("options")
            changes.append(OptionChange(module, _literal_dict(options), call.span, call.ctx,
                                        OptionForm.SET_MODULE_OPTIONS, target is not None, file.path, options,
                                        target))
            continue
        found = _updated_module(layer, file, call)
        if found is not None:
            changes.append(OptionChange(found[0], _literal_dict(call.arg(0)), call.span, call.ctx, OptionForm.UPDATE,
                                        found[1], file.path, call.arg(0), keywords=tuple(call.kwargs)))
    for assignment in layer.bindings.file_facts.cached(file, file_facts.assignment_tables).keyed:
        target = assignment.target
        found = _options_of(layer, file, target.base, assignment.ctx.scope)
        if found is None:
            continue
        key = target.key.const if target.key is not None and target.key.kind == "const" else None
        values = {key: assignment.value.const} if key is not None and assignment.value.kind == "const" else None
        changes.append(OptionChange(found[0], values, assignment.span, assignment.ctx, OptionForm.ITEM, found[1],
                                    file.path, key=target.key))
    for kernel in layer.bindings.kernels_in(file):
        options = kernel.options.get("module_options")
        if options is not None:
            changes.append(OptionChange(None, _literal_dict(options), kernel.span, kernel.ctx, OptionForm.KERNEL, True,
                                        file.path, options, kernel=kernel))
    return sorted(changes, key=lambda c: c.ctx.order)


def _updated_module(layer: Layer, file: FileModel, call: Call) -> tuple[str | None, bool] | None:
    """For ``<options>.update(...)`` on a Warp module's options: (the module, whether it is named); None
    when the receiver is not a Warp module's options."""
    if call.callee == "warp.get_module_options().update":
        return file.module, False  # without module=, the module where the call is written
    if not call.callee.endswith(".options.update"):
        return None
    if call.receiver is not None:  # wp.get_module(m).options.update(...)
        holder = call.receiver
    else:
        holder = Value("name", text=call.callee[: -len(".options.update")].removeprefix(file.module + "."),
                       local=True)
        if "." in holder.text:
            return None
    names, complete = layer.evaluator.module_names(file, holder, call.ctx.scope)
    if not names and call.callee != "warp.get_module().options.update":
        return None  # not a Warp module (``self.options.update``, a dict called options)
    return (next(iter(names)) if complete and len(names) == 1 else None), True


def _options_of(layer: Layer, file: FileModel, base: Value | None, scope: str) -> tuple[str | None, bool] | None:
    """``base`` is a Warp module's live options dict (``wp.get_module(m).options``, ``m.options`` for a
    ``wp.Module`` m, ``wp.get_module_options()``, or a local bound to one of them): (the module, whether it
    is named); None when it is not one (or the question's budget is spent)."""
    if base is None:
        return None
    return layer.evaluator.budget.step(lambda: _live_options_of(layer, file, base, scope), None)


def _live_options_of(layer: Layer, file: FileModel, base: Value, scope: str) -> tuple[str | None, bool] | None:
    if base.kind == "call" and is_warp(base.ref, "get_module_options"):
        target = base.kwargs.get("module") or (base.args[0] if base.args else None)
        return (file.module, False) if target is None else (module_of(layer, file, target, scope), True)
    if base.kind == "attr" and base.text.endswith(".options"):
        holder = base.base if base.base is not None else Value("name", text=base.text[: -len(".options")], local=True)
        names, complete = layer.evaluator.module_names(file, holder, scope)
        if not names and not (holder.kind == "call" and is_warp(holder.ref, "get_module")):
            return None
        return (next(iter(names)) if complete and len(names) == 1 else None), True
    if base.kind == "name":
        scopes = (scope, "") if scope else ("",)
        for bound in (a for s in scopes for a in layer.bindings.name_assignments(file, s, base.text)):
            found = _options_of(layer, file, bound.value, scope)
            if found is not None:
                return found
    return None


def option_changes_at(layer: Layer, file: FileModel, call: Call, _parent: Site | None = None) -> list[OptionChange]:
    """Option changes a call of a project function makes, directly or through the functions it calls in turn.
    The function is found as Python finds it (a method of an instance made in place or bound to a local:
    ``Runner().run(...)``), and a ``module=`` its body reads from a parameter is the module this call passes
    (``apply(opts, wp.get_module("sim"))``), not every module some call of the helper passes. One summary per
    call and the site its caller runs at (a recursive call adds nothing)."""
    changers = _changers(layer)
    if id(call) not in changers[1]:
        return []
    callee = layer.bindings.callee_of(file, call)
    found = layer.bindings.function(callee)
    if found is None or (found[0].path, found[1].qualname) not in changers[0]:
        return []
    owner, function = found

    def compute() -> list[OptionChange]:
        site = layer.evaluator.enter(file, call.ctx.scope, call, callee, _parent)
        result = [_at_site(layer, owner, c, site) for c in shared_option_changes(owner, layer)
                  if c.ctx.scope == function.qualname]
        for inner in layer.bindings.calls_in(owner, function.qualname):
            if not layer.bindings.is_warp_api(inner.callee):  # Warp's tests and examples are project code
                result.extend(option_changes_at(layer, owner, inner, site))
        return result

    return layer.evaluator.budget.summary(layer.memo, ("option_changes_at", id(call), id(_parent)), compute, [])


@asked_by_key
def option_changes_through_calls(layer: Layer, file: FileModel) -> dict[str, list[tuple[Call, OptionChange]]]:
    """scope -> (call, change) for each option change that a call written in that scope of ``file`` makes through
    project functions (``option_changes_at``), in the order of the calls; the scopes with none left out. Only the
    calls that resolve to a function changing options are asked about (``_changers``): nearly every call of a
    project reaches none."""
    _, changing, scopes = _changers(layer)
    found: dict[str, list[tuple[Call, OptionChange]]] = {}
    for scope in sorted(scope for path, scope in scopes if path == file.path):
        changes = [(call, change) for call in layer.bindings.calls_in(file, scope)
                   if id(call) in changing and not layer.bindings.is_warp_api(call.callee)
                   for change in option_changes_at(layer, file, call)]
        if changes:
            found[scope] = changes
    return found


def changes_of_module(layer: Layer, module: str) -> list[OptionChange]:
    """The changes of shared modules' options written anywhere in the project that may change ``module``'s: those
    naming it (by any of its names) and those whose module is not known; not those in code that cannot run
    (``Bindings.may_run``: a helper of a test file that nothing calls gives no module anything)."""
    def compute() -> dict[str | None, list[OptionChange]]:
        table: dict[str | None, list[OptionChange]] = {}
        for f in layer.bindings.files:
            for change in shared_option_changes(f, layer):
                if not layer.bindings.may_run(f, change.ctx.scope):
                    continue
                named = None if change.module is None else layer.bindings.canonical_module(change.module)
                table.setdefault(named, []).append(change)
        return table

    table = layer.cached("option changes by module", compute)
    return [*table.get(module, ()), *table.get(None, ())]


def _at_site(layer: Layer, file: FileModel, change: OptionChange, site: Site) -> OptionChange:
    """``change`` with the module its ``module=`` names when its function runs at ``site``, where that is one."""
    if change.module_value is None:
        return change
    names, complete = layer.evaluator.module_names(file, change.module_value, change.ctx.scope, site)
    if not complete or len(names) != 1 or change.module in names:
        return change
    return dataclasses.replace(change, module=next(iter(names)))


def _changers(layer: Layer) -> tuple[frozenset[tuple[str, str]], frozenset[int], frozenset[tuple[str, str]]]:
    """(the project functions, as (path, qualname), that change module options directly or through any chain of
    calls; the ids of the project's calls that resolve to one of them, ``Bindings.calls_of``, the inverse of
    ``callee_of``; the (path, scope) each of those calls is written in). Found once, from the few changes upwards
    through the calls of each changer, so that asking about each of the project's calls (WC102 asks about every
    one) resolves no method of a call that reaches none (nearly all) and walks no call tree that changes nothing.
    Functions, not names: a name resolved twice need not land on the same function."""
    def compute() -> tuple[frozenset[tuple[str, str]], frozenset[int], frozenset[tuple[str, str]]]:
        found: set[tuple[str, str]] = set()
        calls: set[int] = set()
        scopes: set[tuple[str, str]] = set()
        pending = [(f, f.functions.get(c.ctx.scope)) for f in layer.bindings.files
                   for c in shared_option_changes(f, layer) if c.ctx.scope]
        while pending:
            file, function = pending.pop()
            if function is None or (file.path, function.qualname) in found:
                continue
            found.add((file.path, function.qualname))
            for f, call in layer.bindings.calls_of(file, function):
                calls.add(id(call))
                scopes.add((f.path, call.ctx.scope))
                if call.ctx.scope:
                    pending.append((f, f.functions.get(call.ctx.scope)))
        return frozenset(found), frozenset(calls), frozenset(scopes)

    return layer.cached("option changers and their calls", compute)

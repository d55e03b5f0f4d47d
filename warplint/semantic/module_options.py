"""Where a file changes Warp module options, and which module each change targets.

Shapes (warp-facts §2, §3): ``wp.set_module_options(opts, module=...)`` (module None ->
the module where the call is *written*), ``wp.get_module(m).options[k] = v``,
``wp.get_module(m).options.update({...})``, and the same through a local bound to
``wp.get_module(m)``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from warplint.diagnostic import Span
from warplint.model import Context, FileModel, Value
from warplint.names import is_warp

if TYPE_CHECKING:
    from .layer import Layer


@dataclass(frozen=True)
class OptionChange:
    module: str | None  # target Warp module; None when it cannot be told statically
    values: dict[str, Any] | None  # literal option values, None when not literal
    span: Span
    ctx: Context
    how: str  # "set_module_options" | "options[...]" | "options.update"
    explicit_module: bool  # module= given (False: the module where the call is written)
    path: str = ""  # the file the change is written in


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
    """Every module option change written in ``file``, in source order (memoised per project)."""
    return layer.cached(("option_changes", id(file)), lambda: _option_changes(layer, file))


def _may_change_options(callee: str) -> bool:
    return callee == "warp.set_module_options" or callee.endswith(".options.update")


def _option_changes(layer: Layer, file: FileModel) -> list[OptionChange]:
    changes: list[OptionChange] = []
    for call in layer.bindings.calls_where(file, _may_change_options):
        if is_warp(call.callee, "set_module_options"):
            target = call.bound("module")
            module = file.module if target is None else module_of(layer, file, target, call.ctx.scope)
            changes.append(
                OptionChange(module, _literal_dict(call.bound("options")), call.span, call.ctx,
                             "set_module_options", target is not None, file.path)
            )
        elif call.callee.endswith(".options.update") and (
            call.callee == "warp.get_module().options.update" or call.callee.count(".") == 2
        ):
            if call.receiver is not None:
                module = module_of(layer, file, call.receiver, call.ctx.scope)
            else:
                holder = Value("name", text=call.callee.split(".")[0], local=True)
                module = module_of(layer, file, holder, call.ctx.scope)
                if module is None:
                    continue
            changes.append(
                OptionChange(module, _literal_dict(call.arg(0)), call.span, call.ctx, "options.update", True, file.path)
            )
    for assignment in file.assignments:
        target = assignment.target
        if target.kind != "subscript" or target.base is None or target.key is None:
            continue
        base = target.base
        if base.kind != "attr" or not base.text.endswith(".options"):
            continue
        holder = base.base if base.base is not None else Value("name", text=base.text[: -len(".options")], local=True)
        module = module_of(layer, file, holder, assignment.ctx.scope)
        if module is None and base.base is None:
            continue
        key = target.key.const if target.key.kind == "const" else None
        values = {key: assignment.value.const} if key is not None and assignment.value.kind == "const" else None
        changes.append(OptionChange(module, values, assignment.span, assignment.ctx, "options[...]", True, file.path))
    return sorted(changes, key=lambda c: c.ctx.order)


def option_changes_by(layer: Layer, fqname: str, _depth: int = 0) -> list[OptionChange]:
    """Option changes a project function makes, directly or through the functions it calls."""
    key = ("option_changes_by", fqname)
    if key in layer.memo:
        return layer.memo[key]
    found = layer.bindings.function(fqname)
    if found is None or (found[0].path, found[1].qualname) not in _option_changers(layer):
        layer.memo[key] = []
        return layer.memo[key]
    layer.memo[key] = []  # cycle guard
    result: list[OptionChange] = []
    if _depth < 8:
        file, function = found
        result = [c for c in option_changes(file, layer) if c.ctx.scope == function.qualname]
        for call in layer.bindings.calls_in(file, function.qualname):
            if not layer.bindings.is_warp_api(call.callee):  # Warp's tests and examples are project code
                result.extend(option_changes_by(layer, layer.bindings.callee_of(file, call), _depth + 1))
    layer.memo[key] = result
    return result


def _option_changers(layer: Layer) -> frozenset[tuple[str, str]]:
    """The project functions (path, qualname) that change module options directly or through any chain of
    calls: found once from the few changes upwards through the calls that resolve to each, so that asking
    about each of the project's calls (WC102 asks about every one) walks no call tree that changes nothing.
    Functions, not names: a name resolved twice need not land on the same function."""
    def compute() -> frozenset[tuple[str, str]]:
        found: set[tuple[str, str]] = set()
        pending = [(f, f.functions.get(c.ctx.scope)) for f in layer.bindings.files for c in option_changes(f, layer)
                   if c.ctx.scope]
        while pending:
            file, function = pending.pop()
            if function is None or (file.path, function.qualname) in found:
                continue
            found.add((file.path, function.qualname))
            pending.extend((f, f.functions.get(call.ctx.scope)) for f, call in layer.bindings.calls_of(file, function)
                           if call.ctx.scope)
        return frozenset(found)

    return layer.cached("option_changers", compute)

"""Where a file changes Warp module options, and which module each change targets.

Shapes (warp-facts §2, §3): ``wp.set_module_options(opts, module=...)`` (module None ->
the module where the call is *written*), ``wp.get_module(m).options[k] = v``,
``wp.get_module(m).options.update({...})``, and the same through a local bound to
``wp.get_module(m)``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .diagnostic import Span
from .model import Context, FileModel, Value
from .names import is_warp


@dataclass(frozen=True)
class OptionChange:
    module: str | None  # target Warp module; None when it cannot be told statically
    values: dict[str, Any] | None  # literal option values, None when not literal
    span: Span
    ctx: Context
    how: str  # "set_module_options" | "options[...]" | "options.update"
    explicit_module: bool  # module= given (False: the module where the call is written)
    path: str = ""  # the file the change is written in


def module_of(file: FileModel, value: Value | None, scope: str = "") -> str | None:
    """The Warp module an expression names: a string, a Python module object,
    ``__name__``, ``wp.get_module("x")``, or a local bound to one of those."""
    if value is None:
        return None
    if value.kind == "const":
        return value.const if isinstance(value.const, str) else None
    if value.kind == "call" and is_warp(value.ref, "get_module") and value.args:
        return module_of(file, value.args[0], scope)
    if value.kind == "name" and value.text == "__name__":
        return file.module
    if value.kind in ("name", "attr") and value.local:
        bound = [
            a for a in file.assignments
            if a.ctx.scope == scope and a.target.kind == "name" and a.target.text == value.text
        ]
        if len(bound) == 1:
            return module_of(file, bound[0].value, scope)
        return None
    if value.kind in ("name", "attr") and value.ref:
        ref = value.ref
        # `import app.kernels as k; module=k` -> "app.kernels"
        for imp in file.imports:
            if imp.alias and (ref == imp.module):
                return ref
            for name, _ in imp.names:
                if ref == f"{imp.module}.{name}":
                    return ref
        if ref.startswith(file.module + "."):
            name = ref[len(file.module) + 1 :]
            if name in file.constants:
                return module_of(file, file.constants[name], "")
    return None


def _literal_dict(value: Value | None) -> dict[str, Any] | None:
    if value is not None and value.kind == "dict" and isinstance(value.const, dict):
        return value.const
    return None


def option_changes(file: FileModel, project=None) -> list[OptionChange]:
    """Every module option change written in ``file``, in source order (memoised per project)."""
    if project is not None:
        key = ("option_changes", id(file))
        if key not in project.memo:
            project.memo[key] = _option_changes(file)
        return project.memo[key]
    return _option_changes(file)


def _option_changes(file: FileModel) -> list[OptionChange]:
    changes: list[OptionChange] = []
    for call in file.calls:
        if is_warp(call.callee, "set_module_options"):
            target = call.bound("module")
            module = file.module if target is None else module_of(file, target, call.ctx.scope)
            changes.append(
                OptionChange(module, _literal_dict(call.bound("options")), call.span, call.ctx,
                             "set_module_options", target is not None, file.path)
            )
        elif call.callee.endswith(".options.update") and (
            call.callee == "warp.get_module().options.update" or call.callee.count(".") == 2
        ):
            if call.receiver is not None:
                module = module_of(file, call.receiver, call.ctx.scope)
            else:
                holder = Value("name", text=call.callee.split(".")[0], local=True)
                module = module_of(file, holder, call.ctx.scope)
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
        module = module_of(file, holder, assignment.ctx.scope)
        if module is None and base.base is None:
            continue
        key = target.key.const if target.key.kind == "const" else None
        values = {key: assignment.value.const} if key is not None and assignment.value.kind == "const" else None
        changes.append(OptionChange(module, values, assignment.span, assignment.ctx, "options[...]", True, file.path))
    return sorted(changes, key=lambda c: c.ctx.order)


def option_changes_by(project, fqname: str, _depth: int = 0) -> list[OptionChange]:
    """Option changes a project function makes, directly or through the functions it calls."""
    key = ("option_changes_by", fqname)
    if key in project.memo:
        return project.memo[key]
    project.memo[key] = []  # cycle guard
    found = project.function(fqname)
    result: list[OptionChange] = []
    if found is not None and _depth < 8:
        file, function = found
        result = [c for c in option_changes(file, project) if c.ctx.scope == function.qualname]
        for call in project.calls_in(file, function.qualname):
            if not call.callee.startswith("warp."):
                result.extend(option_changes_by(project, call.callee, _depth + 1))
    project.memo[key] = result
    return result

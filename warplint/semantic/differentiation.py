"""Project facts about backward (adjoint) code and MathDx tile kernels.

* ``options_off``: the module options set to False, per Warp module (``set_module_options``,
  ``wp.get_module(m).options[...]``/``.update``) and in ``wp.config`` (WC403, WC404, WC405).
* ``kernel_options_off``: the options that are off for the module a given kernel joins.
* ``differentiation_sites``: where the project differentiates at all (``wp.Tape``, adjoint
  launches, ``tape.backward()``, ``warp.autograd``).
* ``mathdx_ops``: the MathDx tile builtins a kernel calls, through the project's ``@wp.func``s.
* ``tile_dtypes``: the dtypes of every tile a kernel creates (or None when one cannot be told).

Every function takes the project first and memoises with ``project.cached``.
"""

from __future__ import annotations

import builtins
from dataclasses import dataclass, field

from warplint.model import Call, FileModel, Function, Kernel, Value
from warplint.names import is_warp

from .collect import config_assignments
from .events import OptionForm
from .launches import IdentityFacts
from .module_options import option_changes, shared_option_changes

_MAX_DEPTH = 8
_PYTHON_BUILTINS = frozenset(n for n in dir(builtins) if not n.startswith("_"))

# Tile dtypes by their last name component (warp.float32, warp.types.float32, numpy.float32, float).
_DTYPE_NAMES = {
    "float": "float32", "float32": "float32", "float16": "float16", "half": "float16", "bfloat16": "bfloat16",
    "float64": "float64", "double": "float64",
}


# ---------------------------------------------------------------------------------------- options off
@dataclass
class OptionsOff:
    """Options set to False somewhere in the project, by where they apply."""

    modules: dict[str, set[str]] = field(default_factory=dict)  # Warp module -> keys (set_module_options & co.)
    config: set[str] = field(default_factory=set)  # wp.config.<key> = False at module level
    config_anywhere: set[str] = field(default_factory=set)  # ... in any scope (an entry point's main())
    unknown_module: set[str] = field(default_factory=set)  # keys set False on a module that cannot be told


def dict_items(facts: IdentityFacts, file: FileModel, value: Value | None, scope: str = "",
               _depth: int = 0) -> tuple | None:
    """The (key, value) items of a dict literal, also through a name bound once to one."""
    if value is None or _depth > 4:
        return None
    if value.kind == "dict":
        return value.items
    if value.kind == "name" and value.local:
        bound = facts.bindings.name_assignments(file, scope, value.text)
        if len(bound) == 1 and not bound[0].augmented:
            return dict_items(facts, file, bound[0].value, scope, _depth + 1)
        return None
    if value.kind in ("name", "attr") and value.ref:
        module, _, name = value.ref.rpartition(".")
        owner = facts.bindings.by_module.get(module)
        if owner is not None and name in owner.constants:
            return dict_items(facts, owner, owner.constants[name], "", _depth + 1)
    return None


def false_keys(facts: IdentityFacts, file: FileModel, items, scope: str) -> set[str]:
    """Keys of dict items whose value resolves to the literal False."""
    off = set()
    for key, value in items or ():
        if key.kind == "const" and isinstance(key.const, str):
            found, const = facts.evaluator.constant(file, value, scope)
            if found and const is False:
                off.add(key.const)
    return off


def options_off(facts: IdentityFacts) -> OptionsOff:
    """Module options set to False per Warp module, and wp.config options set to False."""
    return facts.cached(("semantic.differentiation", "options_off"), lambda: _options_off(facts))


def _options_off(facts: IdentityFacts) -> OptionsOff:
    result = OptionsOff()
    for f in facts.bindings.files:
        changes = option_changes(f, facts)
        for change in changes:
            if change.form is not OptionForm.SET_MODULE_OPTIONS:
                continue
            scope = change.ctx.scope
            off = false_keys(facts, f, dict_items(facts, f, change.options, scope), scope)
            if not off:
                continue
            target = change.module_value
            if (
                target is None
                or (target.kind == "const" and target.const is None)
                or (target.kind == "name" and target.text == "__name__")
            ):
                result.modules.setdefault(f.module, set()).update(off)
            else:
                found, name = facts.evaluator.constant(f, target, scope)
                if found and isinstance(name, str):
                    result.modules.setdefault(name, set()).update(off)
                elif target.ref:
                    result.modules.setdefault(target.ref, set()).update(off)
                else:
                    result.unknown_module |= off
        # wp.get_module(m).options[k] = False and .options.update({...}) (set_module_options is done above)
        for change in changes:
            if change.form not in (OptionForm.UPDATE, OptionForm.ITEM) or not change.values:
                continue
            off = {k for k, v in change.values.items() if isinstance(k, str) and v is False}
            if not off:
                continue
            if change.module is None:
                result.unknown_module |= off
            else:
                result.modules.setdefault(change.module, set()).update(off)
    for assignment in config_assignments(facts):
        found, value = facts.evaluator.constant(assignment.file, assignment.value, assignment.ctx.scope)
        if found and value is False:
            result.config_anywhere.add(assignment.name)
            if assignment.ctx.scope == "":
                result.config.add(assignment.name)
    return result


def kernel_options_off(facts: IdentityFacts, file: FileModel, kernel: Kernel, anywhere: bool = True) -> set[str] | None:
    """Options that are False for the module ``kernel`` joins; None when its module cannot be told.

    A ``module="unique"`` kernel has its ``module_options`` and the ``wp.config`` values (it does
    not inherit its file's set_module_options); any other kernel has its module's options and
    ``wp.config``. ``anywhere``: count ``wp.config.x = False`` in any scope (else module level only).
    """
    off = options_off(facts)
    config = off.config_anywhere if anywhere else off.config
    if kernel.is_unique:
        items = dict_items(facts, file, kernel.options.get("module_options"), kernel.ctx.scope)
        return set(config) | false_keys(facts, file, items, kernel.ctx.scope)
    module = facts.kernel_module(file, kernel)
    if module is None:
        return None
    canonical = facts.bindings.canonical_module(module)
    return set(config) | off.modules.get(canonical, set()) | off.modules.get(module, set())


def kernel_options_given(facts: IdentityFacts, file: FileModel, kernel: Kernel) -> set[str]:
    """Option keys the project sets explicitly (to any value) for the module ``kernel`` joins: a unique
    kernel's ``module_options``, set_module_options / ``wp.get_module(m).options`` for its module,
    and ``wp.config.<key> = ...`` anywhere."""
    given = {assignment.name for assignment in config_assignments(facts)}
    if kernel.is_unique:
        items = dict_items(facts, file, kernel.options.get("module_options"), kernel.ctx.scope) or ()
        return given | {k.const for k, _ in items if k.kind == "const" and isinstance(k.const, str)}
    module = facts.kernel_module(file, kernel)
    canonical = facts.bindings.canonical_module
    for f in facts.bindings.files:
        for change in shared_option_changes(f, facts):
            if change.module is not None and module is not None and (
                change.module == module or canonical(change.module) == canonical(module)
            ):
                given |= set(change.values or ())
    return given


# ---------------------------------------------------------------------------------------- differentiation
def differentiation_sites(facts: IdentityFacts) -> list[tuple[FileModel, Call]]:
    """Calls that show the project differentiates: ``wp.Tape(...)``, a launch whose ``adjoint`` is not
    the literal False, ``<...tape...>.backward(...)``, and ``warp.autograd.*`` (gradcheck, jacobian)."""
    return facts.cached(("semantic.differentiation", "sites"), lambda: _differentiation_sites(facts))


def _differentiation_sites(facts: IdentityFacts) -> list[tuple[FileModel, Call]]:
    sites = []
    for f in facts.bindings.files:
        for call in f.calls:
            callee = call.callee
            if is_warp(callee) and (callee.rpartition(".")[2] == "Tape" or callee.startswith("warp.autograd.")):
                sites.append((f, call))
            elif is_warp(callee, "launch", "launch_tiled"):
                adjoint = call.bound("adjoint")
                if adjoint is not None:
                    found, value = facts.evaluator.constant(f, adjoint, call.ctx.scope)
                    if not (found and value is False):
                        sites.append((f, call))
            elif callee.endswith(".backward") and "tape" in callee.rpartition(".")[0].rpartition(".")[2].lower():
                sites.append((f, call))
    return sites


# ---------------------------------------------------------------------------------------- tile kernels
def _kernel_function(file: FileModel, kernel: Kernel) -> Function | None:
    fn = file.functions.get(kernel.function) if kernel.function else None
    return fn if fn is not None and fn.is_warp else None


def _helpers(facts: IdentityFacts, fn: Function) -> list[tuple[FileModel, Function] | None]:
    """The project functions a Warp body calls (None for a callee that cannot be found: it may be a
    ``@wp.func`` of another package or a closure)."""
    found: list[tuple[FileModel, Function] | None] = []
    for callee in sorted(fn.warp_calls):
        if is_warp(callee) or callee in _PYTHON_BUILTINS:
            continue
        target = facts.bindings.function(callee)
        if target is not None:
            if target[1].is_warp:
                found.append(target)
            continue
        module, _, name = callee.rpartition(".")
        owner = facts.bindings.by_module.get(module)
        if owner is not None and name in owner.toplevel:
            continue  # a struct, a class or a constant of a project module: no tile comes from it
        found.append(None)
    return found


def mathdx_ops(facts: IdentityFacts, file: FileModel, kernel: Kernel) -> frozenset[str]:
    """The MathDx tile builtins (those that build an LTO in the project's Warp: ``project.warp.mathdx_lto_ops``,
    without ``warp.``) a kernel calls, in its body
    or through the project's ``@wp.func``s (transitively)."""
    fn = _kernel_function(file, kernel)
    calls = fn.warp_calls if fn is not None else kernel.warp_calls
    lto_ops = facts.bindings.warp.mathdx_lto_ops
    ops = {c[len("warp."):] for c in calls if is_warp(c) and c[len("warp."):] in lto_ops}
    if fn is not None:
        for helper in _helpers(facts, fn):
            if helper is not None:
                ops |= _function_mathdx_ops(facts, *helper)
    return frozenset(ops)


def _function_mathdx_ops(facts: IdentityFacts, file: FileModel, fn: Function, _depth: int = 0) -> frozenset[str]:
    key = ("semantic.differentiation", "mathdx_ops", file.module, fn.qualname)
    if key in facts.memo:
        return facts.memo[key]
    facts.memo[key] = frozenset()  # cycle guard
    lto_ops = facts.bindings.warp.mathdx_lto_ops
    ops = {c[len("warp."):] for c in fn.warp_calls if is_warp(c) and c[len("warp."):] in lto_ops}
    if _depth < _MAX_DEPTH:
        for helper in _helpers(facts, fn):
            if helper is not None:
                ops |= _function_mathdx_ops(facts, *helper, _depth=_depth + 1)
    facts.memo[key] = frozenset(ops)
    return facts.memo[key]


def normalise_dtype(facts: IdentityFacts, dotted: str, _depth: int = 0) -> str:
    """``warp.float32``/``float``/``numpy.float32`` -> ``float32``, through module-level aliases
    (``DTYPE = wp.float16``); "" when it cannot be told; other Warp types by their last name."""
    if not dotted or _depth > 4:
        return ""
    head, _, name = dotted.rpartition(".")
    if not head or head == "builtins" or is_warp(dotted) or head in ("numpy", "np"):
        return _DTYPE_NAMES.get(name, name if is_warp(dotted) else "")
    owner = facts.bindings.by_module.get(head)
    if owner is not None and name in owner.constants:
        value = owner.constants[name]
        if value.kind in ("name", "attr") and value.ref and not value.local:
            return normalise_dtype(facts, value.ref, _depth + 1)
    return ""


def tile_dtypes(facts: IdentityFacts, file: FileModel, kernel: Kernel) -> frozenset[str] | None:
    """The dtypes (``float32``, ``float16``, ...) of every tile the kernel creates, in its body and its
    project ``@wp.func``s (transitively, with their tile parameters); None when any of them cannot
    be told (a ``wp.tile(x)``, ``tile_map``, a closure dtype, a helper outside the project)."""
    fn = _kernel_function(file, kernel)
    if fn is None:
        return None
    return _function_tile_dtypes(facts, file, fn, kernel=True)


def _function_tile_dtypes(facts: IdentityFacts, file: FileModel, fn: Function, kernel: bool = False,
                          _depth: int = 0) -> frozenset[str] | None:
    key = ("semantic.differentiation", "tile_dtypes", file.module, fn.qualname, kernel)
    if key in facts.memo:
        return facts.memo[key]
    facts.memo[key] = frozenset()  # cycle guard (recursion is not allowed in Warp code anyway)
    result: set[str] | None = {normalise_dtype(facts, d) for d in fn.tile_dtypes}
    if not kernel and result is not None:
        # a helper's tile parameters are tiles its callers made; an unannotated one is any tile
        for p in fn.params:
            kind, dtype = fn.param_dtypes.get(p.name, ("", ""))
            if kind == "tile":
                result.add(normalise_dtype(facts, dtype))
            elif not p.annotation or p.generic:
                result.add("")
    if _depth >= _MAX_DEPTH:
        result = None
    else:
        for helper in _helpers(facts, fn):
            sub = None if helper is None else _function_tile_dtypes(facts, *helper, _depth=_depth + 1)
            if sub is None or result is None:
                result = None
                break
            result |= sub
    if result is not None and "" in result:
        result = None
    facts.memo[key] = None if result is None else frozenset(result)
    return facts.memo[key]


def matmul_precisions(facts: IdentityFacts, file: FileModel, kernel: Kernel) -> frozenset[str]:
    """The precision= values of the kernel's tile_matmul calls (its body and project helpers)."""
    fn = _kernel_function(file, kernel)
    if fn is None:
        return frozenset()
    seen: set[tuple[str, str]] = set()
    found: set[str] = set()
    stack = [(file, fn, 0)]
    while stack:
        f, current, depth = stack.pop()
        if (f.module, current.qualname) in seen:
            continue
        seen.add((f.module, current.qualname))
        found.update(current.matmul_precisions)
        if depth < _MAX_DEPTH:
            stack.extend((hf, hfn, depth + 1) for h in _helpers(facts, current) if h is not None for hf, hfn in [h])
    return frozenset(found)

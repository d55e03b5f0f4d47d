"""Project facts about backward (adjoint) code and MathDx tile kernels.

* ``options_off``: the module options set to False, per Warp module (``set_module_options``,
  ``wp.get_module(m).options[...]``/``.update``) and in ``wp.config`` (WC403, WC404, WC405).
* ``kernel_options_off``: the options that are off for the module a given kernel joins.
* ``differentiation_reach``: which kernels the project's differentiations reach (adjoint launches, tapes,
  ``warp.autograd``), ``backward_reached`` per module, and ``unused_backward``: the launched modules that
  build backward code nothing differentiates (WC404, WC406).
* ``mathdx_ops``: the MathDx tile builtins a kernel calls, through the project's ``@wp.func``s.
* ``tile_dtypes``: the dtypes of every tile a kernel creates (or None when one cannot be told).

Every function takes the project first and memoises with ``project.cached``.
"""

from __future__ import annotations

import builtins
import os
from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import cast

from warplint.diagnostic import Span
from warplint.model import Call, FileModel, Function, Kernel, Value, stored_without
from warplint.names import is_warp

from .collect import config_assignments
from .context import CodeContext
from .events import OptionForm
from .launches import UNIQUE, IdentityFacts
from .layer import asked_by_key
from .module_options import option_changes, shared_option_changes

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


def dict_items(facts: IdentityFacts, file: FileModel, value: Value | None, scope: str = "") -> tuple | None:
    """The (key, value) items of a dict literal, also through a name bound once to one."""
    if value is None:
        return None
    return facts.evaluator.budget.step(lambda: _dict_items(facts, file, value, scope), None)


def _dict_items(facts: IdentityFacts, file: FileModel, value: Value, scope: str) -> tuple | None:
    if value.kind == "dict":
        return value.items
    if value.kind == "name" and value.local:
        bound = facts.bindings.name_assignments(file, scope, value.text)
        if len(bound) == 1 and not bound[0].augmented:
            return dict_items(facts, file, bound[0].value, scope)
        return None
    if value.kind in ("name", "attr") and value.ref:
        module, _, name = value.ref.rpartition(".")
        owner = facts.bindings.file_of_module(module)
        if owner is not None and name in owner.constants:
            return dict_items(facts, owner, owner.constants[name], "")
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


@asked_by_key
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
        owner = facts.bindings.file_of_module(module)
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


def _function_mathdx_ops(facts: IdentityFacts, file: FileModel, fn: Function) -> frozenset[str]:
    """The MathDx LTO operations ``fn`` and the helpers it calls (transitively) use: one summary per function."""
    key = ("semantic.differentiation", "mathdx_ops", file.module, fn.qualname)

    def compute() -> frozenset[str]:
        lto_ops = facts.bindings.warp.mathdx_lto_ops
        ops = {c[len("warp."):] for c in fn.warp_calls if is_warp(c) and c[len("warp."):] in lto_ops}
        for helper in _helpers(facts, fn):
            if helper is not None:
                ops |= _function_mathdx_ops(facts, *helper)
        return frozenset(ops)

    return facts.evaluator.budget.summary(facts.memo, key, compute, frozenset())


def normalise_dtype(facts: IdentityFacts, dotted: str) -> str:
    """``warp.float32``/``float``/``numpy.float32`` -> ``float32``, through module-level aliases
    (``DTYPE = wp.float16``); "" when it cannot be told; other Warp types by their last name."""
    if not dotted:
        return ""
    return facts.evaluator.budget.step(lambda: _normalised_dtype(facts, dotted), "")


def _normalised_dtype(facts: IdentityFacts, dotted: str) -> str:
    head, _, name = dotted.rpartition(".")
    if not head or head == "builtins" or is_warp(dotted) or head in ("numpy", "np"):
        return _DTYPE_NAMES.get(name, name if is_warp(dotted) else "")
    owner = facts.bindings.file_of_module(head)
    if owner is not None and name in owner.constants:
        value = owner.constants[name]
        if value.kind in ("name", "attr") and value.ref and not value.local:
            return normalise_dtype(facts, value.ref)
    return ""


def tile_dtypes(facts: IdentityFacts, file: FileModel, kernel: Kernel) -> frozenset[str] | None:
    """The dtypes (``float32``, ``float16``, ...) of every tile the kernel creates, in its body and its
    project ``@wp.func``s (transitively, with their tile parameters); None when any of them cannot
    be told (a ``wp.tile(x)``, ``tile_map``, a closure dtype, a helper outside the project)."""
    fn = _kernel_function(file, kernel)
    if fn is None:
        return None
    return _function_tile_dtypes(facts, file, fn, kernel=True)


def _function_tile_dtypes(facts: IdentityFacts, file: FileModel, fn: Function, kernel: bool = False
                          ) -> frozenset[str] | None:
    """One summary per function (a cycle adds nothing: recursion is not allowed in Warp code anyway; a walk the
    budget cuts cannot tell)."""
    key = ("semantic.differentiation", "tile_dtypes", file.module, fn.qualname, kernel)
    no_dtypes: frozenset[str] | None = frozenset()
    return facts.evaluator.budget.summary(facts.memo, key, lambda: _tile_dtypes_of(facts, fn, kernel), no_dtypes,
                                          spent=None)


def _tile_dtypes_of(facts: IdentityFacts, fn: Function, kernel: bool) -> frozenset[str] | None:
    result: set[str] | None = {normalise_dtype(facts, d) for d in fn.tile_dtypes}
    if not kernel and result is not None:
        # a helper's tile parameters are tiles its callers made; an unannotated one is any tile
        for p in fn.params:
            kind, dtype = fn.param_dtypes.get(p.name, ("", ""))
            if kind == "tile":
                result.add(normalise_dtype(facts, dtype))
            elif not p.annotation or p.generic:
                result.add("")
    for helper in _helpers(facts, fn):
        sub = None if helper is None else _function_tile_dtypes(facts, *helper)
        if sub is None or result is None:
            result = None
            break
        result |= sub
    if result is not None and "" in result:
        result = None
    return None if result is None else frozenset(result)


def matmul_precisions(facts: IdentityFacts, file: FileModel, kernel: Kernel) -> frozenset[str]:
    """The precision= values of the kernel's tile_matmul calls (its body and project helpers)."""
    fn = _kernel_function(file, kernel)
    if fn is None:
        return frozenset()
    return _function_matmul_precisions(facts, file, fn)


def _function_matmul_precisions(facts: IdentityFacts, file: FileModel, fn: Function) -> frozenset[str]:
    """The precisions of ``fn`` and the helpers it calls (transitively): one summary per function."""
    key = ("semantic.differentiation", "matmul_precisions", file.module, fn.qualname)

    def compute() -> frozenset[str]:
        found = set(fn.matmul_precisions)
        for helper in _helpers(facts, fn):
            if helper is not None:
                found |= _function_matmul_precisions(facts, *helper)
        return frozenset(found)

    return facts.evaluator.budget.summary(facts.memo, key, compute, frozenset())


# ---------------------------------------------------------------------------------------- differentiation reach
# Which kernels can a differentiation reach? A Tape records the launches made while it is active and
# ``tape.backward()`` replays their adjoints; an adjoint launch runs one kernel's adjoint; ``warp.autograd``
# differentiates the kernels it is given. The layer answers per kernel, erring towards "reached": a kernel is
# reported as never differentiated only when every differentiation in the project is bounded and misses it.


@dataclass(frozen=True)
class Launched:
    """The kernels a piece of code launches, directly or through the project functions it calls.
    ``unbounded``: it also calls code the layer cannot follow (a callback, a method of an object of
    unknown class), which may launch anything its program imported."""

    kernels: frozenset[int] = frozenset()  # id() of each Kernel
    unbounded: bool = False

    def __or__(self, other: Launched) -> Launched:
        return Launched(self.kernels | other.kernels, self.unbounded or other.unbounded)


@dataclass
class Reach:
    """What the project's differentiations reach: kernels (by id) and the sites reaching each; files whose
    every kernel counts as reached (an unbounded site's program imports them)."""

    kernels: dict[int, list[tuple[FileModel, Call]]] = field(default_factory=dict)
    files: dict[str, list[tuple[FileModel, Call]]] = field(default_factory=dict)  # path -> sites

    def sites(self, file: FileModel, kernel: Kernel) -> list[tuple[FileModel, Call]]:
        return self.kernels.get(id(kernel), []) + self.files.get(file.path, [])


def _is_tape(value: Value | None) -> bool:
    return value is not None and value.kind == "call" and _is_tape_callee(value.ref or "")


def _tape_method(facts: IdentityFacts, file: FileModel, call: Call) -> bool:
    """``tape.backward()`` / ``self.tape.zero()``: a method of a name or attribute bound to ``wp.Tape()``."""
    receiver = facts.bindings.callee_of(file, call).rpartition(".")[0]
    if not receiver:
        return False
    if "." not in receiver:
        bound = facts.bindings.name_assignments(file, call.ctx.scope, receiver)
        return bool(bound) and all(_is_tape(a.value) for a in bound)
    bound_attrs = facts.bindings.attribute_assignments(receiver)
    return bool(bound_attrs) and all(_is_tape(a.value) for _, a in bound_attrs)


def _followable(facts: IdentityFacts, file: FileModel, call: Call) -> str | None:
    """The project function a call runs ("" for code that launches no project kernel: Warp's API other
    than a launch, another package), or None when the layer cannot tell what it runs."""
    if facts.bindings.is_warp_api(call.callee) or is_warp(call.callee):
        return ""
    callee = facts.bindings.callee_of(file, call)
    if facts.bindings.function(callee) is not None:
        return callee
    if facts.bindings.is_class(callee):
        init = f"{facts.bindings.canonical_ref(callee)}.__init__"
        return init if facts.bindings.function(init) is not None else ""
    if _tape_method(facts, file, call):
        return ""
    if "." in callee and facts.bindings.owner_of(callee) is None and callee.partition(".")[0] not in (
            fn.locals if (fn := file.functions.get(call.ctx.scope)) is not None else ()):
        return ""  # a function of another package (numpy.zeros, torch.tensor)
    return None  # a parameter, a method of an object of unknown class, an attribute nobody defines


def launched_by(facts: IdentityFacts, file: FileModel, scope: str) -> Launched:
    """The kernels the code of ``scope`` (a function's qualname, "" for module level) launches, directly or
    through the project functions it calls; memoised per scope."""
    key = ("semantic.differentiation", "launched", file.path, scope)
    # a recursive call adds nothing new; a walk the budget cuts may launch anything
    return facts.evaluator.budget.summary(facts.memo, key, lambda: _launched_by(facts, file, scope), Launched(),
                                          spent=Launched(unbounded=True))


def _launched_by(facts: IdentityFacts, file: FileModel, scope: str) -> Launched:
    kernels: set[int] = set()
    unbounded = False
    for call in facts.bindings.calls_in(file, scope):
        if is_warp(call.callee, "launch", "launch_tiled"):
            found = facts.find_kernels(file, scope, call.bound("kernel"))
            kernels.update(id(k) for _, k in found)
            unbounded |= not found
            continue
        target = _followable(facts, file, call)
        if target is None:
            unbounded = True
        elif target:
            found_fn = facts.bindings.function(target)
            if found_fn is None:
                unbounded = True
                continue
            sub = launched_by(facts, found_fn[0], found_fn[1].qualname)
            kernels |= sub.kernels
            unbounded |= sub.unbounded
    return Launched(frozenset(kernels), unbounded)


def _tape_names(facts: IdentityFacts) -> frozenset[str]:
    """The last part of every name or attribute the project binds a ``wp.Tape()`` to (``tape``, ``self.tape``): the
    receivers a tape method can be called on (``_tape_method`` asks what each one is bound to). One question of the
    binder, asked in one memo entry: each file's differentiations read it, and an edit asks it again once."""
    return facts.cached(("semantic.differentiation", "tape names"),
                        lambda: facts.bindings.names_bound_to_calls(_is_tape_callee))


def _is_tape_callee(callee: str) -> bool:
    return callee.endswith(".Tape") and callee.startswith("warp.")


_LAUNCHES = frozenset(("warp.launch", "warp.launch_tiled"))
# a kernel wrapped for JAX with `enable_backward=True`: JAX's autodiff (`jax.grad`, `jax.vjp`) launches its adjoint
# (Warp 1.19, `warp._src.jax.ffi.jax_kernel`); without it the wrapper is forward only
_JAX_KERNEL = "warp.jax_kernel"


def _gradient_scopes(facts: IdentityFacts, file: FileModel) -> frozenset[str]:
    """The scopes of ``file`` that make Warp arrays to carry gradients: a call of Warp's API with ``requires_grad=``
    anything but the constant False (``wp.empty(shape, requires_grad=self.requires_grad)``), or an assignment of
    anything but False to an array's ``requires_grad``."""
    def compute() -> frozenset[str]:
        found: set[str] = set()
        for call in facts.bindings.calls_where(file, is_warp):
            if stored_without(call, "requires_grad"):
                continue  # told from the cached bytes: most of a file's Warp calls pass no such keyword
            flag = call.kwargs.get("requires_grad")
            if flag is not None and not _false(facts, file, flag, call.ctx.scope):
                found.add(call.ctx.scope)
        for assignment in file.assignments:
            target = assignment.target
            if (target.kind == "attr" and target.text.rpartition(".")[2] == "requires_grad"
                    and not _false(facts, file, assignment.value, assignment.ctx.scope)):
                found.add(assignment.ctx.scope)
        return frozenset(found)

    return facts.cached(("semantic.differentiation", "gradient scopes", file.path), compute)


def _false(facts: IdentityFacts, file: FileModel, value: Value, scope: str) -> bool:
    return facts.evaluator.constant(file, value, scope) == (True, False)


def _makes_gradients(file: FileModel, scope: str, gradients: frozenset[str]) -> bool:
    """``scope`` makes arrays to carry gradients, or is a method of a class one of whose methods does (an object that
    keeps such arrays launches with them from its other methods)."""
    if scope in gradients:
        return True
    fn = file.functions.get(scope)
    owner = fn.class_name if fn is not None else None
    return owner is not None and any(
        (g := file.functions.get(q)) is not None and g.class_name == owner for q in gradients)


def _launched_with_gradients(facts: IdentityFacts, file: FileModel, call: Call) -> bool:
    """An array the launch passes is made, wherever its value comes from (a caller's argument included), by a call of
    Warp's API with ``requires_grad=`` anything but the constant False."""
    arguments = [v for key in ("inputs", "outputs") if (listed := call.bound(key)) is not None
                 for v in (listed.items if listed.kind == "seq" else (listed,)) if isinstance(v, Value)]
    for argument in arguments:
        for source in facts.evaluator.sources(file, argument, call.ctx.scope):
            value = source.value
            flag = value.kwargs.get("requires_grad") if value.kind == "call" else None
            if flag is not None and is_warp(value.ref or "") and not source.attrs and not _false(
                    facts, source.file, flag, source.scope):
                return True
    return False


def _kept_in_its_function(facts: IdentityFacts, file: FileModel, call: Call) -> bool:
    """A ``wp.Tape()`` bound to one local name of a plain function that the function neither returns, yields,
    passes to a call, stores anywhere nor leaves to a nested function: it records only while that function runs
    (its callers' other launches happen before or after), so what its callers launch is not recorded."""
    fn = file.functions.get(call.ctx.scope)
    if fn is None or fn.first_yield:
        return False
    if is_warp(call.callee):  # the construction: `tape = wp.Tape()`
        if len(call.assigned_to) != 1:
            return False
        name = call.assigned_to[0]
    else:  # a method of the tape: `tape.backward()`, its receiver a local name bound to wp.Tape() (_tape_method)
        name = facts.bindings.callee_of(file, call).rpartition(".")[0]
        if not name or "." in name:
            return False
    if any(_mentions(v, name) for v in fn.returns):
        return False
    if any(q.startswith(f"{fn.qualname}.") and name in nested.loaded for q, nested in file.functions.items()):
        return False
    for other in facts.bindings.calls_in(file, fn.qualname):
        if other is not call and any(_mentions(v, name) for v in (*other.args, *other.kwargs.values(),
                                                                   *other.unpacked)):
            return False
    assigned = facts.bindings.name_assignments(file, fn.qualname, name)
    if len(assigned) != 1:
        return False  # rebound (another tape, or something else under its name)
    return not any(_mentions(a.value, name) for a in facts.bindings.assignments_in(file, fn.qualname))


def _mentions(value: Value | None, name: str) -> bool:
    """Whether the expression ``value`` reads the local ``name`` (anywhere in it)."""
    stack = [value]
    while stack:
        v = stack.pop()
        if not isinstance(v, Value):
            continue
        if v.kind == "name" and v.local and v.text == name:
            return True
        stack.extend((*v.args, *v.kwargs.values(), v.base, v.key, *v.unpacked))
        stack.extend(x for item in v.items for x in (item if isinstance(item, tuple) else (item,)))
    return False


def _tape_scopes(file: FileModel, scope: str) -> list[str]:
    """The scopes a tape made in ``scope`` can record: the whole file for a module-level tape, else the
    outermost function around ``scope`` with every function nested in it, and every method of its class."""
    if not scope:
        return ["", *file.functions]
    fn = file.functions.get(scope)
    while fn is not None and fn.ctx.scope and fn.class_name is None:
        fn = file.functions.get(fn.ctx.scope)
    if fn is None:
        return [scope]
    if fn.class_name is not None:
        prefix = f"{fn.class_name}."
    else:
        prefix = f"{fn.qualname}."
    return [fn.qualname, *(q for q in file.functions if q.startswith(prefix))]


def _reachable_by_callbacks(facts: IdentityFacts, program: list[FileModel]) -> frozenset[str]:
    """The files whose code an unfollowable call in one of ``program``'s files can run: what those import, and the
    files that define a subclass of a class of those (an override the library calls through its base class)."""
    def compute() -> frozenset[str]:
        imported = {g.path: g for f in program for g in facts.bindings.imported_files(f)}
        found = set(imported)
        for g in imported.values():
            found |= _subclass_files(facts, g)
        return frozenset(found)

    return facts.cached(("semantic.differentiation", "callback reach", frozenset(f.path for f in program)), compute)


def _subclass_files(facts: IdentityFacts, file: FileModel) -> frozenset[str]:
    """The files that define a subclass of one of ``file``'s classes."""
    def compute() -> frozenset[str]:
        found: set[str] = set()
        for qualname in file.classes:
            for sub in facts.bindings.subclasses(facts.bindings.fqname(file, qualname)):
                owner = facts.bindings.owner_of(sub)
                if owner is not None:
                    found.add(owner.path)
        return frozenset(found)

    return facts.cached(("semantic.differentiation", "subclass files", file.path), compute)


def differentiation_reach(facts: IdentityFacts) -> Reach:
    """What every differentiation of the project reaches (``Reach``)."""
    return facts.cached(("semantic.differentiation", "reach"), lambda: _differentiation_reach(facts))


def _differentiation_reach(facts: IdentityFacts) -> Reach:
    reach = Reach()
    by_path = {f.path: f for f in facts.bindings.files}
    for f in facts.bindings.files:
        for call, launched, program in differentiations(facts, f):
            site = (f, call)
            for kernel in launched.kernels:
                reach.kernels.setdefault(kernel, []).append(site)
            if launched.unbounded:
                # code the layer cannot follow (a callback, a method of an object of unknown class) may run any code
                # its program imports, and the methods of any class that derives from one of the program's classes,
                # wherever it is defined: an application hands a library its own objects (an objective, a model)
                for path in _reachable_by_callbacks(facts, [by_path[p] for p in program]):
                    reach.files.setdefault(path, []).append(site)
    return reach


def _candidate_calls(facts: IdentityFacts, file: FileModel, tape_names: frozenset[str]) -> list[Call]:
    """The calls of ``file`` that may differentiate (the branches of ``_differentiations_in``): a launch that passes
    ``adjoint=``, a warp.autograd call, a tape made, or a method called on a name a tape is bound to. Each callee is
    tested once: most of a project's calls are none of them."""
    jax_aliases = {name for _, name in facts.bindings.warp_aliases(file, _JAX_KERNEL)}

    def may_differentiate(callee: str) -> bool:
        if callee.rpartition(".")[0].rpartition(".")[2] in tape_names or callee in jax_aliases:
            return True
        return callee.startswith("warp.") and (callee in _LAUNCHES or callee.startswith("warp.autograd.")
                                               or _is_tape_callee(callee) or callee == _JAX_KERNEL)

    return [call for call in facts.bindings.calls_where(file, may_differentiate)
            if call.callee not in _LAUNCHES or call.bound("adjoint") is not None]


def _jax_kernel_call(facts: IdentityFacts, file: FileModel, call: Call) -> bool:
    """``call`` calls ``wp.jax_kernel``: by that name, or through a plain name bound to it in the calling function
    or at module level."""
    if call.callee == _JAX_KERNEL:
        return True
    return "." not in call.callee and any(
        name == call.callee and scope in (call.ctx.scope, "")
        for scope, name in facts.bindings.warp_aliases(file, _JAX_KERNEL))


Differentiation = tuple[Call, Launched, tuple[str, ...]]  # the site, what it reaches, its program's files (paths)


def differentiations(facts: IdentityFacts, file: FileModel) -> tuple[Differentiation, ...]:
    """The differentiations written in ``file``: an adjoint launch, a ``warp.autograd`` call, a tape made or a
    tape's method called, each with the kernels it reaches and the files whose code it runs (kept across an edit
    while what it read holds: each file's walk through the functions its tapes call is most of the reach)."""
    return facts.kept("differentiations", file,
                      lambda layer: _differentiations_in(cast("IdentityFacts", layer), file))


def _differentiations_in(facts: IdentityFacts, f: FileModel) -> tuple[Differentiation, ...]:
    tape_names = _tape_names(facts)
    found: list[Differentiation] = []
    for call in _candidate_calls(facts, f, tape_names):
        if call.callee in _LAUNCHES:
            known, value = facts.evaluator.constant(f, call.bound("adjoint"), call.ctx.scope)
            if known and value is False:
                continue
            kernels = facts.find_kernels(f, call.ctx.scope, call.bound("kernel"))
            found.append((call, Launched(frozenset(id(k) for _, k in kernels), not kernels), (f.path,)))
        elif _jax_kernel_call(facts, f, call):
            # `wp.jax_kernel(k, enable_backward=True)`: JAX differentiates through `k`'s adjoint; the wrapper's
            # own default (False) builds none
            enabled = call.kwargs.get("enable_backward")
            known, value = (True, False) if enabled is None else facts.evaluator.constant(f, enabled, call.ctx.scope)
            if known and not value:
                continue
            kernel_arg = call.args[0] if call.args else call.kwargs.get("kernel")
            kernels = facts.find_kernels(f, call.ctx.scope, kernel_arg)
            found.append((call, Launched(frozenset(id(k) for _, k in kernels), not kernels), (f.path,)))
        elif call.callee.startswith("warp.autograd."):
            # gradcheck / jacobian(kernel, ...): the kernels it is given, or anything when none can be told
            kernels = [k for arg in (*call.args, *call.kwargs.values())
                       for k in facts.find_kernels(f, call.ctx.scope, arg)]
            found.append((call, Launched(frozenset(id(k) for _, k in kernels), not kernels), (f.path,)))
        elif _is_tape_callee(call.callee) or (
                call.callee.rpartition(".")[0].rpartition(".")[2] in tape_names and _tape_method(facts, f, call)):
            # A tape records what runs while it is active: in its function and what that calls, in the
            # methods of its class (a tape kept on ``self``), in its whole file when it is a module-level
            # tape, and in the callers of its function (a tape returned or passed on).
            launched = Launched()
            for scope in _tape_scopes(f, call.ctx.scope):
                launched |= launched_by(facts, f, scope)
            program = [f.path]
            if call.ctx.scope and not _kept_in_its_function(facts, f, call):
                for caller_file, caller, _ in facts.caller_scopes(facts.bindings.fqname(f, call.ctx.scope)):
                    launched |= launched_by(facts, caller_file, caller.ctx.scope)
                    program.append(caller_file.path)
            found.append((call, launched, tuple(program)))
    return tuple(found)


def backward_reached(facts: IdentityFacts, file: FileModel, kernel: Kernel) -> list[tuple[FileModel, Call]]:
    """The differentiations that reach the module ``kernel`` joins (any of its kernels: the module option decides
    whether the module builds backward); every site when the module cannot be told."""
    module = facts.kernel_module(file, kernel)
    if module is None:  # (every site of the project: an answer as large as the project, so read so)
        reach = differentiation_reach(facts)
        return [site for sites in (*reach.kernels.values(), *reach.files.values()) for site in sites]
    if module == UNIQUE:
        return _reaching_members(facts, [(file, kernel)], (file.path, id(kernel)))
    return list(_module_reached(facts, module))


@asked_by_key
def _module_reached(facts: IdentityFacts, module: str) -> tuple[tuple[FileModel, Call], ...]:
    """``backward_reached`` for a kernel of the named ``module``: of any of its kernels."""
    return tuple(_reaching_members(facts, facts.kernels_of_module(module), module))


def _reaching_members(facts: IdentityFacts, members: list[tuple[FileModel, Kernel]], key: Hashable
                      ) -> list[tuple[FileModel, Call]]:
    reach = differentiation_reach(facts)
    sites = [site for f, k in members for site in reach.sites(f, k)]
    if sites:
        return sites
    return facts.cached(("semantic.differentiation", "gradient launches", key),
                        lambda: _gradient_launches(facts, members))


def _gradient_launches(facts: IdentityFacts, members: list[tuple[FileModel, Kernel]]) -> list[tuple[FileModel, Call]]:
    """The first launch of one of ``members`` whose arrays are made to carry gradients: code that makes them (or an
    object that keeps them) launches kernels for whoever records a tape (a training library's layer, taped by its
    users around its forward pass). Asked only of modules nothing else differentiates. Only a launch in library
    code counts: a program's own code (a script, an example, a test) is run by that program, whose tapes the reach
    has followed, not called under a tape of its users (an example's arrays carry gradients when its model does)."""
    for f, k in members:
        for site in facts.kernel_launches(f, k):
            launch_file, call = site
            if facts.bindings.context_of(launch_file, call.ctx.scope) is not CodeContext.LIBRARY:
                continue
            if (_makes_gradients(launch_file, call.ctx.scope, _gradient_scopes(facts, launch_file))
                    or _launched_with_gradients(facts, launch_file, call)):
                return [site]
    return []


@dataclass(frozen=True)
class UnusedBackward:
    """A Warp module built with backward (adjoint) code that no differentiation in the project reaches, and
    that the project launches (forward only)."""

    module: str  # the Warp module's name ("unique": a module="unique" kernel's own module)
    file: FileModel  # where the user edits: the option forcing backward on, else the module's first kernel
    span: Span
    scope: str
    kernels: tuple[tuple[FileModel, Kernel], ...]  # the kernels that get adjoint code
    launches: tuple[tuple[FileModel, Call], ...]  # their launches, none of them differentiated
    forced: tuple[tuple[FileModel, Span, str], ...]  # where enable_backward is set True (file, span, how)
    backward_lto_ops: frozenset[str]  # MathDx ops of its kernels that link adjoint LTOs (CUDA): the costly case

    @property
    def forced_here(self) -> str | None:
        """How backward is forced on at the anchor itself (None: the anchor is the module's first kernel)."""
        return next((how for f, span, how in self.forced if f.path == self.file.path and span == self.span), None)

    @property
    def kernel_forces_it(self) -> bool:
        """The anchor is a kernel whose own ``enable_backward=True`` builds its adjoint."""
        return self.forced_here == OWN_OPTION


def unused_backward(facts: IdentityFacts) -> list[UnusedBackward]:
    """Every launched module that builds backward code nothing differentiates (``UnusedBackward``), in file order."""
    return facts.cached(("semantic.differentiation", "unused backward"), lambda: _unused_backward(facts))


def _kernel_builds_adjoint(facts: IdentityFacts, file: FileModel, kernel: Kernel, module_off: bool) -> bool:
    """Whether the kernel's adjoint is generated: its own ``enable_backward=`` overrides its module's option for
    it (``self.options | kernel.options`` when Warp builds the kernel), so a constant True builds it even in a
    module with backward off, and False never; a value the layer cannot tell is not counted. With no option of
    its own it follows its module (``module_off``: the module, or the program's ``wp.config``, turns it off)."""
    own = _own_backward(facts, file, kernel)
    return not module_off if own is None else own is True


def _own_backward(facts: IdentityFacts, file: FileModel, kernel: Kernel) -> bool | str | None:
    """The kernel's own ``enable_backward=``: True or False when the layer tells the constant, "unknown" when it
    cannot, None when the kernel has none (it follows its module)."""
    own = kernel.options.get("enable_backward")
    if own is None:
        return None
    found, value = facts.evaluator.constant(file, own, kernel.ctx.scope)
    return value if found and isinstance(value, bool) else "unknown"


OWN_OPTION = "the kernel's own `enable_backward=True`"


def _forced_on(facts: IdentityFacts, module: str, members: list[tuple[FileModel, Kernel]]
               ) -> list[tuple[FileModel, Span, str]]:
    """Where the project sets enable_backward True for ``module``: its module options, a unique kernel's
    ``module_options``, ``wp.config.enable_backward = True``."""
    forced: list[tuple[FileModel, Span, str]] = []
    # a kernel's own option builds its adjoint, whatever its module says
    forced += [(f, k.span, OWN_OPTION) for f, k in members if _own_backward(facts, f, k) is True]
    if module == UNIQUE:
        for f, k in members:
            items = dict_items(facts, f, k.options.get("module_options"), k.ctx.scope) or ()
            for key, value in items:
                found, const = facts.evaluator.constant(f, value, k.ctx.scope)
                if key.kind == "const" and key.const == "enable_backward" and found and const is True:
                    forced.append((f, k.span, "module_options="))
    else:
        forced += _module_options_forcing(facts).get(facts.bindings.canonical_module(module), [])
    forcing = [a for a in config_assignments(facts, "enable_backward")
               if facts.evaluator.constant(a.file, a.value, a.ctx.scope) == (True, True)]
    if forcing:
        together = facts.bindings.run_together(frozenset(f.path for f, _ in members))
        forced += [(a.file, a.span, "wp.config") for a in forcing if a.file.path in together]
    return forced


def _module_options_forcing(facts: IdentityFacts) -> dict[str, list[tuple[FileModel, Span, str]]]:
    """canonical module name -> where the project's option changes set its ``enable_backward`` True, once per
    project."""
    def compute() -> dict[str, list[tuple[FileModel, Span, str]]]:
        found: dict[str, list[tuple[FileModel, Span, str]]] = {}
        for f in facts.bindings.files:
            for change in shared_option_changes(f, facts):
                if change.module is not None and (change.values or {}).get("enable_backward") is True:
                    found.setdefault(facts.bindings.canonical_module(change.module), []).append(
                        (f, change.span, change.form.value))
        return found

    return facts.cached(("semantic.differentiation", "options forcing backward"), compute)


def _module_options_off(facts: IdentityFacts, file: FileModel, kernel: Kernel) -> set[str] | None:
    """``kernel_options_off`` without ``wp.config``: the options its module itself turns off."""
    if kernel.is_unique:
        items = dict_items(facts, file, kernel.options.get("module_options"), kernel.ctx.scope)
        return false_keys(facts, file, items, kernel.ctx.scope)
    module = facts.kernel_module(file, kernel)
    if module is None:
        return None
    modules = options_off(facts).modules
    return modules.get(facts.bindings.canonical_module(module), set()) | modules.get(module, set())


def _config_backward_off(facts: IdentityFacts) -> frozenset[str]:
    """The files whose modules a ``wp.config.enable_backward = False`` may reach: those run together with the
    assignment's file (in any scope, before or after the import: WC401 tells those apart)."""
    def compute() -> frozenset[str]:
        setters = {a.file.path for a in config_assignments(facts, "enable_backward")
                   if facts.evaluator.constant(a.file, a.value, a.ctx.scope) == (True, False)}
        return facts.bindings.run_together(frozenset(setters)) if setters else frozenset()

    return facts.cached(("semantic.differentiation", "config backward off"), compute)


def _unused_backward(facts: IdentityFacts) -> list[UnusedBackward]:
    groups: dict[tuple, list[tuple[FileModel, Kernel]]] = {}
    for f in facts.bindings.files:
        for k in f.kernels:
            module = facts.kernel_module(f, k)
            if module is None:
                continue  # the module cannot be told: neither its options nor its peers are known
            key = (module, f.path, id(k)) if module == UNIQUE else (module,)
            groups.setdefault(key, []).append((f, k))
    lto_ops = facts.bindings.warp.mathdx_backward_lto_ops
    switches = facts.bindings.warp.mathdx_options
    found: list[UnusedBackward] = []
    for key, members in groups.items():
        module = key[0]
        first_file, first_kernel = members[0]
        # wp.config.enable_backward = False counts where its program can reach the module; module options anywhere
        off = _module_options_off(facts, first_file, first_kernel)
        if off is None:
            continue
        module_off = "enable_backward" in off or any(f.path in _config_backward_off(facts) for f, _ in members)
        building = [(f, k) for f, k in members if _kernel_builds_adjoint(facts, f, k, module_off)]
        if not building:
            continue
        launches = [site for f, k in building for site in facts.kernel_launches(f, k)]
        if not launches:
            continue  # nothing launches it here: its users (and their tapes) are elsewhere
        if backward_reached(facts, first_file, first_kernel):
            continue
        switched_off = kernel_options_off(facts, first_file, first_kernel) or set()
        ops = frozenset(op for f, k in building for op in mathdx_ops(facts, f, k)
                        if op in lto_ops and switches.get(op) not in switched_off)
        forced = _forced_on(facts, module, members)
        module_forced = [x for x in forced if x[2] != "wp.config"]
        if module_forced:  # the first in the project's file order (by absolute path: front ends agree)
            anchor_file, anchor_span, _ = min(module_forced, key=lambda x: (os.path.abspath(x[0].path), x[1].line,
                                                                            x[1].col))
            scope = ""
        else:
            # by absolute path: a file named on the command line has a relative one, its project's others not
            anchor_file, anchor_kernel = min(building, key=lambda m: (m[0].module != module,
                                                                     os.path.abspath(m[0].path), m[1].ctx.order))
            anchor_span, scope = anchor_kernel.span, anchor_kernel.ctx.scope
        found.append(UnusedBackward(module, anchor_file, anchor_span, scope, tuple(building),
                                    tuple(launches), tuple(forced), ops))
    return sorted(found, key=lambda u: (os.path.abspath(u.file.path), u.span.line))

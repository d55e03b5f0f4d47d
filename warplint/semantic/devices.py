"""Which devices a launch (or a load) can run on, and the block sizes it uses on CUDA (``builds`` turns
them into the module variants launches and preloads build).

CUDA-only effects (a module built once per ``block_dim``, the driver's JIT cache, MathDx LTO links)
cost nothing where every launch that reaches the code runs on the CPU. The devices a launch can use:

- its ``device=`` argument, followed like any value (parameters bound at the call of a wrapper, or
  at every call site): ``"cpu"`` is the CPU, ``"cuda"``/``"cuda:N"`` CUDA; anything else may be either;
- with no ``device=`` (or ``device=None``), the current default device: the innermost enclosing
  ``with wp.ScopedDevice(d):`` of the launch's function, else the last unconditional
  ``wp.set_device(d)`` before it in that function, else, for a launch in a function, what the
  function's callers run under (every call site, however many calls out); with none of these it is Warp's
  default device, CUDA when there is one;
- a launch under ``if device.is_cpu:`` (or ``else`` of ``if x.is_cuda:``) runs on the CPU only.
  Device tests are read from the test's expression (``Context.tests``): ``x.is_cuda``/``x.is_cpu``
  (``wp.get_device(d).is_cuda`` too), ``"cuda" in device``, ``"cuda" in str(device)``, ``device ==
  "cpu"``, ``str(device).startswith("cuda")``, and ``not``/``and``/``or`` of them.

The block size a launch uses on CUDA leaves out what only the CPU takes: the CPU branch of
``256 if device.is_cuda else 1``, bindings of the ``block_dim`` name made under a CPU-only test, and
bindings a later one always replaces on CUDA before the launch (``bs = 1`` then ``bs = 128`` under
``if d.is_cuda and c:``, with the launch under ``if c:``).
"""

from __future__ import annotations

import enum
from typing import TYPE_CHECKING

from warplint.model import Assignment, Call, Context, FileModel, Value
from warplint.names import is_warp

from .values import Const, Sequence, Unknown, ValueSet, Varies

if TYPE_CHECKING:
    from .evaluator import Site
    from .layer import Layer


class Device(enum.Enum):
    CPU = "cpu"
    CUDA = "cuda"


EITHER = frozenset({Device.CPU, Device.CUDA})
CPU_ONLY = frozenset({Device.CPU})
CUDA_ONLY = frozenset({Device.CUDA})

def holds_on(test: Value, negated: bool = False) -> frozenset[Device] | None:
    """The devices on which a condition (an ``if``/``while`` test, read from its expression) holds, when it
    is a device test: ``x.is_cuda``, ``wp.get_device(d).is_cuda``, ``"cuda" in device``, ``"cuda" in
    str(device)``, ``device == "cpu"``, ``str(device).startswith("cuda")``, ``device in ("cuda", "cuda:0")``,
    and ``not``/``and``/``or`` of those (an ``and`` holds where its device tests do, whatever else it tests).
    None when it tests something else."""
    if test.kind == "not" and test.base is not None:
        return holds_on(test.base, not negated)
    if test.kind == "boolop":
        parts = [holds_on(item, negated) for item in test.items if isinstance(item, Value)]
        if (test.text == "and") != negated:  # a conjunction (also `not (a or b)`)
            known = [p for p in parts if p is not None]
            found = EITHER
            for p in known:
                found &= p
            return found if known and found else None
        if not parts or any(p is None for p in parts):
            return None
        return frozenset().union(*parts)  # type: ignore[arg-type]
    holds = _device_test(test)
    if holds is None:
        return None
    return (EITHER - holds) if negated else holds


def _device_test(test: Value) -> frozenset[Device] | None:
    """What one test (no ``not``/``and``/``or``) says about the device when it is true."""
    if test.kind == "attr":
        attribute = test.text.rpartition(".")[2]
        return CUDA_ONLY if attribute == "is_cuda" else CPU_ONLY if attribute == "is_cpu" else None
    if test.kind == "call":  # x.startswith("cuda") / str(d).startswith("cpu")
        if test.text.removesuffix("(...)").rpartition(".")[2] == "startswith" and len(test.args) == 1:
            return _named_device(test.args[0])
        return None
    if test.kind != "compare" or len(test.items) != 2:
        return None
    left, right = test.items
    operator = test.text
    if operator in ("==", "!=", "is", "is not"):
        named = _named_device(right) or _named_device(left)
        if named is None:
            return None
        if operator in ("==", "is"):
            return named
        return CUDA_ONLY if named == CPU_ONLY else None  # `!= "cuda"` also holds for "cuda:1"
    if operator in ("in", "not in"):
        named = _named_device(left)  # "cuda" in str(device): the name holds a device's name
        if named is None and right.is_const and isinstance(right.const, tuple) and right.const:
            names = [_named_device(Value("const", const=item)) for item in right.const]
            named = names[0] if all(n is not None and n == names[0] for n in names) else None
        if named is None:
            return None
        return named if operator == "in" else EITHER - named
    return None


def _named_device(value: Value) -> frozenset[Device] | None:
    """The device kind a string literal names (``"cpu"``, ``"cuda"``, ``"cuda:1"``); None otherwise."""
    if value.kind != "const" or not isinstance(value.const, str):
        return None
    kind, _, ordinal = value.const.strip().lower().partition(":")
    if ordinal and not ordinal.isdigit():
        return None
    return CPU_ONLY if kind == "cpu" else CUDA_ONLY if kind == "cuda" else None


def condition_devices(ctx: Context) -> frozenset[Device]:
    """The devices the enclosing device tests of a statement leave possible."""
    found = EITHER
    for test in ctx.tests:
        holds = holds_on(test)
        if holds is not None:
            found = found & holds
    return found or EITHER  # contradictory tests: not followed


def _const_devices(value: object) -> frozenset[Device] | None:
    """Devices a literal names (None for ``None``: the default device)."""
    if isinstance(value, str):
        name = value.strip().lower()
        if name == "cpu" or name.startswith("cpu:"):
            return CPU_ONLY
        if name.startswith("cuda"):
            return CUDA_ONLY
        return EITHER
    if isinstance(value, (list, tuple)):
        found: frozenset[Device] = frozenset()
        for item in value:
            found |= _const_devices(item) or EITHER
        return found or EITHER
    return None if value is None else EITHER


def value_devices(layer: Layer, file: FileModel, value: Value, ctx: Context, site: Site | None
                  ) -> frozenset[Device]:
    """The devices a ``device=`` expression can name (None: the default device where ``ctx`` runs)."""
    found: frozenset[Device] = frozenset()
    for v in layer.evaluator.values(file, value, ctx.scope, site):
        if isinstance(v, Const):
            named = _const_devices(v.value)
            found |= named if named is not None else default_devices(layer, file, ctx)
        elif isinstance(v, Sequence):
            for item in v.items:
                for one in item:
                    named = _const_devices(one.value) if isinstance(one, Const) else EITHER
                    found |= named if named is not None else EITHER
        else:
            found |= EITHER
        if found == EITHER:
            break
    return found or EITHER


def default_devices(layer: Layer, file: FileModel, ctx: Context) -> frozenset[Device]:
    """The devices Warp's current default device can be where ``ctx`` runs: set in its scope, else where each
    call of its function runs, however many calls out (a summary per statement; a recursive call may run on
    either)."""
    key = ("default devices", id(file), ctx.scope, ctx.order)
    return layer.evaluator.budget.summary(layer.memo, key, lambda: _default_devices(layer, file, ctx), EITHER)


def _default_devices(layer: Layer, file: FileModel, ctx: Context) -> frozenset[Device]:
    blocks = sorted((b for b in file.with_blocks if b.holds(ctx)), key=lambda b: -b.ctx.order)
    for block in blocks:  # innermost first
        for item in block.items:
            if item.kind == "call" and is_warp(item.ref, "ScopedDevice"):
                device = item.args[0] if item.args else item.kwargs.get("device")
                if device is not None and layer.evaluator.constant(file, device, block.ctx.scope) != (True, None):
                    return value_devices(layer, file, device, block.ctx, None)
    for call in reversed(layer.bindings.calls_in(file, ctx.scope)):
        if (is_warp(call.callee, "set_device") and call.ctx.precedes(ctx) and not call.ctx.conditions
                and call.args):
            return value_devices(layer, file, call.args[0], call.ctx, None)
    if ctx.scope:
        fn = file.functions.get(ctx.scope)
        sites = layer.bindings.call_sites(layer.bindings.fqname(file, fn.qualname)) if fn is not None else []
        if sites:
            found: frozenset[Device] = frozenset()
            for caller_file, call in sites:
                found |= condition_devices(call.ctx) & default_devices(layer, caller_file, call.ctx)
                if found == EITHER:
                    break
            return found or EITHER
    return EITHER


def call_devices(layer: Layer, file: FileModel, call: Call, site: Site | None = None,
                 absent_means_all: bool = False) -> frozenset[Device]:
    """The devices a ``wp.launch``/``load_module``/``force_load`` call can run on (``force_load``
    without a device loads on every device: ``absent_means_all``)."""
    device = call.bound("device")
    if device is None or (device.kind == "const" and device.const is None):
        found = EITHER if absent_means_all else default_devices(layer, file, call.ctx)
    else:
        found = value_devices(layer, file, device, call.ctx, site)
    return (found & condition_devices(call.ctx)) or found


# ---------------------------------------------------------------------------------------------- block sizes
def cuda_block_dims(layer: Layer, file: FileModel, call: Call, site: Site | None) -> ValueSet:
    """The block sizes a launch uses on CUDA (256 when absent): ``Evaluator.block_dims`` without what
    only the CPU takes."""
    value = call.bound("block_dim")
    evaluator = layer.evaluator
    if value is None:
        return evaluator.block_dims(file, None, call.ctx.scope, site)
    narrowed = _on_cuda(layer, file, value, call.ctx)
    if narrowed is None:
        found = evaluator.block_dims(file, value, call.ctx.scope, site)
    else:
        found = ValueSet.union(evaluator.block_dims(f, v, scope, site if f is file and scope == call.ctx.scope
                                                    else None) for f, v, scope in narrowed)
    # A size the project's callers never pass (an argument from outside it: `def op(x, n): ...
    # block_dim=n`) is chosen at run time: one more variant per value, as `x.shape[1]` is.
    if any(isinstance(v, Unknown) and v.external for v in found):
        found = ValueSet(frozenset(Varies(f"{v.reason}: chosen by a caller outside the project")
                                   if isinstance(v, Unknown) and v.external else v for v in found))
    return found


def _on_cuda(layer: Layer, file: FileModel, value: Value, at: Context) -> list[tuple[FileModel, Value, str]] | None:
    """What ``value`` (read at ``at``) can be on CUDA, as expressions (file, value, scope) to evaluate, when
    that leaves something out: the CPU branch of ``a if <device test> else b``, followed through the
    bindings of a local or a module-level name (also imported); None when nothing is left out (or the
    question's budget is spent)."""
    return layer.evaluator.budget.step(lambda: _narrowed_on_cuda(layer, file, value, at), None)


def _narrowed_on_cuda(layer: Layer, file: FileModel, value: Value, at: Context
                      ) -> list[tuple[FileModel, Value, str]] | None:
    chosen = _cuda_branch(value)
    if chosen is not value:
        return _on_cuda(layer, file, chosen, at) or [(file, chosen, at.scope)]
    if value.kind != "name":
        return None
    if value.local:
        if "." in value.text or _is_parameter(file, at.scope, value.text):
            return None
        owner, scope, bindings = file, at.scope, layer.bindings.name_assignments(file, at.scope, value.text)
    elif value.ref:
        ref = layer.bindings.canonical_ref(value.ref)
        found = layer.bindings.owner_of(ref)
        if found is None or "." in ref[len(found.module) + 1:]:
            return None
        name = ref[len(found.module) + 1:]
        if layer.bindings.global_assignments(found, name):
            return None  # a setter's `global` rebinds it at run time: not followed
        owner, scope, bindings = found, "", layer.bindings.name_assignments(found, "", name)
    else:
        return None
    if not bindings or any(a.augmented for a in bindings):
        return None
    kept = [a for a in bindings if Device.CUDA in condition_devices(a.ctx)
            and not (scope == at.scope and owner is file and _rebound_on_cuda(a, bindings, at))]
    if not kept:
        return None  # contradictory: not followed
    result: list[tuple[FileModel, Value, str]] = []
    changed = len(kept) < len(bindings)
    for a in kept:
        inner = _on_cuda(layer, owner, a.value, a.ctx)
        changed = changed or inner is not None
        result.extend(inner if inner is not None else [(owner, a.value, scope)])
    return result if changed else None


def _rebound_on_cuda(binding: Assignment, bindings: tuple[Assignment, ...], at: Context) -> bool:
    """Whether on CUDA a later binding always replaces ``binding`` before ``at``: one whose tests are
    device tests that hold on CUDA or tests ``at`` is under too (``bs = 1``, then ``bs = 128`` under
    ``if d.is_cuda and blocks is None:``, and the launch under ``if blocks is None:``)."""
    known = _conjuncts(at.tests)
    for later in bindings:
        ctx = later.ctx
        if not (binding.ctx.order < ctx.order and ctx.runs_before(at.order)):
            continue
        if (ctx.in_loop and not at.in_loop) or (ctx.in_handler and not at.in_handler) or (
                ctx.try_index is not None and ctx.try_index != at.try_index) or ctx.in_finally != at.in_finally:
            continue  # may not run (a loop of no iteration, an exception)
        if all(t in known or holds_on(t) == CUDA_ONLY for t in _conjuncts(ctx.tests)):
            return True
    return False


def _conjuncts(tests: tuple[Value, ...]) -> list[Value]:
    """The tests that all hold: each ``and`` split into its operands."""
    found: list[Value] = []
    for test in tests:
        if test.kind == "boolop" and test.text == "and":
            found.extend(_conjuncts(tuple(t for t in test.items if isinstance(t, Value))))
        else:
            found.append(test)
    return found


def _is_parameter(file: FileModel, scope: str, name: str) -> bool:
    fn = file.functions.get(scope)
    return fn is not None and any(p.name == name for p in fn.params)


def _cuda_branch(value: Value) -> Value:
    """``a if x.is_cuda else b`` -> ``a`` (and ``b`` for a CPU test); any other value unchanged."""
    if value.kind != "ifexp" or value.base is None or len(value.items) != 2:
        return value
    holds = holds_on(value.base)
    if holds == CUDA_ONLY:
        return value.items[0]
    if holds == CPU_ONLY:
        return value.items[1]
    return value

"""Which devices a launch (or a load) can run on, and the block sizes it uses on CUDA.

CUDA-only effects (a module built once per ``block_dim``, the driver's JIT cache, MathDx LTO links)
cost nothing where every launch that reaches the code runs on the CPU. The devices a launch can use:

- its ``device=`` argument, followed like any value (parameters bound at the call of a wrapper, or
  at every call site): ``"cpu"`` is the CPU, ``"cuda"``/``"cuda:N"`` CUDA; anything else may be either;
- with no ``device=`` (or ``device=None``), the current default device: the innermost enclosing
  ``with wp.ScopedDevice(d):`` of the launch's function, else the last unconditional
  ``wp.set_device(d)`` before it in that function, else, for a launch in a function, what the
  function's callers run under (every call site, a few levels up); with none of these it is Warp's
  default device, CUDA when there is one;
- a launch under ``if device.is_cpu:`` (or ``else`` of ``if x.is_cuda:``) runs on the CPU only.

The block size a launch uses on CUDA leaves out what only the CPU takes: the CPU branch of
``256 if device.is_cuda else 1``, and bindings of the ``block_dim`` name made under a CPU-only test.
"""

from __future__ import annotations

import enum
import re
from typing import TYPE_CHECKING

from warplint.model import Call, Context, FileModel, Value
from warplint.names import is_warp

from .values import Const, Sequence, ValueSet

if TYPE_CHECKING:
    from warplint.index import Launch, Project

    from .evaluator import Site


class Device(enum.Enum):
    CPU = "cpu"
    CUDA = "cuda"


EITHER = frozenset({Device.CPU, Device.CUDA})
CPU_ONLY = frozenset({Device.CPU})
CUDA_ONLY = frozenset({Device.CUDA})
MAX_CALLER_LEVELS = 3

# Device tests: what must hold for the test to be true (``x.is_cuda``, ``device == "cpu"``, ...).
_DEVICE_TESTS = (
    (re.compile(r"\.is_cuda$"), "cuda"),
    (re.compile(r"\.is_cpu$"), "cpu"),
    (re.compile(r"""==\s*["']cpu["']$"""), "cpu"),
    (re.compile(r"""!=\s*["']cpu["']$"""), "cuda"),
    (re.compile(r"""\.startswith\(\s*["']cuda["']\s*\)$"""), "cuda"),
    (re.compile(r"""\.startswith\(\s*["']cpu["']\s*\)$"""), "cpu"),
)


def _test_device(test: str) -> frozenset[Device] | None:
    """The devices on which a condition (an ``if``/``while`` test or ``not (...)`` of one) holds,
    when it is a device test: ``x.is_cuda`` -> CUDA; ``not (x.is_cuda)`` -> CPU; None when it tests
    something else."""
    text = test.strip()
    negated = False
    while text.startswith(("not ", "not(")):
        negated = not negated
        text = text[3:].strip()
        if text.startswith("(") and text.endswith(")"):
            text = text[1:-1].strip()
    if " and " in text or " or " in text:
        return None
    for pattern, device in _DEVICE_TESTS:
        if pattern.search(text):
            holds = CUDA_ONLY if device == "cuda" else CPU_ONLY
            return (EITHER - holds) if negated else holds
    return None


def condition_devices(ctx: Context) -> frozenset[Device]:
    """The devices the enclosing device tests of a statement leave possible."""
    found = EITHER
    for condition in ctx.conditions:
        holds = _test_device(condition)
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


def value_devices(project: Project, file: FileModel, value: Value, ctx: Context, site: Site | None,
                  depth: int = 0) -> frozenset[Device]:
    """The devices a ``device=`` expression can name (None: the default device where ``ctx`` runs)."""
    found: frozenset[Device] = frozenset()
    for v in project.evaluator.values(file, value, ctx.scope, site):
        if isinstance(v, Const):
            named = _const_devices(v.value)
            found |= named if named is not None else default_devices(project, file, ctx, depth)
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


def default_devices(project: Project, file: FileModel, ctx: Context, depth: int = 0) -> frozenset[Device]:
    """The devices Warp's current default device can be where ``ctx`` runs."""
    key = ("default devices", id(file), ctx.scope, ctx.order, depth)
    return project.cached(key, lambda: _default_devices(project, file, ctx, depth))


def _default_devices(project: Project, file: FileModel, ctx: Context, depth: int) -> frozenset[Device]:
    blocks = sorted((b for b in file.with_blocks if b.holds(ctx)), key=lambda b: -b.ctx.order)
    for block in blocks:  # innermost first
        for item in block.items:
            if item.kind == "call" and is_warp(item.ref, "ScopedDevice"):
                device = item.args[0] if item.args else item.kwargs.get("device")
                if device is not None and project.constant(file, device, block.ctx.scope) != (True, None):
                    return value_devices(project, file, device, block.ctx, None, depth + 1)
    for call in reversed(project.calls_in(file, ctx.scope)):
        if (is_warp(call.callee, "set_device") and call.ctx.runs_before(ctx.order) and not call.ctx.conditions
                and call.args):
            return value_devices(project, file, call.args[0], call.ctx, None, depth + 1)
    if ctx.scope and depth < MAX_CALLER_LEVELS:
        fn = file.functions.get(ctx.scope)
        sites = project.call_sites(project.fqname(file, fn.qualname)) if fn is not None else []
        if sites:
            found: frozenset[Device] = frozenset()
            for caller_file, call in sites:
                found |= condition_devices(call.ctx) & default_devices(project, caller_file, call.ctx, depth + 1)
                if found == EITHER:
                    break
            return found or EITHER
    return EITHER


def call_devices(project: Project, file: FileModel, call: Call, site: Site | None = None,
                 absent_means_all: bool = False) -> frozenset[Device]:
    """The devices a ``wp.launch``/``load_module``/``force_load`` call can run on (``force_load``
    without a device loads on every device: ``absent_means_all``)."""
    device = call.bound("device")
    if device is None or (device.kind == "const" and device.const is None):
        found = EITHER if absent_means_all else default_devices(project, file, call.ctx)
    else:
        found = value_devices(project, file, device, call.ctx, site)
    return (found & condition_devices(call.ctx)) or found


def launch_devices(project: Project, launch: Launch) -> frozenset[Device]:
    return project.cached(("launch devices", id(launch.call), id(launch.site)),
                          lambda: call_devices(project, launch.file, launch.call, launch.site))


def can_run_on_cuda(project: Project, launch: Launch) -> bool:
    return Device.CUDA in launch_devices(project, launch)


# ---------------------------------------------------------------------------------------------- block sizes
def cuda_block_dims(project: Project, file: FileModel, call: Call, site: Site | None) -> ValueSet:
    """The block sizes a launch uses on CUDA (256 when absent): ``Evaluator.block_dims`` without what
    only the CPU takes."""
    value = call.bound("block_dim")
    evaluator = project.evaluator
    if value is None:
        return evaluator.block_dims(file, None, call.ctx.scope, site)
    chosen = _cuda_branch(value)
    if chosen is not value:
        return evaluator.block_dims(file, chosen, call.ctx.scope, site)
    if value.kind == "name" and value.local and "." not in value.text:
        bindings = project.name_assignments(file, call.ctx.scope, value.text)
        if bindings and not any(a.augmented for a in bindings) and not _is_parameter(file, call.ctx.scope,
                                                                                      value.text):
            on_cuda = [a for a in bindings if Device.CUDA in condition_devices(a.ctx)]
            narrowed = [_cuda_branch(a.value) for a in on_cuda]
            if on_cuda and (len(on_cuda) < len(bindings) or any(n is not a.value for n, a in zip(
                    narrowed, on_cuda, strict=True))):
                return ValueSet.union(evaluator.block_dims(file, n, call.ctx.scope, site) for n in narrowed)
    return evaluator.block_dims(file, value, call.ctx.scope, site)


def _is_parameter(file: FileModel, scope: str, name: str) -> bool:
    fn = file.functions.get(scope)
    return fn is not None and any(p.name == name for p in fn.params)


def _cuda_branch(value: Value) -> Value:
    """``a if x.is_cuda else b`` -> ``a`` (and ``b`` for a CPU test); any other value unchanged."""
    if value.kind != "ifexp" or value.base is None or len(value.items) != 2:
        return value
    holds = _test_device(value.base.text)
    if holds == CUDA_ONLY:
        return value.items[0]
    if holds == CPU_ONLY:
        return value.items[1]
    return value

def project_may_use_cuda(project: Project) -> bool:
    """Whether some launch or load of the project can run on CUDA (True when it has none: its Warp work
    happens elsewhere, on devices not known here)."""
    def compute() -> bool:
        launches = project.all_launches()
        loads = [(f, c) for f in project.files for c in project.warp_calls(f, "load_module", "force_load")]
        if not launches and not loads:
            return True
        return (any(can_run_on_cuda(project, launch) for launch in launches)
                or any(Device.CUDA in call_devices(project, f, c, None, is_warp(c.callee, "force_load"))
                       for f, c in loads))

    return bool(project.cached("project may use cuda", compute))


# ---------------------------------------------------------------------------------------------- variants
# A module variant: the device kind and the block size it is built for (1 on the CPU, which ignores block_dim).
Variant = tuple[Device, int]


def _variants(found: frozenset[Device], block_dims: ValueSet) -> frozenset[Variant] | None:
    variants: set[Variant] = set()
    for device in found:
        if device is Device.CPU:
            variants.add((Device.CPU, 1))
            continue
        for value in block_dims:
            if not (isinstance(value, Const) and isinstance(value.value, int)):
                return None
            variants.add((Device.CUDA, value.value))
    return frozenset(variants)


def launch_variants(project: Project, launch: Launch) -> frozenset[Variant] | None:
    """The module variants a launch loads; None when its block size on CUDA is not known statically."""
    return _variants(launch_devices(project, launch), launch.block_dims)


def load_variants(project: Project, file: FileModel, call: Call) -> frozenset[Variant] | None:
    """The module variants a ``load_module``/``force_load`` builds (without ``block_dim``: the module's
    default 256 on CUDA, 1 on the CPU); None when not known statically."""
    found = call_devices(project, file, call, None, is_warp(call.callee, "force_load"))
    block_dim = call.bound("block_dim")
    if block_dim is None or (block_dim.kind == "const" and block_dim.const is None):
        sizes = project.evaluator.block_dims(file, None, call.ctx.scope)
    else:
        sizes = project.evaluator.block_dims(file, block_dim, call.ctx.scope)
    return _variants(found, sizes)


def module_launch_variants(project: Project, module: str) -> frozenset[Variant] | None:
    """Every variant the project's launches of ``module`` use; None when one of them is not known."""
    def compute() -> frozenset[Variant] | None:
        found: set[Variant] = set()
        for launch in project.all_launches():
            if launch.module != module:
                continue
            variants = launch_variants(project, launch)
            if variants is None:
                return None
            found |= variants
        return frozenset(found)

    return project.cached(("module launch variants", module), compute)


def preload_unused(project: Project, file: FileModel, call: Call, module: str) -> bool:
    """A preload of ``module`` built only variants no launch of it uses (a tiled module preloaded at 256 and
    launched at 64 and 128): a kernel joining after it joins no variant that was built."""
    if not is_warp(call.callee, "load_module", "force_load"):
        return False
    loaded = load_variants(project, file, call)
    used = module_launch_variants(project, module)
    return loaded is not None and used is not None and bool(used) and not (loaded & used)

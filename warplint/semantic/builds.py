"""The module builds launches and preloads ask for: each a device kind and, on CUDA, a block size.

A launch's variants (``Variant``: the device kind and the block size it is built for) come from the
devices it can run on and its CUDA block sizes (``devices``); a preload's from its own arguments. A
preload that builds only variants no launch of its module uses is a build the launches do again.
"""

from __future__ import annotations

from warplint.model import Call, FileModel
from warplint.names import is_warp

from .devices import Device, call_devices
from .events import Launch
from .launches import IdentityFacts
from .values import Const, ValueSet


def launch_devices(facts: IdentityFacts, launch: Launch) -> frozenset[Device]:
    return facts.cached(("launch devices", id(launch.call), id(launch.site)),
                          lambda: call_devices(facts, launch.file, launch.call, launch.site))


def can_run_on_cuda(facts: IdentityFacts, launch: Launch) -> bool:
    return Device.CUDA in launch_devices(facts, launch)


def project_may_use_cuda(facts: IdentityFacts) -> bool:
    """Whether some launch or load of the project can run on CUDA (True when it has none: its Warp work
    happens elsewhere, on devices not known here)."""
    def compute() -> bool:
        launches = facts.all_launches()
        bindings = facts.bindings
        loads = [(f, c) for f in bindings.files for c in bindings.warp_calls(f, "load_module", "force_load")]
        if not launches and not loads:
            return True
        return (any(can_run_on_cuda(facts, launch) for launch in launches)
                or any(Device.CUDA in call_devices(facts, f, c, None, is_warp(c.callee, "force_load"))
                       for f, c in loads))

    return bool(facts.cached("project may use cuda", compute))


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


def launch_variants(facts: IdentityFacts, launch: Launch) -> frozenset[Variant] | None:
    """The module variants a launch loads; None when its block size on CUDA is not known statically."""
    return _variants(launch_devices(facts, launch), launch.block_dims)


def load_variants(facts: IdentityFacts, file: FileModel, call: Call) -> frozenset[Variant] | None:
    """The module variants a ``load_module``/``force_load`` builds (without ``block_dim``: the module's
    default 256 on CUDA, 1 on the CPU); None when not known statically."""
    found = call_devices(facts, file, call, None, is_warp(call.callee, "force_load"))
    block_dim = call.bound("block_dim")
    if block_dim is None or (block_dim.kind == "const" and block_dim.const is None):
        sizes = facts.evaluator.block_dims(file, None, call.ctx.scope)
    else:
        sizes = facts.evaluator.block_dims(file, block_dim, call.ctx.scope)
    return _variants(found, sizes)


def module_launch_variants(facts: IdentityFacts, module: str) -> frozenset[Variant] | None:
    """Every variant the project's launches of ``module`` use; None when one of them is not known."""
    def compute() -> frozenset[Variant] | None:
        found: set[Variant] = set()
        for launch in facts.all_launches():
            if launch.module != module:
                continue
            variants = launch_variants(facts, launch)
            if variants is None:
                return None
            found |= variants
        return frozenset(found)

    return facts.cached(("module launch variants", module), compute)


def preload_unused(facts: IdentityFacts, file: FileModel, call: Call, module: str) -> bool:
    """A preload of ``module`` built only variants no launch of it uses (a tiled module preloaded at 256 and
    launched at 64 and 128): a kernel joining after it joins no variant that was built."""
    if not is_warp(call.callee, "load_module", "force_load"):
        return False
    loaded = load_variants(facts, file, call)
    used = module_launch_variants(facts, module)
    return loaded is not None and used is not None and bool(used) and not (loaded & used)

"""The signatures of the Warp calls rules read, as warp-lang 1.19.0 defines them.

One table, so no rule re-encodes "``block_dim`` is the third positional argument of
``force_load``": rules ask ``call.bound("block_dim")`` (``model.Call.bound``), which binds
positional and keyword arguments the way Python would for that signature. Taken from
``inspect.signature`` of the released 1.19.0 functions (``warp/_src/context.py``,
``warp/_src/types.py``); ``launch_tiled(*args, **kwargs)`` forwards to ``launch``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from .names import is_warp_api

# The test suite sets this (tests/conftest.py) before warplint is imported: ``Call.bound`` then raises for a Warp
# callee the table has no signature for, or a parameter its signature lacks, where a run gives the tolerant None.
# Read once, at import: with it unset ``Call.bound`` is the plain method, and a run pays nothing for the check.
STRICT_ENV = "WARPLINT_STRICT_WARP_API"
STRICT = os.environ.get(STRICT_ENV, "") == "1"


@dataclass(frozen=True)
class Signature:
    """Parameter names in order; ``positional`` of them can be passed by position."""

    name: str
    parameters: tuple[str, ...]
    positional: int

    def position_of(self, parameter: str) -> int | None:
        if parameter not in self.parameters:
            return None
        index = self.parameters.index(parameter)
        return index if index < self.positional else None


def _signature(name: str, positional: str, keyword_only: str = "") -> Signature:
    before, after = positional.split(), keyword_only.split()
    return Signature(name, tuple(before + after), len(before))


_LAUNCH = ("kernel dim inputs outputs adj_inputs adj_outputs device stream adjoint record_tape record_cmd "
           "max_blocks block_dim")

SIGNATURES: dict[str, Signature] = {
    s.name: s
    for s in (
        _signature("launch", _LAUNCH),
        _signature("launch_tiled", _LAUNCH),
        _signature("kernel", "f", "name enable_backward launch_bounds cuda_max_registers enable_cuda_smem_spilling "
                   "cluster_dim module module_options entry_point_abi grid_stride"),
        _signature("func", "f", "name module inline"),
        _signature("struct", "c", "module"),
        _signature("Kernel", "func key module options code_transformers source"),
        _signature("overload", "kernel arg_types"),
        _signature("set_module_options", "options module"),
        _signature("get_module_options", "module"),
        _signature("get_module", "name"),
        _signature("load_module", "module device recursive block_dim max_workers"),
        _signature("force_load", "device modules block_dim max_workers"),
        _signature("clear_kernel_cache", ""),
        _signature("clear_lto_cache", ""),
        _signature("Tape", ""),
        _signature("capture_begin", "device stream force_module_load external apic capture_mode"),
        _signature("ScopedDevice", "device"),
        _signature("set_device", "ident"),
        _signature("array", "data dtype shape strides ptr capacity device pinned copy deleter ndim grad "
                   "requires_grad retain_grad"),
        _signature("zeros", "shape dtype device requires_grad pinned retain_grad"),
        _signature("empty", "shape dtype device requires_grad pinned retain_grad"),
        _signature("ones", "shape dtype device requires_grad pinned retain_grad"),
        _signature("full", "shape value dtype device requires_grad pinned retain_grad"),
        _signature("from_numpy", "arr dtype shape device requires_grad retain_grad"),
    )
}

# Where Warp's public names live besides ``warp.`` (``from warp.context import launch``).
# Module options a kernel option of another name overrides for that kernel: a kernel made with `grid_stride=`
# ignores the module's `default_grid_stride` (Warp 1.19 context.py `hash_kernel`: `resolve_grid_stride(kernel.options,
# default_grid_stride)`). Options of the same name need no entry: Warp builds with `module.options | kernel.options`.
MODULE_OPTIONS_KERNELS_OVERRIDE = {"default_grid_stride": "grid_stride"}

_HOMES = ("warp.", "warp.context.", "warp._src.context.", "warp.types.", "warp._src.types.")


def signature_of(callee: str | None) -> Signature | None:
    """The signature of a resolved callee name (``warp.launch``), or None when it is not in the table."""
    if not callee:
        return None
    for home in _HOMES:
        if callee.startswith(home):
            return SIGNATURES.get(callee[len(home):])
    return None


class UnknownWarpParameter(LookupError):
    """A rule asked which argument a Warp call binds to a parameter the table cannot place (strict mode only)."""


def check_parameter(callee: str, parameter: str) -> None:
    """Raise ``UnknownWarpParameter`` when ``callee`` is Warp API and the table has no signature for it, or its
    signature has no ``parameter``: positionally passed arguments would then be missed without a word."""
    if not is_warp_api(callee):
        return  # project code (a launch wrapper): only its keywords can be bound, as documented
    signature = signature_of(callee)
    if signature is None:
        raise UnknownWarpParameter(f"{callee}() has no signature in warplint/warp_api.py (asked for {parameter!r}): "
                                   "add it from inspect.signature of the installed Warp")
    if parameter not in signature.parameters:
        raise UnknownWarpParameter(f"{callee}() has no parameter {parameter!r} in warplint/warp_api.py "
                                   f"({', '.join(signature.parameters)})")


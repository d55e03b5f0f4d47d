from __future__ import annotations

from collections.abc import Iterator

from warplint.facts import MATHDX_TILE_OPS
from warplint.index import Project
from warplint.model import FileModel, Kernel
from warplint.names import is_warp
from warplint.rule import Report, Rule
from warplint.semantic.differentiation import false_keys, options_off

# MathDx ops whose LTO dispatch adds adjoint LTOs when the module's enable_backward is on
# (bi:18573, 19029, 19284/19316, 19836/19873); tile_cholesky_solve* and tile_upper_solve*
# link one solver LTO whatever the option.
_BACKWARD_LTO_OPS = MATHDX_TILE_OPS & frozenset(
    {"tile_matmul", "tile_fft", "tile_ifft", "tile_cholesky", "tile_cholesky_inplace", "tile_lower_solve",
     "tile_lower_solve_inplace"}
)

# The option that turns each op's MathDx path off (no LTO at all, so nothing to warn about).
_MATHDX_OPTION = {
    "tile_matmul": "enable_mathdx_gemm", "tile_fft": "enable_mathdx_fft", "tile_ifft": "enable_mathdx_fft",
    "tile_cholesky": "enable_mathdx_solver", "tile_cholesky_inplace": "enable_mathdx_solver",
    "tile_lower_solve": "enable_mathdx_solver", "tile_lower_solve_inplace": "enable_mathdx_solver",
}


class TileKernelBackwardOptionIgnored(Rule):
    """`@wp.kernel(enable_backward=False)` on a MathDx tile kernel does not stop the adjoint LTO links.

    ## Why
    MathDx tile builtins link LTOs on CUDA, and with backward on `tile_matmul`,
    `tile_fft`/`tile_ifft`, `tile_cholesky`/`tile_cholesky_inplace` and
    `tile_lower_solve`/`tile_lower_solve_inplace` also link adjoint GEMMs/FFTs/solvers
    (two extra GEMMs per `tile_matmul`). `tile_cholesky_solve*` and `tile_upper_solve*`
    link one solver LTO either way, so they are not reported.
    Which LTOs are linked is decided by the **module's** `enable_backward` option, not
    the kernel's: a per-kernel `enable_backward=False` skips the adjoint code of the
    kernel, but the adjoint LTOs are still generated and linked, the slowest part of
    such a build (tens of seconds per module measured on an H200).

    ## Fix
    Turn backward off for the module: `wp.set_module_options({"enable_backward":
    False})` in the kernel's file (before its first launch), or isolate the kernel with
    `@wp.kernel(module="unique", module_options={"enable_backward": False})`.
    A `module="unique"` kernel does **not** inherit its file's
    `wp.set_module_options`: its module copies `wp.config.enable_backward` when it is
    created, so it needs `module_options`.

    ## Limits
    Tile ops are found in the kernel body and one level of `@wp.func` helpers in the
    project. The module counts as backward-off when any project file sets
    `enable_backward: False` for it with `set_module_options` (the kernel's file without
    `module=`, or the module's name), when the kernel is `module="unique"` with
    `module_options={"enable_backward": False}`, or when any project file sets
    `wp.config.enable_backward = False` at module level (it may be the entry point that
    imports this library). Ops whose MathDx path is off the same ways
    (`enable_mathdx_gemm`/`_fft`/`_solver` False) link no LTO and are not reported.
    """

    code = "WC403"
    name = "tile-kernel-backward-option-ignored"
    mechanism = "CS-10"
    summary = "Per-kernel `enable_backward=False` on a MathDx tile kernel still links the adjoint LTOs."
    confidence = "high"

    invalid = (
        "import warp as wp\n\n@wp.kernel(enable_backward=False)\n"
        "def gemm(a: wp.array2d(dtype=float), b: wp.array2d(dtype=float), c: wp.array2d(dtype=float)):\n"
        "    ta = wp.tile_load(a, shape=(16, 16))\n    tb = wp.tile_load(b, shape=(16, 16))\n"
        "    wp.tile_store(c, wp.tile_matmul(ta, tb))\n",
    )
    valid = (
        "import warp as wp\nwp.set_module_options({'enable_backward': False})\n\n@wp.kernel(enable_backward=False)\n"
        "def gemm(a: wp.array2d(dtype=float), b: wp.array2d(dtype=float), c: wp.array2d(dtype=float)):\n"
        "    ta = wp.tile_load(a, shape=(16, 16))\n    tb = wp.tile_load(b, shape=(16, 16))\n"
        "    wp.tile_store(c, wp.tile_matmul(ta, tb))\n",
    )

    def _options_off(self, project: Project) -> tuple[dict[str, set[str]], set[str]]:
        """Options set to False per module by set_module_options, and wp.config options set False at module level."""
        off = options_off(project)  # the semantic layer: warplint.semantic.differentiation
        return off.modules, off.config

    @staticmethod
    def _false_keys(project: Project, file: FileModel, items, scope: str) -> set[str]:
        return false_keys(project, file, items, scope)

    def _tile_ops(self, project: Project, kernel: Kernel) -> list[str]:
        calls = set(kernel.warp_calls)
        for callee in list(calls):
            if not callee.startswith("warp."):
                found = project.function(callee)
                if found is not None and found[1].is_warp:
                    calls |= found[1].warp_calls
        return sorted({c[len("warp."):] for c in calls if is_warp(c) and c[len("warp."):] in _BACKWARD_LTO_OPS})

    def check(self, file: FileModel, project: Project) -> Iterator[Report]:
        for kernel in file.kernels:
            option = kernel.options.get("enable_backward")
            if option is None:
                continue
            found, value = project.constant(file, option, kernel.ctx.scope)
            if not found or value is not False:
                continue
            ops = self._tile_ops(project, kernel)
            if not ops:
                continue
            modules_off, global_off = self._options_off(project)
            module = project.kernel_module(file, kernel)
            if kernel.is_unique:
                module_options = kernel.options.get("module_options")
                off = set(global_off)
                if module_options is not None and module_options.kind == "dict":
                    off |= self._false_keys(project, file, module_options.items, kernel.ctx.scope)
            else:
                off = global_off | modules_off.get(module or "", set())
            # Backward off for the module, or the MathDx path of every op off: no adjoint LTO is linked.
            ops = [op for op in ops if _MATHDX_OPTION[op] not in off]
            if "enable_backward" in off or not ops:
                continue
            shown = f"module '{module}'" if module and module != "unique" else "its unique module"
            yield self.report(
                option.span,
                f"enable_backward=False on kernel '{kernel.name}' does not reach the MathDx dispatch of "
                f"{', '.join(ops)}: {shown} keeps enable_backward on, so the adjoint LTOs are still "
                "built and linked; set it for the module (wp.set_module_options or module=\"unique\" with "
                "module_options).",
                kernel=kernel.name,
                module=module,
                option="enable_backward",
            )

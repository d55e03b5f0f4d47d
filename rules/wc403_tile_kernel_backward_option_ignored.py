from __future__ import annotations

from collections.abc import Iterator

from warplint.diagnostic import Related
from warplint.index import Project
from warplint.model import FileModel, Kernel
from warplint.names import is_warp
from warplint.rule import Report, Rule

# Which MathDx ops add adjoint LTOs under the module's enable_backward, and the option that turns each op's
# MathDx path off, are facts of the project's Warp version (project.warp, read from each release's builtins).


class TileKernelBackwardOptionIgnored(Rule):
    """`@wp.kernel(enable_backward=False)` on a MathDx tile kernel does not stop the adjoint LTO links.

    ## Why
    MathDx tile builtins link LTOs on CUDA, and with backward on (Warp 1.19)
    `tile_matmul`, `tile_fft`/`tile_ifft`, `tile_cholesky` and `tile_lower_solve`
    also link adjoint GEMMs/FFTs/solvers (two extra GEMMs per `tile_matmul`). The
    in-place `tile_cholesky_inplace`/`tile_lower_solve_inplace` return before any
    backward LTO is built, and `tile_cholesky_solve*`/`tile_upper_solve*` link one
    solver LTO either way, so they are not reported. The set depends on the
    release and is that of the project's Warp: 1.10-1.11 `tile_matmul` only, FFTs
    from 1.12, `tile_cholesky` from 1.13, `tile_lower_solve` from 1.16.
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
        off = project.options_off()  # the semantic layer: warplint.semantic.differentiation
        return off.modules, off.config

    @staticmethod
    def _false_keys(project: Project, file: FileModel, items, scope: str) -> set[str]:
        return project.false_keys(file, items, scope)

    def _tile_ops(self, project: Project, kernel: Kernel) -> list[str]:
        backward_ops = project.warp.mathdx_backward_lto_ops
        calls = set(kernel.warp_calls)
        for callee in list(calls):
            if not callee.startswith("warp."):
                found = project.function(callee)
                if found is not None and found[1].is_warp:
                    calls |= found[1].warp_calls
        return sorted({c[len("warp."):] for c in calls if is_warp(c) and c[len("warp."):] in backward_ops})

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
            switches = project.warp.mathdx_options  # before 1.12-1.14 an op's MathDx path has no switch
            ops = [op for op in ops if switches.get(op) not in off]
            if "enable_backward" in off or not ops:
                continue
            shown = f"module `{module}`" if module and module != "unique" else "its unique module"
            where = kernel.option_span("enable_backward")
            yield self.report(
                where,
                f"`enable_backward=False` on kernel `{kernel.name}` does not reach its MathDx tile calls; set it "
                "for the module",
                related=(Related(file.path, where,
                                 f"{shown} keeps `enable_backward` on, so {project.warp.label} still builds and links "
                                 f"the adjoint LTOs of {', '.join(f'`{op}`' for op in ops)}; set it with "
                                 '`wp.set_module_options()`, or `module="unique"` with `module_options=`'),),
                kernel=kernel.name,
                module=module,
                option="enable_backward",
                warp_version=project.warp.version,
            )

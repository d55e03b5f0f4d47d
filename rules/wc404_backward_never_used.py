from __future__ import annotations

from collections.abc import Iterator

from warplint.diagnostic import Related
from warplint.index import Project
from warplint.model import FileModel
from warplint.rule import Report, Rule


class BackwardNeverUsed(Rule):
    """A MathDx tile kernel is built with backward on, and nothing in the project differentiates.

    ## Why
    Warp generates the adjoint of every kernel of a module whose `enable_backward` option is on
    (the default: `wp.config.enable_backward` is True and no `enable_backward: False` module
    option). For MathDx tile builtins the module option also decides which LTOs are built and
    linked on CUDA: with backward on, `tile_matmul` links two more GEMMs (dA, dB),
    `tile_fft`/`tile_ifft` one more FFT, `tile_cholesky`/`tile_lower_solve` a GEMM and a TRSM (their
    `_inplace` forms return before building any; which ops do is the project's Warp version's fact).
    Measured on an H200 (warp-lang 1.19, cold caches): a module with one 8x8 f32 `tile_matmul`
    kernel built in 30-37 s with backward on and 15-17 s with it off; a 32x32 f32+f16 GEMM module
    in 88-116 s against 45 s. When no `wp.Tape`, adjoint launch or `tape.backward()` exists in the
    project, that half of the build is never used.

    ## Fix
    Turn backward off for the kernel's module, in its file before the first launch:
    `wp.set_module_options({"enable_backward": False})` (for a `module="unique"` kernel:
    `module_options={"enable_backward": False}`, which it needs: a unique module does not inherit
    its file's options). Or, in an application, set `wp.config.enable_backward = False` at the
    entry point, after `import warp` and **before** importing the library (modules copy the
    config value when they are created; set inside a library it changes every consumer: WC402).

    ## Limits
    Whether a differentiation reaches the kernel's module is the semantic layer's answer (as for
    WC406), erring towards "reached": an adjoint launch (`adjoint` not the literal False) reaches
    the kernels it can launch, a `wp.Tape()` or a method of a tape every kernel launched from its
    file and from the callers of its function, a `warp.autograd` call the kernels it is given; one
    whose code calls something the layer cannot follow reaches every module its program imports.
    Any kernel of the module reached keeps it quiet (the module option decides the LTOs). A
    library whose users differentiate its kernels from their own code is not seen: lint the
    library with its tests or examples, or turn the rule off for it. `record_tape=` is not a
    signal (it only says whether a launch is recorded onto an active tape).
    Only kernels that call a MathDx op with adjoint LTOs (the ops above, in the body or through the
    project's `@wp.func`s; `tile_cholesky_solve*`/`tile_upper_solve*` link none) are reported:
    the adjoint of a plain kernel costs codegen and compile time but no LTO, and is not reported.
    Quiet when the kernel has its own `enable_backward=` (False is WC403's case; True is a choice),
    when the module has backward off (`set_module_options`, `wp.get_module(m).options`, a unique
    kernel's `module_options`, or `wp.config.enable_backward = False` in any project file, in any
    scope), when every op's MathDx path is off (`enable_mathdx_gemm`/`_fft`/`_solver` False the
    same ways), and when the kernel's module cannot be told.

    Precision on the dev corpora (newton 1.8.0, mujoco-warp, warp-lang 1.19.0, physicsnemo; each
    linted as its own project, `benchmarks/accuracy.py --all-rules`): 0 findings, 2 labelled
    look-alikes clean. newton and warp-lang have `wp.Tape`s (and module-level
    `wp.config.enable_backward = False` in some examples): quiet by design; without the project
    gate the rule would report ~40 kernels there that their tests and examples *do*
    differentiate, which is why the gate is project-wide rather than per launch. physicsnemo has
    no MathDx op; mujoco-warp's tile kernels set `enable_backward=False` themselves (WC403) or
    turn the MathDx GEMM off. On by default since 2026-12-06, with WC406: both report the semantic
    layer's one fact (a module built with backward code that no differentiation reaches), whose
    precision the runtime oracle measures on ordinary kernels (WC406's docs); the oracle runs on CPU,
    where no MathDx op links, and `--confirm` measured the cost on an H200 (docs/confirm.md, the
    cold-start profiler on CUDA: `enable_backward=False` saved 45.28 s of a 78.91 s two-module
    tile-GEMM cold start, workload the same).
    """

    code = "WC404"
    name = "backward-never-used"
    mechanism = "CS-10"
    summary = "A MathDx tile kernel's module builds backward (adjoint LTOs) but nothing in the project differentiates."
    confidence = "medium"
    default_enabled = True

    invalid = (
        "import warp as wp\n\n@wp.kernel\n"
        "def gemm(a: wp.array2d(dtype=float), b: wp.array2d(dtype=float), c: wp.array2d(dtype=float)):\n"
        "    wp.tile_store(c, wp.tile_matmul(wp.tile_load(a, shape=(8, 8)), wp.tile_load(b, shape=(8, 8))))\n\n"
        "def run(a, b, c):\n    wp.launch_tiled(gemm, dim=1, inputs=[a, b, c], block_dim=64)\n",
        # a unique module does not inherit the file's set_module_options
        "import warp as wp\nwp.set_module_options({'enable_backward': False})\n\n@wp.kernel(module='unique')\n"
        "def chol(a: wp.array2d(dtype=float)):\n    t = wp.tile_load(a, shape=(8, 8))\n"
        "    wp.tile_store(a, wp.tile_cholesky(t))\n",
    )
    valid = (
        # a Tape in another file reaches the kernel
        "# file: gemm_kernels.py\nimport warp as wp\n\n@wp.kernel\n"
        "def gemm(a: wp.array2d(dtype=float), b: wp.array2d(dtype=float), c: wp.array2d(dtype=float)):\n"
        "    wp.tile_store(c, wp.tile_matmul(wp.tile_load(a, shape=(8, 8)), wp.tile_load(b, shape=(8, 8))))\n"
        "# file: train.py\nimport warp as wp\nfrom gemm_kernels import gemm\n\ndef step(a, b, c):\n"
        "    with wp.Tape() as tape:\n        wp.launch_tiled(gemm, dim=1, inputs=[a, b, c], block_dim=64)\n"
        "    tape.backward()\n",
        # the module has backward off
        "import warp as wp\nwp.set_module_options({'enable_backward': False})\n\n@wp.kernel\n"
        "def gemm(a: wp.array2d(dtype=float), b: wp.array2d(dtype=float), c: wp.array2d(dtype=float)):\n"
        "    wp.tile_store(c, wp.tile_matmul(wp.tile_load(a, shape=(8, 8)), wp.tile_load(b, shape=(8, 8))))\n",
        # a unique module with backward off in its module_options
        "import warp as wp\n\n@wp.kernel(module='unique', module_options={'enable_backward': False})\n"
        "def chol(a: wp.array2d(dtype=float)):\n    t = wp.tile_load(a, shape=(8, 8))\n"
        "    wp.tile_store(a, wp.tile_cholesky(t))\n",
        # no MathDx op with adjoint LTOs
        "import warp as wp\n\n@wp.kernel\ndef add(a: wp.array2d(dtype=float)):\n"
        "    t = wp.tile_load(a, shape=(8, 8))\n    wp.tile_store(a, t + t)\n",
    )

    def check(self, file: FileModel, project: Project) -> Iterator[Report]:
        for kernel in file.kernels:
            if "enable_backward" in kernel.options:
                continue  # False: WC403's case; True or not literal: the author decided
            # the project's Warp decides which ops link adjoint LTOs, and which option turns their MathDx path off
            backward_ops = project.warp.mathdx_backward_lto_ops
            ops = sorted(op for op in project.mathdx_ops(file, kernel) if op in backward_ops)
            if not ops:
                continue
            if project.backward_reached(file, kernel):
                continue  # a differentiation may reach the module's kernels: its adjoint LTOs may be used
            off = project.kernel_options_off(file, kernel)
            if off is None or "enable_backward" in off:
                continue
            ops = [op for op in ops if project.warp.mathdx_options.get(op) not in off]
            if not ops:
                continue
            module = project.kernel_module(file, kernel)
            shown = f"module `{module}`" if module and module != "unique" else "its unique module"
            fix = ('`module_options={"enable_backward": False}`' if kernel.is_unique
                   else '`wp.set_module_options({"enable_backward": False})` in this file')
            yield self.report(
                kernel.span,
                f"kernel `{kernel.name}` links MathDx adjoint LTOs that nothing differentiates; turn "
                "`enable_backward` off",
                related=(Related(file.path, kernel.span,
                                 f"it calls {', '.join(f'`{op}`' for op in ops)} and {shown} builds backward, so the "
                                 "adjoint MathDx LTOs are built and linked, but no differentiation in the project "
                                 "reaches its kernels (no `wp.Tape`, adjoint launch or `warp.autograd` call): set "
                                 f"{fix}, or `wp.config.enable_backward = False` at the application's entry point "
                                 "before the library import"),),
                kernel=kernel.name,
                module=module,
                ops=ops,
            )

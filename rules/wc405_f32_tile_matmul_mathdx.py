from __future__ import annotations

from collections.abc import Iterator

from warplint.diagnostic import Related
from warplint.index import Project
from warplint.model import FileModel
from warplint.rule import Report, Rule


class F32TileMatmulMathDx(Rule):
    """A float32 `tile_matmul` goes through the MathDx GEMM, whose LTO link dominates the build.

    ## Why
    With `wp.config.enable_mathdx_gemm` on (the default), every `tile_matmul` is compiled on CUDA
    through cuBLASDx: one GEMM LTO per shape and dtype (three with backward on), generated and
    linked at module build time. Measured on an H200 (warp-lang 1.19, cold caches): a module with
    one 8x8 float32 `tile_matmul` kernel built in 30-37 s with MathDx and in 1-2 s with
    `enable_mathdx_gemm = False`. The MathDx GEMM pays off at run time for half-precision tiles
    (float16/bfloat16, Tensor Cores) and `precision="tf32"`; for small float32 tiles the scalar
    fallback is often as fast, and the build is an order of magnitude cheaper.

    ## Fix
    If the GEMM is not a hot spot (or the tiles are small), turn the MathDx GEMM off for the
    module: `wp.set_module_options({"enable_mathdx_gemm": False})` in the kernel's file (a
    `module="unique"` kernel: `module_options={"enable_mathdx_gemm": False}`), or
    `wp.config.enable_mathdx_gemm = False` at the application's entry point. Measure the kernel
    before and after: large float32 GEMMs can be faster through MathDx.

    ## Limits
    This is a trade-off, not a defect: the rule is opt-in (`--select WC405`) with confidence
    medium (warplint has no info level). The tiles' dtype is known only when every tile the kernel
    creates, in its body and its project `@wp.func`s, has a dtype read from the code: `tile_load`
    of a kernel parameter annotated `wp.array*(dtype=...)` / `wp.array*[...]`, `tile_zeros` /
    `tile_ones` / `tile_empty` (float when no dtype), `tile_full`/`tile_arange`/`tile_astype` with
    `dtype=`, or a helper's `wp.tile(dtype=...)` parameter. The kernel is reported only when all of
    them are float32 (`float`, `wp.float32`, a module-level alias of them): any float16/bfloat16/
    float64 tile, `wp.tile(x)`, `tile_map`, a dtype held in a closure variable, a helper that cannot
    be found, or a `precision=` other than "default" keeps it quiet. Quiet too when the MathDx
    GEMM is off for the module (`set_module_options`, `wp.get_module(m).options`, a unique
    kernel's `module_options`, or `wp.config.enable_mathdx_gemm = False` in any project file) and
    when the kernel's module cannot be told, and when `enable_mathdx_gemm` is set explicitly for the
    module (`module_options={"enable_mathdx_gemm": True}`: a choice) or assigned in `wp.config`
    anywhere. CUDA only: on CPU no LTO is built.

    Precision on the dev corpora (newton 1.8.0, mujoco-warp, warp-lang 1.19.0, physicsnemo; each
    linted as its own project, `benchmarks/accuracy.py --all-rules`): 19 findings, all in
    warp-lang, 2 judged worth acting on (the blocked-Cholesky example's float32 block GEMMs),
    17 harmless (Warp's own tests and GEMM benchmark, which exercise the MathDx path on purpose):
    11%. newton's and mujoco-warp's tile GEMMs are quiet (tiles from local `wp.array(ptr=...)`
    views, modules that cannot be told, or `enable_mathdx_gemm=False` already). Hence opt-in.
    """

    code = "WC405"
    name = "f32-tile-matmul-mathdx"
    mechanism = "CS-7"
    summary = "A float32 `tile_matmul` links a MathDx GEMM LTO (tens of seconds cold) where the scalar path may do."
    confidence = "medium"
    default_enabled = False

    invalid = (
        "import warp as wp\n\n@wp.kernel\n"
        "def gemm(a: wp.array2d(dtype=float), b: wp.array2d(dtype=wp.float32), c: wp.array2d(dtype=float)):\n"
        "    wp.tile_store(c, wp.tile_matmul(wp.tile_load(a, shape=(8, 8)), wp.tile_load(b, shape=(8, 8))))\n",
        "import warp as wp\n\n@wp.kernel\ndef acc(a: wp.array2d[float], c: wp.array2d[float]):\n"
        "    s = wp.tile_zeros(shape=(8, 8), dtype=float)\n    t = wp.tile_load(a, shape=(8, 8))\n"
        "    wp.tile_matmul(t, t, s)\n    wp.tile_store(c, s)\n",
    )
    valid = (
        # half precision: where MathDx pays off
        "import warp as wp\n\n@wp.kernel\n"
        "def gemm(a: wp.array2d(dtype=wp.float16), b: wp.array2d(dtype=wp.float16), c: wp.array2d(dtype=float)):\n"
        "    wp.tile_store(c, wp.tile_matmul(wp.tile_load(a, shape=(8, 8)), wp.tile_load(b, shape=(8, 8))))\n",
        # the MathDx GEMM is off
        "import warp as wp\nwp.config.enable_mathdx_gemm = False\n\n@wp.kernel\n"
        "def gemm(a: wp.array2d(dtype=float), b: wp.array2d(dtype=float), c: wp.array2d(dtype=float)):\n"
        "    wp.tile_store(c, wp.tile_matmul(wp.tile_load(a, shape=(8, 8)), wp.tile_load(b, shape=(8, 8))))\n",
        # the dtype cannot be told (a factory's closure)
        "import warp as wp\n\ndef make(dtype):\n    @wp.kernel\n"
        "    def gemm(a: wp.array2d(dtype=dtype), c: wp.array2d(dtype=dtype)):\n"
        "        t = wp.tile_load(a, shape=(8, 8))\n        wp.tile_store(c, wp.tile_matmul(t, t))\n    return gemm\n",
        # TF32 Tensor Cores
        "import warp as wp\n\n@wp.kernel\ndef gemm(a: wp.array2d(dtype=float), c: wp.array2d(dtype=float)):\n"
        "    t = wp.tile_load(a, shape=(8, 8))\n    wp.tile_store(c, wp.tile_matmul(t, t, precision='tf32'))\n",
    )

    def check(self, file: FileModel, project: Project) -> Iterator[Report]:
        for kernel in file.kernels:
            if "tile_matmul" not in project.mathdx_ops(file, kernel):
                continue
            dtypes = project.tile_dtypes(file, kernel)
            if dtypes != {"float32"}:
                continue  # half precision, mixed, or not known
            if project.matmul_precisions(file, kernel) - {"default"}:
                continue  # tf32 (or a precision that cannot be told)
            off = project.kernel_options_off(file, kernel)
            if off is None or "enable_mathdx_gemm" in off:
                continue
            if "enable_mathdx_gemm" in project.kernel_options_given(file, kernel):
                continue  # set on purpose (True) for this module, or by the application
            backward = "enable_backward" not in off and kernel.options.get("enable_backward") is None
            yield self.report(
                kernel.span,
                f"kernel `{kernel.name}` builds the slow MathDx GEMM for float32 `tile_matmul`; consider "
                "`enable_mathdx_gemm=False`",
                related=(Related(file.path, kernel.span,
                                 f"the GEMM LTO{'s (3 with backward on) take' if backward else ' takes'} tens of "
                                 "seconds to build cold, and float32 gains little from it; set it for this module "
                                 "(`set_module_options()`, or `module_options=` for a unique module) and measure "
                                 "the kernel"),),
                kernel=kernel.name,
                module=project.kernel_module(file, kernel),
            )

from __future__ import annotations

from warplint.rule import Rule


class LinkDominatedBuild(Rule):
    """Most of a module's build went to LTO artifacts, not the native compiler, seen by `--confirm`.

    ## What was seen
    `--confirm` times each build in parts: Warp's code generation, the LTO artifacts Warp
    builds for MathDx tile ops during code generation (`tile_matmul`, `tile_fft`,
    `tile_cholesky`, ... : one cuBLASDx/cuFFTDx/cuSolverDx LTO per distinct shape and type,
    more with backward on), the native compiler (NVRTC and the nvJitLink link), and the rest.
    Here more than half of a build of at least 0.5 s was spent outside the native compiler
    and LTO artifacts were built: the cost is the LTO work, not the kernel code. The finding
    points at the tile call whose code generation built the LTOs (Warp's own codegen line; else the
    kernel definitions), with the build's launch related; the cost is the LTO time.

    ## Fix
    Fewer distinct tile shapes and types (each is its own LTO); `enable_mathdx_gemm=False`
    for float32 GEMMs, where the MathDx path gains little (`--what-if enable_mathdx_gemm=False`
    measures it); `enable_backward=False` on modules nobody differentiates (no adjoint LTOs);
    keep the LTO cache (`<kernel_cache_dir>/lto`) between runs: do not call
    `wp.clear_lto_cache()` on the normal path.

    ## Limits
    CUDA only: on CPU Warp builds no LTO.
    """

    code = "WC906"
    name = "link-dominated-build"
    mechanism = "CS-7"
    summary = "Most of a module's build went to MathDx LTO artifacts rather than the native compiler (measured)."
    confidence = "high"
    runtime_only = True

    invalid = (
        "import warp as wp\n\n"
        "@wp.kernel\n"
        "def gemm(a: wp.array2d(dtype=float), b: wp.array2d(dtype=float), c: wp.array2d(dtype=float)):\n"
        "    ta = wp.tile_load(a, shape=(16, 16))\n"
        "    tb = wp.tile_load(b, shape=(16, 16))\n"
        "    wp.tile_store(c, wp.tile_matmul(ta, tb))  # GEMM LTOs dominate the build\n",
    )
    valid = (
        "import warp as wp\n\n"
        "@wp.kernel\n"
        "def axpy(x: wp.array(dtype=float), y: wp.array(dtype=float)):\n"
        "    i = wp.tid()\n    y[i] = 2.0 * x[i] + y[i]\n",
    )

from __future__ import annotations

from warplint.rule import Rule


class LtoRebuiltAfterClear(Rule):
    """`wp.clear_lto_cache()` threw away LTO artifacts that the same run then built again, seen by `--confirm`.

    ## What was seen
    `--confirm` records every LTO artifact Warp builds or fetches from `<kernel_cache_dir>/lto`
    (MathDx GEMM/FFT/solver LTOs, keyed by their symbol). Here one LTO was built, then
    `clear_lto_cache()` ran, then a later build needed the same LTO and built it again: the
    seconds of the second build are lost within this one run, before any later run loses the
    rest. (A warm run loads the modules from the kernel cache and never needs the LTOs, so the
    usual cold/warm comparison does not show this.) The finding points at the
    `clear_lto_cache()` call; a static WC201 finding on that call is confirmed with these
    seconds instead.

    ## Fix
    Remove the call, or run it only behind an explicit flag or in a maintenance command.
    `--what-if no-clear-lto-cache` measures the saving (the call made a no-op).

    ## Limits
    CUDA only: on CPU Warp builds no LTO.
    """

    code = "WC908"
    name = "lto-rebuilt-after-clear"
    mechanism = "CS-2"
    summary = "LTO artifacts built earlier in the run were built again after clear_lto_cache() (measured)."
    confidence = "high"
    runtime_only = True

    invalid = (
        "import warp as wp\n\n"
        "wp.load_module(first_gemm_module, device='cuda:0')\n"
        "wp.clear_lto_cache()  # the next module needs the same GEMM LTOs\n"
        "wp.load_module(second_gemm_module, device='cuda:0')\n",
    )
    valid = (
        "import warp as wp\n\n"
        "wp.load_module(first_gemm_module, device='cuda:0')\n"
        "wp.load_module(second_gemm_module, device='cuda:0')\n",
    )

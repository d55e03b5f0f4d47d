from __future__ import annotations

from warplint.rule import Rule


class CacheNotReused(Rule):
    """The second run compiled again what the first run had compiled, seen by `--confirm`.

    ## What was seen
    `--confirm` runs the command twice on the same private kernel caches. Every identity the
    first run built should load from the cache in the second (`(cached)`, a few ms). Here the
    second run compiled some of them again, or the first run compiled an identity it had
    already built. Typical causes: `wp.config.cache_kernels = False`, `wp.clear_kernel_cache()`
    on the normal run path, `kernel_cache_dir` set to a temporary or per-run directory, an
    `atexit`/`rmtree` of the cache. The finding points at the `clear_kernel_cache` call or the
    `wp.config` assignment the recorder saw, else at the launch that compiled.

    Reported only when no static finding (CS-2) accounts for it.

    ## Fix
    Keep the cache: remove the assignment/call, or put it behind an explicit flag
    (`--rebuild`) or a maintenance command.
    """

    code = "WC902"
    name = "cache-not-reused"
    mechanism = "CS-2"
    summary = "A second run with the same caches compiled kernels again: the compiled cache is thrown away."
    confidence = "high"
    runtime_only = True

    invalid = ("import warp as wp\n\nwp.config.cache_kernels = False  # every run compiles everything\n",)
    valid = ("import warp as wp\n\nif REBUILD:\n    wp.clear_kernel_cache()\n",)

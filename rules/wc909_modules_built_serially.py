from __future__ import annotations

from warplint.rule import Rule


class ModulesBuiltSerially(Rule):
    """Independent CUDA modules were built one after another, seen by `--confirm`.

    ## What was seen
    `--confirm` records when each build started and ended. Here two or more modules that do
    not depend on each other (no `wp.func` of one used by another) were compiled for CUDA one
    at a time, each at its first launch. Warp can build them at once: `wp.load_module` /
    `wp.force_load(modules=[...], block_dim=..., max_workers=N)` compile on a thread pool
    (the native compile runs outside Warp's code generation lock). The bound, as Warp's
    cold-start guidance states it: the best wall time is the largest module's build; the
    upper speed-up is sum / largest. The cost reported is sum - largest, the most a parallel
    preload can save; `--what-if parallel-preload` measures what it does save. The finding
    points at the entry file's first statement after its imports (and after the kernels of the modules to
    preload), with an (unsafe) fix inserting the `wp.force_load(...)` calls there; the builds are related.

    ## Fix
    After the imports, preload the modules in parallel at the block_dims they are launched
    with: `wp.force_load(device="cuda:0", modules=[wp.get_module("a"), wp.get_module("b")],
    block_dim=256, max_workers=4)`.

    ## Limits
    CUDA only (concurrent CPU loads are unsafe in Warp 1.19: WC503). Reported when the bound
    is at least 0.5 s. Builds already overlapping are not counted.
    """

    code = "WC909"
    name = "modules-built-serially"
    mechanism = "CS-13"
    summary = "Independent CUDA modules were built one at a time; a parallel preload is bounded by the largest."
    confidence = "high"
    runtime_only = True

    invalid = (
        "import warp as wp\nimport physics, render, io_kernels\n\n"
        "physics.step()  # builds physics\n"
        "render.draw()  # then render\n"
        "io_kernels.save()  # then io_kernels: one after another\n",
    )
    valid = (
        "import warp as wp\nimport physics, render, io_kernels\n\n"
        "mods = [wp.get_module(m.__name__) for m in (physics, render, io_kernels)]\n"
        "wp.force_load(device='cuda:0', modules=mods, block_dim=256, max_workers=3)\n"
        "physics.step()\n",
    )

from __future__ import annotations

from warplint.rule import Rule


class ModuleBuiltPerBlockDim(Rule):
    """One Warp module was built once per block_dim in one run, seen by `--confirm`.

    ## What was seen
    `--confirm` recorded builds of one module on one device at several block_dims. On CUDA
    (and on CPU with `wp.config.enable_cpu_blocks = True`) block_dim is part of the module
    hash, so every value launched costs a full build of the **whole** module, every kernel
    in it. The finding points at a launch of an odd value (the block_dims launched less often
    than the usual one); related locations list every launch site of the odd values and the
    usual one. The cost is the build time of the odd variants.

    Reported only when no static finding (WC303) accounts for the variants.

    ## Fix
    Launch the module's kernels at one block_dim, or move the kernels that need another
    block_dim into their own module (`@wp.kernel(module="name")`), so only they build twice.
    """

    code = "WC905"
    name = "module-built-per-block-dim"
    mechanism = "CS-5"
    summary = "One module was built once per block_dim its kernels were launched with (measured)."
    confidence = "high"
    runtime_only = True

    invalid = (
        "import warp as wp\n\n"
        "@wp.kernel\n"
        "def k(a: wp.array(dtype=float)):\n    a[wp.tid()] += 1.0\n\n"
        "a = wp.zeros(1024, device='cuda:0')\n"
        "wp.launch(k, dim=1024, inputs=[a], block_dim=128)\n"
        "wp.launch(k, dim=1024, inputs=[a], block_dim=256)  # a second build of the module\n",
    )
    valid = (
        "import warp as wp\n\n"
        "@wp.kernel\n"
        "def k(a: wp.array(dtype=float)):\n    a[wp.tid()] += 1.0\n\n"
        "a = wp.zeros(1024, device='cuda:0')\n"
        "for _ in range(2):\n"
        "    wp.launch(k, dim=1024, inputs=[a], block_dim=256)\n",
    )

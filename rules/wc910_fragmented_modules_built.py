from __future__ import annotations

from warplint.rule import Rule


class FragmentedModulesBuilt(Rule):
    """Several one-kernel modules with the same options and block_dim were each built, seen by `--confirm`.

    ## What was seen
    `--confirm` recorded three or more builds, in one run, of modules that hold one kernel
    each, on the same device at the same block_dim and with the same snapshot options: each
    paid a separate code generation, compiler call and load for work one module would do in
    one build. The cost is an estimate: (n - 1) x the smallest of these builds (the fixed
    part each extra module pays). The finding points at the first kernel definition of the group
    (where `@wp.kernel(module=...)` goes), the other definitions and the builds related;
    `--what-if merge-modules:A,B,C` measures one module instead.

    Reported only when no static finding (WC305, or a CS-9 finding) accounts for them.

    ## Fix
    Put kernels that share a lifecycle, options and block_dim into one module: drop
    `module="unique"`, or give them one `module="name"`.

    ## Limits
    Medium confidence: a split can be deliberate (to keep one kernel's rebuilds or MathDx
    links from touching the others), which a run does not show. Modules built at several
    block_dims are left out (they differ for a reason).
    """

    code = "WC910"
    name = "fragmented-modules-built"
    mechanism = "CS-4"
    summary = "Several one-kernel modules with identical options were each built separately (measured)."
    confidence = "medium"
    runtime_only = True

    invalid = (
        "import warp as wp\n\n"
        "@wp.kernel(module='a')\ndef fa(x: wp.array(dtype=float)):\n    x[wp.tid()] = 1.0\n\n"
        "@wp.kernel(module='b')\ndef fb(x: wp.array(dtype=float)):\n    x[wp.tid()] = 2.0\n\n"
        "@wp.kernel(module='c')\ndef fc(x: wp.array(dtype=float)):\n    x[wp.tid()] = 3.0  # three builds\n",
    )
    valid = (
        "import warp as wp\n\n"
        "@wp.kernel\ndef fa(x: wp.array(dtype=float)):\n    x[wp.tid()] = 1.0\n\n"
        "@wp.kernel\ndef fb(x: wp.array(dtype=float)):\n    x[wp.tid()] = 2.0\n",
    )

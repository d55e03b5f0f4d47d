from __future__ import annotations

from warplint.rule import Rule


class ModuleRebuiltAtRuntime(Rule):
    """A Warp module was built more than once in one run (identity churn), seen by `--confirm`.

    ## What was seen
    `--confirm` ran the program and saw one module load a second identity (a new hash) for a
    device and block_dim it had already loaded. Warp rebuilds the **whole** module — every kernel
    in it — each time its identity changes. The finding points at what changed the identity:
    the definition of a kernel whose content was new after the module had loaded (CS-1), a
    `wp.set_module_options` call with a changed value after the load (CS-3), or a launch that
    created a new overload of a generic kernel (CS-6); when the recorder saw no such event it
    points at the launch that triggered the rebuild.

    Reported only when no static finding accounts for the rebuild.

    ## Fix
    Make the module complete before its first launch: define kernels at import (or in setup
    before any launch), set module options first, register overloads with `wp.overload`. Kernels
    whose content really varies at run time belong in their own module (`module="unique"` or a
    named module per variant).
    """

    code = "WC901"
    name = "module-rebuilt-at-runtime"
    mechanism = "CS-1"
    summary = "A module was built again at run time because its kernels or options changed after it loaded."
    confidence = "high"
    runtime_only = True

    invalid = (
        "import warp as wp\n\n"
        "@wp.kernel\n"
        "def top(a: wp.array(dtype=float)):\n    a[wp.tid()] += 1.0\n\n"
        "def run(a, s: float):\n"
        "    @wp.kernel\n"
        "    def late(a: wp.array(dtype=float)):\n        a[wp.tid()] *= s\n"
        "    wp.launch(late, dim=a.shape[0], inputs=[a])\n\n"
        "a = wp.zeros(4)\n"
        "wp.launch(top, dim=4, inputs=[a])\n"
        "run(a, 2.0)  # __main__ is built a second time here\n",
    )
    valid = (
        "import warp as wp\n\n"
        "@wp.kernel\n"
        "def top(a: wp.array(dtype=float)):\n    a[wp.tid()] += 1.0\n\n"
        "@wp.kernel\n"
        "def scale(a: wp.array(dtype=float), s: float):\n    a[wp.tid()] *= s\n\n"
        "a = wp.zeros(4)\n"
        "wp.launch(top, dim=4, inputs=[a])\n"
        "wp.launch(scale, dim=4, inputs=[a, 2.0])\n",
    )

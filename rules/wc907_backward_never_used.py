from __future__ import annotations

from warplint.rule import Rule


class BackwardBuiltNeverUsed(Rule):
    """A module was built with its adjoint (backward) code, and nothing differentiated it, seen by `--confirm`.

    ## What was seen
    `--confirm` measured the generated source of each build in the isolated kernel cache:
    Warp emits the adjoint of every kernel (`..._backward`) and of every `wp.func` it calls
    (`adj_...`) when the module's `enable_backward` option is on (the default). Here a
    module was built with backward on, its adjoint code is a large part of its source (at
    least 25 % and 16 KB, in a build of at least 0.5 s) or LTO artifacts were built for it
    (MathDx tile ops link adjoint GEMMs/FFTs), and during the whole run no `wp.Tape` recorded a launch
    of its kernels and no adjoint launch ran. The finding points where the fix goes: the module's
    `set_module_options` call, else its first kernel definition, with an (unsafe) fix inserting
    `wp.set_module_options({"enable_backward": False})` there; the builds are related locations. Its
    cost is what `--what-if enable_backward=False` measured, when that ran.

    ## Fix
    `wp.set_module_options({"enable_backward": False})` in the module's file before its
    first launch, or in an application `wp.config.enable_backward = False` right after
    `import warp` and before importing the code that defines the kernels.

    ## Limits
    Medium confidence: this run did not differentiate, another command of the same program
    (a training mode, a test) may. How much of the build the adjoint costs is not
    proportional to its share of the source (a fixed part of each build is the compiler's
    start-up and headers): measure it with `--what-if enable_backward=False`.
    """

    code = "WC907"
    name = "backward-built-unused"
    mechanism = "CS-10"
    summary = "A module was built with adjoint code although no Tape or adjoint launch used it in the run."
    confidence = "medium"
    runtime_only = True

    invalid = (
        "import warp as wp\n\n"
        "@wp.kernel\n"
        "def f(a: wp.array(dtype=float), b: wp.array(dtype=float)):\n"
        "    i = wp.tid()\n    b[i] = wp.sin(a[i]) * wp.exp(a[i])\n\n"
        "a = wp.ones(16)\nb = wp.zeros(16)\n"
        "wp.launch(f, dim=16, inputs=[a, b])  # built with backward, never differentiated\n",
    )
    valid = (
        "import warp as wp\n\n"
        "wp.set_module_options({'enable_backward': False})\n\n"
        "@wp.kernel\n"
        "def f(a: wp.array(dtype=float), b: wp.array(dtype=float)):\n"
        "    i = wp.tid()\n    b[i] = wp.sin(a[i]) * wp.exp(a[i])\n",
    )

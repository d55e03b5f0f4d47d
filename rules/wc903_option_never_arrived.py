from __future__ import annotations

from warplint.rule import Rule


class OptionNeverArrived(Rule):
    """A `wp.config` option the program set never reached a module built afterwards, seen by `--confirm`.

    ## What was seen
    Six options are copied from `wp.config` into a module **when the module is created** (its
    first `@wp.kernel`, usually at import) and never read again: `enable_backward`,
    `max_unroll`, `lineinfo`, `deterministic`, `deterministic_max_records`,
    `compile_time_trace`. `--confirm` saw the program assign one of them, then saw a module that
    already existed at that moment get built with the old value while `wp.config` held the new
    one. Nothing rebuilt and nothing warned: the setting silently did not apply (e.g. backward
    code still generated for every kernel). Modules whose option was set explicitly
    (`set_module_options`, `module_options=`) and Warp's own modules are not reported.

    Reported only when no static finding accounts for it. The finding points at the assignment.

    ## Fix
    Set the option right after `import warp` and before importing the code that defines
    kernels, or set it on the module: `wp.set_module_options({"enable_backward": False},
    module=the_library_module)` before its first launch.
    """

    code = "WC903"
    name = "option-never-arrived"
    mechanism = "CS-3b"
    summary = "A snapshot `wp.config` option was set after the module was created, so the module never got it."
    confidence = "high"
    runtime_only = True

    invalid = (
        "import warp as wp\nimport my_kernels  # creates its module with enable_backward=True\n\n"
        "wp.config.enable_backward = False  # too late for my_kernels\n",
    )
    valid = (
        "import warp as wp\n\nwp.config.enable_backward = False\n\n"
        "import my_kernels  # created with enable_backward=False\n",
    )

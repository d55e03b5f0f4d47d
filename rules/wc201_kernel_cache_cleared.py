from __future__ import annotations

from collections.abc import Iterator

from warplint.diagnostic import Related
from warplint.index import Project
from warplint.model import Call, FileModel
from warplint.rule import Report, Rule

from ._cache_common import deliberate_reason


class KernelCacheCleared(Rule):
    """`wp.clear_kernel_cache()` / `wp.clear_lto_cache()` on the program's run path.

    ## Why
    `clear_kernel_cache()` unloads every loaded module and deletes every compiled
    module binary in the kernel cache directory — by default the one cache shared by
    all Warp programs of this user and Warp version. Called on every run, it makes
    every run (and every other program's next run) a cold start: each module pays its
    full code generation and native compile again (seconds to minutes per module for
    tile/MathDx code). `clear_lto_cache()` throws away the MathDx LTO artifacts, the
    most expensive part of a tile build. Modules whose binaries are still in the kernel
    cache do not need them; the cost falls on every tile module that compiles after the
    call: it regenerates LTOs that were already built, earlier in the same run (another
    module with the same GEMM shapes) or by an earlier run. Measured on an H200
    (warp-lang 1.19, `--confirm --what-if no-clear-lto-cache`): two 16x16 f32 GEMM
    modules with the call between them built in 90 s instead of 55 s.

    ## Fix
    Remove the call; Warp's cache is keyed by content hash and never serves stale
    code. If a clean build is sometimes needed, put it behind an explicit option
    (`if args.clear_cache: wp.clear_kernel_cache()`), or point
    `WARP_CACHE_PATH` at a private directory for that run.

    ## Limits
    Calls under any `if`/`while` condition (other than `if __name__ == "__main__":`)
    are taken as flag-gated and not reported, as are calls inside functions that are only
    called under a condition; what a function is named says nothing either way (a
    `clear_caches()` called on every run is reported). A function that times the cold build it asks
    for (a clock such as `time.perf_counter()` read before and after a launch or load that follows it, or
    a `wp.ScopedTimer` opened before one: `Project.cold_start_measurement`), benchmark code
    (`Project.context_of`: a `benchmarks`/`asv`/`bench*` folder, the methods of an asv benchmark class) and
    test code that runs only as a script (its `__main__` block) or in a child process (a function a test
    starts by its name in a command) build cold on purpose: findings there are reported only with
    `report-deliberate = true` in `[tool.warplint]` (or `--report-deliberate`).
    """

    code = "WC201"
    name = "kernel-cache-cleared"
    mechanism = "CS-2"
    summary = "The kernel (or LTO) cache is cleared on the run path, so every run compiles from scratch."
    confidence = "high"

    invalid = (
        "import warp as wp\nwp.clear_kernel_cache()\n",
        "import warp as wp\nimport unittest\nif __name__ == '__main__':\n"
        "    wp.clear_kernel_cache()\n    unittest.main()\n",
    )
    valid = (
        "import sys\nimport warp as wp\nif '--clear-cache' in sys.argv:\n    wp.clear_kernel_cache()\n",
    )

    def check(self, file: FileModel, project: Project) -> Iterator[Report]:
        for operation in project.events(file).cache_operations:
            call = operation.call
            if self._gated(call):
                continue
            if call.ctx.scope and self._only_called_gated(file, call.ctx.scope, project):
                continue
            if operation.operation == "clear_kernel_cache":
                what, cost = "kernel", ("every module then compiles from scratch (for this and every other Warp "
                                        "program of this user)")
            else:
                what, cost = "MathDx LTO", ("each tile module that compiles after it regenerates LTOs already built "
                                            "(earlier in this run or by an earlier one), the slowest part of a tile "
                                            "build")
            yield self.report(
                call.span,
                f"`{call.callee.rpartition('.')[2]}()` deletes the {what} cache on every run; remove it or gate it "
                "behind an option",
                related=(Related(file.path, call.span, cost),),
                function=call.ctx.scope,
                deliberate=deliberate_reason(project, file, call.ctx),
            )

    @staticmethod
    def _gated(call: Call) -> bool:
        # `if __name__ == "__main__":` is how a script runs, not a condition on the clear
        return len(call.ctx.conditions) > call.ctx.in_main_guard or call.ctx.in_handler

    def _only_called_gated(self, file: FileModel, scope: str, project: Project) -> bool:
        callers = project.callers(project.fqname(file, scope))
        return bool(callers) and all(self._gated(call) for _, call in callers)

from __future__ import annotations

from collections.abc import Iterator

from warplint.diagnostic import Related
from warplint.index import Project
from warplint.model import FileModel
from warplint.rule import Report, Rule

from ._cache_common import deliberate_reason, gate_reason


class KernelCacheDisabled(Rule):
    """`wp.config.cache_kernels = False` recompiles every module on every load.

    ## Why
    With `cache_kernels` off, `Module._compile` ignores binaries already on disk:
    every module load is a full code generation and native compile, in every run,
    even when nothing changed (warp-facts §7, E1b). Only executables already
    loaded in the same process are reused.

    ## Fix
    Delete the assignment. To start from a clean cache once, run
    `wp.clear_kernel_cache()` behind an explicit flag (`--rebuild`) or delete the
    cache directory by hand; to isolate a run, point `WARP_CACHE_PATH` at a stable
    per-project directory.

    ## Limits
    Deliberate maintenance paths are skipped: an assignment under a condition that
    reads a CLI argument, option, flag or environment variable, or a parameter of
    the enclosing function (`if args.no_cache:`), inside a function named for cache
    maintenance or cold runs (`clear_cache`, `rebuild`, `bench_cold`), or in a
    function every project caller of which is gated that way. Assigning a non-constant
    value is not reported. Test code and benchmark code (`Project.context_of`: `test_*.py`, `*_test.py`,
    `conftest.py`, a `tests` package, a `benchmarks`/`asv`/`bench*` folder, the methods of an
    asv benchmark class) turn the cache off on purpose (to exercise the compiler): findings there are reported only with
    `report-deliberate = true` in `[tool.warplint]` (or `--report-deliberate`).
    """

    code = "WC202"
    name = "kernel-cache-disabled"
    mechanism = "CS-2"
    summary = "`wp.config.cache_kernels = False` makes every run compile every module again."
    confidence = "high"

    invalid = (
        "import warp as wp\nwp.config.cache_kernels = False\n",
        "import warp.config\ndef setup():\n    warp.config.cache_kernels = 0\n",
    )
    valid = (
        "import warp as wp\nimport argparse\nargs = argparse.ArgumentParser().parse_args()\n"
        "if args.no_cache:\n    wp.config.cache_kernels = False\n",
        "import warp as wp\nwp.config.cache_kernels = True\n",
    )

    def check(self, file: FileModel, project: Project) -> Iterator[Report]:
        for a in project.events(file).config_assignments:
            if a.name != "cache_kernels" or a.value.kind != "const" or a.value.const:
                continue
            if a.value.const is None and a.value.text != "None":
                continue
            if gate_reason(file, a.ctx, project):
                continue
            yield self.report(
                a.span,
                "`cache_kernels` is turned off, so every run recompiles every module; remove the assignment",
                related=(Related(file.path, a.span, "every module load recompiles from scratch, ignoring binaries "
                                                    "already on disk; gate a one-off rebuild behind a flag"),),
                function=a.ctx.scope,
                option="cache_kernels",
                deliberate=deliberate_reason(project, file, a.ctx),
            )

from __future__ import annotations

from collections.abc import Iterator

from warplint.diagnostic import Related
from warplint.index import Project
from warplint.model import FileModel
from warplint.rule import Report, Rule

from ._cache_common import deliberate_reason, made_gate_reason


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
    Paths taken only on request are skipped (`Project.opt_in`): an assignment under a
    condition that reads the command line (`sys.argv`, what an `argparse` parser parsed, an
    absl flag), the environment, or a parameter of the enclosing function (`if args.no_cache:`),
    or in a function every project caller of which is gated that way; what a function is named
    says nothing either way. A helper that assigns a
    value its callers pass (`def set_cache(value): wp.config.cache_kernels = value`, also
    through wrappers) is judged at each call, with that call's arguments: a call that passes
    `False` is reported there (unless the call is gated), one that passes `True` is not.
    A value read through a name, an attribute or a container is what it can hold
    (`Holder(False).value`, a dict item set to `False`); a run-time setting is not reported. A function that
    times the cold build it asks for (a clock such as `time.perf_counter()` read before and after a launch
    or load that follows it, or a `wp.ScopedTimer` opened before one: `Project.cold_start_measurement`),
    benchmark code (`Project.context_of`: a `benchmarks`/`asv`/`bench*` folder, the methods of an asv benchmark
    class), and test code that sets `wp.config.cache_kernels` back once done (in a `finally:`, after a
    fixture's `yield`, in its class's `tearDown`/`tearDownClass`: a scoped change, to exercise the compiler) or
    that runs only as a script (its `__main__` block) or in a child process, turn the cache off on purpose:
    findings there are reported only with
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
        "import warp as wp\ndef set_cache(value):\n    wp.config.cache_kernels = value\n"
        "def main():\n    set_cache(False)\n",
    )
    valid = (
        "import warp as wp\nimport argparse\nargs = argparse.ArgumentParser().parse_args()\n"
        "if args.no_cache:\n    wp.config.cache_kernels = False\n",
        "import warp as wp\nwp.config.cache_kernels = True\n",
        "import warp as wp\ndef set_cache(value):\n    wp.config.cache_kernels = value\n"
        "def main():\n    set_cache(True)\n",
    )

    def check(self, file: FileModel, project: Project) -> Iterator[Report]:
        for a in project.config_assignments_made(file):
            if a.name != "cache_kernels" or a.augmented:
                continue
            # the value written, or the one a call passes down to the helper that assigns it (a.site); read
            # through names, attributes and containers (`h.value` of `Holder(False)`)
            known, value = project.constant(a.file, a.value, a.ctx.scope, a.site)
            # a None reached through names may be a placeholder filled later; written literally it is off
            off = known and not value and (value is not None or a.value.text == "None")
            if not off or made_gate_reason(project, a):
                continue
            origin_file, anchor, ctx = a.origin
            why = Related(file.path, anchor, "every module load recompiles from scratch, ignoring binaries already "
                                             "on disk; gate a one-off rebuild behind a flag")
            # set in a helper from what this call passes: the helper's assignment is evidence
            set_in = Related(a.file.path, a.span, "`wp.config.cache_kernels` is set to the value passed here")
            yield self.report(
                anchor,
                "`cache_kernels` is turned off, so every run recompiles every module; remove the assignment"
                if a.site is None else
                "this call turns `cache_kernels` off, so every run recompiles every module; do not pass a false value",
                related=(why,) if a.site is None else (why, set_in),
                function=ctx.scope,
                option="cache_kernels",
                deliberate=deliberate_reason(project, origin_file, ctx, "cache_kernels"),
            )

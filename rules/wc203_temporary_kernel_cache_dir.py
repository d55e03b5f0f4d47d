from __future__ import annotations

from collections.abc import Iterator

from warplint.diagnostic import Related, Span
from warplint.index import Project
from warplint.model import Context, FileModel
from warplint.rule import Report, Rule
from warplint.semantic.evaluator import Source

from ._cache_common import deliberate_reason, gate_reason, made_gate_reason


class TemporaryKernelCacheDir(Rule):
    """The kernel cache points at a directory that is new on every run.

    ## Why
    Warp looks for compiled modules in `wp.config.kernel_cache_dir` (or
    `WARP_CACHE_PATH`, read at `wp.init()`). A directory made by
    `tempfile.mkdtemp()`/`TemporaryDirectory()`, or a path that contains a
    timestamp, a UUID or the process id, is empty at the start of every run: every
    module compiles cold every time, and the binaries from the last run are never
    found (and pile up on disk unless removed).

    ## Fix
    Use a stable directory: leave the default (the per-user cache), or a fixed
    per-project path (`~/.cache/app/warp`, or one from your configuration). Isolate
    experiments with a fixed path per configuration, not per run.

    ## Limits
    The value is followed through local variables, items of unpacked tuples
    (`cache_dir, n = make_dirs()`), parameters, module constants (across files) and the
    return values of project helper functions (`tempfile.gettempdir()` alone is a fixed
    directory and is not reported). A helper that sets the directory its callers pass
    (also through wrappers) is judged at each call, and reported at the call that passes
    a new directory (the helper's assignment is a related location). The finding is at the `mkdtemp()` /
    `TemporaryDirectory()` call that makes the directory when it is written on
    another line of the same file (the assignment is a related location). Paths from configuration, environment
    or arguments are not reported. Paths taken only on request (`Project.opt_in`: a
    condition reading the command line, the environment or a parameter; functions only called
    from such paths) are skipped; what a function is named says nothing either way. Environment
    dictionaries passed to subprocesses (`env=...`) are not followed. A function that times the cold
    build it asks for (a clock such as `time.perf_counter()` read before and after a launch or load that
    follows it, or a `wp.ScopedTimer` opened before one: `Project.cold_start_measurement`), benchmark code
    (`Project.context_of`: a `benchmarks`/`asv`/`bench*` folder, the methods of an asv benchmark class), and
    test code that sets `wp.config.kernel_cache_dir` back once done (a later statement, after a fixture's
    `yield`, its class's teardown) or that runs only as a script (its `__main__`
    block) or in a child process, isolate the cache on purpose: findings
    there are reported only with
    `report-deliberate = true` in `[tool.warplint]` (or `--report-deliberate`).
    """

    code = "WC203"
    name = "temporary-kernel-cache-dir"
    mechanism = "CS-2"
    summary = "The kernel cache directory is a fresh temporary or timestamped directory, so every run compiles cold."
    confidence = "high"

    invalid = (
        "import tempfile\nimport warp as wp\nwp.config.kernel_cache_dir = tempfile.mkdtemp()\n",
        "import os, time\nos.environ['WARP_CACHE_PATH'] = f'/scratch/warp-{time.strftime(\"%Y%m%d-%H%M%S\")}'\n"
        "import warp as wp\n",
        "import tempfile\nimport warp as wp\ndef cache_root():\n    return tempfile.mkdtemp(prefix='warp')\n"
        "def setup():\n    path = cache_root()\n    wp.config.kernel_cache_dir = path\n",
    )
    valid = (
        "import os\nimport warp as wp\nwp.config.kernel_cache_dir = os.path.expanduser('~/.cache/app/warp')\n",
        "import os, tempfile\nimport warp as wp\n"
        "wp.config.kernel_cache_dir = os.path.join(tempfile.gettempdir(), 'warp')\n",
    )

    def check(self, file: FileModel, project: Project) -> Iterator[Report]:
        for a in project.config_assignments_made(file):
            if a.name == "kernel_cache_dir" and not a.augmented and not made_gate_reason(project, a):
                _, span, ctx = a.origin
                # set in a helper from what this call passes: the helper's assignment is evidence
                set_in = (Related(a.file.path, a.span, "`wp.config.kernel_cache_dir` is set to it here"),) \
                    if a.site is not None else ()
                yield from self._fresh(file, project, Source(a.file, a.value, a.ctx.scope, a.site), span, ctx,
                                       "wp.config.kernel_cache_dir", set_in)
        for value, ctx, span in project.environment_writes(file, "WARP_CACHE_PATH"):
            if not gate_reason(file, ctx, project):
                yield from self._fresh(file, project, Source(file, value, ctx.scope), span, ctx, "WARP_CACHE_PATH")

    def _fresh(self, file: FileModel, project: Project, value: Source, span: Span, ctx: Context, what: str,
               set_in: tuple[Related, ...] = ()) -> Iterator[Report]:
        """A report when ``value`` (set at ``span`` of ``file``) is a new directory on every run."""
        why = project.fresh_dir_reason(value.file, value.value, value.scope, value.site)
        if why is None:
            return
        # the call that makes the new directory is what a user changes, when it is written elsewhere
        made = project.fresh_dir_call(value.file, value.value, value.scope, value.site)
        anchor = span
        related = set_in
        if made is not None and made[0] is file and made[1].line != span.line:
            anchor, related = made[1], (Related(file.path, span, f"`{what}` is set to it here"), *set_in)
        yield self.report(
            anchor,
            f"`{what}` is a new directory on every run, so nothing is cached; use a stable one",
            related=(Related(file.path, anchor, f"`{why}` makes a new directory on every run: nothing compiled "
                                                "in earlier runs is found, so every module compiles cold each "
                                                "time"), *related),
            function=ctx.scope,
            option=what,
            deliberate=deliberate_reason(project, file, ctx, "kernel_cache_dir"),
        )

from __future__ import annotations

from collections.abc import Iterator

from warplint.diagnostic import Related
from warplint.index import Project
from warplint.model import FileModel
from warplint.rule import Report, Rule

from ._cache_common import deliberate_reason, env_writes, gate_reason


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
    The value is followed through local variables, parameters (the arguments of
    every call in the project), module constants (across files) and the return
    values of project helper functions (`tempfile.gettempdir()` alone is a fixed
    directory and is not reported). The finding is at the `mkdtemp()` /
    `TemporaryDirectory()` call that makes the directory when it is written on
    another line of the same file (the assignment is a related location). Paths from configuration, environment
    or arguments are not reported. Deliberate maintenance paths (a condition
    reading a flag, option, argument, environment variable or parameter; functions
    named for cache maintenance or cold runs; functions only called from such
    paths) are skipped. Environment dictionaries passed to subprocesses (`env=...`) are not
    followed. Test code and benchmark code (`Project.context_of`: `test_*.py`, `*_test.py`,
    `conftest.py`, a `tests` package, a `benchmarks`/`asv`/`bench*` folder, the methods of an
    asv benchmark class) isolate the cache per run on purpose: findings there are reported only with
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
        sites = [
            (a.value, a.ctx, a.span, "wp.config.kernel_cache_dir")
            for a in project.events(file).config_assignments
            if a.name == "kernel_cache_dir" and not a.augmented
        ]
        sites += [(v, c, s, "WARP_CACHE_PATH") for v, c, s in env_writes(file, "WARP_CACHE_PATH", project)]
        for value, ctx, span, what in sites:
            why = project.fresh_dir_reason(file, value, ctx.scope)
            if why is None or gate_reason(file, ctx, project):
                continue
            # the call that makes the new directory is what a user changes, when it is written elsewhere
            made = project.fresh_dir_call(file, value, ctx.scope)
            anchor = span
            related: tuple[Related, ...] = ()
            if made is not None and made[0] is file and made[1].line != span.line:
                anchor, related = made[1], (Related(file.path, span, f"`{what}` is set to it here"),)
            yield self.report(
                anchor,
                f"`{what}` is a new directory on every run, so nothing is cached; use a stable one",
                related=(Related(file.path, anchor, f"`{why}` makes a new directory on every run: nothing compiled "
                                                    "in earlier runs is found, so every module compiles cold each "
                                                    "time"), *related),
                function=ctx.scope,
                option=what,
                deliberate=deliberate_reason(project, file, ctx),
            )

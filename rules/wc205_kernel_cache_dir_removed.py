from __future__ import annotations

from collections.abc import Iterator

from warplint.diagnostic import Related
from warplint.index import Project
from warplint.model import Call, FileModel, Value
from warplint.rule import Report, Rule

from ._cache_common import deliberate_reason, gate_reason

_RMTREE = "shutil.rmtree"


def _cache_dirs(file: FileModel, project: Project) -> tuple[dict[int, str], dict[tuple[str, str], str]]:
    """What this file sets the kernel cache dir to, by name: the expressions those names come from
    (``id`` of each source -> what it was assigned to), and the (scope, name) pairs themselves (for names
    whose source is not known, such as a parameter nobody passes)."""
    sources: dict[int, str] = {}
    names: dict[tuple[str, str], str] = {}
    written = [(a.value, a.ctx, "wp.config.kernel_cache_dir") for a in project.events(file).config_assignments
               if a.name == "kernel_cache_dir"]
    written += [(value, ctx, "WARP_CACHE_PATH")
                for value, ctx, _ in project.environment_writes(file, "WARP_CACHE_PATH")]
    for value, ctx, what in written:
        if value.kind not in ("name", "attr") or not value.ref:
            continue
        names[(ctx.scope if value.local else "", value.ref)] = what
        for source in project.sources(file, value, ctx.scope):
            sources.setdefault(id(source.value), what)
    return sources, names


class KernelCacheDirRemoved(Rule):
    """The directory used as Warp's kernel cache is deleted with `shutil.rmtree`.

    ## Why
    Everything Warp compiled lives under the kernel cache directory
    (`wp.config.kernel_cache_dir`, or `WARP_CACHE_PATH`). Removing it — directly, or
    at exit with `atexit.register(shutil.rmtree, path)` — means the next run finds
    nothing and compiles every module cold again. `wp.clear_kernel_cache()` has the
    same effect on disk (and also unloads every module in-process).

    ## Fix
    Keep the cache. If a clean rebuild is sometimes needed, put the removal behind
    an explicit flag (`--rebuild`) or a maintenance command.

    ## Limits
    The removed path must be `wp.config.kernel_cache_dir` itself, the
    `WARP_CACHE_PATH` environment variable, or a name that this file assigns to
    either (or that reads from either), followed through local variables,
    parameters, module constants across files and helper return values. A path
    spelled out again as the same literal is not matched. Paths taken only on request (`Project.opt_in`: a
    condition reading the command line, the environment or a parameter; functions only called
    from such paths) are skipped; what a function is named says nothing either way. A function that
    times the cold build it asks for (a clock such as `time.perf_counter()` read before and after a launch
    or load that follows it, or a `wp.ScopedTimer` opened before one: `Project.cold_start_measurement`),
    benchmark code (`Project.context_of`: a `benchmarks`/`asv`/`bench*` folder, the methods of an asv
    benchmark class) and test code that runs only as a script (its `__main__` block) or in a child process
    build cold on purpose: findings there are reported only with
    `report-deliberate = true` in `[tool.warplint]` (or `--report-deliberate`).
    """

    code = "WC205"
    name = "kernel-cache-dir-removed"
    mechanism = "CS-2"
    summary = "The kernel cache directory is deleted, so the next run compiles every module cold."
    confidence = "high"

    invalid = (
        "import atexit, shutil\nimport warp as wp\nCACHE = '/scratch/warp'\nwp.config.kernel_cache_dir = CACHE\n"
        "atexit.register(shutil.rmtree, CACHE)\n",
        "import shutil\nimport warp as wp\n"
        "def finish():\n    shutil.rmtree(wp.config.kernel_cache_dir, ignore_errors=True)\n",
    )
    valid = (
        "import shutil\nimport warp as wp\ndef main(args):\n    if args.rebuild:\n"
        "        shutil.rmtree(wp.config.kernel_cache_dir, ignore_errors=True)\n",
        "import shutil\nimport warp as wp\n"
        "wp.config.kernel_cache_dir = '/scratch/warp'\nshutil.rmtree('/scratch/output')\n",
    )

    def check(self, file: FileModel, project: Project) -> Iterator[Report]:
        cache_dirs = None
        for call in project.calls_to(file, _RMTREE, "atexit.register"):
            target = self._removed_path(call)
            if target is None:
                continue
            what = project.cache_dir_read(file, target, call.ctx.scope)
            if what is None and target.kind in ("name", "attr") and target.ref:
                if cache_dirs is None:
                    cache_dirs = _cache_dirs(file, project)
                sources, names = cache_dirs
                what = names.get((call.ctx.scope if target.local else "", target.ref)) or next(
                    (sources[id(s.value)] for s in project.sources(file, target, call.ctx.scope)
                     if id(s.value) in sources), None)
            if what is None or gate_reason(file, call.ctx, project):
                continue
            when = "at exit" if call.callee == "atexit.register" else "here"
            yield self.report(
                call.span,
                f"the kernel cache (`{what}`) is deleted {when}; keep it, or delete it only behind a flag",
                related=(Related(file.path, call.span, "the next run finds nothing and compiles every module cold"),),
                function=call.ctx.scope,
                option=what,
                deliberate=deliberate_reason(project, file, call.ctx),
            )

    @staticmethod
    def _removed_path(call: Call) -> Value | None:
        if call.callee == _RMTREE:
            return call.arg(0, "path")
        if call.callee == "atexit.register" and call.args and call.args[0].ref == _RMTREE and len(call.args) > 1:
            return call.args[1]
        return None

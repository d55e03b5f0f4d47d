from __future__ import annotations

from collections.abc import Iterator

from warplint.index import Project, is_test_file
from warplint.model import Call, FileModel, Value
from warplint.rule import Report, Rule

from ._cache_common import env_writes, gate_reason

_RMTREE = "shutil.rmtree"
_CACHE_READS = ("warp.config.kernel_cache_dir",)


def _cache_dir_names(file: FileModel, project: Project) -> dict[str, str]:
    """Dotted refs of values assigned to the kernel cache dir in this file -> what they were assigned to."""
    names: dict[str, str] = {}
    for a in file.assignments:
        if a.target.ref == "warp.config.kernel_cache_dir" and a.value.kind in ("name", "attr") and a.value.ref:
            names[a.value.ref] = "wp.config.kernel_cache_dir"
    for value, _, _ in env_writes(file, "WARP_CACHE_PATH", project):
        if value.kind in ("name", "attr") and value.ref:
            names[value.ref] = "WARP_CACHE_PATH"
    for a in file.assignments:
        # `d = wp.config.kernel_cache_dir` / `d = os.environ["WARP_CACHE_PATH"]`: d names the cache too.
        if a.target.kind == "name" and a.target.ref and _reads_cache_dir(a.value):
            names[a.target.ref] = _reads_cache_dir(a.value) or ""
    return names


def _reads_cache_dir(value: Value | None) -> str | None:
    if value is None:
        return None
    if value.kind == "attr" and value.ref in _CACHE_READS:
        return "wp.config.kernel_cache_dir"
    if (
        value.kind == "subscript" and value.base is not None and value.base.ref == "os.environ"
        and value.key is not None and value.key.const == "WARP_CACHE_PATH"
    ):
        return "WARP_CACHE_PATH"
    if (
        value.kind == "call" and value.ref in ("os.environ.get", "os.getenv") and value.args
        and value.args[0].const == "WARP_CACHE_PATH"
    ):
        return "WARP_CACHE_PATH"
    return None


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
    either (or reads from either). Deliberate maintenance paths (a condition reading
    a flag, option, argument, environment variable or parameter; functions named for
    cache maintenance or cold runs; functions only called from such paths) and test
    code (`test_*.py`, `*_test.py`, `conftest.py`, modules of a `tests` package) are
    skipped.
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
        if is_test_file(file):
            return
        cache_names = None
        for call in file.calls:
            target = self._removed_path(call)
            if target is None:
                continue
            what = _reads_cache_dir(target)
            if what is None and target.kind in ("name", "attr") and target.ref:
                if cache_names is None:
                    cache_names = _cache_dir_names(file, project)
                what = cache_names.get(target.ref)
            if what is None or gate_reason(file, call.ctx, project):
                continue
            when = "at exit" if call.callee == "atexit.register" else "here"
            yield self.report(
                call.span,
                f"the kernel cache directory ({what}) is deleted {when}: the next run finds nothing and compiles "
                "every module cold; keep the cache, or delete it only behind an explicit rebuild flag.",
                function=call.ctx.scope,
                option=what,
            )

    @staticmethod
    def _removed_path(call: Call) -> Value | None:
        if call.callee == _RMTREE:
            return call.arg(0, "path")
        if call.callee == "atexit.register" and call.args and call.args[0].ref == _RMTREE and len(call.args) > 1:
            return call.args[1]
        return None

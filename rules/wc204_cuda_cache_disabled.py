from __future__ import annotations

from collections.abc import Iterator

from warplint.diagnostic import Related
from warplint.index import Project
from warplint.model import FileModel
from warplint.rule import Report, Rule

from ._cache_common import deliberate_reason, gate_reason

# CUDA reads CUDA_CACHE_DISABLE as an integer flag: these values leave the cache on.
_OFF_VALUES = {"", "0", "false", "no", "off"}


class CudaCacheDisabled(Rule):
    """`CUDA_CACHE_DISABLE` is set, so the driver JIT cache is thrown away.

    ## Why
    When Warp loads PTX (the default for architectures newer than the compiler's
    targets, or `cuda_output="ptx"`), the CUDA driver JIT-compiles it to machine code
    and keeps the result in its compute cache (`~/.nv/ComputeCache`,
    `CUDA_CACHE_PATH`). `CUDA_CACHE_DISABLE=1` turns that cache off: every process
    pays the driver JIT again for every module, even when Warp's own kernel cache
    is warm.

    ## Fix
    Do not set `CUDA_CACHE_DISABLE` in the program. To isolate runs, point
    `CUDA_CACHE_PATH` at a stable directory; raise `CUDA_CACHE_MAXSIZE` if the cache
    is too small.

    ## Limits
    Only writes into the process environment are seen (`os.environ[...] = `,
    `os.environ.setdefault`, `os.environ.update`, `os.putenv`) with a constant value
    other than `"0"`/`""`/`"false"`; environments built for subprocesses are not.
    Paths taken only on request (`Project.opt_in`: a condition reading the command line,
    the environment or a parameter; functions only called from such paths) are skipped, and so is a
    project whose every launch and load runs on the CPU (`device="cpu"`, `wp.ScopedDevice("cpu")`,
    `wp.set_device("cpu")`, followed by the semantic layer): the driver's JIT cache is a CUDA one. A
    function that times the cold build it asks for (a clock such as `time.perf_counter()` read before and
    after a launch or load that follows it, or a `wp.ScopedTimer` opened before one:
    `Project.cold_start_measurement`), benchmark code (`Project.context_of`) and test code that runs only as
    a script (its `__main__` block) or in a child process set it on purpose: findings there are reported only
    with
    `report-deliberate = true` in `[tool.warplint]` (or `--report-deliberate`).
    """

    code = "WC204"
    name = "cuda-cache-disabled"
    mechanism = "CS-2"
    summary = "`CUDA_CACHE_DISABLE` turns the driver's JIT cache off, so PTX is JIT-compiled again in every process."
    confidence = "high"

    invalid = (
        "import os\nos.environ['CUDA_CACHE_DISABLE'] = '1'\nimport warp as wp\n",
        "import os\nimport warp as wp\nos.environ.setdefault('CUDA_CACHE_DISABLE', '1')\n",
    )
    valid = (
        "import os\nos.environ['CUDA_CACHE_DISABLE'] = '0'\nimport warp as wp\n",
        "import os\nimport warp as wp\nos.environ['CUDA_CACHE_PATH'] = '/scratch/cuda-cache'\n",
    )

    def check(self, file: FileModel, project: Project) -> Iterator[Report]:
        if not project.may_use_cuda():
            return
        for value, ctx, span in project.environment_writes(file, "CUDA_CACHE_DISABLE"):
            if value.kind != "const" or value.const is None:
                continue
            if str(value.const).strip().lower() in _OFF_VALUES or value.const is False:
                continue
            if gate_reason(file, ctx, project):
                continue
            yield self.report(
                span,
                "`CUDA_CACHE_DISABLE` turns the driver's JIT cache off; do not set it (use `CUDA_CACHE_PATH` to "
                "isolate)",
                related=(Related(file.path, span, "every process then JIT-compiles the PTX of every module again, "
                                                  "even when Warp's kernel cache is warm"),),
                function=ctx.scope,
                option="CUDA_CACHE_DISABLE",
                deliberate=deliberate_reason(project, file, ctx),
            )

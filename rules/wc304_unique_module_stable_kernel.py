from __future__ import annotations

from collections.abc import Iterator

from warplint.diagnostic import Applicability, Fix, Related
from warplint.edits import replace
from warplint.index import UNIQUE, Project
from warplint.model import FileModel, Kernel
from warplint.rule import Report, Rule
from warplint.semantic.values import Const


def explicit_block_dims(project: Project, kernel_file: FileModel, kernel: Kernel) -> set[object]:
    """Block sizes the project's launches that can run on CUDA pass explicitly to this kernel ("?" for
    unresolved ones)."""
    found: set[object] = set()
    for f in project.files:
        for launch in project.launches(f):
            if launch.kernel is not kernel or launch.block_dim is None or not project.can_run_on_cuda(launch):
                continue
            for value in launch.block_dims:
                found.add(value.value if isinstance(value, Const) else "?")
    return found


class UniqueModuleStableKernel(Rule):
    """`module="unique"` on a stable kernel: one content, created before anything loads.

    ## Why
    Every Warp module pays a fixed cost per build: code generation, a compiler
    invocation (NVRTC or Clang), a load, and a cache entry per device and block size.
    `module="unique"` gives each kernel its own module, so ten unique kernels pay that
    cost ten times where one shared module would pay it once. Unique modules are the
    right tool for kernels whose content varies at run time (factories called with
    different values), for kernels created after their module would already have
    loaded (joining it then would rebuild it), for generic kernels, and for kernels that
    need their own `block_dim` or options. A kernel with one content, created before
    anything is launched, gains nothing from it.

    ## Fix
    Drop `module="unique"` so the kernel joins its file's module, or group related
    kernels into one named module (`module="app.solver"`).

    Automatic fix (unsafe, only with `--unsafe-fixes`), for a literal `module="unique"`:
    `--fix` writes `module=None` (the file's module, as if `module=` were not given).
    Unsafe because the kernel then shares builds, options and rebuilds with the file's
    other kernels.

    ## Limits
    Opt-in: isolation is often deliberate (to keep one kernel's rebuilds or MathDx links
    from touching the others), which the source does not say. The module is the semantic
    layer's (`module=` followed through constants, tables, helpers and factory
    parameters). Reported: a kernel whose module is "unique", with one content (created at
    import, or by a factory whose content arguments are one literal on every call) and
    created before any launch or load (at import, or by a function every call of which
    runs before them), in a project where other kernels land in other modules. Not
    reported: generic kernels, kernels with `module_options=`, kernels launched with an
    explicit `block_dim` other than 256 (or one that cannot be resolved), run-time
    specialisations and kernels created after a launch.

    Measured precision (2026-12-03): runtime oracle dev seed 2496891141 (500 programs, default
    rules plus this one) 16 of 16 findings right (CS-9 recall 16/25); `python
    benchmarks/accuracy.py --all-rules` on the dev split (newton 1.8.0, mujoco-warp 4.0.0,
    warp-lang 1.19.0, nvidia-physicsnemo 2.2.2): 61 findings, none judged a defect, 12 harmless
    (test kernels isolated so each test builds what it checks, block-dim dispatch tests, a
    kernel isolated for its own block size), 44 unsure, 5 unjudged: precision 0 of 12 judged.
    Keep it opt-in; use it to review a library's own `module="unique"` choices, not as a gate.
    """

    code = "WC304"
    name = "unique-module-stable-kernel"
    mechanism = "CS-9"
    summary = "`module=\"unique\"` on a stable kernel: one module and one build per kernel."
    confidence = "low"
    default_enabled = False

    invalid = (
        "import warp as wp\n\n@wp.kernel(module='unique')\ndef a(x: wp.array(dtype=float)):\n    pass\n\n"
        "@wp.kernel(module='unique')\ndef b(x: wp.array(dtype=float)):\n    pass\n",
    )
    valid = (
        "import warp as wp\n\n@wp.kernel\ndef a(x: wp.array(dtype=float)):\n    pass\n\n"
        "@wp.kernel\ndef b(x: wp.array(dtype=float)):\n    pass\n",
        "import warp as wp\nfrom typing import Any\n\n@wp.kernel(module='unique')\ndef a(x: wp.array(dtype=Any)):\n"
        "    pass\n\n@wp.kernel\ndef b(x: wp.array(dtype=float)):\n    pass\n",
    )

    def check(self, file: FileModel, project: Project) -> Iterator[Report]:
        for kernel in file.kernels:
            if project.kernel_module(file, kernel) != UNIQUE or kernel.module_value is None:
                continue
            if kernel.generic or "module_options" in kernel.options:
                continue  # generic kernels and kernels with options of their own are isolated for a reason
            if explicit_block_dims(project, file, kernel) - {project.warp.launch_block_dim}:
                continue  # isolated for a block size of its own
            if not project.stable_kernel(file, kernel) or not self._has_company(project, file, kernel):
                continue
            when = "at import time" if not kernel.ctx.scope else f"by `{kernel.ctx.scope}()` before any launch"
            yield self.report(
                kernel.module_span,
                f"kernel `{kernel.name}` has one content but its own module (`module=\"unique\"`); let it share a "
                "module",
                related=(Related(file.path, kernel.module_span,
                                 f"it is created {when}; each such kernel pays a separate build, compiler call and "
                                 'load: keep `module="unique"` only if it is isolated on purpose'),),
                fix=self._fix(kernel),
                kernel=kernel.name,
                module="unique",
            )

    @staticmethod
    def _has_company(project: Project, file: FileModel, kernel: Kernel) -> bool:
        """Another module holds kernels of the project: the program builds more than this one module."""
        own = project.module_identity(file, kernel)
        return any(module != own for module in project.modules())

    @staticmethod
    def _fix(kernel: Kernel) -> Fix | None:
        """`module=None`: the file's module, as without `module=` (unsafe: the kernel now shares its
        module's builds, options and rebuilds with the file's other kernels)."""
        value = kernel.module_value
        literal = value is not None and kernel.is_unique and not kernel.derived
        edit = replace(value.span, "None") if literal and value is not None else None
        return Fix("Share the file's module: module=None", (edit,), Applicability.UNSAFE) if edit else None

from __future__ import annotations

from collections.abc import Iterator

from warplint.diagnostic import Applicability, Fix
from warplint.edits import replace
from warplint.index import Project
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
    """`module="unique"` on a kernel defined once at import time, next to other kernels.

    ## Why
    Every Warp module pays a fixed cost per build: code generation, a compiler
    invocation (NVRTC or Clang), a load, and a cache entry per device and block size.
    `module="unique"` gives each kernel its own module, so a file of ten unique kernels
    pays that cost ten times where one shared module would pay it once. Unique modules
    are the right tool for kernels whose content varies at run time (factories), for
    generic kernels, and for kernels that need their own `block_dim` or options; a
    plain kernel defined once at module level gains nothing from it.

    ## Fix
    Drop `module="unique"` so the kernel joins its file's module, or group related
    kernels into one named module (`module="app.solver"`).

    Automatic fix (unsafe, only with `--unsafe-fixes`): `--fix` writes `module=None`
    (the file's module, as if `module=` were not given). Unsafe because the kernel
    then shares builds, options and rebuilds with the file's other kernels.

    ## Limits
    Opt-in: isolation is often deliberate (to keep one kernel's rebuilds or MathDx links
    from touching the others), which the source does not say. Not reported: kernels
    created inside functions, generic kernels, kernels with `module_options=`, kernels
    launched with an explicit `block_dim` other than 256 (or one that cannot be
    resolved), and kernels that are the only module-level kernel of their file.

    Measured precision (2026-12-01, `python benchmarks/accuracy.py --all-rules`, dev split:
    newton 1.8.0, mujoco-warp 4.0.0, warp-lang 1.19.0, nvidia-physicsnemo 2.2.2): 56 findings,
    none judged a defect, 12 harmless (test kernels isolated so each test builds what it
    checks, a block-dim dispatch test, a kernel isolated for its own block size), 44 unsure:
    whether an isolated stable kernel is worth its own build is not in the source. Precision
    on the judged findings: 0 of 12. Keep it opt-in; use it to review a library's own
    `module="unique"` choices, not as a gate.
    """

    code = "WC304"
    name = "unique-module-stable-kernel"
    mechanism = "CS-9"
    summary = "`module=\"unique\"` on a stable module-level kernel: one module and one build per kernel."
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
        module_level = file.module_kernels()
        if len(module_level) < 2:
            return
        for kernel in module_level:
            module_value = kernel.module_value
            if module_value is None or not kernel.is_unique or kernel.generic or "module_options" in kernel.options:
                continue
            if explicit_block_dims(project, file, kernel) - {project.warp.launch_block_dim}:
                continue
            yield self.report(
                module_value.span,
                f"kernel '{kernel.name}' is defined once at import time but gets its own module (module=\"unique\"): "
                "each such kernel pays a separate build, compiler call and load; let it share its file's module "
                "unless it is isolated on purpose.",
                fix=self._fix(kernel),
                kernel=kernel.name,
                module="unique",
            )

    @staticmethod
    def _fix(kernel: Kernel) -> Fix | None:
        """`module=None`: the file's module, as without `module=` (unsafe: the kernel now shares its
        module's builds, options and rebuilds with the file's other kernels)."""
        value = kernel.module_value
        edit = replace(value.span, "None") if value is not None and not kernel.derived else None
        return Fix("Share the file's module: module=None", (edit,), Applicability.UNSAFE) if edit else None

from __future__ import annotations

from collections.abc import Iterator

from warplint.diagnostic import Related
from warplint.index import UNIQUE, Project
from warplint.model import FileModel, Kernel, Span
from warplint.rule import Report, Rule

# How many one-kernel modules with the same options and block sizes make a fragmented group.
THRESHOLD = 2

Member = tuple[FileModel, Kernel]


class FragmentedModules(Rule):
    """One-kernel Warp modules with nothing that tells them apart: each pays a separate build.

    ## Why
    Each Warp module is a separate build: code generation, one compiler invocation,
    one load and one cache entry per device and block size, plus a separate
    first-launch stall. Modules that each hold one kernel, with the same options and
    launched at the same block sizes, pay that fixed cost once per module for work one
    module would do in one build.

    ## Fix
    Put kernels that share a lifecycle, options and block size into one module: give
    them one `module="name"` (or drop `module=` so they join their file's module).

    ## Limits
    The split can be deliberate (to keep rebuilds or MathDx links of one kernel from touching
    the others), which the source does not say: a `# noqa: WC305` on the `module=` line says
    so. Module membership is the
    semantic layer's, across the project: a module counts when exactly one kernel lands in
    it from any file, that kernel has one content (created at import, or by a factory whose
    content arguments are one literal on every call), is not generic, and is launched.
    Counted: modules named with `module="name"` (the split is written), and
    `module="unique"` kernels that carry their own `module_options=` (a stable unique
    kernel without options is `WC304`'s); a file's own module holding one kernel is not a
    choice and is not counted. Modules are grouped by the options set on them anywhere
    (`set_module_options`, `get_module(m).options`, `module_options=`) and by the variants
    their launches build (device and block size); a module whose options or block sizes
    are not known statically is left out (all of them when some option change targets a
    module not known statically). A group of at least 2 (`THRESHOLD`) is reported
    at every member, one finding each, at its `module=` argument, with the other members
    as related locations.

    Measured precision (2026-12-03): runtime oracle dev seed 2496891141 (500 programs, default
    rules plus this one) 56 of 56 findings right (CS-4 recall 14/20); on every real-code corpus
    (`warplint --select WC305 --no-cache` over newton 1.8.0, mujoco-warp 4.0.0, warp-lang 1.19.0,
    nvidia-physicsnemo 2.2.2, isaaclab, mjlab, nvalchemi-toolkit-ops and warp-nn: the dev,
    held-out and blind splits) no finding, so no false one. On by default since then.
    """

    code = "WC305"
    name = "fragmented-modules"
    mechanism = "CS-4"
    summary = "Several one-kernel modules with identical options and block sizes: each pays a separate build."
    confidence = "low"

    invalid = (
        "import warp as wp\n\n"
        + "".join(f"@wp.kernel(module='part_{i}')\ndef k{i}(x: wp.array(dtype=float)):\n    pass\n\n" for i in range(2))
        + "def run(x):\n" + "".join(f"    wp.launch(k{i}, dim=1, inputs=[x])\n" for i in range(2)),
    )
    valid = (
        "import warp as wp\n\n"
        + "".join(f"@wp.kernel\ndef k{i}(x: wp.array(dtype=float)):\n    pass\n\n" for i in range(2))
        + "def run(x):\n" + "".join(f"    wp.launch(k{i}, dim=1, inputs=[x])\n" for i in range(2)),
        "import warp as wp\n\n"
        + "".join(f"@wp.kernel(module='part_{i}')\ndef k{i}(x: wp.array(dtype=float)):\n    pass\n\n" for i in range(2))
        + "".join(f"wp.set_module_options({{'max_unroll': {i + 2}}}, module='part_{i}')\n" for i in range(2))
        + "def run(x):\n" + "".join(f"    wp.launch(k{i}, dim=1, inputs=[x])\n" for i in range(2)),
    )

    def check(self, file: FileModel, project: Project) -> Iterator[Report]:
        for group in self._groups(project):
            for member in group:
                f, kernel = member
                if f is not file:
                    continue
                others = [m for m in group if m is not member]
                where = _module_argument(kernel)
                names = ", ".join(sorted({_module_label(project, m) for m in others})[:5])
                related = [Related(of.path, _module_argument(ok), f"`{ok.name}` alone in its module too")
                           for of, ok in others]
                related += [Related(wf.path, fn.span, f"`{fn.name}` is defined here")
                            for wf, fn in project.wrapped_functions(f, kernel) or ()]
                yield self.report(
                    where,
                    f"kernel `{kernel.name}` is one of {len(others) + 1} one-kernel modules with the same options; "
                    "put them into one module",
                    related=(Related(file.path, where,
                                     f"{len(others)} other module{'s' if len(others) != 1 else ''} ({names}) "
                                     f"{'hold' if len(others) != 1 else 'holds'} one kernel each with the same "
                                     "options and block sizes: each module pays a separate build, compiler call "
                                     "and load"), *related),
                    kernel=kernel.name,
                    module=project.module_identity(f, kernel),
                )

    def _groups(self, project: Project) -> list[list[Member]]:
        return project.cached((self.code, "groups"), lambda: self._find_groups(project))

    @staticmethod
    def _find_groups(project: Project) -> list[list[Member]]:
        groups: dict[tuple, list[Member]] = {}
        for module in project.modules():
            members = project.module_members(module)
            if len(members.kernels) != 1 or not members.launched:
                continue
            file, kernel = members.kernels[0]
            if kernel.module_value is None or kernel.generic or not project.one_content(file, kernel):
                continue  # a file's own module, or a kernel whose content (so its module) varies
            if module.startswith(f"{UNIQUE}:") and "module_options" not in kernel.options:
                continue  # a stable unique kernel is WC304's
            variants = project.module_variants(module) if members.options is not None else None
            if members.options is None or variants is None:
                continue  # not known to be the same as the others'
            groups.setdefault((members.options, variants), []).append((file, kernel))
        return [g for g in groups.values() if len(g) >= THRESHOLD]


def _module_argument(kernel: Kernel) -> Span:
    """Where the kernel's ``module=`` is written; the kernel itself when it is not in this file's text (a project
    decorator passes it on: the value has no position of its own)."""
    value = kernel.module_value
    return value.span if value is not None and value.span.line > 0 else kernel.span


def _module_label(project: Project, member: Member) -> str:
    module = project.module_identity(*member) or "?"
    return f"`{member[1].name}` (`module=\"unique\"`)" if module.startswith(f"{UNIQUE}:") else f"`{module}`"

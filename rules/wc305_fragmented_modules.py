from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass

from warplint.diagnostic import Related
from warplint.index import UNIQUE, Project
from warplint.model import FileModel, Kernel, Span
from warplint.rule import Report, Rule

# How many one-kernel modules with the same options and block sizes make a fragmented group.
THRESHOLD = 2
# How many files' own one-kernel modules one function launches alike before they count as one feature split up
# (a kernel per file is the ordinary layout: two are a pair, three a pattern).
FILE_MODULE_THRESHOLD = 3

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
    kernel without options is `WC304`'s). Modules are grouped by the options set on them
    anywhere (`set_module_options`, `get_module(m).options`, `module_options=`) and by the
    variants their launches build (device and block size); a module whose options or block
    sizes are not known statically is left out (all of them when some option change targets
    a module not known statically). A group of at least 2 (`THRESHOLD`) is reported at
    every member, one finding each, at its `module=` argument, with the other members as
    related locations.

    A file's own module holding one kernel is the ordinary layout (a kernel per file), not a
    choice: alone it is not counted. It counts when one function launches at least 3
    (`FILE_MODULE_THRESHOLD`) such modules with the same options and block sizes itself, or
    through a launch wrapper (its first call then pays a build per file where one module
    would pay one): reported at each kernel's `def`, with the other kernels and the function's
    launches as related locations. A file's kernels launched from different functions, or
    from separate programs (examples), are not grouped.

    Measured precision (2026-12-03): runtime oracle dev seed 2496891141 (500 programs, default
    rules plus this one) 56 of 56 findings right (CS-4 recall 14/20); on every real-code corpus
    (`warplint --select WC305 --no-cache` over newton 1.8.0, mujoco-warp 4.0.0, warp-lang 1.19.0,
    nvidia-physicsnemo 2.2.2, isaaclab, mjlab, nvalchemi-toolkit-ops and warp-nn: the dev,
    held-out and blind splits) no finding, so no false one. On by default since then.
    Files' own modules launched together (2026-12-06): dev seed 3972610892 CS-4 recall 7/7, 28 of
    28 findings right; the same eight corpora: no finding. Grouping files' modules by package folder
    instead of by the function that launches them gave 21 findings on newton, mujoco-warp and
    warp-lang, each grouping unrelated files (separate example programs, collision beside rendering).
    """

    code = "WC305"
    name = "fragmented-modules"
    mechanism = "CS-4"
    summary = "Several one-kernel modules with identical options and block sizes: each pays a separate build."
    confidence = "low"

    invalid = (
        "".join(f"# file: op_{i}.py\nimport warp as wp\n@wp.kernel\ndef op_{i}(x: wp.array(dtype=float)):\n    pass\n"
                for i in range(3))
        + "# file: main.py\nimport warp as wp\nimport op_0, op_1, op_2\nx = wp.zeros(1)\n"
        + "".join(f"wp.launch(op_{i}.op_{i}, dim=1, inputs=[x])\n" for i in range(3)),
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

    def check_project(self, project: Project) -> Iterator[tuple[FileModel, Report]]:
        # (a project rule: the groups are the whole project's, so each file's findings read every file)
        groups = self._find_groups(project)
        files = {id(f): f for g in groups for f, _ in g.members}
        for file in files.values():
            for report in self._reports(file, groups, project):
                yield file, report

    def _reports(self, file: FileModel, groups: list[Group], project: Project) -> Iterator[Report]:
        for f, kernel in _members_in(groups, file):
            together = [g for g in groups if any(k is kernel for _, k in g.members)]
            others = list({id(k): (of, k) for g in together for of, k in g.members if k is not kernel}.values())
            where = kernel.module_span
            names = ", ".join(sorted({_module_label(project, m) for m in others})[:5])
            related = [Related(of.path, ok.module_span, f"`{ok.name}` alone in its module too")
                       for of, ok in others]
            related += [Related(wf.path, fn.span, f"`{fn.name}` is defined here")
                        for wf, fn in project.wrapped_functions(f, kernel) or ()]
            related += [Related(g.launcher[0], span, f"{_launcher_phrase(g.launcher)} launches `{ok.name}` here")
                        for g in together if g.launcher is not None
                        for (_, ok), span in zip(g.members, g.launch_spans, strict=True)]
            launcher = next((g.launcher for g in together if g.launcher is not None), None)
            together_by = f" that {_launcher_phrase(launcher)} launches together" if launcher is not None else ""
            yield self.report(
                where,
                f"kernel `{kernel.name}` is one of {len(others) + 1} one-kernel modules with the same options"
                f"{together_by}; put them into one module",
                related=(Related(file.path, where,
                                 f"{len(others)} other module{'s' if len(others) != 1 else ''} ({names}) "
                                 f"{'hold' if len(others) != 1 else 'holds'} one kernel each with the same "
                                 "options and block sizes: each module pays a separate build, compiler call "
                                 "and load"), *related),
                kernel=kernel.name,
                module=project.module_identity(f, kernel),
            )

    @staticmethod
    def _find_groups(project: Project) -> list[Group]:
        written: dict[tuple, list[Member]] = {}
        by_launcher: dict[tuple, list[tuple[FileModel, Kernel, Span]]] = {}
        for module in project.modules():
            members = project.module_members(module)
            if len(members.kernels) != 1 or not members.launched:
                continue
            file, kernel = members.kernels[0]
            if kernel.generic or not project.one_content(file, kernel):
                continue  # a kernel whose content (so its module) varies
            if module.startswith(f"{UNIQUE}:") and "module_options" not in kernel.options:
                continue  # a stable unique kernel is WC304's
            variants = project.module_variants(module) if members.options is not None else None
            if members.options is None or variants is None:
                continue  # not known to be the same as the others'
            if kernel.module_value is not None:
                written.setdefault((members.options, variants), []).append((file, kernel))
                continue
            for path, scope, span in members.launched_from:  # a file's own module: grouped by who launches it
                by_launcher.setdefault((members.options, variants, path, scope), []).append((file, kernel, span))
        groups = [Group(tuple(g)) for g in written.values() if len(g) >= THRESHOLD]
        groups += [Group(tuple((f, k) for f, k, _ in launched), (path, scope), tuple(span for _, _, span in launched))
                   for (_, _, path, scope), launched in by_launcher.items() if len(launched) >= FILE_MODULE_THRESHOLD]
        return groups


@dataclass(frozen=True)
class Group:
    """One-kernel modules that one module would build at once. For files' own modules, ``launcher`` is the
    function that launches them all (file path, qualname) and ``launch_spans`` each member's first launch there."""

    members: tuple[Member, ...]
    launcher: tuple[str, str] | None = None
    launch_spans: tuple[Span, ...] = ()


def _launcher_phrase(launcher: tuple[str, str]) -> str:
    """The function that launches a group, as a message names it (qualname "": its file's top-level code)."""
    path, scope = launcher
    return f"`{scope}`" if scope else f"the top-level code of `{os.path.basename(path)}`"


def _members_in(groups: list[Group], file: FileModel) -> list[Member]:
    """The members of ``groups`` defined in ``file``, each once."""
    return list({id(k): (f, k) for g in groups for f, k in g.members if f is file}.values())


def _module_label(project: Project, member: Member) -> str:
    module = project.module_identity(*member) or "?"
    return f"`{member[1].name}` (`module=\"unique\"`)" if module.startswith(f"{UNIQUE}:") else f"`{module}`"

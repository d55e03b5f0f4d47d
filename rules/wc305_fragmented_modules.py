from __future__ import annotations

from collections.abc import Iterator

from warplint.index import Project
from warplint.model import FileModel, Kernel, Value
from warplint.rule import Report, Rule

# How many one-kernel modules with the same options and block sizes in one file make it "fragmented".
THRESHOLD = 4


def _option_key(value: Value) -> str:
    return repr(value.const) if value.is_const else value.text


class FragmentedModules(Rule):
    """Many one-kernel modules in one file, with nothing that tells them apart.

    ## Why
    Each Warp module is a separate build: code generation, one compiler invocation,
    one load and one cache entry per device and block size, plus a separate
    first-launch stall. Four or more modules holding one kernel each, all with the same
    options and launched at the same block size, pay that fixed cost four or more times
    for work one module would do in one build.

    ## Fix
    Put kernels that share a lifecycle, options and block size into one module: drop
    `module="unique"` or give them one `module="name"`.

    ## Limits
    Opt-in: the split is often deliberate (to keep rebuilds or MathDx links of one kernel
    from touching the others), which the source does not say. Counted: module-level,
    non-generic kernels whose module is `"unique"` or a named module that holds only
    that kernel in the project, grouped by their other decorator options and the block
    sizes their launches pass; a group of at least 4 (`THRESHOLD`) is reported once per
    file, at its first kernel.

    Measured precision (2026-12-01, `python benchmarks/accuracy.py --all-rules`, dev split:
    newton 1.8.0, mujoco-warp 4.0.0, warp-lang 1.19.0, nvidia-physicsnemo 2.2.2): 5 findings,
    all in Warp's own tests and all unsure (one-kernel modules that let each test build only
    what it checks): no finding judged either way, so no precision can be given yet. Keep it
    opt-in.
    """

    code = "WC305"
    name = "fragmented-modules"
    mechanism = "CS-4"
    summary = "Four or more one-kernel modules in one file with identical options: each pays a separate build."
    confidence = "low"
    default_enabled = False

    invalid = (
        "import warp as wp\n\n"
        + "".join(f"@wp.kernel(module='unique')\ndef k{i}(x: wp.array(dtype=float)):\n    pass\n\n" for i in range(4)),
    )
    valid = (
        "import warp as wp\n\n"
        + "".join(f"@wp.kernel\ndef k{i}(x: wp.array(dtype=float)):\n    pass\n\n" for i in range(4)),
    )

    def check(self, file: FileModel, project: Project) -> Iterator[Report]:
        groups: dict[tuple, list[tuple[Kernel, str]]] = {}
        block_dims = self._block_dims(project)
        for kernel in file.module_kernels():
            if kernel.generic:
                continue
            module = project.kernel_module(file, kernel)
            if module is None:
                continue
            if module != "unique" and len(project.kernels_of_module(module)) != 1:
                continue
            options = tuple(
                sorted((k, _option_key(v)) for k, v in kernel.options.items() if k not in ("module", "name"))
            )
            key = (options, frozenset(block_dims.get(id(kernel), ())))
            groups.setdefault(key, []).append((kernel, module))
        for members in groups.values():
            if len(members) < THRESHOLD:
                continue
            first = members[0][0]
            names = ", ".join(k.name for k, _ in members[:6]) + (", ..." if len(members) > 6 else "")
            yield self.report(
                first.span,
                f"{len(members)} kernels of this file each get their own Warp module ({names}) with identical options "
                "and block sizes: each module pays a separate build, compiler call and load; group them into one "
                "module.",
                kernel=first.name,
                module=members[0][1],
            )

    @staticmethod
    def _block_dims(project: Project) -> dict[int, set[object]]:
        return project.cached("WC305.block_dims", lambda: FragmentedModules._collect_block_dims(project))

    @staticmethod
    def _collect_block_dims(project: Project) -> dict[int, set[object]]:
        found: dict[int, set[object]] = {}
        for f in project.files:
            for launch in project.launches(f):
                dim = project.launch_block_dim(launch)
                found.setdefault(id(launch.kernel), set()).add("?" if dim is None else dim)
        return found

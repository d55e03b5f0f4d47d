from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

from warplint.diagnostic import Related
from warplint.index import Launch, Project, is_test_file
from warplint.model import FileModel
from warplint.rule import Report, Rule
from warplint.semantic.values import Const, Unknown


class ModuleMultipleBlockDims(Rule):
    """Kernels of one Warp module are launched with different `block_dim` values.

    ## Why
    On CUDA, `block_dim` is part of a module's identity: every distinct value a
    module is launched with compiles the **whole** module again, every kernel in it,
    including those never launched at that size. A module of twenty kernels where one
    kernel runs at `block_dim=64` and the rest at the default 256 builds twenty kernels
    twice. A launch without `block_dim` uses 256 on CUDA (the module's `"block_dim"`
    option is never read by `wp.launch`).

    Block sizes are followed by the semantic layer: literals, constants (also imported
    ones), every binding of a local, `self.x` and class attributes, dataclass defaults
    reached through a parameter's annotation, items of a literal tuple a loop runs over,
    both branches of `a if c else b`, and parameters of launch wrappers, bound at each
    call of the wrapper (`self._run(k, a, b, threads=128)`). A value computed at run time
    (`x.shape[1]`, `1 << (n - 1).bit_length()`) is one more variant, and so is a size the callers
    outside the project choose (a required parameter no call in the project passes, also through a
    constructor: `self.channels` set from `__init__(self, channels)` of a class the project never builds).

    ## Fix
    Give the kernels that need a different block size their own module
    (`@wp.kernel(module="unique")` or a named module holding only them), or launch the
    whole module at one `block_dim`.

    ## Limits
    The reference size is the launch default 256 when any launch of the module uses it,
    else the most common value; each other value is one more build of the module and one
    finding, at its first launch (by path and line, test files last; through a wrapper, at
    the call of the wrapper); odd values first launched at one place are one finding. Launches
    whose `block_dim` is not known statically (an external call, an attribute the layer does not
    follow) are left out, and so are launches that can only run on the CPU (the semantic
    layer's devices: `device="cpu"` followed like any value, `wp.ScopedDevice("cpu")`,
    `wp.set_device("cpu")`, the callers' default device, a launch under `if device.is_cpu:`) and values
    only the CPU takes: the CPU ignores `block_dim`. Those are `1` in `256 if device.is_cuda else 1` (any
    spelling of the test: `"cuda" in str(device)`, `device == "cpu"`, `str(device).startswith("cuda")`,
    `wp.get_device(d).is_cuda`, `not`/`and` of them; through a local or a module-level constant too), and a
    `bs = 1` that a later `bs = 128` under `if device.is_cuda and c:` always replaces where the launch runs
    (under `if c:`). A launch a test expects to fail its own checks (the last statement of
    `with pytest.raises(ValueError):` / `self.assertRaises(ValueError)`: a `block_dim` over 1024 on the CPU,
    a negative `dim`) loads nothing and is left out; one expected to fail later (a CUDA launch error, a
    `RuntimeError`) builds the module first and counts. A module holding a single kernel is not reported:
    the extra build is that kernel's own cost, not the module's.
    `launch_tiled` requires `block_dim`, so it is never defaulted.
    """

    code = "WC303"
    name = "module-multiple-block-dims"
    mechanism = "CS-5"
    summary = "One Warp module is launched at several `block_dim`s: the whole module compiles once per value on CUDA."
    confidence = "high"

    invalid = (
        "import warp as wp\n\n@wp.kernel\ndef a(x: wp.array(dtype=float)):\n    pass\n\n"
        "@wp.kernel\ndef b(x: wp.array(dtype=float)):\n    pass\n\n"
        "def step(x):\n    wp.launch(a, dim=8, inputs=[x])\n    wp.launch(b, dim=8, inputs=[x], block_dim=64)\n",
        "# file: app/run.py\nimport warp as wp\nfrom app.kernels import a, b\nfrom app.sizes import SMALL\n"
        "def step(x):\n    wp.launch(a, dim=8, inputs=[x], block_dim=128)\n"
        "    wp.launch(b, dim=8, inputs=[x], block_dim=SMALL)\n"
        "# file: app/__init__.py\n\n"
        "# file: app/sizes.py\nSMALL = 32\n"
        "# file: app/kernels.py\nimport warp as wp\n@wp.kernel\ndef a(x: wp.array(dtype=float)):\n    pass\n"
        "@wp.kernel\ndef b(x: wp.array(dtype=float)):\n    pass\n",
    )
    valid = (
        "import warp as wp\n\n@wp.kernel\ndef a(x: wp.array(dtype=float)):\n    pass\n\n"
        '@wp.kernel(module="unique")\ndef b(x: wp.array(dtype=float)):\n    pass\n\n'
        "def step(x):\n    wp.launch(a, dim=8, inputs=[x])\n    wp.launch(b, dim=8, inputs=[x], block_dim=64)\n",
        "import warp as wp\nBLOCK = 256\n\n@wp.kernel\ndef a(x: wp.array(dtype=float)):\n    pass\n\n"
        "@wp.kernel\ndef b(x: wp.array(dtype=float)):\n    pass\n\n"
        "def step(x):\n    wp.launch(a, dim=8, inputs=[x])\n    wp.launch(b, dim=8, inputs=[x], block_dim=BLOCK)\n",
    )

    @staticmethod
    def _launches_by_module(project: Project) -> dict[str, list[tuple[Launch, BlockDim]]]:
        by_module: dict[str, list[tuple[Launch, BlockDim]]] = {}
        for launch in project.all_launches():
            if launch.module.startswith("unique:") or launch.call.has_star_args:
                continue
            if not project.can_run_on_cuda(launch):
                continue
            if launch.block_dim is None and launch.call.callee.endswith("launch_tiled"):
                continue  # launch_tiled picks its block size from the tiles
            values = launch.block_dims
            if any(isinstance(v, Unknown) for v in values) or not values.items:
                continue  # not known statically: neither a variant nor the reference
            for value in values:
                dim: BlockDim = value.value if isinstance(value, Const) else RUN_TIME  # type: ignore[assignment]
                by_module.setdefault(launch.module, []).append((launch, dim))
        for entries in by_module.values():
            entries.sort(key=lambda e: (*_order(e[0]), _sort_key(e[1])))
        return by_module

    def check_project(self, project: Project) -> Iterator[tuple[FileModel, Report]]:
        for module, entries in sorted(self._launches_by_module(project).items()):
            values = Counter(v for _, v in entries)
            if len(values) < 2 or len(project.kernels_of_module(module)) < 2:
                continue
            reference = _reference(values, entries, project.warp.launch_block_dim)
            reference_launch = next(launch for launch, v in entries if v == reference)
            # The first launch of each odd value; odd values first launched at one place (a wrapper call
            # passing a variable that can be 64 or 128) are one finding there.
            by_origin: dict[tuple[bool, str, int, int], list[tuple[BlockDim, Launch]]] = {}
            for odd in sorted((v for v in values if v != reference), key=_sort_key):
                launch = next(launch for launch, v in entries if v == odd)
                by_origin.setdefault(_order(launch), []).append((odd, launch))
            ref_file, ref_call = reference_launch.origin
            shown_all = [_shown(v) for v in sorted(values, key=_sort_key)]
            for odds in by_origin.values():
                launch = odds[0][1]
                origin_file, origin_call = launch.origin
                related = [Related(ref_file.path, ref_call.span,
                                   f"{reference_launch.kernel.name} launched at block_dim {_shown(reference)}")]
                if launch.site is not None:
                    related.append(Related(launch.file.path, launch.call.span, "the launch inside the wrapper"))
                here = " or ".join(_phrase(v) for v, _ in odds)
                yield origin_file, self.report(
                    origin_call.span,
                    f"Warp module '{module}' is launched here at {here}, and at {_phrase(reference)} elsewhere "
                    f"(values: {', '.join(shown_all)}): on CUDA the whole module compiles once per block_dim; give "
                    "the kernels that need another block size their own module or launch the module at one block_dim.",
                    related=tuple(related),
                    module=module,
                    kernel=launch.kernel.name,
                    block_dim=", ".join(_shown(v) for v, _ in odds),
                    block_dims=shown_all,
                    function=origin_call.ctx.scope,
                )


class _RunTime:
    """A block_dim computed at run time: one more variant per value it takes."""


RUN_TIME = _RunTime()
BlockDim = int | _RunTime


def _order(launch: Launch) -> tuple[bool, str, int, int]:
    """Library and application code first, tests last: a wrapper that tests also call is reported
    where the product calls it."""
    file, call = launch.origin
    return is_test_file(file), file.path, call.span.line, call.span.col


def _sort_key(value: BlockDim) -> tuple[int, int]:
    return (1, 0) if isinstance(value, _RunTime) else (0, value)


def _shown(value: BlockDim) -> str:
    return "computed at run time" if isinstance(value, _RunTime) else str(value)


def _phrase(value: BlockDim) -> str:
    return "a block_dim computed at run time" if isinstance(value, _RunTime) else f"block_dim {value}"


def _reference(values: Counter, entries: list[tuple[Launch, BlockDim]], launch_default: int) -> BlockDim:
    """The launch default (256) when any launch of the module uses it, else the most common value
    (ties: the first launch's); a run-time value is never the reference."""
    if launch_default in values:
        return launch_default
    first = entries[0][1]
    known = [v for v in values if not isinstance(v, _RunTime)] or list(values)
    return max(known, key=lambda v: (values[v], v == first))

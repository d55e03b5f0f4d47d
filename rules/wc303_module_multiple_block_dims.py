from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import Any

from warplint.diagnostic import Related, Span
from warplint.index import Launch, Project, is_test_file
from warplint.model import NO_SPAN, FileModel, Value
from warplint.rule import Report, Rule
from warplint.semantic.values import Const, PerProcess, Unknown, ValueSet


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
    The reference size is the launch default 256 when any launch of the module uses it, else the most
    common value; each other value is one more build of the module. Each place that launches the module
    at another value is one finding (through a wrapper, at the call of the wrapper; a launch in a loop
    that takes its size from the loop's target, at the `for` header that pairs kernels with sizes), with
    the other places as related locations. A launch whose `block_dim` is only partly known (a helper
    that returns 64 or something the layer cannot follow) counts with its known values, reported with
    medium confidence when only such values prove the second size; launches whose `block_dim` is not
    known at all (an external call, an attribute the layer does not follow) are left out, and so are
    launches that can only run on the CPU (the semantic layer's devices: `device="cpu"` followed like
    any value, `wp.ScopedDevice("cpu")`, `wp.set_device("cpu")`, the callers' default device, a launch
    under `if device.is_cpu:`) and values only the CPU takes: the CPU ignores `block_dim`. Those are `1`
    in `256 if device.is_cuda else 1` (any spelling of the test: `"cuda" in str(device)`, `device ==
    "cpu"`, `str(device).startswith("cuda")`, `wp.get_device(d).is_cuda`, `not`/`and` of them; through a
    local or a module-level constant too), and a `bs = 1` that a later `bs = 128` under `if
    device.is_cuda and c:` always replaces where the launch runs (under `if c:`). A launch a test
    expects to fail its own checks (the last statement of `with pytest.raises(ValueError):` /
    `self.assertRaises(ValueError)`: a `block_dim` over 1024 on the CPU, a negative `dim`) loads nothing
    and is left out; one expected to fail later (a CUDA launch error, a `RuntimeError`) builds the
    module first and counts. A module holding a single kernel is not reported: the extra build is that
    kernel's own cost, not the module's. `launch_tiled` requires `block_dim`, so it is never defaulted.
    Sizes that vary per process, not within one, are one build in each process and not reported: asv
    runs each benchmark method in a process of its own (after its class's `setup`) and each combination
    of the class's `params` in another, so `block_dim=block_dim` from `params = [64, 128]` is one size per
    process. The same sizes looped over inside one benchmark method, or a `setup` that launches the module
    at another size in that process, are still reported.
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
    def _launches_by_module(project: Project) -> dict[str, list[tuple[Launch, BlockDim, bool]]]:
        """(launch, block size, partial) per module: ``partial`` when the launch's block sizes also hold one the
        layer cannot tell; its known sizes are still sizes it launches at, evidence with less confidence."""
        candidates: dict[str, list[tuple[Launch, BlockDim, bool]]] = {}
        for launch in project.all_launches():
            if launch.module.startswith("unique:") or launch.call.has_star_args:
                continue
            if launch.block_dim is None and launch.call.callee.endswith("launch_tiled"):
                continue  # launch_tiled picks its block size from the tiles
            sizes = _each_size(launch.block_dims)
            partial = any(isinstance(v, Unknown) for v in sizes)
            for value in sizes:
                if isinstance(value, Unknown):
                    continue  # not known statically: neither a variant nor the reference
                dim: BlockDim = value.value if isinstance(value, Const) else RUN_TIME  # type: ignore[assignment]
                candidates.setdefault(launch.module, []).append((launch, dim, partial))
        by_module: dict[str, list[tuple[Launch, BlockDim, bool]]] = {}
        for module, entries in candidates.items():
            # Where a launch can run is the costly question: asked only in modules launched at two sizes
            # before it is asked (dropping CPU-only launches can only take sizes away).
            if len({v for _, v, _ in entries}) < 2:
                continue
            kept = [entry for entry in entries if project.can_run_on_cuda(entry[0])]  # memoised per launch
            if kept:
                by_module[module] = sorted(kept, key=lambda e: (*_order(e[0]), _sort_key(e[1])))
        return by_module

    def check_project(self, project: Project) -> Iterator[tuple[FileModel, Report]]:
        for module, entries in sorted(self._launches_by_module(project).items()):
            values = Counter(v for _, v, _ in entries)
            if len(values) < 2 or len(project.kernels_of_module(module)) < 2:
                continue
            launches = {id(launch): launch for launch, _, _ in entries}.values()
            if not project.several_block_dims_in_one_process(launches):
                continue  # the sizes are other processes' (asv's `params`, its benchmarks): one build in each
            reference = _reference(values, entries, project.warp.launch_block_dim)
            reference_launch = next(launch for launch, v, partial in sorted(
                entries, key=lambda e: e[2]) if v == reference)
            reference_known = any(v == reference and not partial for _, v, partial in entries)
            # One finding per place that launches the module at an odd size (a wrapper call passing a variable
            # that can be 64 or 128 is one place): each is where a user changes the size.
            sites: dict[tuple[bool, tuple[str, int, int]], list[tuple[BlockDim, Launch, bool]]] = {}
            for launch, value, partial in entries:
                if value != reference and not any(v == value for v, _, _ in sites.get(_order(launch), [])):
                    sites.setdefault(_order(launch), []).append((value, launch, partial))
            ref_file, ref_call = reference_launch.origin
            shown_all = [_shown(v) for v in sorted(values, key=_sort_key)]
            for key, odds in sites.items():
                launch = odds[0][1]
                origin_file, origin_call = launch.origin
                anchor = _edited_value(project, launch) or origin_call.span
                related = [Related(ref_file.path, ref_call.span,
                                   f"`{reference_launch.kernel.name}` launched at block_dim {_shown(reference)}")]
                if anchor is not origin_call.span:
                    related.append(Related(origin_file.path, origin_call.span, "the launch at that size"))
                if launch.site is not None:
                    related.append(Related(launch.file.path, launch.call.span, "the launch inside the wrapper"))
                for other_key, others in sites.items():
                    if other_key != key and len(related) < 8:
                        other_file, other_call = others[0][1].origin
                        related.append(Related(other_file.path, other_call.span,
                                               f"also launched at {' or '.join(_phrase(v) for v, _, _ in others)}"))
                sizes = [_shown(v) for v, _, _ in odds]
                here = "block_dim " + (sizes[0] if len(sizes) == 1 else f"{', '.join(sizes[:-1])} or {sizes[-1]}")
                named = "this file's module" if module == origin_file.module else f"module `{module}`"
                # known sizes of a launch whose other sizes are not known: it may not take them on every run
                confident = reference_known and any(not partial for _, _, partial in odds)
                extra: dict[str, Any] = {} if confident else {"confidence": "medium"}
                yield origin_file, self.report(
                    anchor,
                    f"{named} is launched at {here} here, {_shown(reference)} elsewhere, a build each; use one "
                    "block_dim",
                    related=(*related, Related(
                        origin_file.path, anchor, f"module `{module}` is launched at block_dim {', '.join(shown_all)}: "
                                                  "on CUDA the whole module compiles once per block_dim; give the "
                                                  "kernels that need another block size their own module")),
                    module=module,
                    kernel=launch.kernel.name,
                    block_dim=", ".join(_shown(v) for v, _, _ in odds),
                    block_dims=shown_all,
                    function=origin_call.ctx.scope,
                    **extra,
                )


def _each_size(block_dims: ValueSet) -> ValueSet:
    """The sizes a launch can take: a size chosen per process (asv's ``params``) counts as each of its choices;
    whether two of them meet in one process is ``several_in_one_process``'s question."""
    return ValueSet.union(v.choices if isinstance(v, PerProcess) else ValueSet.of(v) for v in block_dims)


def _edited_value(project: Project, launch: Launch) -> Span | None:
    """A launch in a loop that takes its size from the loop's target (``for k, bd in ((a, 64), (b, 128)):``)
    is changed where the loop pairs kernels with sizes: the ``for`` header, not the launch."""
    value = launch.block_dim
    if launch.site is not None or not launch.call.ctx.in_loop or value is None or value.kind != "name" \
            or not value.local:
        return None
    loops = [a for a in project.name_assignments(launch.file, launch.call.ctx.scope, value.text)
             if _loop_target(a.value) and a.span != NO_SPAN]
    return loops[0].span if len(loops) == 1 else None


def _loop_target(value: Value) -> bool:
    """A ``for`` target: an element of the iterable, or one part of an unpacked element."""
    return value.kind == "element" or (value.kind == "subscript" and value.base is not None
                                       and value.base.kind == "element")


class _RunTime:
    """A block_dim computed at run time: one more variant per value it takes."""


RUN_TIME = _RunTime()
BlockDim = int | _RunTime


def _order(launch: Launch) -> tuple[bool, tuple[str, int, int]]:
    """Library and application code first, tests last: a wrapper that tests also call is reported
    where the product calls it."""
    file, call = launch.origin
    return is_test_file(file), Project.place(file, call.span)


def _sort_key(value: BlockDim) -> tuple[int, int]:
    return (1, 0) if isinstance(value, _RunTime) else (0, value)


def _shown(value: BlockDim) -> str:
    return "computed at run time" if isinstance(value, _RunTime) else str(value)


def _phrase(value: BlockDim) -> str:
    return "a block_dim computed at run time" if isinstance(value, _RunTime) else f"block_dim {value}"


def _reference(values: Counter, entries: list[tuple[Launch, BlockDim, bool]], launch_default: int) -> BlockDim:
    """The launch default (256) when any launch of the module uses it, else the most common value
    (ties: the first launch's); a run-time value is never the reference."""
    if launch_default in values:
        return launch_default
    first = entries[0][1]
    known = [v for v in values if not isinstance(v, _RunTime)] or list(values)
    return max(known, key=lambda v: (values[v], v == first))

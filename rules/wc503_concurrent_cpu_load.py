from __future__ import annotations

from collections.abc import Iterator

from warplint.diagnostic import Fix, Related
from warplint.edits import replace
from warplint.index import Project
from warplint.model import FileModel, Value
from warplint.names import is_warp
from warplint.rule import Report, Rule
from warplint.warp_version import CPU_PARALLEL_LOAD_FIXED_MINOR

# The examples run against Warp 1.16 (the project's virtualenv says so): 1.17 fixed the race.
_ON_WARP_1_16 = (
    "# file: .venv/lib/python3.11/site-packages/warp_lang-1.16.0.dist-info/METADATA\n"
    "Metadata-Version: 2.1\nName: warp-lang\nVersion: 1.16.0\n"
)

# (device, max_workers) positions: force_load(device, modules, block_dim, max_workers),
# load_module(module, device, recursive, block_dim, max_workers).
_LOADS = ("force_load", "load_module")


class ConcurrentCpuLoad(Rule):
    """Modules are loaded in parallel (`max_workers` > 1) on a device list that can include the CPU.

    ## Why
    `wp.force_load`/`wp.load_module` with `max_workers` > 1 build the (device, module)
    pairs on a thread pool. First loads of several CPU modules at once can lose kernels
    ("Failed to find module" at the next launch), so a warm-up meant to save time
    makes the program fail intermittently (reproduced with Warp 1.16: 2 of 12 fresh
    processes that force-load four CPU modules on four threads lost a kernel). Warp
    1.17 fixed the race (its tests add the regression test
    `test_force_load_parallel_cpu_cold_start_kernel_lookup`; the same program passed 12
    of 12 runs), so nothing is reported when the project runs on Warp 1.17 or later
    (docs/warp-versions.md says how the version is found). `device=None` (the default)
    means every device, the CPU included. `wp.config.load_module_max_workers = N` (N > 1, or `None`,
    which means `min(os.cpu_count(), 4)`) turns parallel loading on for every later
    preload that does not pass `max_workers`, whatever its device.

    ## Fix
    Upgrade to Warp 1.17 or later. Or preload CUDA devices only in parallel
    (`device="cuda:0"` or a list of CUDA devices), and load CPU modules serially
    (`max_workers=0`, the default of `wp.config.load_module_max_workers`).

    Automatic fix (safe): on a `force_load`/`load_module` call, `--fix` replaces the
    `max_workers` argument with `0`: the same modules are built, one after the
    other. A `wp.config.load_module_max_workers` assignment is left to you.

    ## Limits
    A call is reported only when two CPU loads can overlap: `force_load` without
    `modules` (every registered module) or with a literal list of two or more (also
    through names: locals, parameters, module constants, helper returns; every
    binding must be such a list), or `load_module(..., recursive=True)`. Module
    lists built at run time are not guessed.
    Devices held in variables (`device=dev`) are not guessed; `max_workers` must resolve
    to a literal (constants are followed across files).
    """

    code = "WC503"
    name = "concurrent-cpu-load"
    mechanism = "CS-8"
    summary = "Parallel preloads (`max_workers` > 1) that can include the CPU may lose kernels."
    confidence = "high"

    invalid = (
        "import warp as wp\nimport app.a, app.b\n"
        "wp.force_load(modules=[wp.get_module('app.a'), wp.get_module('app.b')], max_workers=4)\n"
        + _ON_WARP_1_16,
        "import warp as wp\nwp.config.load_module_max_workers = 8\n" + _ON_WARP_1_16,
    )
    valid = (
        "import warp as wp\nimport app.a, app.b\n"
        "wp.force_load(device='cuda:0', modules=[wp.get_module('app.a'), wp.get_module('app.b')], max_workers=4)\n"
        + _ON_WARP_1_16,
        "import warp as wp\nwp.config.load_module_max_workers = 0\n" + _ON_WARP_1_16,
        "import warp as wp\nwp.config.load_module_max_workers = 8\n" + _ON_WARP_1_16.replace("1.16", "1.17"),
    )

    def check(self, file: FileModel, project: Project) -> Iterator[Report]:
        warp = project.warp
        if warp.cpu_parallel_load_fixed:
            return  # the race is fixed in the Warp this project runs against
        fixed = f"; fixed in Warp {CPU_PARALLEL_LOAD_FIXED_MINOR}, the project's is {warp.label}"
        for call in file.calls:
            if not is_warp(call.callee, *_LOADS) or call.has_star_args:
                continue
            short = call.callee.rpartition(".")[2]
            found, workers = project.constant(file, call.bound("max_workers"), call.ctx.scope)
            if not found or not isinstance(workers, int) or isinstance(workers, bool) or workers <= 1:
                continue
            if not self._several_modules(project, file, call, short):
                continue
            device = call.bound("device")
            if not self._can_be_cpu(project, file, call.ctx.scope, device):
                continue
            all_devices = device is None or (device.kind == "const" and device.const is None)
            where = "every device, the CPU included" if all_devices else "the CPU"
            # Safe: the same modules are built, one after the other (Warp loads serially for max_workers <= 1).
            given = call.bound("max_workers")
            serial = replace(given.span, "0") if given is not None else None
            yield self.report(
                call.span,
                f"`{short}()` builds CPU modules on {workers} threads, which can lose kernels in {warp.label}; "
                "load the CPU serially",
                related=(Related(file.path, call.span,
                                 f"it builds modules on {workers} threads on {where}: concurrent first CPU loads can "
                                 f"lose kernels ('Failed to find module'){fixed}; preload CUDA devices in parallel "
                                 "and the CPU serially (`max_workers=0`)"),),
                fix=Fix("Load serially: max_workers=0", (serial,)) if serial is not None else None,
                function=call.ctx.scope,
                warp_version=warp.version,
            )
        for assignment in project.events(file).config_assignments:
            if assignment.name != "load_module_max_workers":
                continue
            found, workers = project.constant(file, assignment.value, assignment.ctx.scope)
            if not found or not (workers is None or (isinstance(workers, int) and workers > 1)):
                continue
            shown = "None (min(os.cpu_count(), 4))" if workers is None else str(workers)
            yield self.report(
                assignment.span,
                f"`load_module_max_workers` loads CPU modules in parallel, which can lose kernels in {warp.label}; "
                "leave it unset",
                related=(Related(file.path, assignment.span,
                                 f"`load_module_max_workers = {shown}` makes every later `force_load()`/"
                                 "`load_module()` without `max_workers` build in parallel, CPU modules included, "
                                 f"where concurrent first loads can lose kernels{fixed}; pass `max_workers` only to "
                                 "CUDA-only preloads"),),
                function=assignment.ctx.scope,
                option="load_module_max_workers",
                warp_version=warp.version,
            )

    @staticmethod
    def _several_modules(project: Project, file: FileModel, call, short: str) -> bool:
        if short == "load_module":
            found, recursive = project.constant(file, call.bound("recursive"), call.ctx.scope)
            return found and bool(recursive)
        modules = call.bound("modules")
        if modules is None or (modules.kind == "const" and modules.const is None):
            return True  # every registered module, Warp's own included
        # A list literal (or a name bound to list literals, followed by the evaluator) of several modules;
        # a list of unknown length may hold one module (serial): not guessed.
        sources = project.sources(file, modules, call.ctx.scope)
        return bool(sources) and all(
            s.complete and not s.attrs and s.value.kind == "seq" and len(s.value.items) > 1 for s in sources
        )

    def _can_be_cpu(self, project: Project, file: FileModel, scope: str, device: Value | None) -> bool:
        if device is None:
            return True
        if device.kind == "seq":
            return any(self._can_be_cpu(project, file, scope, item) for item in device.items if item.kind != "seq")
        if device.kind == "call" and is_warp(device.ref, "get_device") and device.args:
            device = device.args[0]
        found, value = project.constant(file, device, scope)
        if not found:
            return False
        return value is None or (isinstance(value, str) and value.startswith("cpu"))

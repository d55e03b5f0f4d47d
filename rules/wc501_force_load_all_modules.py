from __future__ import annotations

from collections.abc import Iterator

from warplint.diagnostic import Applicability, Fix, Related
from warplint.edits import add_argument, replace
from warplint.index import UNIQUE, Project
from warplint.model import Call, FileModel
from warplint.rule import Report, Rule


class ForceLoadAllModules(Rule):
    """`wp.force_load()` without `modules=` loads every registered Warp module.

    ## Why
    With `modules=None` (the default) Warp builds **every** module in its registry:
    Warp's own (`warp.utils`, `warp.math`, `warp._src.coloring` right after
    `import warp`), every `module="unique"` module, and every module of every
    library imported so far, on every device when `device` is omitted. A preload
    meant to warm up two modules can compile dozens, one at a time.

    ## Fix
    Pass the modules you launch: `wp.force_load(device="cuda:0",
    modules=[wp.get_module("app.kernels")])` (items must be `wp.Module` objects),
    or `wp.load_module("app.kernels", device=...)`.

    Automatic fix (unsafe, only with `--unsafe-fixes`): `--fix` passes
    `modules=[wp.get_module("..."), ...]` listing every module the project's
    launches use (as the project index resolves them; a script's own kernels are
    in `__main__`, the name Warp gives them when it runs). Unsafe because a module
    launched by code the index does not follow is no longer preloaded. Offered when
    the file has `import warp` (or `import warp as wp`) and some launch resolves.

    ## Limits
    Graph capture with `force_module_load=True` calls `force_load()` internally;
    that path is not reported.
    """

    code = "WC501"
    name = "force-load-all-modules"
    mechanism = "CS-13"
    summary = "`force_load()` without `modules` builds every registered module, Warp's own included."
    confidence = "high"

    invalid = (
        "import warp as wp\nwp.force_load()\n",
        "import warp as wp\nwp.force_load(device='cuda:0', modules=None)\n",
    )
    valid = (
        "import warp as wp\nimport app.kernels\n"
        "wp.force_load(device='cuda:0', modules=[wp.get_module('app.kernels')])\n",
    )

    def check(self, file: FileModel, project: Project) -> Iterator[Report]:
        for call in project.warp_calls(file, "force_load"):
            if call.has_star_args:
                continue
            modules = call.bound("modules")
            if modules is None or (modules.kind == "const" and modules.const is None):
                yield self.report(
                    call.span,
                    "`force_load()` without `modules=` builds every registered module; pass the ones you launch",
                    related=(Related(file.path, call.span, "every registered Warp module: Warp's own, every unique "
                                                           "module, every imported library's; pass "
                                                           "`modules=[wp.get_module(...)]`"),),
                    fix=self._fix(file, project, call),
                    function=call.ctx.scope,
                )

    @staticmethod
    def _fix(file: FileModel, project: Project, call: Call) -> Fix | None:
        """`modules=[wp.get_module(...), ...]` with every module the project launches (unsafe: modules
        loaded only by code the index cannot follow are no longer preloaded)."""
        warp = file.bound_name("warp")
        launched = sorted({launch.module for launch in project.all_launches() if launch.module != UNIQUE})
        if warp is None or not launched:
            return None
        # This file's own kernels are in the module Warp names after it at run time: `__main__` for a script
        run_name = project.run_name(file)
        names = sorted({run_name if name == file.module else name for name in launched})
        listed = "[" + ", ".join(f'{warp}.get_module("{name}")' for name in names) + "]"
        given = call.bound("modules")
        edit = replace(given.span, listed) if given is not None else add_argument(call, f"modules={listed}")
        if edit is None:
            return None
        title = "Preload only the launched modules: modules=[...]"
        if run_name != file.module and file.module in launched:
            title += " (this file runs as __main__, the name of its kernels' module)"
        return Fix(title, (edit,), Applicability.UNSAFE)

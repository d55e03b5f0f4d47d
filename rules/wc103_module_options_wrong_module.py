from __future__ import annotations

from collections.abc import Iterator

from warplint.diagnostic import Related
from warplint.index import Project
from warplint.model import Call, FileModel
from warplint.rule import Report, Rule

# The calls whose `module` argument defaults to the module the call is written in.
_MODULE_OPTION_CALLS = ("set_module_options", "get_module_options")
_MAX_CALLERS = 3


def _defines_kernels(file: FileModel) -> bool:
    if file.kernels:
        return True
    # warp.fem integrands become kernels of the module that defines them.
    return any("integrand" in d.rpartition(".")[2] for fn in file.functions.values() for d in fn.decorators)


class ModuleOptionsWrongModule(Rule):
    """`wp.set_module_options()` without `module=` in a file that defines no kernels.

    ## Why
    Without `module=`, `set_module_options` and `get_module_options` target the Warp
    module named after the Python module **where the call is written** (Warp reads
    the `__name__` of the calling frame's globals), not the module of whoever calls
    the enclosing function. A helper `configure()` in `app/config.py` therefore
    creates and configures an empty Warp module `app.config`; the kernels in
    `app/kernels.py` never see the options (warp-facts §2, E9). `get_module_options()`
    likewise reads the helper's own, empty module.

    ## Fix
    Name the module: `wp.set_module_options({...}, module="app.kernels")` (a name, a
    `wp.Module`, or the imported Python module), or move the call into the file
    that defines the kernels.

    ## Limits
    Kernels in other files that name this file's module (`@wp.kernel(module="pkg.tuning")`,
    through a constant or variable too) do receive the options: then nothing is reported.
    A file counts as defining kernels when it has `@wp.kernel`, `wp.kernel(f)`,
    `wp.Kernel(...)` or `warp.fem` integrands; kernels created by other indirect
    means are not seen, which could make a correct call look wrong. Calls that pass
    `**kwargs` are skipped. Module-scope calls are not reported: in a file without
    kernels they are copy-pasted boilerplate that configures nothing, but no caller
    expects them to configure its kernels (newton has several, next to `wp.struct`s).
    """

    code = "WC103"
    name = "module-options-wrong-module"
    mechanism = "CS-3b"
    summary = "`set_module_options()` without `module=` in a file with no kernels configures that file's empty module."
    confidence = "high"

    invalid = (
        "import warp as wp\ndef configure():\n    wp.set_module_options({'enable_backward': False})\n"
        "# file: main.py\nimport warp as wp\nimport example\n@wp.kernel\ndef k(x: wp.array(dtype=float)):\n"
        "    x[0] = 1.0\nexample.configure()\n",
    )
    valid = (
        "import warp as wp\ndef configure():\n    wp.set_module_options({'enable_backward': False}, module='main')\n",
        "import warp as wp\nwp.set_module_options({'enable_backward': False})\n@wp.kernel\n"
        "def k(x: wp.array(dtype=float)):\n    x[0] = 1.0\n",
    )

    def check(self, file: FileModel, project: Project) -> Iterator[Report]:
        if _defines_kernels(file) or project.kernels_of_module(file.module):
            return  # kernels elsewhere may join this file's module by name: `module="pkg.tuning"`
        for call in project.warp_calls(file, *_MODULE_OPTION_CALLS):
            # Module-scope calls in a kernel-less file are boilerplate no-ops (nothing there to configure);
            # the defect is a helper whose caller expects its own kernels configured.
            if call.has_star_args or not call.ctx.scope:
                continue
            api = call.callee.rpartition(".")[2]
            if call.bound("module") is not None:
                continue
            if "**" in call.kwargs:  # defensive: extract drops ** arguments
                continue
            callers = self._callers(file, call, project)
            yield self.report(
                call.span,
                f"{api}() without module= targets the Warp module of {file.module}, where it is written, and that "
                "file defines no kernels: the options reach no kernel; pass module= naming the kernels' module.",
                related=callers,
                function=call.ctx.scope,
                module=file.module,
                option=api,
            )

    @staticmethod
    def _callers(file: FileModel, call: Call, project: Project) -> tuple[Related, ...]:
        fqname = Project.fqname(file, call.ctx.scope)
        sites = [(f, c) for f, c in project.callers(fqname) if f.path != file.path] or project.callers(fqname)
        name = call.ctx.scope.rpartition(".")[2]
        return tuple(Related(f.path, c.span, f"{name}() is called here") for f, c in sites[:_MAX_CALLERS])

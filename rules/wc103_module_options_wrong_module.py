from __future__ import annotations

from collections.abc import Iterator

from warplint.diagnostic import Related
from warplint.index import UNIQUE, Project
from warplint.model import Call, FileModel, Kernel, Value
from warplint.rule import Report, Rule
from warplint.warp_api import MODULE_OPTIONS_KERNELS_OVERRIDE

# The calls whose `module` argument defaults to the module the call is written in.
_MODULE_OPTION_CALLS = ("set_module_options", "get_module_options")
_MAX_CALLERS = 3


def _defines_integrands(file: FileModel) -> bool:
    # warp.fem integrands become kernels of the module that defines them.
    return any("integrand" in d.rpartition(".")[2] for fn in file.functions.values() for d in fn.decorators)


def _dict_keys(project: Project, file: FileModel, value: Value | None, scope: str) -> frozenset[str] | None:
    """The keys of a dict an expression is (a literal, or a constant bound to one, its values known or not);
    None when not known."""
    return project.values(file, value, scope).dict_keys() if value is not None else None


def _covered_keys(project: Project, file: FileModel, kernels: list[Kernel]) -> frozenset[str]:
    """The option keys every one of ``kernels`` sets for itself: through its own ``module_options=``, or as a
    per-kernel option of the same name, which Warp lays over the module's (``module options | kernel options``
    when it builds the kernel)."""
    covered: frozenset[str] | None = None
    for kernel in kernels:
        keys = _dict_keys(project, file, kernel.options.get("module_options"), kernel.ctx.scope) or frozenset()
        keys |= frozenset(k for k in kernel.options if k not in ("module", "module_options", "name"))
        keys |= frozenset(option for option, own in MODULE_OPTIONS_KERNELS_OVERRIDE.items() if own in kernel.options)
        covered = keys if covered is None else covered & keys
    return covered or frozenset()


def _lost(keys: frozenset[str] | None, covered: frozenset[str]) -> str:
    """The options the call sets that reach nothing: the keys the file's kernels do not set for themselves."""
    if not keys:
        return "the options"
    return "the options " + ", ".join(f"`{key}`" for key in sorted(keys - covered))


def _modules_phrase(project: Project, file: FileModel, kernels: list[Kernel]) -> str:
    modules = {project.kernel_module(file, k) for k in kernels}
    if modules == {UNIQUE}:
        return 'each is `module="unique"`'
    named = sorted(m for m in modules if m is not None and m != UNIQUE)
    return "they join " + (", ".join(f"`{m}`" for m in named[:3]) if named else "other modules")


class ModuleOptionsWrongModule(Rule):
    """`wp.set_module_options()` without `module=` in a file whose module no kernel lands in.

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
    Which kernels land in the file's module is the semantic layer's module membership,
    from every file of the project: kernels elsewhere that name this module
    (`@wp.kernel(module="pkg.tuning")`, through a constant or variable too) and
    `wp.kernel(f)` calls anywhere on a function `f` defined in this file (Warp puts that
    kernel into `f`'s module) receive the options: then nothing is reported. warp.fem
    integrands count as kernels of their file. A file whose kernels all land elsewhere
    (`module="unique"`, or a named module) does not define kernels for its own module:
    its calls are reported, module-scope ones too (they are meant for the kernels below
    them), except a `set_module_options` whose keys every kernel of the file
    sets for itself, through its own `module_options=` or a per-kernel option of the same
    name (`enable_backward=False`), which Warp lays over the module's, or one that overrides
    it (`grid_stride=` overrides `default_grid_stride`); the keys count when the dict's values
    are not known (`WARP_DETERMINISM_OFF = {"deterministic": wp.DeterministicMode...}`).
    Kernels created by means the layer does not follow are not seen, which could make a
    correct call look wrong. Calls that pass `**kwargs` are skipped. Module-scope calls in a
    file with no kernels at all are not reported: they are copy-pasted boilerplate that
    configures nothing, but no caller expects them to configure its kernels (newton has
    several, next to `wp.struct`s).
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
        calls = project.warp_calls(file, *_MODULE_OPTION_CALLS)
        if not calls:
            return  # asked first: the members of a file's module are a project-wide question
        if project.module_members(file.module).kernels or _defines_integrands(file):
            return  # kernels from any file land in this file's module (`module="pkg.tuning"`, `wp.kernel(f)`)
        elsewhere = list(file.kernels)  # this file's kernels, every one built in another module
        covered = _covered_keys(project, file, elsewhere)
        for call in calls:
            if call.has_star_args or call.bound("module") is not None:
                continue
            if "**" in call.kwargs:  # defensive: extract drops ** arguments
                continue
            # Module-scope calls in a file with no kernels at all are boilerplate no-ops (nothing there to
            # configure, no caller expects them to); next to kernels that all land elsewhere they are meant for
            # those kernels, and miss them.
            if not call.ctx.scope and not elsewhere:
                continue
            api = call.callee.rpartition(".")[2]
            keys = (_dict_keys(project, file, call.bound("options"), call.ctx.scope)
                    if api == "set_module_options" else None)
            if api == "set_module_options" and elsewhere and keys is not None and keys <= covered:
                continue  # each kernel sets these keys for itself (module_options=, or a kernel option)
            if elsewhere:
                where = (f"and none of its kernels is built there ({_modules_phrase(project, file, elsewhere)})"
                         if call.ctx.scope or api != "set_module_options" else
                         f"and none of the kernels below it is built there "
                         f"({_modules_phrase(project, file, elsewhere)})")
            else:
                where = "and that file defines no kernels"
            why = Related(file.path, call.span, f"it targets module `{file.module}`, of the file where it is written, "
                                                f"{where}: {_lost(keys, covered)} reach no kernel"
                                                + ("; the kernels' own `module_options=` would" if elsewhere else ""))
            yield self.report(
                call.span,
                f"`{api}()` without `module=` targets module `{file.module}`, which has no kernels; pass `module=`",
                related=(why, *self._callers(file, call, project), *(
                    Related(file.path, k.span, f"`{k.name}` is built in another module") for k in elsewhere[:3])),
                function=call.ctx.scope,
                module=file.module,
                option=api,
            )

    @staticmethod
    def _callers(file: FileModel, call: Call, project: Project) -> tuple[Related, ...]:
        fqname = Project.fqname(file, call.ctx.scope)
        sites = [(f, c) for f, c in project.callers(fqname) if f.path != file.path] or project.callers(fqname)
        name = call.ctx.scope.rpartition(".")[2]
        return tuple(Related(f.path, c.span, f"`{name}()` is called here") for f, c in sites[:_MAX_CALLERS])

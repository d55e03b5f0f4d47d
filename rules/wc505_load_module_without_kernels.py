from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from warplint.diagnostic import Related
from warplint.index import Project
from warplint.model import FileModel, Value
from warplint.names import dotted_name, is_warp
from warplint.rule import Report, Rule

_WARP_DEFINERS = ("kernel", "func", "func_native", "func_grad", "func_replay", "struct", "overload", "Kernel")
# Calls that register (create) the calling file's Warp module without defining anything in it.
_REGISTERS_OWN_MODULE = ("set_module_options", "get_module_options")


class _ClassDecorators(cst.CSTVisitor):
    """Dotted names of class decorators (`@wp.struct class S:`), which the model does not keep."""

    def __init__(self) -> None:
        self.facts: list[str] = []  # stored in model.rule_facts["WC505"] by the engine

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        for dec in node.decorators:
            expr = dec.decorator.func if isinstance(dec.decorator, cst.Call) else dec.decorator
            name = dotted_name(expr)
            if name is not None:
                self.facts.append(name)


class LoadModuleWithoutKernels(Rule):
    """`wp.load_module()` without a module, written in a file that defines no Warp code.

    ## Why
    With no `module` argument (or `module=None`) `wp.load_module` loads the module of
    the file **where the call is written**, not its caller's and not the kernels'. A
    loader or warm-up helper that defines no kernels, functions or structs itself has
    no registered Warp module, so the call raises `RuntimeError: Module '...' does not
    contain any Warp kernels, functions, or structs` at run time. If the file did
    register its module (through `wp.set_module_options`/`wp.get_module` without a
    module), the call compiles an empty native module instead: time spent, nothing
    preloaded.

    ## Fix
    Name the module to load: `wp.load_module("app.kernels", device=...)`, or pass the
    imported Python module (`wp.load_module(app.kernels)`).

    ## Limits
    A file counts as defining Warp code when it has any decorator from the `warp`
    package (`@wp.kernel`, `@wp.func`, `@wp.struct`, `@wp.overload`, `warp.fem`'s
    `@fem.integrand`, ...) or a `wp.kernel(...)`/`wp.func(...)`/`wp.struct(...)` call,
    anywhere (kernels made by factories included).
    """

    code = "WC505"
    name = "load-module-without-kernels"
    mechanism = "CS-13"
    summary = "`load_module()` with no module in a file without Warp code raises (or compiles an empty module)."
    confidence = "high"

    invalid = (
        "import warp as wp\nimport app.kernels\n\ndef warm_up(device):\n    wp.load_module(device=device)\n",
        "import warp as wp\nwp.set_module_options({'fast_math': True})\nwp.load_module(None, device='cuda:0')\n",
    )
    valid = (
        "import warp as wp\nimport app.kernels\n\ndef warm_up(device):\n"
        "    wp.load_module('app.kernels', device=device)\n",
        "import warp as wp\n\n@wp.kernel\ndef k(x: wp.array(dtype=float)):\n    pass\n\nwp.load_module(device='cpu')\n",
    )

    def collect(self) -> cst.CSTVisitor:
        return _ClassDecorators()

    def check(self, file: FileModel, project: Project) -> Iterator[Report]:
        loads = [
            c for c in project.warp_calls(file, "load_module")
            if not c.has_star_args
            and self._absent(project, file, c.bound("module"), c.ctx.scope)
        ]
        if not loads or self._defines_warp_code(file):
            return
        registered = any(
            (is_warp(c.callee, *_REGISTERS_OWN_MODULE) and (
                self._absent(project, file, c.bound("module"), c.ctx.scope)
                or self._names_own_module(project, file, c.bound("module"), c.ctx.scope)))
            or (is_warp(c.callee, "get_module") and self._names_own_module(project, file, c.bound("name"), c.ctx.scope))
            for c in file.calls
        )
        for call in loads:
            if registered:
                message = (f"`load_module()` without a module loads `{file.module}`, which has no kernels; name the "
                           "module")
                why = ("the module of the file where it is written holds no kernels (only options): it compiles an "
                       "empty module")
            else:
                message = (f"`load_module()` without a module loads `{file.module}`, which has no kernels (a "
                           "RuntimeError); name the module")
                why = ("the file where it is written defines no Warp kernels, functions or structs: it raises "
                       "RuntimeError at run time")
            yield self.report(call.span, message, related=(Related(file.path, call.span, why),), module=file.module,
                              function=call.ctx.scope)

    @staticmethod
    def _absent(project: Project, file: FileModel, value: Value | None, scope: str) -> bool:
        """No module given: absent, or a value that can only be None."""
        return value is None or project.constant(file, value, scope) == (True, None)

    @staticmethod
    def _names_own_module(project: Project, file: FileModel, value: Value | None, scope: str) -> bool:
        """The value designates this file's module and nothing else (a string, ``__name__``, followed)."""
        if value is None:
            return False
        names, complete = project.module_names(file, value, scope)
        return complete and names == {file.module}

    @staticmethod
    def _defines_warp_code(file: FileModel) -> bool:
        if file.kernels:
            return True
        # Any Warp decorator counts: warp.fem's @integrand/@operator register wp.funcs in the file's module too.
        if any(is_warp(d) for fn in file.functions.values() for d in fn.decorators):
            return True
        if any(is_warp(c.callee, *_WARP_DEFINERS) for c in file.calls):
            return True
        aliases = _import_aliases(file)
        for dotted in file.rule_facts.get(LoadModuleWithoutKernels.code, ()):
            head, _, rest = dotted.partition(".")
            target = aliases.get(head)
            if target is None:
                continue
            resolved = f"{target}.{rest}" if rest else target
            if resolved.startswith("warp.") or resolved == "warp":
                return True
        return False


def _import_aliases(file: FileModel) -> dict[str, str]:
    aliases: dict[str, str] = {}
    for imp in file.imports:
        if imp.names:
            for name, bound in imp.names:
                aliases[bound] = f"{imp.module}.{name}"
        elif imp.alias:
            aliases[imp.alias] = imp.module if imp.alias != imp.module.partition(".")[0] else imp.alias
    return aliases

from __future__ import annotations

from collections.abc import Iterator

from warplint.diagnostic import Applicability, Fix, Related, Span
from warplint.edits import replace
from warplint.index import Project
from warplint.model import FileModel, Function
from warplint.rule import Report, Rule


class UniqueModuleFactoryDefault(Rule):
    """A kernel factory defaults its kernels to `module="unique"`.

    ## Why
    `module="unique"` gives each kernel a private Warp module: one code generation,
    one native compile and one load per kernel, each paying the fixed per-module cost.
    As a **default** of a factory parameter it applies to every caller that did not
    think about it, including callers that create stable kernels (the same content at
    every call) that would share one module and one build. The unique modules also
    live in the registry forever, so `force_load()` and graph capture build all of them.

    ## Fix
    Default to a shared module (`module=None`, i.e. the factory's file, or a
    descriptive name) and let the callers that really need per-variant isolation
    (runtime specialisations, generic kernels, odd `block_dim`s) pass
    `module="unique"` explicitly.

    Automatic fix (unsafe, only with `--unsafe-fixes`): `--fix` changes the default
    to `None`. Unsafe because callers that pass nothing now share one module: a
    variant that needed isolation must then pass `module="unique"` itself.

    ## Limits
    Only parameters that reach `module=` of a kernel created in the same function are
    considered. Whether unique modules are right for a given caller is a design call;
    `--confirm` counts the modules actually built.
    """

    code = "WC301"
    name = "unique-module-factory-default"
    mechanism = "CS-9"
    summary = 'A kernel factory parameter defaults `module` to "unique": one module and one build per kernel.'
    confidence = "medium"

    invalid = (
        "import warp as wp\n"
        "def make_scale(factor, module='unique'):\n"
        "    @wp.kernel(module=module)\n"
        "    def scale(a: wp.array(dtype=float)):\n"
        "        a[wp.tid()] = a[wp.tid()] * factor\n"
        "    return scale\n",
    )
    valid = (
        "import warp as wp\n"
        "def make_scale(factor, module=None):\n"
        "    @wp.kernel(module=module)\n"
        "    def scale(a: wp.array(dtype=float)):\n"
        "        a[wp.tid()] = a[wp.tid()] * factor\n"
        "    return scale\n",
    )

    def check(self, file: FileModel, project: Project) -> Iterator[Report]:
        reported: set[tuple[str, str]] = set()
        for kernel in file.kernels:
            value = kernel.module_value
            if value is None or value.kind != "name" or not value.local or not kernel.ctx.scope:
                continue
            function = self._owner(file, kernel.ctx.scope, value.text)
            if function is None:
                continue
            for param in function.params:
                if param.name != value.text or param.default is None:
                    continue
                rebound = any(
                    a.ctx.scope == function.qualname and a.target.kind == "name" and a.target.text == param.name
                    for a in file.assignments
                )
                if param.default.kind == "const" and param.default.const == "unique" and not rebound:
                    if (function.qualname, param.name) in reported:
                        continue
                    reported.add((function.qualname, param.name))
                    yield self.report(
                        param.default.span,
                        f'`{function.name}()` defaults `{param.name}="unique"`, a module per kernel it makes; '
                        "default to a shared module",
                        related=(Related(file.path, param.default.span,
                                         f"every kernel it makes (`{kernel.name}`) gets its own Warp module and its "
                                         'own build; callers that need isolation can pass `module="unique"`'),),
                        fix=self._fix(param.default.span, param.name),
                        function=function.qualname, kernel=kernel.name,
                    )

    @staticmethod
    def _fix(default: Span, name: str) -> Fix | None:
        """The default becomes None, the factory's file module (unsafe: callers that pass nothing now share
        one module, and a variant that relied on isolation may need module="unique" passed)."""
        edit = replace(default, "None")
        return Fix(f"Default {name}=None (a shared module)", (edit,), Applicability.UNSAFE) if edit else None

    @staticmethod
    def _owner(file: FileModel, scope: str, name: str) -> Function | None:
        """The function (the kernel's scope or an enclosing one) whose parameter ``name`` is."""
        while scope:
            function = file.functions.get(scope)
            if function is None:
                return None
            if any(p.name == name for p in function.params):
                return function
            if name in function.locals:
                return None
            scope = function.ctx.scope
        return None

from __future__ import annotations

from collections.abc import Iterator

from warplint.diagnostic import Applicability, Fix, Related, Span
from warplint.edits import replace
from warplint.index import Project
from warplint.model import FileModel, Function, Kernel, Param
from warplint.rule import Report, Rule
from warplint.semantic.variants import CallContents

# what the project's calls tell of a kernel's content, for a kernel not proven to vary
_MADE_FROM = {
    CallContents.ONE: "with one content over the project's calls",
    CallContents.NOT_CALLED: "by callers outside the project",
    CallContents.UNKNOWN: "from values not known statically, which may be one value at every call",
}


def _factory(default: str) -> str:
    """The examples' kernel factory, its ``module`` parameter defaulting to ``default``."""
    return ("import warp as wp\n"
            f"def make_scale(factor, module={default}):\n"
            "    @wp.kernel(module=module)\n"
            "    def scale(a: wp.array(dtype=float)):\n"
            "        a[wp.tid()] = a[wp.tid()] * factor\n"
            "    return scale\n")


class UniqueModuleFactoryDefault(Rule):
    """A kernel factory defaults its kernels to `module="unique"`.

    ## Why
    `module="unique"` gives each kernel a private Warp module: one code generation,
    one native compile and one load per kernel, each paying the fixed per-module cost.
    As a **default** of a factory parameter it applies to every caller that did not
    think about it, including callers that create stable kernels (the same content at
    every call) that would share one module and one build. The unique modules also
    live in the registry forever, so `force_load()` and graph capture build all of them.

    A factory whose calls in the project make kernels of different contents (run-time
    specialisations: `make(2.0)` and `make(3.0)`, `make(wp.float32)` and `make(wp.float64)`,
    or one call per item of a loop over literals) is not reported: each of its kernels is a new build wherever it lands,
    and a module of its own keeps that build from rebuilding a shared module.

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

    The factory is left alone only on proof that its contents differ: two distinct known
    values (literals, functions, Warp types: `wp.vec3` and `wp.vec3f` are one type) reach
    what the kernel reads, over the project's calls. A factory nobody in the project calls
    is reported (a library's users choose what they pass). So is one whose calls pass
    values not known statically (`x.shape[0]`, an argument from outside the project, the
    `dtype` of an array made at run time): they may be the same value on
    every call, so a run-time value alone is no proof of specialisation, and a
    factory called with one literal and one such value is reported too. A factory
    making several kernels is reported when any of them has one content.
    """

    code = "WC301"
    name = "unique-module-factory-default"
    mechanism = "CS-9"
    summary = 'A kernel factory parameter defaults `module` to "unique": one module and one build per kernel.'
    confidence = "medium"

    invalid = (
        _factory("'unique'"),
        _factory("'unique'") + "double = make_scale(2.0)\ndouble_again = make_scale(2.0)\n",
    )
    valid = (
        _factory("None"),
        _factory("'unique'") + "half = make_scale(0.5)\ndouble = make_scale(2.0)\n",
    )

    def check(self, file: FileModel, project: Project) -> Iterator[Report]:
        defaults: dict[tuple[str, str], tuple[Function, Param, list[Kernel]]] = {}
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
                    defaults.setdefault((function.qualname, param.name), (function, param, []))[2].append(kernel)
        for function, param, kernels in defaults.values():
            # run-time specializations: each call makes a kernel of its own content, which a unique module is for
            judged = [(k, project.contents_across_calls(file, k)) for k in kernels]
            stable = [(k, contents) for k, contents in judged if contents is not CallContents.SEVERAL]
            if not stable or param.default is None:
                continue
            # the finding stands where the edit is (the default); the evidence is each kernel of one content
            # it makes, which a shared module would build with the rest
            yield self.report(
                param.default.span,
                f'`{function.name}()` defaults `{param.name}="unique"`, a module per kernel it makes; '
                "default to a shared module",
                related=tuple(Related(file.path, kernel.span,
                                      f"`{kernel.name}` is made here {_MADE_FROM[contents]}, in a "
                                      "Warp module and a build of its own; callers that need isolation can pass "
                                      '`module="unique"`') for kernel, contents in stable),
                fix=self._fix(param.default.span, param.name),
                function=function.qualname, kernel=stable[0][0].name,
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

from __future__ import annotations

from collections.abc import Iterator

from warplint.diagnostic import Related
from warplint.index import Launch, Project
from warplint.model import Call, FileModel, Kernel, Value
from warplint.names import is_warp
from warplint.rule import Report, Rule
from warplint.semantic.evaluator import Site, Source
from warplint.semantic.generics import Earlier

# Warp calls that create an array whose dtype is their `dtype=` argument (or the given positional one).
_ARRAY_MAKERS = {"array": 1, "zeros": 1, "ones": 1, "empty": 1, "full": 2, "from_numpy": 1}
_LIKE_MAKERS = ("zeros_like", "ones_like", "empty_like", "clone", "full_like")
_SCALAR_TYPES = frozenset(
    {
        "float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
        "bool", "vec2", "vec3", "vec4", "vec2f", "vec3f", "vec4f", "vec2d", "vec3d", "vec4d", "vec2h", "vec3h",
        "vec4h", "vec2i", "vec3i", "vec4i", "mat22", "mat33", "mat44", "mat22f", "mat33f", "mat44f", "mat22d",
        "mat33d", "mat44d", "quat", "quatf", "quatd", "quath", "transform", "transformf", "transformd",
        "spatial_vector", "spatial_vectorf", "spatial_vectord",
    }
)
# Python builtins Warp maps to its own scalar types when they are used as dtypes or scalar arguments.
_PYTHON_SCALARS = {"float": "warp.float32", "int": "warp.int32", "bool": "warp.bool"}


class LateGenericInstance(Rule):
    """A generic kernel gets an instance after its module was loaded: the whole module rebuilds.

    ## Why
    A kernel with `Any` parameters (`x: Any`, `wp.array(dtype=Any)`) has no code
    until it has instances, and with none it adds nothing to its module's hash. A launch
    with concrete types, or `wp.overload(kernel, [...])`, adds an instance and marks the
    module modified, so an instance made **after** the module was loaded rebuilds the
    **whole** module (every kernel in it). That happens when:

    - the kernel is launched with a second type signature (the first launch with
      `float64` after a `float32` one), and every further new type again;
    - its first launch comes after a launch of another kernel of its module (or a
      `load_module`/`force_load` of it): the module loaded without it, and its first
      instance rebuilds it. With two such kernels in a module, one of them is late;
    - `wp.overload(kernel, ...)` is called at run time (in a function, say an
      `lru_cache`d getter) after a launch of the module.

    Registering the instances at import, with `wp.overload(kernel, [...])` at module
    level (or `@wp.overload` stubs, or a module-level call of a helper that registers
    them), puts all of them into the module's first build.

    Dropping the object `wp.overload` returns is harmless in Warp 1.19: overloads are
    held strongly by the generic kernel.

    ## Fix
    Right after the kernel, register each type you launch it with:
    `wp.overload(scale, [wp.array(dtype=wp.float32), wp.float32])`, one line per type.

    ## Limits
    Types are read only where they are visible: arrays created by
    `wp.array/zeros/ones/empty/full/from_numpy(..., dtype=...)` (or `*_like` of such an
    array), scalars built with `wp.float64(...)` etc., and Python `int`/`float`
    literals, passed through `inputs=[...]`/`outputs=[...]` (or a name bound to such a
    list) of launches the project can resolve. Arguments and `dtype=` values are
    followed through local variables, parameters (per wrapper call), module constants
    and helper return values; one that can come from expressions of different or
    unknown types has no type. Arguments whose type is unknown never count as
    different, and any `wp.overload` registration of the kernel silences the
    second-type case, even one made after the first launch.

    The first-instance cases need no types. Which launch runs first is approximated by
    source order and the call graph (as for kernels defined in functions): a launch or
    load of the module earlier in the same function (not in the other branch of the same
    `if`), in a caller before the call that leads to the kernel's launch, or in a test
    the runner runs first (also before the test that calls the launching helper). Where
    nothing orders them (two entry points of a library, say) it is not reported, though
    it rebuilds whenever another kernel of the module happens to run first. A kernel
    with any `wp.overload` registration is taken to be launched with registered types:
    only its run-time registrations are checked, and when some are made at import, only
    run-time ones that write out a signature not registered at import. Not reported either: the only kernel of
    its module (a `module="unique"` kernel is one), a kernel never launched, kernels
    defined inside functions (their creation after a load is already a rebuild, reported
    on its own). A run-time `wp.overload` that raises (inside `assertRaises`, say) is
    reported all the same. One finding per kernel, at its definition, with the first two launches of different
    types, or the launch that loaded the module first and the late launch or
    `wp.overload` call, as related locations (its fix, the `wp.overload` lines, is
    written there once).
    """

    code = "WC106"
    name = "late-generic-instance"
    mechanism = "CS-6"
    summary = "A generic kernel gets a new instance after its module loaded, so the whole module rebuilds."
    confidence = "high"

    invalid = (
        "import warp as wp\nfrom typing import Any\n\n@wp.kernel\ndef scale(x: wp.array(dtype=Any), s: Any):\n"
        "    i = wp.tid()\n    x[i] = x[i] * s\n\n"
        "def run(n):\n    a = wp.zeros(n, dtype=wp.float32)\n    wp.launch(scale, dim=n, inputs=[a, 2.0])\n"
        "    b = wp.zeros(n, dtype=wp.float64)\n    wp.launch(scale, dim=n, inputs=[b, wp.float64(2.0)])\n",
        "import warp as wp\nfrom typing import Any\n\n"
        "@wp.kernel\ndef total(x: wp.array(dtype=Any), out: wp.array(dtype=Any)):\n"
        "    wp.atomic_add(out, 0, x[wp.tid()])\n\n"
        "@wp.kernel\ndef clear(x: wp.array(dtype=float)):\n    x[wp.tid()] = 0.0\n\n"
        "def run(x, out):\n    wp.launch(clear, dim=1, inputs=[out])\n"
        "    wp.launch(total, dim=x.shape[0], inputs=[x, out])\n",
        "import functools\nimport warp as wp\nfrom typing import Any\n\n"
        "@wp.kernel\ndef scale(x: wp.array(dtype=Any), s: Any):\n    x[wp.tid()] = x[wp.tid()] * s\n\n"
        "@wp.kernel\ndef clear(x: wp.array(dtype=float)):\n    x[wp.tid()] = 0.0\n\n"
        "@functools.cache\ndef scale_for(dtype):\n    return wp.overload(scale, [wp.array(dtype=dtype), dtype])\n\n"
        "def run(x, y):\n    wp.launch(clear, dim=1, inputs=[x])\n"
        "    wp.launch(scale_for(y.dtype), dim=y.shape[0], inputs=[y, 2.0])\n",
    )
    valid = (
        "import warp as wp\nfrom typing import Any\n\n@wp.kernel\ndef scale(x: wp.array(dtype=Any), s: Any):\n"
        "    i = wp.tid()\n    x[i] = x[i] * s\n\n"
        "wp.overload(scale, [wp.array(dtype=wp.float32), wp.float32])\n"
        "wp.overload(scale, [wp.array(dtype=wp.float64), wp.float64])\n\n"
        "def run(n):\n    a = wp.zeros(n, dtype=wp.float32)\n    wp.launch(scale, dim=n, inputs=[a, 2.0])\n"
        "    b = wp.zeros(n, dtype=wp.float64)\n    wp.launch(scale, dim=n, inputs=[b, wp.float64(2.0)])\n",
        "import warp as wp\nfrom typing import Any\n\n"
        "@wp.kernel\ndef total(x: wp.array(dtype=Any), out: wp.array(dtype=Any)):\n"
        "    wp.atomic_add(out, 0, x[wp.tid()])\n\n"
        "@wp.kernel\ndef clear(x: wp.array(dtype=float)):\n    x[wp.tid()] = 0.0\n\n"
        "def run(x, out):\n    wp.launch(total, dim=x.shape[0], inputs=[x, out])\n"
        "    wp.launch(clear, dim=1, inputs=[out])\n",
    )

    # ------------------------------------------------------------------ project-wide facts
    def _index(self, project: Project) -> tuple[dict[tuple[str, str], list[Launch]], set[tuple[str, str]]]:
        return project.cached((self.code, "index"), lambda: self._build_index(project))

    @staticmethod
    def _build_index(project: Project) -> tuple[dict[tuple[str, str], list[Launch]], set[tuple[str, str]]]:
        launches: dict[tuple[str, str], list[Launch]] = {}
        overloaded: set[tuple[str, str]] = set()
        for f in project.files:
            for launch in project.launches(f):
                if launch.kernel.generic:
                    launches.setdefault((launch.kernel_file.path, launch.kernel.name), []).append(launch)
            for call in f.calls:
                if is_warp(call.callee, "overload"):
                    found = project.find_kernel(f, call.ctx.scope, call.bound("kernel"))
                    if found is not None:
                        overloaded.add((found[0].path, found[1].name))
            for fn in f.functions.values():
                if "warp.overload" in fn.decorators:
                    overloaded.add((f.path, fn.name))
        return launches, overloaded

    # ------------------------------------------------------------------ type inference
    def _type_of(self, project: Project, file: FileModel, scope: str, value: Value | None,
                 site: Site | None = None, depth: int = 0) -> str | None:
        """The type an argument has, when every expression it can come from (``Evaluator.sources``) tells
        the same one."""
        if value is None or depth > 6:
            return None
        kinds = {self._source_type(project, source, depth) for source in project.evaluator.sources(file, value, scope,
                                                                                                   site)}
        return kinds.pop() if len(kinds) == 1 else None

    def _source_type(self, project: Project, source: Source, depth: int) -> str | None:
        value = source.value
        if source.attrs or not source.complete:
            return None
        if value.kind == "const":
            if isinstance(value.const, bool):
                return "warp.bool"
            if isinstance(value.const, int):
                return "warp.int32"
            if isinstance(value.const, float):
                return "warp.float32"
            return None
        if value.kind != "call" or not value.ref or not is_warp(value.ref):
            return None
        short = value.ref[len("warp."):]
        if short in _SCALAR_TYPES:
            return value.ref
        if short in _ARRAY_MAKERS:
            dtype = self._dtype(project, source, value.kwargs.get("dtype") or (
                value.args[_ARRAY_MAKERS[short]] if len(value.args) > _ARRAY_MAKERS[short] else None
            ))
            return f"array[{dtype}]" if dtype else None
        if short in _LIKE_MAKERS and value.args:
            if "dtype" in value.kwargs:
                dtype = self._dtype(project, source, value.kwargs["dtype"])
                return f"array[{dtype}]" if dtype else None
            return self._type_of(project, source.file, source.scope, value.args[0], source.site, depth + 1)
        return None

    @staticmethod
    def _dtype(project: Project, where: Source, value: Value | None) -> str | None:
        """The scalar type a ``dtype=`` argument names (followed through names like any value)."""
        if value is None:
            return None
        found = set()
        for source in project.evaluator.sources(where.file, value, where.scope, where.site):
            v = source.value
            if source.attrs or v.kind not in ("name", "attr") or not v.ref or v.local:
                return None
            if v.ref in _PYTHON_SCALARS:
                found.add(_PYTHON_SCALARS[v.ref])
            elif is_warp(v.ref) and v.ref[len("warp."):] in _SCALAR_TYPES:
                found.add(v.ref)
            else:
                return None
        return found.pop() if len(found) == 1 else None

    def _signature(self, project: Project, launch: Launch, generic_positions: list[int]) -> dict[int, str]:
        call = launch.call
        args: list[Source] = []
        for keyword in ("inputs", "outputs"):
            listed = call.bound(keyword)
            if listed is None:
                continue
            # `inputs=[...]`, or a name bound to one list literal
            lists = project.evaluator.sources(launch.file, listed, call.ctx.scope, launch.site)
            if len(lists) != 1 or lists[0].value.kind != "seq" or lists[0].attrs:
                return {}
            where = lists[0]
            args.extend(Source(where.file, item, where.scope, where.site) for item in where.value.items)
        found = {}
        for position in generic_positions:
            if position < len(args):
                arg = args[position]
                kind = self._type_of(project, arg.file, arg.scope, arg.value, arg.site)
                if kind is not None:
                    found[position] = kind
        return found

    # ------------------------------------------------------------------ check
    def check(self, file: FileModel, project: Project) -> Iterator[Report]:
        launches, overloaded = self._index(project)
        module_level = [k for k in file.kernels if k.ctx.scope == ""]
        for kernel in file.kernels:
            if not kernel.generic:
                continue
            if kernel.ctx.scope == "" and any(
                k.name == kernel.name and k.ctx.order > kernel.ctx.order for k in module_level
            ):
                continue  # re-defined later in the file: launches by name reach the last definition
            fn = file.functions.get(kernel.function)
            if fn is None:
                continue
            if (file.path, kernel.name) not in overloaded:
                generic_positions = [i for i, p in enumerate(fn.params) if "Any" in p.annotation.split()]
                kernel_launches = sorted(
                    launches.get((file.path, kernel.name), []),
                    key=lambda launch: (launch.file.path, launch.call.span.line, launch.call.span.col),
                )
                found = next(self._check_kernel(project, file, kernel, kernel_launches, generic_positions), None)
                if found is not None:
                    yield found
                    continue
            if kernel.ctx.scope == "":  # a kernel made by a factory joins its module late anyway: WC101's
                yield from self._late_first_instance(project, file, kernel)

    # ------------------------------------------------------------------ an instance made after the load
    def _late_first_instance(self, project: Project, file: FileModel, kernel: Kernel) -> Iterator[Report]:
        """One report when the first instance of ``kernel`` (its first launch, or a run-time ``wp.overload``)
        can be made after its module was loaded."""
        declared = project.kernel_module(file, kernel)
        if declared is None:
            return
        module = f"unique:{file.module}.{kernel.function or kernel.name}" if declared == "unique" else declared
        key = (file.path, kernel.name)
        registrations = project.overload_registrations(file, kernel)
        if registrations:
            # The launches use the registered types, and so does a run-time registration whose types are not
            # written out when some are registered at import; one that repeats an import-time signature gets
            # the instance Warp has. Any other registration made after a load is late.
            imported = [r for r in registrations if r.at_import]
            signatures = {r.signature for r in imported}
            for registration in registrations:
                call = registration.call
                if call is None or (not registration.at_import and imported and (
                        registration.signature is None or registration.signature in signatures)):
                    continue
                earlier = project.launched_before(registration.file, call, module, lambda _kernel: True)
                if earlier is not None:
                    yield self._report_late(project, file, kernel, declared, module, earlier,
                                            Related(registration.file.path, call.span,
                                                    f"wp.overload of '{kernel.name}' called here, after the load"),
                                            overload=True)
                    return
            return
        own = self._origins(project).get(key, [])
        if not own:
            return  # never launched (as far as the index sees): no instance is made
        for f, call in own:
            earlier = project.launched_before(f, call, module, lambda k: k != key)
            if earlier is not None:
                yield self._report_late(project, file, kernel, declared, module, earlier,
                                        Related(f.path, call.span, f"'{kernel.name}' launched here, after the load"))
                return
        # Nothing shown to run first: not reported. Guessing "late unless always first" went wrong on
        # alternative kernels of one library module that each application launches only one of.

    def _report_late(self, project: Project, file: FileModel, kernel: Kernel, declared: str, module: str,
                     earlier: Earlier, late: Related, overload: bool = False) -> Report:
        first = f"module {module} launched here first"
        if earlier.kernel is None:
            first = f"module {module} loaded here first"
        if earlier.runner:
            first += f" (the test runner runs {earlier.runner.rpartition('.')[2]}() first)"
        related = [Related(earlier.file.path, earlier.call.span, first)]
        related += [Related(f.path, call.span, f"{call.callee.rpartition('.')[2]}() called here, after it")
                    for f, call in earlier.through]
        related.append(late)
        what = ("its wp.overload(...) is called at run time" if overload
                else "it has no wp.overload registered at import and its first launch")
        return self.report(
            kernel.span,
            f"generic kernel '{kernel.name}': {what} after {self._module_phrase(project, declared, module)} "
            "can already be loaded; the new instance rebuilds the whole module. Register its instances with "
            "wp.overload(...) at module level, right after the kernel.",
            related=tuple(related), kernel=kernel.name, module=declared,
        )

    @staticmethod
    def _module_phrase(project: Project, declared: str, module: str) -> str:
        if declared == "unique":
            return "its module=\"unique\" module"
        count = len(project.kernels_of_module(module))
        return f"Warp module {module} ({count} kernel{'s' if count != 1 else ''})"

    def _origins(self, project: Project) -> dict[tuple[str, str], list[tuple[FileModel, Call]]]:
        """Per kernel, where its launches are made from (a wrapper's call site for a launch its parameters
        decide), once each, in a stable order."""
        def compute() -> dict[tuple[str, str], list[tuple[FileModel, Call]]]:
            found: dict[tuple[str, str], dict[int, tuple[FileModel, Call]]] = {}
            for launch in project.all_launches():
                f, call = launch.origin
                found.setdefault((launch.kernel_file.path, launch.kernel.name), {}).setdefault(id(call), (f, call))
            return {key: sorted(calls.values(), key=lambda fc: (fc[0].path, fc[1].span.line, fc[1].span.col))
                    for key, calls in found.items()}

        return project.cached((self.code, "origins"), compute)

    def _check_kernel(
        self, project: Project, file: FileModel, kernel: Kernel, kernel_launches: list[Launch], positions: list[int]
    ) -> Iterator[Report]:
        seen: list[tuple[Launch, dict[int, str]]] = []
        for launch in kernel_launches:
            signature = self._signature(project, launch, positions)
            if not signature:
                continue
            for earlier, earlier_sig in seen:
                differs = [p for p in signature if p in earlier_sig and earlier_sig[p] != signature[p]]
                if differs:
                    p = differs[0]
                    yield self.report(
                        kernel.span,
                        f"generic kernel '{kernel.name}' is launched with {self._short(earlier_sig[p])} "
                        f"and {self._short(signature[p])} and no "
                        "wp.overload is registered: each new type after the first load rebuilds its whole module; "
                        "register every instance with wp.overload(...) right after the kernel.",
                        related=(
                            Related(earlier.file.path, earlier.call.span,
                                    f"launched with {self._short(earlier_sig[p])}"),
                            Related(launch.file.path, launch.call.span, f"launched with {self._short(signature[p])}"),
                        ),
                        kernel=kernel.name,
                        module=project.kernel_module(file, kernel),
                    )
                    return
            seen.append((launch, signature))

    @staticmethod
    def _short(kind: str) -> str:
        return kind.replace("warp.", "wp.")


from __future__ import annotations

from collections.abc import Iterator

from warplint.diagnostic import Related
from warplint.index import Launch, Project
from warplint.model import FileModel, Kernel, Value
from warplint.names import is_warp
from warplint.rule import Report, Rule
from warplint.semantic.evaluator import Site, Source

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
    """A generic kernel is launched with several concrete types and no `wp.overload` registered first.

    ## Why
    A kernel with `Any` parameters (`x: Any`, `wp.array(dtype=Any)`) has no code
    until a launch instantiates it for concrete types. Every new type signature adds an
    overload to the kernel and marks its module modified, so the first launch with
    `float64` after a `float32` launch rebuilds the **whole** module (every kernel in
    it), and so does every further new type. Registering the instances up front with
    `wp.overload(kernel, [...])` (or `@wp.overload` stubs) before the first launch puts
    all of them into the first build.

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
    different. Any
    `wp.overload` registration of the kernel anywhere in the project silences the
    rule, even one made after the first launch. One finding per kernel, at its definition,
    with the first two launches of different types as related locations (its fix, the
    `wp.overload` lines, is written there once).
    """

    code = "WC106"
    name = "late-generic-instance"
    mechanism = "CS-6"
    summary = "A generic kernel meets a second type after its module loaded, so the whole module rebuilds."
    confidence = "high"

    invalid = (
        "import warp as wp\nfrom typing import Any\n\n@wp.kernel\ndef scale(x: wp.array(dtype=Any), s: Any):\n"
        "    i = wp.tid()\n    x[i] = x[i] * s\n\n"
        "def run(n):\n    a = wp.zeros(n, dtype=wp.float32)\n    wp.launch(scale, dim=n, inputs=[a, 2.0])\n"
        "    b = wp.zeros(n, dtype=wp.float64)\n    wp.launch(scale, dim=n, inputs=[b, wp.float64(2.0)])\n",
    )
    valid = (
        "import warp as wp\nfrom typing import Any\n\n@wp.kernel\ndef scale(x: wp.array(dtype=Any), s: Any):\n"
        "    i = wp.tid()\n    x[i] = x[i] * s\n\n"
        "wp.overload(scale, [wp.array(dtype=wp.float32), wp.float32])\n"
        "wp.overload(scale, [wp.array(dtype=wp.float64), wp.float64])\n\n"
        "def run(n):\n    a = wp.zeros(n, dtype=wp.float32)\n    wp.launch(scale, dim=n, inputs=[a, 2.0])\n"
        "    b = wp.zeros(n, dtype=wp.float64)\n    wp.launch(scale, dim=n, inputs=[b, wp.float64(2.0)])\n",
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
            if not kernel.generic or (file.path, kernel.name) in overloaded:
                continue
            if kernel.ctx.scope == "" and any(
                k.name == kernel.name and k.ctx.order > kernel.ctx.order for k in module_level
            ):
                continue  # re-defined later in the file: launches by name reach the last definition
            fn = file.functions.get(kernel.function)
            if fn is None:
                continue
            generic_positions = [i for i, p in enumerate(fn.params) if "Any" in p.annotation.split()]
            kernel_launches = sorted(
                launches.get((file.path, kernel.name), []),
                key=lambda launch: (launch.file.path, launch.call.span.line, launch.call.span.col),
            )
            yield from self._check_kernel(project, file, kernel, kernel_launches, generic_positions)

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


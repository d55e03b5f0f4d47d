"""The project index: cross-file questions answered from all files' models.

Which Warp module a kernel joins, which kernel a launch launches, which functions
(transitively, across files) launch or load a module, who calls a function, and
whether importing a module defines kernels. Installed third-party packages are
located on ``sys.path`` without importing them and read from disk on demand.
"""

from __future__ import annotations

import importlib.machinery
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from .facts import DEFAULT_CUDA_BLOCK_DIM
from .model import Call, FileModel, Function, Kernel, Value
from .names import is_warp

LAUNCH_CALLS = ("launch", "launch_tiled")
LOAD_CALLS = ("load_module", "force_load")
UNIQUE = "unique"


@dataclass(frozen=True)
class Launch:
    file: FileModel
    call: Call
    kernel_file: FileModel
    kernel: Kernel
    module: str  # the Warp module name the launched kernel belongs to

    @property
    def block_dim(self) -> Value | None:
        return self.call.kwargs.get("block_dim")


def locate_installed(module: str) -> str | None:
    """Path of the source file for ``module`` in an installed package, never importing it.

    ``importlib.util.find_spec("pkg.sub")`` would import ``pkg``; PathFinder on the
    top-level name only searches sys.path, and the rest is joined as a path.
    """
    top, _, rest = module.partition(".")
    try:
        spec = importlib.machinery.PathFinder.find_spec(top)
    except (ImportError, ValueError):
        return None
    if spec is None:
        return None
    if spec.submodule_search_locations:
        for base in spec.submodule_search_locations:
            path = os.path.join(base, *rest.split(".")) if rest else base
            for candidate in (path + ".py", os.path.join(path, "__init__.py")):
                if os.path.isfile(candidate):
                    return candidate
        return None
    if not rest and spec.origin and spec.origin.endswith(".py"):
        return spec.origin
    return None


class _ModuleTable(dict):
    """Module name -> file, tolerant of the import root.

    A file's name comes from its package ``__init__.py`` chain (``particles.kernels``);
    code run from a parent directory imports it as ``examples.particles.kernels``
    (a namespace package). A lookup that misses retries without leading components.
    """

    def get(self, name, default=None):
        found = dict.get(self, name)
        if found is not None or not isinstance(name, str):
            return found if found is not None else default
        parts = name.split(".")
        for i in range(1, min(len(parts) - 1, 3) + 1):
            found = dict.get(self, ".".join(parts[i:]))
            if found is not None:
                return found
        return default

    def __contains__(self, name) -> bool:
        return self.get(name) is not None


class Project:
    def __init__(
        self,
        files: Iterable[FileModel],
        load_external: Callable[[str], FileModel | None] | None = None,
    ) -> None:
        self.files = [f for f in files if f.error is None]
        self.by_module: dict[str, FileModel] = _ModuleTable()
        for f in self.files:
            self.by_module.setdefault(f.module, f)
        self._load_external = load_external
        self._external: dict[str, FileModel | None] = {}
        self._callers: dict[str, list[tuple[FileModel, Call]]] | None = None
        self._launch_cache: dict[str, dict[str, Call]] = {}
        self._defines_cache: dict[str, str | None] = {}
        self.memo: dict = {}  # derived facts rules share within one run (keyed by the asker)

    # ------------------------------------------------------------------ lookup
    def module(self, name: str, external: bool = False) -> FileModel | None:
        found = self.by_module.get(name)
        if found is not None or not external or self._load_external is None:
            return found
        if name not in self._external:
            self._external[name] = self._load_external(name)
        return self._external[name]

    def canonical_module(self, name: str) -> str:
        """A project module's own name for any spelling the import root allows."""
        found = self.by_module.get(name)
        return found.module if found is not None else name

    def function(self, fqname: str) -> tuple[FileModel, Function] | None:
        """``pkg.mod.Class.method`` -> (file, Function), for project files."""
        module = fqname.rpartition(".")[0]
        while module:
            f = self.by_module.get(module)
            if f is not None:
                qual = fqname[len(module) + 1 :]
                fn = f.functions.get(qual)
                return (f, fn) if fn is not None else None
            module = module.rpartition(".")[0]
        return None

    @staticmethod
    def fqname(file: FileModel, qualname: str) -> str:
        return f"{file.module}.{qualname}" if qualname else file.module

    # ------------------------------------------------------------------ kernels
    def kernel_module(self, file: FileModel, kernel: Kernel) -> str | None:
        """The Warp module a kernel joins; ``"unique"`` for module="unique"; None if unknown."""
        value = kernel.module_value
        if value is None:
            return file.module
        if value.kind == "const":
            return value.const if isinstance(value.const, str) else None
        if value.kind == "name" and value.local:
            fn = file.functions.get(kernel.ctx.scope)
            if fn is not None:
                for p in fn.params:
                    if p.name == value.text and p.default is not None and p.default.kind == "const":
                        return None if p.default.const is None else p.default.const
            return None
        if value.kind == "name" and value.ref and "." in value.ref:
            # a module-level constant, or `module=__name__`
            head, _, name = value.ref.rpartition(".")
            owner = self.by_module.get(head)
            if owner is not None and name in owner.constants and owner.constants[name].kind == "const":
                return owner.constants[name].const
        if value.kind == "name" and value.text == "__name__":
            return file.module
        if value.kind == "call" and is_warp(value.ref, "get_module") and value.args and value.args[0].kind == "const":
            return value.args[0].const
        return None

    def kernels_of_module(self, module: str) -> list[tuple[FileModel, Kernel]]:
        # One pass over every kernel, indexed by module (rules ask for many modules, per file).
        def by_module() -> dict[str | None, list[tuple[FileModel, Kernel]]]:
            table: dict[str | None, list[tuple[FileModel, Kernel]]] = {}
            for f in self.files:
                for k in f.kernels:
                    table.setdefault(self.kernel_module(f, k), []).append((f, k))
            return table

        return list(self.cached("kernels_by_module", by_module).get(module, ()))

    def find_kernel(self, file: FileModel, scope: str, value: Value | None) -> tuple[FileModel, Kernel] | None:
        """The kernel a launch's ``kernel`` argument names, when it can be told statically."""
        if value is None or value.kind not in ("name", "attr") or not value.ref:
            return None
        if value.local:
            # a local bound from a factory call: `k = make(...)` -> the kernel make() defines
            for call in self.calls_in(file, scope):
                if value.text in call.assigned_to:
                    target = self.function(call.callee)
                    if target is not None:
                        kf, fn = target
                        made = [k for k in kf.kernels if k.ctx.scope == fn.qualname]
                        if len(made) == 1:
                            return kf, made[0]
            for k in file.kernels:
                if k.ctx.scope == scope and (k.name == value.text or value.text in k.assigned_to):
                    return file, k
            return None
        module, _, name = value.ref.rpartition(".")
        owner = self.by_module.get(module)
        if owner is None:
            return None
        for k in owner.kernels:
            if k.ctx.scope == "" and ((k.name == name and k.form == "decorator") or name in k.assigned_to):
                return owner, k
        return None

    def launches(self, file: FileModel) -> list[Launch]:
        return list(self.cached(("launches", id(file)), lambda: self._launches(file)))

    def _launches(self, file: FileModel) -> list[Launch]:
        result = []
        for call in file.calls:
            if not is_warp(call.callee, *LAUNCH_CALLS):
                continue
            found = self.find_kernel(file, call.ctx.scope, call.bound("kernel"))
            if found is None:
                continue
            kf, kernel = found
            module = self.kernel_module(kf, kernel)
            if module is None:
                continue
            if module == UNIQUE:
                module = f"unique:{kf.module}.{kernel.function or kernel.name}"
            result.append(Launch(file, call, kf, kernel, module))
        return result

    def launch_block_dim(self, launch: Launch) -> int | None:
        """The block_dim a launch uses on CUDA (256 when not given); None when not known statically."""
        value = launch.block_dim
        if value is None or (value.kind == "const" and value.const is None):
            return DEFAULT_CUDA_BLOCK_DIM
        found, resolved = self.constant(launch.file, value, launch.call.ctx.scope)
        if not found or not isinstance(resolved, int) or isinstance(resolved, bool):
            return None
        return resolved if resolved > 0 else DEFAULT_CUDA_BLOCK_DIM

    @staticmethod
    def launch_on_cpu(launch: Launch) -> bool:
        device = launch.call.kwargs.get("device")
        return device is not None and device.kind == "const" and device.const == "cpu"

    def cached(self, key, compute):
        """``compute()`` once per project: for facts the index and rules derive from the
        whole project and ask for again and again (the memo dies with the project, unlike
        rule state)."""
        if key not in self.memo:
            self.memo[key] = compute()
        return self.memo[key]

    # ------------------------------------------------------------------ per-file tables
    def calls_in(self, file: FileModel, scope: str) -> list[Call]:
        """The calls written directly in ``scope`` of ``file``, in source order."""
        def by_scope() -> dict[str, list[Call]]:
            table: dict[str, list[Call]] = {}
            for call in file.calls:
                table.setdefault(call.ctx.scope, []).append(call)
            return table

        return self.cached(("calls_by_scope", id(file)), by_scope).get(scope, [])

    def name_assignments(self, file: FileModel, scope: str, name: str) -> list:
        """Assignments ``name = ...`` written directly in ``scope``."""
        def by_scope_and_name() -> dict[tuple[str, str], list]:
            table: dict[tuple[str, str], list] = {}
            for a in file.assignments:
                if a.target.kind == "name":
                    table.setdefault((a.ctx.scope, a.target.text), []).append(a)
            return table

        return self.cached(("names_by_scope", id(file)), by_scope_and_name).get((scope, name), [])

    # ------------------------------------------------------------------ constants
    def constant(self, file: FileModel, value: Value | None, scope: str = "", _depth: int = 0) -> tuple[bool, object]:
        """(True, literal) when ``value`` resolves to one literal, else (False, None).

        Follows module-level constants (in this file or imported from project files),
        locals assigned exactly one literal in ``scope``, and ``wp.constant(x)``.
        """
        if value is None or _depth > 8:
            return False, None
        if value.kind == "const" or (value.kind == "seq" and value.const is not None):
            return True, value.const
        if value.kind == "call" and is_warp(value.ref, "constant") and len(value.args) == 1:
            return self.constant(file, value.args[0], scope, _depth + 1)
        if value.kind not in ("name", "attr") or not value.ref:
            return False, None
        if value.local:
            fn = file.functions.get(scope)
            if fn is not None and any(p.name == value.text for p in fn.params):
                return False, None  # a parameter: any caller's value
            bound = self.name_assignments(file, scope, value.text)
            if len(bound) != 1 or bound[0].augmented:
                return False, None
            return self.constant(file, bound[0].value, scope, _depth + 1)
        module, _, name = value.ref.rpartition(".")
        owner = self.by_module.get(module)
        if owner is None or name not in owner.constants:
            return False, None
        rebinds = [
            a for a in owner.assignments if a.ctx.scope == "" and a.target.kind == "name" and a.target.text == name
        ]
        if len(rebinds) > 1:
            return False, None
        return self.constant(owner, owner.constants[name], "", _depth + 1)

    # ------------------------------------------------------------------ call graph
    def callers(self, fqname: str) -> list[tuple[FileModel, Call]]:
        if self._callers is None:
            self._callers = {}
            for f in self.files:
                for call in f.calls:
                    if call.callee.startswith("warp."):
                        continue
                    self._callers.setdefault(self.canonical_function(call.callee), []).append((f, call))
        return self._callers.get(self.canonical_function(fqname), [])

    def canonical_function(self, fqname: str) -> str:
        table = self.memo.setdefault("canonical_function", {})
        canonical = table.get(fqname)
        if canonical is None:
            found = self.function(fqname)
            canonical = self.fqname(found[0], found[1].qualname) if found is not None else fqname
            table[fqname] = canonical
        return canonical

    def modules_launched_by(self, fqname: str, _depth: int = 0) -> dict[str, Call]:
        """Warp modules a function launches or loads, directly or through project calls.

        Maps module name -> the first call in this function that leads there.
        ``"*"`` stands for every module (``force_load()`` without ``modules``).
        """
        if fqname in self._launch_cache:
            return self._launch_cache[fqname]
        self._launch_cache[fqname] = {}  # cycle guard
        found = self.function(fqname)
        result: dict[str, Call] = {}
        if found is not None and _depth < 12:
            f, fn = found
            launches = {id(ln.call): ln.module for ln in self.launches(f) if ln.call.ctx.scope == fn.qualname}
            for call in self.calls_in(f, fn.qualname):
                if id(call) in launches:
                    result.setdefault(launches[id(call)], call)
                elif is_warp(call.callee, *LOAD_CALLS):
                    for m in self.modules_loaded_by(f, call):
                        result.setdefault(m, call)
                elif not call.callee.startswith("warp."):
                    for m in self.modules_launched_by(call.callee, _depth + 1):
                        result.setdefault(m, call)
        self._launch_cache[fqname] = result
        return result

    def modules_loaded_by(self, file: FileModel, call: Call) -> list[str]:
        if is_warp(call.callee, "force_load"):
            modules = call.bound("modules")
            if modules is None or (modules.kind == "const" and modules.const is None):
                return ["*"]
            return []
        target = call.bound("module")
        if target is None:
            return [file.module]
        if target.kind == "const" and isinstance(target.const, str):
            return [self.canonical_module(target.const)]
        if target.kind in ("name", "attr") and target.ref and target.ref in self.by_module:
            return [self.canonical_module(target.ref)]
        return []

    # ------------------------------------------------------------------ imports
    def defines_kernels_at_import(self, module: str, _seen: set[str] | None = None) -> str | None:
        """If importing ``module`` creates kernels, the module that defines them; else None.

        Follows module-level imports transitively (project files first, then installed
        packages read from disk). Warp itself does not count.
        """
        if module == "warp" or module.startswith("warp."):
            return None
        if module in self._defines_cache:
            return self._defines_cache[module]
        seen = _seen if _seen is not None else set()
        if module in seen or len(seen) > 400:
            return None  # a cycle or a huge import graph: not known (yet)
        seen.add(module)
        result: str | None = None
        f = self.module(module, external=True)
        if f is not None:
            if f.module_kernels():
                result = f.module
            else:
                result = self._first_kernel_import(f, module, seen)
        if _seen is None or result is not None:
            # Only complete answers are memoised: a None found inside a cycle may be partial.
            self._defines_cache[module] = result
        return result

    def _first_kernel_import(self, f: FileModel, module: str, seen: set[str]) -> str | None:
        for imp in f.imports:
            if imp.ctx.scope != "" or imp.ctx.conditions or imp.ctx.try_index is not None:
                continue
            candidates = [imp.module] + [f"{imp.module}.{name}" for name, _ in imp.names]
            for cand in candidates:
                if not cand or cand == module:
                    continue
                hit = self.defines_kernels_at_import(cand, seen)
                if hit:
                    return hit
        return None

    # ------------------------------------------------------------------ order within a scope
    def launch_timeline(self, file: FileModel, scope: str) -> list[tuple[int, str, Call]]:
        """(order, module, call) for each statement of ``scope`` that launches or loads a
        Warp module, directly or through project functions it calls. ``"*"`` = every module."""
        return self.cached(("timeline", file.path, scope), lambda: self._launch_timeline(file, scope))

    def _launch_timeline(self, file: FileModel, scope: str) -> list[tuple[int, str, Call]]:
        direct = {id(ln.call): ln.module for ln in self.launches(file) if ln.call.ctx.scope == scope}
        events: list[tuple[int, str, Call]] = []
        for call in self.calls_in(file, scope):
            if id(call) in direct:
                events.append((call.ctx.order, direct[id(call)], call))
            elif is_warp(call.callee, *LOAD_CALLS):
                events.extend((call.ctx.order, m, call) for m in self.modules_loaded_by(file, call))
            elif not call.callee.startswith("warp."):
                events.extend((call.ctx.order, m, call) for m in self.modules_launched_by(call.callee))
        events.sort(key=lambda e: e[0])
        return events

    def caller_scopes(self, fqname: str, depth: int = 3) -> list[tuple[FileModel, Call, int]]:
        """Calls that (transitively, up to ``depth`` levels) lead to ``fqname``: (file, call, level)."""
        found: list[tuple[FileModel, Call, int]] = []
        frontier = [fqname]
        seen = {fqname}
        for level in range(1, depth + 1):
            next_frontier = []
            for target in frontier:
                for f, call in self.callers(target):
                    found.append((f, call, level))
                    caller = self.fqname(f, call.ctx.scope)
                    if call.ctx.scope and caller not in seen:
                        seen.add(caller)
                        next_frontier.append(caller)
            frontier = next_frontier
        return found

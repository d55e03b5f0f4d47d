"""The project index: cross-file questions answered from all files' models.

Which Warp module a kernel joins, which kernel a launch launches, which functions
(transitively, across files) launch or load a module, who calls a function, and
whether importing a module defines kernels. Installed third-party packages are
located on ``sys.path`` without importing them and read from disk on demand.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from .model import Assignment, Call, FileModel, Function, Kernel, Value
from .names import is_warp, is_warp_api
from .semantic import devices, generics, variants
from .semantic.context import CodeContext, context_of, is_test_file
from .semantic.evaluator import MAX_SITE_CHAIN, MAX_SITES, PARAMETER_SLOT, Evaluator, Site
from .semantic.kernels import add_decorated_kernels
from .semantic.values import ValueSet
from .sources import locate_installed as locate_installed  # where it is defined now (the flake8 warm path)
from .warp_version import Found, WarpEnvironment, WarpFacts, own_interpreter_version, version_in_config

LAUNCH_CALLS = ("launch", "launch_tiled")
# What a launch raises before it loads its module: ValueError from its checks of dim and block_dim (negative or
# too many dimensions, block_dim over 1024 on the CPU). Its other errors (an argument's type, a CUDA launch
# failure) come after the load.
RAISED_BEFORE_LOAD = ("ValueError",)
EMPTY = ValueSet()
LOAD_CALLS = ("load_module", "force_load")
UNIQUE = "unique"


@dataclass(frozen=True)
class Launch:
    """A ``wp.launch``/``launch_tiled`` of one kernel. ``site`` is set when the launch is written
    in a wrapper whose parameters decide the kernel or block size: then ``kernel`` and
    ``block_dims`` are what that call of the wrapper passes, and ``origin`` is that call."""

    file: FileModel
    call: Call
    kernel_file: FileModel
    kernel: Kernel
    module: str  # the Warp module name the launched kernel belongs to
    block_dims: ValueSet = EMPTY  # the CUDA block sizes (256 for an absent block_dim; CPU-only values left out)
    site: Site | None = None

    @property
    def block_dim(self) -> Value | None:
        return self.call.bound("block_dim")

    @property
    def origin(self) -> tuple[FileModel, Call]:
        """Where the launch is made from: the outermost wrapper call, or the launch itself."""
        if self.site is not None:
            outer = self.site.outermost()
            if outer.call is not None:
                return outer.file, outer.call
        return self.file, self.call


class _ModuleTable(dict):
    """Module name -> file, tolerant of the import root.

    A file's name comes from its package ``__init__.py`` chain (``particles.kernels``);
    code run from a parent directory imports it as ``examples.particles.kernels``
    (a namespace package). A lookup that misses retries without leading components.
    """

    def __init__(self) -> None:
        super().__init__()
        self._retried: dict[str, object] = {}  # name -> what the tolerant retry found (None: nothing)

    def __setitem__(self, name, value) -> None:
        self._retried.clear()
        super().__setitem__(name, value)

    def setdefault(self, name, value=None):
        self._retried.clear()
        return super().setdefault(name, value)

    def get(self, name, default=None):
        found = dict.get(self, name)
        if found is not None or not isinstance(name, str):
            return found if found is not None else default
        # Most lookups that miss are names outside the project (``numpy.zeros`` and each of its prefixes,
        # for every call of every file): the retry is memoised.
        if name in self._retried:
            retried = self._retried[name]
            return retried if retried is not None else default
        parts = name.split(".")
        retried = None
        for i in range(1, min(len(parts) - 1, 3) + 1):
            retried = dict.get(self, ".".join(parts[i:]))
            if retried is not None:
                break
        self._retried[name] = retried
        return retried if retried is not None else default

    def __contains__(self, name) -> bool:
        return self.get(name) is not None


class Project:
    def __init__(
        self,
        files: Iterable[FileModel],
        load_external: Callable[[str], FileModel | None] | None = None,
        warp_environment: WarpEnvironment | None = None,
    ) -> None:
        self.files = [f for f in files if f.error is None]
        self._warp_environment = warp_environment or WarpEnvironment(own_install=own_interpreter_version())
        self._warp: WarpFacts | None = None
        self.by_module: dict[str, FileModel] = _ModuleTable()
        for f in self.files:
            self.by_module.setdefault(f.module, f)
        self._load_external = load_external
        self._external: dict[str, FileModel | None] = {}
        self._callers: dict[str, list[tuple[FileModel, Call]]] = {}  # filled name by name (``callers``)
        self._calls_by_last_name: dict[str, list[tuple[FileModel, Call]]] | None = None
        self._launch_cache: dict[str, dict[str, Call]] = {}
        self._defines_cache: dict[str, str | None] = {}
        self.memo: dict = {}  # derived facts rules share within one run (keyed by the asker)
        self.by_path = {f.path: f for f in self.files}
        self.evaluator = Evaluator(self)
        add_decorated_kernels(self)
        self.evaluator = Evaluator(self)  # answers given while the decorators were read may predate those kernels
        self.memo.clear()

    @property
    def warp(self) -> WarpFacts:
        """The facts of the Warp this project runs against (warplint/warp_version.py says how it is found):
        ``warp.config_names``, ``warp.module_options`` (the valid names), ``warp.label`` for messages."""
        if self._warp is None:
            self._warp = self._warp_environment.facts(self._linted_warp_tree())
        return self._warp

    def _linted_warp_tree(self) -> Found | None:
        """The linted files are Warp's own: the version in their ``warp/config.py``."""
        for module in ("warp.config", "warp._src.config"):
            owner = dict.get(self.by_module, module)  # exactly Warp's module, not a tolerant import-root match
            if owner is not None:
                version = version_in_config(owner.path)
                if version:
                    return Found(version, f"the linted Warp tree ({module.replace('.', '/')}.py)")
        return None

    # ------------------------------------------------------------------ lookup
    def module(self, name: str, external: bool = False) -> FileModel | None:
        found = self.by_module.get(name)
        if found is not None or not external or self._load_external is None:
            return found
        if name not in self._external:
            self._external[name] = self._load_external(name)
        return self._external[name]

    def file_at(self, path: str) -> FileModel | None:
        found = self.by_path.get(path)
        if found is None:
            found = next((f for f in self._external.values() if f is not None and f.path == path), None)
        return found

    def _owner_prefix(self, ref: str) -> tuple[FileModel, str] | None:
        """The project file owning the dotted name ``ref``, and the prefix of ``ref`` that names it (a
        namespace-package spelling ``newton._src.x`` of the file named ``x`` included)."""
        table: dict[str, tuple[FileModel, str] | None] = self.cached("owner_prefix", dict)
        if ref in table:  # asked for every callee of every call, again by most rules: memoised per name
            return table[ref]
        module = ref
        found_at: tuple[FileModel, str] | None = None
        while module:
            found = self.by_module.get(module)
            if found is not None:
                found_at = found, module
                break
            module = module.rpartition(".")[0]
        table[ref] = found_at
        return found_at

    def context_of(self, file: FileModel, scope: str = "") -> CodeContext:
        """What kind of code ``scope`` of ``file`` is: library, application, test, benchmark or example
        (``warplint.semantic.context``)."""
        return context_of(self, file, scope)

    def is_warp_api(self, ref: str | None) -> bool:
        """A name of Warp's API. Linting Warp's own tree, only what the ``warp`` package itself exports
        is API; ``warp._src.optim.linear.X`` is then code of the project (names.is_warp_api: tests and
        examples are project code always)."""
        if not is_warp_api(ref):
            return False
        owner = self.owner_of(ref or "")
        return owner is None or owner.module == "warp"

    def owner_of(self, ref: str) -> FileModel | None:
        """The project file whose module is the longest prefix of the dotted name ``ref``."""
        found = self._owner_prefix(ref)
        return found[0] if found is not None else None

    def canonical_ref(self, ref: str) -> str:
        """``ref`` with its module part spelled as the owning file's module name: a namespace-package
        import ``newton._src.solvers.x.k`` of the file named ``solvers.x`` becomes ``solvers.x.k``."""
        found = self._owner_prefix(ref)
        return found[0].module + ref[len(found[1]):] if found is not None else ref

    def is_class(self, fqname: str) -> bool:
        fqname = self.canonical_ref(fqname)
        owner = self.owner_of(fqname)
        return owner is not None and fqname[len(owner.module) + 1:] in owner.classes

    def kernel_index(self, file: FileModel, kernel: Kernel) -> int:
        table = self.cached(("kernel_index", id(file)), lambda: {id(k): i for i, k in enumerate(file.kernels)})
        return table[id(kernel)]

    def attribute_assignments(self, ref: str) -> list[tuple[FileModel, Assignment]]:
        """Assignments to the attribute ``ref`` (``pkg.mod.Class.attr``): class body and ``self.attr = ...``."""
        def by_ref() -> dict[str, list[tuple[FileModel, Assignment]]]:
            table: dict[str, list[tuple[FileModel, Assignment]]] = {}
            for f in self.files:
                for a in f.assignments:
                    if a.target.kind == "attr" and a.target.ref:
                        table.setdefault(a.target.ref, []).append((f, a))
            return table

        return self.cached("attribute_assignments", by_ref).get(ref, [])

    def constructions(self, cls: str) -> list[tuple[FileModel, Call]]:
        """Calls that construct the project class ``cls``."""
        return self.callers(cls)

    def call_sites(self, fqname: str) -> list[tuple[FileModel, Call]]:
        """Calls of a project function (``Class(...)`` counts as a call of ``Class.__init__``)."""
        sites = list(self.callers(fqname))
        head, _, name = fqname.rpartition(".")
        if name == "__init__":
            sites += self.callers(head)
        return sites

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
        """The Warp module a kernel joins; ``"unique"`` for module="unique"; None if not one known module."""
        names, complete = self.evaluator.kernel_modules(file, kernel)
        if complete and len(names) == 1:
            return self.canonical_module(next(iter(names)))
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

    def kernel_variants(self, file: FileModel, kernel: Kernel) -> variants.Variants | None:
        """Which arguments of its factory make new content of a run-time kernel and which name its module
        (``warplint.semantic.variants``); None for a kernel created at import time."""
        return self.cached(("kernel_variants", id(kernel)), lambda: variants.kernel_variants(self, file, kernel))

    def kernels_of_module_shape(self, file: FileModel, kernel: Kernel) -> list[tuple[FileModel, Kernel]]:
        """For a kernel whose module name is computed per call (``module=_module_name(dtype)``): every kernel
        whose name is computed the same way from its factory's arguments (the same helper, the same literal
        parts), itself included. Called with the same arguments, they join one module. A name that is just a
        parameter (``module=module``) tells nothing about which: only the kernel itself."""
        def by_shape() -> dict[str, list[tuple[FileModel, Kernel]]]:
            table: dict[str, list[tuple[FileModel, Kernel]]] = {}
            for f in self.files:
                for k in f.kernels:
                    shape = variants.module_shape(self, f, k)
                    if shape is not None:
                        table.setdefault(variants.positional(shape), []).append((f, k))
            return table

        shape = variants.module_shape(self, file, kernel)
        if shape is None:
            return []
        if variants.positional(shape) == variants.positional(PARAMETER_SLOT % "_"):
            return [(file, kernel)]
        return list(self.cached("kernels_by_module_shape", by_shape).get(variants.positional(shape), ()))

    def module_shape_at(self, file: FileModel, scope: str, call: Call | Value, kernel_file: FileModel,
                        kernel: Kernel) -> str | None:
        """The module a call of ``kernel``'s factory puts it in, as a shape of the caller's expressions
        (``variants.module_shape_at``): two calls in one scope with equal shapes name one module."""
        return variants.module_shape_at(self, file, scope, call, kernel_file, kernel)

    def kernel_launches(self, file: FileModel, kernel: Kernel) -> list[tuple[FileModel, Call]]:
        """The launch calls that can launch ``kernel``, whatever module it joins (``launches`` keeps only
        kernels of one known module)."""
        def by_kernel() -> dict[int, list[tuple[FileModel, Call]]]:
            table: dict[int, list[tuple[FileModel, Call]]] = {}
            for f in self.files:
                for call in self.warp_calls(f, *LAUNCH_CALLS):
                    for _, k in self.find_kernels(f, call.ctx.scope, call.bound("kernel")):
                        table.setdefault(id(k), []).append((f, call))
            return table

        return list(self.cached("launches_by_kernel", by_kernel).get(id(kernel), ()))

    def runs_before_launches(self, fqname: str, depth: int = 3) -> bool:
        """Every call of ``fqname`` runs before any launch or load: each is made outside loops (an import-time loop
        that launches nothing aside), at import time or in a function itself only called so, with nothing launched
        before it there. False when nothing
        in the project calls it (an entry point: its callers are not known) or deeper than ``depth``."""
        sites = self.call_sites(fqname)
        if not sites or depth < 0:
            return False
        for f, call in sites:
            timeline = self.launch_timeline(f, call.ctx.scope)
            # a loop repeats the call after a launch of its scope; an import-time one that launches nothing
            # (`for n in ns: K[n] = make(n)`) runs whole before them
            if (call.ctx.in_loop and (call.ctx.scope or timeline)) or any(
                    launch.ctx.runs_before(call.ctx.order) for _, _, launch in timeline):
                return False
            if call.ctx.scope and not self.runs_before_launches(self.fqname(f, call.ctx.scope), depth - 1):
                return False
        return True

    def launched_apart(self, file: FileModel, kernel: Kernel, module: str) -> variants.Apart | None:
        """For a kernel a lazy builder (a cache dict, ``functools.cache``) makes at run time: a launch of
        another kernel of ``module`` that nothing orders after the builder's first call
        (``variants.launched_apart``)."""
        return self.cached(("launched_apart", id(kernel), module),
                           lambda: variants.launched_apart(self, file, kernel, module))

    def parameter_values(self, file: FileModel, fn: Function, name: str) -> list[tuple[object, FileModel, Call]]:
        """The literal values call sites pass for a parameter (through callers' parameters passed on), each
        with the first call writing it (``variants.parameter_values``)."""
        return self.cached(("parameter_values", id(fn), name), lambda: variants.parameter_values(self, file, fn, name))

    def find_kernels(self, file: FileModel, scope: str, value: Value | None, site: Site | None = None
                     ) -> list[tuple[FileModel, Kernel]]:
        """The kernels a launch's ``kernel`` argument can be (the evaluator's kernel references)."""
        if value is None:
            return []
        found = []
        for ref in self.evaluator.values(file, value, scope, site).kernels():
            kernel = self.evaluator.kernel(ref)
            if kernel is not None:
                found.append(kernel)
        return found

    def find_kernel(self, file: FileModel, scope: str, value: Value | None) -> tuple[FileModel, Kernel] | None:
        """The kernel a launch's ``kernel`` argument names, when it is exactly one."""
        found = self.find_kernels(file, scope, value)
        return found[0] if len(found) == 1 else None

    # ------------------------------------------------------------------ generic kernels' instances
    def overload_registrations(self, file: FileModel, kernel: Kernel) -> list[generics.Registration]:
        """Each ``wp.overload`` of ``kernel`` (call or ``@wp.overload`` stub), and whether it runs at import."""
        return generics.registrations(self, file, kernel)

    def kernel_timeline(self, file: FileModel, scope: str) -> list[generics.Event]:
        """``launch_timeline`` at kernel grain: which kernel of which module each statement launches (or loads)."""
        return generics.kernel_timeline(self, file, scope)

    def launched_before(self, file: FileModel, call: Call, module: str,
                        accept: Callable[[generics.KernelKey | None], bool]) -> generics.Earlier | None:
        """A launch or load of ``module``, of a kernel ``accept`` takes (None: a load), that can run before
        ``call``: earlier in its scope, in a test the runner runs first, or in a caller before the call."""
        return generics.launched_before(self, file, call, module, accept)

    def launches(self, file: FileModel) -> list[Launch]:
        return list(self.cached(("launches", id(file)), lambda: self._launches(file)))

    def _launches(self, file: FileModel, site: Site | None = None, scope: str | None = None) -> list[Launch]:
        result = []
        for call in self.warp_calls(file, *LAUNCH_CALLS):
            if (scope is not None and call.ctx.scope != scope) or call.ctx.expects_raise == RAISED_BEFORE_LOAD:
                continue  # a launch the test expects to fail its checks loads nothing
            block_dims = devices.cuda_block_dims(self, file, call, site)
            for kf, kernel in self.find_kernels(file, call.ctx.scope, call.bound("kernel"), site):
                module = self.kernel_module(kf, kernel)
                if module is None:
                    continue
                if module == UNIQUE:
                    module = f"unique:{kf.module}.{kernel.function or kernel.name}"
                result.append(Launch(file, call, kf, kernel, module, block_dims, site))
        return result

    def launches_at(self, site: Site) -> list[Launch]:
        """The launches the function ``site`` calls makes, directly, with its parameters bound there."""
        def compute() -> list[Launch]:
            found = self.function(site.function)
            if found is None:
                return []
            return self._launches(found[0], site, found[1].qualname)

        return self.cached(("launches_at", id(site)), compute)

    def all_launches(self) -> list[Launch]:
        """Every launch in the project, once per call of its wrapper when the wrapper's parameters decide its
        kernel or block size (followed outwards up to a few wrapper levels), else once. A wrapper call inside
        a library's public function is also kept with that function's parameters unbound: its users call it
        with arguments of their own, whatever the project's calls pass."""
        return self.cached("all_launches", self._all_launches)

    def _all_launches(self) -> list[Launch]:
        result: list[Launch] = []
        for f in self.files:
            for launch in self.launches(f):
                result.extend(self._through_callers(launch))
        return result

    def _through_callers(self, launch: Launch) -> list[Launch]:
        fn = launch.file.functions.get(launch.call.ctx.scope)
        if fn is None or not self._depends_on_parameters(launch.file, fn, launch.call):
            return [launch]
        fq = self.fqname(launch.file, fn.qualname)
        sites = self.call_sites(fq)
        if not is_test_file(launch.file):  # a library wrapper is judged by its product's calls
            sites = [(f, c) for f, c in sites if not is_test_file(f)]
        if not sites or len(sites) > MAX_SITES:
            return [launch]
        expanded: list[Launch] = []
        for caller_file, call in sites:
            site = self.evaluator.site(caller_file, call.ctx.scope, call, fq, None)
            expanded.extend(self._outwards(launch, site, 1))
        return expanded or [launch]

    def _outwards(self, launch: Launch, site: Site, level: int) -> list[Launch]:
        """The launch at ``site``; when the calling function's own parameters still decide it, at its callers."""
        here = [ln for ln in self.launches_at(site) if ln.call is launch.call]
        caller = site.file.functions.get(site.scope)
        if (level >= MAX_SITE_CHAIN or caller is None or site.call is None
                or not self._depends_on_parameters(site.file, caller, site.call)):
            return here
        fq = self.fqname(site.file, caller.qualname)
        sites = self.call_sites(fq)
        if not sites or len(sites) > MAX_SITES:
            return here
        found: list[Launch] = []
        for caller_file, call in sites:
            outer = self.evaluator.site(caller_file, call.ctx.scope, call, fq, None)
            inner = self.evaluator.site(site.file, site.scope, site.call, site.function, outer)
            found.extend(self._outwards(launch, inner, level + 1))
        if self.is_library_api(site.file, caller.qualname):
            # public API: its users call it too, with arguments of their own (its parameters unbound here)
            return found + here
        return found or here

    @staticmethod
    def _depends_on_parameters(file: FileModel, fn: Function, call: Call) -> bool:
        """Whether ``call``'s kernel / block_dim (or, for a wrapper call, any argument) reads a parameter
        of ``fn``."""
        params = {p.name for p in fn.params} - {"self", "cls"}
        if not params:
            return False
        if is_warp(call.callee, *LAUNCH_CALLS):
            # the variant's identity: which kernel, which block size (the device set is followed anyway)
            values = [call.bound(p) for p in ("kernel", "block_dim")]
        else:
            values = [*call.args, *call.kwargs.values()]
        return any(v is not None and any(n.partition(".")[0] in params for n in v.names()) for v in values)

    def launch_block_dim(self, launch: Launch) -> int | None:
        """The block_dim a launch uses on CUDA (256 when not given); None when not one value known statically."""
        found, value = launch.block_dims.single_constant()
        return value if found and isinstance(value, int) else None

    def can_run_on_cuda(self, launch: Launch) -> bool:
        """Some device the launch can use is a CUDA device: its ``device=`` (followed like any value), or the
        default device where it runs (``wp.ScopedDevice``, ``wp.set_device``, its callers'; CUDA when none)."""
        return devices.can_run_on_cuda(self, launch)

    def may_use_cuda(self) -> bool:
        """Some launch or load of the project can run on CUDA (also when it has none to tell by)."""
        return devices.project_may_use_cuda(self)

    def call_devices(self, file: FileModel, call: Call, absent_means_all: bool = False) -> frozenset[devices.Device]:
        """The devices a launch or load call can run on (``force_load`` without a device: every device)."""
        return devices.call_devices(self, file, call, None, absent_means_all)

    def preload_unused(self, file: FileModel, call: Call, module: str) -> bool:
        """``call`` is a preload that built only variants of ``module`` no launch uses (``devices.preload_unused``)."""
        return devices.preload_unused(self, file, call, module)

    def repeats_cached_call(self, file: FileModel, call: Call, fqname: str, before: Call) -> bool:
        """``call`` calls the memoised (``functools.cache``) function ``fqname`` with the literal arguments of
        another call that runs before ``before``: earlier in the same scope, or at import (module level). The
        cache returns what that call made, so this one defines nothing new."""
        found = self.function(fqname)
        if found is None or not self.evaluator.is_memoized(found[1]):
            return False
        key = self._literal_arguments(file, call)
        if key is None:
            return False
        for other_file, other in self.call_sites(fqname):
            if other is call:
                continue
            earlier = ((other_file is file and other.ctx.scope == before.ctx.scope
                        and other.ctx.runs_before(before.ctx.order))
                       or (not other.ctx.scope and not other.ctx.in_main_guard and not other.ctx.conditions))
            if earlier and self._literal_arguments(other_file, other) == key:
                return True
        return False

    def _literal_arguments(self, file: FileModel, call: Call) -> tuple | None:
        """The literal values a call passes (positional, then keywords by name); None when one is not a literal."""
        if call.has_star_args:
            return None
        found: list[object] = []
        for value in (*call.args, *(call.kwargs[k] for k in sorted(call.kwargs))):
            known, literal = self.evaluator.constant(file, value, call.ctx.scope)
            if not known:
                return None
            found.append(repr(literal))
        return (tuple(found[:len(call.args)]), tuple(zip(sorted(call.kwargs), found[len(call.args):], strict=True)))

    def cached(self, key, compute):
        """``compute()`` once per project: for facts the index and rules derive from the
        whole project and ask for again and again (the memo dies with the project, unlike
        rule state)."""
        if key not in self.memo:
            self.memo[key] = compute()
        return self.memo[key]

    # ------------------------------------------------------------------ per-file tables
    def calls_to(self, file: FileModel, *callees: str) -> list[Call]:
        """The calls in ``file`` of any of ``callees`` (dotted, as resolved: ``"warp.force_load"``), in source
        order. One table per file: most rules look for a few Warp calls, and sweeping every call of every
        file once per rule was a large part of a re-check."""
        table = self._calls_by_callee(file)
        if len(callees) == 1:
            return [call for _, call in table.get(callees[0], ())]
        return [call for _, call in sorted((e for c in set(callees) for e in table.get(c, ())), key=lambda e: e[0])]

    def calls_where(self, file: FileModel, test: Callable[[str], bool]) -> list[Call]:
        """The calls in ``file`` whose callee ``test`` accepts, in source order (tested once per callee)."""
        table = self._calls_by_callee(file)
        return [call for _, call in sorted((e for c in table if test(c) for e in table[c]), key=lambda e: e[0])]

    def _calls_by_callee(self, file: FileModel) -> dict[str, list[tuple[int, Call]]]:
        def by_callee() -> dict[str, list[tuple[int, Call]]]:
            table: dict[str, list[tuple[int, Call]]] = {}
            for index, call in enumerate(file.calls):
                table.setdefault(call.callee, []).append((index, call))
            return table

        return self.cached(("calls_to", id(file)), by_callee)

    def warp_calls(self, file: FileModel, *names: str) -> list[Call]:
        """``calls_to`` for Warp's API by short name: ``warp_calls(f, "load_module", "force_load")``."""
        return self.calls_to(file, *(f"warp.{name}" for name in names))

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

    def subscript_assignments(self, file: FileModel, scope: str, name: str) -> list:
        """Assignments ``name[key] = ...`` written directly in ``scope``."""
        def by_scope_and_name() -> dict[tuple[str, str], list]:
            table: dict[tuple[str, str], list] = {}
            for a in file.assignments:
                base = a.target.base
                if a.target.kind == "subscript" and base is not None and base.kind == "name":
                    table.setdefault((a.ctx.scope, base.text), []).append(a)
            return table

        return self.cached(("subscripts_by_scope", id(file)), by_scope_and_name).get((scope, name), [])

    def item_assignments(self, ref: str) -> list[tuple[FileModel, Assignment]]:
        """``NAME[key] = value`` anywhere in the project, where ``NAME`` is the module-level ``ref``."""
        def by_ref() -> dict[str, list[tuple[FileModel, Assignment]]]:
            table: dict[str, list[tuple[FileModel, Assignment]]] = {}
            for f in self.files:
                for a in f.assignments:
                    base = a.target.base
                    if a.target.kind == "subscript" and base is not None and base.kind == "name" and base.ref \
                            and not base.local:
                        table.setdefault(self.canonical_ref(base.ref), []).append((f, a))
            return table

        return self.cached("item_assignments", by_ref).get(ref, [])

    # ------------------------------------------------------------------ constants
    def constant(self, file: FileModel, value: Value | None, scope: str = "") -> tuple[bool, object]:
        """(True, literal) when ``value`` can only be one literal (the evaluator's answer), else (False, None)."""
        return self.evaluator.constant(file, value, scope)

    # ------------------------------------------------------------------ call graph
    def callers(self, fqname: str) -> list[tuple[FileModel, Call]]:
        """The project's calls of the function (or class) ``fqname``, in file and source order."""
        self._resolve_calls_named(fqname.rpartition(".")[2])
        return self._callers.get(self.canonical_function(fqname), [])

    def calls_of(self, file: FileModel, function: Function) -> list[tuple[FileModel, Call]]:
        """The project's calls whose callee resolves to exactly ``function`` of ``file`` (``callers`` spells
        the name it is given canonically first, and a canonical name need not stay one when asked again)."""
        self._resolve_calls_named(function.name)
        return self._callers.get(self.fqname(file, function.qualname), [])

    def _resolve_calls_named(self, last_name: str) -> None:
        # Resolving a call (instance methods, canonical spellings) keeps the last part of its callee's name,
        # so calls are grouped by that part and a group is resolved the first time a name in it is asked
        # for: an edit re-checks the project asking about a few thousand names of 200 000 calls.
        if self._calls_by_last_name is None:
            self._calls_by_last_name = {}
            for f in self.files:
                for call in f.calls:
                    self._calls_by_last_name.setdefault(call.callee.rpartition(".")[2], []).append((f, call))
        pending = self._calls_by_last_name.pop(last_name, None)
        if pending is not None:
            for f, call in pending:
                if self.is_warp_api(call.callee):  # Warp's tests and examples are project code
                    continue
                callee = self._method_of_instance(f, call) or call.callee
                self._callers.setdefault(self.canonical_function(callee), []).append((f, call))

    def callee_of(self, file: FileModel, call: Call) -> str:
        """The function a call calls, methods of locally constructed instances included."""
        return self._method_of_instance(file, call) or call.callee

    def _method_of_instance(self, file: FileModel, call: Call) -> str | None:
        """``s.step()`` where the local ``s`` is bound to ``Solver(...)``: ``pkg.mod.Solver.step``."""
        head, _, rest = call.callee.partition(".")
        if not rest or "." in rest:
            return None
        fn = file.functions.get(call.ctx.scope)
        if call.ctx.scope and (fn is None or head not in fn.locals):
            return None
        table: dict[tuple[int, str, str], str | None] = self.cached("instance_classes", dict)
        key = (id(file), call.ctx.scope, head)
        if key not in table:  # asked for every dotted call of every file: once per (file, scope, name)
            table[key] = next((a.value.ref for a in self.name_assignments(file, call.ctx.scope, head)
                               if a.value.kind == "call" and a.value.ref and self.is_class(a.value.ref)), None)
        found = table[key]
        return f"{found}.{rest}" if found is not None else None

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
                elif not self.is_warp_api(call.callee):
                    for m in self.modules_launched_by(self.callee_of(f, call), _depth + 1):
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
            elif not self.is_warp_api(call.callee):
                events.extend((call.ctx.order, m, call) for m in self.modules_launched_by(self.callee_of(file, call)))
        events.sort(key=lambda e: e[0])
        return events

    # ------------------------------------------------------------------ entry points
    def runner_predecessors(self, file: FileModel, scope: str) -> list[str]:
        """Test functions a test runner runs before ``scope`` in the same process, nearest first.

        Test methods (``test*`` in a ``Test*`` class or a ``*TestCase`` subclass) have no static
        caller: the runner calls them. unittest (and pytest, for ``TestCase`` classes) runs the
        methods of a class sorted by name; pytest runs plain test functions and ``Test*`` class
        methods in source order. Empty when ``scope`` is not a test."""
        fn = file.functions.get(scope)
        if fn is None:
            return []
        registered = self._registered_tests(file)
        if scope in registered:
            # `add_function_test(TestX, "test_name", impl, devices=...)`: a TestCase method named
            # "test_name_<device>", run in sorted order with the class's other methods
            owner = registered[scope][0]
            ordered_names = sorted((name + "_cpu", qual) for qual, (cls, name) in registered.items() if cls == owner)
            quals = [qual for _, qual in ordered_names]
            return list(reversed(quals[:quals.index(scope)]))
        if not fn.name.startswith("test"):
            return []
        if fn.class_name is not None:
            bases = file.classes.get(fn.class_name, ())
            unittest_style = any(b.rpartition(".")[2].endswith("TestCase") for b in bases)
            if not unittest_style and not fn.class_name.rpartition(".")[2].startswith("Test"):
                return []
            siblings = [f for f in file.functions.values()
                        if f.class_name == fn.class_name and f.ctx.scope == fn.ctx.scope and f.name.startswith("test")]
            key = (lambda f: f.name) if unittest_style else (lambda f: f.ctx.order)
        else:
            if fn.ctx.scope or not is_test_file(file):
                return []
            siblings = [f for f in file.functions.values()
                        if not f.ctx.scope and f.class_name is None and f.name.startswith("test")]
            key = lambda f: f.ctx.order  # noqa: E731 - one of two orders
        ordered = sorted(siblings, key=key)
        index = ordered.index(fn)
        return [f.qualname for f in reversed(ordered[:index])]

    def library_peers(self, file: FileModel, scope: str) -> list[tuple[FileModel, str, str]]:
        """Functions a library's users can call before ``scope`` runs: (file, peer, entry) where ``entry`` is
        ``scope`` or a function that leads to it (a few calls up) and is public API of a library file (a
        public top-level function, or a public method of a public class), and ``peer`` another public
        function of that file. Nothing in the project orders a library's entry points, but a program calls
        several functions of one file's API (a setup, then a step), in an order its author picks. Functions
        of other files are left out: one file's API is used together, files hold alternatives (two
        solvers) that each program uses only one of. So are the functions that lead to ``scope`` (a caller
        launches only what it launches before the call, in ``Project.caller_scopes``), and an object's other
        methods when the entry is its construction (``__init__`` and what it calls run before them)."""
        fn = file.functions.get(scope)
        if fn is None:
            return []

        def compute() -> list[tuple[FileModel, str, str]]:
            entries = [(file, scope)] + [(f, call.ctx.scope) for f, call, _ in self.caller_scopes(
                self.fqname(file, scope)) if call.ctx.scope]
            chain = {(f.path, qualname) for f, qualname in entries}
            found: list[tuple[FileModel, str, str]] = []
            seen: set[tuple[str, str]] = set()
            for entry_file, entry in entries:
                if not self.is_library_api(entry_file, entry):
                    continue
                owner = entry_file.functions[entry].class_name
                # an object's construction (its __init__ and what __init__ calls) runs before its other methods
                constructing = owner is not None and (entry_file.path, f"{owner}.__init__") in chain
                for peer in self._library_api_of(entry_file):
                    if (peer == entry or (entry_file.path, peer) in chain or (entry_file.path, peer) in seen
                            or (constructing and entry_file.functions[peer].class_name == owner)):
                        continue
                    seen.add((entry_file.path, peer))
                    found.append((entry_file, peer, entry))
            return found

        return self.cached(("library peers", file.path, scope), compute)

    def is_library_api(self, file: FileModel, qualname: str) -> bool:
        """``qualname`` is public API of a library file, which the library's users call: a public top-level
        function, or a public method (``__init__``/``__call__`` included) of a public top-level class."""
        return qualname in self._library_api_of(file)

    def _library_api_of(self, file: FileModel) -> tuple[str, ...]:
        """The qualnames of a library file's public API (``is_library_api``), in source order."""
        def compute() -> tuple[str, ...]:
            if self.context_of(file) is not CodeContext.LIBRARY:
                return ()
            public_classes = {name for name in file.classes if "." not in name and not name.startswith("_")}

            def public(fn: Function) -> bool:
                named = not fn.name.startswith("_") or fn.name in ("__init__", "__call__")
                return (named and not fn.ctx.scope and not fn.is_warp
                        and (fn.class_name is None or fn.class_name in public_classes))

            return tuple(fn.qualname for fn in sorted(file.functions.values(), key=lambda f: f.ctx.order)
                         if public(fn))

        return self.cached(("library api", id(file)), compute)

    def _registered_tests(self, file: FileModel) -> dict[str, tuple[str, str]]:
        """Functions registered as test methods by a call that passes a class, a "test..." name and the
        function (Warp's ``add_function_test`` and similar helpers): qualname -> (class, test name)."""
        def compute() -> dict[str, tuple[str, str]]:
            found: dict[str, tuple[str, str]] = {}
            for call in file.calls:
                if call.ctx.scope or len(call.args) < 3:
                    continue
                cls, name, function = call.args[:3]
                if (cls.kind in ("name", "attr") and name.kind == "const" and isinstance(name.const, str)
                        and name.const.startswith("test") and function.kind == "name"
                        and function.text in file.functions and not file.functions[function.text].ctx.scope):
                    found.setdefault(function.text, (cls.ref or cls.text, name.const))
            return found

        return self.cached(("registered tests", id(file)), compute)

    def caller_scopes(self, fqname: str, depth: int = 3) -> list[tuple[FileModel, Call, int]]:
        """Calls that (transitively, up to ``depth`` levels) lead to ``fqname``: (file, call, level)."""
        found: list[tuple[FileModel, Call, int]] = []
        frontier = [fqname]
        seen = {fqname}
        for level in range(1, depth + 1):
            next_frontier = []
            for target in frontier:
                for f, call in self.call_sites(target):
                    found.append((f, call, level))
                    caller = self.fqname(f, call.ctx.scope)
                    if call.ctx.scope and caller not in seen:
                        seen.add(caller)
                        next_frontier.append(caller)
            frontier = next_frontier
        return found

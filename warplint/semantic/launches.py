"""The identity facts: which Warp module each kernel joins, the launches and their block sizes, and the
order in which code launches and loads modules.

Built over the binder's tables and the evaluator (``layer.Layer``), once per project: the kernels
of a module, every launch (expanded through the wrappers whose parameters decide it), the modules a
function launches or loads (transitively), the launch/load timeline of a scope, the order a test
runner runs tests in, the public API a library's users call in an order of their own, and the
calls that lead to a function. The fact modules above (``builds``, ``generics``, ``variants``,
``differentiation``, ``collect``) take an ``IdentityFacts``.
"""

from __future__ import annotations

import bisect
import os
from collections.abc import Callable, Container
from functools import partial
from typing import cast

from warplint.model import Call, Context, FileModel, Function, Kernel, Value
from warplint.names import is_warp

from . import devices
from .bindings import Bindings
from .context import (
    FUNCTION_SETUP,
    MODULE_SETUP,
    SETUP_NAMES,
    Fixture,
    class_setup,
    collected_by_pytest,
    fixture_of,
    is_test,
    is_test_file,
    registered_tests,
    requested_fixtures,
)
from .evaluator import Evaluator, Site
from .events import LAUNCH_CALLS, LOAD_CALLS, Launch, RunnerStep
from .layer import Layer, asked_by_key
from .values import FunctionRef

# What a launch raises before it loads its module: ValueError from its checks of dim and block_dim (negative or
# too many dimensions, block_dim over 1024 on the CPU). Its other errors (an argument's type, a CUDA launch
# failure) come after the load.
RAISED_BEFORE_LOAD = ("ValueError",)
UNIQUE = "unique"


class IdentityFacts(Layer):
    """The identity facts over one project's layer; each memoised in the layer's memo on first use."""

    def __init__(self, bindings: Bindings, evaluator: Evaluator) -> None:
        super().__init__(bindings, evaluator)
        self._launch_cache: dict[str, dict[str, Call]] = {}
        self._before_launches: dict[str, bool] = {}

    # ------------------------------------------------------------------ kernels
    def kernel_module(self, file: FileModel, kernel: Kernel) -> str | None:
        """The Warp module a kernel joins; ``"unique"`` for module="unique"; None if not one known module."""
        value = kernel.module_value
        if value is None or (value.kind == "const" and value.const is None):
            homes = self.defining_modules(file, kernel)
            if homes is not None:
                return self.bindings.canonical_module(next(iter(homes))) if len(homes) == 1 else None
        names, complete = self.evaluator.kernel_modules(file, kernel)
        if complete and len(names) == 1:
            return self.bindings.canonical_module(next(iter(names)))
        return None

    def module_identity(self, file: FileModel, kernel: Kernel) -> str | None:
        """The module a kernel is built in, one name per Warp module: ``kernel_module``, except that each
        module="unique" kernel is a module of its own, ``unique:<its file's module>.<its function>``."""
        module = self.kernel_module(file, kernel)
        if module == UNIQUE:
            return f"{UNIQUE}:{file.module}.{kernel.function or kernel.name}"
        return module

    def defining_modules(self, file: FileModel, kernel: Kernel) -> frozenset[str] | None:
        """The Python modules where the function a ``wp.kernel(f)`` call wraps is defined: without ``module=``
        Warp puts the kernel into ``f.__module__`` (warp-facts §1), not the module of the file that calls
        ``wp.kernel``. None for a decorated ``def`` (its own file) or when ``f`` is not only project functions."""
        wrapped = self.wrapped_functions(file, kernel)
        return None if wrapped is None else frozenset(f.module for f, _ in wrapped)

    def wrapped_functions(self, file: FileModel, kernel: Kernel) -> list[tuple[FileModel, Function]] | None:
        """The project functions a ``wp.kernel(f)`` / ``wp.Kernel(f)`` call can wrap, wherever they are defined;
        None for a decorated ``def`` or when ``f`` can be something else."""
        if kernel.form == "decorator" or kernel.derived:
            return None
        if kernel.function in file.functions:
            return [(file, file.functions[kernel.function])]

        def compute() -> list[tuple[FileModel, Function]] | None:
            call = next((c for c in self.bindings.warp_calls(file, "kernel", "Kernel")
                         if c.ctx is kernel.ctx and c.span == kernel.span), None)
            wrapped = call.args[0] if call is not None and call.args else None
            if wrapped is None:
                return None
            found: list[tuple[FileModel, Function]] = []
            for v in self.evaluator.values(file, wrapped, kernel.ctx.scope):
                function = self.bindings.function(v.fqname) if isinstance(v, FunctionRef) else None
                if function is None:
                    return None  # a function not in the project, or not a function known here
                found.append(function)
            return found or None

        return self.cached(("wrapped functions", id(kernel)), compute)

    @asked_by_key
    def kernels_of_module(self, module: str) -> list[tuple[FileModel, Kernel]]:
        # One pass over every kernel, indexed by module (rules ask for many modules, per file).
        def by_module() -> dict[str | None, list[tuple[FileModel, Kernel]]]:
            table: dict[str | None, list[tuple[FileModel, Kernel]]] = {}
            for f in self.bindings.files:
                for k in f.kernels:
                    table.setdefault(self.kernel_module(f, k), []).append((f, k))
            return table

        return list(self.cached("kernels_by_module", by_module).get(module, ()))

    def kernel_launches(self, file: FileModel, kernel: Kernel) -> list[tuple[FileModel, Call]]:
        """The launch calls that can launch ``kernel``, whatever module it joins (``launches`` keeps only
        kernels of one known module)."""
        def by_kernel() -> dict[int, list[tuple[FileModel, Call]]]:
            table: dict[int, list[tuple[FileModel, Call]]] = {}
            for f in self.bindings.files:
                for call, kernels in self.kernels_launched_in(f):
                    for k in kernels:
                        table.setdefault(id(k), []).append((f, call))
            return table

        return list(self.cached("launches_by_kernel", by_kernel).get(id(kernel), ()))

    def kernels_launched_in(self, file: FileModel) -> tuple[tuple[Call, tuple[Kernel, ...]], ...]:
        """Each launch call of ``file`` in code that may run, with the kernels it can launch, whatever module they
        join (``kernel_launches``' part of one file; kept across an edit that changes nothing it read)."""
        def compute(layer: Layer) -> tuple[tuple[Call, tuple[Kernel, ...]], ...]:
            facts = cast(IdentityFacts, layer)
            return tuple((call, tuple(k for _, k in facts.find_kernels(file, call.ctx.scope, call.bound("kernel"))))
                         for call in facts.bindings.warp_calls(file, *LAUNCH_CALLS)
                         if facts.bindings.may_run(file, call.ctx.scope))  # code nothing runs launches nothing

        return self.kept("kernels launched", file, compute)

    def runs_before_launches(self, fqname: str) -> bool:
        """Every call of ``fqname`` runs before any launch or load: each is made outside loops (a loop that
        launches nothing in it: `K = {c: make(c) for c in cs}`, then the launches), at import time or in a function
        itself only called so (however many calls out), with nothing launched before it there. False when nothing
        in the project calls it (an entry point: its callers are not known) or through a recursive call. One
        summary per function."""
        return self.evaluator.budget.summary(self._before_launches, fqname,
                                             lambda: self._runs_before_launches(fqname), False)

    def _runs_before_launches(self, fqname: str) -> bool:
        sites = self.bindings.call_sites(fqname)
        if not sites:
            return False
        for f, call in sites:
            timeline = self.launch_timeline(f, call.ctx.scope)
            # a loop repeats the call after a launch of its scope made in the loop; one that launches nothing
            # (`for n in ns: K[n] = make(n)`) runs whole before the launches after it
            if (call.ctx.in_loop and _repeats_after_launch(call.ctx, timeline)) or any(
                    launch.ctx.precedes(call.ctx) for _, _, launch in timeline):
                return False
            receiver = call.receiver  # `App().run()`: the instance is made, its __init__ run, before the method
            if receiver is not None and receiver.kind == "call" and receiver.ref and self.modules_launched_by(
                    self.bindings.canonical_function(receiver.ref)):
                return False
            if call.ctx.scope and not self.runs_before_launches(self.bindings.fqname(f, call.ctx.scope)):
                return False
        return True

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

    def launches(self, file: FileModel) -> list[Launch]:
        """The launches ``file`` makes (its own parameters unbound); kept across an edit that changes nothing
        they read (``Layer.kept``)."""
        return list(self.kept("launches", file, lambda facts: cast(IdentityFacts, facts)._launches(file)))

    def _launches(self, file: FileModel, site: Site | None = None, scope: str | None = None) -> list[Launch]:
        result = []
        for call in self.bindings.warp_calls(file, *LAUNCH_CALLS):
            if (scope is not None and call.ctx.scope != scope) or call.ctx.expects_raise == RAISED_BEFORE_LOAD:
                continue  # a launch the test expects to fail its checks loads nothing
            if not self.bindings.may_run(file, call.ctx.scope):
                continue  # in code nothing runs (a leftover helper of a test file): it builds nothing
            block_dims = devices.cuda_block_dims(self, file, call, site)
            for kf, kernel in self.find_kernels(file, call.ctx.scope, call.bound("kernel"), site):
                module = self.module_identity(kf, kernel)
                if module is None:
                    continue
                result.append(Launch(file, call, kf, kernel, module, block_dims, site))
        return result

    def launches_at(self, site: Site) -> list[Launch]:
        """The launches the function ``site`` calls makes, directly, with its parameters bound there."""
        def compute() -> list[Launch]:
            found = self.bindings.function(site.function)
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
        for f in self.bindings.files:
            result.extend(self.launches_through_callers(f))
        return result

    def launches_through_callers(self, file: FileModel) -> list[Launch]:
        """``file``'s part of ``all_launches``: each of its launches at every call that decides it; kept across
        an edit that changes nothing it read (``Layer.kept``: the calls of its wrappers among them)."""
        def compute(layer: Layer) -> list[Launch]:
            facts = cast(IdentityFacts, layer)
            return [found for launch in facts.launches(file) for found in facts._through_callers(launch)]

        return self.kept("launches through callers", file, compute)

    def launches_of_module(self, module: str) -> list[Launch]:
        """``all_launches`` of the Warp module ``module`` (a ``module_identity``), in their order: grouped once,
        since facts ask module by module and a scan of every launch for each was quadratic."""
        def by_module() -> dict[str, list[Launch]]:
            table: dict[str, list[Launch]] = {}
            for launch in self.all_launches():
                table.setdefault(launch.module, []).append(launch)
            return table

        return list(self.cached("launches by module", by_module).get(module, ()))

    def _through_callers(self, launch: Launch) -> list[Launch]:
        """The launch at each call that decides the variant the product builds (``Evaluator.deciding_sites``),
        else as written."""
        fn = launch.file.functions.get(launch.call.ctx.scope)
        if fn is None:
            return [launch]
        # the variant's identity: which kernel, which block size (the device set is followed anyway)
        deciding = [v for v in (launch.call.bound("kernel"), launch.call.bound("block_dim")) if v is not None]
        sites = self.evaluator.deciding_sites(launch.file, fn, deciding, product=True)
        return [ln for site in sites for ln in self.launches_at(site) if ln.call is launch.call] or [launch]

    def launch_block_dim(self, launch: Launch) -> int | None:
        """The block_dim a launch uses on CUDA (256 when not given); None when not one value known statically."""
        found, value = launch.block_dims.single_constant()
        return value if found and isinstance(value, int) else None

    def repeats_cached_call(self, file: FileModel, call: Call, fqname: str, before: Call) -> bool:
        """``call`` calls the memoised (``functools.cache``) function ``fqname`` with the literal arguments of
        another call that runs before ``before``: earlier in the same scope, or at import (module level). The
        cache returns what that call made, so this one defines nothing new."""
        found = self.bindings.function(fqname)
        if found is None or not self.evaluator.is_memoized(found[1]):
            return False
        key = self._literal_arguments(file, call)
        if key is None:
            return False
        for other_file, other in self.bindings.call_sites(fqname):
            if other is call:
                continue
            earlier = ((other_file is file and other.ctx.scope == before.ctx.scope
                        and other.ctx.precedes(before.ctx))
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

    def modules_launched_by(self, fqname: str) -> dict[str, Call]:
        """Warp modules a function launches or loads, directly or through project calls (however deep: one
        summary per function, a recursive call adding nothing).

        Maps module name -> the first call in this function that leads there.
        ``"*"`` stands for every module (``force_load()`` without ``modules``).
        """
        def compute() -> dict[str, Call]:
            found = self.bindings.function(fqname)
            if found is None and self.bindings.is_class(fqname):
                found = self.bindings.function(f"{fqname}.__init__")  # constructing an instance runs its __init__
            if found is None:
                return {}
            return self._modules_reached(*found, self._launches_by_scope(found[0]).get(found[1].qualname, []))

        return self.evaluator.budget.summary(self._launch_cache, fqname, compute, {})

    def modules_launched_at(self, file: FileModel, call: Call) -> list[str]:
        """The Warp modules a call of a project function launches or loads, with the arguments this call passes:
        a launch in the callee whose kernel is one of its parameters launches the kernel this call passes
        (``Runner().run(own)`` loads ``own``'s module), not every kernel some call passes (``modules_launched_by``).
        Calls the callee makes in turn are taken over every call of theirs."""
        def compute() -> list[str]:
            callee = self.bindings.callee_of(file, call)
            found = self.bindings.function(callee)
            if found is None or not self.modules_launched_by(callee):
                return list(self.modules_launched_by(callee))
            f, fn = found
            site = self.evaluator.site(file, call.ctx.scope, call, callee, None)
            at_call = self.launches_at(site)
            # a launch whose kernel this call's arguments do not tell keeps every kernel it can launch
            told = {id(ln.call) for ln in at_call}
            written = self._launches_by_scope(f).get(fn.qualname, ())
            launches = at_call + [ln for ln in written if id(ln.call) not in told]
            return list(self._modules_reached(f, fn, launches, site))

        return self.cached(("modules launched at", id(call)), compute)

    def _modules_reached(self, f: FileModel, fn: Function, launches: list[Launch], site: Site | None = None
                         ) -> dict[str, Call]:
        """The modules the body of ``fn`` launches (``launches``, those written in it), loads (its parameters
        bound at ``site`` when given), or reaches through the project functions it calls, each with the first
        call of the body that leads there."""
        modules: dict[int, list[str]] = {}
        for ln in launches:
            if ln.call.ctx.scope == fn.qualname:
                modules.setdefault(id(ln.call), []).append(ln.module)
        result: dict[str, Call] = {}
        for call in self.bindings.calls_in(f, fn.qualname):
            if id(call) in modules:
                reached = modules[id(call)]
            elif is_warp(call.callee, *LOAD_CALLS):
                reached = self.modules_loaded_by(f, call, site)
            elif not self.bindings.is_warp_api(call.callee):
                reached = list(self.modules_launched_by(self.bindings.callee_of(f, call)))
            else:
                continue
            for m in reached:
                result.setdefault(m, call)
        return result

    def loads_at(self, file: FileModel, call: Call) -> dict[int, list[str]]:
        """The loads written in the project function ``call`` calls, with its parameters bound at this call:
        id of each load call -> the modules it loads (``preload(wp.get_module("sim"))`` loads ``sim``, not every
        module some call of ``preload`` passes)."""
        def compute() -> dict[int, list[str]]:
            callee = self.bindings.callee_of(file, call)
            found = self.bindings.function(callee)
            if found is None:
                return {}
            f, fn = found
            loads = self._loads_in(f, fn.qualname)
            if not loads:
                return {}
            site = self.evaluator.site(file, call.ctx.scope, call, callee, None)
            return {id(c): self.modules_loaded_by(f, c, site) for c in loads}

        return self.cached(("loads at", id(call)), compute)

    def _loads_in(self, file: FileModel, scope: str) -> list[Call]:
        """The load calls written in ``scope`` of ``file`` (``calls_in``): once per function, not per call of it."""
        return self.cached(("loads in", id(file), scope),
                           lambda: [c for c in self.bindings.calls_in(file, scope) if is_warp(c.callee, *LOAD_CALLS)])

    def modules_loaded_by(self, file: FileModel, call: Call, site: Site | None = None) -> list[str]:
        """The Warp modules a ``load_module``/``force_load`` call loads (``"*"``: every module), its parameters
        bound at ``site`` when given (else from every call of its function)."""
        if is_warp(call.callee, "force_load"):
            modules = call.bound("modules")
            if modules is None or (modules.kind == "const" and modules.const is None):
                return ["*"]
            return []
        target = call.bound("module")
        if target is None or (target.kind == "const" and target.const is None):
            return [file.module]  # without a module, the module where the call is written
        # a name, a Python module object or a wp.Module (``wp.get_module(name)``), as the evaluator follows it
        names, complete = self.evaluator.module_names(file, target, call.ctx.scope, site)
        return sorted(self.bindings.canonical_module(n) for n in names) if complete else []

    # ------------------------------------------------------------------ order within a scope
    def launch_timeline(self, file: FileModel, scope: str) -> list[tuple[int, str, Call]]:
        """(order, module, call) for each statement of ``scope`` that launches or loads a
        Warp module, directly or through project functions it calls. ``"*"`` = every module."""
        return self.cached(("timeline", file.path, scope), lambda: self._launch_timeline(file, scope))

    def launched_before_call(self, file: FileModel, call: Call) -> list[tuple[str, Call]]:
        """(module, call) for each launch or load that runs before ``call``: earlier in its scope
        (``launch_timeline``), or in its own statement, by the call that makes what it is called on, which Python
        evaluates first (``App().run()``: ``App()`` runs ``__init__``; ``make(c)()``: ``make`` runs)."""
        found = [(m, c) for _, m, c in self.launch_timeline(file, call.ctx.scope) if c.ctx.precedes(call.ctx)]
        receiver = call.receiver
        if receiver is not None and receiver.kind == "call" and receiver.ref:
            inner = next((c for c in self.bindings.calls_in(file, call.ctx.scope)
                          if c.ctx.order == call.ctx.order and c.callee == receiver.ref), None)
            if inner is not None:
                made_by = self.bindings.canonical_function(receiver.ref)
                found.extend((m, inner) for m in self.modules_launched_by(made_by))
        return found

    def loaded_between(self, file: FileModel, earlier: Kernel, later: Kernel, module: str) -> bool:
        """``module`` is launched or loaded in the scope that creates both kernels, after ``earlier`` is made and
        before ``later`` is: ``later`` joins a module already loaded without it (kernels one function makes one
        after another, each launched before the next is made), not one built with both."""
        scope = later.ctx.scope
        if earlier.ctx.scope != scope or earlier.ctx.order >= later.ctx.order:
            return False
        return any(earlier.ctx.order < order < later.ctx.order and m in (module, "*")
                   and call.ctx.precedes(later.ctx) for order, m, call in self.launch_timeline(file, scope))

    def launches_or_loads_before(self, file: FileModel, scope: str, ctx: Context) -> bool:
        """Whether a statement of ``scope`` that launches or loads a Warp module (an event of ``launch_timeline``)
        runs before the one at ``ctx``: its calls that run later are not followed (a kernel is mostly made before
        its scope's launches, and a timeline follows every call of the scope into the project)."""
        direct = self._launched_by_call(file, scope)
        return any(self._modules_at(file, call, direct) for call in self.bindings.calls_in(file, scope)
                   if call.ctx.precedes(ctx))

    def _launch_timeline(self, file: FileModel, scope: str) -> list[tuple[int, str, Call]]:
        direct = self._launched_by_call(file, scope)
        events = [(call.ctx.order, m, call) for call in self.bindings.calls_in(file, scope)
                  for m in self._modules_at(file, call, direct)]
        events.sort(key=lambda e: e[0])
        return events

    def _launched_by_call(self, file: FileModel, scope: str) -> dict[int, list[str]]:
        """id of each launch call written in ``scope`` -> the modules it launches, each once."""
        direct: dict[int, list[str]] = {}
        for ln in self._launches_by_scope(file).get(scope, ()):
            if ln.module not in direct.get(id(ln.call), ()):
                direct.setdefault(id(ln.call), []).append(ln.module)
        return direct

    def _modules_at(self, file: FileModel, call: Call, direct: dict[int, list[str]]) -> list[str]:
        """The modules a statement's call launches or loads (a timeline's events of it): its own launches
        (``direct``), a load's modules, or what a call of a project function launches with its arguments."""
        if id(call) in direct:
            return direct[id(call)]
        if is_warp(call.callee, *LOAD_CALLS):
            return self.modules_loaded_by(file, call)
        if not self.bindings.is_warp_api(call.callee):
            return self.modules_launched_at(file, call)
        return []

    def _launches_by_scope(self, file: FileModel) -> dict[str, list[Launch]]:
        """The launches of ``file`` (``launches``) by the scope they are written in, in their order: a timeline is
        asked for each scope of a file."""
        def compute() -> dict[str, list[Launch]]:
            table: dict[str, list[Launch]] = {}
            for ln in self.launches(file):
                table.setdefault(ln.call.ctx.scope, []).append(ln)
            return table

        return self.cached(("launches by scope", id(file)), compute)

    # ------------------------------------------------------------------ entry points
    def runner_predecessors(self, file: FileModel, scope: str) -> list[str]:
        """Test functions a test runner runs before ``scope`` in the same process, nearest first.

        Test methods (``test*`` in a ``Test*`` class or a ``*TestCase`` subclass) have no static
        caller: the runner calls them. unittest (and pytest, for ``TestCase`` classes) runs the
        methods of a class sorted by name; pytest runs plain test functions and ``Test*`` class
        methods in source order. Empty when ``scope`` is not a test."""
        return list(self.cached(("runner predecessors of", id(file), scope),
                                lambda: self._runner_predecessors(file, scope)))

    def _runner_predecessors(self, file: FileModel, scope: str) -> list[str]:
        fn = file.functions.get(scope)
        if fn is None:
            return []
        registered = self._registered_tests(file)
        if scope in registered:
            # `add_function_test(TestX, "test_name", impl, devices=...)`: a TestCase method named
            # "test_name_<device>", run in sorted order with the class's other methods
            owner = registered[scope][0]

            def sorted_by_name() -> list[str]:  # once per class, not per test of it
                ordered_names = sorted((name + "_cpu", qual) for qual, (cls, name) in registered.items()
                                       if cls == owner)
                return [qual for _, qual in ordered_names]

            quals = self.cached(("registered tests in order", id(file), owner), sorted_by_name)
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

    def tests_run_before(self, file: FileModel, scope: str) -> list[tuple[FileModel, str]]:
        """Tests a pytest session runs before the test ``scope``, in one process: those of its own file
        (``runner_predecessors``), then those of the test files before it in its folder, nearest file first.
        pytest collects a folder's files sorted by name (``test_*.py``, ``*_test.py``) and runs their tests in
        that order. Empty when ``scope`` is not a test."""
        def compute() -> list[tuple[FileModel, str]]:
            if not self._is_a_test(file, scope):
                return []
            return [(file, qualname) for qualname in self.runner_predecessors(file, scope)] + [
                (f, qualname) for f in self._test_files_before(file) for qualname in self._tests_of(f)]

        return self.cached(("tests run before", id(file), scope), compute)

    def runner_steps_before(self, file: FileModel, scope: str) -> list[RunnerStep]:
        """The code a test runner runs before the body of the test ``scope``, in one process, nearest first: the
        setup it runs for this test (``runner_setup``), then each test of ``tests_run_before`` with the setup run
        for it. Each fixture only up to its first ``yield`` (what follows is teardown, run after its test or at
        the end of its scope); teardowns are left out. Empty when ``scope`` is not a test."""
        return self.cached(("runner steps before", id(file), scope),
                           lambda: self._steps_of_blocks(file, scope, None))

    def runner_steps_in(self, file: FileModel, scope: str, files: Container[int]) -> list[RunnerStep]:
        """``runner_steps_before``'s steps written in ``files`` (ids of models), in its order. The setups of a test
        file whose own model and ``conftest.py`` files are none of them are not listed: asked for the code that can
        launch one module, most test files of a folder are passed over."""
        return self._steps_of_blocks(file, scope, files)

    def _steps_of_blocks(self, file: FileModel, scope: str, files: Container[int] | None) -> list[RunnerStep]:
        if not self._is_a_test(file, scope):
            return []
        # the same blocks as ``tests_run_before`` lists the tests: those of this file, then each earlier file's (a
        # folder of test files repeats every earlier file's steps for each test: made once per file). Each block's
        # steps are written in its test file or a conftest.py pytest imports before it (``runner_setup``).
        blocks: list[tuple[FileModel, Callable[[], list[RunnerStep]]]] = [
            (file, lambda: list(reversed(self.runner_setup(file, scope))))]
        blocks.extend((file, partial(self._test_steps, file, earlier))
                      for earlier in self.runner_predecessors(file, scope))
        blocks.extend((f, partial(self._file_steps, f)) for f in self._test_files_before(file))
        found: list[RunnerStep] = []
        seen: set[tuple[int, str]] = set()
        for test_file, block in blocks:
            if files is not None and id(test_file) not in files and not any(
                    id(f) in files for f in self.imported_first_by_runner(test_file)):
                continue
            for step in block():
                key = (id(step.file), step.scope)
                if key not in seen and (files is None or key[0] in files):
                    seen.add(key)
                    found.append(step)
        return found

    def _test_files_before(self, file: FileModel) -> list[FileModel]:
        """The test files of ``file``'s folder pytest runs before it (sorted by name), nearest first."""
        beside = self._test_files_beside(file)
        names = self.cached(("test file names", id(beside)), lambda: [os.path.basename(f.path) for f in beside])
        before = bisect.bisect_left(names, os.path.basename(file.path))  # (sorted by name: ``_test_files_beside``)
        return beside[before - 1::-1] if before else []

    def _test_steps(self, file: FileModel, test: str) -> list[RunnerStep]:
        """A test run by the runner, then the setup run for it, nearest first."""
        return [RunnerStep(file, test), *reversed(self.runner_setup(file, test))]

    def _file_steps(self, file: FileModel) -> list[RunnerStep]:
        """``_test_steps`` of every test of ``file``, in ``tests_run_before``'s order."""
        return self.cached(("runner steps of file", id(file)),
                           lambda: [step for test in self._tests_of(file) for step in self._test_steps(file, test)])

    def runner_setup(self, file: FileModel, scope: str) -> list[RunnerStep]:
        """The setup a test runner runs before the body of the test ``scope``, in its order: the test module's
        ``setup_module``/``setUpModule``; its class's ``setUpClass``/``setup_class``; the pytest fixtures it
        requests (by parameter or ``usefixtures``) and those ``autouse`` where it is, each after the fixtures it
        requests in turn; then ``setup_method``/``setUp`` or ``setup_function``. A fixture runs up to its first
        ``yield``. Fixtures are looked up as pytest does: in the test's class, its module, then the
        ``conftest.py`` files of its folder and the folders above, nearest first; a name none defines (a
        plugin's, such as ``tmp_path``) adds nothing."""
        fn = file.functions.get(scope)
        if fn is None:
            return []

        def compute() -> list[RunnerStep]:
            steps = [RunnerStep(file, name) for name in MODULE_SETUP
                     if name in file.functions and file.functions[name].class_name is None]
            # a function a call registers as a method of a TestCase class (``add_function_test``) runs as that
            # class's method; its parameters are what the registering wrapper passes, not fixtures
            registered = self._registered_tests(file).get(scope)
            owner = fn.class_name if registered is None else registered[0].removeprefix(f"{file.module}.")
            requests = requested_fixtures(fn) if registered is None else []
            if owner is not None:
                once, per_test = class_setup(file, owner) if owner in file.classes else ([], [])
                steps.extend(RunnerStep(file, q) for q in once)
            else:
                per_test = [name for name in FUNCTION_SETUP
                            if name in file.functions and file.functions[name].class_name is None]
            visible = self._fixtures_visible(file, owner if owner in file.classes else None)
            ordered: list[tuple[FileModel, Function, Fixture]] = []
            placed: set[tuple[int, str]] = set()

            def place(name: str, after: tuple[int, str] | None) -> None:
                candidates = visible.get(name, [])
                if after is not None:  # a fixture requesting its own name gets the one it overrides
                    index = next((i for i, (f, _, fx) in enumerate(candidates)
                                  if (id(f), fx.qualname) == after), len(candidates))
                    candidates = candidates[index + 1:]
                if not candidates:
                    return
                f, fixture_fn, fixture = candidates[0]
                key = (id(f), fixture.qualname)
                if key in placed:
                    return
                placed.add(key)
                for requested in requested_fixtures(fixture_fn):
                    place(requested, key if requested == fixture.name else None)
                ordered.append((f, fixture_fn, fixture))

            for name, found in visible.items():
                if found and found[0][2].autouse:
                    place(name, None)
            for name in requests:
                place(name, None)
            steps.extend(RunnerStep(f, fixture_fn.qualname, fixture_fn.first_yield) for f, fixture_fn, _ in ordered)
            steps.extend(RunnerStep(file, q) for q in per_test)
            return steps

        return self.cached(("runner setup", id(file), scope), compute)

    def tests_set_up_by(self, file: FileModel, scope: str) -> list[tuple[FileModel, str, RunnerStep]]:
        """The tests before whose body the test runner runs the function ``scope`` of ``file`` as their setup (a
        pytest fixture they request, directly, through another fixture or autouse; ``setUpClass``, ``setUp``, an
        xunit ``setup_*``), each with that function's step of their ``runner_setup``. The runner calls the
        function for no one else: it runs, as setup, once before each of them (or, for a wider scope, before the
        first), and its teardown after. Empty for a function that is no test's setup."""
        fn = file.functions.get(scope)
        if fn is None or (fn.name not in SETUP_NAMES and not (fn.decorators and fixture_of(fn) is not None)):
            return []
        # the tests that can see it: its own file's, and those of the files pytest imports it before (a conftest.py
        # and the test files below its folder), as ``_fixtures_visible`` looks fixtures up
        seeing = self.cached(("files seeing the fixtures of", id(file)), lambda: [file, *(
            f for f in self.bindings.files if f is not file and file in self.imported_first_by_runner(f))])
        return [found for f in seeing for found in self._setups_of_tests(f).get((id(file), scope), ())]

    def _setups_of_tests(self, file: FileModel) -> dict[tuple[int, str], list[tuple[FileModel, str, RunnerStep]]]:
        """(id of a setup's file, its scope) -> the tests of ``file`` it runs for, with its step (``runner_setup``)."""
        def compute() -> dict[tuple[int, str], list[tuple[FileModel, str, RunnerStep]]]:
            table: dict[tuple[int, str], list[tuple[FileModel, str, RunnerStep]]] = {}
            tests = self._tests_of(file)
            for test in [*tests, *(q for q in self._registered_tests(file) if q not in tests)]:
                for step in self.runner_setup(file, test):
                    table.setdefault((id(step.file), step.scope), []).append((file, test, step))
            return table

        return self.cached(("setups of tests", id(file)), compute)

    def _fixtures_visible(self, file: FileModel, class_name: str | None
                          ) -> dict[str, list[tuple[FileModel, Function, Fixture]]]:
        """The fixtures a test of ``file`` (in the class ``class_name``) can request, by name, nearest first."""
        def compute() -> dict[str, list[tuple[FileModel, Function, Fixture]]]:
            table: dict[str, list[tuple[FileModel, Function, Fixture]]] = {}
            places: list[tuple[FileModel, str | None]] = [(file, class_name)] if class_name is not None else []
            places.append((file, None))
            places.extend((f, None) for f in reversed(self.imported_first_by_runner(file)))
            for f, owner in places:
                for candidate in self._fixtures_of(f):
                    if candidate[1].class_name == owner:
                        table.setdefault(candidate[2].name, []).append(candidate)
            return table

        return self.cached(("fixtures visible", id(file), class_name), compute)

    def _fixtures_of(self, file: FileModel) -> list[tuple[FileModel, Function, Fixture]]:
        """The fixtures ``file`` defines at module level or in a class body, in its order."""
        def compute() -> list[tuple[FileModel, Function, Fixture]]:
            found = []
            for fn in file.functions.values():
                fixture = fixture_of(fn) if fn.decorators else None
                if fixture is not None and fn.qualname == (f"{fn.class_name}.{fn.name}" if fn.class_name
                                                           else fn.name):
                    found.append((file, fn, fixture))
            return found

        return self.cached(("fixtures of", id(file)), compute)

    def remade_kernel(self, file: FileModel, kernel: Kernel) -> Kernel | None:
        """An earlier kernel made of the same function with the same options that runs whenever ``kernel`` is
        made, before it (``Evaluator.remade_kernel``: earlier in its scope, or at import), or, for a kernel a
        test makes, made unconditionally in code the test runner runs first (``runner_steps_before``: a
        fixture's setup, ``setUpClass``, an earlier test): ``kernel`` is identical content again, which Warp's
        module hash absorbs. None otherwise."""
        found = self.evaluator.remade_kernel(file, kernel)
        if found is not None or kernel.form != "call" or not kernel.ctx.scope:
            return found
        for step in self.runner_steps_before(file, kernel.ctx.scope):
            for earlier in self.evaluator.kernels_of(step.file):
                if (earlier.ctx.scope == step.scope and step.runs_first(earlier.ctx) and not earlier.derived
                        and not (earlier.ctx.conditions or earlier.ctx.in_loop or earlier.ctx.try_index is not None)
                        and self.evaluator.made_alike(step.file, earlier, file, kernel)):
                    return earlier
        return None

    def _tests_of(self, file: FileModel) -> list[str]:
        """The qualnames of the functions of ``file`` pytest runs as tests (``_is_test``), in the file's order:
        found once per file, since each test of a folder lists those of every file before its own."""
        return self.cached(("tests of", id(file)),
                           lambda: [fn.qualname for fn in file.functions.values() if self._is_test(file, fn)])

    def test_runs_before(self, test: tuple[FileModel, str], other: tuple[FileModel, str]) -> bool:
        """Whether ``test`` (file, scope) is among ``tests_run_before(*other)``, told without listing them: a
        folder of test files lists every test of the files before, and this is asked per pair of tests."""
        (file, scope), (other_file, other_scope) = test, other
        if not self._is_a_test(other_file, other_scope):
            return False
        if file is other_file:
            return scope in self.cached(("runner predecessors", id(file), other_scope),
                                        lambda: frozenset(self.runner_predecessors(other_file, other_scope)))
        fn = file.functions.get(scope)
        return (fn is not None and fn.qualname == scope and self._is_test(file, fn)
                and any(f is file for f in self._test_files_beside(other_file))
                and os.path.basename(file.path) < os.path.basename(other_file.path))

    def _is_a_test(self, file: FileModel, scope: str) -> bool:
        """``scope`` is a test the runner runs (``tests_run_before`` lists the tests run before it)."""
        fn = file.functions.get(scope)
        return fn is not None and bool(self.runner_predecessors(file, scope) or self._is_test(file, fn))

    def _test_files_beside(self, file: FileModel) -> list[FileModel]:
        """The files pytest collects in ``file``'s folder, sorted by name (the order it runs them in)."""
        def compute() -> dict[str, list[FileModel]]:
            by_folder: dict[str, list[FileModel]] = {}
            for f in self.bindings.files:
                if collected_by_pytest(f):  # a file named on the command line: relative
                    by_folder.setdefault(os.path.dirname(os.path.abspath(f.path)), []).append(f)
            return {folder: sorted(files, key=lambda f: os.path.basename(f.path))
                    for folder, files in by_folder.items()}

        return self.cached("test files by folder", compute).get(os.path.dirname(os.path.abspath(file.path)), [])

    def imported_first_by_runner(self, file: FileModel) -> list[FileModel]:
        """The ``conftest.py`` files pytest imports before ``file``, outermost first (the binder's
        ``conftest_files_before``)."""
        return list(self.bindings.conftest_files_before(file))

    def run_by_test_runner(self, file: FileModel, scope: str) -> bool:
        """``scope`` is a test the runner calls, with no caller in the project: pytest and unittest import
        the test file (collection) before they run any of its tests, so every module-level statement of the
        file has run when the test starts."""
        fn = file.functions.get(scope)
        return fn is not None and (scope in self._registered_tests(file) or self._is_test(file, fn))

    @staticmethod
    def _is_test(file: FileModel, fn: Function) -> bool:
        return is_test(file, fn)

    def library_peers(self, file: FileModel, scope: str) -> list[tuple[FileModel, str, str]]:
        """Functions a library's users can call before ``scope`` runs: (file, peer, entry) where ``entry`` is
        ``scope`` or a function that leads to it (a few calls up) and is public API of a library file (a
        public top-level function, or a public method of a public class), and ``peer`` another public
        function of that file. Nothing in the project orders a library's entry points, but a program calls
        several functions of one file's API (a setup, then a step), in an order its author picks. Functions
        of other files are left out: one file's API is used together, files hold alternatives (two
        solvers) that each program uses only one of. So are the functions that lead to ``scope`` (a caller
        launches only what it launches before the call, in ``caller_scopes``), and an object's other
        methods when the entry is its construction (``__init__`` and what it calls run before them)."""
        fn = file.functions.get(scope)
        if fn is None:
            return []

        def compute() -> list[tuple[FileModel, str, str]]:
            entries = [(file, scope)] + [(f, call.ctx.scope) for f, call, _ in self.caller_scopes(
                self.bindings.fqname(file, scope)) if call.ctx.scope]
            chain = {(f.path, qualname) for f, qualname in entries}
            found: list[tuple[FileModel, str, str]] = []
            seen: set[tuple[str, str]] = set()
            for entry_file, entry in entries:
                if not self.bindings.is_library_api(entry_file, entry):
                    continue
                owner = entry_file.functions[entry].class_name
                # an object's construction (its __init__ and what __init__ calls) runs before its other methods
                constructing = owner is not None and (entry_file.path, f"{owner}.__init__") in chain
                for peer in self.bindings._library_api_of(entry_file):
                    if (peer == entry or (entry_file.path, peer) in chain or (entry_file.path, peer) in seen
                            or (constructing and entry_file.functions[peer].class_name == owner)):
                        continue
                    seen.add((entry_file.path, peer))
                    found.append((entry_file, peer, entry))
            return found

        return self.cached(("library peers", file.path, scope), compute)

    def _registered_tests(self, file: FileModel) -> dict[str, tuple[str, str]]:
        return self.bindings.file_facts.cached(file, registered_tests)  # (the file's own table)

    def caller_scopes(self, fqname: str, depth: int = 3) -> list[tuple[FileModel, Call, int]]:
        """Calls that (transitively, up to ``depth`` levels) lead to ``fqname``: (file, call, level). A
        neighbourhood the rules enumerate (a caller far out, a program's main, launches most of the program), not
        a bound on how far a chain resolves: that is the question's budget (budget.py)."""
        found: list[tuple[FileModel, Call, int]] = []
        frontier = [fqname]
        seen = {fqname}
        for level in range(1, depth + 1):
            next_frontier = []
            for target in frontier:
                for f, call in self.bindings.call_sites(target):
                    found.append((f, call, level))
                    caller = self.bindings.fqname(f, call.ctx.scope)
                    if call.ctx.scope and caller not in seen:
                        seen.add(caller)
                        next_frontier.append(caller)
            frontier = next_frontier
        return found


def _repeats_after_launch(ctx: Context, timeline: list[tuple[int, str, Call]]) -> bool:
    """A statement in a loop (``ctx``) can run again after a launch or load of its scope: one made inside the
    loop (a later turn follows it). One after the loop's last statement runs once the loop is done; when the loop's
    extent is not known, any launch of the scope in a function (called again), or of module-level code, counts."""
    loop = ctx.loop
    if loop is None:
        return bool(ctx.scope or timeline)
    return any(order <= loop.end for order, _, _ in timeline)

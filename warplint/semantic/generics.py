"""Generic kernels' instances: where they are registered, and which launches of their module can run first.

A generic kernel (``Any`` in its signature) contributes nothing to its module's hash until it has
instances. ``wp.overload(kernel, [...])`` or a launch with concrete types adds one, and adding one marks
the module modified, so an instance made after the module was loaded rebuilds the whole module. The
questions rules ask:

- ``registrations``: each ``wp.overload`` of a kernel (a call, or an ``@wp.overload`` stub) and whether it
  runs at import (module scope, or in a function a module-level call reaches); one in a function called both
  at import and at run time (a getter warmed up at import) is listed twice, once for each;
- ``kernel_timeline``: per statement of a scope, which kernels of which modules it launches or loads,
  directly or through project calls (the module-level ``IdentityFacts.launch_timeline`` at kernel grain);
- ``launched_before``: a launch or load of a module, of every kernel or all but one, that can run before a
  call: earlier in its scope, in a test the runner runs first, in a caller before the call that leads
  there (source order and the call graph, as ``IdentityFacts.launch_timeline`` approximates run order), or in
  another public function of the library file whose public function leads there (its users call them in
  an order of their own: ``IdentityFacts.library_peers``);
- ``generic_launches``: a generic kernel's launches, one per project call of the wrappers that decide its kernel,
  in source order (``generic_launches_in_run_order``: in run order, a ``launched_before`` per launch, asked
  apart so that only a rule that needs the order pays for it); ``launch_origins``: the calls
  a kernel's launches are made from (a launch, or the outermost call of the wrappers that decide it), once each.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

from warplint.diagnostic import Span
from warplint.model import Call, Context, FileModel, Kernel, Value
from warplint.names import is_warp

from .arg_types import launch_signature, value_types
from .builds import preload_unused
from .evaluator import Source
from .events import place
from .file_facts import functions_by_decorator
from .layer import asked_by_key
from .statement_order import constructor_before
from .values import WarpType
from .variants import made_unbound

if TYPE_CHECKING:
    from .evaluator import Evaluator
    from .events import Launch
    from .launches import IdentityFacts

LAUNCH_CALLS = ("launch", "launch_tiled")
LOAD_CALLS = ("load_module", "force_load")

# (defining file's path, the qualname of the function it wraps, else its name): a re-definition at the same
# place replaces the earlier one; two factories' local `_kernel`s are two kernels
KernelKey = tuple[str, str]


def kernel_key(facts: IdentityFacts, file: FileModel, kernel: Kernel) -> KernelKey:
    """Which Warp kernel ``kernel`` is. ``wp.kernel(f)`` of a module-level function is the kernel of ``f``'s
    key in ``f``'s module wherever the call is written (two tests that each call it make objects of one
    kernel, the later replacing the earlier), so it is keyed where ``f`` is defined."""
    made = facts.evaluator.made_of_function(file, kernel)
    if made is not None:
        return (made[0].path, made[1].qualname)
    return (file.path, kernel.function or kernel.name)


@dataclass(frozen=True)
class Registration:
    """``wp.overload(kernel, ...)`` (``call``) or an ``@wp.overload`` stub (``call`` None) of a generic kernel."""

    file: FileModel
    span: Span
    call: Call | None
    at_import: bool  # runs while the module is imported: module scope, or a function a module-level call reaches
    # the object it registers on is kept (False: `wp.overload(Model(c).kernel, ...)` makes a kernel object no
    # launch uses, so the instance it adds is no instance of the kernel the launches make)
    kept: bool = True
    # the registered types when they are written out with Warp's types and Python's scalars only (a key to
    # compare two registrations by, ``registered_types``); None when they depend on anything else
    signature: tuple | None = None


def registered_types(evaluator: Evaluator, file: FileModel, call: Call) -> tuple | None:
    """A key of the types ``wp.overload`` ``call`` registers, when they are written out with Warp's types and
    Python's scalars only (``[wp.array(dtype=wp.float32), float]``, ``{"x": wp.vec3}``); None otherwise. A type is
    keyed as Warp takes it: by its class (``wp.vec3`` is ``wp.vec3f``), a Python scalar type by the Warp scalar
    Warp makes of it (``wp.array(dtype=float)`` registers what ``wp.array(dtype=wp.float32)`` does)."""
    value = call.bound("arg_types")
    return _type_key(evaluator, file, value, call.ctx.scope) if value is not None else None


def _type_key(evaluator: Evaluator, file: FileModel, value: Value, scope: str) -> tuple | None:
    if value.kind == "const":
        return ("const", repr(value.const))
    if value.kind in ("name", "attr"):
        ref = value.ref or ""
        if value.local or not ref:
            return None
        scalar = evaluator.python_scalar(Source(file, value, scope))
        own = scalar or evaluator.warp_type(ref)
        if own is not None:
            return ("type", own.constructor, own.arguments, own.scalar)
        return ("name", ref) if is_warp(ref) else None
    if value.kind not in ("call", "subscript", "seq", "dict"):
        return None
    if value.kind == "call" and not (value.ref and is_warp(value.ref)):
        return None
    made = evaluator.values(file, value, scope) if value.kind == "call" else None
    if made is not None and len(made.items) == 1 and isinstance(one := next(iter(made)), WarpType):
        return ("type", one.constructor, one.arguments, one.scalar)  # `wp.types.vector(3, float)`: a Warp type
    parts: list[object] = [value.kind, value.ref if value.kind == "call" else None]
    for part in (*value.args, *(v for _, v in sorted(value.kwargs.items())), value.base, value.key):
        if part is None:
            continue
        key = _type_key(evaluator, file, part, scope)
        if key is None:
            return None
        parts.append(key)
    parts.append(tuple(sorted(value.kwargs)))
    for item in value.items:
        subs = item if isinstance(item, tuple) else (item,)
        for sub in subs:
            key = _type_key(evaluator, file, sub, scope) if isinstance(sub, Value) else None
            if key is None:
                return None
            parts.append(key)
    return tuple(parts)


@dataclass(frozen=True)
class Event:
    """What one statement does to a module: launches ``kernel`` of it, or loads it (``kernel`` None)."""

    order: int
    module: str  # as Launch.module ("unique:..." for a module="unique" kernel); "*" for force_load() of all
    kernel: KernelKey | None
    call: Call  # the statement's call: the launch, the load, or the project call that leads to them


@dataclass(frozen=True)
class Earlier:
    """A launch or load that can run before a given call: ``call`` in ``file``; ``through`` are the calls
    (file, call) in callers that lead to the given call, after the launch; ``runner`` names the test the
    runner runs first when the launch is in one; ``peer`` the public function of a library file that users
    can call before the one (``entry``) that leads to the given call."""

    file: FileModel
    call: Call
    module: str
    kernel: KernelKey | None
    through: tuple[tuple[FileModel, Call], ...] = ()
    runner: str = ""
    peer: tuple[str, str] | None = None  # (peer, entry): users can call the library's peer() before entry()


# ---------------------------------------------------------------------------------------------- registrations
def registrations(facts: IdentityFacts, file: FileModel, kernel: Kernel) -> list[Registration]:
    """Every ``wp.overload`` of ``kernel`` in the project (empty for a kernel with none)."""
    return list(_registrations_of(facts, kernel_key(facts, file, kernel)))


@asked_by_key
def _registrations_of(facts: IdentityFacts, key: KernelKey) -> tuple[Registration, ...]:
    return tuple(facts.cached("generic registrations", lambda: _registrations(facts)).get(key, ()))


def _registrations(facts: IdentityFacts) -> dict[KernelKey, list[Registration]]:
    table: dict[KernelKey, list[Registration]] = {}
    for f in facts.bindings.files:
        for call in facts.bindings.warp_calls(f, "overload"):
            if call.ctx.expects_raise:
                continue  # one the test expects to raise registers nothing (wp.overload checks, then adds)
            value = call.bound("kernel")
            signature = registered_types(facts.evaluator, f, call)
            fn = f.functions.get(call.ctx.scope)
            sites = facts.bindings.call_sites(facts.bindings.fqname(f, call.ctx.scope)) if fn is not None else []
            if fn is not None and value is not None and sites and any(
                    n.partition(".")[0] in {p.name for p in fn.params} for n in value.names()):
                # `def register(kernel, dtype): wp.overload(kernel, ...)`: each call registers its own kernel
                for caller_file, caller in sites:
                    site = facts.evaluator.site(caller_file, caller.ctx.scope, caller,
                                                  facts.bindings.fqname(f, call.ctx.scope), None)
                    at_import = runs_at_import(facts, caller_file, caller.ctx.scope)
                    for kf, k in facts.find_kernels(f, call.ctx.scope, value, site):
                        table.setdefault(kernel_key(facts, kf, k), []).append(
                            Registration(f, call.span, call, at_import, signature=signature))
                continue
            at_import = runs_at_import(facts, f, call.ctx.scope)
            # a getter called at import and again at run time: both (the run-time calls may repeat a signature)
            both = at_import and bool(call.ctx.scope) and runs_at_run_time(facts, f, call.ctx.scope)
            for kf, k in facts.find_kernels(f, call.ctx.scope, value):
                kept = not made_unbound(facts, kf, k, value)
                table.setdefault(kernel_key(facts, kf, k), []).append(
                    Registration(f, call.span, call, at_import, kept, signature))
                if both:
                    table[kernel_key(facts, kf, k)].append(Registration(f, call.span, call, False, kept, signature))
        for fn in facts.bindings.file_facts.cached(f, functions_by_decorator).get("warp.overload", ()):
            if not fn.ctx.expects_raise:
                table.setdefault((f.path, fn.name), []).append(Registration(f, fn.span, None, not fn.ctx.scope))
    return table


def runs_at_import(facts: IdentityFacts, file: FileModel, scope: str) -> bool:
    """Code of ``scope`` runs while its module is imported: module scope, or a function called there, through
    any number of calls (one summary per scope; a call under ``if __name__ == "__main__":`` runs the program, not
    an import; a recursive call adds no way of its own)."""
    if not scope:
        return True
    return facts.evaluator.budget.summary(facts.memo, ("runs at import", file.path, scope), lambda: any(
        runs_at_import(facts, f, call.ctx.scope)
        for f, call in facts.bindings.call_sites(facts.bindings.fqname(file, scope)) if not call.ctx.in_main_guard),
        False)


def runs_at_run_time(facts: IdentityFacts, file: FileModel, scope: str) -> bool:
    """Code of ``scope`` can run after its module was imported: a function called from a function that can,
    through any number of calls, or one the project never calls (called from outside it). One summary per
    scope; a recursive call, or a walk the budget cuts, may run at run time."""
    if not scope:
        return False

    def compute() -> bool:
        sites = facts.bindings.call_sites(facts.bindings.fqname(file, scope))
        return not sites or any(runs_at_run_time(facts, f, call.ctx.scope) for f, call in sites)

    return facts.evaluator.budget.summary(facts.memo, ("runs at run time", file.path, scope), compute, True)


# ---------------------------------------------------------------------------------------------- timeline
def kernel_timeline(facts: IdentityFacts, file: FileModel, scope: str) -> list[Event]:
    """The launch and load events of each statement of ``scope``, in source order."""
    return facts.cached(("kernel timeline", file.path, scope), lambda: _timeline(facts, file, scope))


def _timeline(facts: IdentityFacts, file: FileModel, scope: str) -> list[Event]:
    events: list[Event] = []
    for call in facts.bindings.calls_in(file, scope):
        events.extend(Event(call.ctx.order, module, kernel, call)
                      for module, kernel, _ in _call_events(facts, file, call, True))
    events.sort(key=lambda e: e.order)
    return events


def _launches_by_call(facts: IdentityFacts, file: FileModel) -> dict[int, list[Launch]]:
    def compute() -> dict[int, list[Launch]]:
        table: dict[int, list[Launch]] = {}
        for launch in facts.launches(file):
            table.setdefault(id(launch.call), []).append(launch)
        return table

    return facts.cached(("launches by call", id(file)), compute)


def _expanded_by_origin(facts: IdentityFacts) -> dict[int, list[Launch]]:
    """The launches ``IdentityFacts.all_launches`` binds to one call of their wrapper, by that call."""
    def compute() -> dict[int, list[Launch]]:
        table: dict[int, list[Launch]] = {}
        seen: set[tuple[int, int, KernelKey]] = set()
        for launch in facts.all_launches():
            key = (id(launch.origin[1]), id(launch.call), kernel_key(facts, launch.kernel_file, launch.kernel))
            if launch.site is not None and key not in seen:  # one wrapper launch, expanded once per kernel
                seen.add(key)
                table.setdefault(id(launch.origin[1]), []).append(launch)
        return table

    return facts.cached("launches by origin", compute)


@asked_by_key
def _expanded_at(facts: IdentityFacts, file: FileModel, call: Call) -> tuple[Launch, ...]:
    """``_expanded_by_origin`` of one call of ``file``."""
    return tuple(_expanded_by_origin(facts).get(id(call), ()))


_Found = tuple[str, KernelKey | None, int]  # (module, kernel, id of the launch/load call deep inside)


def _call_events(facts: IdentityFacts, file: FileModel, call: Call, outermost: bool) -> list[_Found]:
    """The launches and loads ``call`` makes (``outermost``: the call asked about, whose arguments bind the
    callee's parameters; else a call inside a callee, taken over every call of it)."""
    direct = _launches_by_call(facts, file).get(id(call))
    if direct is not None:
        return [(ln.module, kernel_key(facts, ln.kernel_file, ln.kernel), id(call)) for ln in direct]
    if is_warp(call.callee, *LOAD_CALLS):
        return [(m, None, id(call)) for m in facts.modules_loaded_by(file, call)]
    if facts.bindings.is_warp_api(call.callee):
        return []
    callee = facts.bindings.callee_of(file, call)
    if facts.bindings.function(callee) is None:
        deep = []  # not a project function (a library's, a builtin): nothing it runs is the project's
    else:
        deep = _function_events(facts, callee)
        if outermost:  # the loads the callee writes, with its parameters bound at this call, replace the union
            loads = facts.loads_at(file, call)
            deep = [found for found in deep if found[2] not in loads] + [
                (m, None, load) for load, modules in loads.items() for m in modules]
    expanded = _expanded_at(facts, file, call) if outermost else ()
    if not expanded:
        return deep
    # a wrapper whose parameters decide what it launches: this call's own launches replace the union
    bound = {id(ln.call) for ln in expanded}
    return ([(ln.module, kernel_key(facts, ln.kernel_file, ln.kernel), id(ln.call)) for ln in expanded]
            + [found for found in deep if found[2] not in bound])


def _function_events(facts: IdentityFacts, fqname: str) -> list[_Found]:
    """The launches and loads a project function makes, directly or through the functions it calls (however
    deep: one summary per function, a recursive call adding nothing)."""
    memo: dict[str, list[_Found]] = facts.memo.setdefault("kernel events of functions", {})
    canonical = facts.bindings.canonical_function(fqname)

    def compute() -> list[_Found]:
        found = facts.bindings.function(canonical)
        result: list[_Found] = []
        if found is not None:
            f, fn = found
            seen: set[tuple[str, KernelKey | None, int]] = set()
            for call in facts.bindings.calls_in(f, fn.qualname):
                for item in _call_events(facts, f, call, False):
                    if item not in seen:
                        seen.add(item)
                        result.append(item)
        return result

    return facts.evaluator.budget.summary(memo, canonical, compute, [])


# ---------------------------------------------------------------------------------------------- order
def exclusive_branches(a: Context, b: Context) -> bool:
    """Two statements of one scope in the two branches of one ``if`` (one's condition is the other's ``not``),
    outside loops: one run of the scope runs only one of them."""
    if a.in_loop or b.in_loop:
        return False
    return any(d == f"not ({c})" or c == f"not ({d})" for c in a.conditions for d in b.conditions)


def launched_before(facts: IdentityFacts, file: FileModel, call: Call, module: str,
                    excluding: KernelKey | None = None, kernel: KernelKey | None = None) -> Earlier | None:
    """A launch or load of ``module`` (of any kernel but ``excluding``; None for a load), or a launch of the one
    ``kernel``, that can run before ``call``, if the index shows one. Only the scopes whose run can make such an
    event (``_scopes_launching``, ``_scopes_reaching``) have their timelines built, and the test runner's earlier
    steps are listed only in the files that hold one of them. A fact of ``file`` kept across an edit
    (``Layer.kept``, of its call): what it reads of the whole project is which scopes can make such an event, asked
    by key."""
    assert excluding is None or kernel is None, "every kernel but one, or the one"
    return facts.kept(f"launched before {module!r} excluding {excluding!r} only {kernel!r}", file,
                      lambda recorded: _launched_before(cast("IdentityFacts", recorded), file, call, module,
                                                        excluding, kernel), (call,))


def _launched_before(facts: IdentityFacts, file: FileModel, call: Call, module: str, excluding: KernelKey | None,
                     kernel: KernelKey | None) -> Earlier | None:
    scope = call.ctx.scope
    reaching = _scopes_launching(facts, kernel) if kernel is not None else _scopes_reaching(facts, module)

    def accept(event_kernel: KernelKey | None) -> bool:
        return event_kernel == kernel if kernel is not None else event_kernel is None or event_kernel != excluding

    def timeline(f: FileModel, s: str) -> list[Event]:
        return kernel_timeline(facts, f, s) if (id(f), s) in reaching.scopes else []

    def matches(f: FileModel, event: Event) -> bool:
        return (event.module in (module, "*") and accept(event.kernel)
                and not (event.kernel is None and preload_unused(facts, f, event.call, module)))

    for event in timeline(file, scope):
        if (event.call is not call and event.call.ctx.precedes(call.ctx)
                and not exclusive_branches(event.call.ctx, call.ctx) and matches(file, event)):
            return Earlier(file, event.call, event.module, event.kernel)
    if not scope:
        return None
    for step in facts.runner_steps_in(file, scope, reaching.files):
        for event in timeline(step.file, step.scope):
            if step.runs_first(event.call.ctx) and matches(step.file, event):
                return Earlier(step.file, event.call, event.module, event.kernel, runner=step.scope)
    constructor = constructor_before(file, scope)
    if constructor is not None:  # `App().run()`: the instance's __init__ ran before any method is called on it
        for event in timeline(file, constructor.qualname):
            if matches(file, event):
                return Earlier(file, event.call, event.module, event.kernel)
    for caller_file, caller, _level in facts.caller_scopes(facts.bindings.fqname(file, scope)):
        for event in timeline(caller_file, caller.ctx.scope):
            if (event.call is not caller and event.call.ctx.precedes(caller.ctx)
                    and not exclusive_branches(event.call.ctx, caller.ctx) and matches(caller_file, event)):
                return Earlier(caller_file, event.call, event.module, event.kernel, through=((caller_file, caller),))
        if caller.ctx.scope:  # a helper called by a test: the tests the runner runs before that one
            for step in facts.runner_steps_in(caller_file, caller.ctx.scope, reaching.files):
                for event in timeline(step.file, step.scope):
                    if step.runs_first(event.call.ctx) and matches(step.file, event):
                        return Earlier(step.file, event.call, event.module, event.kernel,
                                       through=((caller_file, caller),), runner=step.scope)
    if runs_at_import(facts, file, scope):
        return None  # its first run is at import, before any public function can be called
    for peer_file, peer, entry in facts.library_peers(file, scope):
        for event in timeline(peer_file, peer):
            if matches(peer_file, event):
                return Earlier(peer_file, event.call, event.module, event.kernel, peer=(peer, entry))
    return None


@dataclass(frozen=True)
class _Reaching:
    """Code whose run can make an event: (id of a file's model, a scope of it), and those models (by path: an answer
    asked by key is compared by them, the same objects, and holds the ids theirs)."""

    scopes: frozenset[tuple[int, str]]
    models: tuple[FileModel, ...]

    @functools.cached_property
    def files(self) -> frozenset[int]:
        """The ids of ``models``."""
        return frozenset(map(id, self.models))

    def joined(self, other: _Reaching) -> _Reaching:
        return _Reaching(self.scopes | other.scopes, _sorted_models((*self.models, *other.models)))


def _sorted_models(models: Iterable[FileModel]) -> tuple[FileModel, ...]:
    """``models`` once each, by path."""
    by_path = {f.path: f for f in models}
    return tuple(by_path[path] for path in sorted(by_path))


@asked_by_key
def _scopes_launching(facts: IdentityFacts, key: KernelKey) -> _Reaching:
    """The scopes whose run can launch the kernel ``key``: where each of its launches is written, the calls of the
    wrappers that decide it, and every function that calls one of those, however far up. A timeline event of that
    kernel (``_call_events``) is one of these launches, reached through such calls."""
    return _with_callers(facts, _launch_scopes(_launches_of(facts, key)))


@asked_by_key
def _scopes_reaching(facts: IdentityFacts, module: str) -> _Reaching:
    """The scopes whose run can launch a kernel of ``module`` (``_scopes_launching`` for a module's kernels) or load
    a module (``_scopes_loading``). Every timeline event ``launched_before`` can match for ``module`` is made in one
    of these."""
    return _with_callers(facts, _launch_scopes(facts.launches_of_module(module))).joined(_scopes_loading(facts))


def _scopes_loading(facts: IdentityFacts) -> _Reaching:
    """Every scope that writes a ``load_module``/``force_load`` of any module, and its callers however far up:
    which modules a load loads can be decided by the call that reaches it (``IdentityFacts.loads_at``). Once per
    project, whichever module is asked about."""
    return facts.cached("scopes loading", lambda: _with_callers(facts, [
        (f, call.ctx.scope) for f in facts.bindings.files for call in facts.bindings.warp_calls(f, *LOAD_CALLS)]))


def _launch_scopes(launches: Iterable[Launch]) -> list[tuple[FileModel, str]]:
    """Where each launch is written, and the wrapper calls that decide it (its ``site`` chain), with repeats."""
    found: list[tuple[FileModel, str]] = []
    for launch in launches:
        found.append((launch.file, launch.call.ctx.scope))
        site = launch.site
        while site is not None:
            found.append((site.file, site.scope))
            site = site.parent
    return found


def _with_callers(facts: IdentityFacts, starts: Iterable[tuple[FileModel, str]]) -> _Reaching:
    """``starts`` and every scope that calls one of them, however far up."""
    found: set[tuple[int, str]] = set()
    models: list[FileModel] = []
    frontier: list[tuple[FileModel, str]] = []
    for f, scope in starts:
        if (id(f), scope) not in found:
            found.add((id(f), scope))
            frontier.append((f, scope))
    while frontier:
        f, scope = frontier.pop()
        models.append(f)
        if scope:
            for caller_file, caller in facts.bindings.call_sites(facts.bindings.fqname(f, scope)):
                if (id(caller_file), caller.ctx.scope) not in found:
                    found.add((id(caller_file), caller.ctx.scope))
                    frontier.append((caller_file, caller.ctx.scope))
    return _Reaching(frozenset(found), _sorted_models(models))


# ---------------------------------------------------------------------------------------------- a kernel's launches
def generic_launches(facts: IdentityFacts, file: FileModel, kernel: Kernel) -> tuple[Launch, ...]:
    """The launches of the generic kernel objects of ``kernel``'s ``kernel_key``, once per call of the wrappers
    that decide their kernel, so that each is ordered where that call is made, in source order: of the calls
    they are made from (``Launch.origin``), then of the launch calls. ``IdentityFacts.all_launches`` also keeps
    a wrapper call inside a library's public function with that function's parameters unbound (for the
    library's users): that copy is left out where a call of the project passes through the wrapper call."""
    return _generic_launches_of(facts, kernel_key(facts, file, kernel))


@asked_by_key
def _generic_launches_of(facts: IdentityFacts, key: KernelKey) -> tuple[Launch, ...]:
    found = _generic_launches_by_kernel(facts).get(key, [])
    return tuple(sorted(found, key=lambda launch: (
        place(launch.origin[0], launch.origin[1].span), place(launch.file, launch.call.span))))


def generic_launches_in_run_order(facts: IdentityFacts, file: FileModel, kernel: Kernel) -> tuple[Launch, ...]:
    """``generic_launches`` in run order as far as the layer shows it: those with no launch of the same kernel
    shown running before them (``launched_before``: earlier in their function, in a caller before the call that
    leads there, in a test the runner runs first, in another public function of the library file) first, then
    the others; source order within each. One ``launched_before`` per launch, a costly question: ask it only
    where the order matters."""
    return _in_run_order(facts, kernel_key(facts, file, kernel))


@asked_by_key
def _in_run_order(facts: IdentityFacts, key: KernelKey) -> tuple[Launch, ...]:
    return tuple(sorted(_generic_launches_of(facts, key), key=lambda launch: launched_before(
        facts, launch.origin[0], launch.origin[1], launch.module, kernel=key) is not None))


def _generic_launches_by_kernel(facts: IdentityFacts) -> dict[KernelKey, list[Launch]]:
    def compute() -> dict[KernelKey, list[Launch]]:
        everything = [launch for launch in facts.all_launches() if launch.kernel.generic]
        passed_through: set[int] = set()  # the wrapper calls a launch's chain of calls goes through, outermost aside
        for launch in everything:
            site = launch.site
            while site is not None and site.parent is not None:
                passed_through.add(id(site.call))
                site = site.parent
        table: dict[KernelKey, list[Launch]] = {}
        for launch in everything:
            if launch.site is None or id(launch.origin[1]) not in passed_through:
                table.setdefault(kernel_key(facts, launch.kernel_file, launch.kernel), []).append(launch)
        return table

    return facts.cached("generic launches by kernel", compute)


@asked_by_key
def _launches_of(facts: IdentityFacts, key: KernelKey) -> tuple[Launch, ...]:
    """``_launches_by_kernel`` of one kernel key."""
    return tuple(_launches_by_kernel(facts).get(key, ()))


def _launches_by_kernel(facts: IdentityFacts) -> dict[KernelKey, list[Launch]]:
    """Every launch of ``IdentityFacts.all_launches`` by its kernel's ``kernel_key``, in that order."""
    def compute() -> dict[KernelKey, list[Launch]]:
        table: dict[KernelKey, list[Launch]] = {}
        for launch in facts.all_launches():
            table.setdefault(kernel_key(facts, launch.kernel_file, launch.kernel), []).append(launch)
        return table

    return facts.cached("launches by kernel", compute)


@dataclass(frozen=True)
class LaunchOrigin:
    """A call a kernel's launches are made from (``Launch.origin``): the launch itself, or the outermost call of
    the wrappers that decide its kernel, with the wrapper's own ``wp.launch`` (``inner``)."""

    file: FileModel
    call: Call
    inner: tuple[FileModel, Call] | None  # the launch inside the wrapper, for a launch made through one


def launch_origins(facts: IdentityFacts, file: FileModel, kernel: Kernel) -> list[LaunchOrigin]:
    """The calls the launches of ``kernel``'s ``kernel_key`` are made from (every launch of
    ``IdentityFacts.all_launches``, generic or not), once each, in source order; empty for a kernel never
    launched."""
    return list(_origins_of(facts, kernel_key(facts, file, kernel)))


@asked_by_key
def _origins_of(facts: IdentityFacts, key: KernelKey) -> tuple[LaunchOrigin, ...]:
    """``launch_origins`` of one kernel key."""
    calls: dict[int, LaunchOrigin] = {}
    for launch in _launches_of(facts, key):
        f, call = launch.origin
        inner = (launch.file, launch.call) if launch.site is not None else None
        calls.setdefault(id(call), LaunchOrigin(f, call, inner))
    return tuple(sorted(calls.values(), key=lambda origin: place(origin.file, origin.call.span)))


@dataclass(frozen=True)
class Remade:
    """A launch of a generic kernel on a new kernel object, after a launch of an object of the same kernel with
    other argument types (``remade_with_new_types``)."""

    first: Launch  # loads the module with its object's instance
    again: Launch  # later: a new object, launched with another signature


def remade_with_new_types(facts: IdentityFacts, file: FileModel, kernel: Kernel) -> Remade | None:
    """A launch of the generic ``kernel`` on an object new there, with one argument signature, that runs after
    a launch of an object of the same kernel with another. The object is new when the launch expression makes
    it (``made_unbound``: ``Model(c).kernel``, ``Solver(c).kernel()`` of a per-instance memo, ``make()``, also
    passed through wrappers), or when it is one of several objects made of one function (``wp.kernel(f)``
    called again). Instances live on the kernel object (warp-facts §6), so the new object joins the module the
    earlier launch loaded with a new instance: the module builds again. Not when a launch before it, in its
    function, used its signature (an object kept there may hold that instance already), nor when a
    ``wp.overload`` on a kept object registers it (``kept_instances``)."""
    if not kernel.generic:
        return None

    def compute() -> Remade | None:
        key = kernel_key(facts, file, kernel)
        family = [(launch, launch_signature(facts, launch)) for launch in _launches_of(facts, key)]
        remade = _several_objects(facts, file, kernel)
        registered = kept_instances(facts, file, kernel)
        for again, other in family:
            if (again.kernel is not kernel or other is None or other in registered or None in registered
                    or not (remade or made_unbound(facts, file, kernel, _launched_expression(facts, again)))):
                continue
            where, call = again.origin
            if any(types == other and launch.origin[0] is where and launch.origin[1].ctx.scope == call.ctx.scope
                   and launch.origin[1].ctx.precedes(call.ctx) for launch, types in family):
                continue
            earlier = launched_before(facts, where, call, again.module, kernel=key)
            if earlier is None or earlier.peer is not None:
                continue  # a library peer: its users may call them in either order
            before = [(launch, types) for launch, types in family
                      if launch.call is earlier.call or launch.origin[1] is earlier.call]
            if before and all(types is not None and types != other for _, types in before):
                return Remade(before[0][0], again)
        return None

    return facts.cached(("remade with new types", id(kernel)), compute)


def kept_instances(facts: IdentityFacts, file: FileModel, kernel: Kernel) -> frozenset[tuple[str, ...] | None]:
    """The signatures ``wp.overload`` registers on objects of the generic ``kernel`` that stay referenced
    (``Registration.kept``), as ``launch_signature`` writes them; None for one whose types are not known.
    Such an instance is in the module's hash for every object of the kernel: Warp hashes each live kernel object
    of the module (``Module._live_kernels``) and keeps one hash per distinct instance (key, source, argument
    types, not the object), so a later object launched with that signature adds nothing (warp-facts §4, §6). An
    instance registered on an object nothing keeps lives only until Python's cycle collector frees the object,
    whenever that runs (a generic kernel and its instances reference each other): it is not counted."""
    def compute() -> frozenset[tuple[str, ...] | None]:
        found: set[tuple[str, ...] | None] = set()
        wrapped = facts.wrapped_functions(file, kernel) or ()
        fn = file.functions.get(kernel.function) or (wrapped[0][1] if len(wrapped) == 1 else None)
        params = [p.name for p in fn.params] if fn is not None else None
        for registration in registrations(facts, file, kernel):
            if registration.kept:
                found.add(_registered_signature(facts, registration, params))
        return frozenset(found)

    return facts.cached(("kept instances", id(kernel)), compute)


def _registered_signature(facts: IdentityFacts, registration: Registration, params: list[str] | None
                          ) -> tuple[str, ...] | None:
    """The one type each parameter gets in a ``wp.overload(kernel, [...])`` or ``{name: type}`` call, in
    parameter order; None when one is not known (an ``@wp.overload`` stub, a type computed elsewhere)."""
    call = registration.call
    value = call.bound("arg_types") if call is not None else None
    if call is None or value is None or params is None:
        return None
    if value.kind == "seq":
        types = list(value.items)
    elif value.kind == "dict" and all(isinstance(item, tuple) and len(item) == 2 for item in value.items):
        by_name = {k.const: v for k, v in value.items if isinstance(k, Value) and k.kind == "const"}
        if len(by_name) != len(value.items) or set(by_name) != set(params):
            return None
        types = [by_name[name] for name in params]
    else:
        return None
    if len(types) != len(params) or not all(isinstance(t, Value) for t in types):
        return None
    ones = [value_types(facts, registration.file, t, call.ctx.scope).one for t in types]
    return tuple(t for t in ones if t is not None) if all(ones) else None


def _several_objects(facts: IdentityFacts, file: FileModel, kernel: Kernel) -> bool:
    """``kernel`` is made by ``wp.kernel(f)`` of a function another ``wp.kernel(f)`` makes an object of too."""
    evaluator = facts.evaluator
    module = facts.kernel_module(file, kernel)
    return module is not None and any(k is not kernel and evaluator.same_key(f, k, file, kernel)
                                      for f, k in facts.kernels_of_module(module))


def _launched_expression(facts: IdentityFacts, launch: Launch) -> Value | None:
    """The expression a launch's kernel comes from: its ``kernel`` argument, or, for a launch expanded at the calls
    of its wrappers, what those calls pass for the parameter it reads."""
    value = launch.call.bound("kernel")
    site = launch.site
    while value is not None and site is not None and value.kind == "name" and value.local:
        found = facts.bindings.function(site.function)
        if found is None or not any(p.name == value.text for p in found[1].params):
            break
        bound = facts.evaluator.bind(found[1], value.text, site)
        value = bound if isinstance(bound, Value) else None
        site = site.parent
    return value

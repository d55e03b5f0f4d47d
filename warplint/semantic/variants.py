"""Variants of a kernel created at run time: which arguments of its factory make new kernel content, and
which of them name its module.

A kernel defined in a function is registered each time the function runs; its content (what Warp hashes:
the source, closure constants, ``wp.static`` results, argument types, per-kernel options) is a function of
the names it captures, and the module it joins (``module=`` evaluated at the definition) a function of the
names the ``module=`` expression reads. When a factory argument reaches the content but not the module name,
two calls that differ only in it put two different kernels into one module: the second one, made after the
first was launched, rebuilds that module. When every such argument is part of the name, each variant has a
module of its own. Warp keeps earlier variants alive while something references them (``functools.cache``,
a cache dict), so each new variant then also recompiles the ones kept (warp-facts §4, "alternating
captures, old kernels kept").
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum
from functools import partial
from typing import TYPE_CHECKING, cast

from warplint.model import Call, Context, FileModel, Function, Kernel, Span, Value

from .evaluator import PARAMETER_SLOT
from .layer import asked_by_key
from .statement_order import always_before, binds_whenever_run
from .values import ClassRef, Const, FunctionRef, KernelRef, PerProcess, ValueSet, WarpType, several_in_one_process

if TYPE_CHECKING:
    from .events import Launch
    from .launches import IdentityFacts

Parameter = tuple[str, str]  # (function qualname within the file, parameter name)


@dataclass(frozen=True)
class Variants:
    """What decides a run-time kernel's content and module (``kernel_variants``)."""

    factory: str  # qualname of the function that creates the kernel
    captures: frozenset[str]  # names of the factory (and functions around it) the content reads
    content: frozenset[Parameter]  # parameters the content is computed from
    module: frozenset[Parameter] | None  # parameters the module name is computed from; None: not known
    kept: bool  # the factory keeps what it made (functools.cache, a cache dict): variants accumulate
    varying: frozenset[Parameter]  # parameters some call passes more than one value for (or unknown ones)
    keeper: str = ""  # fqname of the function that keeps them (the factory or a caller); "" when nothing does
    per_instance: bool = False  # the factory is a method that keeps what it made on its instance (``self._k``)

    @property
    def shared(self) -> frozenset[Parameter]:
        """Parameters whose values make different kernels in the same module: they reach the content, not
        the module name, and are not one literal on every call. Empty when the name is not known."""
        if self.module is None:
            return frozenset()
        return frozenset(p for p in self.content - self.module if p in self.varying)


def kernel_variants(facts: IdentityFacts, file: FileModel, kernel: Kernel) -> Variants | None:
    """The variants of ``kernel`` (None for a kernel created at import time): a fact of the kernel kept across an edit
    (``Layer.kept``; a kernel a project decorator derives is made again by each layer, its variants with it)."""
    if not kernel.ctx.scope:
        return None
    return facts.kept("kernel variants", file,
                      lambda recorded: _kernel_variants(cast("IdentityFacts", recorded), file, kernel), (kernel,))


def _kernel_variants(facts: IdentityFacts, file: FileModel, kernel: Kernel) -> Variants | None:
    factory = kernel.ctx.scope
    if not factory:
        return None
    evaluator = facts.evaluator
    captures = set(kernel.captured | kernel.static_captured)  # the binder's: body, wp.static and annotations
    content: set[Parameter] = set()
    for name in sorted(captures):
        params, _ = evaluator.parameters_reaching(file, Value("name", text=name, ref=name, local=True), factory)
        content |= params
    for key, option in kernel.options.items():
        if key != "module":
            content |= evaluator.parameters_reaching(file, option, factory)[0]
    module: frozenset[Parameter] | None = frozenset()
    names, complete = evaluator.kernel_modules(file, kernel)
    if kernel.module_value is not None and not (complete and len(names) == 1):
        params, known = evaluator.parameters_reaching(file, kernel.module_value, factory)
        module = params if known else None
    varying = frozenset(p for p in content if not _one_literal(facts, file, p))
    if varying and _reads_one_literal(facts, file, kernel, content):
        varying = frozenset()  # the parameters carry several objects, but what the content reads of them is one
    keeper = _keeps_variants(facts, file, kernel)
    fn = file.functions.get(factory)
    per_instance = (fn is not None and keeper == facts.bindings.fqname(file, factory)
                    and evaluator.memoized_per_instance(fn))
    return Variants(factory, frozenset(captures), frozenset(content), module, keeper is not None, varying,
                    keeper or "", per_instance)


class CallContents(Enum):
    """How the content of a kernel made at run time behaves over the project's calls of its factory
    (``contents_across_calls``)."""

    ONE = "one content"  # made at import, or every call gives what the content reads one literal
    NOT_CALLED = "not called"  # nothing in the project calls the functions whose parameters the content reads:
    # their callers are the library's users, who pass anything
    SEVERAL = "several contents"  # two calls are known to make different kernels: two distinct known values
    UNKNOWN = "not known"  # a call passes a value not known statically, and no two known values are seen to differ


def contents_across_calls(facts: IdentityFacts, file: FileModel, kernel: Kernel) -> CallContents:
    """Whether the project's calls of ``kernel``'s factory make one kernel content or several.

    ``SEVERAL`` needs proof: a name the content reads (a capture, a ``wp.static`` input, a per-kernel option)
    or a factory parameter it is computed from takes two distinct known values in one process (two literals,
    two functions or kernels, two Warp types: ``make(2.0)`` and ``make(3.0)``, ``for c in (2.0, 3.0): make(c)``,
    ``make(wp.float32)`` and ``make(wp.float64)``; ``wp.vec3`` and ``wp.vec3f`` are one type). A value
    not known statically (``Unknown``), or computed at run time (``Varies``: ``x.shape[0]`` may be the same
    on every call), proves neither sameness nor difference; nor does a value asv picks once per process.
    Instances prove nothing either: two instances may carry the same attribute the content reads."""
    return facts.cached(("contents across calls", id(kernel)), lambda: _contents_across_calls(facts, file, kernel))


def _contents_across_calls(facts: IdentityFacts, file: FileModel, kernel: Kernel) -> CallContents:
    variants = kernel_variants(facts, file, kernel)
    if variants is None or not variants.varying:
        return CallContents.ONE  # every parameter the content reads is one literal on every call
    evaluator = facts.evaluator
    reads = [Value("name", text=name, ref=name, local=True) for name in sorted(variants.captures)]
    reads += [option for key, option in kernel.options.items() if key != "module"]
    if any(_distinct_known(evaluator.values(file, read, variants.factory)) for read in reads):
        return CallContents.SEVERAL
    owners = sorted({qualname for qualname, _ in variants.varying})
    for qualname, name in sorted(variants.varying):
        fn = file.functions.get(qualname)
        if fn is not None and _distinct_known(evaluator.parameter(file, fn, name, None)):
            return CallContents.SEVERAL
    if not any(facts.bindings.call_sites(facts.bindings.fqname(file, qualname)) for qualname in owners):
        return CallContents.NOT_CALLED
    return CallContents.UNKNOWN


def _distinct_known(values: ValueSet) -> bool:
    """Two distinct values that are themselves kernel content (literals, functions, kernels, classes, Warp's
    value types: ``make(wp.float32)`` and ``make(wp.float64)``), in one process."""
    concrete = ValueSet(frozenset(v for v in values if isinstance(v, (Const, FunctionRef, KernelRef, ClassRef,
                                                                         WarpType, PerProcess))))
    return several_in_one_process([concrete])


def made_again(facts: IdentityFacts, launch: Launch) -> bool:
    """Evaluating the launch's kernel expression makes a new kernel object (registered into its module anew):
    its factory keeps nothing, or keeps it on the instance and the expression reads it from an instance it
    constructs itself (``Solver(c).kernel()``, ``Model(c).kernel`` of a memoising property)."""
    value = launch.call.bound("kernel")
    if value is not None and value.kind == "subscript" and (value.base is None or not _computes(value.base)):
        return False  # an item read from a container: made when it was stored there, not by this launch
    if value is not None and value.kind == "name":
        return False  # a name's binding: made when it was bound, not by this launch
    variants = kernel_variants(facts, launch.kernel_file, launch.kernel)
    if variants is None:
        return False
    return not variants.kept or (variants.per_instance and _fresh_receiver(facts, value))


def registered_before_launch(facts: IdentityFacts, file: FileModel, scope: str, order: int, module: str
                             ) -> tuple[Kernel, Span, Span] | None:
    """A kernel of ``module`` that a statement of ``scope`` (in ``file``) makes after the statement at ``order`` (its
    own creation, or a call of a function that makes it whenever it runs), before a later launch of ``module`` in
    that scope that it always precedes. Making a kernel registers it into its module, and registering marks the
    module modified: that launch hashes the module again, options included (warp-facts §2). The kernel, where the
    scope makes it and that launch, the first in source order; None when there is none."""
    made: list[tuple[Context, Kernel, Span]] = []
    for kf, kernel in facts.kernels_of_module(module):
        if kf is file and kernel.ctx.scope == scope:
            if kernel.ctx.order > order:
                made.append((kernel.ctx, kernel, kernel.span))
            continue
        fn = kf.functions.get(kernel.ctx.scope) if kernel.ctx.scope else None
        if fn is None or not binds_whenever_run(kernel.ctx, fn):
            continue  # made at import, or only on some runs of its function (a memoiser's first call)
        sites = facts.bindings.call_sites(facts.bindings.fqname(kf, fn.qualname))
        made += [(call.ctx, kernel, call.span) for cf, call in sites
                 if cf is file and call.ctx.scope == scope and call.ctx.order > order]
    if not made:
        return None
    launches = [launch.call for launch in facts.launches(file)
                if launch.module == module and launch.call.ctx.scope == scope and launch.call.ctx.order > order]
    for ctx, kernel, span in sorted(made, key=lambda m: m[0].order):
        rehashing = next((launch for launch in launches if always_before(ctx, launch.ctx)), None)
        if rehashing is not None:
            return kernel, span, rehashing.span
    return None


def made_unbound(facts: IdentityFacts, kernel_file: FileModel, kernel: Kernel, value: Value | None) -> bool:
    """``value`` makes a new kernel object when evaluated and nothing holds it after: the expression calls
    the factory itself (``make()``, ``Model(c).kernel``) rather than reading a binding, and the factory keeps
    nothing (or keeps it on an instance the expression constructs). What is done to that object (a
    ``wp.overload`` registration) reaches no other evaluation's kernel."""
    variants = kernel_variants(facts, kernel_file, kernel)
    if variants is None or value is None or not _computes(value):
        return False
    return not variants.kept or (variants.per_instance and _fresh_receiver(facts, value))


def _computes(value: Value) -> bool:
    """A call somewhere along ``value``'s attribute chain: the object is computed here, not read."""
    node: Value | None = value
    while node is not None and node.kind in ("call", "attr"):
        if node.kind == "call":
            return True
        node = node.base
    return False


def _fresh_receiver(facts: IdentityFacts, value: Value | None) -> bool:
    """``Cls(...).attr`` or ``Cls(...).method()``: read from an instance the expression constructs."""
    if value is not None and value.kind == "call":
        value = value.base  # the method read of `Solver(c).kernel()`
    receiver = value.base if value is not None and value.kind == "attr" else None
    return (receiver is not None and receiver.kind == "call" and receiver.ref is not None
            and facts.bindings.is_class(receiver.ref))


def _one_literal(facts: IdentityFacts, file: FileModel, parameter: Parameter) -> bool:
    """Every call passes one literal for the parameter, and it is not a library function's public default
    (a keyword a user of the library chooses: ``sort(keys, descending=False)`` called by nobody in the project)."""
    fn = file.functions.get(parameter[0])
    if fn is None:
        return False
    if not facts.evaluator.parameter(file, fn, parameter[1], None).single_constant()[0]:
        return False
    return not facts.evaluator.chosen_by_users(file, fn, parameter[1])


def _reads_one_literal(facts: IdentityFacts, file: FileModel, kernel: Kernel, content: set[Parameter]) -> bool:
    """Every name the kernel's content reads, and every option, has one literal value over all calls of its
    factory, though a parameter it comes from takes several objects: ``c = obj.c`` in a descriptor's
    ``__get__`` read on instances each constructed with the same literal. None of those parameters is one a
    library's users choose."""
    factory = kernel.ctx.scope
    for qualname, name in content:
        fn = file.functions.get(qualname)
        if fn is None or facts.evaluator.chosen_by_users(file, fn, name):
            return False
    reads = [Value("name", text=name, ref=name, local=True)
             for name in sorted(kernel.captured | kernel.static_captured)]
    reads += [option for key, option in kernel.options.items() if key != "module"]
    return all(facts.evaluator.values(file, read, factory).single_constant()[0] for read in reads)


def _keeps_variants(facts: IdentityFacts, file: FileModel, kernel: Kernel) -> str | None:
    """Who keeps each kernel the factory makes (its fqname), if anyone: the factory, ``functools.cache``d or
    storing the kernel into a container (``_CACHE[key] = kernel``), or a caller doing either with what the
    factory returns (``_CACHE[key] = _build(flag)``, a ``functools.cache``d getter returning ``_build(flag)``)."""
    fn = file.functions.get(kernel.ctx.scope)
    if fn is None:
        return None
    fq = facts.bindings.fqname(file, fn.qualname)
    if facts.evaluator.is_memoized(fn):
        return fq
    names = {kernel.name, *kernel.assigned_to}
    if any(a.target.kind == "subscript" and a.value.kind == "name" and a.value.text in names
           for a in file.assignments if a.ctx.scope == fn.qualname):
        return fq
    return _kept_by_callers(facts, fq)


def _kept_by_callers(facts: IdentityFacts, fq: str) -> str | None:
    """The caller that keeps what ``fq`` returns, directly or after callers that return it on unchanged (a
    dispatcher ``def _make(kind): return _build_a() if ... else _build_b()``), however many: a summary per
    function (a recursive caller keeps nothing of its own)."""
    return facts.evaluator.budget.summary(facts.memo, ("kept by callers", fq), lambda: _keeper(facts, fq), None)


def _keeper(facts: IdentityFacts, fq: str) -> str | None:
    sites = facts.bindings.call_sites(fq)
    keeper = next((facts.bindings.fqname(caller_file, call.ctx.scope) for caller_file, call in sites
                   if _caller_keeps(facts, caller_file, call)), None)
    if keeper is not None:
        return keeper
    for caller_file, call in sites:
        caller = caller_file.functions.get(call.ctx.scope)
        if caller is not None and _returns_result(caller, call):
            keeper = _kept_by_callers(facts, facts.bindings.fqname(caller_file, caller.qualname))
            if keeper is not None:
                return keeper
    return None


def _returns_result(caller: Function, call: Call) -> bool:
    """``caller`` returns what ``call`` (made in it) returns: ``return make()``, or a local bound to it."""
    stored = set(call.assigned_to)

    def is_result(value: Value) -> bool:  # the call, a local bound to it, or a branch of `a() if t else b()`
        return ((value.kind == "name" and value.text in stored) or (value.kind == "call" and value.ref == call.callee)
                or (value.kind == "ifexp" and any(isinstance(v, Value) and is_result(v) for v in value.items)))

    return any(is_result(r) for r in caller.returns)


def _caller_keeps(facts: IdentityFacts, file: FileModel, call: Call) -> bool:
    """The result of ``call`` (a factory call) is kept by its caller: stored into a container, directly or
    through a local, or returned by a memoised function."""
    caller = file.functions.get(call.ctx.scope)
    if caller is None:
        return False
    stored = set(call.assigned_to)

    def is_result(value: Value, order: int) -> bool:
        return ((value.kind == "name" and value.text in stored)
                or (value.kind == "call" and value.ref == call.callee and order == call.ctx.order))

    # a container that outlives the call (a module-level dict, an attribute): a local one dies with it
    if any(a.ctx.scope == caller.qualname and a.target.kind == "subscript" and a.target.base is not None
           and not (a.target.base.kind == "name" and a.target.base.local) and is_result(a.value, a.ctx.order)
           for a in file.assignments):
        return True
    return facts.evaluator.is_memoized(caller) and _returns_result(caller, call)


_SLOT = re.compile("\x00([^\x00]*)\x00")  # evaluator.PARAMETER_SLOT


def module_shape(facts: IdentityFacts, file: FileModel, kernel: Kernel) -> str | None:
    """How the kernel's module name is computed from its factory's parameters (``Evaluator.shape_of``), for a
    kernel whose module is not one known name; None when that is not known, and when the name reads none of the
    parameters and the layer knows none of the names it can be: one value per process that may as well be
    ``"unique"`` (a module of each kernel's own), which tells nothing about which kernels share a module."""
    if not kernel.ctx.scope or kernel.module_value is None or facts.kernel_module(file, kernel) is not None:
        return None
    shape = facts.evaluator.shape_of(file, kernel.module_value, kernel.ctx.scope)
    if shape is None or (not _SLOT.search(shape) and not facts.evaluator.kernel_modules(file, kernel)[0]):
        return None
    return shape


def positional(shape: str) -> str:
    """``shape`` with its parameter slots numbered in order of appearance: the same computation in two
    factories whatever their parameters are called (two kernels that can share a module)."""
    order: dict[str, int] = {}
    return _SLOT.sub(lambda m: f"\x00#{order.setdefault(m.group(1), len(order))}\x00", shape)


def kernels_of_module_shape(facts: IdentityFacts, file: FileModel, kernel: Kernel) -> list[tuple[FileModel, Kernel]]:
    """For a kernel whose module name is computed per call (``module=_module_name(dtype)``): every kernel
    whose name is computed the same way from its factory's arguments (the same helper, the same literal
    parts), itself included. Called with the same arguments, they join one module. A name that is just a
    parameter (``module=module``) tells nothing about which: only the kernel itself."""
    shape = module_shape(facts, file, kernel)
    if shape is None:
        return []
    if positional(shape) == positional(PARAMETER_SLOT % "_"):
        return [(file, kernel)]
    return list(_kernels_of_shape(facts, positional(shape)))


@asked_by_key
def _kernels_of_shape(facts: IdentityFacts, shape: str) -> tuple[tuple[FileModel, Kernel], ...]:
    """The kernels whose module name is computed in the way ``shape`` (``positional``) writes."""
    def by_shape() -> dict[str, list[tuple[FileModel, Kernel]]]:
        table: dict[str, list[tuple[FileModel, Kernel]]] = {}
        for f in facts.bindings.files:
            for k in f.kernels:
                found = module_shape(facts, f, k)
                if found is not None:
                    table.setdefault(positional(found), []).append((f, k))
        return table

    return tuple(facts.cached("kernels_by_module_shape", by_shape).get(shape, ()))


def module_shape_at(facts: IdentityFacts, file: FileModel, scope: str, call: Call | Value, kernel_file: FileModel,
                    kernel: Kernel) -> str | None:
    """The module name ``kernel`` gets when its factory is called by ``call`` (written in ``scope`` of
    ``file``), as a shape of the caller's expressions: two calls with equal shapes name one module."""
    shape = module_shape(facts, kernel_file, kernel)
    fn = kernel_file.functions.get(kernel.ctx.scope)
    if shape is None or fn is None:
        return None
    evaluator = facts.evaluator
    site = evaluator.site(file, scope, call, facts.bindings.fqname(kernel_file, fn.qualname), None)
    failed = False

    def bound(match: re.Match) -> str:
        nonlocal failed
        name = match.group(1)
        argument = evaluator.bind(fn, name, site) if any(p.name == name for p in fn.params) else None
        if isinstance(argument, Value):
            found = evaluator.shape_of(file, argument, scope)
        elif argument is not None:  # the default
            default = next(p.default for p in fn.params if p.name == name)
            found = evaluator.shape_of(kernel_file, default, fn.ctx.scope)
        else:
            found = None
        if found is None:
            failed = True
            return ""
        return found

    result = _SLOT.sub(bound, shape)
    return None if failed else result


@dataclass(frozen=True)
class Apart:
    """A launch of a lazily built kernel's module that nothing orders after the builder's first call
    (``launched_apart``), and a launch of the kernel itself."""

    launch_file: FileModel
    launch: Call  # launches another kernel of the module
    own_file: FileModel
    own: Call  # launches the lazily built kernel


def launched_apart(facts: IdentityFacts, file: FileModel, kernel: Kernel, module: str) -> Apart | None:
    """For a kernel a lazy builder makes on first use (a factory that keeps what it made: a cache dict,
    ``functools.cache``): a launch of another kernel of ``module`` that can run before the builder's first
    call. The builder is called at run time (not at import, not only in setup before any launch) and the
    launch is in code that no call leading to the builder is known to precede (another entry point of the
    library, another test). Whichever runs first, a first call of the builder after a load of the module
    registers a new kernel in it, and its next launch rebuilds the whole module: once per builder, even
    when the kernel captures nothing. None when the index shows no such launch."""
    return facts.cached(("launched_apart", id(kernel), module), lambda: _launched_apart(facts, file, kernel, module))


def _launched_apart(facts: IdentityFacts, file: FileModel, kernel: Kernel, module: str) -> Apart | None:
    scope = kernel.ctx.scope
    variants = kernel_variants(facts, file, kernel)
    if not scope or variants is None or not variants.kept:
        return None
    fq = facts.bindings.fqname(file, scope)
    sites = facts.bindings.call_sites(fq)
    if not sites or facts.runs_before_launches(fq) or any(
            not call.ctx.scope and not call.ctx.conditions and not call.ctx.in_main_guard for _, call in sites):
        return None  # called at import (the cache then returns that kernel) or only before any launch
    own = facts.kernel_launches(file, kernel)
    if not own:
        return None
    leading = [(f, call) for f, call, _ in facts.caller_scopes(fq)]
    for launch in _module_launches(facts, module):
        if launch.kernel_file is file and launch.kernel.ctx.scope == scope:
            continue  # a kernel the same builder makes
        if not _preceded(facts, launch.file, launch.call.ctx.scope, launch.call.ctx.order, file, kernel,
                         leading):
            return Apart(launch.file, launch.call, own[0][0], own[0][1])
    return None


def made_before_module_launches(facts: IdentityFacts, file: FileModel, kernel: Kernel, module: str) -> bool:
    """Every launch of ``module`` (but of kernels the same function makes) first runs the kernel's definition
    or a call that leads to it, as far as the callers show: the kernel is in the module at its first load,
    so a later creation with the same content registers nothing new (Warp's content hash absorbs it)."""
    scope = kernel.ctx.scope
    fq = facts.bindings.fqname(file, scope)
    if not scope or not facts.bindings.call_sites(fq):
        return False
    if any(m in (module, "*") and order < kernel.ctx.order for order, m, _ in facts.launch_timeline(file, scope)):
        return False  # the making function itself loads or launches the module first (a preload, then the def)
    leading = [(f, call) for f, call, _ in facts.caller_scopes(fq)]
    others = [launch for launch in _module_launches(facts, module)
              if not (launch.kernel_file is file and launch.kernel.ctx.scope == scope)]
    # no launch known is no proof: the module may load through a preload or a launch the index does not see
    return bool(others) and all(_preceded(facts, launch.file, launch.call.ctx.scope, launch.call.ctx.order, file,
                                          kernel, leading) for launch in others)


@asked_by_key
def _module_launches(facts: IdentityFacts, module: str) -> list:
    """Every launch of a kernel of ``module``: kernels made at import first, then in project file order."""
    def by_module() -> dict[str, list]:
        table: dict[str, list] = {}
        for f in facts.bindings.files:
            for launch in facts.launches(f):
                table.setdefault(launch.module, []).append(launch)
        for launches in table.values():
            launches.sort(key=lambda ln: bool(ln.kernel.ctx.scope))  # stable: file order within each group
        return table

    return facts.cached("launches_by_module", by_module).get(module, [])


def _preceded(facts: IdentityFacts, file: FileModel, scope: str, order: int, kernel_file: FileModel, kernel: Kernel,
              leading: list[tuple[FileModel, Call]]) -> bool:
    """Every way to the statement at ``order`` of ``scope`` first runs the kernel's definition or a call
    that leads to it (``leading``: what the kernel is made through, one list per kernel), as far as the callers
    show (a summary per function and kernel; not through a recursive call)."""
    if file is kernel_file and scope == kernel.ctx.scope and kernel.ctx.runs_before(order):
        return True
    if any(f is file and call.ctx.scope == scope and call.ctx.runs_before(order) for f, call in leading):
        return True
    if not scope:
        return False

    def every_call_preceded() -> bool:
        sites = facts.bindings.call_sites(facts.bindings.fqname(file, scope))
        return bool(sites) and all(_preceded(facts, f, call.ctx.scope, call.ctx.order, kernel_file, kernel, leading)
                                   for f, call in sites)

    return facts.evaluator.budget.summary(facts.memo, ("preceded by a kernel", file.path, scope, id(kernel)),
                                          every_call_preceded, False)


MAX_EVIDENCE_SITES = 16  # call sites read per parameter, over every level followed


def parameter_values(facts: IdentityFacts, file: FileModel, fn: Function, name: str
                     ) -> list[tuple[object, FileModel, Call]]:
    """The literal values call sites pass for parameter ``name`` of ``fn``, each with the first call (in
    project order) that writes it: directly (``get_kernel(x, charge_grad=True)``), or as a caller's own
    parameter passed on (``_ewald(x, charge_grad)`` called as ``_ewald(x, True)``), however many callers out.
    One entry per value, at most ``MAX_EVIDENCE_SITES`` call sites read: the evidence that a parameter takes
    several values. Once per project."""
    return facts.cached(("parameter_values", id(fn), name), lambda: _parameter_values(facts, file, fn, name))


def _parameter_values(facts: IdentityFacts, file: FileModel, fn: Function, name: str
                      ) -> list[tuple[object, FileModel, Call]]:
    found: dict[object, tuple[object, FileModel, Call]] = {}
    sites_left = [MAX_EVIDENCE_SITES]
    _collect_values(facts, file, fn, name, found, sites_left, set())
    return list(found.values())


def _collect_values(facts: IdentityFacts, file: FileModel, fn: Function, name: str,
                    found: dict[object, tuple[object, FileModel, Call]], sites_left: list[int], seen: set) -> None:
    """Each call site read takes one of ``sites_left`` (a width, over every caller followed) and one step of
    the question's budget."""
    fq = facts.bindings.fqname(file, fn.qualname)
    if (fq, name) in seen:
        return
    seen.add((fq, name))
    evaluator = facts.evaluator
    for caller_file, call in facts.bindings.call_sites(fq):
        if sites_left[0] <= 0:
            return
        sites_left[0] -= 1
        argument = evaluator.bind(fn, name, evaluator.site(caller_file, call.ctx.scope, call, fq, None))
        if argument is not None and not isinstance(argument, Value):  # left to the default
            argument = next((p.default for p in fn.params if p.name == name), None)
        if not isinstance(argument, Value):
            continue
        if argument.kind == "const":
            key = (type(argument.const).__name__, repr(argument.const))
            found.setdefault(key, (argument.const, caller_file, call))
            continue
        caller = caller_file.functions.get(call.ctx.scope)
        if (argument.kind == "name" and argument.local and caller is not None
                and any(p.name == argument.text for p in caller.params)):
            facts.evaluator.budget.step(partial(_collect_values, facts, caller_file, caller, argument.text, found,
                                                sites_left, seen), None)

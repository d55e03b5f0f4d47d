"""The module builds launches and preloads ask for: each a device kind and, on CUDA, a block size.

A launch's variants (``Variant``: the device kind and the block size it is built for) come from the
devices it can run on and its CUDA block sizes (``devices``); a preload's from its own arguments. A
preload that builds only variants no launch of its module uses is a build the launches do again.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import cast

from warplint.model import Call, Context, FileModel, Kernel
from warplint.names import is_warp

from .arg_types import launch_signature
from .context import asv_processes, is_test_file, runs_per_parameter
from .devices import Device, call_devices
from .events import Launch, OptionForm, RunnerStep, config_assignments_in
from .launches import IdentityFacts
from .layer import asked_by_key
from .module_options import option_changes
from .values import Const, ValueSet, several_in_one_process


def launch_devices(facts: IdentityFacts, launch: Launch) -> frozenset[Device]:
    """The devices a launch can run on: a fact of the launch's file kept across an edit (``Layer.kept``), of its
    call and site."""
    return facts.kept("launch devices", launch.file,
                      lambda recorded: call_devices(cast("IdentityFacts", recorded), launch.file, launch.call,
                                                    launch.site), (launch.call, launch.site))


def can_run_on_cuda(facts: IdentityFacts, launch: Launch) -> bool:
    return Device.CUDA in launch_devices(facts, launch)


@asked_by_key
def project_may_use_cuda(facts: IdentityFacts) -> bool:
    """Whether some launch or load of the project can run on CUDA (True when it has none: its Warp work
    happens elsewhere, on devices not known here)."""
    def compute() -> bool:
        launches = facts.all_launches()
        bindings = facts.bindings
        loads = [(f, c) for f in bindings.files for c in bindings.warp_calls(f, "load_module", "force_load")]
        if not launches and not loads:
            return True
        return (any(can_run_on_cuda(facts, launch) for launch in launches)
                or any(Device.CUDA in call_devices(facts, f, c, None, is_warp(c.callee, "force_load"))
                       for f, c in loads))

    return bool(facts.cached("project may use cuda", compute))


# ---------------------------------------------------------------------------------------------- variants
# A module variant: the device kind and the block size it is built for (1 on the CPU, which ignores block_dim).
Variant = tuple[Device, int]


def _variants(found: frozenset[Device], block_dims: ValueSet, cpu_block_dims: ValueSet | None = None,
              known_members: bool = False) -> frozenset[Variant] | None:
    """The variants of ``found`` devices: CUDA at ``block_dims``; the CPU at 1, or at ``cpu_block_dims`` when
    the program has ``wp.config.enable_cpu_blocks`` on. None when a size is not known; with ``known_members``,
    only when a device's sizes hold no known one (the known members are the evidence: the default of an
    environment variable that may hold any other size)."""
    variants: set[Variant] = set()
    for device in found:
        sizes = block_dims if device is Device.CUDA else cpu_block_dims
        if sizes is None:
            variants.add((Device.CPU, 1))
            continue
        known = [value.value for value in sizes if isinstance(value, Const) and isinstance(value.value, int)]
        if not known or (len(known) < len(sizes) and not known_members):
            return None
        variants.update((device, size) for size in known)
    return frozenset(variants)


def several_block_dims_in_one_process(facts: IdentityFacts, launches: Iterable[Launch]) -> bool:
    """Whether ``launches`` (of one module) can run at two different CUDA block sizes in one process. Values
    that vary per process, not within one, do not count twice: a size asv chooses from a benchmark's ``params``
    is one per process (``PerProcess``), and launches made only from two asv benchmark methods run in two
    processes (``asv_processes``; a class's ``setup`` runs in each of its benchmarks' processes)."""
    anywhere: list[Launch] = []
    by_process: dict[str, list[Launch]] = {}
    for launch in launches:
        file, call = launch.origin
        processes = asv_processes(facts.bindings, file, call.ctx.scope)
        if processes is not None and facts.bindings.call_sites(facts.bindings.fqname(file, call.ctx.scope)):
            processes = None  # the project calls the method itself too (a test): not only asv's process
        if processes is None:
            anywhere.append(launch)
        for process in processes or ():
            by_process.setdefault(process, []).append(launch)
    groups = [anywhere + members for members in by_process.values()] or [anywhere]
    return any(several_in_one_process(launch.block_dims for launch in group) for group in groups)


def rebuild_already_forced(facts: IdentityFacts, file: FileModel, kernel: Kernel, module: str) -> bool:
    """The function that creates ``kernel`` changed ``module``'s options (``set_module_options``) after its
    last launch there before the creation, and launches nothing of it in between: the next launch rebuilds the
    module for the options anyway, with this kernel in it, so the kernel adds no build of its own (in a test
    that retunes and then adds a kernel, one rebuild, the option change's)."""
    scope, order = kernel.ctx.scope, kernel.ctx.order
    launches = [o for o, m, call in facts.launch_timeline(file, scope)
                if m in (module, "*") and call.ctx.runs_before(order)]
    if not launches:
        return False
    last = max(launches)
    return any(c.ctx.scope == scope and c.form is OptionForm.SET_MODULE_OPTIONS and c.module is not None
               and facts.bindings.canonical_module(c.module) == module and last < c.ctx.order < order
               for c in option_changes(file, facts))


def cpu_blocks_enabled(facts: IdentityFacts) -> bool:
    """The program turns ``wp.config.enable_cpu_blocks`` on (a value other than a literal False, anywhere):
    CPU launches then run at the block_dim they pass (1 without one), so the CPU has a variant per block size
    as CUDA does (``_resolve_launch_block_dim``); by default every CPU launch is block_dim 1."""
    def compute() -> bool:  # (each file's own table of its `wp.config` assignments, not every assignment read)
        return any(a.name == "enable_cpu_blocks" and not (a.value.kind == "const" and not a.value.const)
                   for f in facts.bindings.files for a in facts.bindings.file_facts.cached(f, config_assignments_in))

    return bool(facts.cached("cpu blocks enabled", compute))


def _cpu_block_dims(facts: IdentityFacts, launch: Launch) -> ValueSet | None:
    """The CPU block sizes of a launch when CPU blocks are on (1 without a block_dim, or for one <= 1); None when
    they are off (every CPU launch is the block_dim 1 variant)."""
    if not cpu_blocks_enabled(facts):
        return None
    value = launch.block_dim
    if value is None or (value.kind == "const" and value.const is None):
        return ValueSet.of(Const(1, "the CPU launch default"))
    return _at_least_one(facts.evaluator.block_dims(launch.file, value, launch.call.ctx.scope, launch.site))


def _at_least_one(sizes: ValueSet) -> ValueSet:
    """CPU block sizes: one of 1 or less is 1."""
    return ValueSet(frozenset(Const(1, "the CPU launch default")
                              if isinstance(v, Const) and isinstance(v.value, int) and v.value <= 1 else v
                              for v in sizes))


def launch_variants(facts: IdentityFacts, launch: Launch) -> frozenset[Variant] | None:
    """The module variants a launch loads; None when its block size is not known statically."""
    return facts.cached(("launch variants", id(launch)), lambda: _variants(
        launch_devices(facts, launch), launch.block_dims, _cpu_block_dims(facts, launch)))


def known_launch_variants(facts: IdentityFacts, launch: Launch) -> frozenset[Variant] | None:
    """``launch_variants`` from the known members of its block sizes; None when a device's sizes hold none."""
    return facts.cached(("known launch variants", id(launch)), lambda: _variants(
        launch_devices(facts, launch), launch.block_dims, _cpu_block_dims(facts, launch), known_members=True))


def load_variants(facts: IdentityFacts, file: FileModel, call: Call) -> frozenset[Variant] | None:
    """The module variants a ``load_module``/``force_load`` builds (without ``block_dim``: the module's
    default 256 on CUDA, 1 on the CPU); None when not known statically."""
    found = call_devices(facts, file, call, None, is_warp(call.callee, "force_load"))
    block_dim = call.bound("block_dim")
    if block_dim is None or (block_dim.kind == "const" and block_dim.const is None):
        sizes = facts.evaluator.block_dims(file, None, call.ctx.scope)
        cpu_sizes = None  # the CPU variants already loaded, else block_dim 1
    else:
        sizes = facts.evaluator.block_dims(file, block_dim, call.ctx.scope)
        cpu_sizes = _at_least_one(sizes) if cpu_blocks_enabled(facts) else None
    return _variants(found, sizes, cpu_sizes)


def module_launch_variants(facts: IdentityFacts, module: str) -> frozenset[Variant] | None:
    """Every variant the project's launches of ``module`` use; None when one of them is not known."""
    def compute() -> frozenset[Variant] | None:
        found: set[Variant] = set()
        for launch in facts.launches_of_module(module):
            variants = launch_variants(facts, launch)
            if variants is None:
                return None
            found |= variants
        return frozenset(found)

    return facts.cached(("module launch variants", module), compute)


def preload_unused(facts: IdentityFacts, file: FileModel, call: Call, module: str) -> bool:
    """A preload of ``module`` built only variants no launch of it uses (a tiled module preloaded at 256 and
    launched at 64 and 128): a kernel joining after it joins no variant that was built."""
    if not is_warp(call.callee, "load_module", "force_load"):
        return False
    loaded = load_variants(facts, file, call)
    used = module_launch_variants(facts, module)
    return loaded is not None and used is not None and bool(used) and not (loaded & used)


# ---------------------------------------------------------------------------------------------- a kernel made late
def joins_built_variant(facts: IdentityFacts, file: FileModel, kernel: Kernel, module: str) -> bool:
    """Whether ``kernel``, created at run time into ``module``, can join a variant of the module that was built
    before its creation and is loaded again after it: only that variant builds again (warp-facts §4, a
    module's executables are kept per device and block size). Built before: the variants of the module's
    preloads and of its other launches but those known to run after the creation. Loaded after: the kernel's
    own launches' and those of the module's other launches but those known to run before it. A launch is
    known to run before (after) the creation when it is earlier (later) in the function that makes the
    kernel, or in a caller than the call that leads there, or in a function every call of which is (however
    many calls out); one in a loop is never known to run only before. A kernel launched only at variants nothing
    built before it was made lands in new variants: each builds once, for its block size (CS-5), and
    nothing builds again. True when a variant is not known or the kernel is not launched."""
    return bool(facts.cached(("joins built variant", id(kernel), module),
                             lambda: _joins_built_variant(facts, file, kernel, module)))


def _joins_built_variant(facts: IdentityFacts, file: FileModel, kernel: Kernel, module: str) -> bool:
    launches = facts.launches_of_module(module)
    own = [launch for launch in launches if launch.kernel is kernel]
    if not own:
        return True
    leading = [(f, call) for f, call, _ in facts.caller_scopes(facts.bindings.fqname(file, kernel.ctx.scope))]
    instance = _one_instance(facts, own) if kernel.generic else None
    # variants a launch of a kernel of the same content loaded before the creation, or any launch or preload
    # loaded after such a kernel was made (launched or not): they hold that content already, so the kernel adds
    # no new hash to them (a phase that makes `wp.kernel(f)` again)
    holding: set[Variant] = set()
    made_earlier = _identical_made(facts, file, kernel, module)
    built: frozenset[Variant] | None = frozenset()  # by something that can run before the creation
    for f, call in _project_loads(facts):
        loaded = facts.modules_loaded_by(f, call)
        if module in loaded or "*" in loaded:
            preloaded = load_variants(facts, f, call)
            built = _union((built, preloaded))
            if preloaded is not None and any(_ordered(facts, f, call, ef, ek, lead, after=True)
                                             for ef, ek, lead in made_earlier):
                holding |= preloaded
    before: list[tuple[Launch, frozenset[Variant] | None]] = []
    after: list[tuple[Launch, frozenset[Variant] | None]] = []
    for launch in launches:
        if launch.kernel is kernel:
            continue
        where, call = launch.origin
        variants = known_launch_variants(facts, launch)
        same = facts.evaluator.same_content(launch.kernel_file, launch.kernel, file, kernel) or (
            instance is not None and facts.evaluator.made_alike(launch.kernel_file, launch.kernel, file, kernel)
            and launch_signature(facts, launch) == instance)
        may_before = not _ordered(facts, where, call, file, kernel, leading, after=True)
        may_after = not _ordered(facts, where, call, file, kernel, leading, after=False)
        held = variants is not None and ((same and not may_after) or any(
            _ordered(facts, where, call, f, k, lead, after=True) for f, k, lead in made_earlier))
        if held and variants is not None:
            holding |= variants
        if may_before:
            before.append((launch, variants))
        if may_after:
            after.append((launch, variants))
        if (may_before and may_after and variants and not same and not held
                and _repeats(facts, where, call)):
            return True  # one launch that can load a variant both before the creation and after it
    built = _union((built, *(v for _, v in before)))
    own_variants = _union(known_launch_variants(facts, launch) for launch in own)
    if built is None or own_variants is None or any(v is None for _, v in after):
        return True
    if (built - holding) & own_variants:
        return True
    # a variant one launch loads before the creation and another launch loads again after it
    return any(a is not b and (va & vb) - holding
               for a, va in before for b, vb in after if va is not None and vb is not None)


def _project_loads(facts: IdentityFacts) -> list[tuple[FileModel, Call]]:
    """Every ``load_module``/``force_load`` call of the project, in file order: one list, not a sweep of every
    file's calls for each kernel made late."""
    return facts.cached("project loads", lambda: [
        (f, call) for f in facts.bindings.files for call in facts.bindings.warp_calls(f, "load_module", "force_load")])


def _one_instance(facts: IdentityFacts, launches: list[Launch]) -> tuple[str, ...] | None:
    """The one argument signature every launch of a generic kernel has: the only instance its object makes.
    Warp hashes that instance by key, source and argument types, so another object of the same function and
    options launched with that signature loaded the same content (warp-facts §4, §6). None when not one."""
    signatures = {launch_signature(facts, launch) for launch in launches}
    return signatures.pop() if len(signatures) == 1 else None


def _identical_made(facts: IdentityFacts, file: FileModel, kernel: Kernel, module: str
                    ) -> list[tuple[FileModel, Kernel, list[tuple[FileModel, Call]]]]:
    """The other kernels of ``module`` with ``kernel``'s content (``wp.kernel(f)`` of one function and options),
    each with the calls leading to where it is made. One made before a load is in the module's hash at that
    load whether or not anything launches it: the module keeps the latest kernel of each key alive
    (``Module.kernels``), so an identical kernel made later adds no new hash (warp-facts §4). Empty when a
    kernel of the same key but other content is made too: it can replace the first before the load."""
    evaluator = facts.evaluator
    alike: list[tuple[FileModel, Kernel, list[tuple[FileModel, Call]]]] = []
    for f, k in facts.kernels_of_module(module):
        if k is kernel or not evaluator.same_key(f, k, file, kernel):
            continue
        if not evaluator.same_content(f, k, file, kernel):
            return []
        if f is file and k.ctx.scope == kernel.ctx.scope and kernel.ctx.precedes(k.ctx):
            continue  # made after it: what loads it there cannot have held the content before it was made
        leading = [(cf, call) for cf, call, _ in facts.caller_scopes(facts.bindings.fqname(f, k.ctx.scope))
                   ] if k.ctx.scope else []
        if _unconditional(k.ctx) and all(_unconditional(call.ctx) for _, call in leading):
            alike.append((f, k, leading))
    return alike


def _unconditional(ctx: Context) -> bool:
    """A statement that runs whenever its function does (the ``__main__`` guard aside: the program's entry)."""
    return len(ctx.conditions) == (1 if ctx.in_main_guard else 0)


def _repeats(facts: IdentityFacts, where: FileModel, call: Call) -> bool:
    """``call`` can run more than once in a process: in a loop, or in a function called in a loop or from
    several places (however many calls out), or one whose callers are not known (a library's function; a test
    runs once)."""
    if call.ctx.in_loop:
        return True
    scope = call.ctx.scope
    if not scope:
        return False
    # a summary per function; a recursive function repeats
    return facts.evaluator.budget.summary(facts.memo, ("runs repeatedly", where.path, scope),
                                          lambda: _function_repeats(facts, where, scope), True)


def _function_repeats(facts: IdentityFacts, where: FileModel, scope: str) -> bool:
    sites = facts.bindings.call_sites(facts.bindings.fqname(where, scope))
    set_up = facts.tests_set_up_by(where, scope)  # the runner's calls of a test's setup
    if not sites and not set_up:
        fn = where.functions.get(scope)
        return not (fn is not None and fn.name.startswith("test") and is_test_file(where))
    if len(sites) + len(set_up) > 1:
        return True
    if set_up:
        f, test, _ = set_up[0]
        return runs_per_parameter(where.functions[scope]) or runs_per_parameter(f.functions[test]) \
            or _function_repeats(facts, f, test)
    f, caller = sites[0]
    return _repeats(facts, f, caller)


def _runs_first(facts: IdentityFacts, test: tuple[FileModel, str], other: tuple[FileModel, str]) -> bool:
    """The test runner runs the test ``test`` (file, scope) before the test ``other``, in one process."""
    return facts.test_runs_before(test, other)


def _set_up_ordered(facts: IdentityFacts, call: Call, step: RunnerStep, test: tuple[FileModel, str],
                    makers: tuple[tuple[FileModel, str], ...], after: bool) -> bool:
    """``call``, in a function the test runner runs as the setup ``step`` of ``test``, runs before (``after``:
    after) a kernel made through one of ``makers`` (its scope and those of the calls leading there): the part of a
    setup that runs first runs before the test's body, so before a kernel the body makes and after one an earlier
    test made; a fixture's teardown (after its ``yield``) runs after the body, and, for a scope wider than the
    test, maybe after later tests too, so never before anything."""
    first = step.runs_first(call.ctx)
    for maker in makers:
        is_test = maker[0] is test[0] and maker[1] == test[1]
        if after and ((is_test and not first) or _runs_first(facts, maker, test)):
            return True
        if not after and first and (is_test or _runs_first(facts, test, maker)):
            return True
    return False


def _union(sets: Iterable[frozenset[Variant] | None]) -> frozenset[Variant] | None:
    found: set[Variant] = set()
    for variants in sets:
        if variants is None:
            return None
        found |= variants
    return frozenset(found)


def _ordered(facts: IdentityFacts, where: FileModel, call: Call, file: FileModel, kernel: Kernel,
             leading: list[tuple[FileModel, Call]], after: bool) -> bool:
    """``call`` runs before (``after``: after) ``kernel`` is made, every time: earlier (later) in the function
    that makes it, or than a call in ``leading`` (the calls that lead to it) in the same function, or in a test
    the test runner runs before (after) the test that makes it or leads there, or in a function every call of
    which so runs (however many calls out: a summary per function, kernel and direction; not through a recursive
    call). Before excludes a call in a loop. ``leading`` is what ``kernel`` is made through (one list per
    kernel)."""
    if call.ctx.in_loop and not after:
        return False
    scope = call.ctx.scope

    def ordered(other: Context) -> bool:
        return other.precedes(call.ctx) if after else call.ctx.precedes(other)

    if where is file and scope == kernel.ctx.scope and ordered(kernel.ctx):
        return True
    if any(f is where and c.ctx.scope == scope and ordered(c.ctx) for f, c in leading):
        return True
    makers = ((file, kernel.ctx.scope), *((f, c.ctx.scope) for f, c in leading))
    if scope and any(_runs_first(facts, maker, (where, scope)) if after else _runs_first(facts, (where, scope), maker)
                     for maker in makers if maker[1]):
        return True
    if not scope:
        return False

    def every_call_ordered() -> bool:
        sites = facts.bindings.call_sites(facts.bindings.fqname(where, scope))
        set_up = facts.tests_set_up_by(where, scope)
        return bool(sites or set_up) and all(_ordered(facts, f, c, file, kernel, leading, after) for f, c in sites) \
            and all(_set_up_ordered(facts, call, step, (f, test), makers, after) for f, test, step in set_up)

    return facts.evaluator.budget.summary(facts.memo, ("ordered against a kernel", where.path, scope, id(kernel),
                                                       after), every_call_ordered, False)

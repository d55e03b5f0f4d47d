from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from warplint.diagnostic import Related
from warplint.index import LAUNCH_CALLS, Project
from warplint.model import Call, FileModel, Kernel, Value
from warplint.names import is_warp
from warplint.rule import Report, Rule


class KernelJoinsLoadedModule(Rule):
    """A kernel created inside a function joins a shared module that may already be loaded.

    ## Why
    A Warp module's identity is the set of its live kernels. A kernel created in a
    function (`@wp.kernel` in a factory, `wp.kernel(f)`, `wp.Kernel(...)`) registers
    into its module — the defining file's module, or a `module="name"` — when the
    function runs. If that module was already launched, the next launch of **any** of
    its kernels rebuilds the **whole** module (every kernel in it, launched or not).
    A kernel whose content varies per call (it captures the factory's arguments or
    locals, uses `wp.static` of them, or takes argument types from them, as
    `wp.array(dtype=dtype)`) does this once per new value.

    A module name computed from some of the factory's arguments
    (`module=_module_name(dtype, batched)`) gives each combination of those its own
    module, but an argument that changes the content and not the name (a flag read by
    `wp.static`, a function chosen by it) puts several variants into one module: the
    second one, made after the first was launched, rebuilds that module, and with a
    `functools.cache` (or a cache dict, in the factory or in its caller) keeping the
    earlier variants alive, each new value rebuilds all of them.

    A file's module-level code runs its statements in order, those of its
    `if __name__ == "__main__":` block too: a kernel defined there after a statement that
    launches its module (`wp.launch(kernels.k_1, ...)`, then `@wp.kernel(module="pkg.kernels")`)
    joins it loaded as well, and its launch rebuilds it.

    Reported when the index shows it can happen: a launch of the module comes before the
    call that creates the kernel (in the same function, or in a caller, across files; in
    the caller's statement, the call that makes what the factory is called on runs
    first: `App().run()` runs `App.__init__`, `make(c)()` runs `make`), or the kernel's
    content varies per call and the module is launched by the factory, by its callers,
    or by a launch of the kernel itself wherever the factory handed it (an attribute, a
    tuple, a bundle object) while other kernels share the module; or the kernel is the
    only one of its module but its factory keeps the variants that an argument left out
    of the module name makes. For a module named per call, a launch counts when it
    launches a kernel whose factory call computes the same name from the same
    expressions (`wp.launch(_get_a(x.dtype))`, then `_get_b(x.dtype)` with both names
    from `_module_name(dtype)`), before the call. A lazy builder (a function that caches
    the kernel it makes in a dict or with `functools.cache`, itself, in its caller, or
    past dispatchers that return its kernel on, as `return _build_batched() if batched
    else _build_single()`) whose kernel has one content on every call is reported when
    its first call comes at run time (not at import, not only in setup before any
    launch) and another kernel of the module is launched in code nothing orders after
    that call (another entry point of the library, another test): whichever runs first,
    the builder's first call after that launch rebuilds the module, once per builder.
    Test methods have no static caller: they run in the test runner's order (a unittest
    `TestCase`'s methods sorted by name, pytest's functions in source order, after those
    of the test files before theirs in their folder, which pytest runs sorted by name in
    one process), and before a test's body the runner runs its setup (the pytest
    fixtures it requests and the `autouse` ones, each up to its `yield`; `setUpClass`,
    `setUp`, xunit `setup_*`), so a kernel defined in a test after an earlier test or its
    setup launched the shared module counts as created after the launch; a
    `@pytest.mark.parametrize`d test runs once per listed value, in order, so a test that
    calls its parameter calls the listed functions in turn. `wp.kernel(f)` made again alike
    after code the runner ran first made it is identical content. A generic kernel launched on a new
    object (one the launch expression makes, also through wrappers: a property without a
    memo, a memo on an instance the expression constructs, a factory call; or one of several
    `wp.kernel(f)` of one function) with other argument types after a launch of the same
    kernel (earlier in the function, at import, in a caller, in a test run first) is
    reported too: instances live on the kernel object, so the later object is new content
    in the loaded module, unless a `wp.overload` on an object that stays referenced (a
    variable, a cache) registered those types: Warp hashes every live object of the module
    and keeps one hash per instance. Kernels are followed through factories (also
    `functools.cache`d ones, which still make a kernel per new argument), kernels stored
    as `self.kernel`, and project decorators that wrap `wp.kernel`, also through dicts
    (a dict literal a factory returns, `K = {n: make(n) for n in ns}`, `K[n] = make(n)`
    in a loop; a read with a literal key gives what was stored under that key only).

    ## Fix
    Define the kernel at module level, above the module's first launch; or create all
    variants before the first launch (at import or in setup); or give each variant its own module
    (`module="unique"`, which Warp reuses by content hash, or a name per variant).

    One defect, one finding: kernels one function creates for the same reason with no
    launch of their module between them join it together and cost one build; they are
    reported once, at the first, with the others as related locations. A name defined
    again in the batch replaces the earlier definition before any launch (a module keeps one
    kernel per key), so only its last definition counts.

    ## Limits
    Not reported: `module="unique"`, also as one of the names a module name can be (the default of
    `os.environ.get("MODULE", "unique")`: the names only the run knows prove no sharing); the only kernel
    of its module, unless its factory keeps variants the module name does not separate (a name that includes every
    argument the content reads gives each variant its own module); factories called
    only before any launch (at import, or in a setup function that is itself only called
    so, outside loops); identical content re-defined
    with no launch before it (Warp deduplicates it by hash); a captured name with one
    literal value on every call when the factory is also called at import, before any
    launch (every later call re-defines identical content; without such a call, the first
    creation after a launch is reported, as one build); a call of a
    `functools.cache`d factory with the literal arguments of a call made earlier (in the
    same function, or at import) before the launch: the cache returns that call's kernel.
    A kernel of one content launched only at variants (device, block size) that nothing built before it
    was made, in a module whose other launches that can run after it use none of the variants built before,
    lands in new variants: their builds are the block sizes' (WC303), not a rebuild (on the CPU every block
    size is one variant unless the program turns `wp.config.enable_cpu_blocks` on).
    A preload (`load_module`/`force_load`) that built only variants no launch of the
    module uses (a tiled module preloaded at the default block_dim 256 and launched at 64)
    is not a load the kernel joins: the launched variant is built afterwards, with it. A kernel of
    one content (it captures nothing, or only names with one literal value on every call),
    whether its factory keeps it or not, is not reported when every way to the other launches
    of its module first calls the factory (three levels of callers are followed): it is in the
    module at the first load, and later calls re-define identical content. Nor is a
    re-definition, in the same function (or the same module-level code, its `__main__` block
    included), of a kernel defined there before, in the branches it runs in, with the same name, decorator and body
    text (Warp hashes the key and the source), nor a kernel made after the
    function changed the module's options with `set_module_options()` since its last launch
    there: that change rebuilds the module at its next launch anyway, with the kernel in it.
    Functions a `for` calls in turn
    over a list (written, or filled by a registering decorator at import) run once each per walk of the list, in
    its order. Which call runs first at
    run time is approximated by source order and the call graph; `--confirm` shows the
    hashes really built. A launch in a branch that ends with `return`, `raise` or
    `sys.exit()` does not count as running before the code after that branch. Which
    arguments a module name reads is followed through locals, f-strings, joins and the
    return values of project helpers; a name built in a way the binder keeps no parts of
    (a comprehension, `not x`, a comparison) is not known, and the kernel is not
    reported. A keyword of a public library function that no call in the project passes
    (`sort(keys, descending=False)`) is its users' choice: any value; elsewhere an argument
    no call passes counts as its default. Two names computed per call are known to be one only when they
    are computed by the same helper (or are the same f-string) from the same expressions
    in one function: variants of a module named per call are otherwise reported only for
    arguments left out of the name; a `module=` that is just a factory parameter shares
    nothing that can be told.
    """

    code = "WC101"
    name = "kernel-joins-loaded-module"
    mechanism = "CS-1"
    summary = "A kernel defined in a function joins a module that may already be loaded: the module rebuilds."
    confidence = "high"

    invalid = (
        "import warp as wp\n"
        "@wp.kernel\n"
        "def base(a: wp.array(dtype=float)):\n"
        "    a[0] = 0.0\n"
        "def run(a, c: float):\n"
        "    wp.launch(base, dim=1, inputs=[a])\n"
        "    @wp.kernel\n"
        "    def add(a: wp.array(dtype=float)):\n"
        "        a[0] = a[0] + c\n"
        "    wp.launch(add, dim=1, inputs=[a])\n",
        "import functools\n"
        "import warp as wp\n"
        "@functools.cache\n"
        "def get_sort(dtype, descending: bool):\n"
        "    @wp.kernel(module=f'sorts_{dtype}')\n"
        "    def sort_pass(a: wp.array(dtype=dtype)):\n"
        "        if wp.static(descending):\n"
        "            a[0] = -a[0]\n"
        "    return sort_pass\n"
        "def run(a):\n"
        "    wp.launch(get_sort(a.dtype, False), dim=1, inputs=[a])\n"
        "    wp.launch(get_sort(a.dtype, True), dim=1, inputs=[a])\n",
    )
    valid = (
        "import warp as wp\n"
        "@wp.kernel\n"
        "def base(a: wp.array(dtype=float)):\n"
        "    a[0] = 0.0\n"
        "def run(a, c: float):\n"
        "    wp.launch(base, dim=1, inputs=[a])\n"
        "    @wp.kernel(module='unique')\n"
        "    def add(a: wp.array(dtype=float)):\n"
        "        a[0] = a[0] + c\n"
        "    wp.launch(add, dim=1, inputs=[a])\n",
        "import functools\n"
        "import warp as wp\n"
        "@functools.cache\n"
        "def get_sort(dtype, descending: bool):\n"
        "    @wp.kernel(module=f'sorts_{dtype}_{descending}')\n"
        "    def sort_pass(a: wp.array(dtype=dtype)):\n"
        "        if wp.static(descending):\n"
        "            a[0] = -a[0]\n"
        "    return sort_pass\n"
        "def run(a):\n"
        "    wp.launch(get_sort(a.dtype, False), dim=1, inputs=[a])\n"
        "    wp.launch(get_sort(a.dtype, True), dim=1, inputs=[a])\n",
    )

    def check(self, file: FileModel, project: Project) -> Iterator[Report]:
        joined: list[_Joining] = []  # kernels that make their module build again, in source order
        for kernel in file.kernels:
            scope = kernel.ctx.scope
            module = project.kernel_module(file, kernel)
            if module == "unique":
                continue  # its own module
            remade = project.remade_with_new_types(file, kernel) if module is not None else None
            if module is not None and remade is not None:
                # a generic kernel made anew at each launch: the later object, with another type, is new content
                # at the calls that launch them: a wrapper's launch is the one its caller makes
                again_file, again = remade.again.origin
                first_file, first = remade.first.origin
                related = (Related(again_file.path, again.span, f"`{kernel.name}` made again here, launched "
                                                                "with other argument types"),)
                where = (f"`{again.ctx.scope.rpartition('.')[2]}()`" if again.ctx.scope
                         else f"module `{again_file.module}`")
                joined.append(_Joining(kernel, module, evidence=(where, first, first_file, related)))
                continue
            if not scope and project.created_before_loads(file, kernel):
                continue  # made by its file's module-level code before that code launches or loads anything
            if project.remade_kernel(file, kernel) is not None:
                continue  # identical content made again, which builds nothing new
            if module is None and "unique" in project.kernel_module_names(file, kernel)[0]:
                continue  # its known name is a module of its own; a name only the run knows proves no sharing
            if module is None:
                # a module named per call (`module=_module_name(dtype)`): a new value of what the name reads makes
                # a new module; only a launch of the module one call names, before a kernel joins it, or variants
                # an argument left out of the name puts into it, rebuild it
                evidence = self._launched_before_in_named(file, kernel, project)
                if evidence is not None:
                    joined.append(_Joining(kernel, _computed(kernel), evidence=evidence, computed=True))
                    continue
                alike = any(not (f is file and k.ctx.scope == scope)
                            for f, k in project.kernels_of_module_shape(file, kernel))
                shared = self._shared_variants(file, kernel, None, project, shares_module=alike)
                if shared is not None:
                    joined.append(shared)
                continue
            # kernels the same function makes count as made together, unless the module is launched between them
            others = [(f, k) for f, k in project.kernels_of_module(module)
                      if k is not kernel and not (f is file and k.ctx.scope == scope
                                                  and not project.loaded_between(file, k, kernel, module))]
            if not others:
                # the only kernel(s) of its module: only its own earlier variants, when the factory keeps them,
                # are rebuilt with a new one
                shared = self._shared_variants(file, kernel, module, project)
                if shared is not None:
                    joined.append(shared)
                continue
            variants = project.kernel_variants(file, kernel)
            captured = sorted(variants.captures) if variants is not None else []
            varying = [name for name in captured if not self._never_varies(project, file, scope, name)]
            if not varying and project.made_before_module_launches(file, kernel, module):
                # one content on every call, first made before any launch of the module: every later creation
                # is identical and Warp's content hash absorbs it
                continue
            if not varying and not project.joins_built_variant(file, kernel, module):
                # one content, launched only at block sizes nothing built before it was made: it lands in new
                # variants of the module (their builds are the block sizes', CS-5); no built one builds again
                continue
            evidence = self._launched_before(file, kernel, module, project)
            if evidence is not None:
                if not project.rebuild_already_forced(file, kernel, module):
                    joined.append(_Joining(kernel, module, evidence=evidence))
                continue
            if captured and not varying and self._made_at_import(project, file, scope):
                continue  # one content on every call, first made at import, before any launch: identical
            if captured:
                runner = self._launched_by_factory_or_callers(file, kernel, module, project)
                if runner is not None:
                    joined.append(_Joining(kernel, module, varying=tuple(varying), runner=runner,
                                           captured=tuple(captured)))
            else:
                # one content on every call, made by a lazy builder at run time: its first call after
                # another launch of the module (in whichever order the two run) rebuilds the module once
                apart = project.launched_apart(file, kernel, module)
                if apart is not None:
                    joined.append(_Joining(kernel, module, apart=apart))
        for group in self._batches(project, file, joined):
            # Warp keeps one kernel per key (name) in a module: a name defined again in the same batch
            # replaces the earlier definition before any launch, which never builds.
            last = {item.kernel.name: item for item in group}
            yield self._finding(project, file, [item for item in group if last[item.kernel.name] is item])

    @staticmethod
    def _batches(project: Project, file: FileModel, joined: list[_Joining]) -> list[list[_Joining]]:
        """One defect per batch: kernels of one function and module, for the same reason, with no launch
        of the module between their definitions, join it together and cost one build of it."""
        batches: list[list[_Joining]] = []
        for item in joined:
            last = batches[-1][-1] if batches else None
            if (last is not None and last.kernel.ctx.scope == item.kernel.ctx.scope and last.module == item.module
                    and last.reason == item.reason and not any(
                        last.kernel.ctx.order < order < item.kernel.ctx.order and launched in (item.module, "*")
                        for order, launched, _ in project.launch_timeline(file, item.kernel.ctx.scope))):
                batches[-1].append(item)
            else:
                batches.append([item])
        return batches

    def _finding(self, project: Project, file: FileModel, group: list[_Joining]) -> Report:
        first = group[0]
        kernel, module, scope = first.kernel, first.module, first.kernel.ctx.scope
        names = _names([g.kernel.name for g in group])
        named = module if first.computed else f"`{module}`"
        # the message names the module only when it is not the file's own (the notes always name it)
        own = "this file's module" if module == file.module else f"module {named}"
        also = tuple(Related(file.path, g.kernel.span, f"kernel `{g.kernel.name}` joins module {named} with it")
                     for g in group[1:])
        single = len(group) == 1
        subject = f"kernel `{kernel.name}`" if single else f"kernels {names}"
        them = "it" if single else "them"
        if first.evidence is not None:
            where, launch, launch_file, related = first.evidence
            computed = first.computed
            total = len(project.kernels_of_module_shape(file, kernel) if computed
                        else project.kernels_of_module(module))
            same = " (the same name for the same arguments)" if computed else ""
            related = (Related(launch_file.path, launch.span,
                               f"module {named}{same} launched here first; {where} then creates {subject}, and the "
                               f"whole module ({_kernels(total)}) builds again"), *related)
            factory = file.functions.get(scope)
            if factory is not None and project.is_memoized(factory):
                related = (*related, Related(file.path, factory.span, f"the cache on `{factory.name}()` only saves "
                                             "repeats: each new argument still makes a new kernel"))
            data: dict[str, Any] = {} if computed else {"module": module}  # a name computed per call is not known
            # module-level code that launches and then defines: the definition moves above that launch
            fix = "at module level" if scope else "before the module's first launch"
            return self.report(
                kernel.span,
                f"{subject} {'joins' if single else 'join'} {own} after its launch, rebuilding it; "
                f"define {them} {fix}",
                related=(*related, *also), kernel=kernel.name, function=scope, **data,
            )
        if first.apart is not None:
            apart = first.apart
            launcher = apart.launch.ctx.scope
            where = f"`{launcher.rpartition('.')[2]}()`" if launcher else f"module `{apart.launch_file.module}`"
            total = len(project.kernels_of_module(module))
            related = (Related(apart.launch_file.path, apart.launch.span,
                               f"{where} launches module {named} here, in code nothing runs after `{scope}()`: "
                               f"a first use after it builds the whole module ({_kernels(total)}) again"),
                       Related(apart.own_file.path, apart.own.span, f"`{kernel.name}` launched here"))
            return self.report(
                kernel.span,
                f"lazily made {subject} may join {own} after its launch; define {them} at module level",
                related=(*related, *also), module=module, kernel=kernel.name, function=scope,
            )
        varying = sorted({name for g in group for name in g.varying})
        if first.shared:
            values = _names(varying)
            factory = file.functions.get(scope)
            variants = project.kernel_variants(file, kernel)
            keeper = (f"the cache on `{factory.name}()`" if factory is not None and project.is_memoized(factory)
                      else f"`{scope}()`" if variants is None or variants.keeper in ("", project.fqname(file, scope))
                      else f"the cache in `{variants.keeper.rpartition('.')[2]}()`")
            kept = (f"{keeper} keeps the earlier ones, so each new value rebuilds the module with all of them"
                    if variants is not None and variants.kept
                    else "each new value rebuilds the module with the kernels already in it")
            name = "the module name" if first.computed else "the name of module"
            data = {} if first.computed else {"module": module}  # a computed name is not known
            why = Related(file.path, kernel.span, f"each value of {values} of `{scope}()` is a new kernel in module "
                                                  f"{named}, which {first.runner} launches; {kept}")
            return self.report(
                kernel.span,
                f"{subject} {'varies' if single else 'vary'} with {values}, which {name} {named} leaves out; "
                f"add {'it' if len(varying) == 1 else 'them'} to the name or use `module=\"unique\"`",
                related=(why, *self._passed_values(project, file, group), *also), kernel=kernel.name,
                function=scope, **data,
            )
        if not varying:
            captured = _names(sorted({name for g in group for name in g.captured}))
            why = Related(file.path, kernel.span,
                          f"`{scope}()` creates {them} and {first.runner} launches module {named}: the first creation "
                          f"after a launch builds the whole module again (once: what {them} "
                          f"{'captures' if single else 'capture'}, {captured}, has one value)")
            return self.report(
                kernel.span,
                f"{subject} {'is' if single else 'are'} created after {own} can be launched, rebuilding "
                f"it once; define {them} at module level",
                related=(why, *also), module=module, kernel=kernel.name, function=scope,
            )
        why = Related(file.path, kernel.span, f"each new value of {_names(varying)} is a new kernel in module {named}, "
                                              f"which {first.runner} launches: the whole module builds again")
        return self.report(
            kernel.span,
            f"{subject} {'captures' if single else 'capture'} {_names(varying)} of `{scope}()`, rebuilding {own} "
            f"per value; use `module=\"unique\"`",
            related=(why, *also), module=module, kernel=kernel.name, function=scope,
        )

    @staticmethod
    def _passed_values(project: Project, file: FileModel, group: list[_Joining]) -> tuple[Related, ...]:
        """Where the values of an argument the module name leaves out are passed, when calls pass several."""
        related: list[Related] = []
        shared: set[tuple[str, str]] = set()
        for g in group:
            variants = project.kernel_variants(file, g.kernel)
            shared |= variants.shared if variants is not None else set()
        for qual, name in sorted(shared):
            fn = file.functions.get(qual)
            values = project.parameter_values(file, fn, name) if fn is not None else []
            if len(values) > 1:
                related.extend(Related(f.path, call.span, f"`{name}` is {value!r} through this call")
                               for value, f, call in values[:3])
        return tuple(related)

    @staticmethod
    def _made_at_import(project: Project, file: FileModel, scope: str) -> bool:
        """The factory ``scope`` is called at module level (import time, not under a condition)."""
        return any(not call.ctx.scope and not call.ctx.conditions and not call.ctx.in_main_guard
                   for _, call in project.call_sites(project.fqname(file, scope)))

    @staticmethod
    def _never_varies(project: Project, file: FileModel, scope: str, name: str) -> bool:
        """A captured name that has one literal value on every call (a constant local, or a parameter every
        call site passes the same literal): each call re-defines identical content, which builds nothing."""
        return project.values(file, Value("name", text=name, ref=name, local=True), scope
                                        ).single_constant()[0]

    def _launched_before(self, file: FileModel, kernel: Kernel, module: str, project: Project):
        """A launch of ``module`` that runs before the kernel is created, if the index shows one."""
        scope = kernel.ctx.scope
        # In the defining function (or the file's module-level code) itself, before the definition.
        for _order, launched, call in project.launch_timeline(file, scope):
            if (call.ctx.precedes(kernel.ctx) and launched in (module, "*")
                    and not project.preload_unused(file, call, module)):
                return _maker(file, kernel), call, file, ()
        # What the test runner runs earlier in the same process (tests have no static caller): an earlier test,
        # a fixture or setup run first.
        for step in project.runner_steps_before(file, scope):
            for _order, launched, call in project.launch_timeline(step.file, step.scope):
                if (step.runs_first(call.ctx) and launched in (module, "*")
                        and not project.preload_unused(step.file, call, module)):
                    name = step.scope.rpartition(".")[2]
                    return (f"`{scope.rpartition('.')[2]}()` (the test runner runs `{name}()` first)", call,
                            step.file, ())
        # In a caller: a launch before the call that leads to the definition.
        factory = project.fqname(file, scope)
        for caller_file, call, level in project.caller_scopes(factory):
            for launched, launch in project.launched_before_call(caller_file, call):
                if (launched in (module, "*") and not project.preload_unused(caller_file, launch, module)
                        and not (level == 1 and project.repeats_cached_call(caller_file, call, factory, launch))):
                    name = call.callee.rpartition(".")[2]
                    called = Related(caller_file.path, call.span, f"`{name}()` called here, after the launch")
                    return f"`{name}()`", launch, caller_file, (called,)
        return None

    @staticmethod
    def _launched_before_in_named(file: FileModel, kernel: Kernel, project: Project):
        """For a module named per call: a caller that launches a kernel of the module its call of the factory
        names (the same name computed from the same expressions), before that call."""
        factory = project.fqname(file, kernel.ctx.scope)
        variants = project.kernel_variants(file, kernel)
        for caller_file, call in project.call_sites(factory):
            scope = call.ctx.scope
            target = project.module_shape_at(caller_file, scope, call, file, kernel)
            if target is None:
                continue
            for launch in project.calls_in(caller_file, scope):
                if not (is_warp(launch.callee, *LAUNCH_CALLS) and launch.ctx.precedes(call.ctx)):
                    continue
                made = _made_by(project, caller_file, scope, launch.bound("kernel"))
                if made is None:
                    continue
                for kf, launched in project.find_kernels(caller_file, scope, made):
                    if project.module_shape_at(caller_file, scope, made, kf, launched) != target:
                        continue
                    if launched is kernel and not _new_variant(project, caller_file, scope, made, call, kf, kernel,
                                                               variants):
                        continue  # the same arguments: the same kernel again (a cache hit or identical content)
                    name = call.callee.rpartition(".")[2]
                    called = Related(caller_file.path, call.span, f"`{name}()` called here, after the launch")
                    return f"`{name}()`", launch, caller_file, (called,)
        return None

    def _launched_by_factory_or_callers(self, file: FileModel, kernel: Kernel, module: str, project: Project):
        scope = kernel.ctx.scope
        fq = project.fqname(file, scope)
        if project.runs_before_launches(fq):
            return None  # made in setup, before anything is launched: every variant is there at the first load
        if module in project.modules_launched_by(fq):
            return f"`{scope}()`"
        for caller_file, call, _level in project.caller_scopes(fq):
            if not call.ctx.scope and not call.ctx.in_loop:
                continue  # an import-time call runs once, before launches
            caller = project.fqname(caller_file, call.ctx.scope)
            launched = project.modules_launched_by(caller) if call.ctx.scope else {
                m: c for _, m, c in project.launch_timeline(caller_file, "")
            }
            if module in launched or "*" in launched:
                return f"`{call.ctx.scope}()`" if call.ctx.scope else f"module `{caller_file.module}`"
        # handed out (in an attribute, a tuple, a bundle object) and launched elsewhere
        return self._variant_launcher(file, kernel, project)

    @staticmethod
    def _variant_launcher(file: FileModel, kernel: Kernel, project: Project) -> str | None:
        """Where a variant of ``kernel`` is launched (loading its module), when its factory can run again
        afterwards: it is not only called before every launch (at import, in setup)."""
        fq = project.fqname(file, kernel.ctx.scope)
        launches = project.kernel_launches(file, kernel)
        if not launches or project.runs_before_launches(fq):
            return None
        near = {fq} | {project.fqname(f, c.ctx.scope) for f, c, _ in project.caller_scopes(fq)}
        f, call = next(((f, c) for f, c in launches if project.fqname(f, c.ctx.scope) in near), launches[0])
        return f"`{call.ctx.scope}()`" if call.ctx.scope else f"module `{f.module}`"

    def _shared_variants(self, file: FileModel, kernel: Kernel, module: str | None, project: Project,
                         shares_module: bool = False) -> _Joining | None:
        """Arguments of the kernel's factory that the module name leaves out change its content, and the
        factory keeps what it made (or other kernels can share the module: ``shares_module``): each new value
        joins the module the earlier variants loaded and rebuilds it with them."""
        variants = project.kernel_variants(file, kernel)
        if variants is None or not variants.shared or not (variants.kept or shares_module):
            return None
        runner = self._variant_launcher(file, kernel, project)
        if runner is None:
            return None
        named = module if module is not None else _computed(kernel)
        return _Joining(kernel, named, varying=tuple(sorted({name for _, name in variants.shared})), runner=runner,
                        shared=True, computed=module is None)


def _made_by(project: Project, file: FileModel, scope: str, value: Value | None) -> Value | None:
    """The factory call a launch's kernel argument is: ``wp.launch(get_k(dtype))``, or a local bound once to it."""
    if value is None:
        return None
    if value.kind == "call":
        return value
    if value.kind == "name" and value.local:
        bindings = project.name_assignments(file, scope, value.text)
        if len(bindings) == 1 and bindings[0].value.kind == "call":
            return bindings[0].value
    return None


def _new_variant(project: Project, file: FileModel, scope: str, first: Value, later: Call, kernel_file: FileModel,
                 kernel: Kernel, variants) -> bool:
    """Two calls of one factory in ``scope`` pass different expressions for an argument that changes the
    kernel's content."""
    fn = kernel_file.functions.get(kernel.ctx.scope)
    if fn is None or variants is None:
        return False
    fq = project.fqname(kernel_file, fn.qualname)
    sites = [project.site(file, scope, c, fq, None) for c in (first, later)]
    for qual, name in variants.content:
        if qual != fn.qualname:
            continue
        shapes = []
        for site in sites:
            argument = project.bind(fn, name, site)
            shapes.append(project.shape_of(file, argument, scope) if isinstance(argument, Value)
                          else "default" if argument is not None else None)
        if None in shapes or shapes[0] != shapes[1]:
            return True
    return False


@dataclass(frozen=True)
class _Joining:
    """A kernel whose creation builds its module again: after a launch (``evidence``), or once per new
    value of what it captures (``varying``, the module launched by ``runner``)."""

    kernel: Kernel
    module: str
    evidence: tuple | None = None
    varying: tuple[str, ...] = ()
    runner: str = ""
    captured: tuple[str, ...] = ()
    shared: bool = False  # its own module, which its earlier variants (kept by the factory) share
    apart: Any = None  # variants.Apart: a lazy builder's kernel, the module launched where nothing orders it
    computed: bool = False  # ``module`` is the expression of a name computed per call (shown quoted), not a name

    @property
    def reason(self) -> tuple:
        if self.evidence is not None:
            return ("after a launch", self.evidence[0])
        if self.apart is not None:
            return ("built lazily",)
        return ("shares its module with its variants" if self.shared else "varies", self.runner)


def _maker(file: FileModel, kernel: Kernel) -> str:
    """What runs the kernel's definition: its function, or its file's module-level code."""
    if kernel.ctx.scope:
        return f"`{kernel.ctx.scope}()`"
    return "the `__main__` block" if kernel.ctx.in_main_guard else f"module `{file.module}` at import"


def _computed(kernel: Kernel) -> str:
    """A module name computed per call, shown as its expression."""
    return f"`{kernel.module_value.text if kernel.module_value is not None else ''}`"


def _kernels(count: int) -> str:
    return f"{count} kernel{'s' if count != 1 else ''}"


def _names(names: list[str]) -> str:
    quoted = [f"`{n}`" for n in names]
    return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + f" and {quoted[-1]}"

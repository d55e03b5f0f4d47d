from __future__ import annotations

from collections.abc import Iterator

from warplint.diagnostic import Related
from warplint.index import Project
from warplint.model import FileModel, Kernel
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
    locals, or uses `wp.static` of them) does this once per new value.

    Reported when the index shows it can happen: a launch of the module comes before
    the call that creates the kernel (in the same function, or in a caller, across
    files), or the kernel's content varies per call and the module is launched by the
    factory or its callers while other kernels share the module. Test methods have no
    static caller: they run in the test runner's order (a unittest `TestCase`'s methods
    sorted by name, pytest's functions in source order), so a kernel defined in a test
    after an earlier test launched the shared test module counts as created after the
    launch. Kernels are followed through factories (also `functools.cache`d ones, which
    still make a kernel per new argument), kernels stored as `self.kernel`, and project
    decorators that wrap `wp.kernel`.

    ## Fix
    Define the kernel at module level; or create all variants before the first
    launch (at import or in setup); or give each variant its own module
    (`module="unique"`, which Warp reuses by content hash, or a name per variant).

    ## Limits
    Not reported: `module="unique"`; the only kernel of its module; factories called
    only at module level (import time) before launches; identical content re-defined
    with no launch before it (Warp deduplicates it by hash). Which call runs first at
    run time is approximated by source order and the call graph; `--confirm` shows the
    hashes really built. A launch in a branch that ends with `return`, `raise` or
    `sys.exit()` does not count as running before the code after that branch.
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
    )

    def check(self, file: FileModel, project: Project) -> Iterator[Report]:
        for kernel in file.kernels:
            scope = kernel.ctx.scope
            if not scope:
                continue
            module = project.kernel_module(file, kernel)
            if module is None or module == "unique":
                continue
            others = [
                (f, k) for f, k in project.kernels_of_module(module)
                if k is not kernel and not (f is file and k.ctx.scope == scope)
            ]
            if not others:
                continue  # the only kernel(s) of its module: nothing else to rebuild
            evidence = self._launched_before(file, kernel, module, project)
            if evidence is not None:
                where, launch, launch_file, related = evidence
                related = (Related(launch_file.path, launch.span, f"module {module} launched here first"), *related)
                total = len(project.kernels_of_module(module))
                factory = file.functions.get(scope)
                memo = ""
                if factory is not None and project.evaluator.is_memoized(factory):
                    memo = (f" The cache on {factory.name}() only saves repeats: each new argument still makes a "
                            "new kernel.")
                yield self.report(
                    kernel.span,
                    f"kernel `{kernel.name}` is created when {where} runs, after Warp module {module} was already "
                    f"launched: the whole module ({total} kernels) builds again.{memo} "
                    "Define it at module level, before the first launch, or in its own module.",
                    related=related, module=module, kernel=kernel.name, function=scope,
                )
                continue
            varying = sorted(kernel.captured | kernel.static_captured)
            if varying:
                runner = self._launched_by_factory_or_callers(file, kernel, module, project)
                if runner is not None:
                    yield self.report(
                        kernel.span,
                        f"kernel `{kernel.name}` captures {', '.join(varying)} from {scope}(), so each new value is "
                        f"a new kernel in shared Warp module {module}, which {runner} launches: every new value "
                        "rebuilds the whole module. Use module=\"unique\" (reused by content) or define the "
                        "variants before the first launch.",
                        module=module, kernel=kernel.name, function=scope,
                    )

    def _launched_before(self, file: FileModel, kernel: Kernel, module: str, project: Project):
        """A launch of ``module`` that runs before the kernel is created, if the index shows one."""
        scope = kernel.ctx.scope
        # In the defining function itself, before the definition.
        for _order, launched, call in project.launch_timeline(file, scope):
            if call.ctx.runs_before(kernel.ctx.order) and launched in (module, "*"):
                return f"{scope}()", call, file, ()
        # A test the runner runs earlier in the same process (tests have no static caller).
        for earlier in project.runner_predecessors(file, scope):
            for _order, launched, call in project.launch_timeline(file, earlier):
                if launched in (module, "*"):
                    name = earlier.rpartition(".")[2]
                    return f"{scope.rpartition('.')[2]}() (the test runner runs {name}() first)", call, file, ()
        # In a caller: a launch before the call that leads to the definition.
        for caller_file, call, _level in project.caller_scopes(project.fqname(file, scope)):
            for _order, launched, launch in project.launch_timeline(caller_file, call.ctx.scope):
                if launch.ctx.runs_before(call.ctx.order) and launched in (module, "*"):
                    name = call.callee.rpartition(".")[2]
                    called = Related(caller_file.path, call.span, f"{name}() called here, after the launch")
                    return f"{name}()", launch, caller_file, (called,)
        return None

    def _launched_by_factory_or_callers(self, file: FileModel, kernel: Kernel, module: str, project: Project):
        scope = kernel.ctx.scope
        fq = project.fqname(file, scope)
        if module in project.modules_launched_by(fq):
            return f"{scope}()"
        for caller_file, call, _level in project.caller_scopes(fq):
            if not call.ctx.scope and not call.ctx.in_loop:
                continue  # an import-time call runs once, before launches
            caller = project.fqname(caller_file, call.ctx.scope)
            launched = project.modules_launched_by(caller) if call.ctx.scope else {
                m: c for _, m, c in project.launch_timeline(caller_file, "")
            }
            if module in launched or "*" in launched:
                return f"{call.ctx.scope or caller_file.module}()" if call.ctx.scope else f"module {caller_file.module}"
        return None

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from warplint.diagnostic import Related
from warplint.index import Project
from warplint.model import Call, FileModel, Value
from warplint.rule import Report, Rule
from warplint.semantic.events import OptionChange, OptionForm

_HOW = {
    OptionForm.SET_MODULE_OPTIONS: "`set_module_options()`",
    OptionForm.ITEM: "an `options[...]` assignment",
    OptionForm.UPDATE: "`options.update()`",
}


class ModuleOptionsAfterLoad(Rule):
    """Module options change after the module was launched or loaded.

    ## Why
    A Warp module's options are part of its identity (hash). Once it has loaded,
    `wp.set_module_options(...)`, `wp.get_module(m).options[k] = v` or
    `.options.update(...)` with a different value makes the next launch of **any**
    kernel of that module build the whole module again (a second code generation
    and native compile, seconds per module; minutes with MathDx tile ops). Direct
    `options[...]` mutation is worse: the rebuild is deferred to some unrelated later
    event.

    The order is followed within a function, at module scope, and through helper
    calls in other files: `launch_all()` then `configure()` where `configure()`
    sets the options of the launched module is reported at the `configure()` call, a
    method called on an instance made in place (`Tuner().apply(...)`) included.
    A launch in another scope that runs first counts too (the semantic layer's order of
    scopes): module scope before the function the program then calls, `__init__` before a
    method of the instance, a caller's launch before the call that leads here. Functions called in
    turn through a `for` over a tuple of them (`for step in (warm_up, refine): step()`) run in that
    order, and a `functools.partial(configure, 4)` object calls `configure`. So does the
    test runner's: pytest runs a file's tests in order and a folder's test files sorted
    by name, in one process, so a test that changes the options of a module an earlier
    test launched builds it again; so does one whose setup launched it first (a pytest
    fixture it requests or an `autouse` one, up to the fixture's `yield`: what follows is
    teardown, run after the test; `setUpClass`, `setUp`, xunit `setup_*`), and a
    `@pytest.mark.parametrize`d test runs its listed values in order. A test that sets the options of a module the tests
    own (every kernel of it has its code in test code: its file's kernels, or a helper
    module of a test package, as in Warp's own option and AOT tests) between tests does so
    on purpose: it is reported only with `report-deliberate`. A value another change of the
    module may have given it already is not reported (a change in code that cannot run, such
    as a helper of a test file that no test, fixture, hook, other code or import reaches,
    gives the module nothing). Tests
    that make kernels of a library's functions (`wp.kernel(f)`) do not own the library's
    module: Warp puts such a kernel where `f` is defined.

    ## Fix
    Set module options before the first launch or load of the module: at module
    scope next to the kernels, or at the start of setup. For per-variant options use
    `@wp.kernel(module="unique", module_options={...})`.

    ## Limits
    Re-setting the values set before (or the module defaults, followed through
    helpers and constants) is not reported: the hash does not move. A value the
    program gives one literal and otherwise leaves to its run (`int(os.environ.get("N",
    "16"))`) counts as that literal. A write into a
    loaded module's live options dict (`options[...]`, `.options.update`) is
    reported only when something registers into the module before its next launch
    (a `set_module_options()`, a kernel made again): otherwise Warp keeps the cached
    hash and the write changes nothing yet. Nor is restoring options in a `finally:` block (a deliberate
    set-launch-restore around one step, as Warp's own tests do). Options applied in a loop that also launches are not
    reported. The target module must be statically known (`module=` string, Python
    module object, `__name__`, `wp.get_module(name)`, or the file the call is written in);
    a helper's `module` parameter is the module each call of the helper passes.
    """

    code = "WC102"
    name = "module-options-after-load"
    mechanism = "CS-3"
    summary = "Module options change after the module was launched, so the whole module builds again."
    confidence = "high"

    invalid = (
        "import warp as wp\n"
        "@wp.kernel\n"
        "def k(a: wp.array(dtype=float)):\n"
        "    a[0] = 1.0\n"
        "def run(a):\n"
        "    wp.launch(k, dim=1, inputs=[a])\n"
        "    wp.set_module_options({'max_unroll': 4})\n"
        "    wp.launch(k, dim=1, inputs=[a])\n",
    )
    valid = (
        "import warp as wp\n"
        "wp.set_module_options({'max_unroll': 4})\n"
        "@wp.kernel\n"
        "def k(a: wp.array(dtype=float)):\n"
        "    a[0] = 1.0\n"
        "def run(a):\n"
        "    wp.launch(k, dim=1, inputs=[a])\n",
    )

    def check(self, file: FileModel, project: Project) -> Iterator[Report]:
        # a unique kernel's own module_options= is part of its creation, not a change of a loaded module
        direct = [c for c in project.option_changes(file) if c.form is not OptionForm.KERNEL]
        scopes = {""} | set(file.functions)
        through_calls = project.option_changes_through_calls(file)
        for scope in sorted(scopes):
            # Option-changing statements of this scope: direct, or calls into helpers.
            changes: list[tuple[int, OptionChange, Any]] = [
                (c.ctx.order, c, None) for c in direct if c.ctx.scope == scope
            ]
            changes.extend((call.ctx.order, c, call) for call, c in through_calls.get(scope, ()))
            if not changes:
                continue
            timeline = project.launch_timeline(file, scope)
            if not timeline:
                continue
            changes.sort(key=lambda item: item[0])
            yield from self._ordered(project, file, timeline, changes)

    def _ordered(self, project: Project, file: FileModel, timeline, changes) -> Iterator[Report]:
        seen_values: dict[str, dict[str, Any]] = {}
        reported: set[int] = set()
        for order, change, via in changes:
            if change.module is None or change.ctx.in_finally or (via is not None and via.ctx.in_finally):
                continue  # restoring options in `finally:` after a temporary change is deliberate
            module = project.canonical_module(change.module)
            item = (via or change).ctx.item  # the function of a sequence the statement calls in turn that changes them
            earlier = [(o, m, call, file.path, "") for o, m, call in timeline
                       if call.ctx.runs_before(order, item) and m in (module, "*")]
            if not earlier:
                earlier = self._loaded_elsewhere(project, file, change, via, module)
            previous = seen_values.setdefault(module, {})
            defaults = self._defaults(project)
            values = self._values(project, file, change)
            harmless = values is not None and all(
                previous.get(k, defaults.get(k, object())) == v for k, v in values.items()
            )
            if earlier and earlier[0][4] and values is not None and not harmless:
                # loaded by a test the runner ran first: the module may hold what a change elsewhere gave it
                harmless = all(defaults.get(k) == v or self._maybe_set_elsewhere(project, change, module, k, v)
                               for k, v in values.items())
            if values is not None:
                previous.update(values)
            if not earlier or harmless:
                continue
            rehash: tuple[Related, ...] | None = None
            if change.form is not OptionForm.SET_MODULE_OPTIONS:
                rehash = self._rehashed_after(project, file, order, max(item[0] for item in earlier), module,
                                              changes)
                if rehash is None:
                    continue
            _, _, launch_call, launch_path, runner = earlier[0]
            span = via.span if via is not None else change.span
            if id(span) in reported:
                continue
            reported.add(id(span))
            what = _HOW[change.form]
            first = f"module `{module}` is launched or loaded here first"
            if launch_call.ctx.item:  # by a function of the sequence this statement calls in turn
                first += f", by `{launch_call.callee.rpartition('.')[2]}()`"
            if runner:
                first += f", by `{runner.rpartition('.')[2]}()`, which the test runner runs first"
            related = [Related(launch_path, launch_call.span,
                               f"{first}; the next launch after the change builds the whole module again")]
            if via is not None:
                what = f"`{via.callee.rpartition('.')[2]}()`"
                related.append(Related(change.path, change.span, f"{_HOW[change.form]} changes the options here"))
            if rehash is not None:
                related.extend(rehash)
            yield self.report(
                span,
                f"{what} changes options of module `{module}` after its launch, rebuilding it; set them first",
                related=tuple(related),
                deliberate=_tests_own_it(project, module) if runner else None,
                module=module, option=",".join(sorted(change.values or {})),
            )

    @staticmethod
    def _loaded_elsewhere(project: Project, file: FileModel, change: OptionChange, via: Call | None,
                          module: str) -> list[tuple[int, str, Call, str, str]]:
        """The launch or load of ``module`` that runs before the change from another scope (the layer's
        ``launched_before``: module scope before a function the program calls, a test the runner runs first,
        ``__init__`` before the method called on what it built, a caller before the call that leads here):
        (order, module, launch, its file's path, the test that makes it when the runner runs one first).
        A library's other public function that users *may* call first is no order the project shows."""
        anchor = via if via is not None else next(
            (c for c in file.calls if c.ctx.scope == change.ctx.scope and c.ctx.order == change.ctx.order), None)
        if anchor is None:
            return []
        found = project.launched_before(file, anchor, module)
        if found is None or found.peer is not None:
            return []
        if not found.runner and found.file.path != file.path:
            return []
        if found.through and change.form is OptionForm.SET_MODULE_OPTIONS:
            return []  # reported at the call that leads here, where the caller's timeline orders it
        return [(-1, found.module, found.call, found.file.path, found.runner)]

    @staticmethod
    def _maybe_set_elsewhere(project: Project, change: OptionChange, module: str, key: str, value: Any) -> bool:
        """Another change in the project may give ``module`` this value (or values not known statically): a test
        run after it can find the module with it already, and setting it again moves no hash."""
        return any((other.path, other.span) != (change.path, change.span)
                   and (other.values is None or (key in other.values and other.values[key] == value))
                   for other in project.changes_of_module(module))

    @staticmethod
    def _defaults(project: Project) -> dict[str, Any]:
        """The options a module has before anything sets them: Warp's constant defaults, and the snapshot
        options' config defaults the project never reassigns (re-setting one of these moves no hash)."""
        def compute() -> dict[str, Any]:
            defaults = {k: v for k, v in project.warp.module_option_defaults.items() if v is not None}
            # a project that assigns the config name may have changed what a new module copies
            for name, value in project.warp.snapshot_option_defaults.items():
                if not project.config_assignments(name):
                    defaults[name] = value
            return defaults

        return project.cached(("WC102", "defaults"), compute)

    @staticmethod
    def _values(project: Project, file: FileModel, change: OptionChange) -> dict[str, Any] | None:
        """The option values a change sets: literal, or each item's one value as the evaluator follows it
        (a helper's return, a parameter every caller passes the same constant to), or the one dict every caller
        of a helper passes it; None when one is not known."""
        if change.values is not None or change.options is None:
            return change.values
        owner = file if change.path == file.path else next((f for f in project.files if f.path == change.path), None)
        if owner is None:
            return None
        if change.options.kind != "dict":  # a dict passed in: the one literal every caller passes, if it is one
            known, options = project.constant(owner, change.options, change.ctx.scope)
            if known and isinstance(options, dict) and all(isinstance(k, str) for k in options):
                return options
            return None
        values: dict[str, Any] = {}
        for key, item in change.options.items:
            if not (isinstance(key, Value) and key.kind == "const" and isinstance(key.const, str)):
                return None
            known, value = project.values(owner, item, change.ctx.scope).own_constant()
            if not known:
                return None
            values[key.const] = value
        return values

    @staticmethod
    def _rehashed_after(project: Project, file: FileModel, order: int, loaded: int, module: str,
                        changes) -> tuple[Related, ...] | None:
        """A write into a loaded module's live options dict marks nothing modified: Warp keeps the hash cached
        at the load, and the module builds again only when a registration after that load rehashes it
        (warp-facts §2). Here: a set_module_options() of the module after its last launch before the write
        (``loaded``), or a later launch of a kernel of it that is made again when launched (created at run
        time by a factory that keeps nothing), or a kernel of it made after the write and before a later launch
        (registering it marks the module modified). Where the module builds again; None when nothing rehashes it."""
        for o, c, via in changes:
            if (o > loaded and c.form is OptionForm.SET_MODULE_OPTIONS
                    and c.module is not None and project.canonical_module(c.module) == module):
                where = via.span if via is not None else c.span
                return (Related(file.path, where, "set_module_options() makes the module hash its options again"),)
        scope = next((c.ctx.scope if via is None else via.ctx.scope for o, c, via in changes if o == order), None)
        for launch in project.launches(file):
            if launch.call.ctx.scope != scope or launch.call.ctx.order <= order or launch.module != module:
                continue
            if project.made_again(launch):
                made = f"'{launch.kernel.name}' is made again here: the module builds again with the options"
                return (Related(file.path, launch.call.span, made),)
        registered = project.registered_before_launch(file, scope, order, module) if scope is not None else None
        if registered is not None:
            kernel, made_at, rebuilt_at = registered
            return (Related(file.path, rebuilt_at, "the module builds again here with the options"),
                    Related(file.path, made_at, f"'{kernel.name}' is made here, after the change: registering it "
                            f"marks the module modified"))
        return None


def _tests_own_it(project: Project, module: str) -> str | None:
    """Why a change between tests of ``module`` is deliberate, when the tests own it (every kernel of it has its
    code in test code: the file's kernels, a test package's helper module): such tests test those options (Warp's
    own option and AOT tests). None for any other module."""
    if not project.module_owned_by_tests(module):
        return None
    return f"options of `{module}`, a module the tests own, set between tests"

from __future__ import annotations

import functools
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace

from warplint.diagnostic import Related
from warplint.index import Launch, Project
from warplint.model import FileModel, Kernel
from warplint.rule import Report, Rule
from warplint.semantic.generics import Earlier


class LateGenericInstance(Rule):
    """A generic kernel gets an instance after its module was loaded: the whole module rebuilds.

    ## Why
    A kernel with `Any` parameters (`x: Any`, `wp.array(dtype=Any)`) has no code
    until it has instances, and with none it adds nothing to its module's hash. A launch
    with concrete types, or `wp.overload(kernel, [...])`, adds an instance and marks the
    module modified, so an instance made **after** the module was loaded rebuilds the
    **whole** module (every kernel in it). That happens when:

    - the kernel is launched with a second type signature (the first launch with
      `float64` after a `float32` one), and every further new type again;
    - its first launch comes after a launch of another kernel of its module (or a
      `load_module`/`force_load` of it): the module loaded without it, and its first
      instance rebuilds it. With two such kernels in a module, one of them is late;
    - `wp.overload(kernel, ...)` is called at run time (in a function, say an
      `lru_cache`d getter) after a launch of the module.

    Registering the instances at import, with `wp.overload(kernel, [...])` at module
    level (or `@wp.overload` stubs, or a module-level call of a helper that registers
    them), puts all of them into the module's first build.

    Dropping the object `wp.overload` returns is harmless in Warp 1.19: overloads are
    held strongly by the generic kernel.

    ## Fix
    Right after the kernel, register each type you launch it with:
    `wp.overload(scale, [wp.array(dtype=wp.float32), wp.float32])`, one line per type.

    ## Limits
    Types are the semantic layer's (`warplint.semantic.arg_types`): read only where they
    are visible: arrays created by `wp.array/zeros/ones/empty/full/from_numpy/from_torch(...,
    dtype=...)` (or `*_like` of such an array), scalars built with `wp.float64(...)` etc.,
    and Python `int`/`float` literals, passed through `inputs=[...]`/`outputs=[...]` (or a
    name bound to such a list) of launches the project can resolve. Arguments and `dtype=`
    values are followed through local variables, items of unpacked tuples and of `*args`,
    parameters (per wrapper call), module constants, helper return values and attributes
    of objects whose construction gives them (`h.dtype` of `h = Holder(wp.float64)`, a
    dataclass field); a `dtype=` looked up in a dict literal by a key
    not known before run time (`_WARP_DTYPES[t.dtype]` of a torch-to-Warp table) can be
    any of its values, so a launch with it can make two instances by itself (a table of
    one entry gives one type); a `for` target over a literal tuple of dtypes (or a name bound
    to one) is each of them. An argument that can come from an expression of unknown type
    (an array passed in, a `for` target over what a caller passes) has no type. Arguments whose type is unknown never
    count as different, and launches come in run order as far as the call graph and the test runner show
    it (a launch with a launch of the same kernel before it comes after those with none), then source order.
    The objects `wp.kernel(f)` makes of one module-level function, wherever it is called (each test of
    several files), are one kernel: their launches count together. Any `wp.overload` registration of
    the kernel silences the second-type case, even one made after the first launch, unless it registers on a kernel
    object nothing keeps (`wp.overload(Model(c).kernel, ...)` where the getter makes the kernel
    anew for each new instance: the launches use other objects).

    The first-instance cases need no types. Which launch runs first is approximated by
    source order and the call graph (as for kernels defined in functions): a launch or
    load of the module earlier in the same function (not in the other branch of the same
    `if`), in a caller before the call that leads to the kernel's launch, in a test
    the runner runs first (also before the test that calls the launching helper), or in
    another public function of a library file whose public function leads to the launch:
    a program calls one file's API in an order of its own (a reset, then a measurement),
    so any of them can load the module first. That takes the public functions of one file
    to be used together; public functions of other files (two solvers that each program
    uses one of) are not taken to run first, nor are the functions that lead to the
    launch, nor an object's other methods when its construction makes the instance, nor
    anything before a function whose first run is at import. Where nothing orders them
    otherwise (entry points in two files) it is not reported, though it rebuilds whenever
    another kernel of the module happens to run first. A kernel
    with any `wp.overload` registration is taken to be launched with registered types:
    only its run-time registrations are checked, and when some are made at import, only
    run-time ones that write out a signature not registered at import. A getter (cached
    with `functools.cache`/`lru_cache` or a dict) called at import and again at run time
    is taken to return, at run time, an instance it made at import: a run-time call with a
    type not made at import is missed. Not reported either: the only kernel of
    its module (a `module="unique"` kernel is one), a kernel never launched, kernels
    created inside functions after a load (their creation is already a rebuild, reported
    on its own, and so are the instances their factory registers on them there), except for
    a `wp.overload` of such a kernel made elsewhere at run time (a getter that adds one
    instance per dtype to a kernel a builder made and cached). Kernels a factory makes
    before anything loads (one content, the factory run at import or in setup, several
    kernels made together) are judged like module-level ones. A run-time `wp.overload`
    that raises (inside `assertRaises`, say) is reported all the same.

    Where: one finding at each site that makes a late instance, where the program
    changes: each launch that adds an instance of a new type (not the first launch), each
    late first launch (at the wrapper's call for a launch through a helper), each run-time
    `wp.overload` call. A site that makes late instances of several kernels at once (a wrapper
    that launches one of eight generic kernels, chosen by its arguments) gets one finding of
    each kind naming them all, not one per kernel. Its related locations are the kernel's definition (where the
    `wp.overload` lines go), the launch or load that loaded the module first (and the
    calls that lead there), the first launch, and the other sites.
    """

    code = "WC106"
    name = "late-generic-instance"
    mechanism = "CS-6"
    summary = "A generic kernel gets a new instance after its module loaded, so the whole module rebuilds."
    confidence = "high"

    invalid = (
        "import warp as wp\nfrom typing import Any\n\n@wp.kernel\ndef scale(x: wp.array(dtype=Any), s: Any):\n"
        "    i = wp.tid()\n    x[i] = x[i] * s\n\n"
        "def run(n):\n    a = wp.zeros(n, dtype=wp.float32)\n    wp.launch(scale, dim=n, inputs=[a, 2.0])\n"
        "    b = wp.zeros(n, dtype=wp.float64)\n    wp.launch(scale, dim=n, inputs=[b, wp.float64(2.0)])\n",
        "import warp as wp\nfrom typing import Any\n\n"
        "@wp.kernel\ndef total(x: wp.array(dtype=Any), out: wp.array(dtype=Any)):\n"
        "    wp.atomic_add(out, 0, x[wp.tid()])\n\n"
        "@wp.kernel\ndef clear(x: wp.array(dtype=float)):\n    x[wp.tid()] = 0.0\n\n"
        "def run(x, out):\n    wp.launch(clear, dim=1, inputs=[out])\n"
        "    wp.launch(total, dim=x.shape[0], inputs=[x, out])\n",
        "import functools\nimport warp as wp\nfrom typing import Any\n\n"
        "@wp.kernel\ndef scale(x: wp.array(dtype=Any), s: Any):\n    x[wp.tid()] = x[wp.tid()] * s\n\n"
        "@wp.kernel\ndef clear(x: wp.array(dtype=float)):\n    x[wp.tid()] = 0.0\n\n"
        "@functools.cache\ndef scale_for(dtype):\n    return wp.overload(scale, [wp.array(dtype=dtype), dtype])\n\n"
        "def run(x, y):\n    wp.launch(clear, dim=1, inputs=[x])\n"
        "    wp.launch(scale_for(y.dtype), dim=y.shape[0], inputs=[y, 2.0])\n",
    )
    valid = (
        "import warp as wp\nfrom typing import Any\n\n@wp.kernel\ndef scale(x: wp.array(dtype=Any), s: Any):\n"
        "    i = wp.tid()\n    x[i] = x[i] * s\n\n"
        "wp.overload(scale, [wp.array(dtype=wp.float32), wp.float32])\n"
        "wp.overload(scale, [wp.array(dtype=wp.float64), wp.float64])\n\n"
        "def run(n):\n    a = wp.zeros(n, dtype=wp.float32)\n    wp.launch(scale, dim=n, inputs=[a, 2.0])\n"
        "    b = wp.zeros(n, dtype=wp.float64)\n    wp.launch(scale, dim=n, inputs=[b, wp.float64(2.0)])\n",
        "import warp as wp\nfrom typing import Any\n\n"
        "@wp.kernel\ndef total(x: wp.array(dtype=Any), out: wp.array(dtype=Any)):\n"
        "    wp.atomic_add(out, 0, x[wp.tid()])\n\n"
        "@wp.kernel\ndef clear(x: wp.array(dtype=float)):\n    x[wp.tid()] = 0.0\n\n"
        "def run(x, out):\n    wp.launch(total, dim=x.shape[0], inputs=[x, out])\n"
        "    wp.launch(clear, dim=1, inputs=[out])\n",
    )

    @staticmethod
    def _signature(project: Project, launch: Launch, generic_positions: list[int]) -> dict[int, str]:
        """The one type each generic argument of a launch has, where it has exactly one."""
        types = project.launch_argument_types(launch) or []
        return {p: kind for p in generic_positions if p < len(types) and (kind := types[p].one) is not None}

    # ------------------------------------------------------------------ check
    def check_project(self, project: Project) -> Iterator[tuple[FileModel, Report]]:
        """Each finding at the launch or ``wp.overload`` call that makes the late instance (where the user
        changes the program), one per site, in whatever file it is; the kernel's definition and the other
        sites are related locations."""
        by_path = {f.path: f for f in project.files}
        # One site can make late instances of several kernels (a getter's `wp.overload(kernel, sig)` where
        # `kernel` is any of the factories' local `_kernel`s; a wrapper that launches one of eight generic
        # kernels): one finding there per kind of instance, naming every kernel and every definition, as the
        # user edits each of them (its wp.overload lines go after it).
        at_site: dict[tuple, _AtSite] = {}
        for file in project.files:
            findings = project.of_file(f"{self.code} kernels", file,
                                       functools.partial(self._findings_from, file, project))
            for kernel, report, triggers, message in findings:
                definition = Related(file.path, kernel.span, f"generic kernel `{kernel.name}` is defined here")
                sites: list[Related] = []
                for site in triggers:
                    if site.path in by_path and not any(_same(site, q) for q in sites):
                        sites.append(site)
                if not sites:
                    yield file, report
                    continue
                for site in sites:
                    here = at_site.setdefault((site.path, site.span, message), _AtSite(
                        by_path[site.path], replace(report, span=site.span), message, [], [], []))
                    if kernel.name not in here.names:
                        here.names.append(kernel.name)
                    _add(here.definitions, [definition])
                    _add(here.others, [r for r in report.related if not _same(r, site)])
        for here in at_site.values():
            # a note at a definition (the why) stays; only a repeat of the definition itself goes
            related = (*here.definitions, *(r for r in here.others if r not in here.definitions))
            data = dict(here.report.data, kernels=tuple(here.names)) if len(here.names) > 1 else here.report.data
            yield here.file, replace(here.report, message=here.message.text(here.names), related=related, data=data)

    def _findings_from(self, file: FileModel, project: Project) -> tuple[tuple[Kernel, Report, tuple[Related, ...],
                                                                            _Message], ...]:
        return tuple(self._kernel_findings(file, project))

    def _kernel_findings(self, file: FileModel, project: Project) -> Iterator[tuple[Kernel, Report,
                                                                                    tuple[Related, ...], _Message]]:
        module_level = [k for k in file.kernels if k.ctx.scope == ""]
        for kernel in file.kernels:
            if not kernel.generic:
                continue
            if kernel.ctx.scope == "" and any(
                k.name == kernel.name and k.ctx.order > kernel.ctx.order for k in module_level
            ):
                continue  # re-defined later in the file: launches by name reach the last definition
            # `wp.kernel(f)` of a function another file defines: its parameters are there
            wrapped = project.wrapped_functions(file, kernel) or ()
            fn = file.functions.get(kernel.function) or (wrapped[0][1] if len(wrapped) == 1 else None)
            if fn is None:
                continue
            typed: _Typed | None = None
            if not any(r.kept for r in project.overload_registrations(file, kernel)):
                generic_positions = [i for i, p in enumerate(fn.params) if p.generic]  # Warp's type_is_generic
                # whether two launches differ in type does not depend on their order (each is compared with
                # every earlier one): the run order, a costly question per launch, is asked only when they do
                if self._new_types(project, project.generic_launches(file, kernel), generic_positions) is not None:
                    typed = self._new_types(project, project.generic_launches_in_run_order(file, kernel),
                                            generic_positions)
            late = self._late_first_instance(project, file, kernel)
            if typed is not None:
                message = _Message("chosen" if typed.chosen else "types")
                yield (kernel, self._report_types(project, file, kernel, typed, message,
                                                  late.related if late else ()),
                       typed.triggers + (late.triggers if late else ()), message)
            elif late is not None:
                yield (kernel, self.report(kernel.span, late.message.text([kernel.name]), related=late.related,
                                           kernel=kernel.name, module=late.module), late.triggers, late.message)

    # ------------------------------------------------------------------ a second type
    def _new_types(self, project: Project, kernel_launches: Sequence[Launch], positions: list[int]) -> _Typed | None:
        """The launches that add an instance of a new type: every launch whose signature no earlier one has,
        after a first one it differs from; and a launch whose argument's type is chosen at run time among
        several (a dtype table). None when there is none."""
        seen: list[tuple[Launch, dict[int, str]]] = []
        pair: tuple[str, str] | None = None
        chosen = False
        related: list[Related] = []
        triggers: list[Related] = []
        for launch in kernel_launches:
            types = project.launch_argument_types(launch) or []
            several = next((types[p] for p in positions if p < len(types) and types[p].several), None)
            if several is not None:
                names = sorted(self._short(n) for n in several.names)
                if pair is None:
                    pair, chosen = (names[0], names[1]), True
                related.append(Related(launch.file.path, launch.call.span,
                                       f"launched with {' or '.join(names)}"))
                triggers.append(related[-1])
                continue
            signature = self._signature(project, launch, positions)
            if not signature:
                continue
            if any(signature == s for _, s in seen):
                seen.append((launch, signature))
                continue
            for earlier, earlier_sig in seen:
                differs = [p for p in signature if p in earlier_sig and earlier_sig[p] != signature[p]]
                if differs:
                    p = differs[0]
                    if pair is None:
                        pair = (self._short(earlier_sig[p]), self._short(signature[p]))
                        related.append(Related(earlier.file.path, earlier.call.span,
                                               f"launched with {self._short(earlier_sig[p])}"))
                    related.append(Related(launch.file.path, launch.call.span,
                                           f"launched with {self._short(signature[p])}"))
                    triggers.append(related[-1])
                    break
            seen.append((launch, signature))
        return _Typed(pair, tuple(related), chosen, tuple(triggers)) if pair is not None else None

    def _report_types(self, project: Project, file: FileModel, kernel: Kernel, typed: _Typed, message: _Message,
                      more: tuple[Related, ...]) -> Report:
        first, second = typed.pair
        related = list(typed.related)
        related += [r for r in more if not any(_same(r, q) for q in related)]
        launched = (f"can be launched with {first} or {second} from one launch" if typed.chosen
                    else f"is launched with {first} and {second}")
        why = Related(file.path, kernel.span, f"it {launched} and no `wp.overload()` of it is seen (none at "
                                              "import, and no run-time one warplint can follow): each new type "
                                              "after the first load rebuilds its whole module")
        return self.report(
            kernel.span,
            message.text([kernel.name]),
            related=(*related, why),
            kernel=kernel.name,
            module=project.kernel_module(file, kernel),
        )

    # ------------------------------------------------------------------ an instance made after the load
    def _late_first_instance(self, project: Project, file: FileModel, kernel: Kernel) -> _Late | None:
        """The first instance of ``kernel`` (its first launch, or a run-time ``wp.overload``) made after its
        module can be loaded: every launch or run-time ``wp.overload`` that does, with what loaded it first."""
        declared = project.kernel_module(file, kernel)
        if declared is None:
            return None
        module = f"unique:{file.module}.{kernel.function or kernel.name}" if declared == "unique" else declared
        key = project.kernel_key(file, kernel)
        registrations = project.overload_registrations(file, kernel)
        if kernel.ctx.scope and not project.stable_kernel(file, kernel):
            # a kernel made by a factory after a load joins its module late anyway (WC101's), with the instances
            # the factory registers on it there; a getter elsewhere registering more of them later is this rule's.
            # One a factory makes before anything loads (with the others it makes together) is an import-time
            # kernel for this rule: nothing else reports its late first instance.
            registrations = [r for r in registrations if r.file is not file or r.call is None
                             or r.call.ctx.scope != kernel.ctx.scope]
            if not registrations:
                return None
        triggers: list[tuple[Earlier, Related]] = []
        inside_wrappers: list[Related] = []  # shown as related, never a finding's site
        if registrations:
            # The launches use the registered types, and so does a run-time registration whose types are not
            # written out when some are registered at import; one that repeats an import-time signature gets
            # the instance Warp has. Any other registration made after a load is late. A getter called both at
            # import and at run time is listed for each: its run-time calls are the ones checked.
            imported = [r for r in registrations if r.at_import]
            signatures = {r.signature for r in imported}
            for registration in registrations:
                call = registration.call
                if call is None or (not registration.at_import and imported and (
                        registration.signature is None or registration.signature in signatures)):
                    continue
                if registration.at_import and any(r.call is call and not r.at_import for r in registrations):
                    continue
                earlier = project.launched_before(registration.file, call, module)
                if earlier is not None:
                    triggers.append((earlier, Related(
                        registration.file.path, call.span, f"`wp.overload()` of `{kernel.name}` called here, after the "
                                                           "load")))
            overload = True
        else:
            overload = False
            repeats: set[int] | None = None  # asked only once a late launch is found: run order is costly
            for origin in project.launch_origins(file, kernel):  # none: never launched, no instance
                f, call, inner = origin.file, origin.call, origin.inner
                earlier = project.launched_before(f, call, module, excluding=key)
                if earlier is not None:
                    if repeats is None:
                        repeats = self._repeated_instances(project, file, kernel)
                    if id(call) in repeats:
                        continue
                    triggers.append((earlier, Related(f.path, call.span,
                                                      f"`{kernel.name}` launched here, after the load")))
                    if inner is not None:  # through a wrapper: the wp.launch it makes, too
                        inside_wrappers.append(Related(inner[0].path, inner[1].span, "the launch inside the wrapper"))
                        triggers.append((earlier, inside_wrappers[-1]))
            # Nothing shown to run first: not reported. Guessing "late unless always first" went wrong on
            # alternative kernels of one library module that each application launches only one of.
        if not triggers:
            return None
        related: list[Related] = []
        for earlier, late in triggers:
            for r in (*self._loaded_first(earlier, self._module_phrase(project, declared, module)), late):
                if not any(_same(r, q) for q in related):
                    related.append(r)
        message = _Message("run-time overload" if overload else "first launch")
        late_sites = [late for _, late in triggers if not any(late is inner for inner in inside_wrappers)]
        return _Late(message, tuple(related), declared, tuple(late_sites))

    def _repeated_instances(self, project: Project, file: FileModel, kernel: Kernel) -> set[int]:
        """The launch calls (ids of their origins) whose instance an earlier launch of the kernel already made:
        the kernel has one content (a factory's results are one kernel to Warp's module hash: identical instances
        collapse), and an earlier launch in run order passed the same type at every generic parameter. Such a
        launch adds nothing, late or not. A function defined twice is left out (`def k` in both branches of an `if`,
        or redefined at module level): the layer takes the launches of either for both, and they differ in content."""
        if not project.one_content(file, kernel) or sum(k.function == kernel.function for k in file.kernels) > 1:
            return set()
        fn = file.functions.get(kernel.function)
        if fn is None:
            return set()
        positions = [i for i, p in enumerate(fn.params) if p.generic]
        launches = project.generic_launches(file, kernel)
        if len(launches) < 2 or not positions:
            return set()
        repeats: set[int] = set()
        seen: list[dict[int, str]] = []
        for launch in project.generic_launches_in_run_order(file, kernel):
            signature = self._signature(project, launch, positions)
            if len(signature) == len(positions) and signature in seen:
                repeats.add(id(launch.origin[1]))
            elif len(signature) == len(positions):
                seen.append(signature)
        return repeats

    @staticmethod
    def _loaded_first(earlier: Earlier, module: str) -> list[Related]:
        """Where ``module`` (a phrase: its name and size) loads first, and the calls that lead past it."""
        first = f"{module} launched here first"
        if earlier.kernel is None:
            first = f"{module} loaded here first"
        if earlier.runner:
            first += f" (the test runner runs `{earlier.runner.rpartition('.')[2]}()` first)"
        if earlier.peer is not None:
            peer, entry = earlier.peer
            first += f" by `{peer}()`, which users of the library can call before `{entry}()`"
        first += "; a new instance after that rebuilds the whole module"
        related = [Related(earlier.file.path, earlier.call.span, first)]
        related += [Related(f.path, call.span, f"`{call.callee.rpartition('.')[2]}()` called here, after it")
                    for f, call in earlier.through]
        return related

    @staticmethod
    def _module_phrase(project: Project, declared: str, module: str) -> str:
        if declared == "unique":
            return "its `module=\"unique\"` module"
        count = len(project.kernels_of_module(module))
        return f"module `{module}` ({count} kernel{'s' if count != 1 else ''})"

    @staticmethod
    def _short(kind: str) -> str:
        return kind.replace("warp.", "wp.")


@dataclass(frozen=True)
class _Typed:
    """Launches with a second type: the first two types (for the message), and every launch that adds one."""

    pair: tuple[str, str]
    related: tuple[Related, ...]
    chosen: bool  # the first is one launch whose type is chosen at run time among the pair
    triggers: tuple[Related, ...] = ()  # the launches that add an instance of a new type: where findings go


@dataclass(frozen=True)
class _Late:
    """A first instance made after the load: the message, and every launch or wp.overload that makes one."""

    message: _Message
    related: tuple[Related, ...]
    module: str
    triggers: tuple[Related, ...] = ()  # the late launches and run-time wp.overload calls: where findings go


@dataclass(frozen=True)
class _Message:
    """What a finding says, for one kernel or for several a site makes late instances of at once."""

    kind: str  # "types", "chosen" (two types from one launch), "first launch", "run-time overload"

    def text(self, names: list[str]) -> str:
        many = len(names) > 1
        shown = ", ".join(f"`{n}`" for n in names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
        if self.kind in ("types", "chosen"):
            verb = "can be" if self.kind == "chosen" else ("are" if many else "is")
            return (f"generic kernel{'s' if many else ''} {shown} {verb} launched with two types"
                    f"{' each' if many else ''}, rebuilding {'their' if many else 'its'} module; `wp.overload()` both")
        overload = self.kind == "run-time overload"
        if many:
            what = "run-time `wp.overload()` calls" if overload else "first launches"
            return f"the {what} of generic kernels {shown} here rebuild their loaded module; overload them at import"
        what = "run-time `wp.overload()`" if overload else "first launch"
        return f"the {what} of kernel {shown} rebuilds its loaded module; overload it at import"


@dataclass
class _AtSite:
    """One finding at a site: the kernels it makes late instances of, their definitions, the other notes."""

    file: FileModel
    report: Report
    message: _Message
    names: list[str]
    definitions: list[Related]
    others: list[Related]


def _same(a: Related, b: Related) -> bool:
    return a.path == b.path and a.span == b.span


def _add(into: list[Related], more: list[Related]) -> None:
    """Append the locations of ``more`` that ``into`` does not name yet."""
    into.extend(r for r in more if not any(_same(r, q) for q in into))

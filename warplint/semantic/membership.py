"""Module membership: which kernels land in each Warp module, from any file of the project, with the options
set on it (the variants its launches build are ``builds.module_launch_variants``).

Warp's rule (warp-facts §1): a kernel joins the module named by ``module=``; without it, the module of the
Python file that *defines* the function (``f.__module__``, also for ``wp.kernel(f)`` called elsewhere); with
``module="unique"`` a module of its own. Options reach a module through ``set_module_options`` /
``get_module(m).options`` (every form ``module_options.option_changes`` collects, wherever written), and a
unique kernel's through its own ``module_options=``. A kernel is *stable* when it has one content (created at
import, or by a factory whose content parameters take one value) and is created before anything is launched
or loaded: it could share a module with others at no cost in rebuilds.
"""

from __future__ import annotations

from dataclasses import dataclass

from warplint.model import FileModel, Kernel, Span

from .context import is_test_file
from .events import OptionForm
from .launches import IdentityFacts
from .layer import asked_by_key
from .module_options import option_changes
from .variants import kernel_variants

Member = tuple[FileModel, Kernel]


@dataclass(frozen=True)
class ModuleMembers:
    """A Warp module as the program builds it."""

    module: str  # its name; ``unique:<file module>.<function>`` for a module="unique" kernel's own module
    kernels: tuple[Member, ...]  # every kernel that lands in it, from any file
    options: frozenset[tuple[str, str]] | None  # (key, value) set on it anywhere; None when one is not known
    # the functions that launch its kernels, each with its first launch there: (file path, qualname, the call's
    # span), qualname "" for a file's top level; a launch is made where its origin is (``Launch.origin``: the
    # outermost launch-wrapper call, or the launch itself)
    launched_from: tuple[tuple[str, str, Span], ...]

    @property
    def launched(self) -> bool:
        """Some launch in the project launches one of its kernels."""
        return bool(self.launched_from)


@asked_by_key
def module_members(facts: IdentityFacts, module: str) -> ModuleMembers:
    """The kernels and options of ``module`` (a ``module_identity``); its launch variants are
    ``builds.module_launch_variants`` (where each launch can run is the costliest fact about a module, and
    most questions about one never need it)."""
    def compute() -> ModuleMembers:
        kernels = tuple(_members_by_module(facts).get(module, ()))
        options = _options_by_module(facts)
        known = None if _UNKNOWN in options else options.get(module, frozenset())
        return ModuleMembers(module, kernels, known, _launch_origins(facts).get(module, ()))

    return facts.cached(("module members", module), compute)


def code_files(facts: IdentityFacts, file: FileModel, kernel: Kernel) -> list[FileModel]:
    """The files that hold a kernel's code: its own for a decorated ``def``; for ``wp.kernel(f)`` the files
    where ``f`` can be defined (whichever file calls ``wp.kernel``); its own file when ``f`` is not known."""
    wrapped = facts.wrapped_functions(file, kernel)
    return [file] if wrapped is None else [f for f, _ in wrapped]


def owned_by_tests(facts: IdentityFacts, module: str) -> bool:
    """Every kernel that lands in ``module`` has its code in test code (a test file's own kernels, a test
    package's helper module): the module is the tests' own. A module of library functions the tests wrap in
    ``wp.kernel(f)`` is the library's (Warp puts the kernel in ``f.__module__``), wherever the call is. A module
    none of whose kernels the index knows is the tests' own when it is a test file's: what Warp puts there
    by default is defined in that file."""
    def compute() -> bool:
        members = module_members(facts, module).kernels
        if not members:
            return any(is_test_file(f) and facts.bindings.canonical_module(f.module) == module
                       for f in facts.bindings.files)
        return all(is_test_file(code) for f, k in members for code in code_files(facts, f, k))

    return facts.cached(("owned by tests", module), compute)


def _launch_origins(facts: IdentityFacts) -> dict[str, tuple[tuple[str, str, Span], ...]]:
    def compute() -> dict[str, tuple[tuple[str, str, Span], ...]]:
        table: dict[str, dict[tuple[str, str], Span]] = {}
        for launch in facts.all_launches():
            file, call = launch.origin
            table.setdefault(launch.module, {}).setdefault((file.path, call.ctx.scope), call.span)
        return {module: tuple((path, scope, span) for (path, scope), span in origins.items())
                for module, origins in table.items()}

    return facts.cached("launch origins by module", compute)


def modules(facts: IdentityFacts) -> list[str]:
    """Every module a kernel of the project lands in (``module_identity``), in project order."""
    return list(_members_by_module(facts))


def _members_by_module(facts: IdentityFacts) -> dict[str, list[Member]]:
    def compute() -> dict[str, list[Member]]:
        table: dict[str, list[Member]] = {}
        for f in facts.bindings.files:
            for k in f.kernels:
                module = facts.module_identity(f, k)
                if module is not None:
                    table.setdefault(module, []).append((f, k))
        return table

    return facts.cached("members by module", compute)


_UNKNOWN = "\x00unknown"  # an option change whose module or values are not known: it may reach any module


def _options_by_module(facts: IdentityFacts) -> dict[str, frozenset[tuple[str, str]] | None]:
    """Per module, the literal options set on it anywhere; None for a module given options not known statically
    (and under ``_UNKNOWN`` when a change's target is not known: it may be any module)."""
    def compute() -> dict[str, frozenset[tuple[str, str]] | None]:
        table: dict[str, set[tuple[str, str]] | None] = {}
        for f in facts.bindings.files:
            for change in option_changes(f, facts):
                if change.form is OptionForm.KERNEL and change.kernel is not None:
                    module = facts.module_identity(f, change.kernel)
                else:
                    module = None if change.module is None else facts.bindings.canonical_module(change.module)
                module = _UNKNOWN if module is None else module
                known = table.setdefault(module, set())
                if change.values is None or known is None:
                    table[module] = None
                else:
                    known.update((str(k), repr(v)) for k, v in change.values.items())
        return {m: None if options is None else frozenset(options) for m, options in table.items()}

    return facts.cached("options by module", compute)


def one_content(facts: IdentityFacts, file: FileModel, kernel: Kernel) -> bool:
    """The kernel has one content: created at import, or by a factory whose arguments that reach the content
    (captured values, ``wp.static``, options) are one literal on every call."""
    variants = kernel_variants(facts, file, kernel)
    return variants is None or not (variants.content & variants.varying)


def created_before_loads(facts: IdentityFacts, file: FileModel, kernel: Kernel) -> bool:
    """The kernel is created before anything is launched or loaded: by its file's module-level code (at import,
    or in its ``__main__`` block) before any statement of that code that launches or loads, or in a function
    every call of which runs before any launch or load (``runs_before_launches``). Module-level statements run
    in order, the guard's too: a kernel defined after a module-level launch is made after that load."""
    scope = kernel.ctx.scope
    if facts.launches_or_loads_before(file, scope, kernel.ctx):
        return False  # something launched or loaded earlier in the scope that creates it
    return not scope or facts.runs_before_launches(facts.bindings.fqname(file, scope))


def stable(facts: IdentityFacts, file: FileModel, kernel: Kernel) -> bool:
    """One content, created before any load: sharing a module with other kernels rebuilds nothing."""
    return facts.cached(("stable kernel", id(kernel)),
                        lambda: one_content(facts, file, kernel) and created_before_loads(facts, file, kernel))

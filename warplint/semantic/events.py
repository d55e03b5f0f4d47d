"""Typed events: what a file does to Warp's compilation state, built once per project.

Rules filter these instead of re-reading ``file.calls``/``file.assignments`` for the shapes of
Warp's API: a launch (``Launch``), a kernel created, a module option change
(``OptionChange``), a ``wp.config`` assignment, a cache operation, a load or
preload. Each event carries the statement's ``Context`` (scope, source order, control flow),
so "before/after" and "inside a loop" are the same question for every kind.
"""

from __future__ import annotations

import enum
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from warplint.diagnostic import Span
from warplint.model import Call, Context, FileModel, Kernel, Value

from .values import ValueSet

if TYPE_CHECKING:
    from .evaluator import Site

CACHE_OPERATIONS = ("clear_kernel_cache", "clear_lto_cache")
LAUNCH_CALLS = ("launch", "launch_tiled")
LOAD_CALLS = ("load_module", "force_load")
EMPTY = ValueSet()


def place(file: FileModel, span: Span) -> tuple[str, int, int]:
    """Where a span stands in the project, for a source order across files that does not depend on how
    a file was named (a file checked on its own is named as given, the files indexed with it absolutely)."""
    return os.path.abspath(file.path), span.line, span.col


@dataclass(frozen=True, eq=False)
class RunnerStep:
    """Code a test runner runs before a test's body (``IdentityFacts.runner_steps_before``): an earlier test,
    or a setup it runs first for this test or an earlier one (a pytest fixture, ``setUpClass``, ``setUp``, an
    xunit ``setup_*``). ``scope`` is the function's qualname in ``file``; ``until`` the source order of the
    last statement of it that runs first (a fixture's ``yield``: what follows is its teardown), 0 for all."""

    file: FileModel
    scope: str
    until: int = 0

    def runs_first(self, ctx: Context) -> bool:
        """The statement of ``scope`` at ``ctx`` is in the part that runs first."""
        return not self.until or ctx.order <= self.until


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


@dataclass(frozen=True)
class KernelCreated:
    file: FileModel
    kernel: Kernel

    @property
    def ctx(self) -> Context:
        return self.kernel.ctx


@dataclass(frozen=True)
class ConfigAssignment:
    """``wp.config.<name> = value`` (also through ``setattr(wp.config, "name", value)``). ``site`` is set when
    the value reads parameters of the function the assignment is written in: then ``value`` is what that call
    of the function passes (evaluated at ``site``), and ``origin`` is that call."""

    file: FileModel
    name: str
    value: Value
    span: Span
    ctx: Context
    augmented: bool = False  # ``wp.config.<name> += ...``
    name_span: Span | None = None  # where the name is written (the string of a setattr), when known
    site: Site | None = None

    @property
    def origin(self) -> tuple[FileModel, Span, Context]:
        """Where the assignment is made from: the outermost call of the chain that decides its value, or the
        assignment itself."""
        if self.site is not None:
            outer = self.site.outermost()
            if outer.call is not None:
                return outer.file, outer.call.span, outer.call.ctx
        return self.file, self.span, self.ctx


class OptionForm(enum.Enum):
    """How a module option change is written (warp-facts §2, §3)."""

    SET_MODULE_OPTIONS = "set_module_options()"  # wp.set_module_options(options, module=...)
    UPDATE = "Module.options.update()"  # wp.get_module(m).options.update({...}), get_module_options().update
    ITEM = "Module.options[...]"  # wp.get_module(m).options[key] = value
    KERNEL = "module_options="  # @wp.kernel(module="unique", module_options={...})


@dataclass(frozen=True)
class OptionChange:
    """A change of Warp module options, with the module it targets as Warp resolves it."""

    module: str | None  # target Warp module; None when it cannot be told statically
    values: dict[str, Any] | None  # literal option values, None when not literal
    span: Span
    ctx: Context
    form: OptionForm
    explicit_module: bool  # module= given (False: the module where the call is written)
    path: str = ""  # the file the change is written in
    options: Value | None = None  # the mapping written: set_module_options' options, update's, module_options=
    module_value: Value | None = None  # the module= argument as written
    key: Value | None = None  # the key of an ``options[key] = value`` item
    keywords: tuple[str, ...] = ()  # the keywords of ``options.update(key=value)``
    kernel: Kernel | None = None  # the kernel whose ``module_options=`` this is


@dataclass(frozen=True)
class CacheOperation:
    """``wp.clear_kernel_cache()`` / ``wp.clear_lto_cache()``."""

    file: FileModel
    operation: str
    call: Call

    @property
    def ctx(self) -> Context:
        return self.call.ctx


@dataclass(frozen=True)
class Load:
    """``wp.load_module(...)`` / ``wp.force_load(...)``: ``modules`` as the index resolves them ("*": all)."""

    file: FileModel
    call: Call
    modules: tuple[str, ...]

    @property
    def ctx(self) -> Context:
        return self.call.ctx


@dataclass(frozen=True)
class FileEvents:
    launches: tuple[Launch, ...]
    kernels: tuple[KernelCreated, ...]
    option_changes: tuple[OptionChange, ...]
    config_assignments: tuple[ConfigAssignment, ...]
    cache_operations: tuple[CacheOperation, ...]
    loads: tuple[Load, ...]


def config_assignments_in(file: FileModel) -> list[ConfigAssignment]:
    """The file's own ``wp.config.<name> = ...`` assignments, in source order (a table of its model: ``FileFacts``)."""
    found: list[ConfigAssignment] = []
    for assignment in file.assignments:
        target = assignment.target
        ref = target.ref or ""
        if target.kind == "attr" and ref.startswith("warp.config.") and ref.count(".") == 2:
            found.append(ConfigAssignment(file, ref.rpartition(".")[2], assignment.value, assignment.span,
                                          assignment.ctx, assignment.augmented,
                                          target.span if target.span.line else None))
    return sorted(found, key=lambda e: e.ctx.order)

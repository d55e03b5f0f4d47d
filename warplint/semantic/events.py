"""Typed events: what a file does to Warp's compilation state, built once per project.

Rules filter these instead of re-reading ``file.calls``/``file.assignments`` for the shapes of
Warp's API: a launch (``index.Launch``), a kernel created, a module option change
(``module_options.OptionChange``), a ``wp.config`` assignment, a cache operation, a load or
preload. Each event carries the statement's ``Context`` (scope, source order, control flow),
so "before/after" and "inside a loop" are the same question for every kind.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from warplint.diagnostic import Span
from warplint.model import Call, Context, FileModel, Kernel, Value

if TYPE_CHECKING:
    from warplint.index import Launch, Project
    from warplint.module_options import OptionChange

CACHE_OPERATIONS = ("clear_kernel_cache", "clear_lto_cache")
LOAD_CALLS = ("load_module", "force_load")


@dataclass(frozen=True)
class KernelCreated:
    file: FileModel
    kernel: Kernel

    @property
    def ctx(self) -> Context:
        return self.kernel.ctx


@dataclass(frozen=True)
class ConfigAssignment:
    """``wp.config.<name> = value`` (also through ``setattr(wp.config, "name", value)``)."""

    file: FileModel
    name: str
    value: Value
    span: Span
    ctx: Context


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


def events(project: Project, file: FileModel) -> FileEvents:
    """The events written in ``file`` (memoised per project), each kind in source order."""
    return project.cached(("events", id(file)), lambda: _build(project, file))


def _build(project: Project, file: FileModel) -> FileEvents:
    from warplint.module_options import option_changes

    config: list[ConfigAssignment] = []
    for assignment in file.assignments:
        target = assignment.target
        ref = target.ref or ""
        if target.kind == "attr" and ref.startswith("warp.config.") and ref.count(".") == 2:
            config.append(ConfigAssignment(file, ref.rpartition(".")[2], assignment.value, assignment.span,
                                           assignment.ctx))
    caches = [CacheOperation(file, call.callee.rpartition(".")[2], call)
              for call in project.warp_calls(file, *CACHE_OPERATIONS)]
    loads = [Load(file, call, tuple(project.modules_loaded_by(file, call)))
             for call in project.warp_calls(file, *LOAD_CALLS)]
    return FileEvents(
        launches=tuple(project.launches(file)),
        kernels=tuple(KernelCreated(file, k) for k in file.kernels),
        option_changes=tuple(option_changes(file, project)),
        config_assignments=tuple(sorted(config, key=lambda e: e.ctx.order)),
        cache_operations=tuple(caches),
        loads=tuple(loads),
    )

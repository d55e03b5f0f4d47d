"""The one door rules have into the semantic layer: ``Project``, a thin façade over the built layer.

The layer is built once, in one order (``warplint/semantic/__init__.py`` describes it): the binder's
tables (``Bindings``), the decorated kernels added to the models, the evaluator, then the identity
facts. A rule asks ``project.<fact>(...)``: each fact has one spelling here, and this module holds no
logic of its own. The vocabulary a rule needs to read the answers (``Launch``, ``Device``, the abstract
values) is imported from the module that defines it.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable
from typing import Any, TypeVar

from .model import Assignment, Call, Context, FileModel, Function, Kernel, Span, Value
from .semantic import (
    arg_types,
    builds,
    collect,
    deliberate,
    devices,
    differentiation,
    facts_paths,
    generics,
    membership,
    variants,
)
from .semantic.bindings import Bindings
from .semantic.context import CodeContext, is_test_file
from .semantic.evaluator import Evaluator, Site, Source
from .semantic.events import LAUNCH_CALLS, ConfigAssignment, FileEvents, Launch, OptionChange, RunnerStep, place
from .semantic.file_facts import FileFacts
from .semantic.kernels import add_decorated_kernels
from .semantic.launches import UNIQUE, IdentityFacts
from .semantic.module_options import (
    changes_of_module,
    module_of,
    option_changes,
    option_changes_at,
    option_changes_through_calls,
)
from .semantic.reads import KeptFacts
from .semantic.resolution import CallResolution
from .semantic.values import ValueSet
from .sources import locate_installed as locate_installed  # where it is defined now (the flake8 warm path)
from .warp_version import WarpEnvironment, WarpFacts

__all__ = ["LAUNCH_CALLS", "UNIQUE", "CallResolution", "FileFacts", "KeptFacts", "Launch", "Project", "is_test_file"]

T = TypeVar("T")


class Project:
    """Every fact a rule reads, asked by name; built from the linted files' models."""

    def __init__(
        self,
        files: Iterable[FileModel],
        load_external: Callable[[str], FileModel | None] | None = None,
        warp_environment: WarpEnvironment | None = None,
        runs_as_main: Callable[[str, bool], bool] | None = None,
        file_facts: FileFacts | None = None,
        kept_facts: KeptFacts | None = None,
        call_resolution: CallResolution | None = None,
    ) -> None:
        bindings = Bindings(files, load_external, warp_environment, runs_as_main, file_facts, kept_facts,
                            call_resolution)
        evaluator = Evaluator(bindings)
        add_decorated_kernels(bindings, evaluator)
        self._facts = IdentityFacts(bindings, evaluator)
        # the binder as the layer reads it: in a session that keeps facts across edits, each hand-out is recorded in
        # the computation asking (a file's checks are kept so, and what a rule derives from one file: ``of_file``)
        self._bindings = evaluator.bindings
        self._evaluator = evaluator

    @property
    def files(self) -> list[FileModel]:
        """Every file of the project (read so, a rule's check reads the whole project: it is never kept)."""
        return self._bindings.files

    @property
    def layer(self) -> IdentityFacts:
        """The built layer itself, for the engine and the layer's own tests (rules ask the methods below)."""
        return self._facts

    @property
    def warp(self) -> WarpFacts:
        """The Warp the project runs against: ``warp.config_names``, ``warp.module_options``, ``warp.label``."""
        return self._bindings.warp

    def cached(self, key: Hashable, compute: Callable[[], T]) -> T:
        """``compute()`` once per project, for what a rule derives and asks for again (its memo dies with it)."""
        return self._facts.cached(("rule", key), compute)

    def of_file(self, key: str, file: FileModel, compute: Callable[[], T]) -> T:
        """``compute()``, what a rule derives from ``file`` (its findings that start there, in whatever file they
        land), once per project; in an editor's session kept across edits while what it read holds. ``compute``
        must read the project through this door alone, and ``key`` name what it computes (the rule's code first)."""
        return self._facts.kept(f"rule {key}", file, lambda _layer: compute())

    # ------------------------------------------------------------------ tables (semantic.bindings)
    @staticmethod
    def fqname(file: FileModel, qualname: str) -> str:
        return Bindings.fqname(file, qualname)

    def function(self, fqname: str) -> tuple[FileModel, Function] | None:
        return self._bindings.function(fqname)

    def owner_of(self, ref: str) -> FileModel | None:
        return self._bindings.owner_of(ref)

    def canonical_module(self, name: str) -> str:
        return self._bindings.canonical_module(name)

    def run_name(self, file: FileModel) -> str:
        return self._bindings.run_name(file)

    def is_warp_api(self, ref: str | None) -> bool:
        return self._bindings.is_warp_api(ref)

    def context_of(self, file: FileModel, scope: str = "") -> CodeContext:
        return self._bindings.context_of(file, scope)

    def calls_to(self, file: FileModel, *callees: str) -> list[Call]:
        """The calls in ``file`` of any of ``callees`` (dotted, as resolved), in source order."""
        return self._bindings.calls_to(file, *callees)

    def warp_calls(self, file: FileModel, *names: str) -> list[Call]:
        return self._bindings.warp_calls(file, *names)

    def calls_in(self, file: FileModel, scope: str) -> list[Call]:
        return self._bindings.calls_in(file, scope)

    def callers(self, fqname: str) -> list[tuple[FileModel, Call]]:
        return self._bindings.callers(fqname)

    def call_sites(self, fqname: str) -> list[tuple[FileModel, Call]]:
        return self._bindings.call_sites(fqname)

    def name_assignments(self, file: FileModel, scope: str, name: str) -> tuple[Assignment, ...]:
        return self._bindings.name_assignments(file, scope, name)

    def subscript_assignments(self, file: FileModel, scope: str, name: str) -> list[Assignment]:
        return self._bindings.subscript_assignments(file, scope, name)

    def defines_kernels_at_import(self, module: str) -> str | None:
        return self._bindings.defines_kernels_at_import(module)

    # ------------------------------------------------------------------ values (semantic.evaluator)
    def values(self, file: FileModel, value: Value | None, scope: str = "", site: Site | None = None) -> ValueSet:
        return self._evaluator.values(file, value, scope, site)

    def constant(self, file: FileModel, value: Value | None, scope: str = "", site: Site | None = None
                 ) -> tuple[bool, object]:
        return self._evaluator.constant(file, value, scope, site)

    def module_names(self, file: FileModel, value: Value | None, scope: str = "", site: Site | None = None
                     ) -> tuple[set[str], bool]:
        return self._evaluator.module_names(file, value, scope, site)

    def sources(self, file: FileModel, value: Value | None, scope: str = "", site: Site | None = None,
                accept: Callable[[Source], bool] | None = None) -> list[Source]:
        return self._evaluator.sources(file, value, scope, site, accept)

    def shape_of(self, file: FileModel, value: Value, scope: str) -> str | None:
        return self._evaluator.shape_of(file, value, scope)

    def is_memoized(self, fn: Function) -> bool:
        return self._evaluator.is_memoized(fn)

    def remade_kernel(self, file: FileModel, kernel: Kernel) -> Kernel | None:
        return self._facts.remade_kernel(file, kernel)

    def site(self, file: FileModel, scope: str, call: Call | Value, function: str, parent: Site | None) -> Site:
        return self._evaluator.site(file, scope, call, function, parent)

    def bind(self, fn: Function, name: str, site: Site) -> Any:
        return self._evaluator.bind(fn, name, site)

    # ------------------------------------------------------------------ identity (semantic.launches)
    def kernel_module_names(self, file: FileModel, kernel: Kernel) -> tuple[set[str], bool]:
        """The Warp module names a kernel can join (``"unique"`` among them), and whether that is all of them."""
        return self._evaluator.kernel_modules(file, kernel)

    def kernel_module(self, file: FileModel, kernel: Kernel) -> str | None:
        return self._facts.kernel_module(file, kernel)

    def kernels_of_module(self, module: str) -> list[tuple[FileModel, Kernel]]:
        return self._facts.kernels_of_module(module)

    def module_identity(self, file: FileModel, kernel: Kernel) -> str | None:
        return self._facts.module_identity(file, kernel)

    def defining_modules(self, file: FileModel, kernel: Kernel) -> frozenset[str] | None:
        return self._facts.defining_modules(file, kernel)

    def wrapped_functions(self, file: FileModel, kernel: Kernel) -> list[tuple[FileModel, Function]] | None:
        return self._facts.wrapped_functions(file, kernel)

    def find_kernels(self, file: FileModel, scope: str, value: Value | None, site: Site | None = None
                     ) -> list[tuple[FileModel, Kernel]]:
        return self._facts.find_kernels(file, scope, value, site)

    def find_kernel(self, file: FileModel, scope: str, value: Value | None) -> tuple[FileModel, Kernel] | None:
        return self._facts.find_kernel(file, scope, value)

    def launches(self, file: FileModel) -> list[Launch]:
        return self._facts.launches(file)

    @staticmethod
    def place(file: FileModel, span: Span) -> tuple[str, int, int]:
        """Where a span stands in the project, for a source order across files that does not depend on how
        a file was named (a file checked on its own is named as given, the files indexed with it absolutely)."""
        return place(file, span)

    def all_launches(self) -> list[Launch]:
        return self._facts.all_launches()

    def kernel_launches(self, file: FileModel, kernel: Kernel) -> list[tuple[FileModel, Call]]:
        return self._facts.kernel_launches(file, kernel)

    def launch_block_dim(self, launch: Launch) -> int | None:
        return self._facts.launch_block_dim(launch)

    def launch_timeline(self, file: FileModel, scope: str) -> list[tuple[int, str, Call]]:
        return self._facts.launch_timeline(file, scope)

    def launched_before_call(self, file: FileModel, call: Call) -> list[tuple[str, Call]]:
        return self._facts.launched_before_call(file, call)

    def loaded_between(self, file: FileModel, earlier: Kernel, later: Kernel, module: str) -> bool:
        return self._facts.loaded_between(file, earlier, later, module)

    def modules_launched_by(self, fqname: str) -> dict[str, Call]:
        return self._facts.modules_launched_by(fqname)

    def modules_loaded_by(self, file: FileModel, call: Call) -> list[str]:
        return self._facts.modules_loaded_by(file, call)

    def runs_before_launches(self, fqname: str) -> bool:
        return self._facts.runs_before_launches(fqname)

    def repeats_cached_call(self, file: FileModel, call: Call, fqname: str, before: Call) -> bool:
        return self._facts.repeats_cached_call(file, call, fqname, before)

    def runner_predecessors(self, file: FileModel, scope: str) -> list[str]:
        return self._facts.runner_predecessors(file, scope)

    def tests_run_before(self, file: FileModel, scope: str) -> list[tuple[FileModel, str]]:
        return self._facts.tests_run_before(file, scope)

    def runner_steps_before(self, file: FileModel, scope: str) -> list[RunnerStep]:
        return self._facts.runner_steps_before(file, scope)

    def run_by_test_runner(self, file: FileModel, scope: str) -> bool:
        return self._facts.run_by_test_runner(file, scope)

    def imported_first_by_runner(self, file: FileModel) -> list[FileModel]:
        return self._facts.imported_first_by_runner(file)

    def caller_scopes(self, fqname: str, depth: int = 3) -> list[tuple[FileModel, Call, int]]:
        return self._facts.caller_scopes(fqname, depth)

    def events(self, file: FileModel) -> FileEvents:
        return collect.events(self._facts, file)

    def config_assignments(self, name: str | None = None) -> list[ConfigAssignment]:
        return collect.config_assignments(self._facts, name)

    def environment_writes(self, file: FileModel, variable: str) -> list[tuple[Value, Context, Span]]:
        return collect.environment_writes(self._facts, file, variable)

    def config_assignments_made(self, file: FileModel) -> list[ConfigAssignment]:
        return collect.config_assignments_made(self._facts, file)

    def snapshot_values(self, option: str, file: FileModel, ctx: Context) -> tuple[object, ...] | None:
        return collect.snapshot_values(self._facts, option, file, ctx)

    def option_changes(self, file: FileModel) -> list[OptionChange]:
        return option_changes(file, self._facts)

    def option_changes_at(self, file: FileModel, call: Call) -> list[OptionChange]:
        return option_changes_at(self._facts, file, call)

    def option_changes_through_calls(self, file: FileModel) -> dict[str, list[tuple[Call, OptionChange]]]:
        """scope -> the option changes calls written there make through project functions (scopes with none left
        out)."""
        return option_changes_through_calls(self._facts, file)

    def changes_of_module(self, module: str) -> list[OptionChange]:
        """Every change of shared options written in the project that may change ``module``'s (those naming it,
        and those whose module is not known)."""
        return changes_of_module(self._facts, module)

    def module_of(self, file: FileModel, value: Value | None, scope: str = "") -> str | None:
        return module_of(self._facts, file, value, scope)

    # ------------------------------------------------------------------ run-time kernels (semantic.variants)
    def kernel_variants(self, file: FileModel, kernel: Kernel) -> variants.Variants | None:
        return variants.kernel_variants(self._facts, file, kernel)

    def contents_across_calls(self, file: FileModel, kernel: Kernel) -> variants.CallContents:
        return variants.contents_across_calls(self._facts, file, kernel)

    def made_again(self, launch: Launch) -> bool:
        return variants.made_again(self._facts, launch)

    def registered_before_launch(self, file: FileModel, scope: str, order: int, module: str
                                 ) -> tuple[Kernel, Span, Span] | None:
        return variants.registered_before_launch(self._facts, file, scope, order, module)

    def kernels_of_module_shape(self, file: FileModel, kernel: Kernel) -> list[tuple[FileModel, Kernel]]:
        return variants.kernels_of_module_shape(self._facts, file, kernel)

    def module_shape_at(self, file: FileModel, scope: str, call: Call | Value, kernel_file: FileModel,
                        kernel: Kernel) -> str | None:
        return variants.module_shape_at(self._facts, file, scope, call, kernel_file, kernel)

    def launched_apart(self, file: FileModel, kernel: Kernel, module: str) -> variants.Apart | None:
        return variants.launched_apart(self._facts, file, kernel, module)

    def made_before_module_launches(self, file: FileModel, kernel: Kernel, module: str) -> bool:
        return variants.made_before_module_launches(self._facts, file, kernel, module)

    def parameter_values(self, file: FileModel, fn: Function, name: str) -> list[tuple[object, FileModel, Call]]:
        return variants.parameter_values(self._facts, file, fn, name)

    # ------------------------------------------------------------------ module membership (semantic.membership)
    def module_members(self, module: str) -> membership.ModuleMembers:
        return membership.module_members(self._facts, module)

    def module_owned_by_tests(self, module: str) -> bool:
        return membership.owned_by_tests(self._facts, module)

    def module_variants(self, module: str) -> frozenset[builds.Variant] | None:
        """(device, block size) the project's launches of ``module`` build; None when one is not known."""
        return builds.module_launch_variants(self._facts, module)

    def modules(self) -> list[str]:
        return membership.modules(self._facts)

    def stable_kernel(self, file: FileModel, kernel: Kernel) -> bool:
        return membership.stable(self._facts, file, kernel)

    def created_before_loads(self, file: FileModel, kernel: Kernel) -> bool:
        return membership.created_before_loads(self._facts, file, kernel)

    def one_content(self, file: FileModel, kernel: Kernel) -> bool:
        return membership.one_content(self._facts, file, kernel)

    # ------------------------------------------------------------------ generic instances (semantic.generics)
    def kernel_key(self, file: FileModel, kernel: Kernel) -> generics.KernelKey:
        """Which kernel this is, across the project: its file and the function it wraps (two factories'
        local ``_kernel``s are two kernels; a re-definition at module level replaces the earlier one;
        ``wp.kernel(f)`` of a module-level function is keyed where ``f`` is defined, wherever it is called)."""
        return generics.kernel_key(self._facts, file, kernel)

    def overload_registrations(self, file: FileModel, kernel: Kernel) -> list[generics.Registration]:
        return generics.registrations(self._facts, file, kernel)

    def kernel_timeline(self, file: FileModel, scope: str) -> list[generics.Event]:
        return generics.kernel_timeline(self._facts, file, scope)

    def launched_before(self, file: FileModel, call: Call, module: str, excluding: generics.KernelKey | None = None
                        ) -> generics.Earlier | None:
        """A launch or load of ``module`` (of any kernel but ``excluding``) that can run before ``call``."""
        return generics.launched_before(self._facts, file, call, module, excluding)

    def generic_launches(self, file: FileModel, kernel: Kernel) -> tuple[Launch, ...]:
        """The launches of a generic kernel (its ``kernel_key``), one per project call of the wrappers that decide
        it, in source order."""
        return generics.generic_launches(self._facts, file, kernel)

    def generic_launches_in_run_order(self, file: FileModel, kernel: Kernel) -> tuple[Launch, ...]:
        """``generic_launches`` in run order as far as the layer shows it: costly (a ``launched_before`` per
        launch), ask it only where the order matters."""
        return generics.generic_launches_in_run_order(self._facts, file, kernel)

    def launch_origins(self, file: FileModel, kernel: Kernel) -> list[generics.LaunchOrigin]:
        """The calls a kernel's launches (its ``kernel_key``'s) are made from, once each, in source order."""
        return generics.launch_origins(self._facts, file, kernel)

    def remade_with_new_types(self, file: FileModel, kernel: Kernel) -> generics.Remade | None:
        return generics.remade_with_new_types(self._facts, file, kernel)

    def runs_at_import(self, file: FileModel, scope: str) -> bool:
        return generics.runs_at_import(self._facts, file, scope)

    def launch_argument_types(self, launch: Launch) -> list[arg_types.Types] | None:
        return arg_types.launch_argument_types(self._facts, launch)

    # ------------------------------------------------------------------ devices and builds (semantic.builds)
    def call_devices(self, file: FileModel, call: Call, absent_means_all: bool = False
                     ) -> frozenset[devices.Device]:
        return devices.call_devices(self._facts, file, call, None, absent_means_all)

    def rebuild_already_forced(self, file: FileModel, kernel: Kernel, module: str) -> bool:
        return builds.rebuild_already_forced(self._facts, file, kernel, module)

    def several_block_dims_in_one_process(self, launches: Iterable[Launch]) -> bool:
        return builds.several_block_dims_in_one_process(self._facts, launches)

    def can_run_on_cuda(self, launch: Launch) -> bool:
        return builds.can_run_on_cuda(self._facts, launch)

    def may_use_cuda(self) -> bool:
        return builds.project_may_use_cuda(self._facts)

    def preload_unused(self, file: FileModel, call: Call, module: str) -> bool:
        return builds.preload_unused(self._facts, file, call, module)

    def joins_built_variant(self, file: FileModel, kernel: Kernel, module: str) -> bool:
        return builds.joins_built_variant(self._facts, file, kernel, module)

    # ------------------------------------------------------------------ backward, tile ops (semantic.differentiation)
    def options_off(self) -> differentiation.OptionsOff:
        return differentiation.options_off(self._facts)

    def false_keys(self, file: FileModel, items: Any, scope: str) -> set[str]:
        return differentiation.false_keys(self._facts, file, items, scope)

    def backward_reached(self, file: FileModel, kernel: Kernel) -> list[tuple[FileModel, Call]]:
        return differentiation.backward_reached(self._facts, file, kernel)

    def unused_backward(self) -> list[differentiation.UnusedBackward]:
        return differentiation.unused_backward(self._facts)

    def kernel_options_off(self, file: FileModel, kernel: Kernel, anywhere: bool = True) -> set[str] | None:
        return differentiation.kernel_options_off(self._facts, file, kernel, anywhere)

    def kernel_options_given(self, file: FileModel, kernel: Kernel) -> set[str]:
        return differentiation.kernel_options_given(self._facts, file, kernel)

    def mathdx_ops(self, file: FileModel, kernel: Kernel) -> frozenset[str]:
        return differentiation.mathdx_ops(self._facts, file, kernel)

    def tile_dtypes(self, file: FileModel, kernel: Kernel) -> frozenset[str] | None:
        return differentiation.tile_dtypes(self._facts, file, kernel)

    def matmul_precisions(self, file: FileModel, kernel: Kernel) -> frozenset[str]:
        return differentiation.matmul_precisions(self._facts, file, kernel)

    # ------------------------------------------------------------------ cache paths (semantic.facts_paths)
    def fresh_dir_reason(self, file: FileModel, value: Value | None, scope: str = "", site: Site | None = None
                         ) -> str | None:
        return facts_paths.fresh_dir_reason(self._facts, file, value, scope, site)

    def fresh_dir_call(self, file: FileModel, value: Value | None, scope: str = "", site: Site | None = None
                       ) -> tuple[FileModel, Span] | None:
        return facts_paths.fresh_dir_call(self._facts, file, value, scope, site)

    def cache_dir_read(self, file: FileModel, value: Value | None, scope: str = "", site: Site | None = None
                       ) -> str | None:
        return facts_paths.cache_dir_read(self._facts, file, value, scope, site)

    # ------------------------------------------------------------------ chosen cache defeats (semantic.deliberate)
    def opt_in(self, file: FileModel, ctx: Context) -> str | None:
        """Why the statement at ``ctx`` runs only when the command line, the environment or a caller asks for it."""
        return deliberate.opt_in(self._facts, file, ctx)

    def cold_start_on_purpose(self, file: FileModel, ctx: Context, setting: str | None = None) -> str | None:
        """Why the cold start written at ``ctx`` is chosen rather than paid by accident (benchmark code, test code
        that runs in no test or sets ``wp.config.<setting>`` back once done, a cold-start measurement)."""
        return deliberate.on_purpose(self._facts, file, ctx, setting)

    def cold_start_measurement(self, file: FileModel, ctx: Context) -> str | None:
        """How the function of the statement at ``ctx`` times the cold build that follows it."""
        return deliberate.cold_start_measurement(self._facts, file, ctx)

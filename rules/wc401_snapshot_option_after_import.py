from __future__ import annotations

from collections.abc import Iterator

from warplint.diagnostic import Related, Span
from warplint.index import Project
from warplint.model import Context, FileModel, Import, Value
from warplint.rule import Report, Rule
from warplint.semantic.events import ConfigAssignment


class SnapshotOptionAfterImport(Rule):
    """A snapshot option is set on `wp.config` after kernels were already created.

    ## Why
    Six options are copied from `wp.config` into a Warp module **when the module is
    created** — at its first `@wp.kernel`, i.e. at import time for module-level
    kernels — and never read again: `enable_backward`, `max_unroll`, `lineinfo`,
    `deterministic`, `deterministic_max_records`, `compile_time_trace` (the last but
    one pair since Warp 1.15; the list is that of the project's Warp). Setting one
    after importing a library (or a project module) that defines kernels at module
    level changes nothing for those modules, silently: their hash does not move, the
    option never arrives (e.g. adjoint code is still generated and compiled with
    `enable_backward = False` set "globally").

    ## Fix
    Set the option first, then import: `import warp as wp`,
    `wp.config.enable_backward = False`, then `import the_library`. Importing `warp`
    itself is fine. For one module, use `wp.set_module_options({...}, module=...)`
    before its first load.

    ## Limits
    The imported module is followed through its module-level imports (project files
    and installed packages, read from disk, never imported); in a test file, the
    module-level imports of the `conftest.py` files above it count too (pytest imports
    them first). Only assignments at
    module scope (including the `if __name__ == "__main__":` block), in an entry
    function named `main` and in tests (pytest and unittest import a test file before
    they run its tests) are reported: inside other functions the assignment often
    targets modules created lazily later, or a library reads `wp.config` again when
    it configures its solvers (newton does), and a toggle that restores the value
    around a step is deliberate (in a test, also one that `tearDown` or a fixture of
    its file restores). Modules the library creates lazily (kernel factories) may
    still see the value: the finding is about those created at import. Setting the
    value the module copied anyway is not reported, since nothing is lost: Warp's default
    of the project's Warp version when nothing else in the project sets the option to
    another value, or what an assignment above the import gave it in the script the
    program runs.
    """

    code = "WC401"
    name = "snapshot-option-after-import"
    mechanism = "CS-10"
    summary = "A wp.config snapshot option is set after a kernel-defining import, so it never reaches those modules."
    confidence = "high"

    invalid = (
        "import warp as wp\nimport kernels_lib\nwp.config.enable_backward = False\n"
        "# file: kernels_lib.py\nimport warp as wp\n@wp.kernel\ndef k(a: wp.array(dtype=float)):\n    a[0] = 1.0\n",
    )
    valid = (
        "import warp as wp\nwp.config.enable_backward = False\nimport kernels_lib\n"
        "# file: kernels_lib.py\nimport warp as wp\n@wp.kernel\ndef k(a: wp.array(dtype=float)):\n    a[0] = 1.0\n",
    )

    def check(self, file: FileModel, project: Project) -> Iterator[Report]:
        warp = project.warp  # which options are snapshots depends on the Warp version
        config = project.events(file).config_assignments
        for option, value, span, ctx in self._snapshot_sets(config, warp.snapshot_options):
            if ctx.scope:
                # a test starts after the runner imported its file: an entry point like main()
                test = project.run_by_test_runner(file, ctx.scope)
                if not (test or self._entry_point(ctx.scope)):
                    continue  # a function may set it on purpose for modules its callees create later
                if self._restored(config, option, ctx, anywhere_in_file=test):
                    continue
            culprit = self._earlier_kernel_source(file, ctx, project)
            if culprit is None:
                continue
            where, defining, site_path, site, creator, created_at = culprit
            held = project.snapshot_values(option, creator, created_at)
            known, assigned = project.constant(file, value, ctx.scope)
            if known and held and all(type(v) is type(assigned) and v == assigned for v in held):
                continue  # the module copied this very value when it was created: nothing is lost
            shown = value.text if value is not None and value.text else "the new value"
            yield self.report(
                span,
                f"`wp.config.{option}` is set after {where} created module `{defining}`; set it before",
                related=(Related(file.path, span, f"`{shown}` does not reach module `{defining}`, which keeps the old "
                                                  f"`{option}` ({warp.label} copies it when the module is created)"),
                         Related(site_path, site, f"module `{defining}` is created here, at import time")),
                option=option, module=defining, warp_version=warp.version,
            )

    @staticmethod
    def _snapshot_sets(config: tuple[ConfigAssignment, ...], snapshot_options: frozenset[str]
                       ) -> Iterator[tuple[str, Value | None, Span, Context]]:
        for a in config:
            if a.name in snapshot_options:
                yield a.name, a.value, a.span, a.ctx

    @staticmethod
    def _entry_point(scope: str) -> bool:
        """`main()` and friends run once at start-up, right after the module-level imports."""
        return scope in ("main", "run_main", "cli", "_main")

    @staticmethod
    def _restored(config: tuple[ConfigAssignment, ...], option: str, ctx: Context, anywhere_in_file: bool) -> bool:
        """Set twice in the same function (set, run, restore): a deliberate toggle. A test's value may be
        restored by another function of its file (`tearDown`, a fixture), which the runner calls around it."""
        return sum(1 for a in config if a.name == option and (anywhere_in_file or a.ctx.scope == ctx.scope)) > 1

    def _earlier_kernel_source(self, file: FileModel, ctx: Context, project: Project
                               ) -> tuple[str, str, str, Span, FileModel, Context] | None:
        """The first import (or own module-level kernel) that creates kernels before ``ctx`` runs: in the file,
        or in a conftest.py pytest imports before it. Also the file and the statement that create the module."""
        events: list[tuple[tuple[int, int], str, str, str, Span, FileModel, Context]] = []
        earlier = project.imported_first_by_runner(file)
        for turn, source in enumerate([*earlier, file]):
            for imp in source.imports:
                if not (self._runs_before(imp.ctx, ctx) if source is file else self._runs_at_import(imp.ctx)):
                    continue
                for module in self._imported_modules(imp):
                    defining = project.defines_kernels_at_import(module)
                    if defining:
                        where = f"`{self._import_text(imp)}`" + ("" if source is file else " in conftest.py")
                        events.append(((turn, imp.ctx.order), where, defining, source.path, imp.span, source,
                                       imp.ctx))
                        break
        if not ctx.scope:
            own = [k for k in file.module_kernels() if k.ctx.order < ctx.order]
            if own:
                events.append(((len(earlier), own[0].ctx.order), f"kernel `{own[0].name}`", file.module, file.path,
                               own[0].span, file, own[0].ctx))
        if not events:
            return None
        return min(events, key=lambda event: event[0])[1:]

    @staticmethod
    def _runs_at_import(imp: Context) -> bool:
        return imp.scope == "" and not imp.conditions and imp.try_index is None

    @staticmethod
    def _runs_before(imp: Context, ctx: Context) -> bool:
        if imp.conditions or imp.try_index is not None:
            return False
        if imp.scope == "":
            # Module-level imports run before anything in a function of the file,
            # and before later module-level statements.
            return bool(ctx.scope) or imp.order < ctx.order
        return imp.scope == ctx.scope and imp.order < ctx.order

    @staticmethod
    def _imported_modules(imp: Import) -> list[str]:
        modules = [imp.module]
        modules += [f"{imp.module}.{name}" for name, _ in imp.names]
        return [m for m in modules if m and not (m == "warp" or m.startswith("warp."))]

    @staticmethod
    def _import_text(imp: Import) -> str:
        if imp.names:
            return f"from {imp.module} import {', '.join(n for n, _ in imp.names)}"
        return f"import {imp.module}"

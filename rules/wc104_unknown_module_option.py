from __future__ import annotations

import difflib
from collections.abc import Iterator

import libcst as cst

from warplint.diagnostic import Fix, Related, Span
from warplint.edits import nearest_name, replace, string_content
from warplint.index import Project, is_test_file
from warplint.model import NO_SPAN, Context, FileModel, Value
from warplint.rule import Report, Rule
from warplint.semantic.events import OptionForm

from ._expected_errors import ExpectedErrorBlocks, inside

# How each form is named in the message.
_WHERE = {
    OptionForm.SET_MODULE_OPTIONS: "`set_module_options()`",
    OptionForm.UPDATE: "`Module.options.update()`",
    OptionForm.ITEM: "`Module.options`",
}


class UnknownModuleOption(Rule):
    """A module option key that Warp does not know (a typo such as `fastmath`).

    ## Why
    `wp.set_module_options`, `wp.get_module(...).options[...]` and
    `.options.update(...)` accept any key without a warning. An unknown key does
    nothing for the code, but every key goes into the module hash, so the module
    gets a new identity (a new build and a new cache entry) while the option you
    meant (`fast_math`) stays off (warp-facts §2, E8). In
    `@wp.kernel(module="unique", module_options={...})` an unknown key raises
    `ValueError` at import instead (since Warp 1.13; before, it is hashed too).

    ## Fix
    Use the valid name (the message suggests the closest one). The valid names are
    those of the `Module` option table of the Warp the project runs against
    (docs/warp-versions.md: `--warp-version`, `[tool.warplint]`, the project's
    virtualenv, ...), read from each release 1.10-1.19; the message names it.

    Automatic fix (safe): when exactly one valid name is a single edit away
    (`max_unrol` -> `max_unroll`, `fastmath` -> `fast_math`), `--fix` rewrites a
    key written as a string literal (in a dict or `options["..."]`) to it. Keys
    passed as `dict(key=...)` and farther typos are left to you.

    ## Limits
    Only constant string keys are checked: dict literals, `dict(key=...)`, and a
    local dict variable built in the same function (`opts = {...}; opts["k"] = v`)
    that is passed to `set_module_options` or `module_options=`. `module_options=`
    inside `with pytest.raises(...)`/`assertRaises(...)` (tests of this very error)
    is not reported. Test code (`test_*.py`, `*_test.py`, `conftest.py`, modules of
    a `tests` package) is skipped: Warp's own tests set arbitrary keys on purpose.
    """

    code = "WC104"
    name = "unknown-module-option"
    mechanism = "CS-3b"
    summary = (
        "An unknown module option key is accepted silently (or raises for module_options) and changes the module hash."
    )
    confidence = "high"

    invalid = (
        "import warp as wp\nwp.set_module_options({'fastmath': True})\n",
        "import warp as wp\nwp.get_module('app.kernels').options['max_unrol'] = 4\n",
    )
    valid = (
        "import warp as wp\nwp.set_module_options({'fast_math': True, 'max_unroll': 4})\n",
    )

    def collect(self) -> cst.CSTVisitor:
        return ExpectedErrorBlocks()

    def check(self, file: FileModel, project: Project) -> Iterator[Report]:
        if is_test_file(file):
            return  # tests set arbitrary keys on purpose to exercise Warp; a typo there builds nothing shipped
        warp = project.warp  # the facts of the Warp the project runs against
        valid = warp.module_options
        seen: set[tuple[int, int, str]] = set()

        def report(key: object, span: Span, ctx_scope: str, where: str, raises: bool = False,
                   literal: Span = NO_SPAN) -> Iterator[Report]:
            if not isinstance(key, str) or key in valid or (span.line, span.col, key) in seen:
                return
            seen.add((span.line, span.col, key))
            close = difflib.get_close_matches(key, sorted(valid), n=1, cutoff=0.6)
            hint = f"did you mean `{close[0]}`?" if close else "remove it or use a module option"
            fails = raises and warp.module_options_validated
            effect = (
                "`module_options=` raises ValueError for it at import"
                if fails
                else "Warp accepts it silently and hashes it, so the module gets a new identity while nothing changes"
            )
            notes = [Related(file.path, span, f"in {where}: {effect}")]
            if not close:
                notes.append(Related(file.path, span, "the module options of "
                                     f"{warp.label}: {', '.join(f'`{name}`' for name in sorted(valid))}"))
            yield self.report(
                span,
                f"`{key}` is not a module option in {warp.label}{' (a ValueError at import)' if fails else ''}; "
                f"{hint}",
                related=tuple(notes),
                fix=self._fix(key, literal, valid),
                function=ctx_scope,
                option=key,
                warp_version=warp.version,
            )

        expected_errors = file.rule_facts.get(self.code) or ()
        for change in project.option_changes(file):
            scope = change.ctx.scope
            if change.form is OptionForm.KERNEL and change.kernel is not None:
                kernel = change.kernel
                if inside(expected_errors, kernel.span.line):
                    continue
                options = change.options
                where = options.span if options is not None and options.span.line else kernel.span
                for key, span, literal in self._keys(project, file, options, change.ctx, where):
                    yield from report(key, span, scope, f"`module_options` of kernel `{kernel.name}`", raises=True,
                                      literal=literal)
            elif change.form is OptionForm.ITEM and change.key is not None and change.key.kind == "const":
                yield from report(change.key.const, change.span, scope, _WHERE[change.form], literal=change.key.span)
            elif change.form is not OptionForm.ITEM:
                for key, span, literal in self._keys(project, file, change.options, change.ctx, change.span):
                    yield from report(key, span, scope, _WHERE[change.form], literal=literal)
                for key in change.keywords:
                    yield from report(key, change.span, scope, _WHERE[change.form])

    @staticmethod
    def _fix(key: str, literal: Span, valid: frozenset[str]) -> Fix | None:
        """The key rewritten to the one valid name a single edit away (safe: no other name is as near)."""
        name = nearest_name(key, valid)
        edit = replace(string_content(literal, key), name, expected=key) if name else None
        return Fix(f"Replace `{key}` with `{name}`", (edit,)) if edit is not None else None

    # -- what a value or target is
    def _keys(self, project: Project, file: FileModel, value: Value | None, ctx: Context, span: Span
              ) -> list[tuple[object, Span, Span]]:
        """Constant keys of an options mapping, with the span to report each at and that of the key literal."""
        if value is None:
            return []
        if value.kind == "dict":
            return [(k.const, span, k.span) for k, _ in value.items if isinstance(k, Value) and k.kind == "const"]
        if value.kind == "call" and value.ref == "dict":
            return [(k, span, NO_SPAN) for k in value.kwargs]
        if value.kind == "name" and value.local:
            # the mapping's bindings in this scope (the span of each), then the keys written into it
            found: list[tuple[object, Span, Span]] = []
            for a in project.name_assignments(file, ctx.scope, value.text):
                found += [(k, a.span, at) for k, _, at in self._keys(project, file, a.value, ctx, a.span)]
            for a in project.subscript_assignments(file, ctx.scope, value.text):
                if a.target.key is not None and a.target.key.kind == "const":
                    found.append((a.target.key.const, a.span, a.target.key.span))
            return found
        return []

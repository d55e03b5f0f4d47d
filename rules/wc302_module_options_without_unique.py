from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from warplint.diagnostic import Applicability, Edit, Fix, Related
from warplint.index import UNIQUE, Project
from warplint.model import FileModel, Kernel, Value
from warplint.rule import Report, Rule

from ._expected_errors import ExpectedErrorBlocks, inside


class ModuleOptionsWithoutUnique(Rule):
    """`@wp.kernel(module_options=...)` without `module="unique"` raises at import.

    ## Why
    In Warp 1.19 per-kernel `module_options` are only accepted for a kernel in its
    own module: `@wp.kernel` checks `module != "unique"` right after the type
    check and raises `ValueError: ... module_options requires module="unique". Use
    wp.set_module_options() to set module-level options for a shared module.` This
    holds for the default module, a named module, a `Module` object, and even for
    `module_options={}`. The decorator runs at import time for module-level
    kernels, so the whole module fails to import. Warp releases before 1.13 have no
    `module_options` parameter at all: there the argument is a `TypeError` whatever
    the module, the message says so and no fix is offered (the project's Warp version
    decides, see docs/warp-versions.md).

    ## Fix
    Either add `module="unique"` (the kernel gets a private module carrying those
    options), or drop `module_options=` and set the options on the shared module
    with `wp.set_module_options({...})` (module scope, before the first launch).

    Automatic fix: without `module=`, `--fix` adds `module="unique"` after
    `module_options=...` (safe: the kernel could not be created at all before).
    When a module is named (`module="physics"`), replacing it with `"unique"` is
    unsafe (the kernel leaves the module it shared with others) and is applied
    only with `--unsafe-fixes`.

    ## Limits
    `module=` given as a variable is resolved through constants and parameter
    defaults; when it cannot be resolved the kernel is not reported.
    `module_options=None` is accepted by Warp and not reported, and neither are
    kernels inside `with pytest.raises(...)` / `with self.assertRaises(...)` (tests
    that check this very error).
    """

    code = "WC302"
    name = "module-options-without-unique"
    mechanism = "CS-9"
    summary = "`module_options=` on a kernel whose `module` is not \"unique\" is a ValueError at import in Warp 1.19."
    confidence = "high"

    invalid = (
        "import warp as wp\n@wp.kernel(module_options={'fast_math': True})\ndef k(x: wp.array(dtype=float)):\n"
        "    x[0] = 1.0\n",
        "import warp as wp\ndef body(x: wp.array(dtype=float)):\n    x[0] = 1.0\n"
        "k = wp.kernel(body, module='solver', module_options={'max_unroll': 4})\n",
    )
    valid = (
        "import warp as wp\n@wp.kernel(module='unique', module_options={'fast_math': True})\n"
        "def k(x: wp.array(dtype=float)):\n    x[0] = 1.0\n",
    )

    def collect(self) -> cst.CSTVisitor:
        return ExpectedErrorBlocks()

    def check(self, file: FileModel, project: Project) -> Iterator[Report]:
        expected = file.rule_facts.get(self.code, ())
        for kernel in file.kernels:
            if inside(expected, kernel.span.line):
                continue
            options = kernel.options.get("module_options")
            if options is None or (options.kind == "const" and options.const is None):
                continue
            warp = project.warp
            if not warp.kernel_module_options:  # before Warp had the argument: no module makes it work
                yield self.report(
                    options.span if options.span.line else kernel.span,
                    f"`module_options=` on kernel `{kernel.name}` raises TypeError at import in {warp.label}; use "
                    "`wp.set_module_options()`",
                    related=(Related(file.path, options.span if options.span.line else kernel.span,
                                     f"the `@wp.kernel` of {warp.label} takes no `module_options`: set the options "
                                     "on the kernel's module"),),
                    kernel=kernel.name,
                    warp_version=warp.version,
                )
                continue
            if kernel.is_unique:
                continue
            module = project.kernel_module(file, kernel)
            if module is None or module == UNIQUE:
                continue  # module= could not be resolved: it may well be "unique"
            where = "the file's default module" if kernel.module_value is None else f"module `{module}`"
            span = options.span if options.span.line else kernel.span
            yield self.report(
                span,
                f"`module_options=` on kernel `{kernel.name}` raises ValueError at import in {warp.label}; add "
                '`module="unique"`',
                related=(Related(file.path, span, f'the kernel is in {where}, and `module_options=` requires '
                                                  '`module="unique"`; or set the options with '
                                                  "`wp.set_module_options()`"),),
                fix=self._fix(kernel, options),
                kernel=kernel.name,
                module=module,
                warp_version=warp.version,
            )

    @staticmethod
    def _fix(kernel: Kernel, options: Value) -> Fix | None:
        """`module="unique"` added after `module_options=...` (safe: the kernel raised at import, and now
        gets the private module those options need), or put in place of the module named (unsafe: the
        kernel leaves that module)."""
        if kernel.derived or kernel.form not in ("decorator", "call") or not options.span.line:
            return None
        named = kernel.module_value
        if named is None:
            at = options.span
            return Fix('Add module="unique"', (Edit.insert(at.end_line, at.end_col, ', module="unique"'),))
        if not named.span.line:
            return None
        return Fix('Replace the module with module="unique"', (Edit(named.span, '"unique"'),), Applicability.UNSAFE)

from __future__ import annotations

import os
import re
from collections.abc import Iterator

from warplint.diagnostic import Related
from warplint.index import Project
from warplint.model import FileModel, Value
from warplint.rule import Report, Rule
from warplint.semantic.events import OptionForm

# Global switches a library should leave to the application.
_GLOBAL_SWITCHES = {
    "enable_backward": (
        False,
        "turns off backward code for every module created afterwards, the application's and other libraries' "
        "included",
    ),
    "use_precompiled_headers": (
        False,
        "turns off precompiled headers for every module the process builds, so each one compiles slower",
    ),
}
_ENTRY_DIRS = frozenset(
    {"test", "tests", "testing", "example", "examples", "benchmark", "benchmarks", "bench", "script", "scripts",
     "tools", "docs", "doc", "demo", "demos", "notebooks", "tutorials"}
)
_ENTRY_FILE = re.compile(r"^(test_.*|.*_test|conftest|example_.*|benchmark_.*|bench_.*|__main__|setup|noxfile)\.py$")


def is_library_file(file: FileModel) -> bool:
    """A module of an importable package that is not an entry point, a test, an example or a script."""
    if file.has_main_guard or not (file.is_package or "." in file.module):
        return False
    if _ENTRY_FILE.match(os.path.basename(file.path)):
        return False
    # Package parts only: directories above the package root say nothing about the file.
    return not any(p.lower() in _ENTRY_DIRS for p in file.module.split("."))


class GlobalOptionInLibrary(Rule):
    """A library module changes Warp's global options when it is imported.

    ## Why
    `wp.config` is process-wide. `wp.config.enable_backward = False` executed at import
    time of a library is copied into every Warp module created afterwards: the
    application's own modules and every other library's lose their adjoints (so
    `wp.Tape` silently stops producing gradients there), and their hashes change.
    `wp.config.use_precompiled_headers = False` makes every module the process builds
    compile without precompiled headers. `wp.set_module_options(...)` on a module that
    belongs to another package (Warp's own, another library's) changes that module for
    every consumer, and rebuilds it if it already loaded. The decision belongs to the
    program that owns the process.

    ## Fix
    Set these at the application entry point, right after `import warp` and before
    importing the library; or scope them to the library's own modules with
    `wp.set_module_options({"enable_backward": False})` in each kernel file, or
    `@wp.kernel(enable_backward=False)`.

    ## Limits
    Only statements executed at import time are reported: at module level outside
    `if __name__ == "__main__":`, or in a function that module-level code calls while
    the module is imported (a `_configure()` called from the package's `__init__.py`;
    followed a few calls deep). A file counts as library code when it
    belongs to a package (its directory has `__init__.py`), has no `__main__` block, and
    neither it nor a parent directory looks like tests, examples, benchmarks, scripts,
    tools or docs. `set_module_options` is reported only when its `module=` names a
    module (a string, an imported Python module or `wp.get_module(...)`, followed through
    names and constants; one module, not a choice of several) outside the file's
    top-level package.
    """

    code = "WC402"
    name = "global-option-in-library"
    mechanism = "CS-10"
    summary = "Library code changes process-wide Warp options at import time, for every consumer."
    confidence = "high"

    invalid = (
        "# file: mylib/solver.py\nimport warp as wp\nwp.config.enable_backward = False\n"
        "# file: mylib/__init__.py\n",
        "# file: mylib/__init__.py\nimport warp as wp\nwp.config.use_precompiled_headers = False\n",
        "# file: mylib/fast.py\nimport warp as wp\nwp.set_module_options({'fast_math': True}, module='warp.math')\n"
        "# file: mylib/__init__.py\n",
        "# file: mylib/__init__.py\nimport warp as wp\n\ndef _configure():\n    wp.config.enable_backward = False\n\n"
        "_configure()\n",
    )
    valid = (
        "# file: mylib/solver.py\nimport warp as wp\nwp.set_module_options({'enable_backward': False})\n"
        "# file: mylib/__init__.py\n",
        "# file: app.py\nimport warp as wp\nwp.config.enable_backward = False\nimport mylib\n"
        "if __name__ == '__main__':\n    mylib.run()\n",
        "# file: mylib/__init__.py\nimport warp as wp\n\ndef configure():\n    wp.config.enable_backward = False\n",
    )

    def check(self, file: FileModel, project: Project) -> Iterator[Report]:
        if not is_library_file(file):
            return
        for assignment in project.events(file).config_assignments:
            switch = _GLOBAL_SWITCHES.get(assignment.name)
            if assignment.ctx.in_main_guard or assignment.augmented or switch is None:
                continue
            if assignment.ctx.scope and not project.runs_at_import(file, assignment.ctx.scope):
                continue
            bad_value, effect = switch
            found, value = project.constant(file, assignment.value, assignment.ctx.scope)
            if not found or value is not bad_value:
                continue
            option = assignment.name
            yield self.report(
                assignment.span,
                f"library `{file.module}` sets `wp.config.{option} = {value}` at import; leave it to the application",
                related=(Related(file.path, assignment.span, f"it {effect}; the application's entry point can set it "
                                                             "before importing the library"),),
                option=option,
                module=file.module,
            )
        top = file.module.partition(".")[0]
        for change in project.option_changes(file):
            if change.ctx.in_main_guard or change.form is not OptionForm.SET_MODULE_OPTIONS:
                continue
            if change.ctx.scope and not project.runs_at_import(file, change.ctx.scope):
                continue
            target = self._target(project, file, change.module_value, change.ctx.scope)
            if target is None or self._owned(project, top, target):
                continue
            yield self.report(
                change.span,
                f"library `{file.module}` changes the options of module `{target}` at import; leave it to the "
                "application",
                related=(Related(file.path, change.span, "every program importing this library gets them (and a "
                                                         "rebuild if it already loaded); a library sets options only "
                                                         "on its own modules"),),
                module=target,
            )

    @staticmethod
    def _target(project: Project, file: FileModel, value: Value | None, scope: str) -> str | None:
        """The one Warp module ``module=`` names (the evaluator's answer); an imported module outside the
        project, which the evaluator does not model, is the name the import binds."""
        if value is None:
            return None
        names, complete = project.module_names(file, value, scope)
        if names:
            return next(iter(names)) if complete and len(names) == 1 else None
        if value.kind in ("name", "attr") and value.ref and not value.local and project.owner_of(value.ref) is None:
            imported = {imp.module for imp in file.imports} | {
                f"{imp.module}.{name}" for imp in file.imports for name, _ in imp.names
            }
            return value.ref if value.ref in imported else None
        return None

    @staticmethod
    def _owned(project: Project, top: str, target: str) -> bool:
        """The target is this package's: a module under it, or a named module only its files define kernels in."""
        if target == top or target.startswith(top + "."):
            return True
        owners = {f.module for f, _ in project.kernels_of_module(target)}
        return bool(owners) and all(m == top or m.startswith(top + ".") for m in owners)

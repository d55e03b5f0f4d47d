from __future__ import annotations

from collections.abc import Iterator

from warplint.diagnostic import Related
from warplint.index import Project
from warplint.model import Call, FileModel
from warplint.names import is_warp
from warplint.rule import Report, Rule

# Handlers broad enough to catch the RuntimeError load_module raises.
_CATCHES_RUNTIME_ERROR = {"RuntimeError", "Exception", "BaseException", "builtins.RuntimeError", "builtins.Exception"}


class SwallowedLoadError(Rule):
    """A `wp.load_module()` / `wp.force_load()` error is caught and dropped.

    ## Why
    `wp.load_module("app.kernelz")` raises `RuntimeError` when no module of that
    name is registered (a typo, or the library was not imported yet). Wrapped in
    `try: ... except RuntimeError: pass` the preload silently does nothing, and every
    module compiles later, one at a time, on the first launch: the warm-up you meant
    to buy is gone and nobody notices.

    ## Fix
    Let the error propagate, or at least log it (`logger.warning(...)`) or re-raise.
    Handlers that log, re-raise or do real work are not reported.

    ## Limits
    A `load_module()` of a name that kernels of the project land in (a module
    object, `__name__`, a named module) cannot raise, so its dropped error is not
    reported. Only handlers for `RuntimeError`, `Exception`, `BaseException` or bare `except:`
    are considered; a handler counts as swallowing when its body only passes,
    continues, breaks or returns.
    """

    code = "WC502"
    name = "swallowed-load-error"
    mechanism = "CS-13"
    summary = "A preload's RuntimeError is swallowed, hiding a misspelled or not-yet-imported module."
    confidence = "high"

    invalid = (
        "import warp as wp\ntry:\n    wp.load_module('app.kernels')\nexcept RuntimeError:\n    pass\n",
        "import warp as wp\ndef warm(names):\n    for n in names:\n        try:\n            wp.load_module(n)\n"
        "        except Exception:\n            continue\n",
    )
    valid = (
        "import logging\nimport warp as wp\nlog = logging.getLogger(__name__)\n"
        "try:\n    wp.load_module('app.kernels')\n"
        "except RuntimeError as exc:\n    log.warning('preload failed: %s', exc)\n",
    )

    def check(self, file: FileModel, project: Project) -> Iterator[Report]:
        for call in project.warp_calls(file, "load_module", "force_load"):
            if call.ctx.try_index is None or self._names_registered_modules(project, file, call):
                continue
            handlers = file.tries[call.ctx.try_index].handlers
            for handler in handlers:
                broad = not handler.types or any(t in _CATCHES_RUNTIME_ERROR for t in handler.types)
                if broad and handler.action == "swallow":
                    kind = ", ".join(f"`{t}`" for t in handler.types) or "everything"
                    yield self.report(
                        call.span,
                        f"the `{call.callee.rpartition('.')[2]}()` error is caught and dropped; log or re-raise it",
                        related=(Related(file.path, handler.span,
                                         f"the error is caught ({kind}) and dropped here: a misspelled or "
                                         "not-yet-imported module silently skips the preload"),),
                        function=call.ctx.scope,
                    )
                    break

    @staticmethod
    def _names_registered_modules(project: Project, file: FileModel, call: Call) -> bool:
        """load_module() raises only for a name no kernel was registered under: a name that resolves,
        entirely, to modules the project's kernels land in cannot raise, so dropping its error loses nothing."""
        if not is_warp(call.callee, "load_module") or call.has_star_args:
            return False
        target = call.bound("module")
        if target is None or (target.kind == "const" and target.const is None):
            names, complete = {file.module}, True
        else:
            names, complete = project.module_names(file, target, call.ctx.scope)
        return complete and bool(names) and all(
            project.kernels_of_module(project.canonical_module(name)) for name in names)

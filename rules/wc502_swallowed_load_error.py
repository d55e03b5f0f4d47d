from __future__ import annotations

from collections.abc import Iterator

from warplint.diagnostic import Related
from warplint.index import Project
from warplint.model import FileModel
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
    Only handlers for `RuntimeError`, `Exception`, `BaseException` or bare `except:`
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
            if call.ctx.try_index is None:
                continue
            handlers = file.tries[call.ctx.try_index].handlers
            for handler in handlers:
                broad = not handler.types or any(t in _CATCHES_RUNTIME_ERROR for t in handler.types)
                if broad and handler.action == "swallow":
                    kind = ", ".join(handler.types) or "everything"
                    yield self.report(
                        call.span,
                        f"the {call.callee.rpartition('.')[2]}() error is caught ({kind}) and dropped: a misspelled "
                        "or not-yet-imported module silently skips the preload; log or re-raise it.",
                        related=(Related(file.path, handler.span, "the error is dropped here"),),
                        function=call.ctx.scope,
                    )
                    break

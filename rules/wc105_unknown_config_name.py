from __future__ import annotations

import difflib
from collections.abc import Iterator

from warplint.diagnostic import Fix, Related, Span
from warplint.edits import attribute_name, nearest_name, replace, string_content
from warplint.index import Project
from warplint.model import FileModel
from warplint.rule import Report, Rule

_REMOVED = {"verbose", "quiet"}  # deprecated in 1.14, gone in 1.18 (warp_versions_data): log_level replaces both


class UnknownConfigName(Rule):
    """An assignment to a `wp.config` name that does not exist: a silent no-op.

    ## Why
    `warp.config` is a module: assigning an attribute it does not have just creates
    a new, unused attribute, with no warning. `wp.config.verbose` and
    `wp.config.quiet` were removed in 1.18 (1.14 deprecated them in favour of `log_level`);
    `fast_math` and `block_dim` were never config values — they are module options;
    a typo (`enable_backwards`, `max_unrol`) silently leaves the real setting at
    its default. The program runs, and the option you meant never arrives.

    ## Fix
    Use the real name (the message suggests the closest). For `verbose`/`quiet` use
    `wp.config.log_level = wp.LOG_DEBUG` / `wp.LOG_WARNING`. For module options such
    as `fast_math` or `block_dim` use `wp.set_module_options({...}, module=...)`
    (or `module_options=` with `module="unique"`). The valid names are those of
    the Warp the project runs against (`--warp-version`, `warp-version` in
    `[tool.warplint]`, Warp's own tree, the project's virtualenv, warplint's own
    Warp: docs/warp-versions.md), from tables read out of each release 1.10-1.19;
    the message names the version.

    Automatic fix (safe): when exactly one config name is a single edit away
    (`enable_backwards` -> `enable_backward`, `mode_` -> `mode`), `--fix`
    renames the assigned attribute (or the string of `setattr(wp.config, ...)`)
    to it. `verbose`/`quiet` and module options are left to you.

    ## Limits
    Covers `wp.config.X = ...`, `warp.config.X`, `import warp.config as cfg`,
    `from warp import config` and `setattr(wp.config, "X", ...)` with a constant
    name. Code that supports several Warp versions is judged by the one found:
    `wp.config.verbose` is fine for a project on 1.17 and reported on 1.18+, and
    `load_module_max_workers` (new in 1.11) is reported on 1.10.
    """

    code = "WC105"
    name = "unknown-config-name"
    mechanism = "CS-3b"
    summary = "Assigning a `wp.config` name that does not exist (verbose, fast_math, a typo) silently does nothing."
    confidence = "high"

    invalid = (
        "import warp as wp\nwp.config.verbose = True\n",
        "import warp as wp\nwp.config.fast_math = True\n",
    )
    valid = (
        "import warp as wp\nwp.config.log_level = wp.LOG_DEBUG\nwp.set_module_options({'fast_math': True})\n",
    )

    def check(self, file: FileModel, project: Project) -> Iterator[Report]:
        warp = project.warp  # the facts of the Warp the project runs against
        names = warp.config_names
        sites = []
        for a in project.events(file).config_assignments:
            # the name as written: the end of `wp.config.name`, or the literal of setattr(wp.config, "name", v)
            written = (string_content(a.name_span, a.name) if a.name_span is not None
                       else attribute_name(a.span, a.name))
            sites.append((a.name, a.span, a.ctx.scope, written))
        for name, span, scope, written in sites:
            if name in names or name.startswith("__"):
                continue
            advice, why = self._advice(name, names, warp.module_options)
            yield self.report(span, f"`wp.config.{name}` does not exist in {warp.label}; {advice}",
                              fix=self._fix(name, written, names), related=(Related(file.path, span, why),),
                              function=scope, option=name, warp_version=warp.version)

    @staticmethod
    def _fix(name: str, written: Span | None, names: frozenset[str]) -> Fix | None:
        """The name rewritten to the one config name a single edit away (safe: no other is as near)."""
        if name in _REMOVED:
            return None
        nearest = nearest_name(name, frozenset(n for n in names if not n.startswith("_")))
        edit = replace(written, nearest, expected=name) if nearest else None
        return Fix(f"Replace `{name}` with `{nearest}`", (edit,)) if edit is not None else None

    @staticmethod
    def _advice(name: str, names: frozenset[str], module_options: frozenset[str]) -> tuple[str, str]:
        """What to do (the message) and why (a note)."""
        if name in _REMOVED:
            return ("use `wp.config.log_level`",
                    "it was removed and assigning it does nothing; `wp.config.log_level` takes `wp.LOG_DEBUG` or "
                    "`wp.LOG_WARNING`")
        if name in module_options:
            return ("set it with `wp.set_module_options()`",
                    f"assigning it does nothing; `{name}` is a module option: "
                    f"`wp.set_module_options({{'{name}': ...}}, module=...)`")
        close = difflib.get_close_matches(name, sorted(n for n in names if not n.startswith("_")), n=1, cutoff=0.6)
        hint = f"did you mean `{close[0]}`?" if close else "check the name against `warp/config.py`"
        return hint, "assigning it creates an unused attribute and changes nothing"

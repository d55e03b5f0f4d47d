"""Finds the rules: every ``Rule`` subclass defined in a module of ``warplint.rules``.

``rule_table`` lists them without importing one (what selection reads: code, name, whether
default-on or ``--confirm``-only), from a table kept under the cache salt, which covers every
rule's source: the flake8 plugin's warm path selects from it and imports no rule.
"""

from __future__ import annotations

import functools
import importlib
import os
import pkgutil
import sys
from dataclasses import dataclass

from .cache import load_user_entry, registry_salt, rules_salt, store_user_entry
from .rule import Rule


class FileError(Rule):
    """A file that cannot be read, decoded or parsed.

    warplint reports it once and goes on with the other files. Fix the syntax error
    (or exclude the file) so the file's Warp code can be checked.
    """

    code = "WC000"
    name = "file-error"
    mechanism = "-"
    summary = "The file could not be read or parsed, so it was not checked."
    confidence = "high"


class UnusedNoqa(Rule):
    """A `# noqa: WCxxx` that suppresses nothing: no WCxxx finding is reported on its line.

    ## Why

    A suppression outlives the code it was written for: the launch moved, the option was
    fixed, the rule got more precise. The stale comment then hides the next real finding
    on that line, and readers take it for a known problem. ruff's RUF100 does the same for
    its codes.

    The engine reports it (it needs every other rule's findings on the line, before
    suppression), under its own code; it is opt-in: `--extend-select WC001`. The message
    says why each code is unused: *unused* (the rule is enabled and finds nothing there),
    *non-enabled* (the rule is not enabled for this file: not selected, ignored, or
    ignored for the file by `per-file-ignores`), *unknown* (no rule has that code).

    ## Fix

    Remove the code from the comment, or the whole `# noqa: ...` when no code is left.
    The fix (safe) does exactly that and keeps the other codes and any explanation after
    them.

    ## Limits

    Only WC codes are judged: a bare `# noqa`, other tools' codes (`# noqa: E501`) and the
    file-level `# warplint: noqa` are left alone, and so are the `--confirm`-only codes
    (WC9xx), which a static run never reports. A `# noqa` inside a string is not a comment
    and is not reported.
    """

    code = "WC001"
    name = "unused-noqa"
    mechanism = "-"
    summary = "A `# noqa: WCxxx` comment suppresses no finding on its line."
    confidence = "high"
    default_enabled = False

    invalid = ("import warp as wp\n\nwp.load_module('app', device='cpu')  # noqa: WC501\n",)
    valid = (
        "import warp as wp\n\nwp.load_module('app', device='cpu')  # noqa: E501\n",
        "import warp as wp\n\nwp.load_module('app', device='cpu')  # noqa\n",
        "import warp as wp\n\nmessage = 'write # noqa: WC501 to suppress it'\n",
    )


@functools.lru_cache(maxsize=1)
def all_rules() -> dict[str, Rule]:
    """Rule instances by code, sorted by code."""
    import warplint.rules as package

    found: dict[str, Rule] = {FileError.code: FileError(), UnusedNoqa.code: UnusedNoqa()}
    for info in pkgutil.iter_modules(package.__path__):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{package.__name__}.{info.name}")
        for obj in vars(module).values():
            if (
                isinstance(obj, type) and issubclass(obj, Rule) and obj is not Rule
                and obj.__module__ == module.__name__
            ):
                obj.validate()
                if obj.code in found:
                    raise TypeError(f"duplicate rule code {obj.code} in {module.__name__}")
                found[obj.code] = obj()
    return dict(sorted(found.items()))


def get_rule(code: str) -> Rule | None:
    return all_rules().get(code.upper())


def salt_for(rules: dict[str, Rule]) -> str | None:
    """The cache salt for this warplint and rule set; None when it cannot be told (no cache). The registry's
    rules are salted as ``cache.registry_salt`` salts them (every module of ``warplint.rules``: their sources
    decide their codes); another set adds its rules' own source files and its codes."""
    registry = all_rules()
    if rules.keys() == registry.keys() and all(rule is registry[code] for code, rule in rules.items()):
        return registry_salt()
    files = []
    for rule in rules.values():
        module = sys.modules.get(type(rule).__module__)
        path = getattr(module, "__file__", None)
        if not path:
            return None  # a rule without a source file (defined in a REPL): do not cache
        files.append(os.path.abspath(path))
    return rules_salt(files, ",".join(sorted(rules)))


@dataclass(frozen=True)
class RuleInfo:
    """What selection reads of a rule (``Config.enabled_codes``, flake8's narrowing)."""

    code: str
    name: str
    default_enabled: bool
    runtime_only: bool


def rule_table(salt: str) -> dict[str, RuleInfo] | None:
    """The registry's rules by code as ``all_rules`` finds them, when a run under ``salt`` (see
    ``cache.registry_salt``) kept them with ``remember_table``; else None (import them)."""
    data = load_user_entry("rules", salt)
    rows = data.get("rules") if data is not None else None
    if not (isinstance(rows, list) and rows and all(isinstance(r, tuple) and len(r) == 4 for r in rows)):
        return None
    table = {}
    for code, name, default_enabled, runtime_only in rows:
        if not (isinstance(code, str) and isinstance(name, str) and isinstance(default_enabled, bool)
                and isinstance(runtime_only, bool)):
            return None
        table[code] = RuleInfo(code, name, default_enabled, runtime_only)
    return table


def table_of(rules: dict[str, Rule]) -> list[tuple[str, str, bool, bool]]:
    return [(code, rule.name, bool(rule.default_enabled), bool(rule.runtime_only))
            for code, rule in rules.items()]


def selection_table(kept: bool = True) -> dict[str, RuleInfo]:
    """What selection reads of every registry rule: the table a run under this warplint's salt kept, else
    the rules' own (imported, and the table kept for the next run). A run answered from the result cache
    then imports no rule, and with them not LibCST: most of a warm run's time. ``kept=False`` (``--no-cache``)
    neither reads nor writes the kept table."""
    salt = registry_salt() if kept else None
    table = rule_table(salt) if salt is not None else None
    if table is None:
        table = {code: RuleInfo(code, name, default_enabled, runtime_only)
                 for code, name, default_enabled, runtime_only in table_of(all_rules())}
        if salt is not None:
            remember_table(salt)
    return table


def remember_table(salt: str) -> None:
    """Keep ``all_rules()``'s table for ``rule_table`` under ``salt`` (unless it is kept already)."""
    rows = table_of(all_rules())
    data = load_user_entry("rules", salt)
    if data is None or data.get("rules") != rows:
        store_user_entry("rules", salt, {"rules": rows})

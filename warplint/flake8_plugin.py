"""flake8 plugin: warplint's findings as ``WCxxx`` codes next to E/F/W.

A thin adapter over ``warplint.engine.Session``. flake8 imports every installed
plugin at start-up, so this module imports nothing heavy: LibCST, the engine and
the rules are imported on the first file checked.

Selection. flake8 filters what it prints (``--select/--extend-select/--ignore``,
``noqa``); the plugin only avoids running rules whose codes flake8 would drop
anyway. A rule runs when flake8 would report its code and either
``[tool.warplint]`` enables it (the same default set, ``select``, ``ignore`` and
``per-file-ignores`` as the CLI) or flake8's ``--select``/``--extend-select``
names its exact code (how opt-in rules are turned on from flake8).

Cross-file facts. Each file is checked with the files of its project, found as
the CLI finds them (``discovery.ProjectScope``: the config root when it is a
project, else the file's package, else the scripts beside it), so flake8 reports
what ``warplint`` reports for the same file. Findings come from the result cache
the CLI shares (keyed by every file of the project and the config): with nothing
changed since the last run no model is loaded. Otherwise the models are loaded
once per flake8 process (with ``--jobs``, per worker), every file of the project
is checked, and those findings are kept, so the next files -- and the next run --
are answered from the cache.
"""

from __future__ import annotations

import ast
import gc
import os
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, ClassVar

from . import __version__

if TYPE_CHECKING:
    from .engine import Session

# (config root, codes to run) -> the indexed Session and its Project (the index does not change during a run)
_SESSIONS: dict[tuple[str, frozenset[str]], Session] = {}
_CONFIGS: dict[str, Any] = {}  # directory -> Config or the config error message


class WarplintChecker:
    name = "warplint"
    version = __version__

    # flake8's select/ignore, captured by parse_options (None: flake8 was not run
    # through its option machinery, e.g. a direct call in a test -> no narrowing).
    _options: ClassVar[Any] = None

    def __init__(self, tree: ast.AST, filename: str, lines: list[str]) -> None:
        # ``tree`` is what makes flake8 treat this as an AST plugin (run once per
        # file, never on a file Python cannot parse: flake8 reports E999 itself).
        self.filename = filename
        self.lines = lines

    @classmethod
    def add_options(cls, option_manager: Any) -> None:  # nothing of our own; we read flake8's
        return None

    @classmethod
    def parse_options(cls, options: Any) -> None:
        cls._options = options

    def run(self) -> Iterator[tuple[int, int, str, type]]:
        for line, col, code, message in check_file(self.filename, "".join(self.lines)):
            yield line, col, f"{code} {message}", type(self)


# ---------------------------------------------------------------------- engine side
def _config_for(path: str):
    """The Config for ``path``, found as the CLI finds it (``load_config``: the nearest pyproject.toml,
    else the nearest project root, else the file's directory); never the directory flake8 runs in."""
    from .config import ConfigError, load_config
    from .registry import all_rules

    directory = os.path.dirname(path)
    if directory not in _CONFIGS:
        try:
            _CONFIGS[directory] = load_config(directory, set(all_rules()))
        except ConfigError as exc:
            _CONFIGS[directory] = str(exc)
    return _CONFIGS[directory]


def codes_to_run(config: Any, rules: dict, options: Any) -> frozenset[str]:
    """Rule codes worth running under ``config`` and flake8's ``options``."""
    base = config.enabled_codes(rules)
    if options is None:
        return base
    from flake8.style_guide import Decision, DecisionEngine

    engine = DecisionEngine(options)
    named = {c.strip().upper() for c in (*(options.select or ()), *(options.extend_select or ()))}
    chosen = set()
    for code, rule in rules.items():
        if getattr(rule, "runtime_only", False) or code == "WC000":
            continue
        if engine.decision_for(code) is not Decision.Selected:
            continue
        if code in base or code in named:
            chosen.add(code)
    return frozenset(chosen)


def _session_for(config: Any, codes: frozenset[str]) -> Session:
    key = (config.root, codes)
    session = _SESSIONS.get(key)
    if session is None:
        from .engine import Session

        session = Session(config.with_overrides(select=tuple(sorted(codes)), extend_select=(), ignore=()))
        _SESSIONS[key] = session
    return session


def check_file(filename: str, text: str) -> list[tuple[int, int, str, str]]:
    """(line 1-based, column 0-based, code, message) for one file, as the CLI reports them."""
    from .registry import all_rules

    path = os.path.abspath(filename)
    config = _config_for(path)
    if isinstance(config, str):  # a broken [tool.warplint]: say so instead of crashing flake8
        return [(1, 0, "WC000", f"warplint configuration error: {config}")]
    codes = codes_to_run(config, all_rules(), WarplintChecker._options)
    if not codes:
        return []
    session = _session_for(config, codes)
    loaded = bool(session.models)
    # the file as flake8 read it, with its project; every file of the project is checked (and cached) at once
    result = session.lint_paths([], stdin=(path, text), project_context=True, check_context=True)
    if session.models and not loaded:
        # The models stay for this flake8 process: keep the cyclic collector from scanning them again
        # and again (they are acyclic; a collection over them once cost seconds).
        gc.freeze()
    return [(d.span.line, d.span.col, d.code, d.message) for d in result.diagnostics]

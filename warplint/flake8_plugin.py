"""flake8 plugin: warplint's findings as ``WCxxx`` codes next to E/F/W.

A thin adapter over ``warplint.engine.Session``. flake8 imports every installed
plugin at start-up, so this module imports nothing heavy; LibCST, the engine and
the rules are imported only when the result cache cannot answer (``_cached``).

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
once per flake8 process (with ``--jobs``, per worker), and those findings are kept.
Given several files or a directory, every file of the project is checked at once, so
the next files -- and the next runs -- are answered from the cache; given one file
(an editor's run after a save), only that file.

Warm path. The answer from the result cache needs only its key: the config, the
codes to run (selected from ``registry.rule_table``, kept by an earlier run under
the same cache salt, so no rule is imported), the Warp environment and the digests
of the project's files, computed by the functions the engine computes them with
(``sources.read_source``, ``cache.run_key``). A key that differs in any way from
the engine's is a miss, never a wrong answer: the engine then checks as before.
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
# For this process: the cache salt and the rules kept under it (None: import them), the project files'
# (digest or None, error) and the scopes, for the warm path.
_REGISTRY: dict[str, Any] = {}
_DIGESTS: dict[tuple[str, int], tuple[str | None, str | None]] = {}
_SCOPES: dict[str, Any] = {}


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
def _registry() -> tuple[str | None, dict | None]:
    """(cache salt, the rules by code as ``registry.rule_table`` lists them or None), once a process."""
    if not _REGISTRY:
        from .cache import registry_salt
        from .registry import rule_table

        salt = registry_salt()
        _REGISTRY.update(salt=salt, table=rule_table(salt) if salt is not None else None)
    return _REGISTRY["salt"], _REGISTRY["table"]


def _config_for(path: str, known: set[str]):
    """The Config for ``path``, found as the CLI finds it (``load_config``: the nearest pyproject.toml,
    else the nearest project root, else the file's directory); never the directory flake8 runs in."""
    from .config import ConfigError, load_config

    directory = os.path.dirname(path)
    if directory not in _CONFIGS:
        try:
            _CONFIGS[directory] = load_config(directory, known)
        except ConfigError as exc:
            _CONFIGS[directory] = str(exc)
    return _CONFIGS[directory]


def codes_to_run(config: Any, rules: dict, options: Any) -> frozenset[str]:
    """Rule codes worth running under ``config`` and flake8's ``options`` (``rules``: rules or
    ``registry.RuleInfo``s by code)."""
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


def _one_file(options: Any) -> bool:
    """Whether flake8 was asked to check one file (or stdin), not a directory or several."""
    names = getattr(options, "filenames", None)
    return isinstance(names, list) and len(names) == 1 and (names[0] == "-" or os.path.isfile(names[0]))


def _session_config(config: Any, codes: frozenset[str]) -> Any:
    return config.with_overrides(select=tuple(sorted(codes)), extend_select=(), ignore=())


def _session_for(config: Any, codes: frozenset[str]) -> Session:
    key = (config.root, codes)
    session = _SESSIONS.get(key)
    if session is None:
        from .engine import Session

        session = Session(_session_config(config, codes))
        _SESSIONS[key] = session
    return session


def _cached(path: str, text: str, config: Any, codes: frozenset[str], salt: str, table: dict
            ) -> list[tuple[int, int, str, str]] | None:
    """The findings of ``path`` from the result cache, with neither the engine nor a rule nor LibCST
    imported (``warm.WarmPath``): under the key ``Session`` computes for the file checked with its project
    (``_run_key`` over the file as flake8 read it and its ``ProjectScope``). None on a miss."""
    from . import cache
    from .diagnostic import Diagnostic
    from .discovery import ProjectScope
    from .warm import WarmPath

    secret = cache.user_secret()
    if secret is None:
        return None
    settings = _session_config(config, codes)
    scope = _SCOPES.get(settings.root)
    if scope is None:
        scope = _SCOPES[settings.root] = ProjectScope(settings)
    warm = WarmPath(settings, table, salt, secret, scope=scope)
    files: list[tuple[str, str | None, str | None]] = [(path, cache.digest(text), None)]
    seen = {path}
    for absolute in warm.files_for(path):
        if absolute in seen:
            continue
        seen.add(absolute)
        known = _DIGESTS.get((absolute, settings.max_file_size))
        if known is None:
            known = _DIGESTS[(absolute, settings.max_file_size)] = warm.digest_of(absolute)
        files.append((absolute, *known))
    entry = warm.entry(files)
    if entry is None or path not in entry["files"]:
        return None
    _, diagnostics = entry["files"][path]
    return [(d.span.line, d.span.col, d.code, d.message) for d in sorted(diagnostics, key=Diagnostic.sort_key)]


def check_in_daemon(path: str, text: str, codes: frozenset[str], check_context: bool, sessions: Any
                    ) -> list[tuple[int, int, str, str]]:
    """``check_file``'s engine run, in the project's daemon (``daemon_server.Sessions``): the config read again (a
    daemon outlives edits of pyproject.toml), and the session the daemon keeps for it, the CLI's when its runs use
    the same config: the index does not depend on the codes checked, which are flake8's for this run (the result
    cache keys them, ``Session._run_key``)."""
    from .config import load_config
    from .engine import Session
    from .registry import all_rules

    config = load_config(os.path.dirname(path), set(all_rules()))
    session = sessions.session(config, True, lambda: Session(config))
    session.enabled = frozenset(codes)  # (the next run over this session checks its own: ``Session.run_again``)
    result = session.lint_paths([], stdin=(path, text), project_context=True, check_context=check_context)
    return [(d.span.line, d.span.col, d.code, d.message) for d in result.diagnostics]


def check_file(filename: str, text: str) -> list[tuple[int, int, str, str]]:
    """(line 1-based, column 0-based, code, message) for one file, as the CLI reports them."""
    path = os.path.abspath(filename)
    salt, table = _registry()
    if table is None:
        from .registry import all_rules

        rules: dict = all_rules()
    else:
        rules = table
    config = _config_for(path, set(rules))
    if isinstance(config, str):  # a broken [tool.warplint]: say so instead of crashing flake8
        return [(1, 0, "WC000", f"warplint configuration error: {config}")]
    codes = codes_to_run(config, rules, WarplintChecker._options)
    if not codes:
        return []
    if salt is not None and table is not None:
        found = _cached(path, text, config, codes, salt, table)
        if found is not None:
            return found
    if config.daemon:
        from . import daemon

        if not daemon.in_ci():  # (a CI job checks here: it runs once)
            try:
                return daemon.ask_flake8(config.root, path, text, codes, not _one_file(WarplintChecker._options))
            except daemon.Unavailable:
                pass  # checked here, as without the daemon
    session = _session_for(config, codes)
    loaded = bool(session.models)
    enabled = gc.isenabled()
    gc.disable()
    try:
        # The file as flake8 read it, with its project. Given more than one file, flake8 checks every file of
        # the project at once (the next files, and runs on other files, are answered from the cache); given
        # one, only that one: after an edit the next run's key is another anyway (checking the others
        # was 40 % of an edited file's run on newton).
        result = session.lint_paths([], stdin=(path, text), project_context=True,
                                    check_context=not _one_file(WarplintChecker._options))
        if session.models and not loaded:
            # The models stay for this flake8 process: keep the cyclic collector from scanning them again
            # and again (they are acyclic; a collection over them once cost seconds). Frozen before the
            # collector is back: else its first collection scans every object the run made once more.
            gc.freeze()
    finally:
        if enabled:
            gc.enable()
    if salt is not None and table is None:
        from .registry import remember_table

        remember_table(salt)  # the next runs select without importing the rules
    return [(d.span.line, d.span.col, d.code, d.message) for d in result.diagnostics]

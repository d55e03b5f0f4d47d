"""``[tool.warplint]`` in the nearest pyproject.toml, read once per run."""

from __future__ import annotations

import math
import os
import re
import sys
from dataclasses import dataclass, field
from fnmatch import fnmatch
from typing import Any

from .sources import read_regular
from .warp_version import check_requested

CONFIG_FILE_LIMIT = 2**22  # a pyproject.toml larger than this is not one warplint reads

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib


# A release as pip spells one: X.Y or X.Y.Z in ASCII digits without leading zeros, an optional pre-release,
# dev or post suffix. ``check_requested`` alone would take "1.19.0.0", "01.19", " 1.19" or Unicode digits.
_RELEASE = re.compile(r"(?:0|[1-9][0-9]{0,3})(?:\.(?:0|[1-9][0-9]{0,3})){1,2}"
                      r"(?:(?:a|b|rc)(?:0|[1-9][0-9]{0,3}))?(?:\.post(?:0|[1-9][0-9]{0,3}))?(?:\.dev(?:0|[1-9][0-9]{0,3}))?",
                      re.ASCII)


def requested_warp_version(text: object, where: str) -> str:
    """A Warp version asked for (``--warp-version``, ``warp-version``), or ValueError with a one-line reason."""
    if not isinstance(text, str) or not _RELEASE.fullmatch(text):
        raise ValueError(f"{where} must be a Warp version such as \"1.15\" or \"1.15.0\", got {text!r}")
    return check_requested(text, where)


class ConfigError(Exception):
    """A one-line, user-facing configuration problem (exit code 2)."""


KNOWN_KEYS = {
    "select", "ignore", "extend-select", "per-file-ignores", "exclude", "extend-exclude", "confirm", "cache-dir",
    "max-file-size", "file-timeout", "file-memory", "report-deliberate",
    "force-exclude", "warp-version", "rule-url", "src", "daemon",
}
# Bounds on the work one file may cost (see docs/robustness.md): larger files get one WC000.
DEFAULT_MAX_FILE_SIZE = 4 * 1024 * 1024  # bytes
DEFAULT_FILE_TIMEOUT = 60.0  # seconds of parsing + extraction in a worker
DEFAULT_FILE_MEMORY = 4096  # MiB a worker may grow by while it models one file
CONFIRM_KEYS = {"command", "timeout"}
# A directory holding one of these is a project root (the cache and the editor's index live there). pytest's
# own rootdir files count: the tests beside a `pytest.ini` import the code under it (its `pythonpath`, rootdir).
PROJECT_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", ".git", "pytest.ini", "tox.ini")


@dataclass(frozen=True)
class Config:
    root: str  # directory the config was found in (or the working directory)
    source: str | None = None  # the pyproject.toml read, if any
    select: tuple[str, ...] | None = None
    extend_select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    exclude: tuple[str, ...] = ()
    extend_exclude: tuple[str, ...] = ()
    confirm: dict[str, Any] = field(default_factory=dict)
    cache_dir: str | None = None
    max_file_size: int = DEFAULT_MAX_FILE_SIZE
    file_timeout: float = DEFAULT_FILE_TIMEOUT
    file_memory: int = DEFAULT_FILE_MEMORY
    report_deliberate: bool = False  # also report deliberate cold starts (cache clears in tests, benchmarks)
    force_exclude: bool = False  # exclude patterns apply to paths named on the command line too (pre-commit)
    daemon: bool = False  # runs are answered by the project's daemon, which keeps its index (warplint/daemon.py)
    warp_version: str | None = None  # the Warp the project runs against, when given (warplint/warp_version.py)
    warp_version_source: str | None = None  # where it was given: "--warp-version", "warp-version in [tool.warplint]"
    rule_url: str | None = None  # link template for a rule's docs ("{code}", "{name}"); None: no link
    src: tuple[str, ...] = ()  # folders (relative to root) on sys.path when the project runs (warplint/module_names.py)
    # How the program runs, when a front end knows (--confirm's command, and the directory it runs in): module
    # names follow it (`python -m pkg.main` imports through that directory).
    run_command: tuple[str, ...] = ()
    run_cwd: str | None = None

    def with_overrides(self, **changes: Any) -> Config:
        data = {**self.__dict__, **{k: v for k, v in changes.items() if v is not None}}
        return Config(**data)

    # ------------------------------------------------------------------ selection
    def enabled_codes(self, rules: dict) -> frozenset[str]:
        """Codes enabled for every file, before per-file ignores (ruff's order)."""
        selectors = self.select if self.select is not None else ("DEFAULT",)
        enabled: set[str] = set()
        for code, rule in rules.items():
            if getattr(rule, "runtime_only", False):
                continue
            chosen = any(_matches(s, code, rule) for s in (*selectors, *self.extend_select))
            if chosen and not any(_selector_matches(s, code) for s in self.ignore):
                enabled.add(code)
        return frozenset(enabled)

    def ignored_for(self, path: str) -> tuple[str, ...]:
        if not self.per_file_ignores:
            return ()  # (asked of every file checked: a path made relative costs more than the check)
        rel = os.path.relpath(os.path.abspath(path), self.root).replace(os.sep, "/")
        ignored: list[str] = []
        for pattern, codes in self.per_file_ignores:
            if (
                fnmatch(rel, pattern) or fnmatch(os.path.basename(rel), pattern)
                or rel.startswith(pattern.rstrip("/") + "/")
            ):
                ignored.extend(codes)
        return tuple(ignored)


def _selector_matches(selector: str, code: str) -> bool:
    return selector == "ALL" or code.startswith(selector)


def _matches(selector: str, code: str, rule: Any) -> bool:
    if selector == "DEFAULT":
        return rule.default_enabled
    if selector == "ALL" or selector == code:
        return True
    # A prefix (WC, WC1, WC10) selects the default-on rules under it; opt-in rules
    # need their exact code or ALL.
    return code.startswith(selector) and rule.default_enabled


def never_a_project_root(directory: str) -> bool:
    """The home directory and the filesystem root: a marker there (a dotfiles ``~/.git``) makes no
    project of everything below, which warplint would then read in full."""
    directory = os.path.abspath(directory)
    return directory == os.path.dirname(directory) or directory == os.path.abspath(os.path.expanduser("~"))


def find_project_root(start: str) -> str | None:
    """The nearest directory at or above ``start`` that holds a project marker (never the home directory
    or the filesystem root), else None."""
    directory = os.path.abspath(start)
    while True:
        if not never_a_project_root(directory) and any(
                os.path.exists(os.path.join(directory, marker)) for marker in PROJECT_MARKERS):
            return directory
        parent = os.path.dirname(directory)
        if parent == directory:
            return None
        directory = parent


def find_pyproject(start: str) -> str | None:
    """The pyproject.toml that configures ``start``: the nearest one with a ``[tool.warplint]`` table (a
    nested package's own pyproject.toml without one does not hide its parent's settings, as in ruff), else
    the nearest one at all (its directory is the project root, with default settings)."""
    directory = os.path.abspath(start)
    if os.path.isfile(directory):
        directory = os.path.dirname(directory)
    nearest = None
    while True:
        candidate = os.path.join(directory, "pyproject.toml")
        if os.path.isfile(candidate):
            nearest = nearest or candidate
            tool = _read_toml(candidate).get("tool")
            if isinstance(tool, dict) and "warplint" in tool:
                return candidate
        parent = os.path.dirname(directory)
        if parent == directory:
            return nearest
        directory = parent


def _codes(key: str, value: Any, known: set[str]) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"[tool.warplint] '{key}' must be a list of rule codes, got {value!r}")
    return tuple(validate_selectors(key, value, known))


def validate_selectors(key: str, values: list[str], known: set[str]) -> list[str]:
    result = []
    for raw in values:
        sel = raw.strip().upper()
        if sel == "ALL":
            result.append(sel)
            continue
        if not sel.startswith("WC") or not any(code.startswith(sel) for code in known):
            raise ConfigError(f"'{key}': unknown rule selector {raw!r} (see `warplint rule --all`)")
        result.append(sel)
    return result


def _globs(key: str, value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"[tool.warplint] '{key}' must be a list of glob strings, got {value!r}")
    from pathspec.util import lookup_pattern  # (here: a warm run reads no exclude pattern)

    gitignore_pattern = lookup_pattern("gitignore")
    for pattern in value:
        try:
            gitignore_pattern(pattern)
        except ValueError:  # '!', a trailing backslash
            raise ConfigError(f"[tool.warplint] '{key}': invalid pattern {pattern!r}") from None
    return tuple(value)


def _rule_url(value: object) -> str:
    """A ``rule-url`` template: an http(s) or file URL naming the rule by ``{code}`` or ``{name}``."""
    if not isinstance(value, str) or not value.startswith(("https://", "http://", "file://")) \
            or ("{code}" not in value and "{name}" not in value) or any(c.isspace() for c in value):
        raise ConfigError("[tool.warplint] 'rule-url' must be a URL with {code} or {name} in it, such as "
                          f"\"https://example.org/warplint/{{code}}.html\", got {value!r}")
    return value


def _positive(key: str, value: Any, kind: type, most: int = 10**6) -> Any:
    """A finite number > 0 and at most ``most`` (an int where ``kind`` is int)."""
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value > 0
    if not ok or (kind is int and not isinstance(value, int)):
        what = "a positive whole number" if kind is int else "a positive number"
        raise ConfigError(f"[tool.warplint] '{key}' must be {what}, got {value!r}")
    if value > most:  # a size the system cannot index, a time no timer takes
        raise ConfigError(f"[tool.warplint] '{key}' must be at most {most:,}, got {value!r}")
    return kind(value)


def load_config(start: str, known_codes: set[str], explicit: str | None = None) -> Config:
    """Read ``[tool.warplint]`` from ``explicit`` or the nearest pyproject.toml above ``start``."""
    path = explicit or find_pyproject(start)
    if path is None:
        # No pyproject.toml: the nearest project root (setup.py, setup.cfg, .git) is the root, as for
        # the editor and flake8; else the directory started from.
        directory = os.path.abspath(start if os.path.isdir(start) else os.path.dirname(start) or ".")
        return Config(root=find_project_root(directory) or directory)
    document = _read_toml(path)
    tool = document.get("tool", {})
    if not isinstance(tool, dict):
        raise ConfigError(f"{path}: [tool] must be a table")
    section = tool.get("warplint", {})
    if not isinstance(section, dict):
        raise ConfigError(f"{path}: [tool.warplint] must be a table")
    return parse_section(section, _config_root(path), path, known_codes)


def _read_toml(path: str) -> dict:
    try:
        data = read_regular(path, CONFIG_FILE_LIMIT)
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror or exc}") from None
    except ValueError:  # open() refuses a name holding a NUL byte
        raise ConfigError(f"cannot read {path!r}: the name holds a NUL byte") from None
    try:
        return tomllib.loads(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8 (byte {exc.start}); TOML files must be UTF-8") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None
    except RecursionError:  # tomllib recurses once per nested array or inline table
        raise ConfigError(f"{path}: invalid TOML: nested too deeply") from None


def _config_root(path: str) -> str:
    """The config's directory where that is a project; else the working directory's project.

    ``--config /dev/null`` or a shared config outside any project must not put the
    cache (or anchor exclude patterns) next to the config file."""
    directory = os.path.dirname(os.path.abspath(path))
    if os.path.isfile(path) and find_project_root(directory) is not None:
        return directory
    return find_project_root(os.getcwd()) or os.getcwd()


def parse_section(section: dict, root: str, source: str | None, known_codes: set[str]) -> Config:
    unknown = sorted(set(section) - KNOWN_KEYS)
    if unknown:
        raise ConfigError(f"unknown key '{unknown[0]}' in [tool.warplint] ({source})")
    kwargs: dict[str, Any] = {"root": root, "source": source}
    if "select" in section:
        kwargs["select"] = _codes("select", section["select"], known_codes)
    if "extend-select" in section:
        kwargs["extend_select"] = _codes("extend-select", section["extend-select"], known_codes)
    if "ignore" in section:
        kwargs["ignore"] = _codes("ignore", section["ignore"], known_codes)
    if "exclude" in section:
        kwargs["exclude"] = _globs("exclude", section["exclude"])
    if "extend-exclude" in section:
        kwargs["extend_exclude"] = _globs("extend-exclude", section["extend-exclude"])
    if "per-file-ignores" in section:
        pfi = section["per-file-ignores"]
        if not isinstance(pfi, dict):
            raise ConfigError("[tool.warplint] 'per-file-ignores' must be a table of glob = [codes]")
        kwargs["per_file_ignores"] = tuple(
            (glob, _codes(f"per-file-ignores.{glob}", codes, known_codes)) for glob, codes in pfi.items()
        )
    if "cache-dir" in section:
        if not isinstance(section["cache-dir"], str) or "\0" in section["cache-dir"]:
            raise ConfigError("[tool.warplint] 'cache-dir' must be a string (without NUL bytes)")
        kwargs["cache_dir"] = section["cache-dir"]
    for key, attribute, kind, most in (("max-file-size", "max_file_size", int, 2**40),  # bytes
                                       ("file-timeout", "file_timeout", float, 10**6),  # seconds
                                       ("file-memory", "file_memory", int, 2**30)):  # MiB
        if key in section:
            kwargs[attribute] = _positive(key, section[key], kind, most)
    if "force-exclude" in section:
        if not isinstance(section["force-exclude"], bool):
            raise ConfigError("[tool.warplint] 'force-exclude' must be true or false, got "
                              f"{section['force-exclude']!r}")
        kwargs["force_exclude"] = section["force-exclude"]
    if "daemon" in section:
        if not isinstance(section["daemon"], bool):
            raise ConfigError(f"[tool.warplint] 'daemon' must be true or false, got {section['daemon']!r}")
        kwargs["daemon"] = section["daemon"]
    if "report-deliberate" in section:
        if not isinstance(section["report-deliberate"], bool):
            raise ConfigError("[tool.warplint] 'report-deliberate' must be true or false, got "
                              f"{section['report-deliberate']!r}")
        kwargs["report_deliberate"] = section["report-deliberate"]
    if "warp-version" in section:
        try:
            kwargs["warp_version"] = requested_warp_version(section["warp-version"], "[tool.warplint] 'warp-version'")
        except ValueError as exc:
            raise ConfigError(str(exc)) from None
        kwargs["warp_version_source"] = "warp-version in [tool.warplint]"
    if "rule-url" in section:
        kwargs["rule_url"] = _rule_url(section["rule-url"])
    if "src" in section:
        src = section["src"]
        if not isinstance(src, list) or not all(isinstance(r, str) and "\0" not in r for r in src):
            raise ConfigError(f"[tool.warplint] 'src' must be a list of folders, got {src!r}")
        kwargs["src"] = tuple(src)
    if "confirm" in section:
        confirm = section["confirm"]
        if not isinstance(confirm, dict):
            raise ConfigError("[tool.warplint] 'confirm' must be a table")
        bad = sorted(set(confirm) - CONFIRM_KEYS)
        if bad:
            raise ConfigError(f"unknown key 'confirm.{bad[0]}' in [tool.warplint] ({source})")
        command = confirm.get("command")
        if command is not None and not (
            isinstance(command, str) or (isinstance(command, list) and all(isinstance(c, str) for c in command))
        ):
            raise ConfigError("[tool.warplint] 'confirm.command' must be a string or a list of strings")
        timeout = confirm.get("timeout")
        if timeout is not None and (not isinstance(timeout, (int, float)) or isinstance(timeout, bool) or timeout <= 0):
            raise ConfigError("[tool.warplint] 'confirm.timeout' must be a positive number of seconds")
        kwargs["confirm"] = dict(confirm)
    return Config(**kwargs)

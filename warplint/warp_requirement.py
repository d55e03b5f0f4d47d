"""The Warp a project declares it needs: the ``warp-lang`` requirement of its packaging files, read as text.

A project that says ``warp-lang>=1.15`` promises to work on 1.15, so its findings are judged against the
oldest release the requirement allows (``oldest_allowed``). Read, at the project root, in this order (all of
them: a requirement may be split over several files, and every clause must hold):

- ``pyproject.toml``: ``[project] dependencies`` and ``optional-dependencies``; Poetry's
  ``[tool.poetry.dependencies]`` and its groups (``^1.15``, ``~1.15``, ``>=1.15,<2``);
- ``setup.cfg``: ``[options] install_requires`` and ``[options.extras_require]``;
- ``requirements*.txt`` and ``requirements/*.txt``.

Only release versions are understood (PEP 440's ``==``, ``!=``, ``<=``, ``>=``, ``<``, ``>``, ``~=``, ``==X.*``);
a clause this module cannot read is left out and said so, never guessed.
"""

from __future__ import annotations

import configparser
import glob
import os
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass

from .sources import read_regular

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

_LIMIT = 1 << 20  # a packaging file larger than 1 MiB is not one
_NAME = re.compile(r"^\s*warp[-_.]lang\b(?:\s*\[[^\]]*\])?\s*(?P<spec>[^;#]*)", re.I)
_CLAUSE = re.compile(r"^\s*(?P<op>~=|===|==|!=|<=|>=|<|>)\s*(?P<version>\d+(?:\.\d+)*)(?P<star>\.\*)?\s*$")
_POETRY = re.compile(r"^\s*(?P<op>\^|~(?!=))\s*(?P<version>\d+(?:\.\d+)*)\s*$")

Release = tuple[int, int, int]


@dataclass(frozen=True)
class Clause:
    """One comparison of a version specifier: ``>=1.15`` is ``Clause(">=", (1, 15, 0), 2)``."""

    op: str
    version: Release
    precision: int  # how many components were written: ``~=1.15`` (2) and ``~=1.15.0`` (3) differ
    star: bool = False  # ``==1.15.*``

    def allows(self, v: Release) -> bool:
        if self.star or self.op == "~=":
            # ``==1.15.*``: the first `precision` parts equal; ``~=1.15.2``: >= it, and all but its last part equal
            kept = self.precision if self.star else max(self.precision - 1, 1)
            same = v[:kept] == self.version[:kept]
            if self.op == "!=":
                return not same
            return same and (self.star or v >= self.version)
        return {
            "==": v == self.version, "===": v == self.version, "!=": v != self.version,
            "<=": v <= self.version, ">=": v >= self.version, "<": v < self.version, ">": v > self.version,
        }[self.op]


@dataclass(frozen=True)
class Requirement:
    """The ``warp-lang`` requirement of a project: its clauses, and where they were written."""

    clauses: tuple[Clause, ...]
    text: str  # as written, for messages: "warp-lang>=1.15 (pyproject.toml)"

    def allows(self, v: Release) -> bool:
        return all(c.allows(v) for c in self.clauses)

    def oldest_allowed(self) -> Release | None:
        """The oldest release the clauses allow: a lower bound itself, the next patch or minor above an
        exclusive one, or (no lower bound) the oldest release of 1.x; None when nothing is allowed."""
        candidates = {(1, 0, 0)}
        for c in self.clauses:
            major, minor, patch = c.version
            candidates |= {c.version, (major, minor, patch + 1), (major, minor + 1, 0), (major + 1, 0, 0)}
        allowed = sorted(v for v in candidates if self.allows(v))
        return allowed[0] if allowed else None


def _release(text: str) -> tuple[Release, int]:
    """``"1.15"`` -> ((1, 15, 0), 2): the release, and how many of its parts were written."""
    parts = [int(p) for p in text.split(".")]
    padded = [*parts, 0, 0, 0]
    return (padded[0], padded[1], padded[2]), len(parts)


def parse_specifier(spec: str) -> tuple[Clause, ...] | None:
    """``">=1.15, <2"`` -> its clauses; Poetry's ``^1.15``/``~1.15``; ``""`` -> (); unreadable -> None."""
    clauses: list[Clause] = []
    for part in (p for p in spec.replace("(", "").replace(")", "").split(",") if p.strip()):
        pep, poetry = _CLAUSE.match(part), _POETRY.match(part)
        if pep:
            version, precision = _release(pep.group("version"))
            clauses.append(Clause(pep.group("op"), version, precision, bool(pep.group("star"))))
        elif poetry:
            low, precision = _release(poetry.group("version"))
            if poetry.group("op") == "^":  # ^1.15 -> >=1.15,<2 ; ^0.3 -> >=0.3,<0.4
                high = (low[0] + 1, 0, 0) if low[0] else (0, low[1] + 1, 0)
            else:  # ~1.15 -> >=1.15,<1.16 ; ~1 -> >=1,<2
                high = (low[0], low[1] + 1, 0) if precision >= 2 else (low[0] + 1, 0, 0)
            clauses += [Clause(">=", low, precision), Clause("<", high, precision)]
        elif part.strip() in {"*", ""}:
            continue
        else:
            return None
    return tuple(clauses)


def _requirement_strings(root: str) -> Iterator[tuple[str, str]]:
    """(requirement text, file) for every requirement-like string of the project's packaging files."""
    pyproject = _toml(os.path.join(root, "pyproject.toml"))
    project = pyproject.get("project", {}) if isinstance(pyproject.get("project"), dict) else {}
    for item in _strings(project.get("dependencies")):
        yield item, "pyproject.toml"
    extras = project.get("optional-dependencies")
    for group in extras.values() if isinstance(extras, dict) else ():
        for item in _strings(group):
            yield item, "pyproject.toml"
    poetry = pyproject.get("tool", {}).get("poetry", {}) if isinstance(pyproject.get("tool"), dict) else {}
    if isinstance(poetry, dict):
        tables = [poetry.get("dependencies"), poetry.get("dev-dependencies")]
        groups = poetry.get("group")
        tables += [g.get("dependencies") for g in groups.values() if isinstance(g, dict)] \
            if isinstance(groups, dict) else []
        for table in tables:
            for name, value in table.items() if isinstance(table, dict) else ():
                version = value.get("version") if isinstance(value, dict) else value
                if isinstance(version, str):
                    yield f"{name} {version}", "pyproject.toml"
    setup_cfg = _ini(os.path.join(root, "setup.cfg"))
    for section, key in (("options", "install_requires"), ("options.extras_require", None)):
        if setup_cfg.has_section(section):
            values = [setup_cfg.get(section, key, fallback="")] if key else [v for _, v in setup_cfg.items(section)]
            for value in values:
                for line in value.splitlines():
                    yield line, "setup.cfg"
    names = sorted(glob.glob(os.path.join(glob.escape(root), "requirements*.txt")))
    names += sorted(glob.glob(os.path.join(glob.escape(root), "requirements", "*.txt")))
    for path in names:
        for line in _text(path).splitlines():
            yield line, os.path.relpath(path, root)


def declared_requirement(root: str) -> Requirement | None:
    """The project's ``warp-lang`` requirement (all files' clauses together), or None when none is declared
    or none can be read."""
    clauses: list[Clause] = []
    written: list[str] = []
    for text, where in _requirement_strings(root):
        match = _NAME.match(text)
        if not match:
            continue
        parsed = parse_specifier(match.group("spec").strip())
        if parsed is None or not parsed:
            continue
        clauses += parsed
        shown = f"warp-lang{match.group('spec').strip()} in {where}"
        if shown not in written:
            written.append(shown)
    return Requirement(tuple(clauses), "; ".join(written)) if clauses else None


def _text(path: str) -> str:
    try:
        return read_regular(path, _LIMIT).decode("utf-8", errors="replace")
    except OSError:
        return ""


def _toml(path: str) -> dict:
    try:
        data = tomllib.loads(_text(path))
    except (tomllib.TOMLDecodeError, RecursionError):
        return {}
    return data


def _ini(path: str) -> configparser.ConfigParser:
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(_text(path))
    except configparser.Error:
        return configparser.ConfigParser()
    return parser


def _strings(value: object) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []

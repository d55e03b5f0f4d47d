"""Helpers for rule tests: lint snippets and fixture files with inline expectations.

A fixture is a Python file whose offending lines end with a comment naming each expected
finding: its code, its 1-based column (as the text output prints it) and a fragment of its
message in quotes, ``wp.force_load()  # WC501:1 "without modules= builds every"``. Several
findings on one line are separated by commas: ``# WC101:9 "is created when", WC303:5 'at block_dim'``
(single quotes when the fragment holds a double quote). A multi-file fixture is a directory;
every ``.py`` in it is linted as one project and expectations are read from all.
"""

from __future__ import annotations

import os
import re
import tempfile

from .config import Config
from .engine import Session
from .registry import all_rules

_FINDING = r"""WC\d{3}(?::\d+)?(?:\s*(?:"[^"]*"|'[^']*'))?"""
# An expectation comment ends the line: `# WC501:1 "fragment"`, several joined by commas (`expect:` may lead).
EXPECT = re.compile(rf"#\s*(?:expect:\s*)?({_FINDING}(?:\s*,?\s*{_FINDING})*)\s*,?\s*$")
FINDING = re.compile(r"""(WC\d{3})(?::(\d+))?(?:\s*(?:"([^"]*)"|'([^']*)'))?""")
FILE_MARK = re.compile(r"^# file: (\S+)\s*$", re.M)


def split_example(source: str) -> dict[str, str]:
    """Split a rule example into files. Without ``# file:`` marks it is one ``example.py``."""
    marks = list(FILE_MARK.finditer(source))
    if not marks:
        return {"example.py": source}
    files = {}
    head = source[: marks[0].start()]
    if head.strip():
        files["example.py"] = head
    for i, m in enumerate(marks):
        end = marks[i + 1].start() if i + 1 < len(marks) else len(source)
        files[m.group(1)] = source[m.end() + 1 : end]
    return files


def lint_tree(directory: str, select: tuple[str, ...] = ("ALL",)) -> list:
    config = Config(root=directory, select=select)
    session = Session(config, cache=False)  # a test never writes a cache into the tree it lints
    return session.lint_paths([directory]).diagnostics


def write_tree(root: str, files: dict[str, str]) -> str:
    """Write ``files`` (relative path -> text) under ``root``, folders made as needed; ``root`` back."""
    for name, text in files.items():
        path = os.path.join(root, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)
    return root


def project_of(root, files: dict[str, str]):
    """Write ``files`` (relative path -> text) under ``root`` (a ``pathlib.Path``), lint them as one project
    with every rule and no cache, and return the indexed ``Project``: for tests of the layer's facts."""
    write_tree(str(root), files)
    session = Session(Config(root=str(root), select=("ALL",)))
    session.configure_cache(False)
    session.lint_paths([str(root)])
    return session.project()


def lint_example(source: str, code: str) -> list:
    """Diagnostics of ``code`` for the first file of an example, linted in a temp project."""
    files = split_example(source)
    first = next(iter(files))
    with tempfile.TemporaryDirectory() as tmp:
        for name, text in files.items():
            path = os.path.join(tmp, name)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8") as fh:
                fh.write(text)
        found = lint_tree(tmp, (code,))
        target = os.path.join(tmp, first)
        return [d for d in found if os.path.abspath(d.path) == target]


class ExpectationError(ValueError):
    """A fixture expectation without its column or message fragment."""


def expectations(path: str) -> set[tuple[int, str, int, str]]:
    """The expected findings of a fixture file: (line, code, 1-based column, message fragment)."""
    expected = set()
    with open(path, encoding="utf-8") as fh:
        for number, line in enumerate(fh, start=1):
            m = EXPECT.search(line)
            if not m:
                continue
            for item in FINDING.finditer(m.group(1)):
                code, column, fragment = item.group(1), item.group(2), item.group(3) or item.group(4)
                if column is None or not fragment:
                    raise ExpectationError(
                        f"{path}:{number}: `{item.group(0)}` needs its column and a fragment of the message: "
                        f'`# {code}:COLUMN "fragment"`')
                expected.add((number, code, int(column), fragment))
    return expected


def fixture_results(path: str, codes: tuple[str, ...]) -> tuple[set, set]:
    """(expected, actual) sets of (path, line, code, column, fragment) for a fixture file or directory.

    A finding counts as the expectation at its line, code and column whose fragment its message contains;
    a finding that matches none stands with its whole message, so a wrong column or fragment shows up as one
    missing and one unexpected entry."""
    root = path if os.path.isdir(path) else os.path.dirname(path)
    files = (
        [os.path.join(d, f) for d, _, fs in os.walk(path) for f in fs if f.endswith(".py")]
        if os.path.isdir(path)
        else [path]
    )
    expected = {(os.path.abspath(f), *found) for f in files for found in expectations(f) if found[1] in codes}
    if os.path.isdir(path):
        diagnostics = lint_tree(path, codes)
    else:
        session = Session(Config(root=root, select=codes), cache=False)
        diagnostics = session.lint_paths([path]).diagnostics
    fragments: dict[tuple[str, int, str, int], list[str]] = {}
    for file, line, code, column, fragment in expected:
        fragments.setdefault((file, line, code, column), []).append(fragment)
    actual = set()
    for d in diagnostics:
        if d.code not in codes:
            continue
        where = (os.path.abspath(d.path), d.span.line, d.code, d.span.col + 1)
        said = next((f for f in sorted(fragments.get(where, ())) if f in d.message), d.message)
        actual.add((*where, said))
    return expected, actual


def known_codes() -> set[str]:
    return set(all_rules())

"""Suppression comments, found from raw lines (no parse needed).

``# noqa`` / ``# noqa: WC101,WC203`` on the reported line (flake8-compatible), and a
file-level ``# warplint: noqa`` (optionally ``: WC101``) on a line of its own.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_NOQA = re.compile(r"#\s*noqa(?::[\s]?(?P<codes>[A-Z][A-Z0-9]*(?:[\s,]+[A-Z][A-Z0-9]*)*))?", re.I)
_FILE = re.compile(r"^\s*#\s*warplint:\s*noqa(?::\s*(?P<codes>[A-Z]+[0-9]+(?:[\s,]+[A-Z]+[0-9]+)*))?\s*$", re.I)
ALL = "*"


@dataclass
class Suppressions:
    lines: dict[int, frozenset[str]]  # line -> codes ({"*"} for a bare noqa)
    file_codes: frozenset[str]  # {"*"} for a bare file-level noqa

    def suppressed(self, code: str, line: int) -> bool:
        if ALL in self.file_codes or code in self.file_codes:
            return True
        codes = self.lines.get(line)
        if codes is None:
            return False
        return ALL in codes or any(code.startswith(c) for c in codes)


def find_suppressions(text: str) -> Suppressions:
    lines: dict[int, frozenset[str]] = {}
    file_codes: set[str] = set()
    if "noqa" not in text and "NOQA" not in text:
        return Suppressions(lines, frozenset())
    for number, line in enumerate(text.splitlines(), start=1):
        if "#" not in line:
            continue
        m = _FILE.match(line)
        if m:
            codes = m.group("codes")
            file_codes |= set(_split(codes)) if codes else {ALL}
            continue
        m = _NOQA.search(line)
        if m:
            codes = m.group("codes")
            lines[number] = frozenset(_split(codes)) if codes else frozenset({ALL})
    return Suppressions(lines, frozenset(file_codes))


def _split(codes: str) -> list[str]:
    return [c.upper() for c in re.split(r"[\s,]+", codes.strip()) if c]

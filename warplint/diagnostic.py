"""What a rule reports, and what every output format and front end consumes."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Span:
    """A source range: lines are 1-based, columns 0-based (flake8 adds 1 itself)."""

    line: int
    col: int
    end_line: int
    end_col: int

    def __reduce__(self) -> tuple[type, tuple[int, int, int, int]]:
        # a tuple, not a field dict: models hold hundreds of thousands of spans
        return Span, (self.line, self.col, self.end_line, self.end_col)


@dataclass(frozen=True)
class Edit:
    """Replace ``span`` of the file with ``text``."""

    span: Span
    text: str


@dataclass(frozen=True)
class Fix:
    description: str
    edits: tuple[Edit, ...]


@dataclass(frozen=True)
class Related:
    """Another place a finding is about (the launch that loaded the module, the kernel's
    definition): rendered as SARIF ``relatedLocations``, LSP ``relatedInformation`` and a
    ``note:`` line in text output, so messages never format ``file:line`` by hand."""

    path: str
    span: Span
    message: str


@dataclass
class Diagnostic:
    """One finding. ``code``/``name``/``mechanism``/``confidence`` come from the rule's
    metadata; ``data`` carries machine-readable facts (module name, kernel name, ...)
    that ``--confirm`` uses to match runtime events."""

    path: str
    span: Span
    code: str
    name: str
    mechanism: str
    message: str
    confidence: str
    fix: Fix | None = None
    data: dict[str, Any] = field(default_factory=dict)
    confirm: dict[str, Any] | None = None
    related: tuple[Related, ...] = ()

    @property
    def line(self) -> int:
        return self.span.line

    @property
    def col(self) -> int:
        return self.span.col

    def sort_key(self) -> tuple:
        return (self.path, self.span.line, self.span.col, self.code)

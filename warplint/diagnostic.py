"""What a rule reports, and what every output format and front end consumes."""

from __future__ import annotations

import copyreg
from dataclasses import dataclass, field
from enum import Enum
from typing import Any


# Not frozen: a frozen dataclass sets each field through object.__setattr__, and unpickling a cached model
# builds every one of its (hundreds of thousands of) spans; three times faster with slots and plain stores.
# Treat a span as immutable all the same (it is hashed).
@dataclass(slots=True, unsafe_hash=True)
class Span:
    """A source range: lines are 1-based, columns 0-based (flake8 adds 1 itself)."""

    line: int
    col: int
    end_line: int
    end_col: int

    def __reduce__(self) -> tuple[type, tuple[int, int, int, int]]:
        # a tuple, not a field dict: models hold hundreds of thousands of spans
        return Span, (self.line, self.col, self.end_line, self.end_col)


# Pickles name Span by a one-byte code (copyreg's private range; the model's classes take the next codes,
# ``model._register_pickle_codes``), registered here so that whatever reads a pickled span has the code.
SPAN_PICKLE_CODE = 240
copyreg.add_extension(__name__, "Span", SPAN_PICKLE_CODE)


class Applicability(Enum):
    """How far a fix can be trusted (ruff's tiers). ``SAFE``: the meaning of the code is kept, and
    ``--fix`` applies it; ``UNSAFE``: behaviour may change, applied only with ``--unsafe-fixes``."""

    SAFE = "safe"
    UNSAFE = "unsafe"


@dataclass(frozen=True)
class Edit:
    """Replace ``span`` of the file with ``text`` (an empty span inserts). Columns count code points, as
    every Span does; a ``\n`` in ``text`` is written as the line ending of the line it lands on."""

    span: Span
    text: str
    expected: str | None = None  # what the span holds when the fix was made: checked before applying

    @staticmethod
    def insert(line: int, col: int, text: str) -> Edit:
        return Edit(Span(line, col, line, col), text)


@dataclass(frozen=True)
class Fix:
    """An automatic fix: ``message`` says what it does ("Replace `max_unrol` with `max_unroll`"), its
    edits must not overlap, and all of them apply or none."""

    message: str
    edits: tuple[Edit, ...]
    applicability: Applicability = Applicability.SAFE

    @property
    def is_safe(self) -> bool:
        return self.applicability is Applicability.SAFE


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


@dataclass
class LintResult:
    diagnostics: list[Diagnostic]
    files: int = 0  # files looked at
    parsed: int = 0  # files parsed (the rest were skipped by the prefilter)
    errors: list[str] = field(default_factory=list)  # fatal, one-line (exit 2)
    notes: list[str] = field(default_factory=list)  # one-line remarks for stderr (a skipped FIFO, ...), not fatal
    cached: bool = False  # findings came from the result cache (no file was parsed, ``models`` is empty)
    paths: list[str] = field(default_factory=list)  # the files checked, as shown (what --fix re-lints)
    fixed: int = 0  # findings whose fix --fix applied (they are no longer in ``diagnostics``)

    def fixable(self, unsafe: bool = False) -> int:
        """Findings ``--fix`` would fix (with ``--unsafe-fixes`` when ``unsafe``)."""
        return sum(1 for d in self.diagnostics if d.fix is not None and (unsafe or d.fix.is_safe))

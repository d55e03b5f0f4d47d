"""Applying the fixes rules attach to their findings (``--fix``, ``--diff``, the editor's "fix all").

Knows no rule: a fix is a set of non-overlapping text edits over exact source ranges (``diagnostic.Fix``).
All fixes of a file are applied in one pass (on overlap the first wins and the others wait for the next
round), the result must still parse, and the files are linted again, round after round, until nothing is
left to apply (at most ``MAX_ROUNDS``). Nothing is written until the last round; then each changed file is
written atomically, byte for byte as it was except for the edited ranges (line endings, BOM, encoding,
tabs), or not at all.
"""

from __future__ import annotations

import ast
import bisect
import codecs
import difflib
import io
import itertools
import os
import re
import tokenize
import warnings
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .diagnostic import Diagnostic, Fix, Span

if TYPE_CHECKING:
    from .engine import LintResult, Session

MAX_ROUNDS = 10
_LINE_END = re.compile(r"\r\n|\r|\n")  # how CPython (and so every Span) counts lines; not str.splitlines


def applicable(diagnostic: Diagnostic, unsafe: bool) -> bool:
    """Whether ``--fix`` (with ``--unsafe-fixes`` when ``unsafe``) applies this finding's fix."""
    return diagnostic.fix is not None and (unsafe or diagnostic.fix.is_safe)


# ---------------------------------------------------------------------- one pass over one text
class _Lines:
    """(line, column) <-> offset in one text, lines as CPython counts them."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.starts = [0] + [m.end() for m in _LINE_END.finditer(text)]

    def offset(self, line: int, col: int) -> int | None:
        if not 1 <= line <= len(self.starts):
            return None
        start = self.starts[line - 1]
        end = self.starts[line] if line < len(self.starts) else len(self.text)
        body = self.text[start:end].rstrip("\r\n")
        return start + col if 0 <= col <= len(body) else None

    def position(self, offset: int) -> tuple[int, int]:
        line = bisect.bisect_right(self.starts, offset)
        return line, offset - self.starts[line - 1]

    def line_ending(self, line: int) -> str:
        if line < len(self.starts):
            end = self.text[self.starts[line - 1]:self.starts[line]]
            return "\r\n" if end.endswith("\r\n") else end[-1]
        found = _LINE_END.search(self.text)
        return found.group() if found else "\n"


@dataclass(frozen=True)
class _Replacement:
    start: int
    end: int
    text: str


def _replacements(lines: _Lines, fix: Fix) -> list[_Replacement] | None:
    """The fix's edits as offsets (sorted), or None when an edit falls outside the text, does not find the
    text it expects, or two overlap."""
    found = []
    for edit in fix.edits:
        start = lines.offset(edit.span.line, edit.span.col)
        end = lines.offset(edit.span.end_line, edit.span.end_col)
        if start is None or end is None or end < start:
            return None
        if edit.expected is not None and lines.text[start:end] != edit.expected:
            return None
        newline = lines.line_ending(edit.span.line)
        found.append(_Replacement(start, end, edit.text.replace("\n", newline) if newline != "\n" else edit.text))
    found.sort(key=lambda r: (r.start, r.end))
    if any(a.end > b.start for a, b in itertools.pairwise(found)):
        return None
    return found


def _clashes(a: _Replacement, b: _Replacement) -> bool:
    # Two insertions at one point have no defined order: the second waits for the next round.
    return (a.start < b.end and b.start < a.end) or a.start == b.start or (a.start == a.end == b.end) or (
        b.start == b.end == a.end)


@dataclass
class Pass:
    """One pass of fixes over one text."""

    text: str
    applied: list[int] = field(default_factory=list)  # indexes into the fixes given, in the order given
    deferred: list[int] = field(default_factory=list)  # overlapped an earlier fix: for the next round
    invalid: list[int] = field(default_factory=list)  # an edit outside the text, or overlapping edits


def apply_fixes(text: str, fixes: Sequence[Fix]) -> Pass:
    """Apply every fix that does not overlap one taken before it (earlier in ``fixes`` wins)."""
    lines = _Lines(text)
    result = Pass(text)
    taken: list[_Replacement] = []
    for i, fix in enumerate(fixes):
        edits = _replacements(lines, fix)
        if edits is None:
            result.invalid.append(i)
        elif any(_clashes(e, t) for e in edits for t in taken):
            result.deferred.append(i)
        else:
            taken.extend(edits)
            result.applied.append(i)
    parts = []
    position = 0
    for r in sorted(taken, key=lambda r: (r.start, r.end)):
        parts += [text[position:r.start], r.text]
        position = r.end
    parts.append(text[position:])
    result.text = "".join(parts)
    return result


def parses(text: str) -> bool:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the user's invalid escapes are not ours to print
        try:
            ast.parse(text)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return False
    return True


# ---------------------------------------------------------------------- rounds over a session
@dataclass
class Outcome:
    """What fixing did: the findings left after the last round, the findings fixed per file (as the file
    was shown), and the original and fixed text of each changed file."""

    diagnostics: list[Diagnostic]
    fixed: dict[str, list[Diagnostic]] = field(default_factory=dict)
    texts: dict[str, tuple[str, str]] = field(default_factory=dict)  # path -> (original, fixed)
    notes: list[str] = field(default_factory=list)
    rounds: int = 0
    stable: bool = True

    @property
    def fixed_count(self) -> int:
        return sum(len(found) for found in self.fixed.values())


def fix_session(session: Session, result: LintResult, *, unsafe: bool, max_rounds: int = MAX_ROUNDS) -> Outcome:
    """Apply fixes to ``result``'s findings in memory, round after round, re-linting ``result.paths`` with
    the session after each; nothing is written here (``write_fixed`` does, for --fix)."""
    from .engine import collector_paused

    with collector_paused():
        return _fix_session(session, result, unsafe, max_rounds)


def _fix_session(session: Session, result: LintResult, unsafe: bool, max_rounds: int) -> Outcome:
    outcome = Outcome(list(result.diagnostics))
    dropped: set[tuple[str, str, str]] = set()  # (path, code, fix message): its result did not parse
    originals: dict[str, str] = {}
    current: dict[str, str] = {}
    while True:
        todo = _by_path(d for d in outcome.diagnostics if applicable(d, unsafe)
                        and (d.path, d.code, d.fix.message if d.fix else "") not in dropped)
        if not todo:
            break
        if outcome.rounds == max_rounds:
            outcome.stable = False
            outcome.notes.append(f"fixes did not settle after {max_rounds} rounds in "
                                 f"{', '.join(sorted(todo))}; run --fix again")
            break
        outcome.rounds += 1
        changed: dict[str, str] = {}
        for path, found in todo.items():
            absolute = os.path.abspath(path)
            text = current.get(path, session.texts.get(absolute))
            if text is None:
                continue
            new = _fixed_text(path, text, found, dropped, outcome)
            if new is not None and new != text:
                originals.setdefault(path, text)
                current[path] = changed[path] = new
        if not changed:
            break
        outcome.diagnostics = session.recheck(result.paths, changed)
    outcome.texts = {path: (originals[path], current[path]) for path in current if current[path] != originals[path]}
    return outcome


def _by_path(diagnostics: Iterable[Diagnostic]) -> dict[str, list[Diagnostic]]:
    grouped: dict[str, list[Diagnostic]] = {}
    for d in diagnostics:
        grouped.setdefault(d.path, []).append(d)
    for found in grouped.values():  # by where the fix starts, then as reported
        found.sort(key=lambda d: (min((e.span.line, e.span.col) for e in d.fix.edits) if d.fix and d.fix.edits
                                  else (d.span.line, d.span.col), d.code))
    return grouped


def _fixed_text(path: str, text: str, found: list[Diagnostic], dropped: set[tuple[str, str, str]],
                outcome: Outcome) -> str | None:
    """``text`` with the fixes of ``found`` applied (those whose result does not parse dropped, with a
    note); None when nothing applies."""
    fixes = [d.fix for d in found if d.fix is not None]
    done = apply_fixes(text, fixes)
    for i in done.invalid:
        _drop(path, found[i], dropped, outcome, "its edits do not match the file")
    if done.applied and not parses(done.text) and parses(text):
        for i in done.applied:  # find the fixes that break the file, each on its own
            if not parses(apply_fixes(text, [fixes[i]]).text):
                _drop(path, found[i], dropped, outcome, "the fixed code would not parse")
        keep = [i for i in done.applied if (path, found[i].code, fixes[i].message) not in dropped]
        done = apply_fixes(text, [fixes[i] for i in keep])
        done.applied = [keep[i] for i in done.applied]
        if not parses(done.text):  # together they break it: none of them this round
            for i in done.applied:
                _drop(path, found[i], dropped, outcome, "together with the others, the fixed code would not parse")
            return None
    if not done.applied:
        return None
    outcome.fixed.setdefault(path, []).extend(found[i] for i in done.applied)
    return done.text


def _drop(path: str, diagnostic: Diagnostic, dropped: set[tuple[str, str, str]], outcome: Outcome,
          why: str) -> None:
    message = diagnostic.fix.message if diagnostic.fix else ""
    dropped.add((path, diagnostic.code, message))
    from .report import shown_path

    outcome.notes.append(f"dropped the {diagnostic.code} fix ({message}) for {shown_path(path)}: {why}")


# ---------------------------------------------------------------------- writing, byte for byte
def encode_like(data: bytes, original: str, new: str) -> bytes:
    """``new`` as the bytes of a file that held ``data`` (decoded: ``original``): the same BOM, the same
    encoding. Raises ValueError when ``data`` does not come back byte for byte from ``original`` (the
    untouched parts could not be kept), or when ``new`` cannot be written in the file's encoding."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError:
        encoding = "utf-8"
    bom = codecs.BOM_UTF8 if data.startswith(codecs.BOM_UTF8) else b""
    if encoding == "utf-8-sig":
        encoding = "utf-8"
    try:
        if original.encode(encoding) != data[len(bom):]:
            raise ValueError(f"its {encoding} text does not encode back to the same bytes")
        return bom + new.encode(encoding)
    except (UnicodeError, LookupError) as exc:
        raise ValueError(f"the fixed text cannot be written as {encoding}: {exc}") from None


def write_fixed(path: str, original: str, new: str, root: str | None = None) -> str | None:
    """Write ``new`` over ``path`` atomically (a temporary file in the same directory, fsync, rename; the
    mode bits kept); None, or why it was not written (the file changed since it was read, a symlink out of
    ``root``'s tree, a file the user cannot write: ``sources.write_refusal``)."""
    from .engine import decode
    from .noqa import write_atomically
    from .sources import read_regular, reread_limit, write_refusal

    refused = write_refusal(path, root if root is not None else os.getcwd())
    if refused is not None:
        return refused
    target = os.path.realpath(path)  # a symlink stays a symlink
    try:
        data = read_regular(target, reread_limit(original))
    except OSError as exc:
        return f"cannot read it again: {exc.strerror or exc}"
    try:
        if decode(data) != original:
            return "it changed since it was read"
        content = encode_like(data, original, new)
    except (UnicodeDecodeError, LookupError) as exc:
        return f"cannot decode it again: {exc}"
    except ValueError as exc:
        return str(exc)
    try:
        write_atomically(target, content)
    except OSError as exc:
        return f"cannot write it: {exc.strerror or exc}"
    return None


# ---------------------------------------------------------------------- reporting
def _keep_ends(text: str) -> list[str]:
    lines, position = [], 0
    for m in _LINE_END.finditer(text):
        lines.append(text[position:m.end()])
        position = m.end()
    if position < len(text):
        lines.append(text[position:])
    return lines


def unified_diff(path: str, original: str, new: str) -> str:
    """A unified diff of one file, both sides named by its path (as ruff's ``--diff``: ``patch -p0``
    applies it); a last line without a line ending is marked as git marks it."""
    from .report import shown_path

    name = shown_path(path)
    out = []
    for line in difflib.unified_diff(_keep_ends(original), _keep_ends(new), name, name):
        out.append(line if line.endswith(("\n", "\r")) else line + "\n\\ No newline at end of file\n")
    return "".join(out)


def fix_summary(fixed: dict[str, list[Diagnostic]]) -> str:
    """``--show-fixes`` after ``--fix``: the fixes applied per file, counted per rule (as ruff lists them)."""
    from .report import shown_path

    total = sum(len(v) for v in fixed.values())
    if not total:
        return "No fixes applied.\n"
    lines = [f"Fixed {total} finding{'s' if total != 1 else ''}:"]
    for path in sorted(fixed):
        lines.append(f"- {shown_path(path)}:")
        counts: dict[tuple[str, str], int] = {}
        for d in fixed[path]:
            counts[(d.code, d.name)] = counts.get((d.code, d.name), 0) + 1
        lines += [f"    {n} x {code} ({name})" for (code, name), n in sorted(counts.items())]
    return "\n".join(lines) + "\n"


def available_summary(diagnostics: Sequence[Diagnostic], unsafe: bool) -> str:
    """``--show-fixes`` without ``--fix``: each fix ``--fix`` would apply, per file; unsafe ones are shown
    with ``--unsafe-fixes`` and otherwise counted."""
    from .report import shown_path

    shown = [d for d in diagnostics if applicable(d, unsafe)]
    hidden = sum(1 for d in diagnostics if d.fix is not None and not applicable(d, unsafe))
    lines = []
    if shown:
        lines.append(f"{len(shown)} fix{'es' if len(shown) != 1 else ''} available (apply with --fix"
                     f"{' --unsafe-fixes' if any(d.fix and not d.fix.is_safe for d in shown) else ''}):")
        for path, found in _by_path(shown).items():
            lines.append(f"- {shown_path(path)}:")
            for d in sorted(found, key=Diagnostic.sort_key):
                tier = d.fix.applicability.value if d.fix else ""
                lines.append(f"    {d.span.line}:{d.span.col + 1} {d.code} {d.fix.message if d.fix else ''} ({tier})")
    else:
        lines.append("No fixes available.")
    if hidden:
        lines.append(f"({hidden} unsafe fix{'es' if hidden != 1 else ''} hidden: see them with --unsafe-fixes)")
    return "\n".join(lines) + "\n"




# ---------------------------------------------------------------------- one document (the editor's "fix all")
def fix_text(text: str, diagnostics: Sequence[Diagnostic], relint: Callable[[str], list[Diagnostic]], *,
             unsafe: bool = False, max_rounds: int = MAX_ROUNDS) -> tuple[str, int]:
    """``text`` with its fixes applied round after round (``relint(text)`` gives the findings of a text),
    and the number of fixes applied; fixes whose result does not parse are left out."""
    fixed = 0
    for _ in range(max_rounds):
        found = [d for d in diagnostics if applicable(d, unsafe)]
        found.sort(key=lambda d: (min(((e.span.line, e.span.col) for e in d.fix.edits), default=(0, 0))
                                  if d.fix else (0, 0), d.code))
        fixes = [d.fix for d in found if d.fix is not None]
        done = apply_fixes(text, fixes)
        if done.applied and not parses(done.text) and parses(text):
            keep = [fixes[i] for i in done.applied if parses(apply_fixes(text, [fixes[i]]).text)]
            done = apply_fixes(text, keep)
            if not parses(done.text):
                break
        if not done.applied or done.text == text:
            break
        text, fixed = done.text, fixed + len(done.applied)
        diagnostics = relint(text)
    return text, fixed


def changed_region(original: str, new: str) -> tuple[Span, str]:
    """The one range of ``original`` (as a Span) that, replaced by the returned text, gives ``new``."""
    start = 0
    limit = min(len(original), len(new))
    while start < limit and original[start] == new[start]:
        start += 1
    end_old, end_new = len(original), len(new)
    while end_old > start and end_new > start and original[end_old - 1] == new[end_new - 1]:
        end_old, end_new = end_old - 1, end_new - 1
    lines = _Lines(original)
    return Span(*lines.position(start), *lines.position(end_old)), new[start:end_new]

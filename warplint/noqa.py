"""Suppression comments, found from raw lines (no parse needed).

``# noqa`` / ``# noqa: WC101,WC203`` on the reported line (flake8-compatible), and a
file-level ``# warplint: noqa`` (optionally ``: WC101``) on a line of its own.

Also what the engine and ``--add-noqa`` need on top: where each directive and each of its
codes sits (``directives``), which WC codes of a directive suppress nothing
(``unused_codes``, reported as WC001), and inserting directives into a file's bytes
(``add_noqa``).
"""

from __future__ import annotations

import io
import os
import re
import tempfile
import tokenize
from collections.abc import Collection, Iterable, Iterator
from dataclasses import dataclass
from enum import Enum

from .diagnostic import Edit, Fix, Span
from .rule import Report

_NOQA = re.compile(r"#\s*noqa(?::[\s]?(?P<codes>[A-Z][A-Z0-9]*(?:[\s,]+[A-Z][A-Z0-9]*)*))?", re.I)
_FILE = re.compile(r"^\s*#\s*warplint:\s*noqa(?::\s*(?P<codes>[A-Z]+[0-9]+(?:[\s,]+[A-Z]+[0-9]+)*))?\s*$", re.I)
_CODE = re.compile(r"[A-Z][A-Z0-9]*", re.I)
# Python ends a line at \n, \r\n or \r only; str.splitlines also breaks at form feeds and
# other separators, which would number the lines after them differently from the parser.
_LINE_END = re.compile(r"\r\n|\r|\n")
ALL = "*"


_LINE_END_BYTES = re.compile(rb"\r\n|\r|\n")


# Line breaks of str.splitlines that the parser does not count (text without them splits the same, faster)
_OTHER_BREAKS = ("\v", "\f", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029")


def source_lines(text: str) -> list[str]:
    """``text`` split into lines as the parser numbers them (without their line endings)."""
    if not any(ch in text for ch in _OTHER_BREAKS):
        return text.splitlines()
    lines = _LINE_END.split(text)
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def _lines_naming_noqa(text: str) -> Iterator[tuple[int, str]]:
    """(number, line) of the lines of ``text`` that hold "noqa" in any case, numbered as ``source_lines``
    numbers them: only those can hold a directive, and splitting every file of a project into lines to find
    a few of them was a visible part of a re-check."""
    if "noqa" not in text and "NOQA" not in text:
        return
    # In UTF-8 bytes, bytes.lower() folds ASCII letters only and keeps every offset, and line endings are
    # the same bytes: a find there is many times faster than a case-blind regex over the text.
    data = text.encode("utf-8", "surrogatepass")
    folded = data.lower()
    number, line_start = 1, 0
    at = folded.find(b"noqa")
    while at >= 0:
        # ``at`` is a letter and ``line_start`` a line's start: no "\r\n" is split at either
        breaks = data.count(b"\n", line_start, at) + data.count(b"\r", line_start, at)
        if breaks:
            number += breaks - data.count(b"\r\n", line_start, at)
            line_start = max(data.rfind(b"\n", line_start, at), data.rfind(b"\r", line_start, at)) + 1
        line_end = _LINE_END_BYTES.search(data, at)
        stop = line_end.start() if line_end is not None else len(data)
        yield number, data[line_start:stop].decode("utf-8", "surrogatepass")
        if line_end is None:
            return
        number += 1
        line_start = line_end.end()
        at = folded.find(b"noqa", line_start)


@dataclass(frozen=True)
class NoqaCode:
    """One code of a directive, upper-cased, and its columns on the line (0-based, code points)."""

    code: str
    col: int
    end_col: int


@dataclass(frozen=True)
class Directive:
    """A line-level ``# noqa`` comment: ``col``..``end_col`` covers ``# noqa: A, B``."""

    line: int
    col: int
    end_col: int
    codes: tuple[NoqaCode, ...]  # () for a bare directive


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


def _line_directives(number: int, line: str) -> list[Directive]:
    found = []
    for m in _NOQA.finditer(line):
        codes: tuple[NoqaCode, ...] = ()
        if m.group("codes"):
            base = m.start("codes")
            codes = tuple(NoqaCode(c.group().upper(), base + c.start(), base + c.end())
                          for c in _CODE.finditer(m.group("codes")))
        found.append(Directive(number, m.start(), m.end(), codes))
    return found


def directives(text: str) -> list[Directive]:
    """Every line-level ``# noqa`` of ``text`` (file-level ``# warplint: noqa`` lines are not)."""
    found: list[Directive] = []
    for number, line in _lines_naming_noqa(text):
        if "#" in line and not _FILE.match(line):
            found.extend(_line_directives(number, line))
    return found


def find_suppressions(text: str) -> Suppressions:
    lines: dict[int, frozenset[str]] = {}
    file_codes: set[str] = set()
    for number, line in _lines_naming_noqa(text):
        if "#" not in line:
            continue
        m = _FILE.match(line)
        if m:
            codes = m.group("codes")
            file_codes |= set(_split(codes)) if codes else {ALL}
            continue
        # Every directive on the line counts: one inside a string before the real comment must
        # not hide it (``--add-noqa`` appends its own after whatever the line holds).
        found = _line_directives(number, line)
        if found:
            lines[number] = (frozenset({ALL}) if any(not d.codes for d in found)
                             else frozenset(c.code for d in found for c in d.codes))
    return Suppressions(lines, frozenset(file_codes))


def _split(codes: str) -> list[str]:
    return [c.upper() for c in re.split(r"[\s,]+", codes.strip()) if c]


# ---------------------------------------------------------------------- unused directives
class Unused(Enum):
    """Why a code of a ``# noqa`` suppresses nothing (ruff's RUF100 wording)."""

    UNUSED = "unused"  # its rule is enabled and reports nothing on the line
    DISABLED = "non-enabled"  # its rule is not enabled for this file
    UNKNOWN = "unknown"  # no rule has this code


@dataclass(frozen=True)
class UnusedCode:
    directive: Directive
    code: NoqaCode
    why: Unused


def _comment_columns(text: str) -> dict[int, list[int]] | None:
    """Line -> start columns of its comment tokens; None when the file does not tokenize."""
    found: dict[int, list[int]] = {}
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.COMMENT:
                found.setdefault(token.start[0], []).append(token.start[1])
    except (tokenize.TokenError, SyntaxError, ValueError):
        return None
    return found


def unused_codes(text: str, reported: Iterable[tuple[int, str]], enabled: Collection[str],
                 known: Collection[str], skipped: Collection[str] = ()) -> list[UnusedCode]:
    """The WC codes of ``text``'s ``# noqa`` comments that suppress none of ``reported`` (line,
    code) -- the findings before suppression. ``enabled``: the codes checked in this file;
    ``known``: every rule code; ``skipped``: codes never judged here (those reported by
    ``--confirm``). A bare ``# noqa``, other tools' codes and file-level directives are left
    alone, and so is a ``# noqa`` that is not a comment (inside a string)."""
    found = directives(text)
    if not found:
        return []
    comments = _comment_columns(text)
    if comments is None:
        return []
    by_line: dict[int, set[str]] = {}
    for line, code in reported:
        by_line.setdefault(line, set()).add(code)
    unused = []
    for directive in found:
        if not _in_a_comment(directive, comments):
            continue
        here = by_line.get(directive.line, set())
        for noqa in directive.codes:
            prefix = noqa.code
            if not prefix.startswith("WC") or any(c.startswith(prefix) for c in here):
                continue
            matching = [k for k in known if k.startswith(prefix)]
            if not matching:
                unused.append(UnusedCode(directive, noqa, Unused.UNKNOWN))
            elif all(k in skipped for k in matching):
                continue
            elif not any(e.startswith(prefix) for e in enabled):
                unused.append(UnusedCode(directive, noqa, Unused.DISABLED))
            else:
                unused.append(UnusedCode(directive, noqa, Unused.UNUSED))
    return unused


def _in_a_comment(directive: Directive, comments: dict[int, list[int]]) -> bool:
    """A comment runs to the end of its line: one that starts at or before the directive holds
    it (``# explain  # noqa: WC101`` too); a ``# noqa`` in a string before any comment is not one."""
    return any(col <= directive.col for col in comments.get(directive.line, ()))


def removal(line: str, unused: list[UnusedCode]) -> tuple[int, int, str]:
    """(col, end_col, replacement) on ``line`` that takes ``unused`` (codes of one directive)
    out of it: the codes with their separators, or the whole directive when none is left
    (keeping any explanation written after it as a comment)."""
    directive = unused[0].directive
    gone = {u.code for u in unused}
    kept = [c for c in directive.codes if c not in gone]
    if not kept:
        start = directive.col
        while start > 0 and line[start - 1] in " \t":
            start -= 1
        if line[directive.end_col:].strip():
            return directive.col, directive.end_col, "#"
        return start, directive.end_col, ""
    codes = directive.codes
    first, last = codes[0].col, codes[-1].end_col
    separator = ", " if "," in line[first:last] or len(codes) == 1 else " "
    return first, last, separator.join(c.code for c in kept)


# ---------------------------------------------------------------------- --add-noqa
@dataclass(frozen=True)
class Skipped:
    """A line ``add_noqa`` could not mark, and why (a comment there would not end the line)."""

    line: int
    reason: str


def _open_lines(text: str) -> dict[int, str] | None:
    """Lines whose end a comment cannot follow: inside a multi-line string, or continued with
    a backslash. None when the file does not tokenize."""
    found: dict[int, str] = {}
    commented: set[int] = set()
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.COMMENT:
                commented.add(token.start[0])
            elif token.start[0] < token.end[0] and token.type != tokenize.NL:
                for line in range(token.start[0], token.end[0]):
                    found[line] = "it ends inside a multi-line string"
    except (tokenize.TokenError, SyntaxError, ValueError):
        return None
    for number, physical in enumerate(source_lines(text), start=1):
        if physical.endswith("\\") and number not in commented and number not in found:
            found[number] = "it is continued with a backslash"
    return found


def add_noqa(data: bytes, text: str, codes_by_line: dict[int, set[str]]) -> tuple[bytes, int, list[Skipped]]:
    """``data`` (a file's bytes, ``text`` its decoded contents) with ``# noqa: CODES`` on each
    line of ``codes_by_line``: added to the line's noqa comment when it has one, else appended
    at the end of the line. Every other byte stays as it was. Returns (new bytes, directives
    added or extended, lines skipped)."""
    open_lines = _open_lines(text)
    comments = _comment_columns(text)
    if open_lines is None or comments is None:
        return data, 0, [Skipped(line, "the file does not tokenize") for line in sorted(codes_by_line)]
    pieces = re.split(rb"(\r\n|\r|\n)", data)  # alternating line, line ending, ..., last line
    lines = source_lines(text)
    changed = 0
    skipped = []
    for number in sorted(codes_by_line):
        if number in open_lines or not 0 < number <= len(lines):
            skipped.append(Skipped(number, open_lines.get(number, "no such line")))
            continue
        line = lines[number - 1]
        existing = _line_directives(number, line)
        if any(not d.codes for d in existing):
            continue  # a bare noqa already suppresses everything
        have = {c.code for d in existing for c in d.codes}
        missing = sorted(c for c in codes_by_line[number] if not any(c.startswith(h) for h in have))
        if not missing:
            continue
        raw = pieces[2 * (number - 1)]
        in_comment = [d for d in existing if _in_a_comment(d, comments)]  # never one inside a string
        if in_comment:
            end = in_comment[-1].codes[-1].end_col
            # the line's bytes up to that column: encode the text before it (ASCII-compatible codecs
            # only); on line 1 a BOM the decoded text no longer has comes first
            encoding = _encoding(data)
            cut = len(raw) - len(line.encode(encoding)) + len(line[:end].encode(encoding))
            new = raw[:cut] + (", " + ", ".join(missing)).encode() + raw[cut:]
        else:
            body = raw.rstrip(b" \t")
            new = body + b"  # noqa: " + ", ".join(missing).encode()
        pieces[2 * (number - 1)] = new
        changed += 1
    return b"".join(pieces), changed, skipped


def _encoding(data: bytes) -> str:
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError:
        return "utf-8"
    return "utf-8" if encoding == "utf-8-sig" else encoding


def ascii_compatible(data: bytes) -> bool:
    """Whether inserting ASCII comment bytes into ``data`` is inserting those characters."""
    try:
        return "# noqa: WC, ".encode(_encoding(data)) == b"# noqa: WC, "
    except LookupError:
        return False


def write_atomically(path: str, data: bytes) -> None:
    """Replace ``path``'s contents with ``data`` at once (a temp file in the same directory as the
    file a symlink points at, fsynced, renamed over it), keeping its permission bits and, where the
    process may, its owner and group; ``--add-noqa`` and ``--fix`` write through here. Raises OSError,
    leaving no temp file behind.

    A file with other hard links is rewritten in place instead (a rename would detach this name from
    the others): the complete new contents are on disk in the temp file first, and a failed write puts
    the old bytes back."""
    target = os.path.realpath(path)  # a symlink stays a symlink; the temp file sits beside its target
    info = os.stat(target)
    fd, temp = tempfile.mkstemp(prefix=".warplint-", suffix=".tmp", dir=os.path.dirname(target))
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        if info.st_nlink > 1:
            _rewrite_in_place(target, data)
            os.unlink(temp)
            return
        os.chmod(temp, info.st_mode & 0o7777)
        if (info.st_uid, info.st_gid) != (os.getuid(), os.getgid()):
            try:
                os.chown(temp, info.st_uid, info.st_gid)
            except OSError:
                pass  # not allowed to give the file away: it keeps the writer's owner
        os.replace(temp, target)
    except BaseException:
        try:
            os.unlink(temp)
        except OSError:
            pass
        raise


def _rewrite_in_place(target: str, data: bytes) -> None:
    with open(target, "r+b") as fh:
        old = fh.read()
        try:
            fh.seek(0)
            fh.write(data)
            fh.truncate()
            fh.flush()
            os.fsync(fh.fileno())
        except BaseException:
            fh.seek(0)
            fh.write(old)
            fh.truncate()
            raise


def unused_noqa_reports(text: str, unused: list[UnusedCode]) -> list[Report]:
    """WC001's reports: one per directive with unused codes, on the directive, with the fix that
    takes those codes (or the whole directive) out."""
    lines = source_lines(text)
    grouped: dict[Directive, list[UnusedCode]] = {}
    for u in unused:
        grouped.setdefault(u.directive, []).append(u)
    reports = []
    for directive, codes in grouped.items():
        parts = []
        for why in Unused:
            named = [f"`{u.code.code}`" for u in codes if u.why is why]
            if named:
                parts.append(f"{why.value}: {', '.join(named)}")
        col, end_col, replacement = removal(lines[directive.line - 1], codes)
        line = directive.line
        what = ("the `noqa` directive" if len(codes) == len(directive.codes)
                else ", ".join(f"`{u.code.code}`" for u in codes) + " from the `noqa` directive")
        fix = Fix(f"Remove {what}", (Edit(Span(line, col, line, end_col), replacement),))
        reports.append(Report(Span(line, directive.col, line, directive.end_col),
                              f"Unused `noqa` directive ({'; '.join(parts)})", fix=fix,
                              data={"codes": [u.code.code for u in codes], "reasons": [u.why.value for u in codes]}))
    return reports

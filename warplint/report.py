"""Output formats. They read Diagnostics and rule metadata; they never run rules.

Columns are 1-based in every output (the model keeps them 0-based).
"""

from __future__ import annotations

import json
import os
import re
import unicodedata
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, TextIO

from . import __version__
from .diagnostic import Diagnostic
from .noqa import source_lines
from .registry import all_rules


def rule_url(code: str, template: str | None) -> str | None:
    """The link to rule ``code``'s documentation: the project's ``rule-url`` template (``{code}`` and
    ``{name}`` filled in), or None: warplint has no public documentation site, and a link that does not
    resolve is worse than none (``warplint rule CODE`` prints the same text)."""
    if template is None:
        return None
    rule = all_rules().get(code)
    return template.replace("{code}", code).replace("{name}", rule.name if rule else code)


def _name_bytes(path: str) -> bytes:
    """The file name's bytes: those that are not UTF-8 come from the OS as surrogate escapes."""
    try:
        return os.fsencode(path)
    except UnicodeEncodeError:  # a lone surrogate that did not come from the OS (API callers)
        return path.encode("utf-8", "surrogatepass")


def shown_path(path: str) -> str:
    """``path`` printable in any output (no encoder accepts a surrogate): bytes of the
    name that are not UTF-8 appear as ``\\xff``."""
    return _name_bytes(path).decode("utf-8", "backslashreplace")


@dataclass(frozen=True)
class Palette:
    """ANSI styles for the human formats (``HUMAN_FORMATS``); ``PLAIN`` has none."""

    path: str = ""
    code: str = ""
    caret: str = ""
    gutter: str = ""
    note: str = ""
    reset: str = ""

    def paint(self, style: str, text: str) -> str:
        return f"{style}{text}{self.reset}" if style else text


PLAIN = Palette()
COLORS = Palette(path="\x1b[1m", code="\x1b[1;31m", caret="\x1b[1;31m", gutter="\x1b[34m", note="\x1b[36m",
                 reset="\x1b[0m")


def _location(d: Diagnostic, palette: Palette = PLAIN) -> str:
    return f"{palette.paint(palette.path, shown_path(d.path))}:{d.span.line}:{d.span.col + 1}"


def _verdict(d: Diagnostic) -> str:
    if not d.confirm:
        return ""
    verdict = d.confirm.get("verdict", "")
    cost = d.confirm.get("cost_ms")
    return f" [{verdict}{f', +{cost:.0f} ms' if isinstance(cost, (int, float)) and cost else ''}]"


def fix_marker(d: Diagnostic, unsafe_fixes: bool = False) -> str:
    """``"[*] "`` when ``--fix`` (with ``unsafe_fixes``: ``--fix --unsafe-fixes``) would fix the finding, as ruff
    marks it after the code; an unsafe fix without ``--unsafe-fixes`` is not marked (ruff neither)."""
    return "[*] " if d.fix is not None and (unsafe_fixes or d.fix.is_safe) else ""


def write_concise(diagnostics: list[Diagnostic], out: TextIO, palette: Palette = PLAIN, unsafe_fixes: bool = False,
                  **_) -> None:
    for d in diagnostics:
        out.write(f"{_location(d, palette)}: {palette.paint(palette.code, d.code)} {fix_marker(d, unsafe_fixes)}"
                  f"{d.message}{_verdict(d)}\n")


SOURCE_WIDTH = 160  # characters of a long source line shown around the finding


def _excerpt(src: str, col: int, end: int) -> tuple[str, int, int]:
    """The part of a (possibly huge, minified) line to show: at most ~SOURCE_WIDTH characters
    around [col, end), with "..." where it was cut; col and end shifted to match."""
    if len(src) <= SOURCE_WIDTH:
        return src, col, end
    start = max(0, col - SOURCE_WIDTH // 4)
    stop = min(len(src), start + SOURCE_WIDTH)
    head = "..." if start > 0 else ""
    tail = "..." if stop < len(src) else ""
    shift = start - len(head)
    return head + src[start:stop] + tail, col - shift, min(end, stop) - shift


TAB_WIDTH = 4  # columns a tab in a source line takes in the excerpt (expanded, so carets line up)


def _cells(ch: str) -> int:
    """Terminal columns ``ch`` takes: 2 for East Asian wide and fullwidth characters, 0 for
    combining marks and format characters, 1 otherwise."""
    if unicodedata.combining(ch) or unicodedata.category(ch) in ("Mn", "Me", "Cf"):
        return 0
    return 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1


def _on_screen(src: str, col: int, end: int) -> tuple[str, int, int]:
    """``src`` as a terminal shows it (tabs expanded, control characters as ``?``) and the
    screen columns of [col, end): where the caret line starts and how wide it is."""
    if src.isascii() and src.isprintable():  # one column a character, nothing to replace (most lines)
        return src, min(col, len(src)), max(1, min(end, len(src)) - min(col, len(src)))
    shown: list[str] = []
    width = 0
    start = stop = None
    for i, ch in enumerate(src):
        if i == col:
            start = width
        if i == end:
            stop = width
        if ch == "\t":
            n = TAB_WIDTH - width % TAB_WIDTH
            shown.append(" " * n)
            width += n
        elif unicodedata.category(ch) == "Cc":  # an escape sequence must not reach the terminal
            shown.append("?")
            width += 1
        else:
            shown.append(ch)
            width += _cells(ch)
    start = width if start is None else start
    stop = width if stop is None else stop
    return "".join(shown), start, max(1, stop - start)


def write_text(diagnostics: list[Diagnostic], out: TextIO, sources: Callable[[str], str | None],
               palette: Palette = PLAIN, unsafe_fixes: bool = False, **_) -> None:
    split: dict[str, list[str]] = {}  # path -> lines, split once (not once per finding)
    paint = palette.paint
    for d in diagnostics:
        out.write(f"{_location(d, palette)}: {paint(palette.code, d.code)} {fix_marker(d, unsafe_fixes)}[{d.name}] "
                  f"{d.message}{_verdict(d)}\n")
        if d.path not in split:
            text = sources(d.path)
            split[d.path] = source_lines(text) if text else []
        lines = split[d.path]
        if 0 < d.span.line <= len(lines):
            src = lines[d.span.line - 1]
            gutter = " " * len(str(d.span.line))
            end = d.span.end_col if d.span.end_line == d.span.line else len(src.rstrip())
            src, col, end = _excerpt(src, d.span.col, end)
            src, caret_col, width = _on_screen(src, col, end)
            bar = paint(palette.gutter, "|")
            out.write(f"{gutter} {bar}\n")
            out.write(f"{paint(palette.gutter, str(d.span.line))} {bar} {src}\n")
            out.write(f"{gutter} {bar} {' ' * caret_col}{paint(palette.caret, '^' * width + ' ' + d.code)}\n")
            if d.confirm and d.confirm.get("evidence"):
                out.write(f"{gutter} = {d.confirm['verdict']}: {d.confirm['evidence']}\n")
            out.write(f"{gutter} = {d.mechanism}, confidence {d.confidence}; see `warplint rule {d.code}`\n")
        for r in d.related:
            out.write(f"  {paint(palette.note, 'note')}: {r.message} at {shown_path(r.path)}:{r.span.line}:"
                      f"{r.span.col + 1}\n")
        out.write("\n")


def to_json_objects(diagnostics: Iterable[Diagnostic], url_template: str | None = None) -> list[dict]:
    result = []
    for d in diagnostics:
        obj = {
            "path": d.path,
            "line": d.span.line,
            "column": d.span.col + 1,
            "end_line": d.span.end_line,
            "end_column": d.span.end_col + 1,
            "code": d.code,
            "name": d.name,
            "mechanism": d.mechanism,
            "message": d.message,
            "confidence": d.confidence,
            "url": rule_url(d.code, url_template),
            "fix": None,
            "data": d.data,
            "related": [
                {"path": r.path, "line": r.span.line, "column": r.span.col + 1, "end_line": r.span.end_line,
                 "end_column": r.span.end_col + 1, "message": r.message}
                for r in d.related
            ],
        }
        if d.fix is not None:
            obj["fix"] = {
                "applicability": d.fix.applicability.value,
                "message": d.fix.message,
                "edits": [
                    {
                        "location": {"row": e.span.line, "column": e.span.col + 1},
                        "end_location": {"row": e.span.end_line, "column": e.span.end_col + 1},
                        "content": e.text,
                    }
                    for e in d.fix.edits
                ],
            }
        if d.confirm is not None:
            obj["confirm"] = d.confirm
        result.append(obj)
    return result


def write_json(diagnostics: list[Diagnostic], out: TextIO, rule_url_template: str | None = None, **_) -> None:
    json.dump(to_json_objects(diagnostics, rule_url_template), out, indent=2, default=str)
    out.write("\n")


def sarif_level(confidence: str) -> str:
    return {"high": "warning"}.get(confidence, "note")


def repo_root(start: str) -> str:
    """The enclosing git work tree (code scanning resolves SARIF and annotation paths against
    it), else ``start`` itself."""
    directory = os.path.abspath(start)
    while True:
        if os.path.exists(os.path.join(directory, ".git")):
            return directory
        parent = os.path.dirname(directory)
        if parent == directory:
            return os.path.abspath(start)
        directory = parent


def _repo_relative(path: str, base: str) -> str:
    absolute = os.path.abspath(path)
    rel = os.path.relpath(absolute, base)
    if rel == os.pardir or rel.startswith(os.pardir + os.sep):
        return path.replace(os.sep, "/")  # outside the repository: as given
    return rel.replace(os.sep, "/")


def to_sarif(diagnostics: list[Diagnostic], root: str, url_template: str | None = None) -> dict:
    """SARIF 2.1.0 for GitHub code scanning; locations are relative to the git work tree
    that contains ``root`` (``%SRCROOT%``)."""
    from pathlib import Path
    from urllib.parse import quote

    root = repo_root(root)
    rules = list(all_rules().values())
    index = {r.code: i for i, r in enumerate(rules)}
    descriptors = [
        {
            "id": r.code,
            "name": r.name,
            "shortDescription": {"text": r.summary},
            "fullDescription": {"text": r.doc().split("\n\n")[0]},
            **({"helpUri": url} if (url := rule_url(r.code, url_template)) else {}),
            "help": {"text": r.doc(), "markdown": r.doc()},
            "defaultConfiguration": {"level": sarif_level(r.confidence), "enabled": bool(r.default_enabled)},
            "properties": {"mechanism": r.mechanism, "confidence": r.confidence, "tags": ["performance", "warp"]},
        }
        for r in rules
    ]
    def physical(path: str, span) -> dict:
        uri = quote(_name_bytes(_repo_relative(path, root)))  # a URI holds the name's bytes, %-escaped
        region = {
            "startLine": max(span.line, 1),
            "startColumn": span.col + 1,
            "endLine": max(span.end_line, span.line, 1),
            "endColumn": span.end_col + 1,
        }
        return {"artifactLocation": {"uri": uri, "uriBaseId": "%SRCROOT%"}, "region": region}

    results = []
    for d in diagnostics:
        result: dict[str, Any] = {
            "ruleId": d.code,
            "level": sarif_level(d.confidence),
            "message": {"text": d.message},
            "locations": [{"physicalLocation": physical(d.path, d.span)}],
            "properties": {"mechanism": d.mechanism, "confidence": d.confidence},
        }
        if d.related:
            result["relatedLocations"] = [
                {"id": i, "physicalLocation": physical(r.path, r.span), "message": {"text": r.message}}
                for i, r in enumerate(d.related)
            ]
        if d.fix is not None:
            # SARIF's fix: one artifactChange per file, a replacement per edit (deletedRegion + insertedContent)
            uri = physical(d.path, d.span)["artifactLocation"]
            result["fixes"] = [{
                "description": {"text": d.fix.message},
                "artifactChanges": [{
                    "artifactLocation": uri,
                    "replacements": [
                        {"deletedRegion": physical(d.path, e.span)["region"], "insertedContent": {"text": e.text}}
                        for e in d.fix.edits
                    ],
                }],
            }]
            result["properties"]["fixApplicability"] = d.fix.applicability.value
        if d.code in index:
            result["ruleIndex"] = index[d.code]
        if d.confirm is not None:
            result["properties"]["confirm"] = d.confirm
        results.append(result)
    return {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "warplint",
                        "version": __version__,
                        "semanticVersion": __version__,
                        "informationUri": "https://github.com/warplint/warplint",
                        "rules": descriptors,
                    }
                },
                "originalUriBaseIds": {"%SRCROOT%": {"uri": Path(root).as_uri().rstrip("/") + "/"}},
                "columnKind": "unicodeCodePoints",
                "results": results,
            }
        ],
    }


def write_sarif(diagnostics: list[Diagnostic], out: TextIO, root: str = ".", rule_url_template: str | None = None,
                **_) -> None:
    json.dump(to_sarif(diagnostics, os.path.abspath(root), rule_url_template), out, indent=2, default=str)
    out.write("\n")


def _gh_escape(text: str, prop: bool = False) -> str:
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    if prop:
        text = text.replace(":", "%3A").replace(",", "%2C")
    return text


def write_github(diagnostics: list[Diagnostic], out: TextIO, root: str = ".", **_) -> None:
    """GitHub Actions workflow commands; ``file=`` is relative to the repository root."""
    base = repo_root(root)
    for d in diagnostics:
        level = "warning" if d.confidence == "high" else "notice"
        file = _gh_escape(shown_path(_repo_relative(d.path, base)), True)
        props = (
            f"file={file},line={d.span.line},col={d.span.col + 1},"
            f"endLine={d.span.end_line},endColumn={d.span.end_col + 1},title={_gh_escape(f'{d.code} {d.name}', True)}"
        )
        out.write(f"::{level} {props}::{_gh_escape(d.message + _verdict(d))}\n")


_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _xml_text(text: str) -> str:
    """``text`` with what XML 1.0 cannot hold (control characters, lone surrogates) replaced by U+FFFD."""
    return _NOT_XML.sub("\ufffd", text)


def write_junit(diagnostics: list[Diagnostic], out: TextIO, root: str = ".", **_) -> None:
    """JUnit XML, as ruff writes it: one test suite per file, one failing test case per finding (CI systems
    show them as failed tests); a clean run is one passing case, so the report is never empty."""
    from xml.etree import ElementTree as ET

    base = repo_root(root)
    by_file: dict[str, list[Diagnostic]] = {}
    for d in diagnostics:
        by_file.setdefault(_xml_text(shown_path(_repo_relative(d.path, base))), []).append(d)
    count = str(len(diagnostics))
    suites = ET.Element("testsuites", name="warplint", tests=count, failures=count, errors="0")
    if not diagnostics:
        suite = ET.SubElement(suites, "testsuite", name="warplint", tests="1", disabled="0", errors="0",
                              failures="0", package="org.warplint")
        ET.SubElement(suite, "testcase", name="warplint", classname="warplint")
    for path, found in by_file.items():
        n = str(len(found))
        suite = ET.SubElement(suites, "testsuite", name=path, tests=n, disabled="0", errors="0", failures=n,
                              package="org.warplint")
        for d in found:
            case = ET.SubElement(suite, "testcase", name=f"org.warplint.{d.code}", classname=path,
                                 line=str(d.span.line), column=str(d.span.col + 1))
            failure = ET.SubElement(case, "failure", message=_xml_text(d.message))
            failure.text = _xml_text(f"line {d.span.line}, col {d.span.col + 1}, {d.code} {d.name}: {d.message}"
                                     f"{_verdict(d)}")
    ET.indent(suites)
    out.write('<?xml version="1.0" encoding="UTF-8"?>\n')
    out.write(ET.tostring(suites, encoding="unicode"))
    out.write("\n")


def write_gitlab(diagnostics: list[Diagnostic], out: TextIO, root: str = ".", **_) -> None:
    """GitLab's Code Quality report (a JSON list). A finding's fingerprint hashes its code, file and message
    and how many equal ones come before it, not its line: an edit above it keeps the finding the same one
    in GitLab's merge-request diff."""
    import hashlib

    base = repo_root(root)
    seen: dict[tuple[str, str, str], int] = {}
    issues = []
    for d in diagnostics:
        path = shown_path(_repo_relative(d.path, base))
        key = (d.code, path, d.message)
        seen[key] = seen.get(key, -1) + 1
        fingerprint = hashlib.sha256("\0".join([*key, str(seen[key])]).encode("utf-8", "surrogateescape"))
        issues.append({
            "description": f"{d.code} {d.message}",
            "check_name": d.code,
            "fingerprint": fingerprint.hexdigest(),
            "severity": "major" if d.confidence == "high" else "minor",
            "location": {
                "path": path,
                "positions": {
                    "begin": {"line": d.span.line, "column": d.span.col + 1},
                    "end": {"line": d.span.end_line, "column": d.span.end_col + 1},
                },
            },
        })
    json.dump(issues, out, indent=2)
    out.write("\n")


WRITERS: dict[str, Callable[..., None]] = {
    "text": write_text,
    "concise": write_concise,
    "json": write_json,
    "sarif": write_sarif,
    "github": write_github,
    "junit": write_junit,
    "gitlab": write_gitlab,
}
FORMATS = tuple(WRITERS)  # what --format takes
# The formats people read: coloured, followed by the summary line (and --show-fixes, --confirm's summary), with
# --statistics as a table. The others are read by programs and carry nothing but their document.
HUMAN_FORMATS = ("text", "concise")


@dataclass(frozen=True)
class RuleCount:
    """One row of ``--statistics``."""

    code: str
    name: str
    count: int
    fixable_count: int
    unsafe_only_count: int = 0  # fixes only --unsafe-fixes applies (not counted in fixable_count without it)


def statistics(diagnostics: list[Diagnostic], unsafe: bool = False) -> list[RuleCount]:
    """Findings per rule, most first; ``fixable_count``: those ``--fix`` (``--unsafe-fixes``
    when ``unsafe``) would fix; ``unsafe_only_count``: those only ``--unsafe-fixes`` would."""
    counts: dict[tuple[str, str], list[int]] = {}
    for d in diagnostics:
        row = counts.setdefault((d.code, d.name), [0, 0, 0])
        row[0] += 1
        row[1] += d.fix is not None and (unsafe or d.fix.is_safe)
        row[2] += d.fix is not None and not unsafe and not d.fix.is_safe
    rows = [RuleCount(code, name, n, fixable, hidden) for (code, name), (n, fixable, hidden) in counts.items()]
    return sorted(rows, key=lambda r: (-r.count, r.code))


STATISTICS_FORMATS = (*HUMAN_FORMATS, "json")  # SARIF and GitHub annotations have no place for a table


def write_statistics(diagnostics: list[Diagnostic], out: TextIO, output_format: str = "text", unsafe: bool = False,
                     palette: Palette = PLAIN) -> None:
    """The ``--statistics`` report: a table (``HUMAN_FORMATS``), or a JSON list of {code, name, count,
    fixable, fixable_count} as ruff writes it."""
    rows = statistics(diagnostics, unsafe)
    if output_format == "json":
        json.dump([{"code": r.code, "name": r.name, "count": r.count, "fixable": r.fixable_count > 0,
                    "fixable_count": r.fixable_count} for r in rows], out, indent=2)
        out.write("\n")
        return
    for r in rows:
        marker = "[*] " if r.fixable_count else "[-] " if r.unsafe_only_count else ""
        out.write(f"{r.count:5d}\t{palette.paint(palette.code, r.code)}\t{marker}{r.name}\n")
    if any(r.fixable_count for r in rows):
        out.write(f"[*] fixable with `warplint --fix{' --unsafe-fixes' if unsafe else ''}`\n")
    if any(r.unsafe_only_count and not r.fixable_count for r in rows):
        out.write("[-] fixable with `warplint --fix --unsafe-fixes`\n")

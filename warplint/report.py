"""Output formats. They read Diagnostics and rule metadata; they never run rules.

Columns are 1-based in every output (the model keeps them 0-based).
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any, TextIO

from . import __version__
from .diagnostic import Diagnostic
from .registry import all_rules

DOCS_URL = "https://github.com/warplint/warplint/blob/main/docs/rules/{code}.md"
FORMATS = ("text", "concise", "json", "sarif", "github")


def rule_url(code: str) -> str:
    return DOCS_URL.format(code=code)


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


def _location(d: Diagnostic) -> str:
    return f"{shown_path(d.path)}:{d.span.line}:{d.span.col + 1}"


def _verdict(d: Diagnostic) -> str:
    if not d.confirm:
        return ""
    verdict = d.confirm.get("verdict", "")
    cost = d.confirm.get("cost_ms")
    return f" [{verdict}{f', +{cost:.0f} ms' if isinstance(cost, (int, float)) and cost else ''}]"


def write_concise(diagnostics: list[Diagnostic], out: TextIO, **_) -> None:
    for d in diagnostics:
        out.write(f"{_location(d)}: {d.code} {d.message}{_verdict(d)}\n")


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


def write_text(diagnostics: list[Diagnostic], out: TextIO, sources: Callable[[str], str | None], **_) -> None:
    split: dict[str, list[str]] = {}  # path -> lines, split once (not once per finding)
    for d in diagnostics:
        out.write(f"{_location(d)}: {d.code} [{d.name}] {d.message}{_verdict(d)}\n")
        if d.path not in split:
            text = sources(d.path)
            split[d.path] = text.splitlines() if text else []
        lines = split[d.path]
        if 0 < d.span.line <= len(lines):
            src = lines[d.span.line - 1].expandtabs(1)
            gutter = len(str(d.span.line))
            end = d.span.end_col if d.span.end_line == d.span.line else len(src.rstrip())
            src, col, end = _excerpt(src, d.span.col, end)
            width = max(1, end - col)
            out.write(f"{' ' * gutter} |\n")
            out.write(f"{d.span.line} | {src}\n")
            out.write(f"{' ' * gutter} | {' ' * col}{'^' * width} {d.code}\n")
            if d.confirm and d.confirm.get("evidence"):
                out.write(f"{' ' * gutter} = {d.confirm['verdict']}: {d.confirm['evidence']}\n")
            out.write(f"{' ' * gutter} = {d.mechanism}, confidence {d.confidence}; see `warplint rule {d.code}`\n")
        for r in d.related:
            out.write(f"  note: {r.message} at {shown_path(r.path)}:{r.span.line}:{r.span.col + 1}\n")
        out.write("\n")


def to_json_objects(diagnostics: Iterable[Diagnostic]) -> list[dict]:
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
            "url": rule_url(d.code),
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


def write_json(diagnostics: list[Diagnostic], out: TextIO, **_) -> None:
    json.dump(to_json_objects(diagnostics), out, indent=2, default=str)
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


def to_sarif(diagnostics: list[Diagnostic], root: str) -> dict:
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
            "helpUri": rule_url(r.code),
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


def write_sarif(diagnostics: list[Diagnostic], out: TextIO, root: str = ".", **_) -> None:
    json.dump(to_sarif(diagnostics, os.path.abspath(root)), out, indent=2, default=str)
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


WRITERS: dict[str, Callable[..., None]] = {
    "text": write_text,
    "concise": write_concise,
    "json": write_json,
    "sarif": write_sarif,
    "github": write_github,
}


def write_statistics(diagnostics: list[Diagnostic], out: TextIO) -> None:
    counts = Counter((d.code, d.name) for d in diagnostics)
    for (code, name), n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
        out.write(f"{n:5d}\t{code}\t{name}\n")

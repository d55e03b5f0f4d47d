"""Import statements read from a file's text, without parsing it.

Before a file is parsed (or when it never is) the engine and the module namer still need what it imports: which
project files to parse early, and which ``sys.path`` entry a project's imports spell. This reader is the one
place that reads them: per statement, the module named, the names imported and the relative level.

It reads the shapes Python accepts: statements at any indentation (inside ``if`` / ``try`` blocks),
``from . import x``, ``from .a import b``, a parenthesised list over several lines (with comments in it),
lines continued by a backslash, ``import a.b as c, d``, and statements after ``;``; and, last, the modules a call
``importlib.import_module("a.b")`` or ``__import__("a.b")`` imports by a literal name. A commented-out import is
not one. It does not know strings: a docstring line shaped like an import reads as one (a superset is what the
callers need).
"""

from __future__ import annotations

import keyword
import re
from collections.abc import Iterator
from typing import NamedTuple

from .names import resolve_relative

_SPACE = r"(?:[ \t]|\\\r?\n)"  # blanks, and line breaks escaped by a backslash
_HEAD = re.compile(
    rf"[ \t]*(?:from{_SPACE}+(\.*){_SPACE}*([\w.]*){_SPACE}*import(?=[ \t(\\])|import(?={_SPACE}))")
_CONTINUED = re.compile(r"\\\r?\n")
_BLANKS = re.compile(rf"{_SPACE}*")
_COMMENT = re.compile(r"#[^\n]*")
# `importlib.import_module("a.b")` / `__import__("a.b")` of a literal absolute name: Python imports `a.b` (and its
# parents) there as an import statement would
_DYNAMIC = re.compile(r"""\b(?:import_module|__import__)\(\s*(['"])([A-Za-z_][\w.]*)\1\s*[,)]""")


class ImportLine(NamedTuple):
    """One imported module: ``from ..a.b import c, d`` is ``ImportLine("a.b", ("c", "d"), 2)``; ``import a.b as
    c, d`` gives one per module, each without names."""

    module: str  # as written, without the leading dots ('' in ``from . import x``)
    names: tuple[str, ...]  # the names a ``from`` statement imports ('*' included); () for ``import a.b``
    level: int  # the leading dots: 0 for an absolute import

    def absolute(self, module: str, is_package: bool) -> str:
        """The module's absolute name, as written in the file of ``module`` (``is_package``: an ``__init__``)."""
        return resolve_relative(module, is_package, self.level, self.module or None)


def import_lines(text: str) -> Iterator[ImportLine]:
    """The imports of ``text`` in order. Only the lines holding the word are looked at (a regex tried at every
    line start took 4x as long on large files)."""
    position = text.find("import")
    while position != -1:
        line_start = _logical_start(text, text.rfind("\n", 0, position) + 1)
        head = _HEAD.match(text, line_start)
        if head is None:  # `x = 1; import y`: a statement after a semicolon
            semicolon = text.rfind(";", line_start, position)
            head = _HEAD.match(text, semicolon + 1) if semicolon != -1 else None
        end = position + 6
        while head is not None:
            found, end, more = _statement(text, head)
            yield from found
            head = _HEAD.match(text, end) if more else None
        line_end = _logical_end(text, end)
        position = -1 if line_end == len(text) else text.find("import", line_end)
    through_importlib = "importlib" in text  # `import_module` is importlib's only where the file imports it
    if through_importlib or "__import__(" in text:
        for match in _DYNAMIC.finditer(text):
            if through_importlib or match.group(0).startswith("__import__"):
                yield ImportLine(match.group(2), (), 0)


def _statement(text: str, head: re.Match[str]) -> tuple[list[ImportLine], int, bool]:
    """(what the statement ``head`` starts imports, where it ends, whether another statement follows after a
    semicolon)."""
    blanks = _BLANKS.match(text, head.end())
    body_start = blanks.end() if blanks is not None else head.end()
    from_import = head.group(1) is not None
    if from_import and text.startswith("(", body_start):
        close = _closing(text, body_start)
        end = len(text) if close == -1 else close + 1
        body = _COMMENT.sub("", text[body_start + 1:end - 1])
        rest = text[end:_logical_end(text, end)]
        more = rest.lstrip(" \t").startswith(";")
        end = end + rest.index(";") + 1 if more else end
    else:
        line_end = _logical_end(text, body_start)
        body = text[body_start:line_end].split("#", 1)[0]
        body, semicolon, _ = body.partition(";")
        more = bool(semicolon)
        end = body_start + len(body) + 1 if more else line_end
    items = [item.split() for item in _CONTINUED.sub(" ", body).split(",")]
    firsts = [words[0] for words in items if words]
    if not from_import:
        return [ImportLine(name, (), 0) for name in firsts if _dotted(name)], end, more
    dots, module = head.group(1), head.group(2)
    names = tuple(name for name in firsts if name == "*" or _identifier(name))
    if (module and not _dotted(module)) or not (dots or module):
        return [], end, more
    return [ImportLine(module, names, len(dots))], end, more


def _closing(text: str, position: int) -> int:
    """Where the parenthesis open at ``position`` closes (-1: never), past comments (``# helpers (X)``)."""
    while True:
        close = text.find(")", position)
        comment = text.find("#", position, close)
        if close == -1 or comment == -1:
            return close
        position = text.find("\n", comment)
        if position == -1:
            return -1


def _logical_start(text: str, line_start: int) -> int:
    """The start of the logical line holding ``line_start``: back over lines ending in a backslash."""
    while line_start > 0:
        previous = line_start - 1  # the "\n" ending the line before
        before = previous - 1 if previous > 0 and text[previous - 1] == "\r" else previous
        if before <= 0 or text[before - 1] != "\\":
            break
        line_start = text.rfind("\n", 0, before) + 1
    return line_start


def _logical_end(text: str, position: int) -> int:
    """The end of the logical line holding ``position`` (its "\\n", or the text's end), over backslashes."""
    end = text.find("\n", position)
    while end > 0 and (text[end - 1] == "\\" or text[end - 2:end] == "\\\r"):
        end = text.find("\n", end + 1)
    return len(text) if end == -1 else end


def _identifier(name: str) -> bool:
    return name.isidentifier() and not keyword.iskeyword(name)


def _dotted(name: str) -> bool:
    return all(_identifier(part) for part in name.split("."))

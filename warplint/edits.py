"""Building blocks for rule authors writing a fix: exact edits from the spans the model already has.

Every helper returns None when it cannot be exact (a string with escapes, an argument without a
position): a rule then offers no fix rather than a guess.
"""

from __future__ import annotations

from .diagnostic import Edit, Span
from .model import Call, Value

# The quote characters a string literal of ``len(value) + n`` code points has, by n: a prefix of 0-2
# letters (r, u, b, rb, ...) and quotes of 1 or 3 characters give each n a single reading.
_QUOTE_BY_EXTRA = {2: 1, 3: 1, 4: 1, 6: 3, 7: 3, 8: 3}


def string_content(literal: Span, value: str) -> Span | None:
    """The span of ``value``'s characters inside the one-line string literal at ``literal`` (``"max_unrol"``
    -> ``max_unrol``), when the literal holds exactly those characters (no escapes, no concatenation)."""
    if literal.line == 0 or literal.end_line != literal.line:
        return None
    quote = _QUOTE_BY_EXTRA.get(literal.end_col - literal.col - len(value))
    if quote is None:
        return None
    end = literal.end_col - quote
    return Span(literal.line, end - len(value), literal.line, end)


def attribute_name(expression: Span, name: str) -> Span | None:
    """The span of the attribute ``name`` that ends the attribute expression at ``expression``
    (``wp.config.mode_`` -> ``mode_``): an Attribute's last code points are its name."""
    if expression.line == 0 or expression.end_col < len(name):
        return None
    return Span(expression.end_line, expression.end_col - len(name), expression.end_line, expression.end_col)


def add_argument(call: Call, text: str) -> Edit | None:
    """An edit adding the argument ``text`` (``modules=[...]``) at the end of ``call``'s argument list:
    right after the last argument (a trailing comma or comment after it stays valid), or inside the
    parentheses of a call without arguments. None when an argument's position is not known."""
    if call.has_star_args or call.span.line == 0:
        return None
    given: list[Value] = [*call.args, *call.kwargs.values()]
    if not given:
        return Edit.insert(call.span.end_line, call.span.end_col - 1, text)  # before the closing parenthesis
    if any(v.span.line == 0 for v in given):
        return None
    last = max((v.span for v in given), key=lambda s: (s.end_line, s.end_col))
    return Edit.insert(last.end_line, last.end_col, f", {text}")


def replace(span: Span | None, text: str, expected: str | None = None) -> Edit | None:
    """Replace ``span`` (None or unknown: no edit) with ``text``; ``expected``: what it must hold."""
    return Edit(span, text, expected) if span is not None and span.line else None


def nearest_name(name: str, names: frozenset[str] | set[str], max_edits: int = 1) -> str | None:
    """The one name of ``names`` within ``max_edits`` single-character edits of ``name`` (insert, delete,
    substitute, swap two neighbours), the nearest; None when none is, or when two are equally near."""
    best: list[str] = []
    best_distance = max_edits + 1
    for candidate in names:
        if abs(len(candidate) - len(name)) > max_edits:
            continue
        distance = _edits(name, candidate, best_distance)
        if distance < best_distance:
            best, best_distance = [candidate], distance
        elif distance == best_distance:
            best.append(candidate)
    return best[0] if len(best) == 1 and best_distance <= max_edits else None


def _edits(a: str, b: str, bound: int) -> int:
    """Optimal string alignment distance between ``a`` and ``b`` (stops counting past ``bound``)."""
    previous2: list[int] = []
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        row = [i] + [0] * len(b)
        for j, cb in enumerate(b, 1):
            row[j] = min(previous[j] + 1, row[j - 1] + 1, previous[j - 1] + (ca != cb))
            if i > 1 and j > 1 and ca == b[j - 2] and a[i - 2] == cb:
                row[j] = min(row[j], previous2[j - 2] + 1)
        if min(row) > bound:
            return bound + 1
        previous2, previous = previous, row
    return previous[-1]

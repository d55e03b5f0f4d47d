"""Generated source with one long chain or deep nesting: the shapes that overflow recursive parsers.

``SHAPES[name](n)`` is a module whose chain has ``n`` links. Used by ``parse_limits.py``
(the thresholds in docs/robustness.md), ``fuzz.py`` and ``tests/test_parse_guard.py``.
"""

from __future__ import annotations

from collections.abc import Callable


def _expression(joiner: str, atom: str = "a") -> Callable[[int], str]:
    return lambda n: "x = " + joiner.join([atom] * (n + 1)) + "\n"


def _elif(n: int) -> str:
    return "if a:\n    pass\n" + "elif a:\n    pass\n" * n


def _nested_blocks(n: int) -> str:
    return "".join(" " * i + "if a:\n" for i in range(n)) + " " * n + "pass\n"


def _implicit_concatenation(n: int) -> str:
    return "x = (\n" + '    "a"\n' * (n + 1) + ")\n"


def _nested_fstrings(n: int) -> str:
    quotes = ["'", '"', "'''", '"""']
    inner = "1"
    for level in range(n):
        quote = quotes[level % len(quotes)]
        inner = f"f{quote}{{{inner}}}{quote}"
    return f"x = {inner}\n"


SHAPES: dict[str, Callable[[int], str]] = {
    "and": _expression(" and "),
    "or": _expression(" or "),
    "comparison": _expression(" < "),
    "plus": _expression(" + "),
    "power": _expression(" ** "),
    "elif": _elif,
    "attribute": lambda n: "x = a" + ".b" * n + "\n",
    "call": lambda n: "x = f" + "()" * n + "\n",
    "subscript": lambda n: "x = a" + "[0]" * n + "\n",
    "mixed trailers": lambda n: "x = a" + "".join((".b", "()", "[0]")[i % 3] for i in range(n)) + "\n",
    "lambda": lambda n: "x = " + "lambda: " * n + "0\n",
    "unary minus": lambda n: "x = " + "-" * n + "1\n",
    "not": lambda n: "x = " + "not " * n + "a\n",
    "if-else expression": lambda n: "x = " + "a if a else " * n + "a\n",
    "parentheses": lambda n: "x = " + "(" * n + "1" + ")" * n + "\n",
    "nested calls": lambda n: "x = " + "f(" * n + "1" + ")" * n + "\n",
    "nested lists": lambda n: "x = " + "[" * n + "1" + "]" * n + "\n",
    "implicit concatenation": _implicit_concatenation,
    "f-string fields": lambda n: "x = f'" + "{a}" * n + "'\n",
    "nested f-strings": _nested_fstrings,
    "nested blocks": _nested_blocks,
    "decorators": lambda n: "@d\n" * n + "def f():\n    pass\n",
    "assignment targets": lambda n: "a = " * n + "1\n",
    "statements": lambda n: "a = 1\n" * n,
}

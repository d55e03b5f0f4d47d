"""What LibCST's native parser may do with a text, decided before it sees the text.

The parser (Rust) recurses once per link of a chain -- ``a and b and ...``, ``a + b + ...``,
``elif`` after ``elif``, ``a.b.c...``, ``f()()...``, nested lambdas and brackets -- and a
long one overflows the C stack of the thread it runs on: a segfault that ends the whole
process, whatever ``except`` is around the call. docs/robustness.md has the measured
thresholds (``benchmarks/parse_limits.py``): about 1.2 KiB of stack per link, up to
~20 KiB per bracket level, so ~7,000 ``and``s overflow the 8 MiB of a main thread, ~420
the 512 KiB of a macOS worker thread.

``classify`` bounds the stack the parse of a text can need from its length (O(1): an
ordinary file never costs more) or, for large files, from counts of the characters and
keywords that make links; ``call_with_stack`` then runs the parse on a thread with that
much stack, whatever the calling thread has. Only what a stack of ``MAX_STACK`` may not
hold is ``ISOLATE``: to be parsed in a process that may die (``IN_SACRIFICIAL_PROCESS``).
``INVALID`` is only said when CPython itself rejects the text.
"""

from __future__ import annotations

import contextlib
import enum
import re
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

# Set by a worker process whose death costs one file: there an ISOLATE text is parsed anyway.
IN_SACRIFICIAL_PROCESS = False

MAX_STACK = 1 << 30  # the largest parser thread stack we reserve (address space; only touched pages cost)
_INLINE_STACK = 256 << 10  # needs this small fit any thread's stack: parse on the calling thread
_PYTHON_MAX_NESTING = 200  # CPython's tokenizer limit on open brackets (MAXLEVEL); LibCST has none

# C stack LibCST's parser needs, with ~30 % margin over what benchmarks/parse_limits.py
# measured (docs/robustness.md). A bracket level costs up to ~9 KiB (a generator argument),
# an open bracket alone too: unclosed ones recurse as deep before the error.
_BRACKET_LEVEL = 12 << 10
# Besides brackets, the costliest link per character any chain can have: a lambda is
# ~2.4 KiB per ``lambda:``, a unary ``-`` ~1 KiB per character, ``.b`` ~1.5 KiB.
_PER_CHARACTER = 3 << 10
# The module, its statements, and nested blocks: LibCST's tokenizer allows 100 levels
# of indentation, ~26 KiB each.
_BASE_STACK = 6 << 20
# For large texts, each character or keyword that can be a link at its own cost.
_CHARACTER_COST = {
    "-": 1536, "+": 1536, "~": 1536, "*": 1600, "/": 1600, "%": 1600, "@": 1600, "&": 1600, "|": 1600, "^": 1600,
    "<": 1600, ">": 1600, ".": 2 << 10, '"': 1 << 10, "'": 1 << 10, ":": 3200,  # every lambda has its colon
}
_KEYWORD_COST = {"and": 1600, "or": 1600, "not": 1536, "if": 2 << 10, "await": 1536}


class Kind(enum.Enum):
    SAFE = "safe"  # parse in this process (on a thread with ``Verdict.stack`` bytes of stack)
    INVALID = "invalid"  # CPython rejects the text: ``Verdict.reason`` says why
    ISOLATE = "isolate"  # may crash the parser: parse only where a crash costs one file


@dataclass(frozen=True)
class Verdict:
    kind: Kind
    reason: str = ""  # one line, for INVALID and ISOLATE
    stack: int = 0  # for SAFE: bytes of C stack the parse may need (an upper bound)


def classify(text: str) -> Verdict:
    """Whether LibCST's native parser can take ``text`` in this process.

    A few passes over the text for ordinary files, ~20 for large ones; never runs anything
    that can itself crash on the text (``ast.parse`` only on a thread sized for it)."""
    brackets = text.encode("utf-8", "surrogatepass").translate(None, _NOT_BRACKETS)
    openers = brackets.count(b"(") + brackets.count(b"[") + brackets.count(b"{")
    stack = _BASE_STACK + openers * _BRACKET_LEVEL + len(text) * _PER_CHARACTER
    if stack > MAX_STACK:
        stack = _counted_stack(text, openers)
    if openers > _PYTHON_MAX_NESTING and _may_nest_deeper_than_python(brackets):
        reason = cpython_rejects(text, stack)
        if reason is not None:
            return Verdict(Kind.INVALID, reason)
    if stack <= MAX_STACK:
        return Verdict(Kind.SAFE, stack=stack)
    reason = cpython_rejects(text, MAX_STACK)
    if reason is not None:
        return Verdict(Kind.INVALID, reason)
    limit = MAX_STACK >> 20
    return Verdict(Kind.ISOLATE, f"its chains may need up to {stack >> 20} MiB of parser stack (limit {limit} MiB)")


def _counted_stack(text: str, openers: int) -> int:
    """The stack bound from what the text holds: every link character or keyword at its
    cost (``or`` in ``for``, ``if`` in ``elif`` count too: loose but sound)."""
    stack = _BASE_STACK + openers * _BRACKET_LEVEL
    for character, cost in _CHARACTER_COST.items():
        stack += text.count(character) * cost
    for keyword, cost in _KEYWORD_COST.items():
        stack += text.count(keyword) * cost
    return stack


_NOT_BRACKETS = bytes(byte for byte in range(256) if byte not in b"()[]{}")
_PAIRS = (b"()", b"[]", b"{}")
_UNCLOSED_RUN = re.compile(rb"[(\[{]{%d}" % (_PYTHON_MAX_NESTING + 1))


def _may_nest_deeper_than_python(brackets: bytes) -> bool:
    """Whether the brackets (all of the text's, in order) may nest deeper than CPython
    allows: LibCST takes any depth and would model a file CPython rejects. Those in strings
    and comments count too: a false alarm only costs an ``ast.parse``, a miss only the
    syntax error LibCST does not see."""
    # Each pass removes the innermost pairs: one level per kind of bracket, so 1-3 levels.
    for _ in range(_PYTHON_MAX_NESTING // len(_PAIRS) + 1):
        before = len(brackets)
        for pair in _PAIRS:
            brackets = brackets.replace(pair, b"")
        if len(brackets) == before:  # what is left never closes (or mismatches): a run of openers?
            return _UNCLOSED_RUN.search(brackets) is not None
    return True


def cpython_rejects(text: str, stack: int) -> str | None:
    """CPython's reason for rejecting ``text`` (one line), or None when it parses.

    ``ast.parse`` recurses in C too; CPython 3.11+ bounds that recursion by a count
    (``RecursionError`` / ``MemoryError``, measured in docs/robustness.md), not by the
    stack left, so it runs on a fresh thread whose stack holds that count."""
    import ast

    def parse() -> str | None:
        try:
            ast.parse(text)
        except SyntaxError as exc:
            return f"syntax error: {exc.msg} (line {exc.lineno})"
        except RecursionError:
            return "syntax error: too deeply nested for CPython's parser"
        except MemoryError:  # CPython's depth guard for some chains (`**` x2,992), or a real memory limit
            return "not parsed: CPython's parser ran out of memory on it (nesting too deep, or the file-memory budget)"
        except ValueError as exc:  # source code string cannot contain null bytes
            return f"syntax error: {exc}"
        return None

    # CPython's C recursion bound scales with the recursion limit (x3, a few hundred bytes a level).
    needed = max(64 << 20, sys.getrecursionlimit() * 3 * 1024)
    return call_with_stack(min(max(stack, needed), MAX_STACK), parse)


_STACK_LOCK = threading.Lock()  # threading.stack_size is process-wide: set it, start, put it back


def call_with_stack(stack: int, function: Callable[..., Any], *args: Any) -> Any:
    """``function(*args)`` on a thread with at least ``stack`` bytes of C stack.

    Small needs run on the calling thread. Exceptions propagate; a KeyboardInterrupt in
    the caller leaves the (daemon) thread behind."""
    if stack <= _INLINE_STACK:
        return function(*args)
    outcome: list[Any] = []

    def run() -> None:
        try:
            outcome.append((True, function(*args)))
        except BaseException as exc:  # noqa: BLE001 - handed to the caller
            outcome.append((False, exc))

    stack = -(-stack // (1 << 20)) << 20  # whole MiB: some platforms want page multiples
    with _STACK_LOCK:
        previous = threading.stack_size(stack)
        try:
            worker = threading.Thread(target=run, name="warplint-parse", daemon=True)
            worker.start()
        except RuntimeError as exc:  # can't start new thread: no room for that stack
            raise MemoryError(f"no {stack >> 20} MiB thread stack: {exc}") from None
        finally:
            threading.stack_size(previous)
    worker.join()
    ok, value = outcome[0]
    if not ok:
        raise value
    return value


# ------------------------------------------------------------------ the traversal after the parse
# Python frames our traversal, LibCST's code generation and the rules' visitors use per
# level of the tree, at most (measured: see docs/robustness.md), with margin.
FRAMES_PER_LEVEL = 8


def tree_depth(tree: Any) -> int:
    """The depth of a LibCST tree, without recursion."""
    from .fastwalk import children

    deepest = 0
    stack = [(tree, 1)]
    while stack:
        node, depth = stack.pop()
        deepest = max(deepest, depth)
        stack.extend((child, depth + 1) for child in children(node))
    return deepest


def python_stack(frames: int) -> int:
    """C stack for ``frames`` nested Python calls: none since 3.11, whose Python-to-Python
    calls do not recurse in C; before that about a KiB each."""
    return 0 if sys.version_info >= (3, 11) else frames * 1024


@contextlib.contextmanager
def recursion_room(frames: int) -> Iterator[None]:
    """The recursion limit raised by ``frames`` for the duration (it is process-wide: put
    back unless someone else changed it meanwhile)."""
    previous = sys.getrecursionlimit()
    raised = previous + frames
    sys.setrecursionlimit(raised)
    try:
        yield
    finally:
        if sys.getrecursionlimit() == raised:
            sys.setrecursionlimit(previous)

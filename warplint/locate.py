"""Source positions for a chosen few nodes, without LibCST's PositionProvider.

PositionProvider records a position for every node of the tree and tracks line and
column on every token, which costs about twice the parse itself. We only need the
positions of nodes we might report, so we run the plain code generator once, note
the token index where each chosen node starts and ends, and convert just those
indices into (line, column) afterwards.
"""

from __future__ import annotations

from typing import Iterable

import libcst as cst
from libcst._nodes.internal import CodegenState

from .diagnostic import Span


class _Nothing:
    __slots__ = ()

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc) -> None:
        return None


_NOTHING = _Nothing()


class _Mark:
    __slots__ = ("state", "node_id", "start")

    def __init__(self, state: "_MarkingState", node_id: int) -> None:
        self.state = state
        self.node_id = node_id

    def __enter__(self) -> None:
        self.start = len(self.state.tokens)

    def __exit__(self, *exc) -> None:
        if exc[0] is None:
            self.state.marks[self.node_id] = (self.start, len(self.state.tokens))


class _MarkingState(CodegenState):
    def __init__(self, module: cst.Module, targets: set[int]) -> None:
        super().__init__(default_indent=module.default_indent, default_newline=module.default_newline)
        self.targets = targets
        self.marks: dict[int, tuple[int, int]] = {}

    def record_syntactic_position(self, node, *, start_node=None, end_node=None):
        # Called for most nodes: a shared no-op context for the others (a generator-based
        # context manager per node cost a third of the codegen pass).
        if id(node) in self.targets:
            return _Mark(self, id(node))
        return _NOTHING


def locate(module: cst.Module, nodes: Iterable[cst.CSTNode]) -> dict[int, Span]:
    """Map ``id(node)`` to its Span for each node of ``nodes`` found in ``module``."""
    targets = {id(n) for n in nodes}
    if not targets:
        return {}
    state = _MarkingState(module, targets)
    module._codegen(state)
    tokens = state.tokens

    # Every mark boundary, converted to (line, col) in one sweep over the tokens.
    wanted: set[int] = set()
    for start, end in state.marks.values():
        wanted.add(start)
        wanted.add(end)
    positions: dict[int, tuple[int, int]] = {}
    line, col, prev = 1, 0, 0
    for index in sorted(wanted):
        if index > prev:
            chunk = "".join(tokens[prev:index])
            newlines = chunk.count("\n")
            if newlines:
                line += newlines
                col = len(chunk) - chunk.rfind("\n") - 1
            else:
                col += len(chunk)
            prev = index
        positions[index] = (line, col)

    spans: dict[int, Span] = {}
    for node_id, (start, end) in state.marks.items():
        s_line, s_col = positions[start]
        # Skip whitespace, newlines and comments the node emits before its first real token.
        i = start
        while i < end:
            tok = tokens[i]
            stripped = tok.strip()
            if stripped and not stripped.startswith("#"):
                lead = len(tok) - len(tok.lstrip())
                nl = tok[:lead].count("\n")
                if nl:
                    s_line += nl
                    s_col = lead - tok[:lead].rfind("\n") - 1
                else:
                    s_col += lead
                break
            nl = tok.count("\n")
            if nl:
                s_line += nl
                s_col = len(tok) - tok.rfind("\n") - 1
            else:
                s_col += len(tok)
            i += 1
        e_line, e_col = positions[end]
        # Trailing whitespace/newlines emitted by the node are not part of it.
        j = end
        while j > i:
            tok = tokens[j - 1]
            if tok.strip() and not tok.strip().startswith("#"):
                trail = len(tok) - len(tok.rstrip())
                if trail:
                    seg = tok[len(tok) - trail:]
                    nl = seg.count("\n")
                    if nl:
                        e_line -= nl
                        # column = length of the line up to the token end: recompute below
                        e_col = None  # type: ignore[assignment]
                    else:
                        e_col -= trail
                break
            nl = tok.count("\n")
            e_line -= nl
            e_col = None  # type: ignore[assignment]
            j -= 1
        if e_col is None:
            # Recompute the column of token index j (end of last real token).
            chunk = "".join(tokens[max(0, j - 200):j]).rstrip()
            last_nl = chunk.rfind("\n")
            if last_nl >= 0:
                e_col = len(chunk) - last_nl - 1
            else:
                # Long line: fall back to the full prefix (rare).
                full = "".join(tokens[:j]).rstrip()
                e_col = len(full) - full.rfind("\n") - 1
        spans[node_id] = Span(s_line, s_col, e_line, e_col)
    return spans

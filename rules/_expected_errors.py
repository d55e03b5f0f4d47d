"""Shared by WC104/WC302: `with pytest.raises(...)` / `assertRaises` blocks, where code
is expected to fail on purpose (tests of Warp's own errors). Not a rule itself."""

from __future__ import annotations

import libcst as cst

from warplint.locate import PositionedVisitor

_EXPECTS_ERROR = ("raises", "assertRaises", "assertRaisesRegex")


class ExpectedErrorBlocks(PositionedVisitor):
    """Line ranges of `with pytest.raises(...)` / `with self.assertRaises(...)` blocks."""

    def __init__(self) -> None:
        self._blocks: list[cst.With] = []

    def visit_With(self, node: cst.With) -> None:
        for item in node.items:
            call = item.item
            if isinstance(call, cst.Call):
                func = call.func
                name = func.attr.value if isinstance(func, cst.Attribute) else getattr(func, "value", "")
                if name in _EXPECTS_ERROR:
                    self._blocks.append(node)
                    return

    @property
    def facts(self) -> list[tuple[int, int]]:
        if not self._blocks:
            return []
        spans = self.positions.spans(self._blocks)
        return [(s.line, s.end_line) for s in (spans.get(id(b)) for b in self._blocks) if s]


def inside(blocks, line: int) -> bool:
    return any(start <= line <= end for start, end in blocks)

"""Shared by WC104/WC302: `with pytest.raises(...)` / `assertRaises` blocks, where code
is expected to fail on purpose (tests of Warp's own errors). Not a rule itself."""

from __future__ import annotations

import libcst as cst

from warplint.locate import locate

_EXPECTS_ERROR = ("raises", "assertRaises", "assertRaisesRegex")


class ExpectedErrorBlocks(cst.CSTVisitor):
    """Line ranges of `with pytest.raises(...)` / `with self.assertRaises(...)` blocks."""

    def __init__(self) -> None:
        self.facts: list[tuple[int, int]] = []
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

    def leave_Module(self, original_node: cst.Module) -> None:
        if self._blocks:
            spans = locate(original_node, self._blocks)
            self.facts = [(s.line, s.end_line) for s in (spans.get(id(b)) for b in self._blocks) if s]



def inside(blocks, line: int) -> bool:
    return any(start <= line <= end for start, end in blocks)

"""The rebuild-free traversal must be indistinguishable from LibCST's own ``visit``."""

from __future__ import annotations

import glob
import os

import libcst as cst
import pytest

from warplint.engine import rule_visitors
from warplint.extract import Extractor, _Batched, extract
from warplint.fastwalk import children, walk
from warplint.locate import PositionedVisitor, Positions
from warplint.model import FileModel
from warplint.registry import all_rules

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

SAMPLES = [
    "x = f'{a!r:>{width}} {b} {c=}'\ny = f'{d}'\n",
    "from m import *\nfrom .n import (a as b, c)\nimport p.q as r\n",
    "@wp.kernel(module='unique')\n# c\n@other\ndef k(a: wp.array(dtype=float)):\n    i = wp.tid()\n    a[i] = 1.0\n",
    "try:\n    pass\nexcept (A, B) as e:\n    raise\nelse:\n    x = 1\nfinally:\n    y = 2\n",
    "async def f():\n    async with a as b, c:\n        await d\n    async for x in y:\n        yield x\n",
    "match p:\n    case [1, *rest] if rest:\n        pass\n    case {'k': v, **kw}:\n        pass\n"
    "    case C(x=1) | D():\n        pass\n",
    "lambda x, /, y=1, *a, z, **k: (x, y)\nclass C(B, metaclass=M):\n    a: int = 1\n"
    "    def m(self): return self.a[1:2, ::3]\n",
    "if a:\n    pass\nelif b:\n    pass\nelse:\n    while c:\n        break\n    for i in r:\n        continue\n",
]


def _files() -> list[str]:
    found = sorted(glob.glob(os.path.join(ROOT, "tests", "fixtures", "**", "*.py"), recursive=True))
    corpus = os.path.join(ROOT, ".cache", "corpora", "warp-lang", "warp", "_src")
    found += sorted(glob.glob(os.path.join(corpus, "*.py")))[:8]  # only when fetched
    return found


def _sources() -> list[tuple[str, str]]:
    sources = [(f"sample{i}.py", s) for i, s in enumerate(SAMPLES)]
    for path in _files():
        with open(path, encoding="utf-8") as fh:
            sources.append((os.path.relpath(path, ROOT), fh.read()))
    return sources


class _Recorder(cst.CSTVisitor):
    def __init__(self) -> None:
        self.events: list[tuple] = []

    def on_visit(self, node: cst.CSTNode) -> bool:
        self.events.append(("visit", id(node)))
        return True

    def on_leave(self, original_node: cst.CSTNode) -> None:
        self.events.append(("leave", id(original_node)))

    def on_visit_attribute(self, node: cst.CSTNode, attribute: str) -> None:
        self.events.append(("visit_attr", id(node), attribute))

    def on_leave_attribute(self, original_node: cst.CSTNode, attribute: str) -> None:
        self.events.append(("leave_attr", id(original_node), attribute))


@pytest.mark.parametrize("name,source", _sources(), ids=lambda v: v if isinstance(v, str) and len(v) < 80 else "")
def test_same_events_as_libcst(name: str, source: str) -> None:
    tree = cst.parse_module(source)
    expected, got = _Recorder(), _Recorder()
    tree.visit(expected)
    walk(tree, got)
    assert got.events == expected.events


@pytest.mark.parametrize("name,source", _sources(), ids=lambda v: v if isinstance(v, str) and len(v) < 80 else "")
def test_same_model_as_libcst_visit(name: str, source: str) -> None:
    tree = cst.parse_module(source)
    slow = FileModel(path=name, module="m")
    positions = Positions(tree, source)
    extractor = Extractor(tree, slow, positions)
    visitors = [v for _, v in rule_visitors(all_rules().values())]
    for v in visitors:
        if isinstance(v, PositionedVisitor):
            v.positions = positions
    tree.visit(_Batched([extractor, *visitors, positions]))
    extractor.finish()
    slow_facts = [getattr(v, "facts", None) for v in visitors]

    fast = FileModel(path=name, module="m")
    visitors = [v for _, v in rule_visitors(all_rules().values())]
    extract(tree, fast, visitors, source)
    assert fast == slow
    assert [getattr(v, "facts", None) for v in visitors] == slow_facts


def test_children_match() -> None:
    tree = cst.parse_module(SAMPLES[0] + SAMPLES[2] + SAMPLES[5])

    class All(cst.CSTVisitor):
        def on_visit(self, node: cst.CSTNode) -> bool:
            assert [id(c) for c in children(node)] == [id(c) for c in node.children]
            return True

    tree.visit(All())


def test_pruning_and_stub_skipping() -> None:
    """A ``visit_*`` returning False prunes (single visitor), LibCST's no-op stubs are skipped."""
    tree = cst.parse_module("def f():\n    g(1)\nh(2)\n")

    class Calls(cst.CSTVisitor):
        def __init__(self) -> None:
            self.seen: list[str] = []

        def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
            return False

        def visit_Call(self, node: cst.Call) -> None:
            self.seen.append(cst.Module([]).code_for_node(node.func))

    slow, fast = Calls(), Calls()
    tree.visit(slow)
    walk(tree, fast)
    assert fast.seen == slow.seen == ["h"]

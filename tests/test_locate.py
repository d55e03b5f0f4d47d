"""Positions from the marked code-generation pass equal LibCST's PositionProvider."""

import glob
import os

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, PositionProvider

from warplint.locate import locate

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures")
# The node types the extractor asks positions for (and a few more).
KINDS = (cst.Call, cst.Name, cst.Attribute, cst.FunctionDef, cst.Decorator, cst.Assign, cst.Try, cst.ExceptHandler,
         cst.Import, cst.ImportFrom, cst.Arg, cst.Param, cst.SimpleString, cst.Integer, cst.WithItem, cst.Subscript)


def _sources():
    files = sorted(glob.glob(os.path.join(FIXTURES, "**", "*.py"), recursive=True))
    import warp  # a large real code base: Warp's own context module and a test file with odd syntax

    root = os.path.dirname(warp.__file__)
    files += [os.path.join(root, "_src", "context.py"), os.path.join(root, "tests", "test_codegen.py")]
    return [f for f in files if os.path.isfile(f) and os.path.getsize(f) > 0]


@pytest.mark.parametrize("path", _sources(), ids=os.path.basename)
def test_locate_matches_position_provider(path):
    with open(path, encoding="utf-8") as fh:
        module = cst.parse_module(fh.read())
    expected = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    nodes = [n for n in expected if isinstance(n, KINDS)]
    assert nodes
    spans = locate(module, nodes)
    wrong = []
    for n in nodes:
        r, s = expected[n], spans.get(id(n))
        if s is None or (s.line, s.col, s.end_line, s.end_col) != (r.start.line, r.start.column, r.end.line, r.end.column):
            wrong.append((type(n).__name__, s, r))
    assert not wrong, wrong[:5]

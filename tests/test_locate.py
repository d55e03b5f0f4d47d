"""Positions (from ``ast``, paired by ordinal) and the code-generation fallback both
equal LibCST's PositionProvider; and the ``ast`` path is the one actually taken."""

import glob
import os

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, PositionProvider

from warplint.fastwalk import walk
from warplint.locate import Positions, locate_by_codegen

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures")
# The node types the extractor and rules ask positions for (and a few more).
KINDS = (cst.Call, cst.Name, cst.Attribute, cst.FunctionDef, cst.Decorator, cst.Assign, cst.Try, cst.ExceptHandler,
         cst.Import, cst.ImportFrom, cst.Arg, cst.Param, cst.SimpleString, cst.Integer, cst.WithItem, cst.Subscript,
         cst.With, cst.List, cst.Tuple, cst.Dict, cst.Float, cst.BinaryOperation, cst.UnaryOperation, cst.Comparison,
         cst.IfExp, cst.Lambda, cst.ListComp, cst.FormattedString, cst.ConcatenatedString, cst.ClassDef)

# Shapes where LibCST and ast disagree about what a node is or where it starts.
TRICKY = '''\
import os, a.b as c
from . import (x as y)
from a.b import *
def \\
    spaced(p: "int" = (1, 2), *a, k=(  # comment
        3,
    ), **kw) -> None:
    global g
    del a, kw
    del (p, k)
    return p[1, 2], p[(1, 2)], p[1:2, ::3], p[1,], x[()]
async  def  coro():
    async with open(a) as (b, c), open(d):
        await e
    with (open(x) as f, open(y) as g):
        pass
    with (open(z)) as h:
        pass
@dec(1)
@other.attr
class K(Base, metaclass=Meta):
    "doc" 'string' f"{x!r:>{width}} {y=}" "tail"
    v = f"{ f'{inner}' }" + f"{d['k']}"
    w = True or None and not False or ...
    t = lambda q=1, *r: (q, r)
    u = [z for z in range(3) if z], {k: v for k, v in {}.items()}, {1, 2}
    n = -1 + 2j - 3.5e3 if a < b <= c else b"bytes"
    o = (a or b) or c and d and (e and f) and h or g or i
try:
    pass
except (ValueError, KeyError) as err:
    pass
try:
    pass
except* OSError:
    pass
match cmd:
    case Point(x=0, y=yy) if yy: pass
    case [1, *rest]: pass
    case {"k": v, **others}: pass
    case None | True: pass
    case str() as s: pass
x = (y := 3), é.ü(ñ="ß")\t# tab and non-ASCII before this comment
s = "a"\r\nt = [\r\n  1,\r\n]\r\n
\x0cff = 1
'''


def _sources():
    files = sorted(glob.glob(os.path.join(FIXTURES, "**", "*.py"), recursive=True))
    import warp  # a large real code base: Warp's own context module and a test file with odd syntax

    root = os.path.dirname(warp.__file__)
    files += [os.path.join(root, "_src", "context.py"), os.path.join(root, "tests", "test_codegen.py")]
    sources = []
    for f in files:
        if os.path.isfile(f) and os.path.getsize(f) > 0:
            with open(f, encoding="utf-8", newline="") as fh:
                sources.append(pytest.param(fh.read(), id=os.path.basename(f)))
    return [pytest.param(TRICKY, id="tricky"), *sources]


def _expected(module: cst.Module):
    positions = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    return {id(n): (r.start.line, r.start.column, r.end.line, r.end.column)
            for n, r in positions.items() if isinstance(n, KINDS)}, [n for n in positions if isinstance(n, KINDS)]


def _wrong(nodes, spans, expected):
    wrong = []
    for n in nodes:
        s = spans.get(id(n))
        if s is None or (s.line, s.col, s.end_line, s.end_col) != expected[id(n)]:
            wrong.append((type(n).__name__, s, expected[id(n)]))
    return wrong


@pytest.mark.parametrize("source", _sources())
def test_codegen_fallback_matches_position_provider(source):
    module = cst.parse_module(source)
    expected, nodes = _expected(module)
    assert nodes
    assert not (wrong := _wrong(nodes, locate_by_codegen(module, nodes), expected)), wrong[:5]


@pytest.mark.parametrize("source", _sources())
def test_positions_match_position_provider(source):
    module = cst.parse_module(source)
    expected, nodes = _expected(module)
    positions = Positions(module, source)
    walk(module, positions)
    assert not (wrong := _wrong(nodes, positions.spans(nodes), expected)), wrong[:5]


@pytest.mark.parametrize("source", _sources()[1:])  # tricky.py has fallbacks on purpose
def test_positions_come_from_ast(source, monkeypatch):
    """Nodes with an ast twin are positioned without the code generator (the point of
    Positions); only nodes inside f-strings may fall back, on Pythons before 3.12."""
    import warplint.locate as locate_module

    module = cst.parse_module(source)
    positions = Positions(module, source)
    walk(module, positions)
    twins = [n for kind, found in positions.seen.items() for n in found if n is not None]
    twins += [fn.name for fn in positions.seen.get("FunctionDef", ())]
    from_codegen: list = []
    real = locate_module.locate_by_codegen
    monkeypatch.setattr(locate_module, "locate_by_codegen",
                        lambda m, nodes: (from_codegen.extend(nodes), real(m, nodes))[1])
    positions.spans(twins)
    exact = locate_module._FSTRING_POSITIONS_EXACT
    unexpected = [n for n in from_codegen if id(n) not in positions.in_fstring or exact]
    assert not unexpected, [(type(n).__name__, module.code_for_node(n)[:40]) for n in unexpected[:5]]

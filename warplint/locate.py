"""Source positions for the nodes we might report, without LibCST's PositionProvider.

LibCST nodes carry no positions, and anything that walks LibCST's code generator
(PositionProvider, or our marked pass ``locate_by_codegen``) costs about as much again
as the parse. CPython's own parser positions every expression and statement at C
speed, so positions come from ``ast``: a CST node and its ``ast`` twin are paired by
ordinal within their kind -- the n-th ``Call`` met in LibCST's lexical traversal is
the n-th ``ast.Call`` in source order.

``Positions`` is a visitor that runs in the engine's single traversal and lists the
nodes of each paired kind as it meets them, leaving out the LibCST nodes ``ast`` has
no twin for (the ``Name`` of an attribute or a keyword, the parts of ``"a" "b"``) and
counting the twins only ``ast`` has (the tuple in ``x[i, j]``). Where the pairing is
not exact for a file -- the counts of a kind differ, a paired name differs, a node
inside an f-string on a Python that misplaces those, syntax this Python cannot parse
-- the nodes asked for go through ``locate_by_codegen`` instead. Either way the
positions are LibCST's own: ``tests/test_locate.py`` checks both against
PositionProvider.
"""

from __future__ import annotations

import ast
import bisect
import re
import sys
from collections.abc import Iterable
from typing import Any, overload

import libcst as cst
from libcst._nodes.internal import CodegenState

from .diagnostic import Span

# LibCST class name -> pairing kind, and ast class -> pairing kind.
_SAME_NAME = ("Call", "Attribute", "Subscript", "List", "Tuple", "Set", "Dict", "ListComp", "SetComp", "DictComp",
              "IfExp", "Lambda", "Import", "ImportFrom", "Try", "With", "ClassDef", "FunctionDef", "ExceptHandler")
_CST_KIND = {name: name for name in _SAME_NAME}
_CST_KIND.update({
    "BinaryOperation": "BinOp", "BooleanOperation": "BoolOp", "UnaryOperation": "UnaryOp", "Comparison": "Compare",
    "TryStar": "TryStar", "ExceptStarHandler": "ExceptHandler", "FormattedString": "JoinedStr",
    "Integer": "Constant", "Float": "Constant", "Imaginary": "Constant", "Ellipsis": "Constant",
    "SimpleString": "Constant",
})  # Name and ConcatenatedString: the kind depends on the node (``_kind_of``)
_AST_KIND: dict[type, str] = {getattr(ast, name): name for name in _SAME_NAME}
_AST_KIND.update({
    ast.BinOp: "BinOp", ast.BoolOp: "BoolOp", ast.UnaryOp: "UnaryOp", ast.Compare: "Compare", ast.Constant: "Constant",
    ast.Name: "Name", ast.JoinedStr: "JoinedStr", ast.AsyncWith: "With", ast.AsyncFunctionDef: "FunctionDef",
})
if hasattr(ast, "TryStar"):
    _AST_KIND[ast.TryStar] = "TryStar"
# Fields whose Names ast keeps as plain strings (or not at all): these Names have no twin.
_NAME_FIELDS_WITHOUT_TWIN = (
    ("Attribute", "attr"), ("FunctionDef", "name"), ("ClassDef", "name"), ("Param", "name"), ("Arg", "keyword"),
    ("ImportFrom", "module"), ("ImportFrom", "names"), ("Import", "names"), ("ExceptHandler", "name"),
    ("ExceptStarHandler", "name"), ("Global", "names"), ("Nonlocal", "names"), ("MatchAs", "name"),
    ("MatchStar", "name"), ("MatchMapping", "rest"), ("MatchKeywordElement", "key"), ("MatchSingleton", "value"),
    ("TypeVar", "name"), ("ParamSpec", "name"), ("TypeVarTuple", "name"),
)
# f-strings (and 3.14's t-strings): their literal parts, and the format spec of a
# replacement field, are ast nodes but only parts of the string node in LibCST.
_STRING_TEMPLATES = frozenset(getattr(ast, name) for name in ("JoinedStr", "TemplateStr") if hasattr(ast, name))
_REPLACEMENT_FIELDS = frozenset(getattr(ast, n) for n in ("FormattedValue", "Interpolation") if hasattr(ast, n))
_CONSTANT_NAMES = frozenset({"True", "False", "None"})  # Names in LibCST, Constants in ast
# Before 3.12 CPython parsed f-string contents separately and could misplace the nodes inside.
_FSTRING_POSITIONS_EXACT = sys.version_info >= (3, 12)
_DEF_KEYWORDS = re.compile(r"(?:async(?:[ \t\f]|\\\r?\n)+)?def(?:[ \t\f]|\\\r?\n)+")
_NEWLINE = re.compile(r"\r\n|\r|\n")
_WHITESPACE = " \t\f\r\n"


class Positions(cst.CSTVisitor):
    """Positions for the CST nodes of one file.

    Run it in the traversal of ``module`` (it only records), then ask ``spans(nodes)``
    for any nodes of the module, as often as needed.
    """

    def __init__(self, module: cst.Module, text: str) -> None:
        self.module = module
        self.text = text
        self.seen: dict[str, list[Any]] = {}  # kind -> CST nodes in lexical order (None: a twin only ast has)
        self._no_twin_names = 0  # > 0 inside a field whose Names have no ast twin
        self._in_concatenation = [False]  # the parts of "a" "b" have no twins (ast has one string)
        self._fstring_depth = 0
        self.in_fstring: set[int] = set()
        self._unparenthesized_del_tuples: set[int] = set()
        self._flattened: set[int] = set()
        self._with_items: dict[int, tuple[cst.With, int]] = {}
        self._function_names: dict[int, cst.FunctionDef] = {}
        self._ast_nodes: dict[str, list[ast.AST]] | None = None
        self._sorted: set[str] = set()
        self._ordinals: dict[str, dict[int, int]] = {}
        self._line_starts: list[int] | None = None
        self._form_feeds: frozenset[int] | None = None
        self._ast_failed = False
        self._computed: dict[int, Span] = {}

    def _see(self, kind: str, node: Any) -> None:
        found = self.seen.get(kind)
        if found is None:
            found = self.seen[kind] = []
        found.append(node)
        if self._fstring_depth:
            self.in_fstring.add(id(node))

    # ------------------------------------------------------------------ traversal (special kinds)
    def visit_Name(self, node: cst.Name) -> None:
        if not self._no_twin_names:
            self._see(_kind_of(node), node)

    def visit_SimpleString(self, node: cst.SimpleString) -> None:
        if not self._in_concatenation[-1]:
            self._see("Constant", node)

    def visit_FormattedString(self, node: cst.FormattedString) -> None:
        if not self._in_concatenation[-1]:
            self._see("JoinedStr", node)
        self._fstring_depth += 1

    def leave_FormattedString(self, original_node: cst.FormattedString) -> None:
        self._fstring_depth -= 1

    def visit_ConcatenatedString(self, node: cst.ConcatenatedString) -> None:
        if not self._in_concatenation[-1]:
            self._see(_kind_of(node), node)
        self._in_concatenation.append(True)

    def leave_ConcatenatedString(self, original_node: cst.ConcatenatedString) -> None:
        self._in_concatenation.pop()

    def visit_FormattedStringExpression(self, node: cst.FormattedStringExpression) -> None:
        self._in_concatenation.append(False)  # strings inside {...} are strings of their own

    def leave_FormattedStringExpression(self, original_node: cst.FormattedStringExpression) -> None:
        self._in_concatenation.pop()

    def visit_Subscript_slice(self, node: cst.Subscript) -> None:
        elements = node.slice
        if len(elements) > 1 or (elements and isinstance(elements[0].comma, cst.Comma)):
            self._see("Tuple", None)  # ast: x[i, j] subscripts with Tuple(i, j)

    def visit_Del(self, node: cst.Del) -> None:
        if isinstance(node.target, cst.Tuple) and not node.target.lpar:
            self._unparenthesized_del_tuples.add(id(node.target))  # ast: `del a, b` has no Tuple

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if not self._no_twin_names:  # `import a.b` / `from a.b import c`: no ast twin
            self._see("Attribute", node)

    def visit_With(self, node: cst.With) -> None:
        self._see("With", node)
        for index, item in enumerate(node.items):
            self._with_items[id(item)] = (node, index)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._see("FunctionDef", node)
        self._function_names[id(node.name)] = node

    def visit_BooleanOperation(self, node: cst.BooleanOperation) -> None:
        if id(node) not in self._flattened:
            self._see("BoolOp", node)
        left = node.left
        if isinstance(left, cst.BooleanOperation) and type(left.operator) is type(node.operator) and not left.lpar:
            self._flattened.add(id(left))  # ast: `a or b or c` is one BoolOp

    def visit_Tuple(self, node: cst.Tuple) -> None:
        if id(node) not in self._unparenthesized_del_tuples:
            self._see("Tuple", node)

    def _no_twins(self, node: cst.CSTNode) -> None:
        self._no_twin_names += 1

    def _twins_again(self, node: cst.CSTNode) -> None:
        self._no_twin_names -= 1

    # ------------------------------------------------------------------ lookup
    def spans(self, nodes: Iterable[cst.CSTNode]) -> dict[int, Span]:
        """Map ``id(node)`` to its Span for each of ``nodes`` (nodes of this module)."""
        found: dict[int, Span] = {}
        misses: list[cst.CSTNode] = []
        for node in nodes:
            key = id(node)
            span = self._computed.get(key)
            if span is None:
                span = self._from_ast(node)
                if span is None:
                    misses.append(node)
                    continue
                self._computed[key] = span
            found[key] = span
        if misses:
            spans = locate_by_codegen(self.module, misses)
            self._computed.update(spans)
            found.update(spans)
        return found

    def _from_ast(self, node: cst.CSTNode) -> Span | None:
        if id(node) in self._function_names:
            return self.function_name(self._function_names[id(node)])
        if isinstance(node, cst.WithItem):
            return self._with_item(node)
        kind = _kind_of(node)
        if kind is None:
            return None
        twin = self._twin(kind, node)
        if twin is None:
            return None
        if kind == "Tuple" and node.lpar:  # type: ignore[attr-defined]
            return self._inside_parentheses(twin)
        span = self._span(twin)
        # Python < 3.12 computes the positions inside f-strings by hand; keep one only if the
        # source there reads exactly as the node (small: one expression's code generation).
        if (
            span is not None
            and id(node) in self.in_fstring
            and not _FSTRING_POSITIONS_EXACT
            and (getattr(node, "lpar", None) or self._source(span) != self.module.code_for_node(node))
        ):
            return None
        return span

    def _source(self, span: Span) -> str:
        return self.text[self._offset(span.line, span.col):self._offset(span.end_line, span.end_col)]

    def _offset(self, line: int, col: int) -> int:
        return self._starts()[line - 1] + col

    def _inside_parentheses(self, twin: ast.AST) -> Span | None:
        """ast's span of a parenthesized tuple includes one pair of parentheses, LibCST's
        none: step inside them, over whitespace (around comments and line continuations,
        leave it to the fallback)."""
        outer = self._span(twin)
        if outer is None:
            return None
        begin, end = self._offset(outer.line, outer.col), self._offset(outer.end_line, outer.end_col)
        text = self.text
        if text[begin:begin + 1] != "(" or text[end - 1:end] != ")":
            return None
        inner = text[begin + 1:end - 1]
        first = begin + 1 + (len(inner) - len(inner.lstrip(_WHITESPACE)))
        last = end - 1 - (len(inner) - len(inner.rstrip(_WHITESPACE)))
        if first < last and (text[first] in "#\\" or text[last - 1] == "\\"):
            return None
        if "\n" in text[last:end] or "\r" in text[last:end]:
            # the tuple ends on an earlier line than its `)`: that line may end in a comment
            line_start = text.rfind("\n", 0, last) + 1
            if "#" in text[line_start:last]:
                return None
        line, col = self._line_col(first)
        end_line, end_col = self._line_col(last)
        return Span(line, col, end_line, end_col)

    def _line_col(self, offset: int) -> tuple[int, int]:
        starts = self._starts()
        line = bisect.bisect_right(starts, offset)
        return line, offset - starts[line - 1]

    def _twin(self, kind: str, node: cst.CSTNode) -> ast.AST | None:
        ordinals = self._ordinals.get(kind)
        if ordinals is None:
            twins = self._twins(kind)
            listed = self.seen.get(kind, [])
            if twins is None or len(twins) != len(listed):
                ordinals = {}
            else:
                ordinals = {id(n): i for i, n in enumerate(listed) if n is not None}
            self._ordinals[kind] = ordinals
        index = ordinals.get(id(node))
        if index is None:
            return None
        twin = self._ast_nodes[kind][index]  # type: ignore[index]
        if kind == "Name" and twin.id != node.value:  # type: ignore[attr-defined, union-attr]
            return None
        if kind == "Attribute" and twin.attr != node.attr.value:  # type: ignore[attr-defined, union-attr]
            return None
        if kind in ("FunctionDef", "ClassDef") and twin.name != node.name.value:  # type: ignore[attr-defined, union-attr]
            return None
        return twin

    def _twins(self, kind: str) -> list[ast.AST] | None:
        """The ast nodes of ``kind`` in source order (outer before inner at the same start)."""
        if self._ast_failed:
            return None
        if self._ast_nodes is None:
            try:
                tree = ast.parse(self.text)
            except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError):
                self._ast_failed = True
                return None
            self._ast_nodes = _ast_buckets(tree)
        twins = self._ast_nodes.get(kind)
        if twins is None:
            return []
        if kind not in self._sorted:
            twins.sort(key=_source_order)
            self._sorted.add(kind)
        return twins

    def _with_item(self, item: cst.WithItem) -> Span | None:
        # ast's withitem has no position: it runs from its expression to its `as` target.
        owner = self._with_items.get(id(item))
        if owner is None or getattr(item.item, "lpar", None) or (
            item.asname is not None and getattr(item.asname.name, "lpar", None)
        ):
            return None  # (x) as (y): LibCST's span includes the parentheses, ast's does not
        with_node, index = owner
        twin = self._twin("With", with_node)
        if twin is None:
            return None
        ast_item = twin.items[index]  # type: ignore[attr-defined]
        start = self._span(ast_item.context_expr)
        end = self._span(ast_item.optional_vars) if ast_item.optional_vars is not None else start
        if start is None or end is None:
            return None
        return Span(start.line, start.col, end.end_line, end.end_col)

    # ------------------------------------------------------------------ positions
    def _span(self, twin: ast.AST) -> Span | None:
        line, end_line = twin.lineno, twin.end_lineno  # type: ignore[attr-defined]
        if self._form_feed_lines and (line in self._form_feed_lines or end_line in self._form_feed_lines):
            return None  # LibCST restarts the column after a form feed; ast does not
        col = self._column(line, twin.col_offset)  # type: ignore[attr-defined]
        end_col = self._column(end_line, twin.end_col_offset)  # type: ignore[attr-defined]
        return Span(line, col, end_line, end_col)

    def _column(self, line: int, byte_offset: int) -> int:
        """ast columns count UTF-8 bytes; ours count characters."""
        starts = self._starts()
        begin = starts[line - 1]
        prefix = self.text[begin:begin + byte_offset]
        if prefix.isascii():
            return byte_offset
        return len(prefix.encode("utf-8")[:byte_offset].decode("utf-8", errors="ignore"))

    def _starts(self) -> list[int]:
        if self._line_starts is None:
            self._line_starts = [0] + [m.end() for m in _NEWLINE.finditer(self.text)]
        return self._line_starts

    @property
    def _form_feed_lines(self) -> frozenset[int]:
        if self._form_feeds is None:
            self._form_feeds = frozenset()
            if "\f" in self.text:
                self._form_feeds = frozenset(self._line_col(m.start())[0] for m in re.finditer("\f", self.text))
        return self._form_feeds

    def function_name(self, node: cst.FunctionDef) -> Span | None:
        """The span of ``def name``'s name (``ast`` positions the ``def``)."""
        twin = self._twin("FunctionDef", node)
        definition = None if twin is None else self._span(twin)
        if definition is None:
            return None
        offset = self._offset(definition.line, definition.col)
        keywords = _DEF_KEYWORDS.match(self.text, offset)
        name = node.name.value
        if keywords is None or self.text[keywords.end():keywords.end() + len(name)] != name:
            return None
        line, col = self._line_col(keywords.end())
        return Span(line, col, line, col + len(name))


class PositionedVisitor(cst.CSTVisitor):
    """Base for a rule's ``collect()`` visitor that needs source positions.

    The engine sets ``positions`` (the file's ``Positions``) before the traversal;
    ask ``self.positions.spans(nodes)`` once it is over -- e.g. in a ``facts``
    property, which the engine reads after the traversal.
    """

    positions: Positions


def _make_recorder(kind: str):
    def visit(self: Positions, node: cst.CSTNode) -> None:
        self._see(kind, node)
    return visit


for _name, _kind in _CST_KIND.items():
    if f"visit_{_name}" not in Positions.__dict__:
        setattr(Positions, f"visit_{_name}", _make_recorder(_kind))
for _node, _field in _NAME_FIELDS_WITHOUT_TWIN:
    setattr(Positions, f"visit_{_node}_{_field}", Positions._no_twins)
    setattr(Positions, f"leave_{_node}_{_field}", Positions._twins_again)


# Fields never holding a paired node (expression contexts and operators are ast nodes
# too, one per Name, BinOp, ...: skipping them saves a third of the walk).
_NOT_CHILDREN = frozenset({"ctx", "op", "ops", "type_ignores"})
_CHILD_FIELDS: dict[type, tuple[str, ...]] = {}


def _child_fields(kind: type) -> tuple[str, ...]:
    fields = _CHILD_FIELDS[kind] = tuple(f for f in getattr(kind, "_fields", ()) if f not in _NOT_CHILDREN)
    return fields


def _ast_buckets(tree: ast.AST) -> dict[str, list[ast.AST]]:
    """The paired kinds' ast nodes by kind.

    A plain stack walk (``ast.walk`` costs twice as much); parents come before children,
    so the f-string parts LibCST has no node for are known before they are met."""
    buckets: dict[str, list[ast.AST]] = {}
    without_twin: set[int] = set()
    kinds, child_fields = _AST_KIND, _CHILD_FIELDS
    ast_node = ast.AST
    stack: list[Any] = [tree]
    pop, push, extend = stack.pop, stack.append, stack.extend
    while stack:
        n = pop()
        node_type = type(n)
        kind = kinds.get(node_type)
        if kind is not None and id(n) not in without_twin:
            bucket = buckets.get(kind)
            if bucket is None:
                bucket = buckets[kind] = []
            bucket.append(n)
        if node_type in _STRING_TEMPLATES:  # its text parts are not nodes in LibCST
            without_twin.update(id(part) for part in n.values if type(part) is ast.Constant)
        elif node_type in _REPLACEMENT_FIELDS and n.format_spec is not None:
            without_twin.add(id(n.format_spec))  # LibCST: parts of the f-string, not a string
        # lists may hold None (dict unpacking) or str (global names): those have no fields
        for field in child_fields.get(node_type) or _child_fields(node_type):
            value = getattr(n, field, None)
            if type(value) is list:
                extend(value)
            elif isinstance(value, ast_node):
                push(value)
    return buckets  # unsorted: ``Positions._twins`` sorts the kinds it is asked for


def _source_order(n: Any) -> int:
    # (line, col) ascending, then (end line, end col) descending, in one integer
    return (((n.lineno << 24) | n.col_offset) << 56) - ((n.end_lineno << 24) | n.end_col_offset)


@overload  # a Name or ConcatenatedString is always paired (visit_Name and co. rely on it)
def _kind_of(node: cst.Name | cst.ConcatenatedString) -> str: ...
@overload
def _kind_of(node: cst.CSTNode) -> str | None: ...
def _kind_of(node: cst.CSTNode) -> str | None:
    """The kind a CST node is paired within (None: never paired with an ast node)."""
    if type(node) is cst.Name:
        return "Constant" if node.value in _CONSTANT_NAMES else "Name"
    if type(node) is cst.ConcatenatedString:
        return "JoinedStr" if _has_fstring(node) else "Constant"
    return _CST_KIND.get(type(node).__name__)


def _has_fstring(node: cst.CSTNode) -> bool:
    if isinstance(node, cst.FormattedString):
        return True
    if isinstance(node, cst.ConcatenatedString):
        return _has_fstring(node.left) or _has_fstring(node.right)
    return False


# ---------------------------------------------------------------------- fallback
class _Nothing:
    __slots__ = ()

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc) -> None:
        return None


_NOTHING = _Nothing()


class _Mark:
    __slots__ = ("node_id", "start", "state")

    def __init__(self, state: _MarkingState, node_id: int) -> None:
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


def locate_by_codegen(module: cst.Module, nodes: Iterable[cst.CSTNode]) -> dict[int, Span]:
    """Map ``id(node)`` to its Span for each node of ``nodes`` found in ``module``: one marked
    pass of LibCST's code generator (about as slow as the parse itself)."""
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

"""One LibCST traversal of a file -> its FileModel (see model.py).

The extractor knows Warp's API shapes (what creates a kernel, what marks Warp code)
but nothing about individual rules. Rules that need more than the model add their
own visitor through ``Rule.collect`` (see rule.py); those run in the same traversal.
"""

from __future__ import annotations

import builtins
import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, cast

import libcst as cst

from .fastwalk import children, walk
from .locate import PositionedVisitor, Positions
from .model import (
    NO_SPAN,
    Assignment,
    Call,
    Context,
    ExitBranch,
    FileModel,
    Function,
    Handler,
    Import,
    Kernel,
    LoopExtent,
    Param,
    Try,
    Value,
    WithBlock,
    enclosing_names,
)
from .names import canonical, dotted_name, is_warp, is_warp_api, resolve_relative
from .warp_version import ARRAY_TYPES, ARRAY_TYPES_DTYPE_ANY, GENERIC_TYPES

# An expression's value tree is kept whole to _MAX_DEPTH levels; deeper nodes are kept while the expression's
# budget lasts, so a narrow chain (`inputs=[wp.zeros(n, dtype=random.choice([...]))]`) keeps its leaves and a
# large nested literal table is still cut.
_MAX_DEPTH = 4
_DEEP_NODE_BUDGET = 24  # nodes below _MAX_DEPTH per top-level expression
_MAX_ITEMS = 32


def _warp_type(resolved: str) -> str:
    """The name of a Warp type a resolved dotted name designates (``warp.array``, ``warp.types.array``,
    ``warp._src.types.array``: ``array``), or ""."""
    for prefix in ("warp._src.types.", "warp.types.", "warp."):
        if resolved.startswith(prefix) and "." not in resolved[len(prefix):]:
            return resolved[len(prefix):]
    return ""


_WARP_BODY_DECORATORS = ("kernel", "func", "func_native", "func_grad", "func_replay", "struct", "overload")
_LOG_CALL_HINTS = ("print", "log", "warn", "error", "exception", "critical", "info", "debug", "echo", "write")
_LOG_CALL_PREFIXES = ("logging.", "logger.", "log.", "warnings.")
_COMPARE_OPERATORS = {"Equal": "==", "NotEqual": "!=", "In": "in", "NotIn": "not in", "Is": "is", "IsNot": "is not",
                      "LessThan": "<", "LessThanEqual": "<=", "GreaterThan": ">", "GreaterThanEqual": ">="}


@dataclass
class _Frame:
    qualname: str  # "" for the module
    function: Function | None = None
    class_name: str | None = None
    imports: dict[str, str] = field(default_factory=dict)
    defs: set[str] = field(default_factory=set)
    warp_body: bool = False
    conditions: list[tuple[str, tuple[str, ...], Value]] = field(default_factory=list)  # text, names, test
    raises: list[tuple[str, ...]] = field(default_factory=list)  # see Context.expects_raise
    loops: int = 0
    tries: list[int] = field(default_factory=list)
    handlers: int = 0
    finals: int = 0
    exits: list[ExitBranch | None] = field(default_factory=list)  # None: a branch that falls through
    loop_extents: list[LoopExtent] = field(default_factory=list)  # the loops open around the statement


# Builtins never resolve to a project function or to Warp: their calls are not recorded as
# ``Call``s (their arguments still are, inside any expression's ``Value``), except these,
# which rules read as calls.
_RECORDED_BUILTINS = frozenset({"setattr", "getattr", "dict"})
_BUILTINS = frozenset(n for n in dir(builtins) if not n.startswith("_")) - _RECORDED_BUILTINS


_EXIT_CALLS = frozenset({"sys.exit", "exit", "quit", "os._exit"})


def _leaves_scope(block: cst.BaseSuite) -> bool:
    """The block ends with ``return``, ``raise`` or ``sys.exit()``: code after its ``if`` never runs after it."""
    statements = block.body if isinstance(block, cst.IndentedBlock) else [block]
    if not statements:
        return False
    last = statements[-1]
    small = last.body[-1] if isinstance(last, (cst.SimpleStatementLine, cst.SimpleStatementSuite)) and last.body \
        else None
    if isinstance(small, (cst.Return, cst.Raise)):
        return True
    return (isinstance(small, cst.Expr) and isinstance(small.value, cst.Call)
            and dotted_name(small.value.func) in _EXIT_CALLS)


def _variable_names(node: cst.CSTNode) -> frozenset[str]:
    """The names an expression reads as variables: not keywords of its calls, not attributes after a dot."""
    found: set[str] = set()
    stack: list[cst.CSTNode] = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, cst.Name):
            found.add(n.value)
        elif isinstance(n, (cst.Attribute, cst.Arg)):
            stack.append(n.value)
        else:
            stack.extend(children(n))
    return frozenset(found)


_RAISES_METHODS = frozenset({"assertRaises", "assertRaisesRegex", "assertRaisesRegexp"})
_RAISES_CALLS = frozenset({"pytest.raises", "numpy.testing.assert_raises", "numpy.testing.assert_raises_regex"})


def _expected_errors(manager: Value) -> tuple[str, ...]:
    """The exceptions ``pytest.raises(E)`` / ``self.assertRaises(E)`` / ``assertRaisesRegex(E, ...)`` expect
    (resolved names, "?" for one not written as a name); () for any other context manager."""
    if manager.kind != "call":
        return ()
    name = manager.ref or manager.text.removesuffix("(...)")
    if not (name in _RAISES_CALLS or name.rpartition(".")[2] in _RAISES_METHODS):
        return ()
    first = manager.args[0] if manager.args else manager.kwargs.get("expected_exception")
    types = first.items if first is not None and first.kind == "seq" else (first,)
    return tuple((t.ref or "?") if isinstance(t, Value) and t.kind in ("name", "attr") else "?" for t in types)


def _assigned_targets(statements: Sequence[cst.BaseSmallStatement]) -> list[cst.BaseExpression]:
    """The targets the assignments among ``statements`` bind (``a = b = 1``, ``a: int = 1``, ``a += 1``)."""
    found: list[cst.BaseExpression] = []
    for item in statements:
        if isinstance(item, cst.Assign):
            found.extend(t.target for t in item.targets)
        elif isinstance(item, (cst.AnnAssign, cst.AugAssign)):
            found.append(item.target)
    return found


class Extractor(cst.CSTVisitor):
    def __init__(self, module_node: cst.Module, model: FileModel, positions: Positions) -> None:
        self.tree = module_node
        self.positions = positions
        self.model = model
        self.frames: list[_Frame] = [_Frame("")]
        self.order = 0
        self._last_ctx: Context | None = None
        self.main_guard = 0
        self.open_withs: list[WithBlock | None] = []  # None: a `with` inside a Warp function body
        self._deep_nodes_left = _DEEP_NODE_BUDGET  # what the expression being read may still keep below _MAX_DEPTH
        self._span_targets: list[tuple[Any, str, cst.CSTNode]] = []
        self._pending_kernels: list[tuple[Kernel, str, str]] = []  # kernel, enclosing scope, function name
        # decorated defs, with the kernel their decorator makes: a text digest for those defined twice (``finish``)
        self._decorated_defs: list[tuple[Function, Kernel | None, cst.FunctionDef]] = []
        self._not_variables: set[int] = set()  # ids of Name nodes that are attributes or keywords
        self._def_names: set[int] = set()  # ids of the Name nodes a `def` or `class` statement binds
        self._named_outside_bodies: set[str] = set()  # names code outside any function body reads or binds
        self._string_texts: list[str] = []  # the text of every string literal (code run by name: `-c "..."`)
        self._bare_strings: set[int] = set()  # string statements (docstrings): text that never runs
        # the last statements of `with pytest.raises(...)` bodies: id -> the exceptions expected
        self._raising: dict[int, tuple[str, ...]] = {}
        # reads of module-level names outside Warp bodies: (value, node, statement order); ``finish`` keeps where
        # those of names bound more than once are written (``FileModel.read_contexts``)
        self._global_reads: list[tuple[Value, cst.Name, int]] = []
        self._bound_at_module_level: dict[str, int] = {}  # module-level name -> how many statements bind it
        self._collect_toplevel(module_node)

    # ------------------------------------------------------------------ helpers
    @property
    def frame(self) -> _Frame:
        return self.frames[-1]

    def _function_frame(self) -> _Frame:
        for frame in reversed(self.frames):
            if frame.function is not None or frame.qualname == "":
                return frame
        return self.frames[0]

    def _span_of(self, obj: Any, attr: str, node: cst.CSTNode) -> None:
        self._span_targets.append((obj, attr, node))

    def _collect_toplevel(self, module_node: cst.Module) -> None:
        """The module's global names: those bound by its statements outside function and class bodies, inside
        ``if`` / ``for`` / ``while`` / ``with`` / ``try`` blocks too (a block opens no scope in Python: the
        ``if __name__ == "__main__":`` block's names are the module's), by any assignment target, a ``for``
        target, a ``with ... as`` name or an ``except ... as`` name."""
        top = self.model.toplevel
        # a worklist, not helpers calling each other: recursive closures form a reference cycle per file
        # (freed only by the cyclic collector, which a CLI run keeps off)
        targets: list[cst.BaseExpression] = []
        suites: list[cst.Module | cst.BaseSuite | None] = [module_node]
        while suites:
            suite = suites.pop()
            if isinstance(suite, cst.SimpleStatementSuite):  # `if x: a = 1`
                targets.extend(_assigned_targets(suite.body))
                continue
            for stmt in suite.body if isinstance(suite, (cst.Module, cst.IndentedBlock)) else ():
                if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
                    top.add(stmt.name.value)
                elif isinstance(stmt, cst.SimpleStatementLine):
                    targets.extend(_assigned_targets(stmt.body))
                elif isinstance(stmt, cst.If):
                    branch: cst.If | cst.Else | None = stmt
                    while branch is not None:
                        suites.append(branch.body)
                        branch = branch.orelse if isinstance(branch, cst.If) else None
                elif isinstance(stmt, (cst.For, cst.While)):
                    if isinstance(stmt, cst.For):
                        targets.append(stmt.target)
                    suites += [stmt.body, stmt.orelse.body if stmt.orelse is not None else None]
                elif isinstance(stmt, cst.With):
                    targets.extend(item.asname.name for item in stmt.items if item.asname is not None)
                    suites.append(stmt.body)
                elif isinstance(stmt, (cst.Try, cst.TryStar)):
                    suites.append(stmt.body)
                    for handler in stmt.handlers:
                        if handler.name is not None:
                            targets.append(handler.name.name)
                        suites.append(handler.body)
                    suites += [stmt.orelse.body if stmt.orelse is not None else None,
                               stmt.finalbody.body if stmt.finalbody is not None else None]
        bound = self._bound_at_module_level
        while targets:  # a name, or the names a tuple, list or starred target unpacks into
            target = targets.pop()
            if isinstance(target, cst.Name):
                top.add(target.value)
                bound[target.value] = bound.get(target.value, 0) + 1
            elif isinstance(target, (cst.Tuple, cst.List)):
                targets.extend(element.value for element in target.elements)
            elif isinstance(target, cst.StarredElement):
                targets.append(target.value)

    # Shadows CSTVisitor's MetadataDependent.resolve(wrapper), which only MetadataWrapper.visit calls:
    # the extractor never runs through a MetadataWrapper (locate.Positions stands in for its metadata).
    def resolve(self, dotted: str) -> tuple[str, bool]:  # type: ignore[override]
        """Resolved dotted name and whether its head is a local of the enclosing function."""
        head, _, rest = dotted.partition(".")
        for frame in reversed(self.frames):
            target = frame.imports.get(head)
            if target is not None:
                return canonical(f"{target}.{rest}" if rest else target), False
            if frame.function is not None:
                fn = frame.function
                if head in frame.defs:
                    return f"{self.model.module}.{fn.qualname}.{dotted}", False
                if rest and head == fn.bound_parameter:  # the instance or class a method runs on
                    return f"{self.model.module}.{fn.class_name}.{rest}", False
                if head in fn.locals or any(p.name == head for p in fn.params):
                    return dotted, True
        if head in self.model.toplevel:
            return f"{self.model.module}.{dotted}", False
        return dotted, False

    def _read_off(self, dotted: str) -> str:
        """What a dotted name is an attribute of, as ``Call.read_off``: "instance" / "class" when its head is the
        instance or class the enclosing method runs on (``Function.binds``), else ""."""
        head, _, rest = dotted.partition(".")
        for frame in reversed(self.frames):
            if not rest or head in frame.imports:
                return ""
            fn = frame.function
            if fn is not None:
                if head in frame.defs:
                    return ""
                if head == fn.bound_parameter:
                    return fn.binds
                if head in fn.locals or any(p.name == head for p in fn.params):
                    return ""
        return ""

    def ctx(self) -> Context:
        ff = self._function_frame()
        conditions: list[str] = []
        names: list[str] = []
        tests: list[Value] = []
        loops = 0
        raises: tuple[str, ...] = ()
        tries: list[int] = []
        handlers = 0
        finals = 0
        exits: list[ExitBranch] = []
        loop: LoopExtent | None = None
        # Control flow counts within the enclosing function only (frames of classes add theirs).
        for frame in self.frames[self.frames.index(ff):]:
            exits.extend(branch for branch in frame.exits if branch is not None)
            for text, cond_names, test in frame.conditions:
                conditions.append(text)
                names.extend(cond_names)
                tests.append(test)
            loops += frame.loops
            if loop is None and frame.loop_extents:
                loop = frame.loop_extents[0]
            raises = frame.raises[-1] if frame.raises else raises
            tries.extend(frame.tries)
            handlers += frame.handlers
            finals += frame.finals
        made = Context(
            scope=ff.qualname,
            order=self.order,
            conditions=tuple(conditions),
            condition_names=tuple(names),
            in_loop=loops > 0,
            try_index=tries[-1] if tries else None,
            in_handler=handlers > 0,
            in_finally=finals > 0,
            in_main_guard=self.main_guard > 0,
            exit_branch=exits[-1] if exits else None,
            tests=tuple(tests),
            expects_raise=raises,
            loop=loop,
            loop_depth=loops,
        )
        # The calls and assignments of one statement share its context: a third fewer objects to pickle and
        # read back. Sharing needs the very exit branch (its end is set when the branch closes), not an equal one.
        last = self._last_ctx
        if last is not None and last.order == made.order and last.exit_branch is made.exit_branch and last == made:
            return last
        self._last_ctx = made
        return made

    def value(self, node: cst.BaseExpression | None, depth: int = 0, span: bool = False) -> Value:
        if node is None:
            return Value("other")
        self._deep_nodes_left = _DEEP_NODE_BUDGET
        v = self._value(node, depth)
        if span:
            self._span_of(v, "span", node)
        return v

    def _value(self, node: cst.BaseExpression, depth: int) -> Value:
        # ``type(node) is`` rather than isinstance: LibCST's node classes are ABCs, whose
        # isinstance is several times slower, and none of these classes has subclasses.
        # mypy does not narrow on ``kind``: each branch casts to the class(es) it tested.
        kind = type(node)
        const: Any
        ref: str | None
        base: Value | None
        if kind is cst.SimpleString or kind is cst.ConcatenatedString:
            string = cast("cst.SimpleString | cst.ConcatenatedString", node)
            try:
                const = string.evaluated_value
            except Exception:  # noqa: BLE001 - odd literals are just "other"
                return Value("other")
            return Value("const", text=repr(const)[:80], const=const)
        if kind is cst.Integer or kind is cst.Float:
            number = cast("cst.Integer | cst.Float", node)
            try:
                const = number.evaluated_value
            except Exception:  # noqa: BLE001
                return Value("other", text=number.value)
            return Value("const", text=number.value, const=const)
        if kind is cst.Name and (name := cast(cst.Name, node)).value in ("True", "False", "None"):
            return Value("const", text=name.value, const={"True": True, "False": False, "None": None}[name.value])
        if kind is cst.UnaryOperation and type((unary := cast(cst.UnaryOperation, node)).operator) is cst.Minus:
            inner = self._value(unary.expression, depth)
            if inner.kind == "const" and isinstance(inner.const, (int, float)):
                return Value("const", text="-" + inner.text, const=-inner.const)
            return Value("other")
        if kind is cst.Name or kind is cst.Attribute:
            dotted = dotted_name(node)
            if dotted is not None:
                ref, local = self.resolve(dotted)
                value = Value("name" if kind is cst.Name else "attr", text=dotted, ref=ref, local=local)
                if kind is cst.Name and not local and dotted in self.model.toplevel:
                    self._global_reads.append((value, cast(cst.Name, node), self.order))
                return value
            # attribute of a call result etc. (a Name always has a dotted name)
            attribute = cast(cst.Attribute, node)
            base = self._value(attribute.value, depth + 1) if self._keeps(depth + 1) else Value("other")
            return Value("attr", text=f"{base.text}.{attribute.attr.value}", base=base, ref=None)
        if not self._keeps(depth + 1):
            return Value("other")
        if kind is cst.Call:
            call = cast(cst.Call, node)
            dotted = dotted_name(call.func)
            ref = self.resolve(dotted)[0] if dotted else None
            args: tuple[Value, ...]
            kwargs: dict[str, Value]
            args, kwargs, unpacked = self._args(call.args, depth + 1)
            base = None if dotted else self._value(call.func, depth + 1)
            # base is None exactly when dotted is a (non-empty) name
            text = f"{dotted if base is None else base.text}(...)"
            return Value("call", text=text, ref=ref, args=args, kwargs=kwargs, base=base, unpacked=unpacked)
        if kind is cst.List or kind is cst.Tuple or kind is cst.Set:
            elements = cast("cst.List | cst.Tuple | cst.Set", node).elements
            items = tuple(
                self._value(el.value, depth + 1) for el in elements[:_MAX_ITEMS] if isinstance(el, cst.Element)
            )
            const = None
            if len(items) == len(elements) and all(i.kind == "const" for i in items):
                const = tuple(i.const for i in items)
            # `(*a, b)`: what `a` holds is part of the sequence (``Value.unpacked``; its items are not in ``items``)
            unpacked = tuple(Value("unpack", text="*", base=self._value(el.value, depth + 1))
                             for el in elements[:_MAX_ITEMS] if isinstance(el, cst.StarredElement))
            return Value("seq", text="[...]", items=items, const=const, unpacked=unpacked)
        if kind is cst.Dict:
            dict_elements = cast(cst.Dict, node).elements
            pairs = []
            for el in dict_elements[:_MAX_ITEMS]:
                if isinstance(el, cst.DictElement):
                    key_value = self._value(el.key, depth + 1)
                    if type(el.key) is cst.SimpleString:
                        self._span_of(key_value, "span", el.key)  # a literal key: where a fix rewrites it
                    pairs.append((key_value, self._value(el.value, depth + 1)))
            const = None
            if len(pairs) == len(dict_elements) and all(k.kind == "const" and v.is_const for k, v in pairs):
                const = {k.const: v.const for k, v in pairs}
            # `{**base, "k": v}`: the items of `base` are the dict's too (``Value.unpacked``), where the `**` stands
            # (``const``: how many pairs are written before it; a later key replaces an earlier one)
            starred: list[Value] = []
            written = 0
            for el in dict_elements[:_MAX_ITEMS]:
                if isinstance(el, cst.StarredDictElement):
                    starred.append(Value("unpack", text="**", const=written, base=self._value(el.value, depth + 1)))
                else:
                    written += 1
            return Value("dict", text="{...}", items=tuple(pairs), const=const, unpacked=tuple(starred))
        if kind is cst.Subscript:
            subscript = cast(cst.Subscript, node)
            base = self._value(subscript.value, depth + 1)
            key = None
            if subscript.slice and isinstance(subscript.slice[0].slice, cst.Index):
                key = self._value(subscript.slice[0].slice.value, depth + 1)
            return Value("subscript", text=f"{base.text}[...]", base=base, key=key, ref=base.ref)
        if kind is cst.FormattedString:
            fstring_parts = cast(cst.FormattedString, node).parts
            parts = tuple(
                self._value(p.expression, depth + 1)
                for p in fstring_parts
                if isinstance(p, cst.FormattedStringExpression)
            )
            # the literal text with {} for each expression: two f-strings that compute alike are told apart
            # from others (a module name per dtype in two factories)
            template = "".join(
                p.value if isinstance(p, cst.FormattedStringText)
                else "{" + (f"!{p.conversion}" if p.conversion else "") + (":..." if p.format_spec else "") + "}"
                if isinstance(p, cst.FormattedStringExpression) else "{}"
                for p in fstring_parts
            )
            return Value("fstring", text=f"f'{template}'", items=parts)
        if kind is cst.BinaryOperation:
            binop = cast(cst.BinaryOperation, node)
            return Value(
                "binop",
                text=type(binop.operator).__name__,
                items=(self._value(binop.left, depth + 1), self._value(binop.right, depth + 1)),
            )
        if kind is cst.Lambda:
            # `lambda fn: wp.kernel(fn, ...)`: the body is what a call of it returns
            return Value("lambda", text="lambda", base=self._value(cast(cst.Lambda, node).body, depth + 1))
        if kind is cst.IfExp:
            ifexp = cast(cst.IfExp, node)
            return Value(
                "ifexp", items=(self._value(ifexp.body, depth + 1), self._value(ifexp.orelse, depth + 1)),
                base=self._value(ifexp.test, depth + 1),
            )
        if kind is cst.Comparison:
            comparison = cast(cst.Comparison, node)
            targets = comparison.comparisons[:_MAX_ITEMS]
            return Value(
                "compare", text=" ".join(_COMPARE_OPERATORS.get(type(t.operator).__name__, "?") for t in targets),
                items=(self._value(comparison.left, depth + 1),
                       *(self._value(t.comparator, depth + 1) for t in targets)),
            )
        if kind is cst.UnaryOperation and type(cast(cst.UnaryOperation, node).operator) is cst.Not:
            return Value("not", text="not", base=self._value(cast(cst.UnaryOperation, node).expression, depth + 1))
        if kind is cst.BooleanOperation:
            boolean = cast(cst.BooleanOperation, node)
            operator = type(boolean.operator)
            # `a and b and c` is one conjunction of three tests, not nested pairs
            operands: list[cst.BaseExpression] = []
            pending: list[cst.BaseExpression] = [boolean]
            while pending and len(operands) < _MAX_ITEMS:
                n = pending.pop()
                if isinstance(n, cst.BooleanOperation) and type(n.operator) is operator:
                    pending += (n.right, n.left)
                else:
                    operands.append(n)
            return Value("boolop", text="and" if operator is cst.And else "or",
                         items=tuple(self._value(n, depth + 1) for n in operands))
        return Value("other")

    def _keeps(self, depth: int) -> bool:
        """Whether a node's children at ``depth`` are kept: always above _MAX_DEPTH, below it while the
        expression's budget lasts (each deeper composite node spends one)."""
        if depth <= _MAX_DEPTH:
            return True
        if self._deep_nodes_left <= 0:
            return False
        self._deep_nodes_left -= 1
        return True

    def call_args(self, args) -> tuple[tuple[Value, ...], dict[str, Value], tuple[Value, ...]]:
        """The values of a recorded call's arguments (a top-level expression: a fresh budget)."""
        self._deep_nodes_left = _DEEP_NODE_BUDGET
        return self._args(args, 1)

    def _args(self, args, depth: int) -> tuple[tuple[Value, ...], dict[str, Value], tuple[Value, ...]]:
        """The plain positional arguments, the keywords, and the ``*x`` / ``**x`` arguments (``unpack`` values,
        ``Value.unpacked``) of a call."""
        positional: list[Value] = []
        keywords: dict[str, Value] = {}
        unpacked: list[Value] = []
        for arg in args:
            v = self._value(arg.value, depth)
            if arg.star:
                unpacked.append(Value("unpack", text=arg.star, base=v,
                                      const=len(positional) if arg.star == "*" else None))
            elif arg.keyword is not None:
                keywords[arg.keyword.value] = v
            else:
                positional.append(v)
        return tuple(positional), keywords, tuple(unpacked)

    def _condition(self, test: cst.BaseExpression) -> tuple[str, tuple[str, ...], Value]:
        names: list[str] = []
        # Loops, not recursive closures: a closure that calls itself is a reference cycle,
        # and through ``self`` it would keep the whole tree alive until the next gc pass.
        stack: list[cst.CSTNode] = [test]
        while stack:
            n = stack.pop()
            if isinstance(n, (cst.Name, cst.Attribute)):
                d = dotted_name(n)
                if d:
                    names.append(self.resolve(d)[0])
                    continue
            stack.extend(reversed(children(n)))
        text = self.tree.code_for_node(test).strip()
        return (text if len(text) <= 120 else text[:117] + "...", tuple(names), self.value(test))

    # ------------------------------------------------------------------ statements
    def _tick(self) -> None:
        self.order += 1

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        self._tick()
        if id(node) in self._raising:
            self.frame.raises.append(self._raising[id(node)])

    def leave_SimpleStatementLine(self, original_node: cst.SimpleStatementLine) -> None:
        if id(original_node) in self._raising:
            self.frame.raises.pop()

    def visit_SimpleStatementSuite(self, node: cst.SimpleStatementSuite) -> None:
        if id(node) in self._raising:
            self.frame.raises.append(self._raising[id(node)])

    def leave_SimpleStatementSuite(self, original_node: cst.SimpleStatementSuite) -> None:
        if id(original_node) in self._raising:
            self.frame.raises.pop()

    def visit_Import(self, node: cst.Import) -> None:
        if self.frame.warp_body:
            return
        for alias in node.names:
            dotted = dotted_name(alias.name) or ""
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                bound = alias.asname.name.value
                self.frame.imports[bound] = dotted
            else:
                bound = dotted.partition(".")[0]
                self.frame.imports[bound] = bound
            self._note_local(bound)
            imp = Import(module=dotted, names=(), alias=bound, span=None, ctx=self.ctx())  # type: ignore[arg-type]
            self._span_of(imp, "span", node)
            self.model.imports.append(imp)
            if dotted == "warp" or dotted.startswith("warp."):
                self.model.imports_warp = True

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        if self.frame.warp_body:
            return
        target = dotted_name(node.module) if node.module is not None else None
        level = len(node.relative)
        module = resolve_relative(self.model.module, self.model.is_package, level, target)
        names: list[tuple[str, str]] = []
        if not isinstance(node.names, cst.ImportStar):
            for alias in node.names:
                name = dotted_name(alias.name) or ""
                bound = name
                if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                    bound = alias.asname.name.value
                names.append((name, bound))
                self.frame.imports[bound] = f"{module}.{name}" if module else name
                self._note_local(bound)
        imp = Import(module=module, names=tuple(names), alias=None, span=None, ctx=self.ctx())  # type: ignore[arg-type]
        self._span_of(imp, "span", node)
        self.model.imports.append(imp)
        if module == "warp" or module.startswith("warp."):
            self.model.imports_warp = True

    def _note_local(self, name: str) -> None:
        # Names bound in a class body are class attributes, not locals of an enclosing function.
        fn = self.frame.function
        if fn is not None:
            fn.locals.add(name)

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._tick()
        self._def_names.add(id(node.name))
        self._note_local(node.name.value)
        parent = self.frame.qualname
        bases = tuple(self.resolve(d)[0] for arg in node.bases if (d := dotted_name(arg.value)))
        self.frames.append(_Frame(f"{parent}.{node.name.value}" if parent else node.name.value, class_name=None))
        self.frames[-1].class_name = self.frames[-1].qualname
        self.model.classes[self.frames[-1].qualname] = bases

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self.frames.pop()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._tick()
        self._def_names.add(id(node.name))
        outer = self.frame
        name = node.name.value
        qualname = f"{outer.qualname}.{name}" if outer.qualname else name
        if id(node) in self._raising:
            outer.raises.append(self._raising[id(node)])  # decorators (`@wp.overload`), defaults; not the body
        ctx = self.ctx()
        decorators: list[str] = []
        kernel_options: dict[str, Value] | None = None
        warp_body = outer.warp_body
        decorator_values: list[Value] = []
        for dec in node.decorators:
            expr = dec.decorator
            decorator_values.append(self.value(expr))
            call = expr if isinstance(expr, cst.Call) else None
            dotted = dotted_name(call.func if call else expr)
            resolved = self.resolve(dotted)[0] if dotted else ""
            decorators.append(resolved)
            if is_warp(resolved, *_WARP_BODY_DECORATORS):
                warp_body = True
            if is_warp(resolved, "kernel"):
                kernel_options = {}
                if call is not None:
                    _, kernel_options, _ = self.call_args(call.args)
                    for arg in call.args:
                        if arg.keyword is not None:
                            self._span_of(kernel_options[arg.keyword.value], "span", arg.value)
        params = self._params(node.params)
        generic = any(p.generic for p in params)
        class_name = outer.class_name
        fn = Function(
            qualname=qualname,
            name=name,
            span=None,  # type: ignore[arg-type]
            params=params,
            decorators=decorators,
            ctx=ctx,
            class_name=class_name,
            is_warp=warp_body,
            generic=generic,
            decorator_values=decorator_values,
        )
        self._span_of(fn, "span", node.name)
        earlier = self.model.functions.get(qualname)
        if earlier is not None:
            self.model.redefined.append(earlier)
        self.model.functions[qualname] = fn
        if outer.function is not None:
            outer.defs.add(name)
            outer.function.locals.add(name)
        if kernel_options is not None:
            kernel = Kernel(
                name=name, function=qualname, span=None, ctx=ctx, form="decorator",  # type: ignore[arg-type]
                options=kernel_options, generic=generic,
            )
            self._span_of(kernel, "span", node.name)
            self.model.kernels.append(kernel)
        if node.decorators:
            self._decorated_defs.append((fn, kernel if kernel_options is not None else None, node))
        self._pending_frame = _Frame(qualname, function=fn, class_name=None, warp_body=warp_body)

    # The function's own frame covers only its body: decorators, defaults and
    # annotations are evaluated in the enclosing scope.
    def visit_FunctionDef_body(self, node: cst.FunctionDef) -> None:
        if id(node) in self._raising:
            self.frame.raises.pop()
        self.frames.append(self._pending_frame)

    def leave_FunctionDef_body(self, original_node: cst.FunctionDef) -> None:
        frame = self.frames.pop()
        fn = frame.function
        # Names read in a nested function are read by its parents too (closures).
        parent = self._function_frame().function
        if parent is not None and fn is not None:
            parent.loaded |= fn.loaded
            parent.static_loaded |= fn.static_loaded

    def _params(self, params: cst.Parameters) -> list[Param]:
        result: list[Param] = []
        for p in (*params.posonly_params, *params.params, *params.kwonly_params):
            default = None
            if p.default is not None:
                default = self.value(p.default, span=True)
            annotation = ""
            annotation_ref = None
            if p.annotation is not None:
                annotation = self._annotation_text(p.annotation.annotation)
                annotation_ref = self._annotation_ref(p.annotation.annotation)
            generic = p.annotation is not None and self._is_generic_type(p.annotation.annotation)
            result.append(Param(p.name.value, default, annotation, annotation_ref, generic))
            if p.annotation is not None:
                # The variables the annotation reads (`dtype` of `wp.array(dtype=dtype)`, not the keyword): a
                # kernel's argument types are part of its content, read where the kernel is defined (finish()).
                vars(self).setdefault("_annotation_names", {})[id(result[-1])] = _variable_names(
                    p.annotation.annotation)
                # The dtype of an array / tile annotation (``wp.array2d(dtype=float)``, ``wp.array[wp.float16]``,
                # ``wp.tile(dtype=float, shape=...)``), kept beside the Param until a Warp body call
                # copies it to Function.param_dtypes (warplint.semantic.differentiation reads it).
                node = p.annotation.annotation
                container = dtype_node = None
                if isinstance(node, cst.Call) and (head := dotted_name(node.func)):
                    container = self.resolve(head)[0]
                    keyword = [a.value for a in node.args if a.keyword is not None and a.keyword.value == "dtype"]
                    positional = [a.value for a in node.args if a.keyword is None and not a.star]
                    if not keyword and positional and is_warp(container, "tile"):
                        keyword = positional[:1]  # tile(dtype, shape); an array's first positional is data
                    dtype_node = keyword[0] if keyword else None
                elif isinstance(node, cst.Subscript) and (head := dotted_name(node.value)) and node.slice:
                    container = self.resolve(head)[0]
                    first = node.slice[0].slice
                    dtype_node = first.value if isinstance(first, cst.Index) else None
                kind = ("tile" if is_warp(container, "tile") else
                        "array" if is_warp(container, *ARRAY_TYPES) else "")
                if kind:
                    dotted_dtype = dotted_name(dtype_node) if dtype_node is not None else None
                    resolved, is_local = self.resolve(dotted_dtype) if dotted_dtype else ("", True)
                    vars(self).setdefault("_param_dtypes", {})[id(result[-1])] = (kind, "" if is_local else resolved)
        for star, kind in ((params.star_arg, "*"), (params.star_kwarg, "**")):
            if isinstance(star, cst.Param):
                result.append(Param(star.name.value, star=kind))
        return result

    def _is_generic_type(self, node: cst.BaseExpression) -> bool:
        """Whether Warp takes the annotation for a generic type (``warp.types.type_is_generic``, Warp 1.10-1.19):
        ``Any``, ``wp.Scalar`` / ``wp.Float`` / ``wp.Int``, a ``tuple[...]``, an array whose dtype is generic
        (``wp.array(ndim=1)`` and ``wp.array2d()`` default it to ``Any``; ``wp.indexedarray()`` to None, which is
        not), a vector or matrix type of a generic dtype. A name Warp does not define (a local alias) is not
        known here: not generic."""
        if isinstance(node, cst.Subscript):
            head = dotted_name(node.value)
            resolved = self.resolve(head)[0] if head else ""
            if resolved in ("tuple", "typing.Tuple"):
                return True
            if _warp_type(resolved) in ARRAY_TYPES and node.slice and isinstance(node.slice[0].slice, cst.Index):
                return self._is_generic_type(node.slice[0].slice.value)
            return False
        if isinstance(node, cst.Call):
            head = dotted_name(node.func)
            kind = _warp_type(self.resolve(head)[0]) if head else ""
            dtype = next((a.value for a in node.args if a.keyword is not None and a.keyword.value == "dtype"), None)
            if kind in ("vector", "matrix"):
                # generic by its dtype, or by a dimension given as Any (Warp stores it as 0)
                positional = [a.value for a in node.args if a.keyword is None and not a.star]
                dtype = dtype if dtype is not None else (positional[1] if len(positional) > 1 else None)
                size = next((a.value for a in node.args if a.keyword is not None
                             and a.keyword.value in ("length", "shape")), positional[0] if positional else None)
                sizes = ([e.value for e in size.elements] if isinstance(size, (cst.Tuple, cst.List))
                         else [size] if size is not None else [])
                return (dtype is not None and self._is_generic_type(dtype)) or any(
                    self._is_generic_type(d) for d in sizes)
            if kind in ARRAY_TYPES:
                if dtype is None:
                    return kind in ARRAY_TYPES_DTYPE_ANY and not any(a.star for a in node.args)
                return self._is_generic_type(dtype)
            return False
        dotted = dotted_name(node)
        if not dotted:
            return False
        resolved = self.resolve(dotted)[0]
        return resolved == "typing.Any" or _warp_type(resolved) in GENERIC_TYPES

    def _annotation_text(self, node: cst.CSTNode) -> str:
        return " ".join(self._names_in(node))

    def visit_Yield(self, node: cst.Yield) -> None:
        fn = self.frame.function
        if fn is not None and not self.frame.warp_body and not fn.first_yield:
            fn.first_yield = self.order  # the statement it is in (a nested def's yields are that function's)

    def visit_Return(self, node: cst.Return) -> None:
        fn = self.frame.function
        if fn is None or self.frame.warp_body:
            return
        if not fn.first_return:
            fn.first_return = self.order
        if node.value is not None:
            fn.returns.append(self.value(node.value))

    # ------------------------------------------------------------------ control flow
    def visit_If(self, node: cst.If) -> None:
        self._tick()

    def visit_If_body(self, node: cst.If) -> None:
        if self.frame.warp_body:
            return
        self.frame.exits.append(ExitBranch() if _leaves_scope(node.body) else None)
        text, names, test = self._condition(node.test)
        if text.replace("'", '"') in ('__name__ == "__main__"', '"__main__" == __name__'):
            self.model.has_main_guard = True
            self.main_guard += 1
        self.frame.conditions.append((text, names, test))

    def leave_If_body(self, node: cst.If) -> None:
        if self.frame.warp_body:
            return
        self._close_exit_branch()
        text, _, _ = self.frame.conditions.pop()
        if text.replace("'", '"') in ('__name__ == "__main__"', '"__main__" == __name__'):
            self.main_guard -= 1

    def visit_If_orelse(self, node: cst.If) -> None:
        if self.frame.warp_body or node.orelse is None:
            return
        body = node.orelse.body if isinstance(node.orelse, cst.Else) else None
        self.frame.exits.append(ExitBranch() if body is not None and _leaves_scope(body) else None)
        text, names, test = self._condition(node.test)
        self.frame.conditions.append((f"not ({text})", names, Value("not", text="not", base=test)))

    def leave_If_orelse(self, node: cst.If) -> None:
        if self.frame.warp_body or node.orelse is None:
            return
        self._close_exit_branch()
        self.frame.conditions.pop()

    def _close_exit_branch(self) -> None:
        branch = self.frame.exits.pop()
        if branch is not None:
            branch.end = self.order

    def visit_While(self, node: cst.While) -> None:
        self._tick()

    def visit_While_body(self, node: cst.While) -> None:
        if not self.frame.warp_body:
            self.frame.conditions.append(self._condition(node.test))
            self.frame.loops += 1
            self.frame.loop_extents.append(LoopExtent())

    def leave_While_body(self, node: cst.While) -> None:
        if not self.frame.warp_body:
            self.frame.conditions.pop()
            self.frame.loops -= 1
            self.frame.loop_extents.pop().end = self.order

    def visit_For(self, node: cst.For) -> None:
        self._tick()
        self._bind_target(node.target)
        if not self.frame.warp_body:
            # `for k, t in ((a, 64), (b, 512)):` binds k to an element's [0], t to its [1]
            iterable = self.value(node.iter)
            element = Value("element", text=f"element of {iterable.text}", base=iterable, ref=iterable.ref)
            self._record_assignment(node.target, element, node)

    def visit_For_body(self, node: cst.For) -> None:
        self.frame.loops += 1
        self.frame.loop_extents.append(LoopExtent())

    def leave_For_body(self, node: cst.For) -> None:
        self.frame.loops -= 1
        self.frame.loop_extents.pop().end = self.order

    # A comprehension runs its element once per item, as a ``for`` loop would: each ``for x in it`` clause binds
    # its target to an element of ``it`` (the binder's bindings are per scope, not per statement, so the
    # element's reads see it), and what the element calls is called in a loop. Bound before the element is
    # visited: LibCST visits the element first. Its loop is within the statement that holds it.
    def _enter_comprehension(self, node: cst.ListComp | cst.SetComp | cst.DictComp | cst.GeneratorExp) -> None:
        self.frame.loop_extents.append(LoopExtent(end=self.order))
        clause: cst.CompFor | None = node.for_in
        while clause is not None:
            self._bind_target(clause.target)
            if not self.frame.warp_body:
                iterable = self.value(clause.iter)
                element = Value("element", text=f"element of {iterable.text}", base=iterable, ref=iterable.ref)
                self._record_assignment(clause.target, element, clause)
            self.frame.loops += 1
            clause = clause.inner_for_in

    def _leave_comprehension(self, node: cst.ListComp | cst.SetComp | cst.DictComp | cst.GeneratorExp) -> None:
        self.frame.loop_extents.pop()
        clause: cst.CompFor | None = node.for_in
        while clause is not None:
            self.frame.loops -= 1
            clause = clause.inner_for_in

    def visit_ListComp(self, node: cst.ListComp) -> None:
        self._enter_comprehension(node)

    def visit_SetComp(self, node: cst.SetComp) -> None:
        self._enter_comprehension(node)

    def visit_DictComp(self, node: cst.DictComp) -> None:
        self._enter_comprehension(node)

    def visit_GeneratorExp(self, node: cst.GeneratorExp) -> None:
        self._enter_comprehension(node)

    def leave_ListComp(self, original_node: cst.ListComp) -> None:
        self._leave_comprehension(original_node)

    def leave_SetComp(self, original_node: cst.SetComp) -> None:
        self._leave_comprehension(original_node)

    def leave_DictComp(self, original_node: cst.DictComp) -> None:
        self._leave_comprehension(original_node)

    def leave_GeneratorExp(self, original_node: cst.GeneratorExp) -> None:
        self._leave_comprehension(original_node)

    def visit_With(self, node: cst.With) -> None:
        self._tick()
        for item in node.items:
            if item.asname is not None:
                self._bind_target(item.asname.name)
                if not self.frame.warp_body and isinstance(item.asname.name, cst.Name):
                    # `with TemporaryDirectory() as d:` binds d to the context manager's value.
                    target = self.value(item.asname.name)
                    assignment = Assignment(target, self.value(item.item), None, self.ctx())  # type: ignore[arg-type]
                    self._span_of(assignment, "span", item)
                    self.model.assignments.append(assignment)
        managers = None if self.frame.warp_body else tuple(self.value(i.item) for i in node.items)
        self.open_withs.append(None if managers is None else WithBlock(managers, self.ctx()))
        expected = () if managers is None else self._raising.get(id(node)) or next(
            (found for m in managers if (found := _expected_errors(m))), ())
        if expected:
            # The body's last statement is what the test expects to raise (the statements before it
            # prepare it and run); a `with` there passes it on to its own last statement.
            body = node.body
            self._raising[id(body.body[-1] if isinstance(body, cst.IndentedBlock) else body)] = expected

    def leave_With(self, node: cst.With) -> None:
        block = self.open_withs.pop()
        if block is not None:
            block.end = self.order  # the last statement of the body
            self.model.with_blocks.append(block)

    def visit_Try(self, node: cst.Try) -> None:
        self._tick()
        if self.frame.warp_body:
            return
        handlers: list[Handler] = []
        for h in node.handlers:
            types: tuple[str, ...] = ()
            if h.type is not None:
                exprs = h.type.elements if isinstance(h.type, cst.Tuple) else [h.type]
                names = []
                for e in exprs:
                    expr = e.value if isinstance(e, cst.Element) else e
                    d = dotted_name(expr)
                    names.append(self.resolve(d)[0] if d else "?")
                types = tuple(names)
            handler = Handler(types=types, action=self._handler_action(h), span=None)  # type: ignore[arg-type]
            self._span_of(handler, "span", h)
            handlers.append(handler)
            if h.name is not None:
                self._bind_target(h.name.name)
        info = Try(span=None, ctx=self.ctx(), handlers=handlers)  # type: ignore[arg-type]
        self._span_of(info, "span", node)
        self.model.tries.append(info)
        self._current_try = len(self.model.tries) - 1

    def visit_Finally(self, node: cst.Finally) -> None:
        self.frame.finals += 1

    def leave_Finally(self, original_node: cst.Finally) -> None:
        self.frame.finals -= 1

    def visit_Try_body(self, node: cst.Try) -> None:
        if not self.frame.warp_body:
            self.frame.tries.append(self._current_try)

    def leave_Try_body(self, node: cst.Try) -> None:
        if not self.frame.warp_body:
            self.frame.tries.pop()

    def visit_ExceptHandler_body(self, node: cst.ExceptHandler) -> None:
        self.frame.handlers += 1

    def leave_ExceptHandler_body(self, node: cst.ExceptHandler) -> None:
        self.frame.handlers -= 1

    def _handler_action(self, handler: cst.ExceptHandler) -> str:
        action = "swallow"
        stack: list[cst.CSTNode] = [handler.body]
        while stack:
            n = stack.pop()
            if isinstance(n, cst.Raise):
                action = "reraise"
                continue
            if isinstance(n, cst.Call) and action != "reraise":
                d = (dotted_name(n.func) or "").lower()
                last = d.rpartition(".")[2]
                if any(h in last for h in _LOG_CALL_HINTS) or d.startswith(_LOG_CALL_PREFIXES):
                    action = "log"
                elif action == "swallow":
                    action = "handle"
            if isinstance(n, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
                continue
            stack.extend(reversed(children(n)))
        return action

    # ------------------------------------------------------------------ assignments
    def _bind_target(self, target: cst.BaseExpression) -> None:
        if isinstance(target, cst.Name):
            self._note_local(target.value)
        elif isinstance(target, (cst.Tuple, cst.List)):
            for el in target.elements:
                self._bind_target(el.value)
        elif isinstance(target, cst.StarredElement):
            self._bind_target(target.value)

    def visit_Assign(self, node: cst.Assign) -> None:
        for t in node.targets:
            self._bind_target(t.target)
        if self.frame.warp_body:
            return
        value = self.value(node.value)
        for t in node.targets:
            self._record_assignment(t.target, value, node)
            if type(node.value) in (cst.DictComp, cst.ListComp) and type(t.target) is cst.Name:
                # `K = {n: make(n) for n in ns}` fills K as a loop would: also record `K[n] = make(n)` (a list's
                # index is not followed), so a read `K[n]` gives what was stored under a key that can match
                comp = node.value
                element = comp.value if isinstance(comp, cst.DictComp) else cast(cst.ListComp, comp).elt
                key = self.value(comp.key) if isinstance(comp, cst.DictComp) else Value("other")
                target = self.value(t.target)
                self._record_item(Value("subscript", text=f"{target.text}[...]", base=target, key=key,
                                        ref=target.ref), self.value(element), t.target)

    def _record_item(self, target: Value, value: Value, node: cst.CSTNode) -> None:
        assignment = Assignment(target, value, None, self.ctx())  # type: ignore[arg-type]
        self._span_of(assignment, "span", node)
        self.model.assignments.append(assignment)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._bind_target(node.target)
        if self.frame.warp_body:
            return
        annotation = self._annotation_ref(node.annotation.annotation)
        if node.value is None:
            if annotation is not None and self.frame.function is None and self.frame.class_name:
                # a dataclass field without a default: its type is still a fact (`threads: Threads`)
                self._record_assignment(node.target, Value("unset"), node, annotation=annotation)
            return
        self._record_assignment(node.target, self.value(node.value), node, annotation=annotation)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._bind_target(node.target)
        if not self.frame.warp_body:
            self._record_assignment(node.target, self.value(node.value), node, augmented=True)

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self._bind_target(node.target)
        if not self.frame.warp_body:
            self._record_assignment(node.target, self.value(node.value), node)

    def _record_assignment(self, target: cst.BaseExpression, value: Value, node: cst.CSTNode, augmented=False,
                           annotation: str | None = None) -> None:
        if isinstance(target, (cst.Tuple, cst.List)):
            # `a, b = rhs` binds a to rhs[0] and b to rhs[1]; after a starred target the positions are unknown
            for position, el in enumerate(target.elements):
                # a starred target is an element of its own kind (`a, *rest = rhs`), its name its value
                starred = any(isinstance(e, cst.StarredElement) for e in target.elements[:position + 1])
                item = Value("other") if starred or augmented else Value(
                    "subscript", text=f"{value.text}[{position}]", base=value,
                    key=Value("const", text=str(position), const=position), ref=value.ref)
                self._record_assignment(el.value, item, node, augmented)
            return
        frame = self.frame
        if frame.function is None and frame.class_name and isinstance(target, cst.Name):
            # a class attribute: the same binding as `self.name = ...` in a method (both resolve there)
            tv = Value("attr", text=f"{frame.class_name}.{target.value}",
                       ref=f"{self.model.module}.{frame.class_name}.{target.value}")
        else:
            tv = self.value(target)
            if tv.key is not None and type(target) is cst.Subscript and type(
                    key := target.slice[0].slice) is cst.Index and type(key.value) is cst.SimpleString:
                self._span_of(tv.key, "span", key.value)  # NAME["key"] = ...: where a fix rewrites the key
        if tv.kind == "name" and frame.qualname == "" and not augmented:
            self.model.constants[tv.text] = value
        assignment = Assignment(tv, value, None, self.ctx(), augmented, annotation)  # type: ignore[arg-type]
        self._span_of(assignment, "span", target)
        self.model.assignments.append(assignment)

    def _annotation_ref(self, node: cst.BaseExpression | None) -> str | None:
        """The resolved class an annotation names: ``Settings``, ``cfg.Settings``, ``Optional[Settings]``,
        ``Settings | None``; None for anything else."""
        if isinstance(node, cst.Subscript) and len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index):
            head = dotted_name(node.value) or ""
            if head.rpartition(".")[2] == "Optional":
                node = node.slice[0].slice.value
        if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.BitOr):
            sides = [side for side in (node.left, node.right) if dotted_name(side) != "None"]
            node = sides[0] if len(sides) == 1 else None
        if isinstance(node, cst.SimpleString):  # a forward reference: "Settings"
            text = node.evaluated_value
            return self.resolve(text)[0] if isinstance(text, str) and text.isidentifier() else None
        dotted = dotted_name(node) if node is not None else None
        return self.resolve(dotted)[0] if dotted else None

    # ------------------------------------------------------------------ expressions
    def visit_Attribute(self, node: cst.Attribute) -> None:
        self._not_variables.add(id(node.attr))

    def visit_Arg(self, node: cst.Arg) -> None:
        if node.keyword is not None:
            self._not_variables.add(id(node.keyword))

    def visit_Expr(self, node: cst.Expr) -> None:
        # a string statement (a docstring) is text nothing runs; its parts are not code that may name a function
        pending: list[cst.BaseExpression] = [node.value]
        while pending:
            value = pending.pop()
            if isinstance(value, cst.SimpleString):
                self._bare_strings.add(id(value))
            elif isinstance(value, cst.ConcatenatedString):
                pending += [value.left, value.right]

    def visit_SimpleString(self, node: cst.SimpleString) -> None:
        if id(node) not in self._bare_strings:
            self._string_texts.append(node.value)

    def visit_FormattedStringText(self, node: cst.FormattedStringText) -> None:
        self._string_texts.append(node.value)

    def visit_Global(self, node: cst.Global) -> None:
        fn = self.frame.function
        if fn is not None:
            fn.declared_global = (*fn.declared_global, *(item.name.value for item in node.names))

    def visit_Name(self, node: cst.Name) -> None:
        # `a.attr` and `f(keyword=...)` contain Name nodes that are not variables.
        if id(node) in self._not_variables:
            return
        fn = self.frame.function
        if fn is not None:
            fn.loaded.add(node.value)
        elif id(node) not in self._def_names:
            self._named_outside_bodies.add(node.value)

    def visit_Call(self, node: cst.Call) -> None:
        dotted = dotted_name(node.func)
        # A function's Warp-body facts are collected whatever decorates it: any function can become a kernel
        # later (`k = wp.kernel(f)`, a project helper, another file), and which one does is a project fact.
        self._body_facts(node, dotted)
        if self.frame.warp_body:
            return
        self._python_call(node, dotted)

    def _body_facts(self, node: cst.Call, dotted: str | None) -> None:
        """The facts of ``node`` as a call in a Warp body: its callee, wp.static reads, tile dtypes, matmul
        precisions (read by ``warplint.semantic.differentiation`` and the rules of a kernel made of the body)."""
        fn = self.frame.function
        if fn is not None and dotted:
            resolved = self.resolve(dotted)[0]
            fn.warp_calls.add(resolved)
            if is_warp(resolved, "static"):
                names: set[str] = set()
                for arg in node.args:
                    names.update(self._names_in(arg.value))
                fn.static_loaded |= names
            if not fn.param_dtypes:
                table = vars(self).get("_param_dtypes", {})
                fn.param_dtypes = {p.name: table[id(p)] for p in fn.params if id(p) in table}
            op = resolved[len("warp."):] if is_warp(resolved) else ""
            if op.startswith("tile"):
                # The dtype of the tile this call creates (warplint.semantic.differentiation reads it).
                positional = [a.value for a in node.args if a.keyword is None and not a.star]
                keywords = {a.keyword.value: a.value for a in node.args if a.keyword is not None}
                dtype_at = {"tile_zeros": 1, "tile_ones": 1, "tile_empty": 1, "tile_full": 2, "tile_arange": None,
                            "tile_astype": 1}
                if op in ("tile_load", "tile_load_indexed"):
                    source = keywords.get("a", positional[0] if positional else None)
                    while isinstance(source, cst.Subscript):
                        source = source.value
                    kind, dtype = (fn.param_dtypes.get(source.value, ("", "")) if isinstance(source, cst.Name)
                                   else ("", ""))
                    fn.tile_dtypes.append(dtype if kind == "array" else "")
                elif op in dtype_at:
                    at = dtype_at[op]
                    given = positional[at] if at is not None and len(positional) > at else None
                    expr = keywords.get("dtype", given)
                    if expr is None:  # the defaults: float for zeros/ones/empty, the value's type otherwise
                        fn.tile_dtypes.append("float" if op in ("tile_zeros", "tile_ones", "tile_empty") else "")
                    else:
                        dotted_dtype = dotted_name(expr)
                        found, is_local = self.resolve(dotted_dtype) if dotted_dtype else ("", True)
                        fn.tile_dtypes.append("" if is_local else found)
                elif op in ("tile", "tile_from_thread", "tile_map", "tile_randf", "tile_randi") or op.startswith(
                    ("tile_bvh_", "tile_mesh_")
                ):
                    fn.tile_dtypes.append("")
                if op == "tile_matmul":
                    # (a, b, alpha, precision) or (a, b, out, alpha, beta, precision): a string from the 4th on
                    strings = [a for a in positional[3:] if isinstance(a, cst.SimpleString)]
                    precision = keywords.get("precision", strings[0] if strings else None)
                    fn.matmul_precisions.append(
                        "default" if precision is None
                        else precision.evaluated_value if isinstance(precision, cst.SimpleString)
                        and isinstance(precision.evaluated_value, str) else ""
                    )

    def _partial_call(self, node: cst.Call) -> tuple[str, list[cst.Arg]] | None:
        """``functools.partial(f, *a, **k)(*b, **kw)`` runs ``f(*a, *b, **{**k, **kw})`` (Python's binding of a
        partial object): the callee ``f`` and the arguments in that order; None for another call."""
        if not isinstance(node.func, cst.Call):
            return None
        inner = node.func
        maker = dotted_name(inner.func)
        if not maker or self.resolve(maker)[0] != "functools.partial" or not inner.args:
            return None
        first = inner.args[0]
        function = dotted_name(first.value) if first.keyword is None and not first.star else None
        if not function:
            return None
        bound = list(inner.args[1:])
        positional = [a for a in (*bound, *node.args) if a.keyword is None]
        keywords = {a.keyword.value: a for a in (*bound, *node.args) if a.keyword is not None}  # the call's win
        return self.resolve(function)[0], [*positional, *keywords.values()]

    def _python_call(self, node: cst.Call, dotted: str | None) -> None:
        partial = self._partial_call(node) if dotted is None else None
        if partial is not None:
            callee, arguments = partial
            if callee not in _BUILTINS:
                self._record_call(node, callee, arguments, None)
            return
        inner_kernel_call = None
        if dotted is None and isinstance(node.func, cst.Call):
            # wp.kernel(module="m")(f)
            inner = dotted_name(node.func.func)
            if inner and is_warp(self.resolve(inner)[0], "kernel"):
                inner_kernel_call = node.func
        receiver = None
        if dotted is None and inner_kernel_call is None:
            # A method of a call's result: wp.get_module("m").options.update(...)
            # is recorded as callee "warp.get_module().options.update" with the
            # inner call summarised as ``receiver``.
            attrs: list[str] = []
            func = node.func
            while isinstance(func, cst.Attribute):
                attrs.append(func.attr.value)
                func = func.value
            inner = dotted_name(func.func) if isinstance(func, cst.Call) else None
            if inner is None:
                return
            made_by = self.resolve(inner)[0]
            if not attrs and (is_warp_api(made_by) or made_by in _BUILTINS):
                return  # `wp.kernel(...)(f)` is above; a builtin's or Warp's result is no project function
            receiver = self.value(func, 1)
            dotted = ""
            # `make(c)()` calls what `make(c)` returns: callee "pkg.make()" (Bindings resolves it to the function
            # `make` returns); `make(c).run()`: "pkg.make().run"
            callee = f"{made_by}()" + "".join(f".{a}" for a in reversed(attrs))
        else:
            callee = self.resolve(dotted)[0] if dotted else "warp.kernel"
        if callee in _BUILTINS:
            return  # print(), len(), ...: never a project function, never Warp
        self._record_call(node, callee, list(node.args), receiver, inner_kernel_call, self._read_off(dotted or ""))

    def _record_call(self, node: cst.Call, callee: str, arguments: list[cst.Arg], receiver: Value | None,
                     inner_kernel_call: cst.Call | None = None, read_off: str = "") -> None:
        args, kwargs, unpacked = self.call_args(arguments)
        in_order = iter(args)
        for arg in arguments:
            if arg.keyword is not None and arg.keyword.value in kwargs:
                self._span_of(kwargs[arg.keyword.value], "span", arg.value)
            elif arg.keyword is None and not arg.star:  # every argument's place: fixes insert after the last
                self._span_of(next(in_order), "span", arg.value)
        if inner_kernel_call is not None:
            _, inner_kwargs, _ = self.call_args(inner_kernel_call.args)
            for arg in inner_kernel_call.args:  # where an option is written (a rule reports at it, a fix edits it)
                if arg.keyword is not None and arg.keyword.value in inner_kwargs:
                    self._span_of(inner_kwargs[arg.keyword.value], "span", arg.value)
            kwargs = {**inner_kwargs, **kwargs}
        call = Call(
            callee=callee, span=None, args=args, kwargs=kwargs, ctx=self.ctx(),  # type: ignore[arg-type]
            has_star_args=bool(unpacked), receiver=receiver, read_off=read_off,
            on_call_result=receiver is not None, unpacked=unpacked,
        )
        self._span_of(call, "span", node)
        self.model.calls.append(call)
        if callee == "setattr" and len(args) >= 3:
            self._record_setattr(args, node)
        if is_warp(callee, "kernel", "Kernel") and args:
            f = args[0]
            if f.kind in ("name", "attr"):
                options = dict(kwargs)
                kernel = Kernel(
                    name=f.text.rpartition(".")[2], function="", span=None, ctx=call.ctx,  # type: ignore[arg-type]
                    form="Kernel" if callee == "warp.Kernel" else "call", options=options, target=f,
                )
                self._span_of(kernel, "span", node)
                self.model.kernels.append(kernel)
                self._pending_kernels.append((kernel, call.ctx.scope, f.text))
                self._last_kernel_call = (node, kernel)

    def _record_setattr(self, args: tuple[Value, ...], node: cst.Call) -> None:
        """``setattr(obj, "x", v)`` is the assignment ``obj.x = v``: record it as one, so
        rules that read assignments (wp.config.x = ...) need no second code path."""
        obj, name, value = args[:3]
        if obj.kind not in ("name", "attr") or name.kind != "const" or not isinstance(name.const, str):
            return
        target = Value("attr", text=f"{obj.text}.{name.const}", ref=f"{obj.ref}.{name.const}" if obj.ref else None)
        named = [a for a in node.args if a.keyword is None and not a.star]
        if len(named) >= 2:
            self._span_of(target, "span", named[1].value)  # the literal naming the attribute (what a fix rewrites)
        assignment = Assignment(target, value, None, self.ctx())  # type: ignore[arg-type]
        self._span_of(assignment, "span", node)
        self.model.assignments.append(assignment)

    @staticmethod
    def _names_in(node: cst.CSTNode) -> list[str]:
        """Every Name under ``node``, in source order."""
        found: list[str] = []
        stack: list[cst.CSTNode] = [node]
        while stack:
            n = stack.pop()
            if isinstance(n, cst.Name):
                found.append(n.value)
            stack.extend(reversed(children(n)))
        return found

    def leave_Assign(self, original_node: cst.Assign) -> None:
        # Record `x = call(...)` targets on the call and kernel (set after the Call visit).
        if self.frame.warp_body or not isinstance(original_node.value, cst.Call):
            return
        names = tuple(name for t in original_node.targets if (name := dotted_name(t.target)))
        if not names:
            for t in original_node.targets:
                if isinstance(t.target, (cst.Tuple, cst.List)):
                    names += tuple(dotted_name(el.value) or "" for el in t.target.elements)
        for call in reversed(self.model.calls):
            if call.ctx.order != self.order:
                break
            call.assigned_to = names
            break
        last = getattr(self, "_last_kernel_call", None)
        if last is not None and last[0] is original_node.value:
            last[1].assigned_to = names

    # ------------------------------------------------------------------ finish
    def _digest_redefinitions(self) -> None:
        """The text digest (``Function.source_digest``, and its kernel's) of each decorated def whose name the same
        scope defines more than once: it is read only to tell an identical re-definition of a kernel from new
        content, and generating a def's text again was a tenth of modelling a file when every decorated def had one."""
        twins: dict[tuple[str, str], list[tuple[Function, Kernel | None, cst.FunctionDef]]] = {}
        for entry in self._decorated_defs:
            twins.setdefault((entry[0].ctx.scope, entry[0].name), []).append(entry)
        for group in twins.values():
            for fn, kernel, node in group if len(group) > 1 else ():
                fn.source_digest = _source_digest(node)
                if kernel is not None:
                    kernel.source_digest = fn.source_digest

    def finish(self) -> None:
        self._digest_redefinitions()
        functions = self.model.functions
        strings = "\0".join(self._string_texts)
        self.model.functions_named_outside_bodies = tuple(sorted(
            name for name, fn in functions.items()
            if "." not in name and fn.class_name is None and (name in self._named_outside_bodies or name in strings)))
        self.model.functions_named_only_in_strings = tuple(
            name for name in self.model.functions_named_outside_bodies if name not in self._named_outside_bodies)
        for kernel, scope, fname in self._pending_kernels:
            qual = f"{scope}.{fname}" if scope else fname
            if qual in functions:
                kernel.function = qual
            elif fname in functions:
                kernel.function = fname
        for kernel in self.model.kernels:
            fn = functions.get(kernel.function)
            if fn is None:
                continue
            kernel.warp_calls = set(fn.warp_calls)
            kernel.generic = kernel.generic or fn.generic
            enclosing = enclosing_names(functions, fn.ctx.scope if kernel.form == "decorator" else kernel.ctx.scope)
            own = fn.locals | {p.name for p in fn.params}
            annotations = vars(self).get("_annotation_names", {})
            read = set(fn.loaded).union(*(annotations.get(id(p), ()) for p in fn.params))
            kernel.captured = (read & enclosing) - own
            kernel.static_captured = (fn.static_loaded & enclosing) - own
        ordered = self._ordered_reads()
        spans = self.positions.spans([node for _, _, node in self._span_targets])
        for obj, attr, node in self._span_targets:
            span = spans.get(id(node))
            if span is not None:
                setattr(obj, attr, span)
        self.model.read_contexts = {value.span: ctx for value, ctx in ordered if value.span is not NO_SPAN}

    def _ordered_reads(self) -> list[tuple[Value, Context]]:
        """The reads of module-level names whose value depends on where they are read: names bound by more
        than one module-level statement or rebound by a function that declares them ``global``. Each read
        gets its span (set with the others') and the context of the statement it is in; a read in a statement
        that has no record (a ``return``, an ``if`` test) keeps neither, and is read as every binding."""
        rebound = {name for name, count in self._bound_at_module_level.items() if count > 1}
        for fn in self.model.functions.values():
            rebound.update(fn.declared_global)
        if not rebound:
            return []
        contexts: dict[int, Context] = {}
        for ctx in (*(c.ctx for c in self.model.calls), *(a.ctx for a in self.model.assignments)):
            contexts.setdefault(ctx.order, ctx)
        ordered = []
        for value, node, order in self._global_reads:
            found = contexts.get(order)
            if value.text in rebound and found is not None:
                self._span_of(value, "span", node)
                ordered.append((value, found))
        return ordered


def extract(
    tree: cst.Module,
    model: FileModel,
    extra_visitors: list[cst.CSTVisitor] | None = None,
    text: str | None = None,
) -> FileModel:
    """Fill ``model`` from ``tree`` (parsed from ``text``) in one traversal, batched with
    any rule visitors and the file's ``Positions``."""
    positions = Positions(tree, tree.code if text is None else text)
    extractor = Extractor(tree, model, positions)
    for visitor in extra_visitors or ():
        if isinstance(visitor, PositionedVisitor):
            visitor.positions = positions
    walk(tree, [extractor, *(extra_visitors or ()), positions])
    extractor.finish()
    return model


class _Batched(cst.CSTVisitor):
    """Runs several visitors in one traversal (the extractor first)."""

    def __init__(self, visitors: list[cst.CSTVisitor]) -> None:
        self.visitors = visitors

    def on_visit(self, node: cst.CSTNode) -> bool:
        for v in self.visitors:
            v.on_visit(node)
        return True

    def on_leave(self, original_node: cst.CSTNode) -> None:
        for v in reversed(self.visitors):
            v.on_leave(original_node)

    def on_visit_attribute(self, node: cst.CSTNode, attribute: str) -> None:
        for v in self.visitors:
            v.on_visit_attribute(node, attribute)

    def on_leave_attribute(self, original_node: cst.CSTNode, attribute: str) -> None:
        for v in reversed(self.visitors):
            v.on_leave_attribute(original_node, attribute)


def _source_digest(node: cst.FunctionDef) -> str:
    """A digest of a function definition's text (decorators, signature and body; LibCST keeps the indentation
    relative, so one definition nested deeper or in another block has the same text)."""
    text = cst.Module(body=()).code_for_node(node.with_changes(leading_lines=()))
    return hashlib.sha1(text.encode()).hexdigest()

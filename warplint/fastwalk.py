"""A read-only LibCST traversal that does not rebuild the tree.

``node.visit(visitor)`` calls ``_visit_and_replace_children``, which constructs (and
validates) a new copy of every node even for a read-only ``CSTVisitor`` and then
throws it away; on the Warp source tree that rebuild costs more than the parse
itself. ``node.children`` does the same for one level.

Here the fields a node class visits, in LibCST's own lexical order, are learnt once
per class by running ``_visit_and_replace_children`` with a recorder that does not
descend, and the walk then reads those fields directly. The visitor sees exactly the
calls LibCST would make (``on_visit``, ``on_visit_attribute``, ``on_leave_attribute``,
``on_leave``, same nodes, same order); ``tests/test_cache.py`` compares both event
streams on real files.
"""

from __future__ import annotations

from typing import Any

import libcst as cst

_FIELDS: dict[type, tuple[str, ...]] = {}
# Node classes whose visited fields depend on the instance (LibCST 1.x skips the
# attribute visit of a ``None`` format spec); these are recorded per node (rare).
_PER_INSTANCE = frozenset({"FormattedStringExpression", "TemplatedStringExpression"})


class _FieldRecorder(cst.CSTVisitor):
    def __init__(self) -> None:
        self.fields: list[str] = []

    def on_visit(self, node: cst.CSTNode) -> bool:
        return False

    def on_leave(self, original_node: cst.CSTNode) -> None:
        pass

    def on_visit_attribute(self, node: cst.CSTNode, attribute: str) -> None:
        self.fields.append(attribute)

    def on_leave_attribute(self, original_node: cst.CSTNode, attribute: str) -> None:
        pass


def visited_fields(node: cst.CSTNode) -> tuple[str, ...]:
    """The names of the fields LibCST visits for ``type(node)``, in visiting order."""
    kind = type(node)
    fields = _FIELDS.get(kind)
    if fields is None:
        recorder = _FieldRecorder()
        node._visit_and_replace_children(recorder)  # one rebuild per node class, ever
        fields = tuple(recorder.fields)
        if kind.__name__ not in _PER_INSTANCE:
            _FIELDS[kind] = fields
    return fields


def children(node: cst.CSTNode) -> list[cst.CSTNode]:
    """``node.children`` (lexical order) without rebuilding ``node``."""
    found: list[cst.CSTNode] = []
    for name in visited_fields(node):
        value = getattr(node, name)
        if isinstance(value, cst.CSTNode):
            found.append(value)
        elif isinstance(value, (tuple, list)):
            found.extend(value)
    return found


_DEFAULT_VISIT = cst.CSTVisitor.on_visit
_DEFAULT_LEAVE = cst.CSTVisitor.on_leave
_DEFAULT_VISIT_ATTR = cst.CSTVisitor.on_visit_attribute
_DEFAULT_LEAVE_ATTR = cst.CSTVisitor.on_leave_attribute
_INERT = ((), (), ())  # a node with no callbacks and no children: not even entered


def _callback(visitor: Any, method: str) -> Any:
    """``visitor.<method>`` unless it is LibCST's no-op stub (CSTVisitor defines a
    ``visit_*``/``leave_*`` for every node class and field, all doing nothing)."""
    found = getattr(type(visitor), method, None)
    if found is None or found is getattr(cst.CSTVisitor, method, None):
        return None
    return getattr(visitor, method)


def _plan(visitors: list[Any], node: cst.CSTNode) -> tuple:
    """Per node class: the callbacks each visitor has for it, looked up once.

    A visitor that keeps CSTVisitor's ``on_visit``/``on_leave``/``on_*_attribute``
    dispatches to ``visit_<Node>``/``leave_<Node>``/``visit_<Node>_<field>``; those
    bound methods are resolved here instead of by a ``getattr`` per node and field
    (LibCST's no-op stubs are skipped). A visitor that overrides a hook gets the
    hook called.
    """
    name = type(node).__name__
    fields = visited_fields(node)
    pre: list[tuple[Any, bool]] = []  # (callback, is a raw on_visit hook)
    post: list[Any] = []
    attrs: list[tuple[str, tuple, tuple]] = []
    for v in visitors:
        if type(v).on_visit is _DEFAULT_VISIT:
            f = _callback(v, f"visit_{name}")
            if f is not None:
                pre.append((f, False))
        else:
            pre.append((v.on_visit, True))
    for v in reversed(visitors):
        if type(v).on_leave is _DEFAULT_LEAVE:
            f = _callback(v, f"leave_{name}")
            if f is not None:
                post.append(f)
        else:
            post.append(v.on_leave)
    for field_name in fields:
        before: list[Any] = []
        after: list[Any] = []
        for v in visitors:
            if type(v).on_visit_attribute is _DEFAULT_VISIT_ATTR:
                f = _callback(v, f"visit_{name}_{field_name}")
                if f is not None:
                    before.append(f)
            else:
                before.append(lambda n, _hook=v.on_visit_attribute, _a=field_name: _hook(n, _a))
        for v in reversed(visitors):
            if type(v).on_leave_attribute is _DEFAULT_LEAVE_ATTR:
                f = _callback(v, f"leave_{name}_{field_name}")
                if f is not None:
                    after.append(f)
            else:
                after.append(lambda n, _hook=v.on_leave_attribute, _a=field_name: _hook(n, _a))
        attrs.append((field_name, tuple(before), tuple(after)))
    plan = (tuple(pre), tuple(post), tuple(attrs))
    return _INERT if plan == _INERT else plan


def walk(node: cst.CSTNode, visitor: Any) -> None:
    """``node.visit(visitor)`` for a read-only visitor, without rebuilding nodes.

    ``visitor`` may be a list of visitors: they run in one traversal, each sees every
    node (a ``False`` from one visitor's ``visit_*`` does not prune the others), and
    leave callbacks run in reverse order — the extractor's batching semantics.
    """
    batched = isinstance(visitor, (list, tuple))
    visitors = list(visitor) if batched else [visitor]
    plans: dict[type, tuple] = {}
    sentinel = cst.MaybeSentinel
    inert = _INERT

    def plan_of(n: cst.CSTNode) -> tuple:
        kind = type(n)
        plan = plans.get(kind)
        if plan is None:
            plan = _plan(visitors, n)
            if kind.__name__ not in _PER_INSTANCE:
                plans[kind] = plan
        return plan

    def visit(n: cst.CSTNode, plan: tuple) -> None:
        pre, post, attrs = plan
        descend = True
        for f, raw in pre:
            result = f(n)
            if not batched and (result is False or (raw and not result)):
                descend = False
        if descend:
            for field_name, before, after in attrs:
                for f in before:
                    f(n)
                value = getattr(n, field_name)
                kind = type(value)
                if kind is tuple or kind is list:
                    for child in value:
                        child_plan = plans.get(type(child)) or plan_of(child)
                        if child_plan is not inert:
                            visit(child, child_plan)
                elif value is not None and kind is not sentinel:
                    child_plan = plans.get(kind) or plan_of(value)
                    if child_plan is not inert:
                        visit(value, child_plan)
                for f in after:
                    f(n)
        for f in post:
            f(n)

    try:
        visit(node, plan_of(node))
    finally:
        # ``visit`` refers to itself, a cycle that would keep the visitors -- and through
        # them the whole tree -- alive until the cyclic collector runs (a full scan of
        # every node, ~10 % of a lint run). Let go of them now.
        plans.clear()
        visitors.clear()

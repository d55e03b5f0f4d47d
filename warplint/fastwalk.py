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


_INERT = ((), (), ())  # a node with no callbacks and no children: not even entered


def _has_callback(kind: type, method: str) -> bool:
    """``kind`` defines ``method`` and it is not LibCST's no-op stub (CSTVisitor defines a
    ``visit_*``/``leave_*`` for every node class and field, all doing nothing)."""
    found = getattr(kind, method, None)
    return found is not None and found is not getattr(cst.CSTVisitor, method, None)


# (visitor classes, node class) -> the plan's shape: which visitor (by index) has which
# callback. Looked up once per process; binding it to a walk's visitors is cheap.
_SHAPES: dict[tuple, tuple] = {}


def _callbacks(order: list[tuple[int, type]], hook: str, method: str) -> tuple[tuple[int, str, bool], ...]:
    """(visitor index, name, is the raw hook) for each visitor class in ``order``: its
    ``method`` if it keeps CSTVisitor's ``hook`` (and ``method`` is not a no-op stub),
    else its own ``hook``."""
    default = getattr(cst.CSTVisitor, hook)
    found = []
    for i, kind in order:
        if getattr(kind, hook) is default:
            if _has_callback(kind, method):
                found.append((i, method, False))
        else:
            found.append((i, hook, True))
    return tuple(found)


def _shape(kinds: tuple[type, ...], node: cst.CSTNode) -> tuple:
    """Per node class: the callbacks each visitor class has for it.

    A visitor that keeps CSTVisitor's ``on_visit``/``on_leave``/``on_*_attribute``
    dispatches to ``visit_<Node>``/``leave_<Node>``/``visit_<Node>_<field>``; those
    are resolved here instead of by a ``getattr`` per node and field (LibCST's no-op
    stubs are skipped). A visitor that overrides a hook gets the hook called. Visit
    callbacks run in visitor order, leave callbacks in reverse.
    """
    name = type(node).__name__
    order = list(enumerate(kinds))
    backwards = order[::-1]
    shape = (
        _callbacks(order, "on_visit", f"visit_{name}"),
        _callbacks(backwards, "on_leave", f"leave_{name}"),
        tuple(
            (field, _callbacks(order, "on_visit_attribute", f"visit_{name}_{field}"),
             _callbacks(backwards, "on_leave_attribute", f"leave_{name}_{field}"))
            for field in visited_fields(node)
        ),
    )
    return _INERT if shape == _INERT else shape


def _bind(visitor: Any, method: str, field_name: str | None) -> Any:
    bound = getattr(visitor, method)
    if field_name is None:
        return bound
    return lambda n, _hook=bound, _a=field_name: _hook(n, _a)


def _plan(visitors: list[Any], kinds: tuple[type, ...], node: cst.CSTNode) -> tuple:
    """The callbacks of ``visitors`` (whose classes are ``kinds``) for ``type(node)``."""
    key: tuple = (kinds, type(node))
    if type(node).__name__ in _PER_INSTANCE:
        key = (*key, visited_fields(node))
    shape = _SHAPES.get(key)
    if shape is None:
        shape = _SHAPES[key] = _shape(kinds, node)
    if shape is _INERT:
        return _INERT
    pre, post, attrs = shape
    return (
        tuple((getattr(visitors[i], method), raw) for i, method, raw in pre),
        tuple(getattr(visitors[i], method) for i, method, _ in post),
        tuple(
            (field, tuple(_bind(visitors[i], m, field if raw else None) for i, m, raw in before),
             tuple(_bind(visitors[i], m, field if raw else None) for i, m, raw in after))
            for field, before, after in attrs
        ),
    )


def walk(node: cst.CSTNode, visitor: Any) -> None:
    """``node.visit(visitor)`` for a read-only visitor, without rebuilding nodes.

    ``visitor`` may be a list of visitors: they run in one traversal, each sees every
    node (a ``False`` from one visitor's ``visit_*`` does not prune the others), and
    leave callbacks run in reverse order — the extractor's batching semantics.
    """
    batched = isinstance(visitor, (list, tuple))
    visitors = list(visitor) if batched else [visitor]
    kinds = tuple(type(v) for v in visitors)
    plans: dict[type, tuple] = {}
    sentinel = cst.MaybeSentinel
    inert = _INERT

    def plan_of(n: cst.CSTNode) -> tuple:
        kind = type(n)
        plan = plans.get(kind)
        if plan is None:
            plan = _plan(visitors, kinds, n)
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

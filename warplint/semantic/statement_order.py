"""Which statements of one scope certainly run before another, read off their extracted contexts.

Python runs a scope's statements in order: a module-level name read right after a statement that binds it
(an assignment, or a call of a function that rebinds it through ``global``) holds what that statement bound,
whatever else binds it elsewhere. These are the control-flow facts that decide it, from ``Context`` alone
(the statement's order, the tests of the ``if``/``while`` blocks around it, its loop and ``try``).
"""

from __future__ import annotations

from warplint.model import Context, FileModel, Function


def runs_whenever(earlier: Context, later: Context) -> bool:
    """``earlier`` (a statement of ``later``'s scope that comes first) runs each time ``later`` does: every test
    it is under also guards ``later``, it is in no ``try`` block ``later`` is not in, in no handler or ``finally``
    block, and in no loop unless it is the loop ``later`` is in (a loop may run no turn)."""
    if later.conditions[:len(earlier.conditions)] != earlier.conditions:
        return False
    if earlier.in_handler or earlier.in_finally:
        return False
    if earlier.try_index is not None and earlier.try_index != later.try_index:
        return False
    return not earlier.in_loop or (earlier.loop is not None and earlier.loop == later.loop)


def always_before(earlier: Context, read: Context) -> bool:
    """``earlier`` (a statement of the scope ``read`` is in) has run, each time ``read`` runs, before it."""
    return earlier.order < read.order and runs_whenever(earlier, read)


def may_run_between(statement: Context, first: Context | None, read: Context) -> bool:
    """``statement`` may run after ``first`` (None: the scope's start) and before ``read``: it comes between
    them, or it is in the loop around ``read`` that ``first`` is outside of (a later turn reads what it bound)."""
    after_first = first is None or statement.order > first.order
    if after_first and statement.order < read.order:
        return True
    loop = read.loop
    outside_loop = first is None or first.loop != loop
    return (loop is not None and outside_loop and statement.loop == loop
            and read.order < statement.order <= loop.end)


def binds_whenever_run(statement: Context, fn: Function) -> bool:
    """The statement of ``fn``'s body runs each time a call of ``fn`` returns: it is under no test, loop or
    ``try`` of the body, and no ``return`` comes before it."""
    return (not statement.conditions and not statement.in_loop and statement.try_index is None
            and not statement.in_handler and not statement.in_finally
            and (not fn.first_return or fn.first_return > statement.order))


def constructor_before(file: FileModel, method: str) -> Function | None:
    """The ``__init__`` that ran before the method ``method`` (a qualname of ``file``) can be called on an
    instance: its class's own (none for a static or class method, nor for ``__init__`` itself). A class derived
    from it may define an ``__init__`` of its own that never calls this one (``Bindings.subclasses``)."""
    fn = file.functions.get(method)
    if fn is None or fn.class_name is None or fn.name == "__init__" or fn.qualname != f"{fn.class_name}.{fn.name}":
        return None
    if fn.binds != "instance":
        return None
    return file.functions.get(f"{fn.class_name}.__init__")

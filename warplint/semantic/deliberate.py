"""Facts that say a defeat of Warp's kernel cache (CS-2: a cleared or disabled cache, a new or removed cache
directory) is chosen rather than paid on every run, derived from what the program does, never from names:

- ``opt_in``: the statement runs only when whoever runs the program, or calls its function, asks for it: an
  enclosing ``if``/``while`` reads the command line (``sys.argv``; what an ``argparse.ArgumentParser``'s
  ``parse_args``/``parse_known_args`` returns; an absl flag: ``flags.DEFINE_*``'s holder, ``flags.FLAGS``), the
  process environment (``os.environ``, ``os.getenv``), or a parameter of the enclosing function (its caller
  decides); or every call of that function is such a path itself (however many calls out). ``if __name__ ==
  "__main__":`` reads none of these: it is how a script runs, not a choice.
- ``cold_start_measurement``: after the statement, its function reads a clock before the first Warp build
  that follows (a launch or a load, directly or through the project functions it calls) and again after it, or
  opens a ``wp.ScopedTimer`` before that build: it times the cold build it asked for. A timing that starts
  after a build times the run, which the cold start only slows down.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from warplint.model import Context, FileModel, Function, Value
from warplint.names import is_warp

from .evaluator import ENVIRONMENT_READS
from .events import LAUNCH_CALLS, LOAD_CALLS

if TYPE_CHECKING:
    from .evaluator import Source
    from .launches import IdentityFacts

# Python's clocks: a read before and after a build times it.
CLOCKS = frozenset({
    "time.perf_counter", "time.perf_counter_ns", "time.monotonic", "time.monotonic_ns", "time.time", "time.time_ns",
    "time.process_time", "time.process_time_ns", "timeit.default_timer",
})
# argparse.ArgumentParser's methods that return the options the command line gave
_PARSE_METHODS = frozenset({"parse_args", "parse_known_args", "parse_intermixed_args", "parse_known_intermixed_args"})


def opt_in(facts: IdentityFacts, file: FileModel, ctx: Context) -> str | None:
    """Why the statement at ``ctx`` runs only on request (see the module docstring), or None."""
    fn = file.function_at(ctx.scope)
    params = {p.name for p in fn.params} if fn is not None else set()
    for text, test in zip(ctx.conditions, ctx.tests, strict=False):
        why = _choice(facts, file, test, ctx.scope, params)
        if why is not None:
            return f"behind `if {text}` ({why})"
    if fn is None:
        return None
    fq = facts.bindings.fqname(file, fn.qualname)
    # a summary per function, however many callers out (a recursive call is no request of its own)
    return facts.evaluator.budget.summary(facts.memo, ("called on request", fq),
                                          lambda: _called_on_request(facts, fn, fq), None)


def _called_on_request(facts: IdentityFacts, fn: Function, fq: str) -> str | None:
    callers = facts.bindings.callers(fq)
    if callers and all(opt_in(facts, f, call.ctx) for f, call in callers):
        return f"{fn.name}() is only called on request"
    return None


def _choice(facts: IdentityFacts, file: FileModel, value: Value, scope: str, params: set[str]) -> str | None:
    """What user or caller choice the expression ``value`` (a condition, or part of one) reads, or None (also
    when the question's budget is spent)."""
    return facts.evaluator.budget.step(lambda: _choice_in(facts, file, value, scope, params), None)


def _choice_in(facts: IdentityFacts, file: FileModel, value: Value, scope: str, params: set[str]) -> str | None:
    if value.kind in ("name", "attr") and value.ref:
        if value.local and value.ref.partition(".")[0] in params:
            return f"`{value.ref.partition('.')[0]}` is a parameter its caller passes"
        why = _input(value)
        if why is not None:
            return why
        for source in facts.evaluator.sources(file, value, scope):
            why = _source_input(facts, source)
            if why is not None:
                return why
        return None
    why = _input(value)
    if why is not None:
        return why
    return next((why for part in value.parts() if (why := _choice(facts, file, part, scope, params))), None)


def _input(value: Value) -> str | None:
    """The input of the process ``value`` reads directly: the command line or the environment."""
    ref = value.ref or ""
    if value.kind in ("name", "attr") and (ref == "sys.argv" or ref.startswith("sys.argv.")):
        return "the command line"
    if (value.kind == "call" and ref in ENVIRONMENT_READS) or ref == "os.environ" or ref.startswith("os.environ.") \
            or (value.kind == "subscript" and value.base is not None and value.base.ref == "os.environ"):
        return "the environment"
    if ref == "absl.flags.FLAGS" or ref.startswith(("absl.flags.FLAGS.", "absl.flags.DEFINE")):
        return "a command-line flag"
    return None


def _source_input(facts: IdentityFacts, source: Source) -> str | None:
    """The input of the process an expression a value comes from is: ``_input``, or the options an
    ``argparse.ArgumentParser`` parsed from the command line (also an item of ``parse_known_args()``)."""
    value = source.value
    while value.kind == "subscript" and value.base is not None and value.base.kind == "call":
        value = value.base
    why = _input(value)
    if why is not None or value.kind != "call":
        return why
    return "a command-line option" if _parsed_options(facts, source, value) else None


def _parsed_options(facts: IdentityFacts, source: Source, call: Value) -> bool:
    """``call`` is an ``argparse.ArgumentParser``'s ``parse_args`` (or a sibling): the options the command line
    gave. The parser is the receiver: a name bound to ``argparse.ArgumentParser(...)``, or that call itself."""
    if call.ref:
        head, _, method = call.ref.rpartition(".")
        # a name the function binds, else one of its module
        receiver = Value(kind="attr" if "." in head else "name", text=head, ref=head,
                         local=bool(facts.bindings.name_assignments(source.file, source.scope, head))) if head else None
    elif call.base is not None and call.base.kind == "attr":
        method, receiver = call.base.text.rpartition(".")[2], call.base.base
    else:
        return False
    if method not in _PARSE_METHODS or receiver is None:
        return False
    return any(s.value.kind == "call" and s.value.ref == "argparse.ArgumentParser" and not s.attrs
               for s in facts.evaluator.sources(source.file, receiver, source.scope, source.site))


def cold_start_measurement(facts: IdentityFacts, file: FileModel, ctx: Context) -> str | None:
    """How the function of the statement at ``ctx`` times the cold build that follows it, or None."""
    after = [c for c in facts.bindings.calls_in(file, ctx.scope) if c.ctx.order > ctx.order]
    # a launch or load builds its module, whichever kernel it is (also one the layer cannot name)
    builds = [order for order, _, _ in facts.launch_timeline(file, ctx.scope) if order > ctx.order]
    builds += [c.ctx.order for c in after if is_warp(c.callee, *LAUNCH_CALLS, *LOAD_CALLS)]
    if not builds:
        return None
    # the timing starts before the first build: one that starts after a warm-up times the run, not the build
    first = min(builds)
    started = [c for c in after if c.ctx.order < first]
    if any(is_warp(c.callee, "ScopedTimer") for c in started):
        return "a `wp.ScopedTimer` times the cold build after it"
    start = next((c for c in started if c.callee in CLOCKS), None)
    if start is not None and any(c.callee in CLOCKS and c.ctx.order > first for c in after):
        return f"`{start.callee}()` is read before and after the cold build it makes"
    return None

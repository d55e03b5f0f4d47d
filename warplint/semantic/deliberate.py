"""Facts that say a defeat of Warp's kernel cache (CS-2: a cleared or disabled cache, a new or removed cache
directory) is chosen rather than paid on every run, derived from what the program does, never from names:

- ``opt_in``: the statement runs only when whoever runs the program, or calls its function, asks for it: an
  enclosing ``if``/``while`` reads the command line (``sys.argv``; what an ``argparse.ArgumentParser``'s
  ``parse_args``/``parse_known_args`` returns; an absl flag: ``flags.DEFINE_*``'s holder, ``flags.FLAGS``), the
  process environment (``os.environ``, ``os.getenv``), or a parameter of the enclosing function (its caller
  decides); or every call of that function is such a path itself (however many calls out). ``if __name__ ==
  "__main__":`` reads none of these: it is how a script runs, not a choice.
- ``on_purpose``: the cold start is chosen, not paid by accident: written in benchmark code (a benchmark may
  time the compile), in test code that runs only when its file is run as a script (its ``__main__`` block, a
  runner script's entry: not when the test runner runs the suite), in test code that no test runs in the test
  process (a subprocess's entry the test calls by its name), in test code that undoes the change once done
  (``restored``), or in a cold-start measurement. A cold start a test, a fixture or a test module's import leaves
  behind is paid by every later test of the run and by every run of the suite: reported.
- ``restored``: a later statement of the function (a ``finally:``, a fixture's code after its ``yield``), or a
  teardown the test runner calls after it, assigns ``wp.config.<setting>`` back the value read from it before:
  a scoped change, made for what the code checks (Warp's own compiler tests turn the cache off around the
  compile they check).
- ``cold_start_measurement``: after the statement, its function reads a clock before the first Warp build
  that follows (a launch or a load, directly or through the project functions it calls) and again after it, or
  opens a ``wp.ScopedTimer`` before that build: it times the cold build it asked for. A timing that starts
  after a build times the run, which the cold start only slows down.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from warplint.model import Context, FileModel, Function, Value
from warplint.names import is_warp

from . import collect
from .context import CodeContext, teardown_after
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


def on_purpose(facts: IdentityFacts, file: FileModel, ctx: Context, setting: str | None = None) -> str | None:
    """Why the cold start written at ``ctx`` is chosen (see the module docstring), or None. ``setting``: the
    ``wp.config`` setting it changes (``cache_kernels``, ``kernel_cache_dir``), when it changes one that can be
    set back; a cleared or removed cache cannot."""
    context = facts.bindings.context_of(file, ctx.scope)
    if context is CodeContext.BENCHMARK:
        return f"in {context.phrase}"
    if context is CodeContext.TEST:
        if _run_as_script(facts, file, ctx):
            return "in test code that runs only when its file is run as a script, not by the test runner"
        if not facts.bindings.runs_in_test_process(file, ctx.scope):
            return "in test code no test runs in its own process (a subprocess's entry, called by its name)"
        undone = restored(facts, file, ctx, setting) if setting is not None else None
        if undone is not None:
            return f"in test code that {undone}"
    measured = cold_start_measurement(facts, file, ctx)
    return f"a cold-start measurement: {measured}" if measured else None


def _run_as_script(facts: IdentityFacts, file: FileModel, ctx: Context) -> bool:
    """The statement at ``ctx`` runs only when its file is run as a script: under ``if __name__ == "__main__":``,
    or in a function every call of which is such a statement (however many calls out)."""
    if ctx.in_main_guard:
        return True
    fn = file.function_at(ctx.scope)
    if fn is None:
        return False
    fq = facts.bindings.fqname(file, fn.qualname)

    def every_call_as_script() -> bool:
        callers = facts.bindings.callers(fq)
        return bool(callers) and all(_run_as_script(facts, f, call.ctx) for f, call in callers)

    return facts.evaluator.budget.summary(facts.memo, ("run as a script", fq), every_call_as_script, False)


def restored(facts: IdentityFacts, file: FileModel, ctx: Context, setting: str) -> str | None:
    """How the change of ``wp.config.<setting>`` made by the statement at ``ctx`` is undone once its code is
    done (see the module docstring), or None."""
    fn = file.function_at(ctx.scope)
    if fn is None:
        return None
    teardowns = teardown_after(file, fn)
    read = f"warp.config.{setting}"
    for back in collect.config_assignments(facts, setting):
        later = back.ctx.scope == ctx.scope and back.ctx.order > ctx.order
        if back.file is not file or back.augmented or not (later or back.ctx.scope in teardowns):
            continue
        if _reads(facts, file, back.value, back.ctx.scope, read):
            where = "a later statement" if later else f"`{back.ctx.scope}`"
            return f"sets `wp.config.{setting}` back in {where} to the value it read before"
    return None


def _reads(facts: IdentityFacts, file: FileModel, value: Value, scope: str, read: str) -> bool:
    """``value`` is what the expression ``read`` (a dotted name) gave: directly, through names, or through an
    attribute of a project class the value was kept in (``self._saved = wp.config.x`` in ``setUp``, read back
    in ``tearDown``)."""
    for source in facts.evaluator.sources(file, value, scope):
        if _is_read(source, read):
            return True
        kept = facts.bindings.attribute_assignments(source.value.ref) if source.value.kind == "attr" \
            and source.value.ref and not source.attrs else []
        if any(_is_read(s, read) for f, a in kept for s in facts.evaluator.sources(f, a.value, a.ctx.scope)):
            return True
    return False


def _is_read(source: Source, read: str) -> bool:
    """``source`` is the expression ``read`` (``warp.config.x``), or, where the project is Warp itself, what
    Warp's config module binds at module level (the sources of a read of it)."""
    if source.attrs:
        return False
    module = read.rpartition(".")[0]
    return source.value.ref == read or (source.file.module == module and not source.scope)


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

"""Shared by the CS-2 (cache not reused) rules WC201-WC205: not a rule itself.

- where a statement is a deliberate maintenance path (flag-gated, a clear-cache
  command), which these rules skip;
- where it is test or benchmark code, which clears caches and builds cold on purpose:
  those findings are *deliberate* (reported only with `report-deliberate`);
- what an environment variable is set to (`os.environ[...]`, `setdefault`,
  `update`, `os.putenv`; the variable's name asked of the evaluator).

Whether a path is a fresh temporary or timestamped directory is a semantic fact:
`warplint.semantic.facts_paths`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from warplint.diagnostic import Span
from warplint.index import Project
from warplint.model import Call, Context, FileModel, Value
from warplint.semantic.events import ConfigAssignment

# Words that mark a condition, function or value as a deliberate cache maintenance path.
_MAINTENANCE_WORDS = re.compile(
    r"(?<![a-z])(no_?cache|nocache|clear|clean|rebuild|purge|reset|fresh|cold|flush|wipe|invalidate|force)",
    re.I,
)
# Heads of names that carry user choices: CLI args, options, settings, flags.
# Function names of maintenance commands and cold-start benchmarks (`clear_cache`, `rebuild`, `bench_cold`);
# stricter than conditions: a plain `cleanup()` or `reset()` runs on the normal path.
_MAINTENANCE_FUNCTION = re.compile(
    r"(clear|clean|purge|wipe|reset|invalidate|flush|remove|delete|drop)_?\w*cache|rebuild|cold|no_?cache|fresh", re.I
)
_CHOICE_HEADS = {"args", "arguments", "opts", "options", "flags", "FLAGS", "cli", "config", "cfg", "settings", "params"}
_ENV_READS = ("os.environ", "os.getenv", "os.environ.get")



def _is_choice(name: str, params: set[str]) -> bool:
    head = name.partition(".")[0]
    last = name.rpartition(".")[2]
    if head in _CHOICE_HEADS or head in params or name.startswith(_ENV_READS):
        return True
    # module-level flags/constants written in upper case (`_CLEAR_WARP_CACHE.value`, `NO_CACHE`)
    return bool(_MAINTENANCE_WORDS.search(last) or _MAINTENANCE_WORDS.search(head)) or head.lstrip("_").isupper()


def gate_reason(file: FileModel, ctx: Context, project: Project | None = None, _depth: int = 0) -> str | None:
    """Why a statement is a deliberate maintenance path, or None.

    A statement is one when an enclosing condition reads a user choice (CLI
    argument, option, flag, environment variable, a parameter of the function),
    when the enclosing function is named for cache maintenance or cold runs, or
    when every project caller of that function is itself gated.
    """
    fn = file.function_at(ctx.scope)
    params = {p.name for p in fn.params} if fn is not None else set()
    for text, names in zip(ctx.conditions, _split_names(ctx), strict=True):
        if "__main__" in text:
            continue
        if any(_is_choice(n, params) for n in names) or _MAINTENANCE_WORDS.search(text):
            return f"behind `if {text}`"
    scope = ctx.scope
    while scope:
        if _MAINTENANCE_FUNCTION.search(scope.rpartition(".")[2]):
            return f"in {scope}()"
        scope = scope.rpartition(".")[0]
    if project is not None and fn is not None and _depth < 3:
        callers = project.callers(Project.fqname(file, fn.qualname))
        if callers and all(gate_reason(cf, call.ctx, project, _depth + 1) for cf, call in callers):
            return f"{fn.name}() is only called on gated paths"
    return None


def made_gate_reason(project: Project, assignment: ConfigAssignment) -> str | None:
    """``gate_reason`` of a ``wp.config`` assignment, or of a call in the chain that decides its value
    (``ConfigAssignment.site``: `if args.rebuild: set_cache(False)`)."""
    reason = gate_reason(assignment.file, assignment.ctx, project)
    site = assignment.site
    while reason is None and site is not None:
        if site.call is not None:
            reason = gate_reason(site.file, site.call.ctx, project)
        site = site.parent
    return reason


def deliberate_reason(project: Project, file: FileModel, ctx: Context) -> str | None:
    """Why a cold start written at ``ctx`` is deliberate (test or benchmark code), or None."""
    context = project.context_of(file, ctx.scope)
    return f"in {context.phrase}" if context.builds_cold_on_purpose else None


def _split_names(ctx: Context) -> list[tuple[str, ...]]:
    # Context keeps all condition names flat; give every condition all of them (conservative: more skips).
    return [ctx.condition_names] * len(ctx.conditions)


def env_writes(file: FileModel, variable: str, project: Project) -> Iterator[tuple[Value, Context, Span]]:
    """(value, ctx, span) for every write of ``variable`` into the process environment (the variable's
    name may be a constant: ``os.environ[KEY] = ...``)."""

    def names(key: Value | None, ctx: Context) -> bool:
        return key is not None and project.constant(file, key, ctx.scope) == (True, variable)

    for a in file.assignments:
        t = a.target
        if (
            t.kind == "subscript" and t.base is not None and t.base.ref == "os.environ"
            and names(t.key, a.ctx)
        ):
            yield a.value, a.ctx, a.span
    for call in file.calls:
        if call.callee in ("os.environ.setdefault", "os.putenv"):
            key = call.arg(0, "key")
            value = call.arg(1, "value")
            if value is not None and names(key, call.ctx):
                yield value, call.ctx, call.span
        elif call.callee == "os.environ.update":
            if variable in call.kwargs:
                yield call.kwargs[variable], call.ctx, call.span
            mapping = call.arg(0)
            if mapping is not None and mapping.kind == "dict":
                for key, value in mapping.items:
                    if isinstance(key, Value) and names(key, call.ctx):
                        yield value, call.ctx, call.span


def calls_named(file: FileModel, *callees: str) -> Iterator[Call]:
    for call in file.calls:
        if call.callee in callees:
            yield call

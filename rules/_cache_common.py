"""Shared by the CS-2 (cache not reused) rules WC201-WC205: not a rule itself.

- where a statement runs only on request (``Project.opt_in``: a condition that reads the command line,
  the environment or a parameter, or a function only called that way), which these rules skip;
- where the cold start is chosen (``Project.cold_start_on_purpose``: benchmark code, test code no test runs or
  that sets the setting back once done, a function that times the cold build it asks for): those findings are
  *deliberate* (reported only with `report-deliberate`);
- what an environment variable is set to (`os.environ[...]`, `setdefault`,
  `update`, `os.putenv`; the variable's name asked of the evaluator).

Whether a path is a fresh temporary or timestamped directory is a semantic fact:
`warplint.semantic.facts_paths`.
"""

from __future__ import annotations

from collections.abc import Iterator

from warplint.diagnostic import Span
from warplint.index import Project
from warplint.model import Call, Context, FileModel, Value
from warplint.semantic.events import ConfigAssignment


def gate_reason(file: FileModel, ctx: Context, project: Project) -> str | None:
    """Why a statement runs only on request (``Project.opt_in``), or None."""
    return project.opt_in(file, ctx)


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


def deliberate_reason(project: Project, file: FileModel, ctx: Context, setting: str | None = None) -> str | None:
    """Why a cold start written at ``ctx`` is deliberate (``Project.cold_start_on_purpose``), or None."""
    return project.cold_start_on_purpose(file, ctx, setting)


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

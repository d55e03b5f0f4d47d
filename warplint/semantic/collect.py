"""The one collector of events: what each file does to Warp's compilation state, as typed events
(``events``), built once per project from the identity facts.
"""

from __future__ import annotations

from dataclasses import replace

from warplint.model import Context, FileModel, Span, Value

from .events import (
    CACHE_OPERATIONS,
    LOAD_CALLS,
    CacheOperation,
    ConfigAssignment,
    FileEvents,
    KernelCreated,
    Load,
    config_assignments_in,
)
from .launches import IdentityFacts
from .layer import asked_by_key
from .module_options import option_changes


def events(facts: IdentityFacts, file: FileModel) -> FileEvents:
    """The events written in ``file`` (memoised per project), each kind in source order."""
    return facts.cached(("events", id(file)), lambda: _build(facts, file))


@asked_by_key
def config_assignments(facts: IdentityFacts, name: str | None = None) -> list[ConfigAssignment]:
    """The project's ``wp.config.<name> = ...`` assignments (every name when None), in file and source order."""
    def by_name() -> dict[str | None, list[ConfigAssignment]]:
        table: dict[str | None, list[ConfigAssignment]] = {}
        for f in facts.bindings.files:  # the file's own table (``events`` would build every file's launches)
            for event in facts.bindings.file_facts.cached(f, config_assignments_in):
                table.setdefault(event.name, []).append(event)
                table.setdefault(None, []).append(event)
        return table

    return facts.cached("config assignments", by_name).get(name, [])


@asked_by_key
def config_assignments_made(facts: IdentityFacts, file: FileModel) -> list[ConfigAssignment]:
    """The project's ``wp.config`` assignments made from ``file``, each evaluated where its value is decided:
    one whose value reads parameters of its function is made once per call of that function
    (``Evaluator.deciding_sites``, followed outwards through wrappers), from the file of the outermost call
    (``ConfigAssignment.origin``); any other once, from the file it is written in."""
    def by_origin() -> dict[str, list[ConfigAssignment]]:
        table: dict[str, list[ConfigAssignment]] = {}
        for assignment in config_assignments(facts):
            fn = assignment.file.functions.get(assignment.ctx.scope)
            sites = facts.evaluator.deciding_sites(assignment.file, fn, [assignment.value]) if fn else []
            for made in [replace(assignment, site=site) for site in sites] or [assignment]:
                table.setdefault(made.origin[0].path, []).append(made)
        return table

    return facts.cached("config assignments made", by_origin).get(file.path, [])


def snapshot_values(facts: IdentityFacts, option: str, file: FileModel, ctx: Context) -> tuple[object, ...] | None:
    """The values a Warp module created by the module-level statement ``ctx`` of ``file`` (the import that
    defines its kernels) can copy from ``wp.config.<option>``, a snapshot option (warp-facts §3): the one constant
    of each assignment of the option in the project, any of which may have run first, and Warp's default in the
    project's Warp version, unless an assignment surely ran before: an unconditional module-level one above
    ``ctx`` in the file the program runs, which nothing of the project runs before. None when one is not known
    (a value the evaluator cannot tell, ``+=``, a default the version's table does not hold)."""
    def compute() -> tuple[object, ...] | None:
        values: list[object] = []
        for assignment in config_assignments(facts, option):
            found, value = facts.evaluator.constant(assignment.file, assignment.value, assignment.ctx.scope)
            if not found or assignment.augmented:
                return None
            values.append(value)
        set_first = facts.bindings.run_name(file) == "__main__" and any(
            a.file is file and not a.ctx.scope and not a.ctx.conditions and a.ctx.try_index is None
            and not a.ctx.in_loop and a.ctx.order < ctx.order for a in config_assignments(facts, option))
        if not set_first:
            defaults = facts.bindings.warp.snapshot_option_defaults
            if option not in defaults:
                return None
            values.append(defaults[option])
        return tuple(values)

    return facts.cached(("snapshot values", option, id(file), ctx.order), compute)


ENVIRONMENT_WRITERS = ("os.environ.setdefault", "os.putenv", "os.environ.update")


def environment_writes(facts: IdentityFacts, file: FileModel, variable: str) -> list[tuple[Value, Context, Span]]:
    """(value, ctx, span) for every write of ``variable`` into the process environment in ``file``
    (``os.environ[...] = ...``, ``setdefault``, ``update``, ``os.putenv``; a variable's name may be a constant:
    ``os.environ[KEY] = ...``), the assignments first, each kind in source order."""
    found: list[tuple[Value, Context, Span]] = []
    for key, value, ctx, span in facts.bindings.file_facts.cached(file, _environment_writes):
        if key == variable if isinstance(key, str) else (
                facts.evaluator.constant(file, key, ctx.scope) == (True, variable)):
            found.append((value, ctx, span))
    return found


def _environment_writes(file: FileModel) -> tuple[tuple[Value | str, Value, Context, Span], ...]:
    """A file's own table: (the variable's name, or the value that names it; the value written; ctx; span) of each
    write into the process environment it spells (read from the model alone: kept while the model is)."""
    found: list[tuple[Value | str, Value, Context, Span]] = []
    for a in file.assignments:
        t = a.target
        if t.kind == "subscript" and t.key is not None and t.base is not None and t.base.ref == "os.environ":
            found.append((t.key, a.value, a.ctx, a.span))
    for call in file.calls:
        if call.callee not in ENVIRONMENT_WRITERS:
            continue
        if call.callee != "os.environ.update":
            key, value = call.arg(0, "key"), call.arg(1, "value")
            if key is not None and value is not None:
                found.append((key, value, call.ctx, call.span))
            continue
        found.extend((name, value, call.ctx, call.span) for name, value in call.kwargs.items())
        mapping = call.arg(0)
        if mapping is not None and mapping.kind == "dict":
            found.extend((key, value, call.ctx, call.span) for key, value in mapping.items if isinstance(key, Value))
    return tuple(found)


def _build(facts: IdentityFacts, file: FileModel) -> FileEvents:
    caches = [CacheOperation(file, call.callee.rpartition(".")[2], call)
              for call in facts.bindings.warp_calls(file, *CACHE_OPERATIONS)]
    loads = [Load(file, call, tuple(facts.modules_loaded_by(file, call)))
             for call in facts.bindings.warp_calls(file, *LOAD_CALLS)]
    return FileEvents(
        launches=tuple(facts.launches(file)),
        kernels=tuple(KernelCreated(file, k) for k in file.kernels),
        option_changes=tuple(option_changes(file, facts)),
        config_assignments=tuple(facts.bindings.file_facts.cached(file, config_assignments_in)),
        cache_operations=tuple(caches),
        loads=tuple(loads),
    )

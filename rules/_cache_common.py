"""Shared by the CS-2 (cache not reused) rules WC202-WC205 (and WC104 for test detection): not a rule itself.

- where a statement is a deliberate maintenance path (flag-gated, a clear-cache
  command, a cold-compile benchmark) or test code, which these rules skip;
- what an environment variable is set to (`os.environ[...]`, `setdefault`,
  `update`, `os.putenv`);
- whether a path value is a fresh temporary or timestamped directory, following
  local variables, module constants and project helper returns.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from warplint.diagnostic import Span
from warplint.index import Project
from warplint.model import Call, Context, FileModel, Value

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

# Calls whose result is a new directory (or a name unique to this run) each time.
FRESH_DIR_CALLS = frozenset({"tempfile.mkdtemp", "tempfile.TemporaryDirectory"})
UNIQUE_PART_CALLS = frozenset(
    {
        "time.time", "time.time_ns", "time.strftime", "time.monotonic", "time.perf_counter", "time.localtime",
        "datetime.now", "datetime.utcnow", "datetime.today", "datetime.datetime.now", "datetime.datetime.utcnow",
        "datetime.datetime.today", "datetime.date.today", "uuid.uuid1", "uuid.uuid4", "os.getpid",
        "secrets.token_hex", "secrets.token_urlsafe", "random.random", "random.randint", "tempfile.mktemp",
    }
)
_MAX_FOLLOW = 6


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


def _split_names(ctx: Context) -> list[tuple[str, ...]]:
    # Context keeps all condition names flat; give every condition all of them (conservative: more skips).
    return [ctx.condition_names] * len(ctx.conditions)


def env_writes(file: FileModel, variable: str) -> Iterator[tuple[Value, Context, Span]]:
    """(value, ctx, span) for every write of ``variable`` into the process environment."""
    for a in file.assignments:
        t = a.target
        if (
            t.kind == "subscript" and t.base is not None and t.base.ref == "os.environ"
            and t.key is not None and t.key.const == variable
        ):
            yield a.value, a.ctx, a.span
    for call in file.calls:
        if call.callee in ("os.environ.setdefault", "os.putenv"):
            key = call.arg(0, "key")
            value = call.arg(1, "value")
            if key is not None and key.const == variable and value is not None:
                yield value, call.ctx, call.span
        elif call.callee == "os.environ.update":
            if variable in call.kwargs:
                yield call.kwargs[variable], call.ctx, call.span
            mapping = call.arg(0)
            if mapping is not None and mapping.kind == "dict":
                for key, value in mapping.items:
                    if isinstance(key, Value) and key.const == variable:
                        yield value, call.ctx, call.span


def _assigned_values(file: FileModel, name: str, scope: str) -> list[Value]:
    return [
        a.value for a in file.assignments
        if a.target.kind == "name" and a.target.text == name and a.ctx.scope == scope and not a.augmented
    ]


def fresh_dir_reason(
    value: Value | None, file: FileModel, scope: str, project: Project | None, depth: int = 0
) -> str | None:
    """Why ``value`` is a directory that is new on every run (temp or timestamped), or None."""
    if value is None or depth > _MAX_FOLLOW:
        return None
    kind = value.kind
    if kind == "call":
        ref = value.ref or ""
        if ref in FRESH_DIR_CALLS:
            return f"{ref.rpartition('.')[2]}()"
        if ref in UNIQUE_PART_CALLS or ref.endswith((".now", ".utcnow", ".uuid4", ".uuid1")):
            return f"{ref}()"
        if project is not None and ref and not ref.startswith(("warp.", "os.", "tempfile.")):
            found = project.function(ref)
            if found is not None:
                hf, fn = found
                for returned in fn.returns:
                    why = fresh_dir_reason(returned, hf, fn.qualname, project, depth + 1)
                    if why:
                        return f"{why} returned by {fn.name}()"
        parts = [*value.args, *value.kwargs.values()]
        if value.base is not None:
            parts.append(value.base)
        # os.path.join / Path / str.format / f-strings: a fresh part makes the whole path fresh,
        # but `tempfile.gettempdir()` alone is a fixed directory.
        for part in parts:
            why = fresh_dir_reason(part, file, scope, project, depth + 1)
            if why:
                return why
        return None
    if kind in ("fstring", "binop", "seq", "ifexp"):
        for part in value.items:
            why = fresh_dir_reason(part, file, scope, project, depth + 1) if isinstance(part, Value) else None
            if why:
                return why
        return None
    if kind == "attr" and value.base is not None:
        # tempfile.TemporaryDirectory().name
        return fresh_dir_reason(value.base, file, scope, project, depth + 1)
    if kind in ("name", "attr") and value.text:
        head = value.text.partition(".")[0]
        if value.local:
            for assigned in _assigned_values(file, head, scope):
                why = fresh_dir_reason(assigned, file, scope, project, depth + 1)
                if why:
                    return why
            return None
        if value.ref and value.ref.startswith(file.module + ".") and "." not in value.text:
            for assigned in _assigned_values(file, head, ""):
                why = fresh_dir_reason(assigned, file, "", project, depth + 1)
                if why:
                    return why
    return None


def calls_named(file: FileModel, *callees: str) -> Iterator[Call]:
    for call in file.calls:
        if call.callee in callees:
            yield call

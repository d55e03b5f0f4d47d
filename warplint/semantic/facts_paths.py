"""Facts about directory paths, built on ``Evaluator.sources``: whether a path is new on every run
(a temporary or timestamped directory), and whether it is Warp's kernel cache directory."""

from __future__ import annotations

from typing import TYPE_CHECKING

from warplint.model import FileModel, Span, Value

if TYPE_CHECKING:
    from .evaluator import Site
    from .layer import Layer

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


def fresh_dir_reason(layer: Layer, file: FileModel, value: Value | None, scope: str = "",
                     site: Site | None = None) -> str | None:
    """Why ``value`` is a directory that is new on every run, or None: it comes from
    ``tempfile.mkdtemp()``/``TemporaryDirectory()`` or a path with a timestamp, UUID, pid or random part
    in it (``os.path.join``, ``Path``, f-strings, ``+``, ``str()`` of one). ``tempfile.gettempdir()``
    alone is a fixed directory."""
    if value is None:
        return None
    # A summary per (part, call site): the parts of a path each fan out over every call site of the parameters
    # they read, and without the memo the same (part, call site) is asked again along every path that reaches
    # it (millions of questions on Warp's own test tree). A part that leads back to itself adds no reason.
    memo: dict[tuple, str | None] = layer.cached("fresh_dir_reason", dict)
    return layer.evaluator.budget.summary(memo, (id(file), scope, id(value), id(site)), lambda: next(
        (why for source in layer.evaluator.sources(file, value, scope, site)
         if (why := _fresh_part(layer, source.file, source.value, source.scope, source.site))), None), None)


def _fresh_part(layer: Layer, file: FileModel, value: Value, scope: str, site: Site | None) -> str | None:
    kind = value.kind
    parts: list[Value] = []
    if kind == "call":
        ref = value.ref or ""
        if ref in FRESH_DIR_CALLS:
            return f"{ref.rpartition('.')[2]}()"
        if ref in UNIQUE_PART_CALLS or ref.endswith((".now", ".utcnow", ".uuid4", ".uuid1")):
            return f"{ref}()"
        # os.path.join / Path / str.format / str(): a fresh part makes the whole path fresh
        parts = [*value.args, *value.kwargs.values()]
        if value.base is not None:
            parts.append(value.base)
    elif kind in ("fstring", "binop", "seq"):
        parts = [p for p in value.items if isinstance(p, Value)]
    elif kind == "attr" and value.base is not None:
        parts = [value.base]  # tempfile.TemporaryDirectory().name
    for part in parts:
        why = fresh_dir_reason(layer, file, part, scope, site)
        if why:
            return why
    return None


def fresh_dir_call(layer: Layer, file: FileModel, value: Value | None, scope: str = "",
                   site: Site | None = None) -> tuple[FileModel, Span] | None:
    """Where the ``tempfile.mkdtemp()`` / ``TemporaryDirectory()`` call that makes ``value`` a new directory on
    every run is written (the line a user changes to keep the cache), followed as ``fresh_dir_reason`` follows
    a path; None when no such call is among its sources, or when its scope makes several of them."""
    if value is None:
        return None
    return layer.evaluator.budget.step(lambda: _fresh_dir_call(layer, file, value, scope, site), None)


def _fresh_dir_call(layer: Layer, file: FileModel, value: Value, scope: str, site: Site | None
                    ) -> tuple[FileModel, Span] | None:
    for source in layer.evaluator.sources(file, value, scope, site):
        v = source.value
        if v.kind == "call" and (v.ref or "") in FRESH_DIR_CALLS:
            calls = [c for c in layer.bindings.calls_in(source.file, source.scope) if c.callee == v.ref]
            if len(calls) == 1:
                return source.file, calls[0].span
            continue
        parts: list[Value] = []
        if v.kind == "call":
            parts = [*v.args, *v.kwargs.values(), *([v.base] if v.base is not None else [])]
        elif v.kind in ("fstring", "binop", "seq"):
            parts = [p for p in v.items if isinstance(p, Value)]
        elif v.kind == "attr" and v.base is not None:
            parts = [v.base]
        for part in parts:
            found = fresh_dir_call(layer, source.file, part, source.scope, source.site)
            if found is not None:
                return found
    return None


def cache_dir_read(layer: Layer, file: FileModel, value: Value | None, scope: str = "",
                   site: Site | None = None) -> str | None:
    """What ``value`` reads Warp's kernel cache directory from (``"wp.config.kernel_cache_dir"`` or
    ``"WARP_CACHE_PATH"``: ``os.environ[...]``, ``os.environ.get``, ``os.getenv``), followed through
    names, parameters and returns; None when no source of it is one."""
    for source in layer.evaluator.sources(file, value, scope, site):
        v = source.value
        if source.attrs:
            continue
        if v.kind == "attr" and v.ref == "warp.config.kernel_cache_dir":
            return "wp.config.kernel_cache_dir"
        key: Value | None = None
        if v.kind == "subscript" and v.base is not None and v.base.ref == "os.environ":
            key = v.key
        elif v.kind == "call" and v.ref in ("os.environ.get", "os.getenv") and v.args:
            key = v.args[0]
        if key is not None:
            found, name = layer.evaluator.constant(source.file, key, source.scope, source.site)
            if found and name == "WARP_CACHE_PATH":
                return "WARP_CACHE_PATH"
    return None

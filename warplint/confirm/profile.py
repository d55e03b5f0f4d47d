"""Where the cold start went: every module identity a run loaded, with its time split into native
compile, LTO generation, code generation and the rest, its generated source (size, adjoint share),
its kernels and whether any of them was differentiated (a ``wp.Tape`` recorded a launch, or an
adjoint launch ran)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from .events import LaunchCount, LaunchShape, RunData, is_warp_module, short


@dataclass
class IdentityCost:
    """One module identity (module, device, block_dim, hash) as one load built or fetched it."""

    module: str
    device: str
    block_dim: int | None
    hash: str | None
    status: str  # compiled / cached / error
    ms: float  # the whole Module.load
    native_ms: float | None  # the native compiler (clang / NVRTC + nvJitLink)
    lto_ms: float | None  # LTO artifacts built or fetched during codegen (MathDx GEMM/FFT/solver)
    lto_built: int
    lto_cached: int
    codegen_ms: float | None  # Warp's Python code generation, without the LTOs
    other_ms: float | None  # hashing, cache I/O, loading the binary
    source_bytes: int | None
    adjoint_bytes: int | None
    enable_backward: bool | None
    kernels: list[str]
    backward_used: bool  # a Tape recorded a launch of one of its kernels, or an adjoint launch ran
    start_s: float  # seconds since the recorder started, in the process that loaded it
    end_s: float
    pid: int | None
    references: list[str] = field(default_factory=list)  # modules whose wp.funcs it uses
    site: tuple | None = None
    seq: int = 0
    event_id: int = 0  # id() of its load event, which the judge marks when a static finding explains it
    kernel_sites: list[list] = field(default_factory=list)  # [file, first line, key, qualname, Python module]
    test: str | None = None  # the pytest node id and phase that triggered the build ("nodeid (call)")

    @property
    def adjoint_share(self) -> float | None:
        if not self.source_bytes or self.adjoint_bytes is None:
            return None
        return self.adjoint_bytes / self.source_bytes

    @property
    def outside_native_ms(self) -> float | None:
        return None if self.native_ms is None else max(self.ms - self.native_ms, 0.0)

    def label(self) -> str:
        bd = "" if self.block_dim in (None, 1) else f"@{self.block_dim}"
        return f"{self.module} {short(self.hash)}{bd}"

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        del out["event_id"], out["kernel_sites"]
        out["adjoint_share"] = None if self.adjoint_share is None else round(self.adjoint_share, 4)
        out["site"] = list(self.site) if self.site else None
        return out


def _flag(text: Any) -> bool | None:
    if text in ("True", True):
        return True
    if text in ("False", False):
        return False
    return None


def _ms(value: Any) -> float | None:
    return None if value is None else round(float(value), 3)


class Profile:
    """The cost table of one pass, built from its events and the sources left in its kernel cache."""

    def __init__(self, run: RunData, sources: dict[str, dict[str, Any]] | None = None):
        self.run = run
        self.sources = sources or {}
        self.topology: dict[LaunchShape, LaunchCount] = run.topology()
        differentiated = {
            (shape.module, shape.kernel)
            for shape, count in self.topology.items()
            if shape.adjoint or (count.taped or 0) > 0
        }
        # each process counts time from its own start: shift every process onto the first one's clock
        walls = {ev.get("pid"): float(ev["wall"]) for ev in run.events if ev.get("ev") == "start" and ev.get("wall")}
        first = min(walls.values(), default=0.0)
        self.identities: list[IdentityCost] = []
        for ev in run.loads:
            if is_warp_module(ev.get("module")):
                continue
            phases = ev.get("phases") or {}
            src = self.sources.get(ev.get("ident") or "")
            kernels = sorted({str(k[2]) for k in ev.get("kernels") or () if len(k) > 2})
            ms = float(ev.get("ms") or 0.0)
            native = _ms(phases.get("native_ms")) if phases else None
            lto = _ms(phases.get("lto_ms")) if phases else None
            codegen = _ms(phases.get("codegen_ms")) if phases else None
            other = None
            if phases:
                other = round(max(ms - (native or 0.0) - (lto or 0.0) - (codegen or 0.0), 0.0), 3)
            t_end = float(ev.get("t") or 0.0) + (walls.get(ev.get("pid"), first) - first)
            self.identities.append(
                IdentityCost(
                    module=str(ev.get("module")),
                    device=str(ev.get("device")),
                    block_dim=ev.get("block_dim"),
                    hash=ev.get("hash"),
                    status=str(ev.get("status")),
                    ms=round(ms, 3),
                    native_ms=native,
                    lto_ms=lto,
                    lto_built=int(phases.get("lto_built") or 0),
                    lto_cached=int(phases.get("lto_cached") or 0),
                    codegen_ms=codegen,
                    other_ms=other,
                    source_bytes=src["bytes"] if src else phases.get("source_bytes"),
                    adjoint_bytes=src["adjoint_bytes"] if src else None,
                    enable_backward=_flag(ev.get("enable_backward")),
                    kernels=kernels,
                    backward_used=any((ev.get("module"), k) in differentiated for k in kernels),
                    start_s=round(t_end - ms / 1000.0, 6),
                    end_s=t_end,
                    pid=ev.get("pid"),
                    references=list(ev.get("references") or ()),
                    site=ev.get("_site"),
                    seq=int(ev.get("seq") or 0),
                    event_id=id(ev),
                    kernel_sites=[list(k) for k in ev.get("kernels") or ()],
                    test=ev.get("test"),
                )
            )

    # -- queries ---------------------------------------------------------------------------------
    def compiled(self) -> list[IdentityCost]:
        return [i for i in self.identities if i.status == "compiled"]

    def ranked(self) -> list[IdentityCost]:
        return sorted(self.identities, key=lambda i: (-i.ms, i.seq))

    def totals(self) -> dict[str, float]:
        comp = self.compiled()

        def total(attr: str) -> float:
            return round(sum(getattr(i, attr) or 0.0 for i in comp), 3)

        return {
            "module_ms": round(sum(i.ms for i in self.identities), 3),
            "compiled_ms": total("ms"),
            "native_ms": total("native_ms"),
            "lto_ms": total("lto_ms"),
            "codegen_ms": total("codegen_ms"),
            "other_ms": total("other_ms"),
            "lto_built": sum(i.lto_built for i in comp),
            "lto_cached": sum(i.lto_cached for i in comp),
            "source_bytes": sum(i.source_bytes or 0 for i in comp),
            "adjoint_bytes": sum(i.adjoint_bytes or 0 for i in comp),
        }

    def lto_rebuilds(self) -> list[tuple[dict, dict, dict]]:
        """(first build, clear_lto_cache event, second build) for each LTO built again after a
        ``clear_lto_cache()`` call that ran between the two builds, in one process."""
        out = []
        clears = [c for c in self.run.clears if c.get("fn") == "clear_lto_cache" and not c.get("noop")]
        first: dict[tuple, dict] = {}
        for ev in sorted(self.run.ltos, key=lambda e: (e.get("pid", 0), e.get("seq", 0))):
            if not ev.get("built"):
                continue
            key = (ev.get("pid"), ev.get("key"))
            before = first.get(key)
            if before is None:
                first[key] = ev
                continue
            between = [
                c for c in clears
                if c.get("pid") == ev.get("pid") and before.get("seq", 0) < c.get("seq", 0) < ev.get("seq", 0)
            ]
            if between:
                out.append((before, between[-1], ev))
            first[key] = ev
        return out

    def tests(self) -> list[dict[str, Any]]:
        """Under pytest: each test (node id) and phase (setup / call / teardown) that triggered builds, with the
        builds' seconds, most first."""
        by: dict[tuple[str, str], list[IdentityCost]] = {}
        for i in self.compiled():
            if i.test:
                node, _, phase = i.test.rpartition(" (")
                by.setdefault((node or i.test, phase.rstrip(")") if node else ""), []).append(i)
        rows = [{"test": node, "phase": phase, "builds": len(ids), "ms": round(sum(i.ms for i in ids), 3),
                 "modules": sorted({i.module for i in ids}), "pids": sorted({str(i.pid) for i in ids})}
                for (node, phase), ids in by.items()]
        return sorted(rows, key=lambda r: (-r["ms"], r["test"]))

    def to_json(self) -> dict[str, Any]:
        return {
            "tests": self.tests(),
            "totals": self.totals(),
            "identities": [i.to_json() for i in self.ranked()],
            "ltos": [
                {"key": e.get("key"), "symbol": e.get("symbol"), "module": e.get("module"), "built": e.get("built"),
                 "ms": e.get("ms"), "build_ms": e.get("build_ms")}
                for e in self.run.ltos
            ],
            "topology": topology_json(self.topology),
        }


def topology_json(topology: dict[LaunchShape, LaunchCount]) -> list[dict[str, Any]]:
    rows = []
    for shape, count in sorted(topology.items(), key=lambda kv: repr(kv[0])):
        row = shape.to_json()
        row["launches"] = count.launches
        row["taped"] = count.taped
        rows.append(row)
    return rows


def _s(ms: float | None) -> str:
    if ms is None:
        return "-"
    return f"{ms / 1000.0:.2f}"


def render_profile(profile_json: dict[str, Any], *, compile_elapsed_s: float | None, max_rows: int = 8,
                   width: int = 100, warm_compiled: int | None = None) -> list[str]:
    """The ranked table: one row per identity, the most expensive first (seconds)."""
    ids = profile_json.get("identities") or []
    if not ids:
        return []
    t = profile_json.get("totals") or {}
    head = f"  where the cold start went: {_s(t.get('module_ms'))} s in module loads"
    why = None  # a compile elapsed that does not measure the cold start's builds, and why
    if compile_elapsed_s is not None:
        head += f", compile elapsed {compile_elapsed_s:.2f} s (cold - warm wall)"
        if warm_compiled:  # the warm run paid builds too: the difference is not what the cold start cost
            why = (f"    (the warm run compiled {warm_compiled} too: cold - warm leaves those builds out"
                   + (" and is below zero by the two runs' noise)" if compile_elapsed_s < 0 else ")"))
        elif compile_elapsed_s < 0:
            why = "    (below zero: the cold run's builds cost less than the noise between the two runs)"
    parts = (f"    native {_s(t.get('native_ms'))} s, LTO {_s(t.get('lto_ms'))} s ({t.get('lto_built', 0)} built, "
             f"{t.get('lto_cached', 0)} cached), codegen {_s(t.get('codegen_ms'))} s, other {_s(t.get('other_ms'))} s")
    out = [line if len(line) <= width else line[: width - 3] + "..." for line in (head, parts)]
    if why is not None:
        out.insert(1, why)
    out.append(f"    {'s':>6} {'native':>6} {'LTO/n':>8} {'cgen':>5} {'other':>5} {'srcKB':>5} {'adj':>4} "
               f"{'tape':>4}  identity: kernels")
    for i in ids[:max_rows]:
        share = i.get("adjoint_share")
        lto = _s(i.get("lto_ms")) + (f"/{i['lto_built']}" if i.get("lto_built") else "")
        src = i.get("source_bytes")
        bd = "" if i.get("block_dim") in (None, 1) else f"@{i['block_dim']}"
        kernels = ", ".join(i.get("kernels") or [])
        status = "" if i.get("status") == "compiled" else f" ({i.get('status')})"
        row = (f"    {_s(i.get('ms')):>6} {_s(i.get('native_ms')):>6} {lto:>8} {_s(i.get('codegen_ms')):>5} "
               f"{_s(i.get('other_ms')):>5} {'-' if src is None else f'{src / 1024:.0f}':>5} "
               f"{'-' if share is None else f'{share * 100:.0f}%':>4} "
               f"{'yes' if i.get('backward_used') else 'no':>4}  "
               f"{i.get('module')} {short(i.get('hash'))}{bd} {i.get('device')}{status}: {kernels}")
        out.append(row if len(row) <= width else row[: width - 3] + "...")
    if len(ids) > max_rows:
        out.append(f"    ... {len(ids) - max_rows} more identities (JSON: confirm.summary.profile)")
    tests = profile_json.get("tests") or []
    if tests:
        workers = {p for t in tests for p in t.get("pids") or ()}
        out.append(f"  tests by build seconds ({len(tests)} test phase(s) built modules"
                   + (f", in {len(workers)} processes" if len(workers) > 1 else "") + "):")
        for t in tests[:max_rows]:
            row = (f"    {_s(t['ms']):>6} s {t['builds']:>3} build(s)  {t['test']} ({t['phase']}): "
                   + ", ".join(t["modules"]))
            out.append(row if len(row) <= width else row[: width - 3] + "...")
        if len(tests) > max_rows:
            out.append(f"    ... {len(tests) - max_rows} more (JSON: confirm.summary.profile.tests)")
    return out

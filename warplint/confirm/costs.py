"""Runtime findings for the cost mechanisms (WC905-WC910), from a pass's cost profile.

Each function returns plain ``CostFinding`` records; ``Judge`` turns them into diagnostics (skipping
what a static finding already explained) so this module knows nothing about output."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .events import short
from .profile import IdentityCost, Profile

LINK_DOMINATED_SHARE = 0.5  # more than half of a build outside the native compiler ...
LINK_DOMINATED_MIN_MS = 500.0  # ... in a build at least this long, with LTOs built
BACKWARD_MIN_SHARE = 0.25  # adjoint share of the generated source that makes unused backward worth saying,
BACKWARD_MIN_BYTES = 16 * 1024  # ... when it is at least this much code (a one-line kernel's adjoint is ~3 KB)
BACKWARD_MIN_MS = 500.0  # ... in builds at least this long (any build that generated LTOs counts)
SERIAL_MIN_SAVING_MS = 500.0  # a parallel preload must be able to save at least this much
FRAGMENTED_MIN_MODULES = 3
FRAGMENTED_MIN_SAVING_MS = 200.0


@dataclass
class SiteNote:
    site: tuple
    note: str


@dataclass
class CostFinding:
    code: str  # its rule (rules/wc9xx_*.py) gives the finding's name, mechanism and confidence
    site: tuple | None
    message: str
    evidence: str
    cost_ms: float | None
    data: dict[str, Any]
    related: list[SiteNote] = field(default_factory=list)
    loads: list[IdentityCost] = field(default_factory=list)  # the identities it is about
    events: list[dict] = field(default_factory=list)  # other events it is about (the clear_lto_cache call)
    detail: str = ""  # why, with the numbers: a note at the finding (the message is one short sentence)

    @property
    def event_ids(self) -> set[int]:
        return {i.event_id for i in self.loads} | {id(e) for e in self.events}


def _modules(names: list[str]) -> str:
    return ("module " if len(names) == 1 else "modules ") + ", ".join(f"`{n}`" for n in names)


def _secs(ms: float | None) -> str:
    return "-" if ms is None else f"{ms / 1000.0:.2f} s"


def block_dim_variants(profile: Profile) -> list[CostFinding]:
    """CS-5: one module built at several block_dims; the odd values are the ones launched less often."""
    groups: dict[tuple, dict[Any, list[IdentityCost]]] = {}
    for i in profile.identities:
        if i.status in ("compiled", "cached"):
            groups.setdefault((i.pid, i.module, i.device), {}).setdefault(i.block_dim, []).append(i)
    out = []
    for (_pid, module, device), by_bd in groups.items():
        if len(by_bd) < 2:
            continue
        launches: dict[Any, int] = {}
        sites: dict[Any, list[tuple]] = {}
        for shape, count in profile.topology.items():
            if shape.module == module and shape.device == device:
                launches[shape.block_dim] = launches.get(shape.block_dim, 0) + (count.launches or 1)
                if count.site and count.site not in sites.setdefault(shape.block_dim, []):
                    sites[shape.block_dim].append(count.site)
        order = sorted(by_bd, key=lambda b: (-launches.get(b, 0), min(i.seq for i in by_bd[b])))
        main, odd = order[0], order[1:]
        extra = [i for b in odd for i in by_bd[b]]
        cost = sum(i.ms for i in extra if i.status == "compiled")
        for b in odd:  # a build's own load site when no launch of that value was recorded
            if not sites.get(b):
                sites[b] = [i.site for i in by_bd[b] if i.site][:1]
        odd_sites = [s for b in odd for s in sites.get(b, [])]
        if not odd_sites:
            continue
        values = ", ".join(f"{b} ({launches.get(b, 0)} launch(es))" for b in order)
        related = [SiteNote(s, f"launched at block_dim {b} here") for b in odd for s in sites.get(b, [])]
        related += [SiteNote(s, f"launched at block_dim {main} here (the usual value)")
                    for s in sites.get(main, [])[:2]]
        msg = f"module `{module}` was built once per block_dim on {device}; launch its kernels at one block_dim"
        detail = (f"built at block_dim {values}: the extra builds cost {_secs(cost)}; or move the kernels launched "
                  f"at {', '.join(map(str, odd))} into their own module")
        out.append(CostFinding(
            "WC905", odd_sites[0], msg,
            f"module {module} built at {len(order)} block_dims on {device} ("
            + ", ".join(f"{b}: {short(by_bd[b][0].hash)}" for b in order) + f"); +{cost:.0f} ms",
            cost, {"module": module, "device": device, "block_dims": order, "main_block_dim": main},
            related, extra, detail=detail))
    return out


def link_dominated(profile: Profile) -> list[CostFinding]:
    """CS-7: most of a build outside the native compiler, with LTO artifacts built."""
    out = []
    for i in profile.compiled():
        outside = i.outside_native_ms
        if outside is None or i.lto_built == 0 or i.ms < LINK_DOMINATED_MIN_MS:
            continue
        if outside / i.ms <= LINK_DOMINATED_SHARE:
            continue
        ltos = [e for e in profile.run.ltos if e.get("module") == i.module and e.get("built")
                and i.start_s <= float(e.get("t") or 0) <= i.end_s and e.get("pid") == i.pid]
        names = ", ".join(sorted({str(e.get("symbol") or "?")[:40] for e in ltos})[:3])
        msg = f"the build of module `{i.module}` is mostly MathDx LTO linking; build fewer LTOs"
        detail = (f"it spent {_secs(outside)} of its {_secs(i.ms)} build outside the native compiler, "
                  f"{_secs(i.lto_ms)} of it building {i.lto_built} LTO artifact(s): fewer or smaller distinct tile "
                  "shapes, `enable_mathdx_gemm=False` for float32 GEMMs and `enable_backward=False` (no adjoint "
                  "LTOs) cut it; keep the LTO cache between runs")
        out.append(CostFinding(
            "WC906", i.site, msg,
            f"{i.label()}: {_secs(i.ms)} in all, native {_secs(i.native_ms)}, LTO {_secs(i.lto_ms)} "
            f"({i.lto_built} built{', ' + names if names else ''})",
            i.lto_ms, {"module": i.module, "hash": i.hash, "lto_built": i.lto_built, "native_ms": i.native_ms,
                       "lto_ms": i.lto_ms}, [], [i], detail=detail))
    return out


def backward_unused(profile: Profile) -> list[CostFinding]:
    """CS-10: adjoint code (and adjoint LTOs) built for a module none of whose kernels was differentiated."""
    by_module: dict[tuple, list[IdentityCost]] = {}
    for i in profile.compiled():
        if i.enable_backward is not True or i.backward_used:
            continue
        share = i.adjoint_share
        big = (share is not None and share >= BACKWARD_MIN_SHARE and (i.adjoint_bytes or 0) >= BACKWARD_MIN_BYTES
               and i.ms >= BACKWARD_MIN_MS)
        if i.lto_built or big:
            by_module.setdefault((i.pid, i.module), []).append(i)
    used = {shape.module for shape, count in profile.topology.items() if shape.adjoint or (count.taped or 0) > 0}
    out = []
    for (_pid, module), ids in by_module.items():
        if module in used:
            continue
        total = sum(i.ms for i in ids)
        adj = sum(i.adjoint_bytes or 0 for i in ids)
        src = sum(i.source_bytes or 0 for i in ids)
        ltos = sum(i.lto_built for i in ids)
        share_text = (f"{adj / src * 100:.0f}% of its generated source ({adj / 1024:.1f} of {src / 1024:.1f} KB)"
                      if src else "its generated source")
        msg = f"module `{module}` was built with backward code that the run never used; set `enable_backward=False`"
        detail = (f"adjoint code is {share_text}"
                  + (f", and {ltos} LTO artifact(s) were built for it" if ltos else "")
                  + f", in {_secs(total)} of builds, but no `wp.Tape` recorded a launch of its kernels and no adjoint "
                  "launch ran; set it for the module, or `wp.config.enable_backward = False` at the entry point "
                  "before importing the kernels; `--what-if enable_backward=False` measures it")
        out.append(CostFinding(
            "WC907", ids[0].site, msg,
            f"module {module}: {len(ids)} build(s), {_secs(total)}, adjoint {share_text}; no taped or adjoint launch",
            None, {"module": module, "adjoint_bytes": adj, "source_bytes": src, "lto_built": ltos}, [], ids,
            detail=detail))
    return out


def lto_rebuilt_after_clear(profile: Profile) -> list[CostFinding]:
    """CS-2: LTOs built again in the same run because ``clear_lto_cache()`` threw away the first build."""
    by_clear: dict[tuple, list[tuple[dict, dict, dict]]] = {}
    for first, clear, again in profile.lto_rebuilds():
        by_clear.setdefault((clear.get("pid"), clear.get("seq")), []).append((first, clear, again))
    out = []
    for items in by_clear.values():
        clear = items[0][1]
        cost = sum(float(again.get("build_ms") or again.get("ms") or 0) for _, _, again in items)
        modules = sorted({str(again.get("module")) for _, _, again in items})
        msg = "`clear_lto_cache()` threw away LTOs that this run built again; remove it or gate it behind a flag"
        detail = (f"it threw away {len(items)} LTO artifact(s) built a moment earlier in this run; "
                  f"{_modules(modules)} built them again ({_secs(cost)})")
        related = [SiteNote(first["_site"], "first built for this load") for first, _, _ in items[:3]
                   if first.get("_site")]
        out.append(CostFinding(
            "WC908", clear.get("_site"), msg,
            f"{len(items)} LTO(s) built twice, clear_lto_cache() between; +{cost:.0f} ms", cost,
            {"ltos": [again.get("key") for _, _, again in items], "modules": modules}, related, [], [clear],
            detail=detail))
    return out


def serial_builds(profile: Profile) -> list[CostFinding]:
    """CS-13 (CUDA): independent modules compiled one after another. Best wall time of a parallel
    preload is the largest module; the upper speed-up is sum / largest."""
    by_pid: dict[Any, list[IdentityCost]] = {}
    for i in profile.compiled():
        if i.device.startswith("cuda"):
            by_pid.setdefault(i.pid, []).append(i)
    out = []
    for unsorted in by_pid.values():
        ids = sorted(unsorted, key=lambda i: i.start_s)
        names = {i.module for i in ids}
        independent = [i for i in ids if not (set(i.references) & (names - {i.module}))]
        serial = [i for n, i in enumerate(independent)
                  if not any(j is not i and j.start_s < i.end_s and i.start_s < j.end_s for j in independent[:n]
                             + independent[n + 1:])]
        if len({i.module for i in serial}) < 2:
            continue
        total = sum(i.ms for i in serial)
        largest = max(serial, key=lambda i: i.ms)
        saving = total - largest.ms
        if saving < SERIAL_MIN_SAVING_MS:
            continue
        speedup = total / largest.ms if largest.ms else 1.0
        mods = sorted({i.module for i in serial})
        msg = f"{len(serial)} independent modules were built one after another; preload them in parallel"
        detail = (f"{_secs(total)} in all, the largest {largest.label()} {_secs(largest.ms)}: a parallel preload "
                  "after the imports (`wp.load_module` / `wp.force_load(modules=[...], block_dim=..., "
                  "max_workers=N)`) at the block_dims they are launched with brings the wall time towards the "
                  f"largest module: at best {_secs(largest.ms)}, up to {speedup:.1f}x; `--what-if parallel-preload` "
                  "measures it")
        related = [SiteNote(i.site, f"{i.label()} built here ({_secs(i.ms)})") for i in serial[1:6] if i.site]
        out.append(CostFinding(
            "WC909", serial[0].site, msg,
            f"{len(serial)} serial builds, sum {total:.0f} ms, largest {largest.ms:.0f} ms: best wall "
            f"{largest.ms:.0f} ms, upper speed-up {speedup:.2f}x", saving,
            {"modules": mods, "sum_ms": round(total, 3), "largest_ms": largest.ms,
             "best_wall_ms": largest.ms, "upper_speedup": round(speedup, 3)}, related, serial, detail=detail))
    return out


def fragmented(profile: Profile) -> list[CostFinding]:
    """CS-4: several one-kernel modules with the same options and block_dim, built in the same run."""
    groups: dict[tuple, list[IdentityCost]] = {}
    events = {(e.get("pid"), e.get("seq")): e for e in profile.run.loads}
    block_dims: dict[tuple, set] = {}
    for i in profile.compiled():
        block_dims.setdefault((i.pid, i.module, i.device), set()).add(i.block_dim)
    for i in profile.compiled():
        if len(i.kernels) != 1 or len(block_dims[(i.pid, i.module, i.device)]) > 1:
            continue  # a module built at several block_dims differs from the others for a reason
        ev = events.get((i.pid, i.seq)) or {}
        options = tuple(sorted((ev.get("options") or {}).items()))
        groups.setdefault((i.pid, i.device, i.block_dim, options), []).append(i)
    out = []
    for (_pid, device, block_dim, _opts), members in groups.items():
        modules = sorted({i.module for i in members})
        if len(modules) < FRAGMENTED_MIN_MODULES:
            continue
        ids = sorted(members, key=lambda i: i.seq)
        smallest = min(i.ms for i in ids)
        saving = (len(modules) - 1) * smallest  # each extra module pays about the fixed cost of the smallest build
        if saving < FRAGMENTED_MIN_SAVING_MS:
            continue
        total = sum(i.ms for i in ids)
        shown = ", ".join(f"`{m}`" for m in modules[:5]) + (" ..." if len(modules) > 5 else "")
        msg = (f"{len(modules)} one-kernel modules with the same options were built separately; put their kernels "
               "into one module")
        detail = (f"modules {shown}, block_dim {block_dim} on {device}, {_secs(total)} in all: each pays a full "
                  f"build; one shared module would save about {_secs(saving)} ((n - 1) x the smallest build)")
        related = [SiteNote(i.site, f"{i.label()} built here ({_secs(i.ms)})") for i in ids[1:6] if i.site]
        out.append(CostFinding(
            "WC910", ids[0].site, msg,
            f"{len(modules)} one-kernel modules, {total:.0f} ms; about +{saving:.0f} ms over one module", saving,
            {"modules": modules, "device": device, "block_dim": block_dim}, related, ids, detail=detail))
    return out


ALL = (block_dim_variants, link_dominated, backward_unused, lto_rebuilt_after_clear, serial_builds, fragmented)


def cost_findings(profile: Profile) -> list[CostFinding]:
    out: list[CostFinding] = []
    for find in ALL:
        out += find(profile)
    return out

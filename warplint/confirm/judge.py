"""Match static findings to recorded runtime facts; derive verdicts and runtime-only findings."""

from __future__ import annotations

import functools
import os
import re
from dataclasses import dataclass, field
from typing import Any

from warplint.diagnostic import Diagnostic, Related, Span
from warplint.registry import all_rules
from warplint.rule import Rule

from .costs import SiteNote, cost_findings
from .edits import placement
from .events import SNAPSHOT_OPTIONS, Rebuild, RunData, is_warp_module, norm_path, short
from .profile import Profile

CONFIRMED = "confirmed"
NOT_REPRODUCED = "not-reproduced"
NOT_EXERCISED = "not-exercised"
INCONCLUSIVE = "inconclusive"

UNIQUE_NAME = re.compile(r"_[0-9a-f]{8}$")
MAX_PROBE_LINES = 40
CHURN_MECHS = ("CS-1", "CS-3", "CS-4", "CS-5", "CS-6", "CS-9")


@functools.cache
def runtime_rules() -> dict[str, Rule]:
    """The ``--confirm``-only rules by code (``runtime_only``: rules/wc9xx_*.py), the one source of each runtime
    finding's code, name, mechanism and confidence. Asked when the first finding is made, not at import: building
    the command line imports this package, and importing the rules imports LibCST."""
    return {code: rule for code, rule in all_rules().items() if rule.runtime_only}


@dataclass
class Finding:
    """A static diagnostic, with its path resolved the way the recorder reports paths."""

    diag: Diagnostic
    path: str | None
    line: int
    end_line: int
    data: dict = field(default_factory=dict)

    @classmethod
    def of(cls, d: Diagnostic, cwd: str) -> Finding:
        p = d.path
        cands = [os.path.abspath(p)] if os.path.isabs(p) else [os.path.join(cwd, p), os.path.abspath(p)]
        chosen = next((c for c in cands if os.path.exists(c)), cands[0])
        end = max(d.span.end_line or d.span.line, d.span.line)
        return cls(diag=d, path=norm_path(chosen), line=d.span.line, end_line=end, data=dict(d.data or {}))

    def probe_lines(self) -> list[int]:
        return list(range(self.line, min(self.end_line, self.line + MAX_PROBE_LINES) + 1))

    # -- matching ---------------------------------------------------------------------------
    def site_in(self, ev: dict) -> bool:
        s = ev.get("_site")
        if not s:
            return False
        return s[0] == self.path and self.line <= s[1] <= self.end_line

    def define_overlaps(self, ev: dict) -> bool:
        d = ev.get("_define")
        if not d:
            return False
        return d[0] == self.path and d[1] <= self.end_line and self.line <= d[2]

    def kernel_named(self, ev: dict) -> bool:
        want = self.data.get("kernel")
        if not want:
            return False
        func = ev.get("func") or ""
        return ev.get("key") == want or func == want or func.rsplit(".", 1)[-1] == want

    def touches(self, ev: dict) -> bool:
        """Does this event come from the finding's code (call site in the span or kernel defined there)?"""
        return self.site_in(ev) or self.define_overlaps(ev)

    @property
    def module(self) -> str | None:
        return self.data.get("module")


def _rel(path: str | None, cwd: str) -> str:
    if not path:
        return "?"
    try:
        r = os.path.relpath(path, cwd)
        if not r.startswith(".."):
            return r
    except ValueError:
        pass
    return path


class Judge:
    def __init__(self, cold: RunData, warm: RunData | None, cwd: str, run_failed: str | None = None,
                 profile: Profile | None = None):
        self.cold = cold
        self.profile = profile if profile is not None else Profile(cold)
        self.warm = warm
        self.cwd = cwd
        self.run_failed = run_failed
        self.explained: set[int] = set()  # id() of runtime facts a static finding accounted for
        self.paid_by: dict[int, frozenset[int]] = {}  # id() of a verdict -> the builds its cost is (``_v``)
        ver = (cold.warp or {}).get("version")
        self.warp_version = ver or "?"
        self.option_keys = set((cold.warp or {}).get("option_keys") or ())

    # -- helpers -----------------------------------------------------------------------------
    def where(self, ev: dict | None) -> str:
        if not ev:
            return "?"
        s = ev.get("_site")
        if not s:
            return "?"
        return f"{_rel(s[0], self.cwd)}:{s[1]}"

    def where_def(self, ev: dict) -> str:
        d = ev.get("_define")
        if d:
            return f"{_rel(d[0], self.cwd)}:{d[1]}"
        return self.where(ev)

    def exercised(self, f: Finding) -> tuple[bool, str]:
        run = self.cold
        hits = sorted(ln for (p, ln) in run.lines if p == f.path and f.line <= ln <= f.end_line)
        if hits:
            return True, f"line {hits[0]} ran"
        for ev in run.events:
            if (
                ev.get("ev") in ("kernel", "set_options", "config", "clear_cache", "load", "launch", "overload")
                and f.touches(ev)
            ):
                return True, f"{ev['ev']} event at {self.where(ev)}"
        return False, f"{_rel(f.path, self.cwd)}:{f.line}" + (
            f"-{f.end_line}" if f.end_line != f.line else ""
        ) + " never ran and no Warp event came from it"

    def _rebuild_text(self, rbs: list[Rebuild]) -> str:
        parts = []
        groups: dict[tuple, list[Rebuild]] = {}
        for rb in rbs:
            ld = rb.load
            groups.setdefault((ld.get("module"), ld.get("device"), ld.get("block_dim")), []).append(rb)
        for (mod, dev, bd), items in groups.items():
            chain = [short(items[0].previous.get("hash") if items[0].previous else None)]
            chain += [short(rb.load.get("hash")) for rb in items]
            causes = []
            for rb in items:
                for c in rb.causes:
                    desc = self.cause_text(c)
                    if desc not in causes:
                        causes.append(desc)
            n = len(self.identities_of(mod, dev, bd))
            txt = f"module {mod} built {n} identities on {dev} (block_dim {bd}): {' -> '.join(chain)}"
            if causes:
                txt += " after " + "; ".join(causes[:3])
            parts.append(txt)
        return "; ".join(parts)

    def cause_text(self, c: dict) -> str:
        kind = c.get("ev")
        if kind == "kernel":
            return (f"the kernel {c.get('func') or c.get('key')} defined at {self.where_def(c)} "
                    "joined it after it had loaded")
        if kind == "set_options":
            ch = c.get("changed") or {}
            keys = ", ".join(f"{k}={v[1]}" for k, v in ch.items()) or ", ".join(
                f"{k}={v}" for k, v in (c.get("options") or {}).items()
            )
            return f"set_module_options({keys}) at {self.where(c)} after it had loaded"
        if kind == "overload":
            return f"a new overload of {c.get('key')} ({c.get('sig')}) at {self.where(c)}"
        return f"{kind} at {self.where(c)}"

    def identities_of(self, module: str | None, device: Any, block_dim: Any) -> set:
        return {
            e.get("hash")
            for e in self.cold.builds()
            if e.get("module") == module and e.get("device") == device and e.get("block_dim") == block_dim
        }

    def _modules_for(self, f: Finding) -> set[str]:
        names = {e.get("module") for e in self.cold.loads}
        return {n for n in names if n is not None and self.cold.module_matches(n, f.module, f.path)}

    # -- verdicts -----------------------------------------------------------------------------
    def judge(self, f: Finding) -> dict[str, Any]:
        if not self.cold.recorder_started:
            return self._v(INCONCLUSIVE, "the recorder did not start in the program (python -S/-I, or not Python?)")
        mech = (f.diag.mechanism or "").upper()
        option = f.data.get("option")
        ran, ran_ev = self.exercised(f)
        cfg_here = [c for c in self.cold.configs if f.site_in(c) and not c.get("internal")]
        if mech not in CHURN_MECHS and mech != "CS-2":
            snap_here = [c for c in cfg_here if c.get("name") in SNAPSHOT_OPTIONS]
            if snap_here or option in SNAPSHOT_OPTIONS:
                r = self.judge_snapshot(f, ran, ran_ev, cfg_here)
                if r is not None:
                    return r
        if mech == "CS-2":
            return self.judge_cache(f, ran, ran_ev)
        if mech == "CS-10":
            return self.judge_backward(f, ran, ran_ev)
        if mech == "CS-7":
            return self.judge_link(f, ran, ran_ev)
        if mech == "CS-5" or (mech == "CS-13" and f.data.get("block_dims")):
            return self.judge_block_dim(f, ran, ran_ev)
        if mech in ("CS-4", "CS-9"):
            return self.judge_module_count(f, ran, ran_ev, mech)
        if mech == "CS-3B":
            r = self.judge_wrong_target(f, ran, ran_ev, cfg_here)
            if r is not None:
                return r
        return self.judge_churn(f, ran, ran_ev)

    def _v(self, verdict: str, evidence: str, cost: float | None = None,
           paid_by: frozenset[int] | None = None) -> dict[str, Any]:
        """A verdict; ``paid_by``: the builds (ids) whose time ``cost`` is, when several findings may explain
        the same ones (``share_costs`` then says so, once)."""
        if self.run_failed and verdict != CONFIRMED:
            evidence = f"{evidence} (the run failed: {self.run_failed}; only the part before the failure was seen)"
        verdict_data: dict[str, Any] = {"verdict": verdict, "evidence": evidence,
                                        "cost_ms": None if cost is None else round(cost, 1)}
        if paid_by:
            self.paid_by[id(verdict_data)] = paid_by
        return verdict_data

    def _cause_matches(self, f: Finding, c: dict) -> bool:
        if f.touches(c):
            return True
        # a finding that names the kernel (e.g. at a launch, or a generic kernel): same kernel, same module
        return (
            c.get("ev") in ("kernel", "overload")
            and f.kernel_named(c)
            and bool(f.module)
            and self.cold.module_matches(c.get("module"), f.module, f.path)
        )

    def judge_churn(self, f: Finding, ran: bool, ran_ev: str) -> dict[str, Any]:
        strong: list[Rebuild] = []
        for rb in self.cold.rebuilds:
            if f.site_in(rb.load) or any(self._cause_matches(f, c) for c in rb.causes):
                strong.append(rb)
        if not strong and ran:
            mods = self._modules_for(f)
            strong = [rb for rb in self.cold.rebuilds if rb.load.get("module") in mods and not rb.causes]
        if strong:
            for rb in strong:
                self.explained.add(id(rb))
            cost = sum(rb.ms for rb in strong)
            return self._v(CONFIRMED, f"{self._rebuild_text(strong)}; +{cost:.0f} ms", cost,
                           frozenset(id(rb) for rb in strong))
        if not ran:
            return self._v(NOT_EXERCISED, ran_ev)
        # ran, but nothing moved: say why, as precisely as we can
        late = [k for k in self.cold.kernels if f.touches(k) and k.get("module_loaded")]
        if late:
            mod = late[0].get("module")
            return self._v(
                NOT_REPRODUCED,
                f"the kernel defined at {self.where_def(late[0])} was created {len(late)} time(s) after module {mod} "
                f"had loaded, with content already built: no new identity",
            )
        sos = [s for s in self.cold.set_options if f.site_in(s)]
        if sos:
            s = sos[0]
            if s.get("module_loaded") and s.get("changed") == {}:
                why = "re-set values the module already had: no rebuild"
            elif not s.get("module_loaded"):
                why = f"ran before module {s.get('module')} loaded: no rebuild"
            else:
                why = "did not lead to another build in this run"
            return self._v(NOT_REPRODUCED, f"set_module_options at {self.where(s)} {why}")
        mods = self._modules_for(f)
        if mods:
            desc = ", ".join(
                f"{m} ({len({e.get('hash') for e in self.cold.builds() if e.get('module') == m})} identity)"
                for m in sorted(mods)
            )
            return self._v(NOT_REPRODUCED, f"{ran_ev}; no module rebuilt: {desc}")
        return self._v(NOT_REPRODUCED, f"{ran_ev}; no module rebuilt in this run")

    def _warm_not_reused(self) -> tuple[list[dict], list[dict]]:
        if self.warm is None:
            return [], []
        cold_ids = self.cold.identities()
        same: list[dict] = []
        new: list[dict] = []
        for e in self.warm.compiled():
            ident = (e.get("module"), e.get("hash"), e.get("device"), e.get("block_dim"))
            (same if ident in cold_ids else new).append(e)
        return same, new

    def _cold_recompiles(self) -> list[dict]:
        """Identities compiled again in the cold run after being built (e.g. after clear_kernel_cache)."""
        return [e for e in self.cold.reloads if e.get("status") == "compiled"]

    def _lto_rebuilds_at(self, f: Finding) -> list[tuple[dict, dict, dict]]:
        return [r for r in self.profile.lto_rebuilds() if f.site_in(r[1])]

    def _identities_for(self, f: Finding) -> list:
        """The identities of the modules the finding is about (its module, or the kernels defined in its span)."""
        mods = self._modules_for(f)
        out = []
        for i in self.profile.identities:
            ev = next((e for e in self.cold.loads if id(e) == i.event_id), {})
            defined_here = any(
                norm_path(k[0], self.cold.cwd) == f.path and (f.line <= int(k[1]) <= f.end_line
                                                              or k[2] == f.data.get("kernel"))
                for k in ev.get("kernels") or ()
            )
            if defined_here or (i.module in mods and not f.data.get("kernel")):
                out.append(i)
        return out

    def judge_backward(self, f: Finding, ran: bool, ran_ev: str) -> dict[str, Any]:
        ids = [i for i in self._identities_for(f) if i.status == "compiled"]
        if not ids:
            return self._v(NOT_EXERCISED if not ran else NOT_REPRODUCED,
                           ran_ev if not ran else f"{ran_ev}; no module of this code was compiled in this run")
        unused = [i for i in ids if i.enable_backward is True and not i.backward_used]
        if not unused:
            why = ("a wp.Tape recorded its launches" if any(i.backward_used for i in ids)
                   else "it was built with backward off")
            return self._v(NOT_REPRODUCED, f"module {ids[0].module}: {why}")
        for i in unused:
            self.explained.add(i.event_id)
        adj = sum(i.adjoint_bytes or 0 for i in unused)
        src = sum(i.source_bytes or 0 for i in unused)
        ltos = sum(i.lto_built for i in unused)
        share = f"adjoint {adj / src * 100:.0f}% of {src / 1024:.1f} KB generated" if src else "adjoint code generated"
        return self._v(
            CONFIRMED,
            f"module {unused[0].module} built with backward on ({share}"
            + (f", {ltos} LTO(s) built" if ltos else "")
            + f", {sum(i.ms for i in unused):.0f} ms of builds); no wp.Tape recorded a launch of its kernels",
        )

    def judge_link(self, f: Finding, ran: bool, ran_ev: str) -> dict[str, Any]:
        ids = [i for i in self._identities_for(f) if i.status == "compiled"]
        if not ids:
            return self._v(NOT_EXERCISED if not ran else NOT_REPRODUCED,
                           ran_ev if not ran else f"{ran_ev}; no module of this code was compiled in this run")
        with_lto = [i for i in ids if i.lto_built]
        if not with_lto:
            devices = {i.device for i in ids}
            where = "on CPU no LTO is built" if all(d.startswith("cpu") for d in devices) else "no LTO was built"
            return self._v(NOT_REPRODUCED, f"module {ids[0].module}: {where}")
        for i in with_lto:
            self.explained.add(i.event_id)
        lto_ms = sum(i.lto_ms or 0.0 for i in with_lto)
        total = sum(i.ms for i in with_lto)
        return self._v(
            CONFIRMED,
            f"module {with_lto[0].module}: {sum(i.lto_built for i in with_lto)} LTO(s) built in {lto_ms:.0f} ms "
            f"of a {total:.0f} ms build; +{lto_ms:.0f} ms",
            lto_ms,
        )

    def judge_cache(self, f: Finding, ran: bool, ran_ev: str) -> dict[str, Any]:
        if not ran:
            return self._v(NOT_EXERCISED, ran_ev)
        lto_again = self._lto_rebuilds_at(f)
        if lto_again:
            for _, clear, _ in lto_again:
                self.explained.add(id(clear))
            cost = sum(float(again.get("build_ms") or again.get("ms") or 0) for _, _, again in lto_again)
            mods = ", ".join(sorted({str(again.get("module")) for _, _, again in lto_again}))
            return self._v(
                CONFIRMED,
                f"{ran_ev}; {len(lto_again)} LTO(s) built earlier in this run were built again after "
                f"clear_lto_cache() (module(s) {mods}); +{cost:.0f} ms",
                cost,
            )
        same, _new = self._warm_not_reused()
        again = self._cold_recompiles()
        if same or again:
            for e in same + again:
                self.explained.add(id(e))
            cost = sum(float(e.get("ms") or 0) for e in same + again)
            parts = []
            if same:
                total = len(self.warm.builds()) if self.warm else 0
                names = ", ".join(sorted({f"{e.get('module')} {short(e.get('hash'))}" for e in same})[:4])
                parts.append(
                    f"the warm run (same caches) still compiled {len(same)} of {total} identities: {names}"
                )
            if again:
                names = ", ".join(sorted({f"{e.get('module')} {short(e.get('hash'))}" for e in again})[:4])
                parts.append(f"the cold run compiled {len(again)} identities it had already built: {names}")
            return self._v(CONFIRMED, f"{ran_ev}; " + "; ".join(parts) + f"; +{cost:.0f} ms", cost)
        if self.warm is None:
            return self._v(NOT_REPRODUCED, f"{ran_ev}; no warm run to compare")
        return self._v(
            NOT_REPRODUCED,
            f"{ran_ev}; the warm run loaded all {len(self.warm.builds())} identities from the cache",
        )

    def judge_block_dim(self, f: Finding, ran: bool, ran_ev: str) -> dict[str, Any]:
        mods = self._modules_for(f)
        hits = []
        for (_pid, mod, dev), by_bd in self.cold.block_dim_variants().items():
            site_hit = any(f.site_in(e) for loads in by_bd.values() for e in loads) or any(
                f.site_in(launch)
                for launch in self.cold.launches
                if launch.get("module") == mod and launch.get("device") == dev
            )
            if mod in mods or site_hit:
                hits.append((mod, dev, by_bd))
        if hits:
            cost = 0.0
            parts = []
            for mod, dev, by_bd in hits:
                order = sorted(by_bd, key=lambda b: min(e.get("seq", 0) for e in by_bd[b]))
                extra = [e for b in order[1:] for e in by_bd[b]]
                cost += sum(float(e.get("ms") or 0) for e in extra)
                for e in extra:
                    self.explained.add(id(e))
                hashes = ", ".join(f"{b}: {short(by_bd[b][0].get('hash'))}" for b in order)
                parts.append(f"module {mod} built at {len(order)} block_dims on {dev} ({hashes})")
            return self._v(CONFIRMED, "; ".join(parts) + f"; +{cost:.0f} ms", cost)
        if not ran:
            return self._v(NOT_EXERCISED, ran_ev)
        devices = {e.get("device") for e in self.cold.builds()}
        if devices and all(str(d).startswith("cpu") for d in devices):
            return self._v(
                NOT_REPRODUCED,
                f"{ran_ev}; on CPU every launch uses block_dim 1: "
                "run --confirm on a CUDA device to see block_dim variants",
            )
        return self._v(NOT_REPRODUCED, f"{ran_ev}; every module was built at one block_dim")

    def judge_module_count(self, f: Finding, ran: bool, ran_ev: str, mech: str) -> dict[str, Any]:
        by_mod: dict[str, list[dict]] = {}
        for e in self.cold.builds():
            name = e.get("module")
            if name is not None:  # an event without a module name cannot be told apart from others
                by_mod.setdefault(name, []).append(e)

        def from_site(e: dict) -> bool:
            for k in e.get("kernels") or ():
                p = norm_path(k[0], self.cold.cwd)
                if p == f.path and (f.line <= int(k[1]) <= f.end_line or k[2] == f.data.get("kernel")):
                    return True
            return False

        def from_file(e: dict) -> bool:
            return f.path in (e.get("_files") or ())

        site_mods = {m for m, ls in by_mod.items() if any(from_site(e) for e in ls)}
        scope = "the kernel defined here"
        chosen = site_mods
        if len(site_mods) < 2:
            if mech == "CS-9":
                file_mods = {
                    m for m, ls in by_mod.items() if UNIQUE_NAME.search(m or "") and any(from_file(e) for e in ls)
                }
            else:
                file_mods = {m for m, ls in by_mod.items() if any(from_file(e) for e in ls)}
            if len(file_mods) >= 2:
                chosen, scope = file_mods, f"kernels of {_rel(f.path, self.cwd)}"
        if len(chosen) >= 2:
            for m in chosen:
                for e in by_mod[m]:
                    self.explained.add(id(e))
            ms = sorted((sum(float(e.get("ms") or 0) for e in by_mod[m]), m) for m in chosen)
            total = sum(x for x, _ in ms)
            cost = total - ms[-1][0]
            names = ", ".join(m for _, m in ms[::-1][:4]) + (" ..." if len(ms) > 4 else "")
            return self._v(
                CONFIRMED,
                f"{len(chosen)} separate modules built for {scope} ({names}), {total:.0f} ms in all; "
                f"the extra modules cost about +{cost:.0f} ms",
                cost,
            )
        if not ran:
            return self._v(NOT_EXERCISED, ran_ev)
        return self._v(NOT_REPRODUCED, f"{ran_ev}; {len(chosen)} module(s) built for {scope}")

    def judge_snapshot(self, f: Finding, ran: bool, ran_ev: str, cfg_here: list[dict]) -> dict[str, Any] | None:
        option = f.data.get("option")
        assigns = [c for c in cfg_here if c.get("name") in SNAPSHOT_OPTIONS and (not option or c.get("name") == option)]
        if not assigns:
            if not ran:
                return self._v(NOT_EXERCISED, ran_ev)
            return None
        seqs = {(c.get("pid"), c.get("seq")) for c in assigns}
        lost = [
            x
            for x in self.cold.lost_options()
            if (x["assignment"].get("pid"), x["assignment"].get("seq")) in seqs
        ]
        a = assigns[0]
        what = f"wp.config.{a.get('name')} = {a.get('value')} ({self.where(a)})"
        if lost:
            mods: dict[str | None, dict] = {}
            for x in lost:
                self.explained.add(id(x["load"]))
                mods.setdefault(x["load"].get("module"), x)
            parts = []
            for mod, x in list(mods.items())[:3]:
                mev = x["module_event"]
                created = f", created at {self.where(mev)} before the assignment" if mev and mev.get("_site") else ""
                parts.append(
                    f"module {mod}{created} was built with {x['option']}={x['built']} "
                    f"({short(x['load'].get('hash'))}, {float(x['load'].get('ms') or 0):.0f} ms)"
                )
            more = f" and {len(mods) - 3} more" if len(mods) > 3 else ""
            return self._v(CONFIRMED, f"{what} never arrived: " + "; ".join(parts) + more)
        later = [
            e
            for e in self.cold.builds()
            if e.get("seq", 0) > a.get("seq", 0) and e.get("pid") == a.get("pid")
            and not is_warp_module(e.get("module"))
        ]
        if later:
            return self._v(
                NOT_REPRODUCED,
                f"{what} ran; every module built after it ({len({e.get('module') for e in later})}) used the value set",
            )
        return self._v(NOT_REPRODUCED, f"{what} ran; no module was built after it")

    def judge_wrong_target(self, f: Finding, ran: bool, ran_ev: str, cfg_here: list[dict]) -> dict[str, Any] | None:
        for c in cfg_here:
            if not c.get("known") and not c.get("existed"):
                return self._v(
                    CONFIRMED,
                    f"wp.config.{c.get('name')} does not exist in Warp {self.warp_version}: the assignment at "
                    f"{self.where(c)} set an attribute nothing reads",
                )
        for s in self.cold.set_options:
            if not f.site_in(s):
                continue
            unknown = [k for k in (s.get("options") or {}) if self.option_keys and k not in self.option_keys]
            if unknown:
                return self._v(
                    CONFIRMED,
                    f"set_module_options at {self.where(s)} set unknown key(s) {', '.join(map(repr, unknown))} "
                    f"on module {s.get('module')}: accepted silently, they only change the hash",
                )
            mod = s.get("module")
            loads = [e for e in self.cold.builds() if e.get("module") == mod]
            kernels = [k for k in self.cold.kernels if k.get("module") == mod]
            if not loads and not kernels and not s.get("module_kernels"):
                return self._v(
                    CONFIRMED,
                    f"set_module_options at {self.where(s)} targeted module {mod}, which holds no kernels and never "
                    f"loaded in this run: the options reached nothing",
                )
            return self._v(
                NOT_REPRODUCED,
                f"set_module_options at {self.where(s)} targeted module {mod}, which built "
                f"{len({e.get('hash') for e in loads})} identity(ies)",
            )
        if not ran:
            return self._v(NOT_EXERCISED, ran_ev)
        return None

    # -- runtime-only findings ------------------------------------------------------------------
    def runtime_findings(self) -> list[Diagnostic]:
        out: list[Diagnostic] = []
        out += self._wc901()
        out += self._wc902()
        out += self._wc903()
        out += self._wc904()
        for c in cost_findings(self.profile):
            if c.code != "WC909" and c.event_ids & self.explained:
                continue  # a static finding on the same cause was confirmed with these loads (serial builds
                # are about scheduling, which no static finding on a load explains)
            place = placement(c, self.profile, self.cwd)
            site, notes, data, fix, message = c.site, c.related, c.data, None, c.message
            details = [c.detail] if c.detail else []
            if place is not None:  # the finding goes where its fix goes; the builds and launches are evidence
                site, notes, fix = place.site, place.related, place.fix
                data = {**c.data, "edit": place.edit}
                details.append(f"edit here: {place.edit}")
            d = self._diag(site, c.code, message, data, c.evidence, c.cost_ms, related=self._related(notes),
                           details=tuple(details))
            if d:
                d.fix = fix
                out.append(d)
        return out

    def _related(self, notes: list[SiteNote]) -> tuple[Related, ...]:
        out = []
        for note in notes:
            s: SiteNote = note
            if s.site and s.site[0] and not str(s.site[0]).startswith("<"):
                out.append(Related(_rel(s.site[0], self.cwd), Span(int(s.site[1]), 0, int(s.site[1]), 0), s.note))
        return tuple(out)

    def _diag(self, site: tuple | None, code: str, message: str, data: dict, evidence: str, cost: float | None,
              related: tuple[Related, ...] = (), mechanism: str | None = None,
              details: tuple[str, ...] = ()) -> Diagnostic | None:
        """A runtime finding of rule ``code``, with its name and confidence (and its mechanism, unless this
        finding names a narrower one) from the rule. ``details`` (why, with the numbers) become notes at the
        finding's line: the message is one short sentence."""
        if not site or not site[0] or site[0].startswith("<"):
            return None
        rule = runtime_rules()[code]
        path = _rel(site[0], self.cwd)
        here = Span(site[1], 0, site[1], 0)
        related = (*(Related(path, here, detail) for detail in details), *related)
        return Diagnostic(
            path=path,
            span=Span(site[1], 0, site[1], 0),
            code=code,
            name=rule.name,
            mechanism=mechanism or rule.mechanism,
            message=message,
            confidence=rule.confidence,
            data=data,
            confirm={"verdict": CONFIRMED, "evidence": evidence, "cost_ms": None if cost is None else round(cost, 1)},
            related=related,
        )

    def _wc901(self) -> list[Diagnostic]:
        groups: dict[tuple, list[Rebuild]] = {}
        for rb in self.cold.rebuilds:
            if id(rb) in self.explained:
                continue
            cause = rb.causes[0] if rb.causes else None
            if cause is not None:
                defined = cause.get("ev") == "kernel" and cause.get("_define")
                site = cause.get("_define") if defined else cause.get("_site")
                site = (site[0], site[1]) if site else None
                kind = cause.get("ev")
            else:
                site, kind = rb.load.get("_site"), "load"
            if site is None:
                continue
            groups.setdefault((site, kind, rb.load.get("module")), []).append(rb)
        out = []
        for (site, kind, mod), rbs in groups.items():
            cost = sum(rb.ms for rb in rbs)
            mech = {"kernel": "CS-1", "set_options": "CS-3", "overload": "CS-6"}.get(kind, "CS-1")
            text = self._rebuild_text(rbs)
            fix = {
                "kernel": "define the kernel before its first launch",
                "set_options": "set its options before its first launch",
                "overload": "register the overloads before its first launch",
            }.get(kind, "make its kernels and options known before its first launch")
            hint = {
                "kernel": "define the kernel at import, before the module's first launch, or give it its own module",
                "overload": "register the overloads with `wp.overload()` before the first launch",
            }.get(kind)
            msg = f"module `{mod}` was built again at run time; {fix}"
            d = self._diag(site, "WC901", msg,
                           {"module": mod, "hashes": [rb.load.get("hash") for rb in rbs], "cause": kind},
                           f"{text}; +{cost:.0f} ms", cost, mechanism=mech,
                           details=(f"{text}, costing {cost:.0f} ms" + (f"; {hint}" if hint else ""),))
            if d:
                out.append(d)
        return out

    def _cache_cause(self) -> dict | None:
        for c in self.cold.clears:
            if c.get("_site"):
                return c
        for c in self.cold.configs:
            if c.get("internal") or not c.get("_site"):
                continue
            if c.get("name") == "cache_kernels" and c.get("value") == "False":
                return c
            if c.get("name") == "kernel_cache_dir":
                return c
        return None

    def _wc902(self) -> list[Diagnostic]:
        same, _ = self._warm_not_reused()
        again = self._cold_recompiles()
        items = [e for e in same + again if id(e) not in self.explained]
        if not items:
            return []
        cause = self._cache_cause()
        cost = sum(float(e.get("ms") or 0) for e in items)
        names = ", ".join(sorted({f"{e.get('module')} {short(e.get('hash'))}" for e in items})[:4])
        if cause is not None:
            if cause.get("ev") == "clear_cache":
                why = f"`{cause.get('fn')}()` deletes the compiled kernels"
            else:
                why = f"`wp.config.{cause.get('name')} = {cause.get('value')}`"
            site = cause.get("_site")
        else:
            why = "the second run found no compiled kernels"
            site = items[0].get("_site")
        evidence = f"{len(items)} identities compiled again with the same caches ({names}); +{cost:.0f} ms"
        msg = f"the kernel cache is not reused ({why}); keep it, or gate this behind a flag"
        d = self._diag(site, "WC902", msg,
                       {"identities": [[e.get("module"), e.get("hash")] for e in items]}, evidence, cost,
                       details=(f"a second run with the same caches compiled {len(items)} "
                                f"identit{'y' if len(items) == 1 else 'ies'} again ({names}), {cost:.0f} ms",))
        return [d] if d else []

    def _wc903(self) -> list[Diagnostic]:
        groups: dict[tuple, list[dict]] = {}
        for x in self.cold.lost_options():
            if id(x["load"]) in self.explained:
                continue
            site = x["assignment"].get("_site")
            if site is None:
                continue
            groups.setdefault((site, x["option"]), []).append(x)
        out = []
        for (site, option), xs in groups.items():
            a = xs[0]["assignment"]
            mods = sorted({x["load"].get("module") for x in xs})
            built = xs[0]["built"]
            evidence = (f"wp.config.{option} = {a.get('value')} was set after module(s) {', '.join(mods)} had been "
                        f"created; they were built with {option}={built}")
            shown = ", ".join(f"`{m}`" for m in mods[:2]) + (" ..." if len(mods) > 2 else "")
            msg = (f"`wp.config.{option}` never reached module{'s' if len(mods) != 1 else ''} {shown}; set it before "
                   "their import")
            d = self._diag(site, "WC903", msg,
                           {"option": option, "modules": mods}, evidence, None,
                           details=(f"`wp.config.{option} = {a.get('value')}` came after module"
                                    f"{'s' if len(mods) != 1 else ''} {', '.join(f'`{m}`' for m in mods)} "
                                    f"{'were' if len(mods) != 1 else 'was'} created (imported), and built with "
                                    f"`{option}={built}`",))
            if d:
                out.append(d)
        return out

    def _wc904(self) -> list[Diagnostic]:
        _, new = self._warm_not_reused()
        groups: dict[tuple, list[dict]] = {}
        for e in new:
            if id(e) in self.explained or is_warp_module(e.get("module")):
                continue
            groups.setdefault((e.get("_site"), e.get("module")), []).append(e)
        out = []
        for (site, mod), es in groups.items():
            cost = sum(float(e.get("ms") or 0) for e in es)
            cold_h = sorted({short(e.get("hash")) for e in self.cold.builds() if e.get("module") == mod})
            warm_h = sorted({short(e.get("hash")) for e in es})
            evidence = (f"module {mod}: cold run {', '.join(cold_h) or 'none'}, warm run {', '.join(warm_h)}; "
                        f"+{cost:.0f} ms")
            msg = f"module `{mod}` gets a new identity on every run, so its cache never hits; capture stable values"
            d = self._diag(site, "WC904", msg,
                           {"module": mod, "hashes": [e.get("hash") for e in es]}, evidence, cost,
                           details=(f"cold run {', '.join(cold_h) or '-'}, warm run {', '.join(warm_h)} "
                                    f"({cost:.0f} ms per run): a kernel captures a value that changes between runs "
                                    "(time, random, id, path)",))
            if d:
                out.append(d)
        return out


def share_costs(verdicts: list[dict[str, Any]], paid_by: dict[int, frozenset[int]]) -> None:
    """Findings that explain the same builds (three findings, one rebuild) each carry that cost; a reader
    summing the column would count it three times. Each such verdict says it is shared, and by how many
    (``cost_shared_by``; its evidence too), so the summary prints the cost once."""
    groups: dict[frozenset[int], list[dict[str, Any]]] = {}
    for verdict in verdicts:
        builds = paid_by.get(id(verdict))
        if builds:
            groups.setdefault(builds, []).append(verdict)
    for group in groups.values():
        if len(group) < 2:
            continue
        for verdict in group:
            verdict["cost_shared_by"] = len(group)
            verdict["evidence"] += f" (one cost, shared by the {len(group)} findings that explain these builds)"

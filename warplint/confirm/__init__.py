"""``warplint --confirm``: run the program cold and warm on private caches, record what Warp built, and
turn static findings into verdicts (see ``docs/confirm.md``).

Public API::

    from warplint.confirm import run_confirm, render_summary, ConfirmResult
    result = run_confirm(diagnostics, ["python", "-m", "app"], cwd=".", timeout=300.0)
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from warplint.diagnostic import Diagnostic

from .events import RunData, short
from .fixcopy import prepare
from .judge import CONFIRMED, INCONCLUSIVE, NOT_EXERCISED, NOT_REPRODUCED, Finding, Judge, runtime_rules, share_costs
from .profile import Profile, render_profile
from .runner import CannotRun, PassResult, Workspace, run_pass
from .whatif import Sample, WhatIf, auto_candidates, measure, parse_whatifs, render_whatifs, run_candidates

__all__ = [
    "run_confirm",
    "render_summary",
    "ConfirmResult",
    "CONFIRMED",
    "NOT_REPRODUCED",
    "NOT_EXERCISED",
    "INCONCLUSIVE",
    "runtime_rules",
]

ARTIFACT_VERSION = 1


@dataclass
class ConfirmResult:
    diagnostics: list[Diagnostic]
    runtime_findings: list[Diagnostic]
    summary: dict[str, Any]
    failed: str | None = None
    last_output: list[str] = field(default_factory=list)
    command: list[str] = field(default_factory=list)
    passes: tuple = field(default=(), repr=False)  # (cold PassResult, warm PassResult | None), not serialised
    what_if: list[dict[str, Any]] = field(default_factory=list)  # WhatIfResult.to_json(), best saving first

    def to_json(self) -> dict[str, Any]:
        return {
            "version": ARTIFACT_VERSION,
            "command": list(self.command),
            "failed": self.failed,
            "summary": self.summary,
            "findings": [_diag_json(d) for d in self.diagnostics],
            "runtime_findings": [_diag_json(d) for d in self.runtime_findings],
            "what_if": list(self.what_if),
            "last_output": list(self.last_output),
        }


def _diag_json(d: Diagnostic) -> dict[str, Any]:
    out = dataclasses.asdict(d)
    out["line"] = d.span.line
    out["col"] = d.span.col
    return out


def _probe_lines(findings: list[Finding]) -> dict[str, list[int]]:
    lines: dict[str, set[int]] = {}
    for f in findings:
        if f.path:
            lines.setdefault(f.path, set()).update(f.probe_lines())
    return {p: sorted(v) for p, v in lines.items()}


def _pass_summary(p: PassResult | None, rd: RunData | None) -> dict[str, Any] | None:
    if p is None or rd is None:
        return None
    return {
        "wall_s": round(p.wall_s, 3),
        "returncode": p.returncode,
        "timed_out": p.timed_out,
        "loads": len(rd.loads),
        "compiled": len(rd.compiled()),
        "cached": len([e for e in rd.loads if e.get("status") == "cached"]),
        "errors": len([e for e in rd.loads if e.get("status") == "error"]),
        "identities": len(rd.identities()),
        "module_ms": rd.module_ms(),
        "compile_ms": round(sum(float(e.get("ms") or 0) for e in rd.compiled()), 3),
        "rebuilds": len(rd.rebuilds),
        "kernels_created": len(rd.kernels),
        "recorder_started": rd.recorder_started,
        "warp_hooked": rd.warp is not None,
        "line_probes": (rd.start or {}).get("probes"),
    }


def _modules_table(rd: RunData, warm: RunData | None) -> list[dict[str, Any]]:
    mods: dict[tuple, dict[str, Any]] = {}
    for e in rd.loads:
        key = (e.get("module"), e.get("device"))
        m = mods.setdefault(
            key,
            {"module": e.get("module"), "device": e.get("device"), "identities": [], "ms": 0.0, "warm_ms": 0.0},
        )
        m["identities"].append(
            {
                "hash": e.get("hash"),
                "block_dim": e.get("block_dim"),
                "status": e.get("status"),
                "ms": e.get("ms"),
                "site": e.get("site"),
            }
        )
        m["ms"] = round(m["ms"] + float(e.get("ms") or 0), 3)
    if warm is not None:
        for e in warm.loads:
            key = (e.get("module"), e.get("device"))
            if key in mods:
                mods[key]["warm_ms"] = round(mods[key]["warm_ms"] + float(e.get("ms") or 0), 3)
    return sorted(mods.values(), key=lambda m: -m["ms"])


def run_confirm(
    diagnostics: list[Diagnostic],
    command: list[str],
    *,
    cwd: str,
    timeout: float = 300.0,
    keep_artifacts: str | None = None,
    env: dict[str, str] | None = None,
    echo: Callable[[str], None] | None = None,
    warm: bool = True,
    line_probes: str = "auto",
    what_if: Sequence[str] = (),
    samples: int = 1,
    what_if_jobs: int = 1,
    report: str | None = None,
) -> ConfirmResult:
    """Run ``command`` cold then warm on private caches and annotate ``diagnostics`` in place.

    ``timeout`` (finite seconds > 0) applies to each pass. ``echo`` receives each output line of the
    program as it comes (default: nothing is echoed; the last lines are kept in ``last_output``).
    ``KeyboardInterrupt`` and ``warplint.interrupts.Terminated`` are re-raised after the program's process
    tree is killed and the temp dir removed (see ``runner``). Every diagnostic gets ``d.confirm``.

    ``line_probes`` decides how "did this finding's code run?" is observed besides Warp events:
    ``"auto"`` watches the findings' lines with ``sys.monitoring`` on Python 3.12+ and relies on Warp
    events alone before; ``"on"`` also uses ``sys.settrace`` before 3.12 (slower: every Python call
    pays a callback); ``"off"`` uses Warp events only.
    """
    if not command:
        raise ValueError("--confirm needs a command to run")
    candidates, auto = parse_whatifs(what_if)  # a bad --what-if fails before anything runs
    if not (isinstance(samples, int) and samples >= 1):
        raise ValueError(f"--samples must be a whole number >= 1, got {samples!r}")
    if not (isinstance(timeout, (int, float)) and math.isfinite(timeout) and timeout > 0):
        raise ValueError(f"the --confirm timeout must be a finite number of seconds > 0, got {timeout!r}")
    cwd = os.path.abspath(cwd)
    findings = [Finding.of(d, cwd) for d in diagnostics]
    cold_p = warm_p = None
    failed = None
    ws = Workspace(_probe_lines(findings), probes=line_probes)
    try:
        cold_p = run_pass(ws, "cold", command, cwd=cwd, timeout=timeout, env=env, echo=echo)
        failed = cold_p.failure("cold")
        if failed is None and warm:
            warm_p = run_pass(ws, "warm", command, cwd=cwd, timeout=timeout, env=env, echo=echo)
            failed = warm_p.failure("warm")
        if keep_artifacts:
            _keep_raw(keep_artifacts, cold_p, warm_p)
    except CannotRun as e:
        failed = f"cannot run the command: {e}"
    finally:
        ws.cleanup()
    result = analyze(diagnostics, cold_p, warm_p, cwd=cwd, command=command, failed=failed, findings=findings)
    result.summary["workspace"] = ws.root
    if cold_p is not None and failed is None and warm_p is not None:
        baseline = [Sample.of(cold_p, warm_p, cwd)]
        if samples > 1:
            baseline += measure(command, cwd=cwd, timeout=timeout, env=env, samples=samples - 1)
        result.summary["samples"] = [s.to_json() for s in baseline]
    if cold_p is not None and failed is None and warm_p is not None and (candidates or auto):
        todo: list[tuple[WhatIf, list[str]]] = [(w, []) for w in candidates]
        if auto:
            clears = any(not c.get("internal") for c in RunData.from_events("cold", cold_p.events, cwd).clears)
            codes = {d.code for d in result.runtime_findings}
            groups = [list(d.data.get("modules") or ()) for d in result.runtime_findings if d.code == "WC910"]
            for w, why in auto_candidates(result.summary.get("profile") or {}, codes, clears, groups):
                have = next((t for t in todo if t[0] == w), None)
                if have is None:
                    todo.append((w, [why]))
                else:
                    have[1].append(why)
        beside: list[Sample] = []
        with tempfile.TemporaryDirectory(prefix="warplint-fixes-") as copies:
            workdirs = {}
            for n, (w, _) in enumerate(todo):
                if w.fixes is not None:  # the real code change, in a private copy of the project
                    dest = os.path.join(copies, str(n))
                    os.makedirs(dest)
                    workdirs[w.spec] = prepare(list(result.diagnostics) + list(result.runtime_findings), w.fixes,
                                               cwd, list(command), dest)
            whatifs = run_candidates(command, baseline, todo, cwd=cwd, timeout=timeout, env=env, samples=samples,
                                     jobs=what_if_jobs, echo=echo, beside_out=beside, workdirs=workdirs)
        result.what_if = [r.to_json() for r in whatifs]
        if beside:
            result.summary["baseline_beside_samples"] = [s.to_json() for s in beside]
        _credit_measured_savings(result)
    if keep_artifacts:
        os.makedirs(keep_artifacts, exist_ok=True)
        with open(os.path.join(keep_artifacts, "confirm.json"), "w", encoding="utf-8") as fh:
            json.dump(result.to_json(), fh, indent=2, default=repr)
        # each measured candidate as an artifact of its own (`warplint compare DIR/confirm.json DIR/what-if-1.json`),
        # and the baseline measured beside candidates run at once (compare those against it, not the lone run)
        extra = [(f"what-if-{n}.json", m["what_if"], m["samples"])
                 for n, m in enumerate((m for m in result.what_if if m["samples"]), 1)]
        if result.summary.get("baseline_beside_samples"):
            extra.append(("what-if-baseline.json", None, result.summary["baseline_beside_samples"]))
        for name, spec, samples_json in extra:
            with open(os.path.join(keep_artifacts, name), "w", encoding="utf-8") as fh:
                json.dump({"version": ARTIFACT_VERSION, "command": list(command), "what_if": spec, "failed": None,
                           "summary": {"samples": samples_json}}, fh, indent=2, default=repr)
    if report:
        from .report import write_report

        write_report(report, json.loads(json.dumps(result.to_json(), default=repr)))
    return result


# what-if changes that remove the cost of a mechanism, so a measured saving becomes the finding's cost
_FIX_FOR = {"CS-10": ("enable_backward=False",), "CS-2": ("no-clear-cache", "no-clear-lto-cache",
                                                           "no-clear-kernel-cache"),
            "CS-13": ("parallel-preload",), "CS-7": ("enable_mathdx_gemm=False",), "CS-4": ()}


def _fixes_for(d: Diagnostic, specs: Sequence[str]) -> list[str]:
    """The measured what-ifs that remove this finding's cost: the harness switch of its mechanism, the real
    code change of its fix (``fixes:CODE`` naming it, or ``fixes`` when its fix is safe), a module merge of its
    modules."""
    out = list(_FIX_FOR.get((d.mechanism or "").upper(), ()))
    for spec in specs:
        if d.fix is not None and ((spec == "fixes" and d.fix.is_safe) or
                                  (spec.startswith("fixes:") and d.code in spec.partition(":")[2].split(","))):
            out.insert(0, spec)
        mods = (d.data or {}).get("modules")
        if spec.startswith("merge-modules:") and mods and set(spec.partition(":")[2].split(",")) == set(mods):
            out.insert(0, spec)
    return out


def _credit_measured_savings(result: ConfirmResult) -> None:
    """A confirmed finding whose fix a what-if measured as an improvement gets that saving as its cost."""
    improved = {r["what_if"]: r for r in result.what_if if r["verdict"] == "improved" and r.get("saving_s")}
    for d in list(result.diagnostics) + list(result.runtime_findings):
        c = d.confirm or {}
        if c.get("verdict") != CONFIRMED:
            continue
        for spec in _fixes_for(d, list(improved)):
            r = improved.get(spec)
            if r is None:
                continue
            ms = r["saving_s"] * 1000.0
            c["cost_ms"] = round(ms, 1)
            c["measured_by"] = spec
            c["evidence"] = (f"{c.get('evidence')}; measured: --what-if {spec} saved {r['saving_s']:.2f} s "
                             f"{r['primary_metric']} (band {r['band_s']:.2f} s)")
            break


def analyze(
    diagnostics: list[Diagnostic],
    cold_p: PassResult | None,
    warm_p: PassResult | None,
    *,
    cwd: str,
    command: list[str],
    failed: str | None = None,
    findings: list[Finding] | None = None,
) -> ConfirmResult:
    """Judge ``diagnostics`` against recorded passes (``run_confirm`` calls this; tests reuse passes)."""
    cwd = os.path.abspath(cwd)
    if findings is None:
        findings = [Finding.of(d, cwd) for d in diagnostics]

    cold = RunData.from_events("cold", cold_p.events if cold_p else [], cwd)
    warm_rd = RunData.from_events("warm", warm_p.events, cwd) if warm_p is not None else None
    profile = Profile(cold, cold_p.sources if cold_p else None)
    judge = Judge(cold, warm_rd, cwd, run_failed=failed, profile=profile)
    for f in findings:
        f.diag.confirm = judge.judge(f)
    share_costs([f.diag.confirm for f in findings if f.diag.confirm is not None], judge.paid_by)
    runtime = judge.runtime_findings() if cold.recorder_started else []

    recorder_errors = list(cold.recorder_errors) + (list(warm_rd.recorder_errors) if warm_rd else [])
    recorder_ok = bool(cold_p) and cold.recorder_started and not recorder_errors
    if cold_p is not None and not cold.recorder_started:
        recorder_errors.append("the recorder did not start (python -S/-I, a non-Python command, or no events file)")
    config_escapes = sorted(
        {str(c.get("value")) for c in cold.configs if c.get("name") == "kernel_cache_dir" and not c.get("internal")}
    )
    summary: dict[str, Any] = {
        "cold_wall_s": round(cold_p.wall_s, 3) if cold_p else None,
        "warm_wall_s": round(warm_p.wall_s, 3) if warm_p else None,
        "compiled_identities": len(cold.compiled()),
        "identities": len(cold.identities()),
        "module_time_ms": cold.module_ms(),
        "warm_module_time_ms": warm_rd.module_ms() if warm_rd else None,
        "warm_compiled_identities": len(warm_rd.compiled()) if warm_rd else None,
        "rebuilds": len(cold.rebuilds),
        "recorder_ok": recorder_ok,
        "recorder_errors": recorder_errors,
        "warp_version": (cold.warp or {}).get("version"),
        "warp_imported": cold.warp is not None,
        "python": (cold.start or {}).get("python"),
        "line_probes": (cold.start or {}).get("probes"),
        "kernel_cache_dir_set_by_program": config_escapes,
        "verdicts": {
            v: sum(1 for d in diagnostics if (d.confirm or {}).get("verdict") == v)
            for v in (CONFIRMED, NOT_REPRODUCED, NOT_EXERCISED, INCONCLUSIVE)
        },
        "cold": _pass_summary(cold_p, cold),
        "warm": _pass_summary(warm_p, warm_rd),
        "modules": _modules_table(cold, warm_rd),
        "compile_elapsed_s": _compile_elapsed(cold_p, warm_p),
        "profile": profile.to_json(),
        "output_digest": {"cold": cold_p.output_digest if cold_p else None,
                          "warm": warm_p.output_digest if warm_p else None},
    }
    last = (warm_p if (warm_p is not None and failed and failed.startswith("warm")) else cold_p)
    result = ConfirmResult(
        diagnostics=list(diagnostics),
        runtime_findings=runtime,
        summary=summary,
        failed=failed,
        last_output=list(last.output_tail[-20:]) if last else [],
        command=list(command),
        passes=(cold_p, warm_p),
    )
    return result


def _compile_elapsed(cold: PassResult | None, warm: PassResult | None) -> float | None:
    """Cold wall - warm wall: the seconds the cold start cost (the probe's "compile elapsed")."""
    if cold is None or warm is None:
        return None
    return round(cold.wall_s - warm.wall_s, 3)


def _keep_raw(dest: str, cold: PassResult | None, warm: PassResult | None) -> None:
    os.makedirs(dest, exist_ok=True)
    for p in (cold, warm):
        if p is None:
            continue
        with open(os.path.join(dest, f"events-{p.label}.jsonl"), "w", encoding="utf-8") as fh:
            fh.write(p.events_text)
        with open(os.path.join(dest, f"output-{p.label}.txt"), "w", encoding="utf-8") as fh:
            fh.write("\n".join(p.output_tail) + "\n")


def _count(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def render_summary(result: ConfirmResult, *, width: int = 100, max_rows: int = 12) -> str:
    """One screen: the run, findings ranked by measured cost, then the most expensive modules."""
    s = result.summary
    out = []
    cold = s.get("cold_wall_s")
    warm = s.get("warm_wall_s")
    head = f"warplint --confirm: cold run {cold if cold is not None else '-'} s"
    if warm is not None:
        head += f", warm run {warm} s"
    compiled = s.get("compiled_identities", 0)
    head += (f"; {_count(compiled, 'identity', 'identities')} compiled "
             f"({s.get('module_time_ms', 0):.0f} ms in module loads)")
    if s.get("warm_compiled_identities") is not None:
        head += f"; warm run compiled {s['warm_compiled_identities']} ({s.get('warm_module_time_ms') or 0:.0f} ms)"
    out.append(head)
    if result.failed:
        out.append(f"  run failed: {result.failed}")
    if not s.get("recorder_ok"):
        out.append("  recorder: FAILED (" + "; ".join(s.get("recorder_errors") or ["unknown"])[:200] + ")")
    v = s.get("verdicts") or {}
    counts = [f"{n} {k}" for k, n in v.items() if n]
    if result.runtime_findings:
        counts.append(f"{len(result.runtime_findings)} runtime-only finding(s)")
    out.append("  verdicts: " + ", ".join(counts) if counts else "  no findings to confirm")
    rows = []
    for d in list(result.diagnostics) + list(result.runtime_findings):
        c = d.confirm or {}
        rows.append((c.get("cost_ms") or 0.0, c.get("verdict") or "-", d))
    order = {CONFIRMED: 0, NOT_REPRODUCED: 1, INCONCLUSIVE: 2, NOT_EXERCISED: 3}
    rows.sort(key=lambda r: (-r[0], order.get(r[1], 9), r[2].sort_key()))
    if rows:
        out.append(f"  {'cost':>9}  {'verdict':<15} finding")
        shown_once: set[tuple] = set()  # (cost, evidence) of a cost several findings share: printed on the first
        for cost, verdict, d in rows[:max_rows]:
            ev = (d.confirm or {}).get("evidence") or ""
            shown_cost = f"{cost:.0f} ms" if cost else "-"
            if cost and (d.confirm or {}).get("cost_shared_by"):
                shown_cost = "shared" if (cost, ev) in shown_once else shown_cost
                shown_once.add((cost, ev))
            line = f"  {shown_cost:>9}  {verdict:<15} {d.path}:{d.line} {d.code} {ev}"
            out.append(line if len(line) <= width else line[: width - 3] + "...")
        if len(rows) > max_rows:
            out.append(f"  ... {len(rows) - max_rows} more (see --keep-artifacts / JSON output)")
    table = render_profile(s.get("profile") or {}, compile_elapsed_s=s.get("compile_elapsed_s"), width=width,
                           warm_compiled=s.get("warm_compiled_identities"))
    mods = s.get("modules") or []
    out += render_whatifs(result.what_if, width=width + 20)  # change, saving, band, workload: one line each
    if table:
        out += table
    elif mods:
        out.append("  modules by build time:")
        for m in mods[:5]:
            ids = m["identities"]
            hs = ", ".join(
                f"{short(i['hash'])}{'' if i['block_dim'] in (None, 1) else '@' + str(i['block_dim'])}({i['status']})"
                for i in ids[:4]
            )
            out.append(f"    {m['module']} on {m['device']}: {len(ids)} load(s), {m['ms']:.0f} ms  [{hs}]")
    return "\n".join(out)

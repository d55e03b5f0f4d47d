"""``--what-if``: re-run the program cold with one change applied by the harness, measure the saving
with a noise band, and check that the workload did not change.

A what-if never edits the user's files. The change travels to the in-process recorder as a JSON file
(``WARPLINT_CONFIRM_WHATIF``): ``wp.config`` values set right after ``import warp`` (before the program's
modules exist), module options set on one module before its first load, ``clear_kernel_cache`` /
``clear_lto_cache`` made no-ops, or a parallel preload of the modules the baseline built (CUDA only).

Measurement (as Warp's cold-start probe): every sample is a cold and a warm run on fresh private
caches; *compile elapsed* = cold wall - warm wall. Saving = median(baseline) - median(candidate); the
noise band is max(1 % of the baseline median, 2 x the larger MAD). A candidate whose launch topology
(kernel, module, dim, dtypes, device, block_dim, adjoint) or program output differs from the baseline's
changed the workload: no saving is claimed for it.
"""

from __future__ import annotations

import ast
import dataclasses
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from .events import LaunchShape, RunData
from .profile import Profile, topology_json
from .runner import CannotRun, PassResult, Workspace, run_pass

IMPROVED = "improved"
REGRESSED = "regressed"
INCONCLUSIVE = "inconclusive"
WORKLOAD_CHANGED = "workload changed"
FAILED = "failed"
NOT_APPLICABLE = "not applicable"

CLEAR_FUNCTIONS = ("clear_kernel_cache", "clear_lto_cache")
_NAME = re.compile(r"^[A-Za-z_]\w*$")


class WhatIfError(ValueError):
    """A --what-if value that does not parse (one line for the user)."""


@dataclass(frozen=True)
class WhatIf:
    """One candidate change, as the harness applies it."""

    spec: str
    config: tuple[tuple[str, Any], ...] = ()
    module_options: tuple[tuple[str, tuple[tuple[str, Any], ...]], ...] = ()
    noop_clears: tuple[str, ...] = ()
    preload: bool = False
    merge: tuple[str, ...] = ()  # merge-modules: the kernels of merge[1:] join module merge[0]
    fixes: tuple[str, ...] | None = None  # fixes: () = warplint's safe fixes; codes = every fix of those codes

    def renames(self) -> dict[str, str] | None:
        """The module each merged module's kernels run in under this change."""
        return dict.fromkeys(self.merge[1:], self.merge[0]) if self.merge else None

    def harness(self, baseline: Sample | None) -> dict[str, Any]:
        """The JSON the recorder reads (``WARPLINT_CONFIRM_WHATIF``)."""
        out: dict[str, Any] = {}
        if self.config:
            out["config"] = dict(self.config)
        if self.module_options:
            out["module_options"] = {module: dict(opts) for module, opts in self.module_options}
        if self.noop_clears:
            out["noop_clears"] = list(self.noop_clears)
        if self.preload and baseline is not None:
            out["preload"] = baseline.preload_plan()
            out["preload_workers"] = max(2, min(16, len(out["preload"])))
        if self.merge:
            out["merge_modules"] = list(self.merge)
        return out


def _literal(text: str) -> Any:
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text  # a bare word: a string option value (mode=debug)


def parse_whatif(text: str) -> WhatIf:
    """``enable_backward=False`` (a wp.config value), ``no-clear-cache`` / ``no-clear-lto-cache`` /
    ``no-clear-kernel-cache``, ``module-options:MODULE:key=value[,key=value]``, ``parallel-preload``."""
    spec = text.strip()
    if spec in ("no-clear-cache", "no-clear-caches"):
        return WhatIf(spec, noop_clears=CLEAR_FUNCTIONS)
    if spec == "no-clear-lto-cache":
        return WhatIf(spec, noop_clears=("clear_lto_cache",))
    if spec == "no-clear-kernel-cache":
        return WhatIf(spec, noop_clears=("clear_kernel_cache",))
    if spec == "parallel-preload":
        return WhatIf(spec, preload=True)
    if spec == "fixes":
        return WhatIf(spec, fixes=())
    if spec.startswith("fixes:"):
        codes = tuple(c.strip().upper() for c in spec.partition(":")[2].split(",") if c.strip())
        if not codes or not all(re.match(r"^WC\d{3}$", c) for c in codes):
            raise WhatIfError(f"--what-if {spec!r}: expected fixes or fixes:CODE[,CODE] (e.g. fixes:WC907)")
        return WhatIf(spec, fixes=codes)
    if spec.startswith("merge-modules:"):
        names = tuple(n.strip() for n in spec.partition(":")[2].split(",") if n.strip())
        if len(names) < 2 or len(set(names)) != len(names):
            raise WhatIfError(f"--what-if {spec!r}: expected merge-modules:A,B[,C] (two or more module names)")
        return WhatIf(spec, merge=names)
    if spec.startswith("module-options:"):
        _, _, rest = spec.partition(":")
        module, sep, assigns = rest.rpartition(":")
        if not sep or not module or not assigns:
            raise WhatIfError(f"--what-if {spec!r}: expected module-options:MODULE:key=value[,key=value]")
        opts = []
        for part in assigns.split(","):
            key, eq, value = part.partition("=")
            if not eq or not _NAME.match(key.strip()):
                raise WhatIfError(f"--what-if {spec!r}: {part!r} is not key=value")
            opts.append((key.strip(), _literal(value.strip())))
        return WhatIf(spec, module_options=((module, tuple(opts)),))
    name, eq, value = spec.partition("=")
    name = name.strip()
    if name.startswith(("wp.config.", "warp.config.")):
        name = name.split(".", 2)[2]
    if eq and _NAME.match(name) and value.strip():
        return WhatIf(spec, config=((name, _literal(value.strip())),))
    raise WhatIfError(
        f"--what-if {spec!r} is not a change warplint can apply: use NAME=VALUE (a wp.config value, e.g. "
        "enable_backward=False), no-clear-cache, module-options:MODULE:key=value, parallel-preload, "
        "merge-modules:A,B, fixes[:CODE,...] or auto"
    )


def parse_whatifs(specs: Sequence[str]) -> tuple[list[WhatIf], bool]:
    """The candidates given, and whether ``auto`` was asked for (candidates from the baseline's evidence)."""
    out: list[WhatIf] = []
    auto = False
    for s in specs:
        if s.strip() == "auto":
            auto = True
        else:
            w = parse_whatif(s)
            if w not in out:
                out.append(w)
    return out, auto


# -- one measured sample --------------------------------------------------------------------------


@dataclass
class Sample:
    """A cold and a warm run on the same fresh caches, reduced to what a comparison needs."""

    cold_wall_s: float
    warm_wall_s: float | None
    cold_module_ms: float
    warm_module_ms: float | None
    cold_compiled: int
    warm_compiled: int | None
    topology: list[dict[str, Any]]
    identities: list[list[Any]]  # [module, device, block_dim, hash] of the cold run
    sources: list[str]  # digests of the generated sources of the cold run
    source_bytes: int
    output: list[str | None]  # digests of the program's output, cold and warm
    failed: str | None = None
    applied: dict[str, Any] = field(default_factory=dict)  # what the recorder reported applying
    plan: list[dict[str, Any]] = field(default_factory=list)  # CUDA builds a parallel preload would do

    @property
    def compile_elapsed_s(self) -> float | None:
        return None if self.warm_wall_s is None else self.cold_wall_s - self.warm_wall_s

    def preload_plan(self) -> list[dict[str, Any]]:
        return list(self.plan)

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        out["compile_elapsed_s"] = None if self.compile_elapsed_s is None else round(self.compile_elapsed_s, 3)
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Sample:
        known = set(cls.__dataclass_fields__)
        return cls(**{k: v for k, v in data.items() if k in known})

    @classmethod
    def of(cls, cold: PassResult, warm: PassResult | None, cwd: str, failed: str | None = None) -> Sample:
        crd = RunData.from_events("cold", cold.events, cwd)
        wrd = RunData.from_events("warm", warm.events, cwd) if warm is not None else None
        profile = Profile(crd, cold.sources)
        ids = profile.compiled() + [i for i in profile.identities if i.status == "cached"]
        plan = []
        seen = set()
        for i in profile.compiled():
            key = (i.module, i.device, i.block_dim)
            if i.device.startswith("cuda") and key not in seen:
                seen.add(key)
                plan.append({"module": i.module, "device": i.device, "block_dim": i.block_dim})
        applied: dict[str, Any] = {}
        if crd.warp and crd.warp.get("whatif"):
            applied["config"] = crd.warp["whatif"]
        for ev in crd.whatifs:
            applied.setdefault(str(ev.get("action")), []).append(
                {k: v for k, v in ev.items() if k in ("module", "options", "modules", "missing", "ms")})
        noops = [c.get("fn") for c in crd.clears if c.get("noop")]
        if noops:
            applied["noop_clears"] = noops
        return cls(
            cold_wall_s=round(cold.wall_s, 3),
            warm_wall_s=round(warm.wall_s, 3) if warm is not None else None,
            cold_module_ms=crd.module_ms(),
            warm_module_ms=wrd.module_ms() if wrd is not None else None,
            cold_compiled=len(crd.compiled()),
            warm_compiled=len(wrd.compiled()) if wrd is not None else None,
            topology=topology_json(profile.topology),
            identities=sorted([[i.module, i.device, i.block_dim, i.hash] for i in ids], key=repr),
            sources=sorted(s["sha256"] for s in cold.sources.values()),
            source_bytes=sum(int(s["bytes"]) for s in cold.sources.values()),
            output=[cold.output_digest, warm.output_digest if warm is not None else None],
            failed=failed,
            applied=applied,
            plan=plan,
        )


def measure(command: list[str], *, cwd: str, timeout: float, env: dict[str, str] | None, samples: int,
            whatif: dict[str, Any] | None = None, echo: Callable[[str], None] | None = None) -> list[Sample]:
    """``samples`` cold+warm pairs, each on fresh private caches, with the harness change ``whatif``."""
    out = []
    for n in range(samples):
        ws = Workspace(None, probes="off", whatif=whatif)
        try:
            cold = run_pass(ws, f"cold{n}", command, cwd=cwd, timeout=timeout, env=env, echo=echo)
            failed = cold.failure("cold")
            warm = None
            if failed is None:
                warm = run_pass(ws, f"warm{n}", command, cwd=cwd, timeout=timeout, env=env, echo=echo)
                failed = warm.failure("warm")
        except CannotRun as e:
            raise WhatIfError(f"cannot run the command: {e}") from None
        finally:
            ws.cleanup()
        out.append(Sample.of(cold, warm, cwd, failed))
        if failed:
            break
    return out


# -- comparing samples ----------------------------------------------------------------------------


def mad(values: Sequence[float]) -> float:
    if len(values) < 2:
        return 0.0
    m = statistics.median(values)
    return statistics.median([abs(v - m) for v in values])


@dataclass
class Metric:
    """One measured quantity over the baseline and candidate samples (seconds)."""

    name: str
    baseline: list[float]
    candidate: list[float]

    @property
    def base_median(self) -> float:
        return statistics.median(self.baseline)

    @property
    def cand_median(self) -> float:
        return statistics.median(self.candidate)

    @property
    def saving(self) -> float:
        return self.base_median - self.cand_median

    @property
    def band(self) -> float:
        return max(0.01 * abs(self.base_median), 2 * max(mad(self.baseline), mad(self.candidate)))

    def verdict(self) -> str:
        if self.saving > self.band:
            return IMPROVED
        if self.saving < -self.band:
            return REGRESSED
        return INCONCLUSIVE

    def to_json(self) -> dict[str, Any]:
        return {
            "baseline": [round(v, 3) for v in self.baseline],
            "candidate": [round(v, 3) for v in self.candidate],
            "baseline_median": round(self.base_median, 3),
            "candidate_median": round(self.cand_median, 3),
            "baseline_mad": round(mad(self.baseline), 3),
            "candidate_mad": round(mad(self.candidate), 3),
            "saving": round(self.saving, 3),
            "band": round(self.band, 3),
            "verdict": self.verdict(),
        }


def _shapes(sample: Sample, renames: dict[str, str] | None = None) -> dict[LaunchShape, int | None]:
    out: dict[LaunchShape, int | None] = {}
    for row in sample.topology:
        shape = LaunchShape.of(row)
        if renames and shape.module in renames:
            shape = dataclasses.replace(shape, module=renames[shape.module])
        count, have = row.get("launches"), out.get(shape)
        if shape in out:  # two modules merged: one shape, the launches of both
            count = None if count is None or have is None else have + count
        out[shape] = count
    return out


def workload_difference(baseline: list[Sample], candidate: list[Sample],
                        renames: dict[str, str] | None = None) -> tuple[bool, list[str]]:
    """(same workload?, what differs or why a part was not compared). ``renames``: modules the candidate
    merged into another (their kernels' launches count as the target module's)."""
    notes: list[str] = []
    same = True
    bad = next((s.failed for s in candidate if s.failed), None)
    if bad:
        return False, [f"the candidate run failed: {bad}"]
    bad = next((s.failed for s in baseline if s.failed), None)
    if bad:  # a failed run's walls are no measure of the workload (a warm run that exits at once)
        return False, [f"the baseline run failed: {bad}"]
    base, cand = _shapes(baseline[0], renames), _shapes(candidate[0])
    if not base and not cand:
        notes.append("no launch was recorded: topology not compared")
    elif set(base) != set(cand):
        same = False
        gone = [s.describe() for s in base if s not in cand]
        new = [s.describe() for s in cand if s not in base]
        if gone:
            notes.append("launches gone: " + "; ".join(gone[:3]) + (" ..." if len(gone) > 3 else ""))
        if new:
            notes.append("new launches: " + "; ".join(new[:3]) + (" ..." if len(new) > 3 else ""))
    else:
        counts = [s.describe() for s in base if None not in (base[s], cand[s]) and base[s] != cand[s]]
        if counts:
            same = False
            notes.append("launch counts differ: " + "; ".join(counts[:3]))
    base_out = {d for s in baseline for d in s.output if d is not None}
    cand_out = {d for s in candidate for d in s.output if d is not None}
    if len(base_out) > 1:
        notes.append("the program's output differs between baseline runs: output not compared")
    elif base_out and cand_out and cand_out != base_out:
        same = False
        notes.append("the program's output differs (Warp's own log lines left out)")
    return same, notes


@dataclass
class WhatIfResult:
    spec: str
    verdict: str
    primary: str | None  # the metric the verdict is judged by
    metrics: dict[str, Metric]
    workload_same: bool | None
    workload_notes: list[str]
    samples: list[Sample]
    note: str | None = None
    source_bytes: tuple[int, int] | None = None  # generated source, baseline -> candidate
    reasons: list[str] = field(default_factory=list)  # why auto proposed it

    @property
    def saving_s(self) -> float | None:
        if self.primary is None or self.verdict in (WORKLOAD_CHANGED, FAILED, NOT_APPLICABLE):
            return None
        return self.metrics[self.primary].saving

    def to_json(self) -> dict[str, Any]:
        return {
            "what_if": self.spec,
            "verdict": self.verdict,
            "primary_metric": self.primary,
            "saving_s": None if self.saving_s is None else round(self.saving_s, 3),
            "band_s": None if self.primary is None else round(self.metrics[self.primary].band, 3),
            "metrics": {k: m.to_json() for k, m in self.metrics.items()},
            "workload_same": self.workload_same,
            "workload_notes": list(self.workload_notes),
            "source_bytes": list(self.source_bytes) if self.source_bytes else None,
            "note": self.note,
            "reasons": list(self.reasons),
            "samples": [s.to_json() for s in self.samples],
        }


def metrics_of(baseline: list[Sample], candidate: list[Sample]) -> dict[str, Metric]:
    pairs = {
        "compile_elapsed_s": (lambda s: s.compile_elapsed_s),
        "cold_module_s": (lambda s: s.cold_module_ms / 1000.0),
        "warm_wall_s": (lambda s: s.warm_wall_s),
        "warm_module_s": (lambda s: None if s.warm_module_ms is None else s.warm_module_ms / 1000.0),
    }
    out = {}
    for name, get in pairs.items():
        b = [v for v in map(get, baseline) if v is not None]
        c = [v for v in map(get, candidate) if v is not None]
        if b and c:
            out[name] = Metric(name, b, c)
    return out


def primary_metric(baseline: list[Sample]) -> str:
    """Compile elapsed, unless the baseline's warm run compiled too (a cache thrown away): then the warm
    run is what every later run pays, and the warm wall decides."""
    if any((s.warm_compiled or 0) > 0 for s in baseline):
        return "warm_wall_s"
    return "compile_elapsed_s"


def judge_whatif(spec: str, baseline: list[Sample], candidate: list[Sample], note: str | None = None,
                 reasons: list[str] | None = None, renames: dict[str, str] | None = None) -> WhatIfResult:
    same, notes = workload_difference(baseline, candidate, renames)
    metrics = metrics_of(baseline, candidate)
    primary: str | None = primary_metric(baseline)
    if primary not in metrics:
        primary = next(iter(metrics), None) if metrics else None
    if not same or (candidate and candidate[-1].failed):
        verdict = WORKLOAD_CHANGED
    elif primary is None:
        verdict = INCONCLUSIVE
    else:
        verdict = metrics[primary].verdict()
    if len(baseline) < 3 or len(candidate) < 3:
        extra = f"{min(len(baseline), len(candidate))} sample(s): the band is 1 % of the median only (use --samples 3+)"
        note = f"{note}; {extra}" if note else extra
    return WhatIfResult(spec, verdict, primary, metrics, same, notes, candidate, note,
                        (baseline[0].source_bytes, candidate[0].source_bytes) if candidate else None,
                        list(reasons or ()))


def not_applicable(spec: str, why: str, reasons: list[str] | None = None) -> WhatIfResult:
    return WhatIfResult(spec, NOT_APPLICABLE, None, {}, None, [], [], why, None, list(reasons or ()))


# -- auto ------------------------------------------------------------------------------------------


def auto_candidates(profile_json: dict[str, Any], runtime_codes: set[str], clears: bool,
                    merge_groups: Sequence[Sequence[str]] = ()) -> list[tuple[WhatIf, str]]:
    """The changes the baseline's evidence suggests, each with its reason (``merge_groups``: modules always
    loaded together, with the same options, device and block_dim)."""
    out: list[tuple[WhatIf, str]] = []
    ids = profile_json.get("identities") or []
    compiled = [i for i in ids if i.get("status") == "compiled"]
    if any(i.get("enable_backward") and not i.get("backward_used") and (i.get("adjoint_bytes") or i.get("lto_built"))
           for i in compiled):
        out.append((parse_whatif("enable_backward=False"), "adjoint code built, no taped or adjoint launch"))
    if any(i.get("lto_built") for i in compiled):
        out.append((parse_whatif("enable_mathdx_gemm=False"), "LTO artifacts built (MathDx)"))
    if clears:
        out.append((parse_whatif("no-clear-cache"), "clear_kernel_cache/clear_lto_cache ran"))
    if "WC909" in runtime_codes:
        out.append((parse_whatif("parallel-preload"), "independent CUDA modules built serially"))
    for group in merge_groups:
        if len(group) > 1:
            out.append((parse_whatif("merge-modules:" + ",".join(group)),
                        "one-kernel modules with the same options built separately"))
    return out


# -- running candidates ----------------------------------------------------------------------------


def run_candidates(command: list[str], baseline: list[Sample], whatifs: list[tuple[WhatIf, list[str]]], *,
                   cwd: str, timeout: float, env: dict[str, str] | None, samples: int, jobs: int = 1,
                   echo: Callable[[str], None] | None = None,
                   beside_out: list[Sample] | None = None,
                   workdirs: dict[str, tuple[str | None, list[str], str]] | None = None) -> list[WhatIfResult]:
    """Measure each candidate (``jobs`` > 1: that many at once, each in its own worker process; the
    baseline measured beside them is appended to ``beside_out``). ``workdirs``: for a candidate that is a
    code change, (the private copy of the project to run in, or None when nothing could be applied; the command
    there; what was applied, or why not)."""
    todo: list[tuple[WhatIf, list[str], dict[str, Any], str, list[str]]] = []
    results: dict[str, WhatIfResult] = {}
    notes: dict[str, str] = {}
    cuda = bool(baseline[0].plan) if baseline else False
    for w, reasons in whatifs:
        if w.preload and not cuda:
            results[w.spec] = not_applicable(w.spec, "CUDA only: the baseline built no module on a CUDA device",
                                             reasons)
            continue
        where, there = cwd, command
        if w.fixes is not None:
            copy, there, what = (workdirs or {}).get(w.spec, (None, command, "no private copy was made"))
            if copy is None:
                results[w.spec] = not_applicable(w.spec, what, reasons)
                continue
            where, notes[w.spec] = copy, what
        todo.append((w, reasons, w.harness(baseline[0] if baseline else None), where, there))
    if jobs <= 1 or len(todo) <= 1:
        for w, reasons, harness, where, there in todo:
            cand = measure(there, cwd=where, timeout=timeout, env=env, samples=samples, whatif=harness, echo=echo)
            results[w.spec] = judge_whatif(w.spec, baseline, cand, reasons=reasons, note=notes.get(w.spec),
                                           renames=w.renames())
    else:
        # Builds running at once slow each other down: the baseline is measured again beside the candidates
        # (first in the queue, so in the first wave), and they are judged against that, not the lone run.
        measured = _parallel([({}, cwd, command)] + [(h, c, t) for _, _, h, c, t in todo], timeout=timeout,
                             env=env, samples=samples, jobs=jobs)
        beside = measured[0] if not isinstance(measured[0], str) else baseline
        if beside_out is not None and beside is not baseline:
            beside_out.extend(beside)
        note = (f"measured {min(jobs, len(todo) + 1)} at once, against the baseline measured beside them"
                if beside is not baseline else "measured in parallel; the baseline beside them failed: against "
                "the baseline run alone")
        for (w, reasons, *_), got in zip(todo, measured[1:], strict=True):
            if isinstance(got, str):
                results[w.spec] = WhatIfResult(w.spec, FAILED, None, {}, None, [], [], got, None, reasons)
            else:
                both = f"{notes[w.spec]}; {note}" if w.spec in notes else note
                results[w.spec] = judge_whatif(w.spec, beside, got, note=both, reasons=reasons, renames=w.renames())
    for w, _ in whatifs:
        r = results[w.spec]
        if w.module_options and r.samples and "module_options" not in r.samples[0].applied:
            names = ", ".join(m for m, _ in w.module_options)
            results[w.spec] = not_applicable(
                w.spec, f"module {names} never loaded in the candidate run, so nothing was applied (a script's "
                "module is __main__ at run time)", r.reasons)
        if w.merge and r.samples and "merge_modules" not in r.samples[0].applied:
            results[w.spec] = not_applicable(
                w.spec, f"no kernel of {', '.join(w.merge[1:])} was created in the candidate run, so nothing was "
                "merged", r.reasons)
    ordered = [results[w.spec] for w, _ in whatifs]
    return sorted(ordered, key=lambda r: (r.saving_s is None, -(r.saving_s or 0.0)))


def _parallel(harnesses: list[tuple[dict[str, Any], str, list[str]]], *, timeout: float,
              env: dict[str, str] | None, samples: int, jobs: int) -> list[list[Sample] | str]:
    """Each candidate in its own ``python -m warplint.confirm.whatif`` worker: a worker owns its program's
    process tree (the runner's subreaper and sweep are per process)."""
    out: list[list[Sample] | str] = ["not run"] * len(harnesses)
    with tempfile.TemporaryDirectory(prefix="warplint-whatif-") as tmp:
        pending = list(enumerate(harnesses))
        running: list[tuple[int, subprocess.Popen, str]] = []
        root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        worker_env = dict(os.environ)
        worker_env["PYTHONPATH"] = root + (os.pathsep + worker_env["PYTHONPATH"] if worker_env.get("PYTHONPATH")
                                           else "")
        try:
            while pending or running:
                while pending and len(running) < jobs:
                    n, (harness, cwd, there) = pending.pop(0)
                    spec_path = os.path.join(tmp, f"spec{n}.json")
                    result_path = os.path.join(tmp, f"result{n}.json")
                    with open(spec_path, "w", encoding="utf-8") as fh:
                        json.dump({"command": there, "cwd": cwd, "timeout": timeout, "env": env,
                                   "samples": samples, "whatif": harness}, fh)
                    proc = subprocess.Popen([sys.executable, "-m", "warplint.confirm.whatif", spec_path, result_path],
                                            env=worker_env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                            stderr=subprocess.PIPE)
                    running.append((n, proc, result_path))
                n, proc, result_path = running.pop(0)
                _, err = proc.communicate()
                try:
                    with open(result_path, encoding="utf-8") as fh:
                        data = json.load(fh)
                    out[n] = data["error"] if "error" in data else [Sample.from_json(s) for s in data["samples"]]
                except (OSError, ValueError, KeyError):
                    tail = (err or b"").decode("utf-8", "replace").strip().splitlines()[-1:]
                    out[n] = f"the what-if worker failed ({proc.returncode}){': ' + tail[0] if tail else ''}"
        finally:
            for _, proc, _ in running:  # interrupted: the workers end their programs' trees themselves
                proc.terminate()
                try:
                    proc.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    proc.kill()
    return out


def _worker(spec_path: str, result_path: str) -> int:
    from warplint import interrupts

    interrupts.install()
    with open(spec_path, encoding="utf-8") as fh:
        spec = json.load(fh)
    try:
        samples = measure(spec["command"], cwd=spec["cwd"], timeout=spec["timeout"], env=spec["env"],
                          samples=spec["samples"], whatif=spec["whatif"])
        data: dict[str, Any] = {"samples": [s.to_json() for s in samples]}
    except WhatIfError as e:
        data = {"error": str(e)}
    with open(result_path, "w", encoding="utf-8") as fh:
        json.dump(data, fh)
    return 0


def render_whatifs(results: list[dict[str, Any]], width: int = 100) -> list[str]:
    """"change -> measured saving (noise band) -> workload same/changed", one line each, best first."""
    if not results:
        return []
    out = ["  what-if (cold re-runs; switches applied by the harness, fixes in a private copy):"]
    for r in results:
        metric = r.get("primary_metric")
        m = (r.get("metrics") or {}).get(metric or "") or {}
        if r["verdict"] in (NOT_APPLICABLE, FAILED):
            line = f"    {r['what_if']} -> {r['verdict']}: {r.get('note') or ''}"
        else:
            short_metric = {"compile_elapsed_s": "elapsed", "warm_wall_s": "warm wall"}.get(metric or "", metric)
            if r["verdict"] == WORKLOAD_CHANGED or not m:
                saving = "no saving claimed"
            else:
                medians = f"{m['baseline_median']:.2f}->{m['candidate_median']:.2f} s {short_metric}"
                verb = "saves" if m["saving"] >= 0 else "costs"
                saving = f"{verb} {abs(m['saving']):.2f} s ±{m['band']:.2f} ({medians})"
            if r.get("workload_same"):
                line = f"    {r['what_if']} -> {saving} -> workload same [{r['verdict']}]"
            else:
                line = f"    {r['what_if']} -> {saving} -> workload CHANGED"
            notes = [n for n in r.get("workload_notes") or () if not r.get("workload_same") or "not compared" in n]
            if notes:
                line += f" ({notes[0]})"
        out.append(line if len(line) <= width else line[: width - 3] + "...")
    return out


if __name__ == "__main__":
    raise SystemExit(_worker(sys.argv[1], sys.argv[2]))

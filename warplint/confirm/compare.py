"""``warplint compare BASELINE.json CANDIDATE.json``: two ``--confirm`` artifacts side by side, as Warp's
cold-start probe compares them.

Either file may be ``confirm.json`` from ``--keep-artifacts`` or the document ``--confirm --format json``
writes (its ``confirm`` object). The verdict is by compile elapsed (cold wall - warm wall; the warm wall
when the baseline's warm run compiled too), with the noise band max(1 % of the baseline median, 2 x MAD):
``improved`` / ``regressed`` / ``inconclusive``, or ``workload changed`` when the launch topology or the
program's output differ. Overlapped builds: a higher module-time sum with identical launches, identities
and generated source is contention between builds running at once, not new work; compile elapsed decides.

Exit code: 0 improved or inconclusive, 1 regressed or workload changed, 2 bad input.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NoReturn, TextIO

from warplint.sources import read_regular

from .whatif import (
    INCONCLUSIVE,
    REGRESSED,
    WORKLOAD_CHANGED,
    Sample,
    metrics_of,
    primary_metric,
    workload_difference,
)


class CompareError(Exception):
    """Bad input: one line for the user, exit code 2."""


@dataclass
class Comparison:
    verdict: str
    primary: str | None
    metrics: dict[str, dict[str, Any]]
    workload_same: bool
    workload_notes: list[str]
    overlapped: bool
    notes: list[str]

    def to_json(self) -> dict[str, Any]:
        return {"verdict": self.verdict, "primary_metric": self.primary, "metrics": self.metrics,
                "workload_same": self.workload_same, "workload_notes": self.workload_notes,
                "overlapped_builds": self.overlapped, "notes": self.notes}


ARTIFACT_LIMIT = 2**28  # a --confirm artifact larger than this is refused, not read

def load_artifact(path: str) -> list[Sample]:
    try:
        data = json.loads(read_regular(path, ARTIFACT_LIMIT).decode("utf-8"))
    except OSError as e:
        raise CompareError(f"cannot read {path}: {e.strerror or e}") from None
    except ValueError as e:  # not UTF-8 (UnicodeDecodeError), or not JSON
        raise CompareError(f"{path} is not JSON: {e}") from None
    if isinstance(data, dict) and isinstance(data.get("confirm"), dict):
        data = data["confirm"]
    summary = data.get("summary") if isinstance(data, dict) else None
    if not isinstance(summary, dict):
        raise CompareError(f"{path} is not a --confirm artifact (no 'summary'; use --keep-artifacts DIR/confirm.json "
                           "or --format json output)")
    if data.get("failed"):
        raise CompareError(f"{path}: that run failed ({data['failed']}): nothing to compare")
    raw = summary.get("samples")
    if not isinstance(raw, list) or not raw:
        raise CompareError(f"{path} has no measured samples (it needs a cold and a warm run; warplint --confirm "
                           "writes them)")
    try:
        return [Sample.from_json(s) for s in raw]
    except TypeError as e:
        raise CompareError(f"{path}: a sample is malformed ({e})") from None


def compare(baseline: list[Sample], candidate: list[Sample]) -> Comparison:
    same, notes = workload_difference(baseline, candidate)
    metrics = metrics_of(baseline, candidate)
    primary: str | None = primary_metric(baseline)
    if primary not in metrics:
        primary = next(iter(metrics), None) if metrics else None
    extra: list[str] = []
    identical_work = (
        same
        and baseline[0].identities == candidate[0].identities
        and baseline[0].sources == candidate[0].sources
    )
    module = metrics.get("cold_module_s")
    overlapped = bool(identical_work and module is not None and module.saving < -module.band)
    if overlapped:
        extra.append("module time rose with identical launches, identities and generated source: overlapped "
                     "builds (contention), not new work; judged by compile elapsed")
    if not same:
        verdict = WORKLOAD_CHANGED
    elif primary is None:
        verdict = INCONCLUSIVE
    else:
        verdict = metrics[primary].verdict()
    if min(len(baseline), len(candidate)) < 3:
        extra.append(f"{min(len(baseline), len(candidate))} sample(s): the band is 1 % of the median only "
                     "(--samples 3 or more gives a MAD)")
    return Comparison(verdict, primary, {k: m.to_json() for k, m in metrics.items()}, same, notes, overlapped, extra)


def render(c: Comparison, baseline_path: str, candidate_path: str) -> str:
    out = [f"warplint compare: {baseline_path} -> {candidate_path}: {c.verdict}"]
    for name, m in c.metrics.items():
        mark = " (verdict)" if name == c.primary else ""
        out.append(f"  {name:<18} {m['baseline_median']:8.3f} -> {m['candidate_median']:8.3f} s  saving "
                   f"{m['saving']:+.3f} s, band {m['band']:.3f} s: {m['verdict']}{mark}")
    out.append("  workload: " + ("same launch topology and output" if c.workload_same else "CHANGED"))
    for n in c.workload_notes + c.notes:
        out.append(f"  - {n}")
    return "\n".join(out) + "\n"


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise CompareError(message)


def main(argv: Sequence[str], out: TextIO) -> int:
    p = _Parser(prog="warplint compare", description="Compare two warplint --confirm artifacts (cold-start cost).")
    p.add_argument("baseline", help="baseline artifact (confirm.json or --confirm --format json output)")
    p.add_argument("candidate", help="candidate artifact")
    p.add_argument("--format", choices=("text", "json"), default="text")
    args = p.parse_args(list(argv))
    c = compare(load_artifact(args.baseline), load_artifact(args.candidate))
    if args.format == "json":
        json.dump(c.to_json(), out, indent=2)
        out.write("\n")
    else:
        out.write(render(c, args.baseline, args.candidate))
    return 1 if c.verdict in (REGRESSED, WORKLOAD_CHANGED) else 0


def command(argv: Sequence[str], out: TextIO, err: TextIO) -> int:
    """``warplint compare ...`` as the CLI runs it: bad input is one line and exit code 2."""
    try:
        return main(argv, out)
    except CompareError as e:
        err.write(f"warplint: error: compare: {e}\n")
        return 2

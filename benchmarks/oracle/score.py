"""Score warplint's static findings (the default rules) against the runtime truth of each program.

A truth item is found when a finding of a compatible mechanism is at one of the item's lines (the line the
user would edit: the kernel definition or creation, the option or config call, the launch sites of a
block_dim variant) or names one of them as a related location; a finding is right when it finds an item.
Options that never arrive are one family: a CS-10 finding (WC401) can find a CS-3b item and back.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections import Counter, defaultdict
from collections.abc import Iterable
from typing import Any

from .axes import AXES, MECHANISMS
from .generate import Program

OPTION_FAMILY = frozenset({"CS-3b", "CS-10"})
# labels read from the rebuilds a run made: not scored where the run without line probes built otherwise
# (truth.py's ``probe_dependent``: the collector decides which dropped kernel objects a module hash reads)
REBUILD_FAMILY = frozenset({"CS-1", "CS-3", "CS-6"})


def lint_program(program: Program, report_deliberate: bool = False) -> list[dict[str, Any]]:
    """warplint's default rules on the program's files, as plain records (path relative to the program);
    ``report_deliberate``: as with ``report-deliberate = true`` (cold starts made in tests and benchmarks too)."""
    from warplint.config import Config
    from warplint.engine import Session

    root = tempfile.mkdtemp(prefix="warplint-oracle-lint-")
    try:
        for path, text in program.files.items():
            full = os.path.join(root, path)
            os.makedirs(os.path.dirname(full), exist_ok=True)
            with open(full, "w", encoding="utf-8") as fh:
                fh.write(text)
        session = Session(Config(root=root, report_deliberate=report_deliberate), cache=False, jobs=1)
        # as `cd ROOT && warplint .` runs: each file indexed with its project (ProjectScope), not with every
        # file named; a program of loose scripts and a package beside them is one project only if the
        # engine knows it is
        result = session.lint_paths([root], project_context=True)
        out = []
        for d in result.diagnostics:
            out.append({"code": d.code, "mech": d.mechanism, "path": _rel(d.path, root), "line": d.span.line,
                        "related": [[_rel(r.path, root), r.span.line] for r in d.related],
                        "message": d.message})
        for e in result.errors:
            out.append({"code": "ERROR", "mech": "-", "path": "-", "line": 0, "related": [], "message": e})
        return out
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _rel(path: str, root: str) -> str:
    full = path if os.path.isabs(path) else os.path.abspath(path)
    for base in (root, os.path.realpath(root)):
        r = os.path.relpath(os.path.realpath(full), os.path.realpath(base))
        if not r.startswith(".."):
            return r.replace(os.sep, "/")
    return path


def compatible(finding_mech: str, truth_mech: str) -> bool:
    if finding_mech == truth_mech:
        return True
    return finding_mech in OPTION_FAMILY and truth_mech in OPTION_FAMILY


def _hits(loc: list, ranges: Iterable[list]) -> bool:
    path, line = loc[0], loc[1]
    return any(r and r[0] == path and r[1] <= line <= r[2] for r in ranges)


def matches(finding: dict[str, Any], item: dict[str, Any]) -> bool:
    if not compatible(finding["mech"], item["mech"]):
        return False
    ranges = list(item.get("lines") or ()) + list(item.get("related") or ())
    locs = [[finding["path"], finding["line"]], *list(finding.get("related") or ())]
    return any(_hits(loc, ranges) for loc in locs)


def score_program(program: Program, truth: dict[str, Any], findings: list[dict[str, Any]]) -> dict[str, Any]:
    items = truth.get("items") or []
    found = [any(matches(f, it) for f in findings) for it in items]
    right = [any(matches(f, it) for it in items) for f in findings]
    return {"items": [dict(it, found=ok) for it, ok in zip(items, found, strict=True)],
            "findings": [dict(f, right=ok) for f, ok in zip(findings, right, strict=True)]}


class Tally:
    """Recall and precision counts, per key."""

    def __init__(self) -> None:
        self.c: dict[Any, Counter] = defaultdict(Counter)

    def add(self, key: Any, field: str, n: int = 1) -> None:
        self.c[key][field] += n

    def row(self, key: Any) -> dict[str, Any]:
        c = self.c.get(key, Counter())
        t, f, n, r = c["truth"], c["found"], c["findings"], c["right"]
        return {"truth": t, "found": f, "recall": (f / t) if t else None, "findings": n, "right": r,
                "precision": (r / n) if n else None, "programs": c["programs"]}



def _count(per_mech: Tally, per_axis: Tally, per_mech_axis: Tally, mech: str, keys: list[tuple[str, str]],
           columns: tuple[str, str], hit: bool) -> None:
    """One runtime label (columns truth/found) or finding (findings/right) in the three tables."""
    total, hits = columns
    per_mech.add(mech, total)
    per_mech.add(mech, hits, int(hit))
    for k in keys:
        for table, key in ((per_axis, k), (per_mech_axis, (mech, *k))):
            table.add(key, total)
            table.add(key, hits, int(hit))

def score_all(programs: list[Program], truths: dict[str, dict[str, Any]],
              findings: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    """The whole table: per mechanism, per (axis, value), misses and false findings with their programs."""
    per_mech = Tally()
    per_axis = Tally()  # (axis, value)
    per_mech_axis = Tally()  # (mech, axis, value)
    misses: list[dict[str, Any]] = []
    false: list[dict[str, Any]] = []
    failed: list[dict[str, Any]] = []
    disagree: list[dict[str, Any]] = []
    scored = 0
    facts: Counter = Counter()  # not scored: what the runs showed about backward code and warm passes
    for p in programs:
        t = truths.get(p.digest)
        if t is None:
            continue
        if t.get("failed") or not t.get("recorder_ok"):
            failed.append({"program": p.name, "digest": p.digest, "failed": t.get("failed"),
                           "tail": t.get("output_tail"), "mechanism": p.mechanism, "variant": p.variant,
                           "axes": p.axes})
            continue
        scored += 1
        for b in ((t.get("facts") or {}).get("backward") or {}).values():
            facts["modules"] += 1
            facts["backward_built"] += int(bool(b.get("built")))
            facts["backward_used"] += int(bool(b.get("used")))
            facts["backward_built_unused"] += int(bool(b.get("built")) and not b.get("used"))
        facts["warm_runs"] += int(bool(t.get("warm_run")))
        from .truth import agreement

        ag = agreement(p, t)
        if not ag["agree"]:
            disagree.append({"program": p.name, "digest": p.digest, "mechanism": p.mechanism, "variant": p.variant,
                             "axes": p.axes, **ag})
        s = score_program(p, t, findings.get(p.digest, []))
        if t.get("probe_dependent"):
            facts["probe_dependent"] += 1
            s = {"items": [it for it in s["items"] if it["mech"] not in REBUILD_FAMILY],
                 "findings": [f for f in s["findings"] if f["mech"] not in REBUILD_FAMILY]}
        keys_axis = [(a, p.axes.get(a, "-")) for a in AXES] + [("variant", f"{p.mechanism}:{p.variant}"),
                                                               ("depth", str(p.depth))]
        for k in keys_axis:
            per_axis.add(k, "programs")
        for it in s["items"]:
            _count(per_mech, per_axis, per_mech_axis, it["mech"], keys_axis, ("truth", "found"), it["found"])
            if not it["found"]:
                misses.append({"program": p.name, "digest": p.digest, "item": it, "mechanism": p.mechanism,
                               "variant": p.variant, "axes": p.axes})
        for f in s["findings"]:
            _count(per_mech, per_axis, per_mech_axis, f["mech"], keys_axis, ("findings", "right"), f["right"])
            if not f["right"]:
                false.append({"program": p.name, "digest": p.digest, "finding": f, "mechanism": p.mechanism,
                              "variant": p.variant, "axes": p.axes})
    mechs = sorted(set(per_mech.c) | set(MECHANISMS), key=_mech_order)
    total = Tally()
    for m in per_mech.c:
        for fld, n in per_mech.c[m].items():
            total.add("all", fld, n)
    return {
        "programs": len(programs), "scored": scored, "failed": failed, "disagreements": disagree,
        "per_mechanism": {m: per_mech.row(m) for m in mechs},
        "total": total.row("all"),
        "per_axis": {f"{a}={v}": per_axis.row((a, v)) for (a, v) in sorted(per_axis.c, key=_axis_order)},
        "per_mechanism_axis": {f"{m}|{a}={v}": per_mech_axis.row((m, a, v)) for (m, a, v) in per_mech_axis.c},
        "misses": misses, "false_findings": false, "facts": dict(facts),
        "miss_classes": miss_classes(misses, per_mech_axis),
    }


def miss_classes(misses: list[dict[str, Any]], per_mech_axis: Tally) -> list[dict[str, Any]]:
    """Misses grouped by (runtime label, the program's mechanism:variant), the largest first, each with the
    axis values its programs share most."""
    coarse: dict[tuple, list[dict[str, Any]]] = defaultdict(list)
    for m in misses:
        coarse[(m["item"]["mech"], m["item"].get("kind"), f"{m['mechanism']}:{m['variant']}")].append(m)
    out = []
    for (mech, kind, variant), ms in sorted(coarse.items(), key=lambda kv: -len(kv[1])):
        axis_counts: Counter = Counter()
        for m in ms:
            for a in AXES:
                axis_counts[f"{a}={m['axes'].get(a)}"] += 1
        common = [f"{k} ({n}/{len(ms)})" for k, n in axis_counts.most_common(3)]
        out.append({"mechanism": mech, "kind": kind, "variant": variant, "misses": len(ms),
                    "programs": sorted({m["program"] for m in ms})[:8], "common_axes": common})
    return out


def _mech_order(m: str) -> tuple:
    try:
        return (0, float(m.split("-")[1].rstrip("b")) + (0.5 if m.endswith("b") else 0))
    except (IndexError, ValueError):
        return (1, 0.0)


def _axis_order(k: tuple) -> tuple:
    a, v = k
    order = [*list(AXES), "variant", "depth"]
    idx = order.index(a) if a in order else len(order)
    vals = AXES.get(a, ())
    return (idx, vals.index(v) if v in vals else len(vals), v)

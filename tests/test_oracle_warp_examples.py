"""Warp's own examples as real programs (issue 25, item 5): one small CPU example end to end.

``core.example_wave`` is planned from its own argparse options, copied out of site-packages, run cold and warm
under ``--confirm``'s recorder (private caches; the repository's ``.cache`` is not used: the script's cache
directory points into ``tmp_path``), linted, and scored. The checks compare the score with what the recorder
wrote, re-derived here from the raw events, and add findings made from the recording itself (a kernel the run
created and launched, a line it never reached) to check that the judge sees the example's own lines.
Real Warp on CPU: ~10-20 s on an idle 2-core machine.
"""

from __future__ import annotations

import collections
import importlib.util
import json
import os
import sys

import pytest

from warplint.diagnostic import Diagnostic, Span

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_spec = importlib.util.spec_from_file_location(
    "benchmarks.oracle.warp_examples", os.path.join(ROOT, "benchmarks", "oracle", "warp_examples.py")
)
assert _spec is not None and _spec.loader is not None
wx = importlib.util.module_from_spec(_spec)
sys.modules.setdefault(_spec.name, wx)  # dataclasses look their module up
_spec.loader.exec_module(wx)

EXAMPLE = "core.example_wave"


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> dict:
    base = tmp_path_factory.mktemp("oracle-warp-examples")
    mp = pytest.MonkeyPatch()
    mp.setattr(wx, "CACHE", str(base / "cache"))
    # never the user's cache: run_confirm gives each pass private caches; this one would catch a leak
    mp.setenv("WARP_CACHE_PATH", str(base / "outer-warp-cache"))
    try:
        wdir = wx.warp_dir()
        rel = EXAMPLE.replace(".", "/") + ".py"
        assert rel in wx.discover(wdir)
        plan = wx.plan_example(wdir, rel, wx.warp_test_registrations(wdir))
        assert plan.skip is None, plan.skip
        assert plan.args[:2] == ["--device", "cpu"]
        plan.args = [a if prev != "--num-frames" else "3" for prev, a in zip(["", *plan.args[:-1]], plan.args,
                                                                               strict=True)]
        entry = wx.evaluate(plan, rescore=False, rerun=True, timeout=120.0)
        files = wx.project_files(plan)
        key = wx.digest(plan, files)
        root = wx.project_dir(plan, key)
        truth = wx.load_truth(plan, key, root)
        rescored = wx.evaluate(plan, rescore=True, rerun=False, timeout=120.0)
        yield {"plan": plan, "entry": entry, "truth": truth, "root": root, "key": key, "base": base,
               "rescored": rescored}
    finally:
        mp.undo()


def test_runs_under_the_recorder_with_user_sites(recorded: dict) -> None:
    entry, truth, root = recorded["entry"], recorded["truth"], recorded["root"]
    assert entry["status"] == "ran", entry.get("reason")
    assert truth is not None and truth["failed"] is None
    assert entry["score"]["run"]["recorder_ok"], entry["score"]["run"]["recorder_errors"]
    cold = truth["passes"]["cold"]["events"]
    example = os.path.join(root, recorded["plan"].file_name)
    loads = [e for e in cold if e.get("ev") == "load" and e.get("module") == "__main__"]
    assert loads, "the example's module never loaded"
    # the reason for copying the example out of site-packages: its lines are user sites for the recorder
    assert all(e.get("site") and e["site"][0] == example for e in loads), [e.get("site") for e in loads]
    kernels = [e for e in cold if e.get("ev") == "kernel" and e.get("module") == "__main__"]
    assert kernels and all(k["define"][0] == example for k in kernels)
    # the private caches: nothing was written to the WARP_CACHE_PATH of the calling environment
    assert not (recorded["base"] / "outer-warp-cache").exists()


def test_score_matches_the_recording(recorded: dict) -> None:
    entry, truth = recorded["entry"], recorded["truth"]
    score = entry["score"]
    run = score["run"]
    cold = truth["passes"]["cold"]["events"]
    warm = truth["passes"]["warm"]["events"]
    compiled = {(e["module"], e["hash"]) for e in cold if e.get("ev") == "load" and e.get("status") == "compiled"}
    warm_compiled = [e for e in warm if e.get("ev") == "load" and e.get("status") == "compiled"]
    assert run["compiled_identities"] == len(compiled) > 0
    assert run["warm_compiled_identities"] == len(warm_compiled)
    if warm_compiled:  # the warm pass compiled again: the cache was not reused, which must show as WC902
        assert any(m["code"] == "WC902" for m in score["misses"] + score["out_of_scope"])
    assert "__main__" in run["modules"]
    # the counts are the tally of the buckets, each bucket the documented mapping of its verdict
    tally = collections.Counter(f["bucket"] for f in score["static"])
    assert {k: v for k, v in score["counts"].items() if v} == dict(tally)
    for f in score["static"]:
        assert f["bucket"] == wx.bucket(f["verdict"], f["mechanism"], f["instantiated"])
    owners = wx._module_owners(cold, recorded["root"])
    assert owners.get("__main__") == "example"
    assert all(owners[e["module"]] == "warp" for e in cold if e.get("ev") == "kernel"
               and str(e.get("module", "")).startswith("warp.") and not wx.in_project(e["define"][0], recorded["root"]))
    for m in score["misses"]:
        assert wx.in_project(m["path"], recorded["root"]) and m["code"].startswith("WC9")
        assert m["modules"] in ("example", "warp") and m["kind"] == ("defect" if m["code"] in wx.DEFECT_CODES
                                                                     else "cost")
    for m in score["out_of_scope"]:
        assert not wx.in_project(m["path"], recorded["root"])
    t = wx.totals([entry])
    assert t["ran"] == 1 and t["misses"] == len(score["misses"])
    assert t["precision"].startswith(f"{tally['tp']}/{tally['tp'] + tally['fp']} ")
    assert t["recall"].startswith(f"{tally['tp']}/{tally['tp'] + len(score['misses'])} ")


def test_findings_made_from_the_recording_are_judged_on_the_example_lines(recorded: dict) -> None:
    truth, root, plan = recorded["truth"], recorded["root"], recorded["plan"]
    cold = truth["passes"]["cold"]["events"]
    launched = {e["kernel"] for e in cold if e.get("ev") == "topology" and e.get("module") == "__main__"}
    kernel = next(e for e in cold if e.get("ev") == "kernel" and e.get("key") in launched)
    _, first, last = kernel["define"]
    with open(os.path.join(root, plan.file_name), encoding="utf-8") as fh:
        n_lines = len(fh.read().splitlines())
    touched = {int(e["site"][1]) for e in cold if e.get("site") and e["site"][0].endswith(plan.file_name)}
    touched |= {ln for e in cold if e.get("ev") == "kernel" and e.get("define")
                for ln in range(e["define"][1], e["define"][2] + 1)}
    quiet_line = next(ln for ln in range(n_lines, 0, -1) if ln not in touched)

    def diag(line: int, data: dict) -> Diagnostic:
        return Diagnostic(path=plan.file_name, span=Span(line, 0, line, 1), code="WC101",
                          name="kernel-joins-loaded-module", mechanism="CS-1", message="synthetic",
                          confidence="high", data=data)

    ran = diag(first, {"kernel": kernel["key"], "module": "__main__"})
    idle = diag(quiet_line, {})
    score = wx.score([ran, idle], truth, root)
    by_line = {f["line"]: f for f in score["static"]}
    # the kernel was created and launched by the run: its finding was exercised (one module identity, no
    # rebuild: the judge cannot confirm a CS-1 rebuild that never happened)
    assert by_line[first]["verdict"] != wx.NOT_EXERCISED, by_line[first]
    rebuilt = any(e.get("ev") == "load" and e.get("module") == "__main__" and e.get("prev_hash")
                  for e in cold)
    assert (by_line[first]["verdict"] == wx.CONFIRMED) == rebuilt, (by_line[first], last)
    # a line no Warp event came from, with line probes off: nothing says it ran
    assert by_line[quiet_line]["verdict"] == wx.NOT_EXERCISED, by_line[quiet_line]
    assert score["counts"]["not-exercised"] >= 1


def test_rescore_from_the_cache_equals_the_live_score(recorded: dict) -> None:
    assert recorded["rescored"]["status"] == "ran"
    assert recorded["rescored"]["score"] == recorded["entry"]["score"]
    path = wx.truth_path(recorded["plan"], recorded["key"])
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    assert recorded["root"] not in text and wx.PLACEHOLDER in text  # the cache does not depend on where it lives


def test_markdown_section_renders_the_written_results(recorded: dict, tmp_path) -> None:
    entry = recorded["entry"]
    skipped = {"id": "core.example_cupy", "status": "skipped", "reason": "needs cupy (not installed)",
               "warp_test": None, "notes": []}
    doc = {"format": wx.FORMAT, "command": wx.COMMAND, "date": "today", "warp_version": wx.warp_version(),
           "python": "3", "warplint": "abc", "per_pass_timeout_s": 120.0, "examples": [entry, skipped],
           "totals": wx.totals([entry, skipped])}
    path = str(tmp_path / "warp_examples.json")
    wx.write(doc, path)
    with open(path, encoding="utf-8") as fh:
        assert json.load(fh)["totals"]["ran"] == 1
    md = wx.markdown_section(path)
    assert md.startswith("## ") and f"`{EXAMPLE}`" in md and "needs cupy" in md
    assert f"precision {doc['totals']['precision']}" in md and f"recall {doc['totals']['recall']}" in md

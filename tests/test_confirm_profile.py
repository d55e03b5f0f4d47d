"""--confirm as a cold-start profiler, on real Warp (CPU): the per-identity cost table, the cost findings
(WC905-WC910), --what-if with its workload check, and `warplint compare` on real artifacts.

Each program runs once per session (fixtures below; every pass on its own private WARP_CACHE_PATH).
What cannot show on CPU (CUDA serial builds, MathDx LTOs) is tested on the events of a real CPU run,
edited to say what a CUDA run would record: each such test says which fields it edits.
"""

from __future__ import annotations

import copy
import json
import os
import subprocess

import pytest

from tests.test_confirm import PROGRAMS, PY, diag, mark  # the confirm tests' program folder and helpers
from warplint.confirm import CONFIRMED, NOT_REPRODUCED, analyze, render_summary, run_confirm
from warplint.confirm.compare import compare, load_artifact
from warplint.confirm.runner import PassResult
from warplint.confirm.whatif import (
    IMPROVED,
    INCONCLUSIVE,
    NOT_APPLICABLE,
    REGRESSED,
    WORKLOAD_CHANGED,
    Sample,
    WhatIfError,
    parse_whatif,
)


def rejudge(result, diags, cold=None):
    cold_p, warm_p = result.passes
    return analyze(diags, cold or cold_p, warm_p, cwd=PROGRAMS, command=result.command, failed=result.failed)


def edited(p: PassResult, edit) -> PassResult:
    events = copy.deepcopy(p.events)
    events = edit(events) or events
    return PassResult(p.label, p.returncode, p.wall_s, p.timed_out, p.interrupted, list(p.output_tail), events,
                      "", dict(p.sources), p.output_digest)


@pytest.fixture(scope="session")
def profiled(tmp_path_factory):
    keep = tmp_path_factory.mktemp("profile-artifacts")
    r = run_confirm([], [PY, "profile_demo.py"], cwd=PROGRAMS, timeout=300, keep_artifacts=str(keep))
    r.keep = keep
    assert r.failed is None, r.last_output
    return r


def identities(result):
    return result.summary["profile"]["identities"]


def by_code(result, code):
    return [d for d in result.runtime_findings if d.code == code]


# -- the cost table -----------------------------------------------------------------------------------


def test_every_identity_has_its_time_split_and_source_measured(profiled):
    ids = identities(profiled)
    assert sorted((i["module"], i["block_dim"]) for i in ids) == [
        ("__main__", 1), ("__main__", 4), ("frag_a", 1), ("frag_b", 1), ("frag_c", 1)]
    for i in ids:
        assert i["status"] == "compiled" and i["device"] == "cpu"
        assert i["native_ms"] > 0 and i["codegen_ms"] >= 0 and i["lto_ms"] == 0 and i["lto_built"] == 0
        parts = i["native_ms"] + i["codegen_ms"] + i["lto_ms"] + i["other_ms"]
        assert abs(parts - i["ms"]) < 0.05, i  # the parts add up to the load
        assert i["source_bytes"] > 1000 and not i["backward_used"]
    main = [i for i in ids if i["module"] == "__main__"]
    frag = [i for i in ids if i["module"].startswith("frag_")]
    assert all(i["kernels"] == ["smooth"] and i["adjoint_share"] > 0.4 and i["enable_backward"] for i in main)
    # per-kernel enable_backward=False: no kernel adjoint in the source although the module option is on
    assert all(i["adjoint_share"] < 0.1 for i in frag), frag
    assert [i["ms"] for i in ids] == sorted((i["ms"] for i in ids), reverse=True)  # ranked by seconds


def test_topology_counts_launches(profiled):
    topo = profiled.summary["profile"]["topology"]
    smooth = sorted((t["block_dim"], t["launches"]) for t in topo if t["kernel"] == "smooth")
    assert smooth == [(1, 3), (4, 1)]
    assert all(t["inputs"] == ["float32", "float32"] for t in topo if t["kernel"] == "smooth")
    assert all(t["taped"] == 0 and not t["adjoint"] for t in topo)


def test_launches_of_built_modules_keep_their_user_site(profiled):
    # the launch hook's own frame sits between wp.launch and Module.load: it must not hide the caller
    cold, _ = profiled.passes
    launches = [e for e in cold.events if e.get("ev") == "launch"]
    assert launches and all(e["site"] and e["site"][0].endswith("profile_demo.py") for e in launches), launches


def test_text_summary_is_one_screen_with_the_ranked_table(profiled):
    text = render_summary(profiled)
    lines = text.splitlines()
    assert len(lines) <= 25, text
    head = next(n for n, ln in enumerate(lines) if "where the cold start went" in ln)
    rows = lines[head + 3: head + 8]
    assert "__main__" in rows[0] and "smooth" in rows[0]
    assert any("frag_a" in r for r in rows)


def test_artifact_carries_profile_and_sample(profiled):
    with open(profiled.keep / "confirm.json", encoding="utf-8") as fh:
        js = json.load(fh)
    assert js["summary"]["profile"]["totals"]["native_ms"] > 0
    (sample,) = js["summary"]["samples"]
    assert sample["cold_compiled"] == 5 and sample["warm_compiled"] == 0
    assert sample["compile_elapsed_s"] == pytest.approx(sample["cold_wall_s"] - sample["warm_wall_s"], abs=0.002)


# -- runtime findings on CPU --------------------------------------------------------------------------


def test_block_dim_variants_point_at_the_odd_launch(profiled):
    (d,) = by_code(profiled, "WC905")
    assert (d.path, d.line) == ("profile_demo.py", mark("profile_demo.py", "bd_odd"))
    assert d.mechanism == "CS-5" and d.confirm["cost_ms"] > 0
    assert d.data["main_block_dim"] == 1 and d.data["block_dims"] == [1, 4]
    related = {(r.path, r.span.line) for r in d.related}
    assert ("profile_demo.py", mark("profile_demo.py", "bd_main")) in related


def test_fragmented_modules_found_and_main_left_out(profiled):
    (d,) = by_code(profiled, "WC910")
    assert d.data["modules"] == ["frag_a", "frag_b", "frag_c"]  # __main__ is built at two block_dims
    # at the kernel definitions to merge (the fix goes there), the other definitions and the builds related
    assert d.line == mark("profile_demo.py", "def_frag") and d.confirm["cost_ms"] > 0
    related = [(r.path, r.span.line, r.message) for r in d.related]
    assert sum("defined here" in m for _, _, m in related) == 2
    assert ("profile_demo.py", mark("profile_demo.py", "frag")) in {(p, ln) for p, ln, _ in related}
    assert 'module="frag_a"' in d.data["edit"] and "fill_b" in d.data["edit"] and d.fix is None
    # name, mechanism and confidence are the rule file's (rules/wc910_fragmented_modules_built.py)
    assert (d.name, d.mechanism, d.confidence) == ("fragmented-modules-built", "CS-4", "medium")


def test_backward_never_used_is_found(profiled):
    (d,) = by_code(profiled, "WC907")
    assert d.data["module"] == "__main__" and d.data["adjoint_bytes"] > 16 * 1024
    assert "backward code that the run never used" in d.message
    assert any("no `wp.Tape` recorded a launch" in r.message for r in d.related)  # why, at the finding
    # at the module's first kernel definition, where the option goes; the builds (launch lines) are related
    assert (d.path, d.line) == ("profile_demo.py", mark("profile_demo.py", "def_smooth"))
    assert ("profile_demo.py", mark("profile_demo.py", "bd_odd")) in {(r.path, r.span.line) for r in d.related}
    assert d.data["edit"] == 'insert before this line: wp.set_module_options({"enable_backward": False})'
    (edit,) = d.fix.edits
    assert not d.fix.is_safe and edit.span.line == d.line and edit.text.startswith("wp.set_module_options(")


def test_runtime_messages_are_one_short_sentence_with_the_why_in_a_note(profiled):
    """The WC9xx findings of a real run read as the static ones (tests/test_messages.py): one sentence within
    the budget, no cost in it (the verdict carries it, once), the numbers in a note at the finding."""
    from tests.test_messages import MAX_BUDGET

    assert {d.code for d in profiled.runtime_findings} >= {"WC905", "WC907", "WC910"}
    for d in profiled.runtime_findings:
        assert len(d.message) <= MAX_BUDGET and " ms" not in d.message and not d.message.endswith("."), d.message
        assert any((r.path, r.span.line) == (d.path, d.line) for r in d.related), (d.code, d.related)


def test_no_cuda_only_findings_on_cpu(profiled):
    assert not by_code(profiled, "WC906") and not by_code(profiled, "WC908") and not by_code(profiled, "WC909")


def test_static_findings_confirmed_and_their_runtime_twins_dropped(profiled):
    cs5 = diag("profile_demo.py", mark("profile_demo.py", "bd_odd"), "CS-5", module="profile_demo",
               block_dims=[1, 4])
    smooth = mark("profile_demo.py", "smooth")
    cs10 = diag("profile_demo.py", smooth - 1, "CS-10", end_line=smooth + 6, kernel="smooth")
    cs7 = diag("profile_demo.py", smooth - 1, "CS-7", end_line=smooth + 6, kernel="smooth")
    r = rejudge(profiled, [cs5, cs10, cs7])
    assert cs5.confirm["verdict"] == CONFIRMED and "built at 2 block_dims" in cs5.confirm["evidence"]
    assert cs10.confirm["verdict"] == CONFIRMED and "no wp.Tape recorded" in cs10.confirm["evidence"]
    assert cs7.confirm["verdict"] == NOT_REPRODUCED and "on CPU no LTO is built" in cs7.confirm["evidence"]
    assert not by_code(r, "WC905") and not by_code(r, "WC907") and by_code(r, "WC910")


# -- what a CUDA run records, from the real CPU events edited -------------------------------------------


def _on_cuda(events):
    """Edit: every load, launch and topology event on cuda:0 instead of cpu."""
    for e in events:
        if e.get("device") == "cpu":
            e["device"] = "cuda:0"


def test_serial_builds_bound_from_recorded_events(profiled):
    cold, _ = profiled.passes
    r = rejudge(profiled, [], cold=edited(cold, _on_cuda))
    (d,) = by_code(r, "WC909")
    ms = sorted(i["ms"] for i in identities(profiled))
    assert d.data["sum_ms"] == pytest.approx(sum(ms), abs=0.01)
    assert d.data["best_wall_ms"] == pytest.approx(ms[-1]) and d.data["largest_ms"] == d.data["best_wall_ms"]
    assert d.data["upper_speedup"] == pytest.approx(sum(ms) / ms[-1], abs=0.001)
    assert d.confirm["cost_ms"] == pytest.approx(sum(ms) - ms[-1], abs=0.1)
    # the preload goes after the imports and after the kernel definitions of the modules it loads
    assert (d.path, d.line) == ("profile_demo.py", mark("profile_demo.py", "defs_end"))
    assert len([r for r in d.related if "built here" in r.message]) == 5
    (edit,) = d.fix.edits
    assert edit.text.startswith('wp.force_load(device="cuda:0", modules=[wp.get_module("__main__"), ')
    assert 'wp.get_module("frag_c")], block_dim=1, max_workers=4)' in edit.text


def test_overlapping_builds_are_not_serial(profiled):
    cold, _ = profiled.passes

    def overlap(events):  # edit: on CUDA, and every build ends at the same moment (they ran at once)
        _on_cuda(events)
        loads = [e for e in events if e.get("ev") == "load"]
        end = max(e["t"] for e in loads)
        for e in loads:
            e["t"] = end

    assert not by_code(rejudge(profiled, [], cold=edited(cold, overlap)), "WC909")


def _with_ltos(events):
    """Edit: on CUDA; the first __main__ build spends most of its time building 3 LTOs; frag_a's build
    needs one of them again after a clear_lto_cache() call recorded at the `frag` line."""
    _on_cuda(events)
    loads = [e for e in events if e.get("ev") == "load"]
    main = next(e for e in loads if e["module"] == "__main__")
    frag_a = next(e for e in loads if e["module"] == "frag_a")
    main["phases"].update(native_ms=main["ms"] * 0.2, lto_ms=main["ms"] * 0.7, lto_built=3,
                          codegen_ms=main["ms"] * 0.05)
    pid = main["pid"]
    site = [os.path.join(PROGRAMS, "profile_demo.py"), mark("profile_demo.py", "frag")]
    tile_call = [os.path.join(PROGRAMS, "profile_demo.py"), mark("profile_demo.py", "smooth") + 3]
    extra = [
        {"ev": "lto", "key": f"k{n}", "symbol": f"gemm_{n}", "module": "__main__", "built": True,
         "ms": main["ms"] * 0.2, "build_ms": main["ms"] * 0.2, "pid": pid, "seq": main["seq"] - 1 - n,
         "t": main["t"] - 0.01, "call": tile_call}
        for n in range(3)
    ]
    extra.append({"ev": "clear_cache", "fn": "clear_lto_cache", "site": site, "noop": False, "pid": pid,
                  "seq": frag_a["seq"] - 2, "t": frag_a["t"] - 0.2})
    extra.append({"ev": "lto", "key": "k0", "symbol": "gemm_0", "module": "frag_a", "built": True, "ms": 1234.0,
                  "build_ms": 1200.0, "pid": pid, "seq": frag_a["seq"] - 1, "t": frag_a["t"] - 0.1})
    return sorted(events + extra, key=lambda e: (e.get("pid", 0), e.get("seq", 0)))


def test_link_dominated_build_and_lto_rebuilt_after_clear(profiled):
    cold, _ = profiled.passes
    r = rejudge(profiled, [], cold=edited(cold, _with_ltos))
    (link,) = by_code(r, "WC906")
    assert link.data["module"] == "__main__" and link.data["lto_built"] == 3 and link.confirm["cost_ms"] > 0
    # at the line whose code generation built the LTOs (the recorder's `call`), the build related
    assert link.line == mark("profile_demo.py", "smooth") + 3 and "enable_mathdx_gemm" in link.data["edit"]
    assert ("profile_demo.py", mark("profile_demo.py", "bd_main")) in {(r.path, r.span.line) for r in link.related}
    (again,) = by_code(r, "WC908")
    assert again.line == mark("profile_demo.py", "frag") and again.confirm["cost_ms"] == 1200.0
    assert again.data == {"ltos": ["k0"], "modules": ["frag_a"]}


def test_static_clear_lto_cache_finding_confirmed_with_seconds(profiled):
    cold, _ = profiled.passes
    d = diag("profile_demo.py", mark("profile_demo.py", "frag"), "CS-2", code="WC201")
    r = rejudge(profiled, [d], cold=edited(cold, _with_ltos))
    assert d.confirm["verdict"] == CONFIRMED, d.confirm  # the warm run alone would say not-reproduced
    assert d.confirm["cost_ms"] == 1200.0 and "after clear_lto_cache()" in d.confirm["evidence"]
    assert not by_code(r, "WC908")


# -- compare ------------------------------------------------------------------------------------------


def _sample(profiled) -> Sample:
    return Sample.from_json(profiled.summary["samples"][0])


def test_compare_overlapped_builds_judged_by_compile_elapsed(profiled):
    base = _sample(profiled)
    cand = copy.deepcopy(base)  # edit: the same work built at once: module time up 60 %, the wall down 2 s
    cand.cold_module_ms *= 1.6
    cand.cold_wall_s -= 2.0
    c = compare([base], [cand])
    assert c.workload_same and c.overlapped and c.verdict == IMPROVED and c.primary == "compile_elapsed_s"
    assert c.metrics["cold_module_s"]["verdict"] == REGRESSED
    cand.identities = cand.identities[1:]  # one identity fewer: new work, not contention
    assert not compare([base], [cand]).overlapped


def test_compare_noise_band():
    def s(cold: float) -> Sample:
        return Sample(cold, 1.0, cold * 900, 5.0, 1, 0, [], [], [], 0, ["x", "x"])

    base = [s(10.0), s(10.4), s(9.6)]
    c = compare(base, [s(9.9), s(10.3), s(9.5)])  # 0.1 s better, MAD 0.4 s: within the band
    assert c.verdict == INCONCLUSIVE and c.metrics["compile_elapsed_s"]["band"] == pytest.approx(0.8)
    assert compare(base, [s(8.0), s(8.1), s(7.9)]).verdict == IMPROVED


def test_compare_failed_baseline_sample_claims_no_saving():
    def s(cold: float, failed: str | None = None) -> Sample:
        return Sample(cold, 1.0, cold * 900, 5.0, 1, 0, [], [], [], 0, ["x", "x"], failed)

    # two baseline samples whose warm run failed at once: their compile elapsed is no measure of the work
    base = [s(5.0), s(9.0, "warm run exited with code 1"), s(9.0, "warm run exited with code 1")]
    c = compare(base, [s(5.0), s(5.0), s(5.0)])
    assert c.verdict == WORKLOAD_CHANGED and not c.workload_same
    assert any("baseline run failed" in n for n in c.workload_notes)


# -- --what-if, for real ----------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def whatif(tmp_path_factory):
    keep = tmp_path_factory.mktemp("whatif-artifacts")
    d = diag("whatif_demo.py", 10, "CS-10", end_line=16, kernel="smooth")
    r = run_confirm([d], [PY, "whatif_demo.py"], cwd=PROGRAMS, timeout=300, keep_artifacts=str(keep),
                    what_if=["enable_backward=False", "enable_cpu_blocks=True"], what_if_jobs=3)
    r.keep = keep
    assert r.failed is None, r.last_output
    return r


def _result(r, spec):
    return next(w for w in r.what_if if w["what_if"] == spec)


def test_whatif_backward_off_shrinks_the_source_same_workload(whatif):
    w = _result(whatif, "enable_backward=False")
    assert w["workload_same"] is True, w["workload_notes"]
    before, after = w["source_bytes"]
    assert after < before * 0.7
    assert w["samples"][0]["applied"]["config"] == {"enable_backward": "False"}
    m = w["metrics"]["compile_elapsed_s"]
    assert w["primary_metric"] == "compile_elapsed_s" and w["saving_s"] == m["saving"]
    assert m["saving"] == pytest.approx(m["baseline_median"] - m["candidate_median"], abs=0.002)
    # the baseline was measured again beside the two candidates (three at once): judged against that
    assert "against the baseline measured beside them" in w["note"]
    # one sample on a shared 2-core machine: the sign of the saving is not guaranteed, only that it was measured
    assert w["verdict"] in (IMPROVED, INCONCLUSIVE, REGRESSED)


def test_whatif_that_changes_the_workload_is_caught(whatif):
    w = _result(whatif, "enable_cpu_blocks=True")
    assert w["verdict"] == WORKLOAD_CHANGED and w["saving_s"] is None
    notes = " ".join(w["workload_notes"])
    assert "block_dim 4" in notes and "block_dim 1" in notes


def test_whatif_text_lines(whatif):
    text = render_summary(whatif)
    assert "enable_cpu_blocks=True -> no saving claimed -> workload CHANGED" in text
    assert "enable_backward=False -> " in text and "workload same" in text
    assert len(text.splitlines()) <= 25


def test_compare_cli_on_real_artifacts(whatif):
    keep = whatif.keep
    files = sorted(os.listdir(keep))
    assert {"what-if-1.json", "what-if-2.json", "what-if-baseline.json"} <= set(files)
    order = {w["what_if"]: n for n, w in enumerate(whatif.what_if, 1)}
    same = keep / f"what-if-{order['enable_backward=False']}.json"
    changed = keep / f"what-if-{order['enable_cpu_blocks=True']}.json"
    run = [PY, "-m", "warplint", "compare"]
    beside = keep / "what-if-baseline.json"  # the baseline measured at the same time as the candidates
    p = subprocess.run([*run, str(beside), str(same), "--format", "json"], capture_output=True, text=True, timeout=60)
    js = json.loads(p.stdout)
    m = js["metrics"]["compile_elapsed_s"]
    w = _result(whatif, "enable_backward=False")  # the what-if was judged against the same baseline samples
    assert m["saving"] == w["metrics"]["compile_elapsed_s"]["saving"] and m["verdict"] == w["verdict"]
    assert js["workload_same"] and js["primary_metric"] == "compile_elapsed_s", js
    assert p.returncode == (1 if js["verdict"] == REGRESSED else 0), (p.returncode, js["verdict"])
    p = subprocess.run([*run, str(keep / "confirm.json"), str(changed)], capture_output=True, text=True, timeout=60)
    assert p.returncode == 1 and "workload changed" in p.stdout and "CHANGED" in p.stdout
    p = subprocess.run([*run, str(keep / "confirm.json"), str(keep / "nope.json")], capture_output=True, text=True,
                       timeout=60)
    assert p.returncode == 2 and p.stderr.count("\n") == 1 and "cannot read" in p.stderr
    assert load_artifact(str(keep / "confirm.json"))[0].cold_compiled == 1


def test_static_cs10_finding_confirmed(whatif):
    c = whatif.diagnostics[0].confirm
    assert c["verdict"] == CONFIRMED, c
    w = _result(whatif, "enable_backward=False")
    if w["verdict"] == IMPROVED:  # then the measured saving is the finding's cost
        assert c["measured_by"] == "enable_backward=False" and c["cost_ms"] == pytest.approx(w["saving_s"] * 1000)


@pytest.fixture(scope="session")
def no_clear():
    d = diag("clear_cache.py", mark("clear_cache.py", "clear"), "CS-2", code="WC201")
    r = run_confirm([d], [PY, "clear_cache.py"], cwd=PROGRAMS, timeout=300, what_if=["no-clear-cache"])
    assert r.failed is None, r.last_output
    return r


def test_noop_clear_kernel_cache(no_clear):
    (w,) = no_clear.what_if
    assert w["workload_same"] is True, w["workload_notes"]
    (base,) = no_clear.summary["samples"]
    (cand,) = w["samples"]
    assert base["warm_compiled"] == 1 and cand["warm_compiled"] == 0  # the warm run now reuses the cache
    assert cand["applied"]["noop_clears"] == ["clear_kernel_cache"]
    assert w["primary_metric"] == "warm_wall_s"  # the baseline's warm run compiled: the warm run decides
    assert w["metrics"]["warm_module_s"]["saving"] > 0
    c = no_clear.diagnostics[0].confirm
    assert c["verdict"] == CONFIRMED
    if w["verdict"] == IMPROVED:
        assert c["measured_by"] == "no-clear-cache"


# -- parsing --------------------------------------------------------------------------------------------


def test_parse_whatif():
    assert parse_whatif("enable_backward=False").config == (("enable_backward", False),)
    assert parse_whatif("wp.config.mode=debug").config == (("mode", "debug"),)
    assert parse_whatif("module-options:pkg.mod:enable_backward=False,max_unroll=2").module_options == (
        ("pkg.mod", (("enable_backward", False), ("max_unroll", 2))),)
    assert parse_whatif("no-clear-cache").noop_clears == ("clear_kernel_cache", "clear_lto_cache")
    assert parse_whatif("parallel-preload").preload
    for bad in ("frobnicate", "=1", "module-options:x", "module-options:m:novalue"):
        with pytest.raises(WhatIfError):
            parse_whatif(bad)


def test_parallel_preload_is_cuda_only(no_clear):
    from warplint.confirm.whatif import run_candidates

    base = [Sample.from_json(s) for s in no_clear.summary["samples"]]
    (r,) = run_candidates([PY, "clear_cache.py"], base, [(parse_whatif("parallel-preload"), [])], cwd=PROGRAMS,
                          timeout=60, env=None, samples=1)
    assert r.verdict == NOT_APPLICABLE and "CUDA only" in (r.note or "")


def test_cli_rejects_bad_whatif_before_running(tmp_path):
    (tmp_path / "app.py").write_text("raise SystemExit('must not run')\n")
    base = [PY, "-m", "warplint", "app.py", "--confirm"]
    for extra, needle in ((["--what-if", "nonsense"], "is not a change"), (["--samples", "0"], "at least 1")):
        p = subprocess.run([*base, *extra, "--", PY, "app.py"], cwd=tmp_path, capture_output=True, text=True,
                           timeout=60)
        assert p.returncode == 2 and needle in p.stderr and p.stderr.count("\n") == 1, p.stderr
    p = subprocess.run([PY, "-m", "warplint", "app.py", "--what-if", "no-clear-cache"], cwd=tmp_path,
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 2 and "only work with --confirm" in p.stderr


def test_preload_mechanism_on_cpu_with_one_worker(tmp_path):
    """The harness's parallel preload, driven directly (run_candidates refuses it without CUDA): at the first
    load of a user module the recorder builds the planned (module, block_dim) variants on its pool."""
    from warplint.confirm.events import RunData
    from warplint.confirm.runner import Workspace, run_pass

    plan = [{"module": "__main__", "device": "cpu", "block_dim": 1}, {"module": "not_imported", "device": "cpu",
                                                                      "block_dim": 1}]
    ws = Workspace(None, probes="off", whatif={"preload": plan, "preload_workers": 1})
    try:
        p = run_pass(ws, "cold", [PY, "clear_cache.py"], cwd=PROGRAMS, timeout=120)
    finally:
        ws.cleanup()
    assert p.returncode == 0, p.output_tail
    rd = RunData.from_events("cold", p.events, PROGRAMS)
    (pre,) = [w for w in rd.whatifs if w.get("action") == "preload"]
    assert pre["modules"] == ["__main__"] and pre["missing"] == ["not_imported"]
    (load,) = [e for e in rd.loads if e["module"] == "__main__"]
    assert load["status"] == "compiled" and load["seq"] < pre["seq"]  # built inside the preload
    assert not rd.recorder_errors


def test_launch_shapes_that_vary_share_one_entry_after_the_cap(tmp_path):
    from warplint.confirm.events import RunData
    from warplint.confirm.runner import Workspace, run_pass

    (tmp_path / "vary.py").write_text(
        "import warp as wp\n\n@wp.kernel\ndef k(a: wp.array(dtype=float)):\n    a[wp.tid()] = 1.0\n\n"
        "a = wp.zeros(100, dtype=float, device='cpu')\nfor n in range(1, 60):\n"
        "    wp.launch(k, dim=n, inputs=[a], device='cpu')\n")
    ws = Workspace(None, probes="off")
    try:
        p = run_pass(ws, "cold", [PY, "vary.py"], cwd=str(tmp_path), timeout=120)
    finally:
        ws.cleanup()
    topo = RunData.from_events("cold", p.events, str(tmp_path)).topology()
    assert len(topo) == 33 and sum(c.launches for c in topo.values()) == 59
    assert [c.launches for s, c in topo.items() if s.dim == ("varies",)] == [59 - 32]


# -- the HTML report, in a real headless browser -------------------------------------------------------


def _browser() -> str:
    """Chromium from Debian's packages; .ci/run installs it (`apt-get install chromium`) when it is missing."""
    import shutil

    found = next((shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome") if shutil.which(n)),
                 None)
    assert found, "the report test needs Chromium: apt-get install -y chromium (.ci/run does this)"
    return found


def _in_browser(page, *args: str) -> subprocess.CompletedProcess:
    cmd = [_browser(), "--headless", "--no-sandbox", "--disable-gpu", "--window-size=1100,1400", *args,
           page.as_uri()]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=True)


def test_html_report_renders_and_shows_the_artifacts_numbers(profiled, tmp_path):
    from html.parser import HTMLParser

    from warplint.confirm.report import write_report

    artifact = json.loads(json.dumps(profiled.to_json(), default=repr))
    artifact["what_if"] = [{"what_if": "enable_backward=False", "verdict": "improved", "saving_s": 3.25,
                            "band_s": 0.4}]  # the what-if bars: one measured candidate (values given here)
    page = tmp_path / "report.html"
    write_report(str(page), artifact)
    assert "http://" not in page.read_text().replace('xmlns="http://www.w3.org/2000/svg"', "")  # offline
    dom = _in_browser(page, "--dump-dom").stdout  # the DOM after the page's load event ran

    class Values(HTMLParser):
        def __init__(self):
            super().__init__()
            self.found: list[dict] = []
            self.body: dict = {}

        def handle_starttag(self, tag, attrs):
            a = dict(attrs)
            if tag == "body":
                self.body = a
            a["tag"] = tag
            self.found.append(a)

    v = Values()
    v.feed(dom)
    rects = [a for a in v.found if a["tag"] == "rect"]
    assert rects and int(v.body["data-rendered-bars"]) == len(rects)  # laid out: every bar has a width
    ids = identities(profiled)
    builds = [a for a in v.found if a["tag"] == "g" and a.get("class") == "build"]
    assert sorted(float(b["data-ms"]) for b in builds) == sorted(i["ms"] for i in ids)
    for i in ids:  # each part of each bar is the JSON's number
        for part in ("native_ms", "codegen_ms", "other_ms"):
            if i[part]:
                assert any(r.get("data-part") == part and float(r["data-value"]) == i[part] for r in rects), (i, part)
    kpi = {a["data-key"]: a["data-value"] for a in v.found if a.get("data-key")}
    assert float(kpi["cold_wall_s"]) == profiled.summary["cold_wall_s"]
    assert float(kpi["compile_elapsed_s"]) == profiled.summary["compile_elapsed_s"]
    costs = sorted(float(a["data-value"]) for a in v.found if a.get("class") == "num" and "data-value" in a)
    want = sorted(float((d.confirm or {}).get("cost_ms") or 0.0) for d in profiled.runtime_findings)
    assert costs == want
    (bar,) = [r for r in rects if r.get("data-value") == "3.25"]
    (band,) = [r for r in rects if r.get("data-band") == "0.4"]
    assert bar and band
    assert f"{ids[0]['ms'] / 1000:.2f} s" in dom  # the seconds printed beside the bar
    shot = tmp_path / "report.png"
    _in_browser(page, f"--screenshot={shot}")
    assert shot.stat().st_size > 20_000  # a page with text and bars, not a blank one


def test_recording_launches_keeps_no_kernel_alive(tmp_path):
    """A kernel object the program drops is freed under the recorder as in a plain run: Warp's module hash
    reads the live objects of a key (an overload registered on an object still alive counts), so a recorder
    holding launched kernels would build modules the plain program does not."""
    from warplint.confirm.runner import Workspace, run_pass

    (tmp_path / "drop.py").write_text(
        "import gc, weakref\nimport warp as wp\n\n"
        "def make():\n    @wp.kernel\n    def k(a: wp.array(dtype=float)):\n        a[wp.tid()] = 1.0\n    return k\n\n"
        "a = wp.zeros(4, dtype=float, device='cpu')\n"
        "k1 = make()\nwp.launch(k1, dim=4, inputs=[a], device='cpu')\nref1 = weakref.ref(k1)\ndel k1\n"
        "k2 = make()\nwp.launch(k2, dim=4, inputs=[a], device='cpu')\ngc.collect()\n"
        "open('alive.txt', 'w').write(str(ref1() is not None))\n")
    ws = Workspace(None, probes="off")
    try:
        run_pass(ws, "cold", [PY, "drop.py"], cwd=str(tmp_path), timeout=120)
    finally:
        ws.cleanup()
    assert (tmp_path / "alive.txt").read_text() == "False"

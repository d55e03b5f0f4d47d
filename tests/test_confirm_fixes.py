"""--what-if fixes (warplint's own fixes applied in a private copy of the project, measured) and
--what-if merge-modules (several modules' kernels built as one), on real Warp (CPU).

One run of `fix_demo.py` per session (baseline cold+warm, two candidates, each on private caches). Timings on
a shared 2-core machine are noise at this size: the tests check what was applied, where, the workload check
and the generated source, not the sign of the saving.
"""

from __future__ import annotations

import os

import pytest

from tests.test_confirm import PROGRAMS, PY, mark
from warplint.confirm import run_confirm
from warplint.confirm.whatif import NOT_APPLICABLE, WORKLOAD_CHANGED, WhatIfError, auto_candidates, parse_whatif

PROGRAM = os.path.join(PROGRAMS, "fix_demo.py")


@pytest.fixture(scope="session")
def fixed(tmp_path_factory):
    with open(PROGRAM, encoding="utf-8") as fh:
        before = fh.read()
    r = run_confirm([], [PY, "fix_demo.py"], cwd=PROGRAMS, timeout=300,
                    what_if=["fixes:WC907", "merge-modules:part_a,part_b,part_c", "fixes"])
    with open(PROGRAM, encoding="utf-8") as fh:
        r.after = fh.read()
    r.before = before
    assert r.failed is None, r.last_output
    return r


def _whatif(r, spec):
    (w,) = [w for w in r.what_if if w["what_if"] == spec]
    return w


def test_fix_of_a_runtime_finding_is_measured_in_a_private_copy(fixed):
    assert fixed.after == fixed.before  # the user's file is never written
    (wc907,) = [d for d in fixed.runtime_findings if d.code == "WC907"]
    assert wc907.line == mark("fix_demo.py", "def_smooth") and wc907.fix is not None
    w = _whatif(fixed, "fixes:WC907")
    assert w["verdict"] not in (NOT_APPLICABLE, WORKLOAD_CHANGED), (w["workload_notes"], w["note"])
    assert w["workload_same"] is True  # same launches and output with the real code change
    assert f"applied in a private copy: WC907 at fix_demo.py:{wc907.line}" in w["note"]
    base_src, cand_src = w["source_bytes"]
    assert cand_src < base_src * 0.6, w["source_bytes"]  # the change reached the build: no adjoint code
    assert w["saving_s"] is not None


def test_safe_fixes_only_by_default(fixed):
    w = _whatif(fixed, "fixes")  # WC907's fix is unsafe (backward off changes what a Tape could do)
    assert w["verdict"] == NOT_APPLICABLE and "no finding carries safe fixes" in w["note"]


def test_merge_modules_builds_one_module_same_workload(fixed):
    w = _whatif(fixed, "merge-modules:part_a,part_b,part_c")
    assert w["verdict"] not in (NOT_APPLICABLE, WORKLOAD_CHANGED), (w["workload_notes"], w["note"])
    assert w["workload_same"] is True  # launches compared with part_b/part_c counted as part_a
    (sample,) = w["samples"]
    assert sorted(m["module"] for m in sample["applied"]["merge_modules"]) == ["part_b", "part_c"]
    assert sample["cold_compiled"] == 2  # __main__ and the merged part_a, instead of 4 modules


def test_auto_proposes_merging_a_fragmented_group(fixed):
    (wc910,) = [d for d in fixed.runtime_findings if d.code == "WC910"]
    got = auto_candidates(fixed.summary["profile"], {"WC910"}, False, [wc910.data["modules"]])
    specs = [w.spec for w, _ in got]
    assert "merge-modules:" + ",".join(wc910.data["modules"]) in specs


def test_parse_fixes_and_merge():
    assert parse_whatif("fixes").fixes == () and parse_whatif("fixes:wc907,WC303").fixes == ("WC907", "WC303")
    assert parse_whatif("merge-modules:a,b").renames() == {"b": "a"}
    for bad in ("fixes:", "fixes:X1", "merge-modules:a", "merge-modules:a,a"):
        with pytest.raises(WhatIfError, match="expected"):
            parse_whatif(bad)


# -- a test suite under --confirm: builds attributed to tests --------------------------------------------


def test_pytest_builds_attributed_to_tests_with_xdist(tmp_path):
    from warplint.confirm import render_summary
    from warplint.confirm.report import render_html

    suite = os.path.join(PROGRAMS, "suite")
    r = run_confirm([], [PY, "-m", "pytest", "-n", "2", "suite_kernels.py"], cwd=suite, timeout=300, warm=False)
    assert r.failed is None, r.last_output
    tests = r.summary["profile"]["tests"]
    got = {(t["test"], t["phase"]): t["modules"] for t in tests}
    assert got == {
        ("suite_kernels.py::test_double", "setup"): ["suite_fixture"],  # the fixture's launch
        ("suite_kernels.py::test_double", "call"): ["suite_call"],
        ("suite_kernels.py::test_scale[1]", "call"): ["suite_scale_1"],
        ("suite_kernels.py::test_scale[2]", "call"): ["suite_scale_2"],
    }
    assert [t["ms"] for t in tests] == sorted((t["ms"] for t in tests), reverse=True)  # ranked by seconds
    ids = {i["module"]: i for i in r.summary["profile"]["identities"]}
    assert all(ids[t["modules"][0]]["ms"] == t["ms"] for t in tests)
    cold, _ = r.passes
    controller = min((e for e in cold.events if e["ev"] == "start"), key=lambda e: e["wall"])["pid"]
    assert str(controller) not in {p for t in tests for p in t["pids"]}  # built in the xdist workers
    text = render_summary(r)
    assert "tests by build seconds" in text and "suite_kernels.py::test_double (setup): suite_fixture" in text
    page = render_html(r.to_json())
    assert page.count('class="group"') == 4 and 'data-test="suite_kernels.py::test_scale[1] (call)"' in page


def test_backward_fix_names_a_module_given_by_name():
    """A kernel placed in a module by name gets module="name" in the inserted call (Warp resolves a bare
    set_module_options() to the caller's own module, which is not that one)."""
    from types import SimpleNamespace

    from warplint.confirm.costs import CostFinding
    from warplint.confirm.edits import placement
    from warplint.confirm.profile import IdentityCost

    path = os.path.join(PROGRAMS, "gpu_tile_gemm.py")
    line = mark("gpu_tile_gemm.py", "def_gemm_a")
    ident = IdentityCost("gemm_a", "cuda:0", 64, "ab" * 16, "compiled", 1000.0, 100.0, 800.0, 3, 0, 50.0, 50.0,
                         None, None, True, ["gemm_a"], False, 0.0, 1.0, 1,
                         kernel_sites=[[path, line, "gemm_a", "gemm_a", "__main__"]])
    profile = SimpleNamespace(run=SimpleNamespace(set_options=[]), topology={})
    c = CostFinding("WC907", None, "m", "e", None, {"module": "gemm_a"}, [], [ident])
    place = placement(c, profile, PROGRAMS)  # type: ignore[arg-type]
    assert place is not None and place.site == (path, line) and place.fix is not None
    (edit,) = place.fix.edits
    assert edit.text.startswith('wp.set_module_options({"enable_backward": False}, module="gemm_a")')
    # the same kernel said to be in a module its decorator does not name: text only, no fix
    c.data["module"] = ident.module = "other"
    assert placement(c, profile, PROGRAMS).fix is None  # type: ignore[arg-type, union-attr]

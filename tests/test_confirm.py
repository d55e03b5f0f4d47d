"""--confirm against real Warp on the CPU: every verdict kind, runtime-only findings, failures, timeouts.

Each program runs cold and warm once per session (fixtures below); tests that need other diagnostics
re-judge the recorded passes with ``warplint.confirm.analyze`` instead of running Warp again.
"""

from __future__ import annotations

import json
import os
import sys
import time

import pytest

from warplint.confirm import (
    CONFIRMED,
    INCONCLUSIVE,
    NOT_EXERCISED,
    NOT_REPRODUCED,
    analyze,
    render_summary,
    run_confirm,
)
from warplint.diagnostic import Diagnostic, Span

PROGRAMS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "confirm_programs")
PY = sys.executable


def mark(relpath: str, name: str) -> int:
    with open(os.path.join(PROGRAMS, relpath), encoding="utf-8") as fh:
        for i, line in enumerate(fh, 1):
            if f"# MARK:{name}" in line:
                return i
    raise AssertionError(f"no MARK:{name} in {relpath}")


def diag(relpath: str, line: int, mech: str, end_line: int | None = None, code: str = "WC100", **data) -> Diagnostic:
    return Diagnostic(
        path=os.path.join(PROGRAMS, relpath),
        span=Span(line, 0, end_line or line, 0),
        code=code,
        name="hand-built",
        mechanism=mech,
        message="hand-built finding for the test",
        confidence="medium",
        data=data,
    )


def kernel_diag(relpath: str, name: str, mech: str = "CS-1", **data) -> Diagnostic:
    line = mark(relpath, name)
    return diag(relpath, line, mech, end_line=line + 4, **data)


def by_line(result, line):
    return next(d for d in result.diagnostics if d.line == line)


# --------------------------------------------------------------------------------------------------
# session fixtures: one cold+warm pass per program


@pytest.fixture(scope="session")
def user_cache(tmp_path_factory):
    return tmp_path_factory.mktemp("user-warp-cache")


@pytest.fixture(scope="session")
def churn(user_cache):
    diags = [
        kernel_diag("churn.py", "late", "CS-1", module="churn", kernel="late"),
        kernel_diag("churn.py", "same", "CS-1", module="churn", kernel="same"),
        kernel_diag("churn.py", "never", "CS-1", module="churn", kernel="unused"),
        diag("churn.py", mark("churn.py", "opts_late"), "CS-3", module="opts_mod", option="max_unroll"),
        diag("churn.py", mark("churn.py", "opts_same"), "CS-3", module="opts_mod", option="max_unroll"),
        diag("churn.py", mark("churn.py", "plain"), "CS-1"),  # plain Python: only a line probe sees it run
    ]
    # a user WARP_CACHE_PATH in the environment must be left alone: the runner overrides it
    env = {"WARP_CACHE_PATH": str(user_cache), "CUDA_CACHE_PATH": str(user_cache)}
    t = time.perf_counter()
    # line probes on: exercises the settrace path on Python < 3.12 (sys.monitoring on 3.12+)
    r = run_confirm(diags, [PY, "churn.py"], cwd=PROGRAMS, timeout=120, env=env, line_probes="on")
    r.elapsed = time.perf_counter() - t
    return r


@pytest.fixture(scope="session")
def trap(tmp_path_factory):
    import shutil

    shutil.rmtree(os.path.join(PROGRAMS, "import_trap", "__pycache__"), ignore_errors=True)  # left by other tools
    keep = tmp_path_factory.mktemp("artifacts")
    diags = [
        diag("import_trap/main.py", mark("import_trap/main.py", "trap"), "CS-10", option="enable_backward",
             module="trap_lib"),
        diag("import_trap/main.py", mark("import_trap/main.py", "nonexistent"), "CS-3b", option="fast_math"),
    ]
    r = run_confirm(diags, [PY, "main.py"], cwd=os.path.join(PROGRAMS, "import_trap"), timeout=120,
                    keep_artifacts=str(keep))
    r.keep = keep
    return r


@pytest.fixture(scope="session")
def cache_off():
    diags = [diag("cache_off.py", mark("cache_off.py", "cache_off"), "CS-2", option="cache_kernels")]
    return run_confirm(diags, [PY, "cache_off.py"], cwd=PROGRAMS, timeout=120)


def rejudge(result, diags, cwd=PROGRAMS):
    cold, warm = result.passes
    return analyze(diags, cold, warm, cwd=cwd, command=result.command, failed=result.failed)


# --------------------------------------------------------------------------------------------------
# churn.py: CS-1 / CS-3 confirmed, identical re-definition and unchanged options not reproduced,
# a branch the command never takes not exercised


def test_churn_run_is_healthy(churn):
    assert churn.failed is None, churn.last_output
    s = churn.summary
    assert s["recorder_ok"], s["recorder_errors"]
    assert s["warp_version"] == "1.19.0"
    assert s["warm_compiled_identities"] == 0  # the warm pass reuses the private cache
    assert s["cold"]["compiled"] >= 4
    assert s["rebuilds"] == 2  # __main__ after `late`, opts_mod after set_module_options
    assert any("churn done" in line for line in churn.last_output)


def test_kernel_defined_after_launch_is_confirmed_with_two_hashes(churn):
    d = by_line(churn, mark("churn.py", "late"))
    c = d.confirm
    assert c["verdict"] == CONFIRMED, c
    assert "module __main__ built 2 identities on cpu" in c["evidence"]
    assert "run_late.<locals>.late" in c["evidence"]
    assert c["evidence"].count(" -> ") == 1
    assert c["cost_ms"] and c["cost_ms"] > 0
    hashes = {i["hash"][:7] for m in churn.summary["modules"] if m["module"] == "__main__" for i in m["identities"]}
    assert len(hashes) == 2 and all(h in c["evidence"] for h in hashes)


def test_identical_redefinition_is_not_reproduced(churn):
    c = by_line(churn, mark("churn.py", "same")).confirm
    assert c["verdict"] == NOT_REPRODUCED, c
    assert "after module __main__ had loaded" in c["evidence"]
    assert c["cost_ms"] is None


def test_branch_never_taken_is_not_exercised(churn):
    c = by_line(churn, mark("churn.py", "never")).confirm
    assert c["verdict"] == NOT_EXERCISED, c
    assert "never ran" in c["evidence"]


def test_options_after_launch_confirmed_unchanged_options_not(churn):
    late = by_line(churn, mark("churn.py", "opts_late")).confirm
    assert late["verdict"] == CONFIRMED, late
    assert "module opts_mod built 2 identities" in late["evidence"]
    assert "set_module_options(max_unroll=4)" in late["evidence"]
    same = by_line(churn, mark("churn.py", "opts_same")).confirm
    assert same["verdict"] == NOT_REPRODUCED, same
    assert "re-set values the module already had" in same["evidence"]


def test_static_findings_explain_the_churn_so_no_runtime_duplicates(churn):
    assert [d.code for d in churn.runtime_findings if d.code == "WC901"] == []


def test_churn_without_static_findings_becomes_runtime_wc901_at_the_cause(churn):
    r = rejudge(churn, [])
    wc901 = sorted((d for d in r.runtime_findings if d.code == "WC901"), key=lambda d: d.line)
    assert [(os.path.basename(d.path), d.line, d.mechanism) for d in wc901] == [
        ("churn.py", mark("churn.py", "late"), "CS-1"),
        ("churn.py", mark("churn.py", "opts_late"), "CS-3"),
    ]
    for d in wc901:
        assert d.name == "module-rebuilt-at-runtime"
        assert d.confirm["verdict"] == CONFIRMED and d.confirm["cost_ms"] > 0
        assert d.data["module"] in ("__main__", "opts_mod")


def test_unique_factory_counts_modules_cs9(churn):
    d = kernel_diag("churn.py", "unique", "CS-9", kernel="uniq")
    r = rejudge(churn, [d])
    c = d.confirm
    assert c["verdict"] == CONFIRMED, c
    assert c["evidence"].startswith("2 separate modules built for the kernel defined here")
    # the unique module re-used for c=1.0 is not churn: only the two real rebuilds are reported
    assert sorted(d.data["module"] for d in r.runtime_findings if d.code == "WC901") == ["__main__", "opts_mod"]


def test_block_dim_on_cpu_is_not_reproduced_with_reason(churn):
    d = diag("churn.py", mark("churn.py", "launch_top"), "CS-5", module="churn", block_dims=[128, 256])
    rejudge(churn, [d])
    assert d.confirm["verdict"] == NOT_REPRODUCED
    assert "on CPU every launch uses block_dim 1" in d.confirm["evidence"]


def test_module_name_of_script_matches_main(churn):
    # static analysis calls the script's module "churn"; at run time it is "__main__"
    d = diag("churn.py", mark("churn.py", "late") + 1, "CS-1", module="churn", kernel="late")
    rejudge(churn, [d])
    assert d.confirm["verdict"] == CONFIRMED


def test_plain_python_line_that_ran_is_not_reproduced_by_line_probe(churn):
    assert churn.summary["line_probes"] == ("sys.monitoring" if sys.version_info >= (3, 12) else "settrace")
    line = mark("churn.py", "plain")
    d = by_line(churn, line)
    assert d.confirm["verdict"] == NOT_REPRODUCED, d.confirm
    assert d.confirm["evidence"].startswith(f"line {line} ran")


def test_default_probes_on_this_python(cache_off):
    assert cache_off.summary["line_probes"] == ("sys.monitoring" if sys.version_info >= (3, 12) else "events-only")


def test_user_cache_untouched(churn, user_cache):
    assert os.listdir(user_cache) == []


def test_workspace_removed(churn):
    assert not os.path.exists(churn.summary["workspace"])


def test_no_pycache_written_into_the_project(trap):
    # main.py imports trap_lib: without PYTHONPYCACHEPREFIX this would write import_trap/__pycache__
    assert not os.path.exists(os.path.join(PROGRAMS, "import_trap", "__pycache__"))


def test_summary_text_and_json(churn):
    text = render_summary(churn)
    lines = text.splitlines()
    assert lines[0].startswith("warplint --confirm: cold run ")
    assert len(lines) <= 25
    # ranked by cost: confirmed findings with a cost first
    rows = [ln for ln in lines if "churn.py:" in ln]
    assert "confirmed" in rows[0] and "not-exercised" in rows[-1]
    js = churn.to_json()
    json.dumps(js)
    assert js["summary"]["compiled_identities"] >= 4
    assert {f["confirm"]["verdict"] for f in js["findings"]} == {CONFIRMED, NOT_REPRODUCED, NOT_EXERCISED}


# --------------------------------------------------------------------------------------------------
# import_trap/: snapshot option set after the library import (confirmed), nonexistent config name


def test_import_order_trap_confirmed(trap):
    assert trap.failed is None, trap.last_output
    c = trap.diagnostics[0].confirm
    assert c["verdict"] == CONFIRMED, c
    assert "wp.config.enable_backward = False (main.py:" in c["evidence"]
    assert "never arrived" in c["evidence"]
    assert "module trap_lib" in c["evidence"] and "enable_backward=True" in c["evidence"]
    assert "trap_lib.py:" in c["evidence"]  # where the module was created (the import)


def test_nonexistent_config_name_confirmed(trap):
    c = trap.diagnostics[1].confirm
    assert c["verdict"] == CONFIRMED, c
    assert "wp.config.fast_math does not exist in Warp 1.19.0" in c["evidence"]


def test_trap_without_static_finding_is_runtime_wc903(trap):
    r = rejudge(trap, [], cwd=os.path.join(PROGRAMS, "import_trap"))
    wc903 = [d for d in r.runtime_findings if d.code == "WC903"]
    assert len(wc903) == 1
    d = wc903[0]
    assert (d.path, d.line) == ("main.py", mark("import_trap/main.py", "trap"))
    assert d.data == {"option": "enable_backward", "modules": ["trap_lib"]}
    assert "never reached module `trap_lib`" in d.message


def test_keep_artifacts(trap):
    files = sorted(os.listdir(trap.keep))
    assert files == ["confirm.json", "events-cold.jsonl", "events-warm.jsonl", "output-cold.txt", "output-warm.txt"]
    with open(trap.keep / "confirm.json", encoding="utf-8") as fh:
        js = json.load(fh)
    assert js["version"] == 1 and js["findings"][0]["confirm"]["verdict"] == CONFIRMED


# --------------------------------------------------------------------------------------------------
# cache_off.py: the warm pass still compiles


def test_cache_off_confirmed_by_warm_pass(cache_off):
    assert cache_off.failed is None, cache_off.last_output
    c = cache_off.diagnostics[0].confirm
    assert c["verdict"] == CONFIRMED, c
    assert "the warm run (same caches) still compiled 1 of 1 identities: __main__" in c["evidence"]
    assert c["cost_ms"] > 0
    assert cache_off.summary["warm_compiled_identities"] == 1


def test_cache_off_without_finding_is_runtime_wc902(cache_off):
    r = rejudge(cache_off, [])
    assert [(d.code, d.path, d.line) for d in r.runtime_findings] == [
        ("WC902", "cache_off.py", mark("cache_off.py", "cache_off"))
    ]
    assert "wp.config.cache_kernels = False" in r.runtime_findings[0].message


def test_cache_finding_not_reproduced_when_warm_pass_hits(churn):
    d = diag("churn.py", mark("churn.py", "launch_top"), "CS-2")
    rejudge(churn, [d])
    assert d.confirm["verdict"] == NOT_REPRODUCED
    assert "the warm run loaded all" in d.confirm["evidence"]


# --------------------------------------------------------------------------------------------------
# failures, timeouts, recorder problems (no Warp compile needed)


def test_failing_program():
    d = diag("fails.py", 3, "CS-1")
    r = run_confirm([d], [PY, "fails.py"], cwd=PROGRAMS, timeout=60)
    assert r.failed == "cold run exited with code 1"
    assert r.summary["warm_wall_s"] is None  # no warm pass after a failure
    assert any("RuntimeError: boom from the program" in line for line in r.last_output)
    assert "step 29" in "\n".join(r.last_output)
    assert d.confirm is not None and "the run failed" in d.confirm["evidence"]
    assert not os.path.exists(r.summary["workspace"])


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie waiting for its (dead) parent's reaper counts as gone
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def test_timeout_kills_the_process_group():
    t = time.perf_counter()
    r = run_confirm([], [PY, "sleeper.py"], cwd=PROGRAMS, timeout=3)
    assert time.perf_counter() - t < 20
    assert r.failed.startswith("cold run timed out after")
    child = [ln for ln in r.last_output if ln.startswith("child pid ")]
    assert child, r.last_output
    pid = int(child[0].split()[-1])
    for _ in range(50):
        if not _alive(pid):
            break
        time.sleep(0.1)
    assert not _alive(pid)
    assert not os.path.exists(r.summary["workspace"])


def test_recorder_not_started_is_reported_and_inconclusive():
    d = diag("churn.py", 3, "CS-1")
    r = run_confirm([d], [PY, "-S", "-c", "print('no site')"], cwd=PROGRAMS, timeout=60)
    assert r.failed is None
    assert r.summary["recorder_ok"] is False
    assert "did not start" in " ".join(r.summary["recorder_errors"])
    assert d.confirm["verdict"] == INCONCLUSIVE


def test_existing_sitecustomize_is_chained(tmp_path):
    site = tmp_path / "usersite"
    site.mkdir()
    (site / "sitecustomize.py").write_text("import os\nos.environ['WARPLINT_TEST_CHAIN'] = 'chained'\n")
    prog = ("import os, sys; print('chain=' + os.environ.get('WARPLINT_TEST_CHAIN', 'missing')); "
            "print('injected_on_path=' + str(any('warplint-confirm-' in p for p in sys.path)))")
    r = run_confirm([], [PY, "-c", prog], cwd=str(tmp_path), timeout=60, env={"PYTHONPATH": str(site)})
    assert r.failed is None, r.last_output
    assert "chain=chained" in r.last_output
    assert "injected_on_path=False" in r.last_output
    assert r.summary["recorder_ok"] is True and r.summary["warp_imported"] is False


def test_missing_command():
    with pytest.raises(ValueError, match="needs a command"):
        run_confirm([], [], cwd=PROGRAMS)
    r = run_confirm([], ["/nonexistent/warplint-test-binary"], cwd=PROGRAMS, timeout=10)
    assert r.failed.startswith("cannot run the command")


def test_runtime_findings_are_the_rule_files():
    """Each runtime finding is named by its rule's code, and the rule (rules/wc9xx_*.py) gives its name, mechanism
    and confidence: every code the judge and the cost profile make is a runtime rule, and every runtime rule is made."""
    import inspect
    import re

    from warplint.confirm import costs, judge, runtime_rules
    from warplint.registry import all_rules

    made = set(re.findall(r'"(WC9\d\d)"', inspect.getsource(judge) + inspect.getsource(costs)))
    assert made == set(runtime_rules()) == {code for code, rule in all_rules().items() if rule.runtime_only}

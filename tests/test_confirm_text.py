"""``--confirm``'s text summary says each measured cost once and explains its numbers (issue 30 item 10):
a rebuild that three findings explain is not printed as three costs a reader would sum; a compile
elapsed that the warm run's own builds distort says so; counts agree with their nouns. Real Warp
compiles on CPU, each run with its own caches (``run_confirm`` isolates them)."""

from __future__ import annotations

import pytest
from test_confirm import PROGRAMS, PY, diag, kernel_diag, mark

from warplint.confirm import CONFIRMED, render_summary, run_confirm


@pytest.fixture(scope="module")
def shared(tmp_path_factory):
    user = tmp_path_factory.mktemp("user-cache")
    diags = [
        kernel_diag("shared_rebuild.py", "late", "CS-1", module="shared_rebuild", kernel="late"),
        diag("shared_rebuild.py", mark("shared_rebuild.py", "make"), "CS-1", module="shared_rebuild", kernel="late"),
        diag("shared_rebuild.py", mark("shared_rebuild.py", "launch"), "CS-1", module="shared_rebuild",
             kernel="late"),
    ]
    return run_confirm(diags, [PY, "shared_rebuild.py"], cwd=PROGRAMS, timeout=120,
                       env={"WARP_CACHE_PATH": str(user)})


def test_a_rebuild_explained_by_three_findings_is_one_cost(shared):
    verdicts = [d.confirm for d in shared.diagnostics]
    assert [v["verdict"] for v in verdicts] == [CONFIRMED] * 3, verdicts
    costs = {v["cost_ms"] for v in verdicts}
    assert len(costs) == 1 and next(iter(costs)) > 0  # the same rebuild each time
    assert all(v["cost_shared_by"] == 3 and "shared by the 3 findings" in v["evidence"] for v in verdicts)
    rows = [line for line in render_summary(shared).splitlines() if "shared_rebuild.py:" in line]
    assert len(rows) == 3
    shown = [row.split()[0] + (" " + row.split()[1] if row.split()[1] == "ms" else "") for row in rows]
    assert shown.count("shared") == 2 and sum(s.endswith(" ms") for s in shown) == 1, rows


@pytest.fixture(scope="module")
def every_run(tmp_path_factory):
    user = tmp_path_factory.mktemp("user-cache")
    diags = [kernel_diag("new_every_run.py", "stamp", "CS-1", module="new_every_run", kernel="stamp")]
    return run_confirm(diags, [PY, "new_every_run.py"], cwd=PROGRAMS, timeout=120,
                       env={"WARP_CACHE_PATH": str(user)})


def test_counts_take_their_noun_in_the_singular(every_run):
    head = render_summary(every_run).splitlines()[0]
    assert every_run.summary["compiled_identities"] == 1
    assert "1 identity compiled" in head and "1 identities" not in head, head


def test_compile_elapsed_says_when_the_warm_run_compiled_too(every_run):
    assert every_run.summary["warm_compiled_identities"] == 1  # the program means something
    text = render_summary(every_run)
    lines = text.splitlines()
    at = next(i for i, line in enumerate(lines) if "compile elapsed" in line)
    assert "the warm run compiled 1 too" in lines[at + 1], text

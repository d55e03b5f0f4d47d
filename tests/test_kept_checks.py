"""A file's rule checks kept across edits (issue 28 item 1: "re-run rules only where their inputs changed").

In a session that keeps its facts across edits (the language server's, the daemon's), each file's checks are a
fact of that file with what they read (``Session._own_reports``, ``Layer.kept``), and a project rule's findings
that start from one file are kept the same way (``Project.of_file``). A fact of the whole project that a check
asks with narrow arguments (``layer.asked_by_key``: the option changes a file's calls make through project
functions, the kernels of a module) is read as a question whose answer a later layer compares: an edit that leaves
the answer as it was keeps the checks, one that changes it makes them run again.

Each test edits files of a small project in one session, checking one file after each edit as the language server
does, and compares the findings with a fresh session's and whether the checks were taken over.
"""

from __future__ import annotations

import os
import textwrap

from warplint.config import Config
from warplint.engine import Session
from warplint.testing import write_tree

FILES = {
    "pkg/__init__.py": "",
    "pkg/kernels.py": textwrap.dedent(
        """\
        import warp as wp


        @wp.kernel
        def advance(a: wp.array(dtype=float)):
            i = wp.tid()
            a[i] = a[i] + 1.0
        """
    ),
    # changes pkg.kernels' options when called: the run below calls it between two launches
    "pkg/tuning.py": textwrap.dedent(
        """\
        import warp as wp


        def tune():
            wp.set_module_options({"max_unroll": 4}, module="pkg.kernels")
        """
    ),
    "pkg/run.py": textwrap.dedent(
        """\
        import warp as wp

        from pkg import kernels
        from pkg.tuning import tune


        def run(a):
            wp.launch(kernels.advance, dim=1, inputs=[a])
            tune()
            wp.launch(kernels.advance, dim=1, inputs=[a])
        """
    ),
    "pkg/other.py": "import warp as wp\n\nCOUNT = 1\n",
}

RUN = "pkg/run.py"
TUNE_OFF = ('wp.set_module_options({"max_unroll": 4}, module="pkg.kernels")', "pass")


def _findings(diagnostics) -> list[tuple]:
    return sorted((d.code, d.span.line, d.message) for d in diagnostics)


def _checks_taken_over(session: Session) -> int:
    """How many files' checks the session's layers took over so far."""
    kept = session.project().layer.bindings.unrecorded.kept_facts
    return sum(n for family, n in kept.taken_over_of.items() if family.startswith("checks "))


def _fresh(root: str) -> list[tuple]:
    return _findings(Session(Config(root=root), cache=False, jobs=1).lint_paths([os.path.join(root, RUN)],
                                                                         project_context=True).diagnostics)


def test_a_files_checks_are_kept_across_an_edit_that_leaves_what_they_asked_as_it_was(tmp_path):
    root = write_tree(str(tmp_path / "tree"), {**FILES, "pyproject.toml": "[tool.warplint]\n"})
    session = Session(Config(root=root), cache=False, jobs=1)
    run = os.path.join(root, RUN)
    first = _findings(session.check_text(run, FILES[RUN]))
    assert [code for code, _, _ in first] == ["WC102"]  # the options change through tune(), after the launch
    assert first == _fresh(root)

    # another file edited: the answer of every whole-project fact run.py's checks asked is what it was
    session.check_text(os.path.join(root, "pkg/other.py"), FILES["pkg/other.py"].replace("COUNT = 1", "COUNT = 2"))
    taken = _checks_taken_over(session)
    assert _findings(session.check_text(run, FILES[RUN])) == first
    assert _checks_taken_over(session) == taken + 1

    # tune() changes no option now: run.py's text is the same, but the option changes its calls make through
    # project functions are not, so its checks run again, and the finding goes
    edited = FILES["pkg/tuning.py"].replace(*TUNE_OFF)
    session.check_text(os.path.join(root, "pkg/tuning.py"), edited)
    with open(os.path.join(root, "pkg/tuning.py"), "w", encoding="utf-8") as fh:
        fh.write(edited)
    taken = _checks_taken_over(session)
    after = _findings(session.check_text(run, FILES[RUN]))
    assert _checks_taken_over(session) == taken
    assert after == _fresh(root) == []

    # and back: the finding returns
    session.check_text(os.path.join(root, "pkg/tuning.py"), FILES["pkg/tuning.py"])
    with open(os.path.join(root, "pkg/tuning.py"), "w", encoding="utf-8") as fh:
        fh.write(FILES["pkg/tuning.py"])
    assert _findings(session.check_text(run, FILES[RUN])) == first == _fresh(root)


CACHE_FILES = {
    "pkg/__init__.py": "",
    "pkg/helpers.py": "import warp as wp\n\n\ndef set_cache(path):\n    wp.config.kernel_cache_dir = path\n",
    # the assignment in helpers.py is made from here, with a new temporary directory (WC203 here)
    "pkg/app.py": ("import tempfile\n\nimport warp as wp\n\nfrom pkg.helpers import set_cache\n\n"
                   "set_cache(tempfile.mkdtemp())\n"),
    "pkg/other.py": "import warp as wp\n\nCOUNT = 1\n",
}


def test_a_files_checks_run_again_when_only_a_fact_they_asked_by_key_changed(tmp_path):
    """app.py's checks read helpers.py only through the project's config assignments made from app.py (a table
    over every file, asked by key): kept across an edit elsewhere, run again when the answer changes."""
    root = write_tree(str(tmp_path / "tree"), {**CACHE_FILES, "pyproject.toml": "[tool.warplint]\n"})
    session = Session(Config(root=root), cache=False, jobs=1)
    app = os.path.join(root, "pkg/app.py")
    first = _findings(session.check_text(app, CACHE_FILES["pkg/app.py"]))
    assert [code for code, _, _ in first] == ["WC203"]

    session.check_text(os.path.join(root, "pkg/other.py"), "import warp as wp\n\nCOUNT = 2\n")
    taken = _checks_taken_over(session)
    assert _findings(session.check_text(app, CACHE_FILES["pkg/app.py"])) == first
    assert _checks_taken_over(session) == taken + 1

    for helpers, expected in (("import warp as wp\n\n\ndef set_cache(path):\n    pass\n", []),
                              (CACHE_FILES["pkg/helpers.py"], first)):
        session.check_text(os.path.join(root, "pkg/helpers.py"), helpers)
        with open(os.path.join(root, "pkg/helpers.py"), "w", encoding="utf-8") as fh:
            fh.write(helpers)
        found = _findings(session.check_text(app, CACHE_FILES["pkg/app.py"]))
        fresh = _findings(Session(Config(root=root), cache=False, jobs=1).lint_paths(
            [app], project_context=True).diagnostics)
        assert found == fresh == expected


def test_a_kept_fact_that_read_only_a_fact_asked_by_key_follows_its_answer(tmp_path):
    """The layer's own rule, below the checks: a kept fact whose one read of another file is a fact asked by key
    is taken over while that fact's answer is the same, and computed again in the first layer where it is not."""
    from warplint.semantic.collect import config_assignments_made

    root = write_tree(str(tmp_path / "tree"), {**CACHE_FILES, "pyproject.toml": "[tool.warplint]\n"})
    session = Session(Config(root=root), cache=False, jobs=1)
    app = os.path.join(root, "pkg/app.py")

    def made(layer) -> list[tuple[str, int]]:
        model = session.models[app]
        return [(a.name, a.span.line) for a in config_assignments_made(layer, model)]

    def asked() -> list[tuple[str, int]]:
        layer = session.project().layer
        return layer.kept("assignments made probe", session.models[app], made)

    session.check_text(app, CACHE_FILES["pkg/app.py"])
    first = asked()
    assert first == [("kernel_cache_dir", 5)]
    session.check_text(os.path.join(root, "pkg/other.py"), "import warp as wp\n\nCOUNT = 2\n")
    assert asked() is first  # taken over: the answer asked by key is the same
    session.check_text(os.path.join(root, "pkg/helpers.py"), "import warp as wp\n\n\ndef set_cache(path):\n    pass\n")
    assert asked() == []
    session.check_text(os.path.join(root, "pkg/other.py"), "import warp as wp\n\nCOUNT = 3\n")
    assert asked() == []


GENERIC_FILES = {
    "pkg/__init__.py": "",
    "pkg/kernels.py": textwrap.dedent(
        """\
        from typing import Any

        import warp as wp


        @wp.kernel
        def scale_any(x: wp.array(dtype=Any), s: Any):
            i = wp.tid()
            x[i] = x[i] * s


        @wp.kernel
        def square(x: wp.array(dtype=float)):
            i = wp.tid()
            x[i] = x[i] * x[i]
        """
    ),
    # launches the module first, when run() calls it: scale_any's first instance then rebuilds it (WC106)
    "pkg/prepare.py": textwrap.dedent(
        """\
        import warp as wp

        from pkg import kernels


        def prepare(x):
            wp.launch(kernels.square, dim=1, inputs=[x])
        """
    ),
    "pkg/run.py": textwrap.dedent(
        """\
        import warp as wp

        from pkg import kernels
        from pkg.prepare import prepare


        def run(x):
            prepare(x)
            wp.launch(kernels.scale_any, dim=1, inputs=[x, 2.0])
        """
    ),
    "pkg/other.py": "import warp as wp\n\nCOUNT = 1\n",
}


def test_a_project_rules_findings_of_a_file_follow_what_can_run_before_its_launches(tmp_path):
    """WC106's findings that start from kernels.py's generic kernel ask what can run before each of its launches
    (``launched_before``): a fact of the launch's file, kept with what it read, of the whole project only which
    scopes can launch or load the module (asked by key). Kept across an edit elsewhere; made again, the finding
    gone and back, when the launch that runs first is edited away and back."""
    root = write_tree(str(tmp_path / "tree"), {**GENERIC_FILES, "pyproject.toml": "[tool.warplint]\n"})
    session = Session(Config(root=root), cache=False, jobs=1)
    run = os.path.join(root, RUN)

    def taken_over() -> int:
        kept = session.project().layer.bindings.unrecorded.kept_facts
        return kept.taken_over_of.get("rule WC106 kernels", 0)

    def fresh() -> list[tuple]:
        return _findings(Session(Config(root=root), cache=False, jobs=1).lint_paths(
            [run], project_context=True).diagnostics)

    first = _findings(session.check_text(run, GENERIC_FILES[RUN]))
    assert [code for code, _, _ in first] == ["WC106"] and first == fresh()

    before = taken_over()
    session.check_text(os.path.join(root, "pkg/other.py"), "import warp as wp\n\nCOUNT = 2\n")
    assert _findings(session.check_text(run, GENERIC_FILES[RUN])) == first
    assert taken_over() - before == len(GENERIC_FILES) - 1  # every file's but the one edited: kernels.py's too

    prepare = os.path.join(root, "pkg/prepare.py")
    for text, expected in ((GENERIC_FILES["pkg/prepare.py"].replace(
            "wp.launch(kernels.square, dim=1, inputs=[x])", "pass"), []), (GENERIC_FILES["pkg/prepare.py"], first)):
        before = taken_over()
        session.check_text(prepare, text)
        with open(prepare, "w", encoding="utf-8") as fh:
            fh.write(text)
        assert _findings(session.check_text(run, GENERIC_FILES[RUN])) == fresh() == expected
        assert taken_over() - before == len(GENERIC_FILES) - 2  # not the edited file's, nor kernels.py's

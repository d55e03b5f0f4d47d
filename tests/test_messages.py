"""Messages as a ruff user reads them: one short sentence (what is wrong; what to do), identifiers in backticks,
the why in related notes and the rule's docs; fixable findings marked ``[*]`` after the code.

The budget is measured over every static rule's INVALID examples and fixtures (the runtime rules WC9xx are
checked on a real ``--confirm`` run in test_confirm_profile.py).
"""

import glob
import os
import re
import statistics

import pytest

from warplint.config import Config
from warplint.engine import Session
from warplint.registry import all_rules
from warplint.testing import lint_example, lint_tree

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures")
STATIC_RULES = [r for code, r in all_rules().items() if code not in ("WC000", "WC001") and not r.runtime_only]
MEDIAN_BUDGET = 100  # characters: ruff's messages are 60-90
MAX_BUDGET = 160
LOCATION = re.compile(r"\S+\.py:\d+")  # a file:line written into the text: related locations carry those
SINGLE_QUOTED_NAME = re.compile(r"'[A-Za-z_][\w.]*'")  # the other quoting style; names go in backticks


def _fixture_findings(code):
    paths = sorted(glob.glob(os.path.join(FIXTURES, f"{code}.py")) + glob.glob(os.path.join(FIXTURES, f"{code}_*"))
                   + ([os.path.join(FIXTURES, code)] if os.path.isdir(os.path.join(FIXTURES, code)) else []))
    for path in paths:
        if os.path.isdir(path):
            yield from lint_tree(path, (code,))
        else:
            session = Session(Config(root=os.path.dirname(path), select=(code,)), cache=False)
            yield from session.lint_paths([path]).diagnostics


@pytest.fixture(scope="module")
def findings():
    """Every finding of every static rule on its own INVALID examples and fixtures."""
    found = []
    for rule in STATIC_RULES:
        for example in rule.invalid:
            found += lint_example(example, rule.code)
        found += [d for d in _fixture_findings(rule.code) if d.code == rule.code]
    assert {d.code for d in found} == {r.code for r in STATIC_RULES}
    return found


def test_messages_fit_the_budget(findings):
    long = sorted({(len(d.message), d.code, d.message) for d in findings if len(d.message) > MAX_BUDGET})
    assert not long, f"over {MAX_BUDGET} characters: {long[:5]}"
    median = statistics.median(len(d.message) for d in findings)
    assert median <= MEDIAN_BUDGET, f"median message length {median} over {MEDIAN_BUDGET}"


def test_a_message_is_one_sentence_without_locations(findings):
    for d in findings:
        text = d.message
        assert "\n" not in text and not text.endswith("."), (d.code, text)
        assert not re.search(r"[.!?] [A-Z]", text), f"{d.code}: more than one sentence: {text}"
        assert not LOCATION.search(text), f"{d.code}: a location written into the message: {text}"


def test_identifiers_are_quoted_one_way(findings):
    """Names in backticks, never in single quotes; the module, kernel and option a finding is about appear in
    its message only inside backticks."""
    for d in findings:
        assert not SINGLE_QUOTED_NAME.search(d.message), f"{d.code}: {d.message}"
        outside = re.sub(r"`[^`]*`", "``", d.message)
        for key in ("module", "kernel", "option"):
            name = d.data.get(key)
            # "unique" is Warp's word for a module of its own, not a name ("its unique module")
            if isinstance(name, str) and len(name) > 2 and name != "unique" and name in d.message:
                assert not re.search(rf"(?<![\w.]){re.escape(name)}(?![\w.])", outside), (
                    f"{d.code}: {key} {name!r} outside backticks: {d.message}")


def test_what_left_the_message_is_in_a_note_or_the_rule_docs(findings):
    """A finding whose message is shorter than its explanation carries the explanation as a related note;
    a rule with no note documents its why (``warplint rule``)."""
    for d in findings:
        rule = all_rules()[d.code]
        assert d.related or "## Why" in rule.doc(), d.code
        assert all(r.message and not LOCATION.search(r.message) for r in d.related), d.code


BAD = ("import warp as wp\nwp.set_module_options({'max_unrol': 4})\nwp.force_load()\n"
       "@wp.kernel\ndef k(a: wp.array(dtype=float)):\n    a[0] = 1.0\nwp.launch(k, dim=1, inputs=[wp.zeros(1)])\n")


@pytest.mark.parametrize("output_format", ["concise", "text"])
def test_fixable_findings_are_marked_after_the_code(tmp_path, run_cli, output_format):
    """``[*]`` after the code, as ruff prints it: a safe fix always; an unsafe one (WC501's) only with
    ``--unsafe-fixes``, when ``--fix`` would apply it."""
    (tmp_path / "pyproject.toml").write_text("[tool.warplint]\n")
    (tmp_path / "app.py").write_text(BAD)
    _, out, _ = run_cli("app.py", "--format", output_format, "--color", "never")
    lines = [line for line in out.splitlines() if line.startswith("app.py:")]
    name = {"concise": "", "text": "[unknown-module-option] "}[output_format]
    assert lines[0].startswith(f"app.py:2:1: WC104 [*] {name}`max_unrol` is not a module option")
    assert lines[1].startswith("app.py:3:1: WC501 ") and "[*]" not in lines[1]
    _, out, _ = run_cli("app.py", "--format", output_format, "--color", "never", "--unsafe-fixes")
    lines = [line for line in out.splitlines() if line.startswith("app.py:")]
    assert "WC104 [*] " in lines[0] and "WC501 [*] " in lines[1]


def test_the_marker_is_not_part_of_the_message(tmp_path, run_cli):
    """JSON, SARIF and flake8 keep the message itself: fixability is their own field."""
    import json

    (tmp_path / "pyproject.toml").write_text("[tool.warplint]\n")
    (tmp_path / "app.py").write_text(BAD)
    _, out, _ = run_cli("app.py", "--format", "json")
    first = json.loads(out)[0]
    assert first["message"].startswith("`max_unrol`") and first["fix"]["applicability"] == "safe"


def test_notes_carry_the_why_in_full_output(tmp_path, run_cli):
    """What left the message is printed as a note under the finding (and is related information in the LSP)."""
    (tmp_path / "pyproject.toml").write_text("[tool.warplint]\n")
    (tmp_path / "app.py").write_text(BAD)
    _, out, _ = run_cli("app.py", "--color", "never")
    assert "  note: in `set_module_options()`: Warp accepts it silently and hashes it" in out

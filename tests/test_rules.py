"""Every rule: metadata, its own VALID/INVALID examples, and its fixture file(s).

Fixtures live in tests/fixtures/WCnnn.py (or a directory tests/fixtures/WCnnn/ for
multi-file cases; several are allowed as WCnnn_*.py / WCnnn_*/). Each offending line ends
with a comment that pins the finding: its code, its 1-based column (as the text output
prints it) and a quoted fragment of its message,

    wp.config.cache_kernels = False  # WC202:1 "cache_kernels is turned off"

(single quotes when the fragment holds a double quote; several findings on one line are
separated by commas: `# WC101:9 "is created when", WC303:5 'at block_dim 64'`). Every
other line must stay clean for that rule.
"""

import glob
import os

import pytest

from warplint.docs import rule_markdown
from warplint.registry import all_rules
from warplint.testing import ExpectationError, fixture_results, lint_example

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures")
STATIC_RULES = [r for code, r in all_rules().items() if code != "WC000" and not r.runtime_only]


def _fixtures(code):
    return sorted(glob.glob(os.path.join(FIXTURES, f"{code}.py")) + glob.glob(os.path.join(FIXTURES, f"{code}_*"))
                  + ([os.path.join(FIXTURES, code)] if os.path.isdir(os.path.join(FIXTURES, code)) else []))


@pytest.mark.parametrize("rule", STATIC_RULES, ids=lambda r: r.code)
def test_rule_has_examples_and_docs(rule):
    assert rule.invalid and rule.valid, f"{rule.code} needs VALID and INVALID examples"
    text = rule_markdown(rule)
    assert rule.code in text and rule.name in text and "## Why" in text and "## Fix" in text


@pytest.mark.parametrize("rule", STATIC_RULES, ids=lambda r: r.code)
def test_invalid_examples_are_reported(rule):
    for example in rule.invalid:
        found = lint_example(example, rule.code)
        assert found, f"{rule.code} did not report its INVALID example:\n{example}"


@pytest.mark.parametrize("rule", STATIC_RULES, ids=lambda r: r.code)
def test_valid_examples_are_clean(rule):
    for example in rule.valid:
        found = lint_example(example, rule.code)
        assert not found, f"{rule.code} reported its VALID example:\n{example}\n{found}"


@pytest.mark.parametrize("rule", STATIC_RULES, ids=lambda r: r.code)
def test_fixture(rule):
    paths = _fixtures(rule.code)
    assert paths, f"{rule.code} has no fixture in tests/fixtures/"
    bad = 0
    for path in paths:
        expected, actual = fixture_results(path, (rule.code,))
        missing = sorted(expected - actual)
        unexpected = sorted(actual - expected)
        assert not missing and not unexpected, f"{path}: missing {missing}, unexpected {unexpected}"
        bad += len(expected)
    assert bad >= 4, f"{rule.code}: fixtures need at least 4 offending cases, found {bad}"


def test_fixture_expectations_pin_column_and_message(tmp_path):
    """A finding at another column, or whose message lacks the fragment, is one missing and one unexpected
    entry; an expectation without its column and fragment is refused."""
    path = tmp_path / "WC202.py"
    line = "import warp as wp\nwp.config.cache_kernels = False  # {}\n"
    path.write_text(line.format('WC202:1 "`cache_kernels` is turned off"'))
    expected, actual = fixture_results(str(path), ("WC202",))
    assert expected == actual == {(str(path), 2, "WC202", 1, "`cache_kernels` is turned off")}
    for wrong in ('WC202:5 "`cache_kernels` is turned off"', "WC202:1 '`cache_kernels` is turned on'"):
        path.write_text(line.format(wrong))
        expected, actual = fixture_results(str(path), ("WC202",))
        assert len(expected - actual) == 1 and len(actual - expected) == 1, wrong
    for incomplete in ("WC202", "WC202:1", 'WC202 "`cache_kernels` is turned off"'):
        path.write_text(line.format(incomplete))
        with pytest.raises(ExpectationError, match="needs its column and a fragment"):
            fixture_results(str(path), ("WC202",))


def test_a_derived_kernels_options_are_reported_at_the_kernel():
    """A project decorator's keywords reach a derived kernel's options without a position in the kernel's file: a
    finding about its ``module=`` is at the kernel's ``def`` (lines 8 and 11), never at line 0."""
    example = (
        "import warp as wp\n"
        "def project_kernel(fn=None, **options):\n"
        "    def wrap(f):\n"
        "        return wp.kernel(f, **options)\n"
        "    return wrap(fn) if fn is not None else wrap\n"
        "MODULE = 'unique'\n"
        "@project_kernel(module=MODULE)\n"
        "def a(x: wp.array(dtype=float)):\n"
        "    pass\n"
        "@project_kernel(module='unique')\n"
        "def b(x: wp.array(dtype=float)):\n"
        "    pass\n"
        "@wp.kernel\n"
        "def c(x: wp.array(dtype=float)):\n"
        "    pass\n"
    )
    found = lint_example(example, "WC304")
    assert sorted(d.span.line for d in found) == [8, 11]
    assert all(r.span.line > 0 for d in found for r in d.related)

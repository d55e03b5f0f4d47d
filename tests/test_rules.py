"""Every rule: metadata, its own VALID/INVALID examples, and its fixture file(s).

Fixtures live in tests/fixtures/WCnnn.py (or a directory tests/fixtures/WCnnn/ for
multi-file cases; several are allowed as WCnnn_*.py / WCnnn_*/). Offending lines end
with `# WCnnn`; every other line must stay clean for that rule.
"""

import glob
import os

import pytest

from warplint.docs import rule_markdown
from warplint.registry import all_rules
from warplint.testing import fixture_results, lint_example

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

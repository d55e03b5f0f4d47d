"""docs/rules/ is generated from the rule classes; this keeps them in step."""

import os

from warplint.docs import generated_docs

DOCS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "docs", "rules")


def _read(path):
    with open(path, encoding="utf-8") as fh:
        return fh.read()


def test_rule_docs_are_up_to_date():
    stale = []
    for name, content in generated_docs().items():
        path = os.path.join(DOCS, name)
        if not os.path.isfile(path) or _read(path) != content:
            stale.append(name)
    assert not stale, f"docs/rules out of date for {stale}: run `python -m warplint.docs`"

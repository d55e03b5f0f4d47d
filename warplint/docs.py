"""Rule documentation rendered from the rule classes (``warplint rule``, docs/rules/*.md)."""

from __future__ import annotations

from .rule import Rule


def _example(source: str) -> str:
    return "```python\n" + source.strip("\n") + "\n```\n"


def rule_markdown(rule: Rule) -> str:
    if rule.runtime_only:
        state = "reported by `--confirm` only"
    else:
        state = "on by default" if rule.default_enabled else "opt-in (enable with `--extend-select " + rule.code + "`)"
    parts = [
        f"# {rule.code} {rule.name}\n",
        f"**Mechanism:** {rule.mechanism} · **Confidence:** {rule.confidence} · **Default:** {state}\n",
        f"{rule.summary}\n",
        rule.doc().strip() + "\n",
    ]
    if rule.invalid:
        parts.append("## Example\n")
        parts.append(_example(rule.invalid[0]))
    if rule.valid:
        parts.append("Use instead:\n")
        parts.append(_example(rule.valid[0]))
    return "\n".join(parts)

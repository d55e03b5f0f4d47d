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


def rules_index_markdown(rules) -> str:
    lines = [
        "# Rules\n",
        "Generated from `rules/` by `python -m warplint.docs`; do not edit by hand.\n",
        "| code | name | mechanism | default | confidence | summary |",
        "|---|---|---|---|---|---|",
    ]
    for r in rules:
        default = "runtime (`--confirm`)" if r.runtime_only else ("on" if r.default_enabled else "opt-in")
        lines.append(
            f"| [{r.code}]({r.code}.md) | {r.name} | {r.mechanism} | {default} | {r.confidence} | {r.summary} |"
        )
    return "\n".join(lines) + "\n"


def generated_docs() -> dict[str, str]:
    """docs/rules/<file> -> content, for every rule (and the index)."""
    from .registry import all_rules

    rules = list(all_rules().values())
    files = {f"{r.code}.md": rule_markdown(r) for r in rules}
    files["README.md"] = rules_index_markdown(rules)
    return files


def main() -> int:
    import os
    import sys

    out = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "docs", "rules")
    os.makedirs(out, exist_ok=True)
    for name, content in generated_docs().items():
        with open(os.path.join(out, name), "w", encoding="utf-8") as fh:
            fh.write(content)
    sys.stdout.write(f"wrote {len(generated_docs())} files to {out}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

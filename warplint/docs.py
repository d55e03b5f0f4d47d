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


_BOLD, _UNDERLINE, _CODE, _DIM, _RESET = "\x1b[1m", "\x1b[4m", "\x1b[36m", "\x1b[2m", "\x1b[0m"


def markdown_for_terminal(text: str) -> str:
    """A rule's Markdown as a terminal shows it: headings bold (the first underlined) without their ``#``,
    ``**strong**`` bold, ``code`` spans coloured without backticks, fenced blocks indented and dimmed
    without their fences. Tables and lists stay as written: they read well as text."""
    import re

    def inline(line: str) -> str:
        line = re.sub(r"\*\*(.+?)\*\*", lambda m: f"{_BOLD}{m.group(1)}{_RESET}", line)
        return re.sub(r"`([^`]+)`", lambda m: f"{_CODE}{m.group(1)}{_RESET}", line)

    out: list[str] = []
    fenced = False
    for line in text.splitlines():
        if line.startswith("```"):
            fenced = not fenced
            continue
        if fenced:
            out.append(f"    {_DIM}{line}{_RESET}" if line else "")
        elif heading := re.match(r"^(#{1,6})\s+(.*)$", line):
            style = _BOLD + (_UNDERLINE if len(heading.group(1)) == 1 else "")
            out.append(f"{style}{heading.group(2)}{_RESET}")
        else:
            out.append(inline(line))
    return "\n".join(out) + "\n"


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

#!/usr/bin/env python3
"""Run every rule (ALL, opt-in included) over the real-code corpora and list each finding.

    python scripts/precision.py            # fetches the corpora if needed, prints a table + every hit
    python scripts/precision.py --json out.json

The verdicts (real / harmless) in docs/precision.md come from reading each listed hit.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))

from fetch_corpora import PACKAGES, fetch  # noqa: E402 - after the sys.path insert


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--json", help="write all findings here")
    parser.add_argument("packages", nargs="*", default=list(PACKAGES))
    args = parser.parse_args()

    from warplint.config import Config
    from warplint.engine import Session

    findings: dict[str, list] = {}
    for package in args.packages:
        src = fetch(package)
        session = Session(Config(root=os.path.dirname(src), select=("ALL",)))
        result = session.lint_paths([src])
        findings[package] = [
            {"path": os.path.relpath(d.path, os.path.dirname(src)), "line": d.span.line, "code": d.code,
             "message": d.message}
            for d in result.diagnostics
        ]
    counts: collections.defaultdict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    for package, items in findings.items():
        for item in items:
            counts[item["code"]][package] += 1
    print("| rule | " + " | ".join(args.packages) + " |")
    print("|---|" + "---|" * len(args.packages))
    for code in sorted(counts):
        print(f"| {code} | " + " | ".join(str(counts[code][p]) for p in args.packages) + " |")
    print()
    for package, items in findings.items():
        for item in items:
            print(f"{package}: {item['path']}:{item['line']}: {item['code']} {item['message']}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(findings, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())

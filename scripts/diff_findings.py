"""Diff the findings of two warplint versions: every rule (``--select ALL``), as JSON, on the corpora and
the repository's own fixtures and examples. A structural change of the engine must leave this empty.

    python scripts/diff_findings.py BASE [CANDIDATE]   # git revisions; CANDIDATE defaults to the working tree
    python scripts/diff_findings.py BASE --corpus newton --corpus warp-lang

Each version is installed once with ``pip install --no-deps --target`` under .cache/diff/<rev>/ (the working
tree is installed afresh every time), then linted cold (``--no-cache``) in a subprocess. Findings are kept in
.cache/diff/<rev>/<case>.json, so a committed base is linted only once. Exit status 1 when anything differs.
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))

from fetch_corpora import CORPORA, fetched_version  # noqa: E402 - after the sys.path insert

CACHE = os.path.join(ROOT, ".cache", "diff")
DEV_CORPORA = [name for name, corpus in CORPORA.items() if corpus.split == "dev"]
WORKTREE = "worktree"


def install(rev: str) -> str:
    """The site directory holding warplint at ``rev`` (the working tree: installed afresh)."""
    site = os.path.join(CACHE, rev, "site")
    if rev != WORKTREE and os.path.isdir(os.path.join(site, "warplint")):
        return site
    shutil.rmtree(site, ignore_errors=True)
    with tempfile.TemporaryDirectory() as src:
        if rev == WORKTREE:
            files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=ROOT, check=True,
                                   capture_output=True, text=True).stdout.split("\n")
            for name in filter(None, files):
                if os.path.isfile(os.path.join(ROOT, name)):
                    os.makedirs(os.path.dirname(os.path.join(src, name)), exist_ok=True)
                    shutil.copy2(os.path.join(ROOT, name), os.path.join(src, name))
        else:
            archive = subprocess.run(["git", "archive", rev], cwd=ROOT, check=True, capture_output=True).stdout
            subprocess.run(["tar", "-x", "-C", src], input=archive, check=True)
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", site, src],
                       check=True)
    return site


def cases(corpora: list[str]) -> dict[str, tuple[str, str]]:
    """case name -> (working directory, path to lint)."""
    found = {"fixtures": (ROOT, "tests/fixtures"), "examples": (ROOT, "examples")}
    for name in corpora:
        if fetched_version(name) is None:
            subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "fetch_corpora.py"), name], check=True)
        src = os.path.join(ROOT, ".cache", "corpora", name, CORPORA[name].top)
        found[name] = (os.path.dirname(src), os.path.basename(src))
    return found


def findings(rev: str, site: str, case: str, cwd: str, path: str, jobs: int) -> str:
    out = os.path.join(CACHE, rev, f"{case}.json")
    if rev != WORKTREE and os.path.exists(out):
        with open(out, encoding="utf-8") as fh:
            return fh.read()
    env = {**os.environ, "PYTHONPATH": site}
    # -P (Python 3.11+): `-m` would put the working directory first on sys.path, and the fixtures run from the checkout,
    # whose warplint/ would shadow the version under test
    proc = subprocess.run([sys.executable, "-P", "-m", "warplint", "--select", "ALL", "--format", "json", "--no-cache",
                           "--exit-zero", "--jobs", str(jobs), path], cwd=cwd, env=env, capture_output=True,
                          text=True)
    if proc.returncode != 0:
        raise SystemExit(f"{rev} on {case}: exit {proc.returncode}\n{proc.stderr[-2000:]}")
    text = json.dumps(sorted(json.loads(proc.stdout), key=lambda d: (d["path"], d["line"], d["column"], d["code"])),
                      indent=1, sort_keys=True)
    with open(out, "w", encoding="utf-8") as fh:
        fh.write(text)
    return text


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("base")
    parser.add_argument("candidate", nargs="?", default=WORKTREE)
    parser.add_argument("--corpus", action="append", choices=sorted(CORPORA), help="default: the dev corpora")
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args(argv)
    revs = [r if r == WORKTREE else subprocess.run(["git", "rev-parse", "--short", r], cwd=ROOT, check=True,
                                                   capture_output=True, text=True).stdout.strip()
            for r in (args.base, args.candidate)]
    sites = [install(r) for r in revs]
    differing = 0
    for case, (cwd, path) in cases(args.corpus or DEV_CORPORA).items():
        texts = [findings(r, s, case, cwd, path, args.jobs) for r, s in zip(revs, sites, strict=True)]
        count = len(json.loads(texts[0]))
        if texts[0] == texts[1]:
            print(f"{case}: {count} findings, identical")
            continue
        differing += 1
        print(f"{case}: DIFFERENT ({count} vs {len(json.loads(texts[1]))} findings)")
        sys.stdout.writelines(difflib.unified_diff(texts[0].splitlines(True), texts[1].splitlines(True),
                                                   revs[0], revs[1], n=2))
    return 1 if differing else 0


if __name__ == "__main__":
    sys.exit(main())

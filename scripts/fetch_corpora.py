#!/usr/bin/env python3
"""Fetch the real-code corpora from PyPI into .cache/corpora/<pypi-name>/.

Used by the precision pass (docs/precision.md), the accuracy benchmark (benchmarks/accuracy.py)
and the speed benchmarks. Nothing fetched is committed: .cache/ is git-ignored. Prints the source
directory of each package (the top-level package inside the corpus directory).

    python scripts/fetch_corpora.py               # the three original corpora (newton, mujoco-warp, warp-lang)
    python scripts/fetch_corpora.py newton        # one
    python scripts/fetch_corpora.py --all         # all eight (the accuracy benchmark's dev, held-out and blind splits)

Versions are pinned: the labels in benchmarks/labels/ name lines of one release, so a newer
release must be fetched (and its labels re-checked) on purpose, by changing the pin here.
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from dataclasses import dataclass

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CACHE = os.path.join(ROOT, ".cache", "corpora")


@dataclass(frozen=True)
class Corpus:
    name: str  # PyPI name, also the directory under .cache/corpora/
    top: str  # the top-level package inside the distribution
    version: str  # pinned release (the latest when the labels were made)
    # "dev" (labels open), "held-out" (benchmarks/accuracy.py hides details) or "blind" (labelled by hand
    # 2026-12-01 after the held-out split had been read; scored only with --blind, and read at the end)
    split: str


CORPORA = {
    c.name: c
    for c in (
        Corpus("newton", "newton", "1.8.0", "dev"),
        Corpus("mujoco-warp", "mujoco_warp", "4.0.0", "dev"),
        Corpus("warp-lang", "warp", "1.19.0", "dev"),
        Corpus("nvidia-physicsnemo", "physicsnemo", "2.2.2", "dev"),
        Corpus("nvalchemi-toolkit-ops", "nvalchemiops", "0.5.0", "held-out"),
        Corpus("mjlab", "mjlab", "1.6.0", "held-out"),
        Corpus("warp-nn", "warp_nn", "0.4.1", "blind"),
        # a monorepo wheel: the core package sits under source/isaaclab/
        Corpus("isaaclab", "isaaclab/source/isaaclab/isaaclab", "2.3.2.post1", "blind"),
    )
}
# What a bare invocation fetches (precision.py and benchmarks/run.py were written for these three).
PACKAGES = {name: CORPORA[name].top for name in ("newton", "mujoco-warp", "warp-lang")}
PINS = {name: f"{name}=={c.version}" for name, c in CORPORA.items()}
_MARKER = ".fetched-version"  # written by this script once a corpus is unpacked completely


def fetched_version(package: str) -> str | None:
    """The version unpacked in .cache/corpora/<package>/, or None when unknown or absent."""
    target = os.path.join(CACHE, package)
    marker = os.path.join(target, _MARKER)
    if os.path.isfile(marker):
        with open(marker, encoding="utf-8") as fh:
            return fh.read().strip() or None
    # Unpacked by hand or by another tool, with the wheel's metadata kept beside it.
    for metadata in glob.glob(os.path.join(target, "*.dist-info", "METADATA")):
        with open(metadata, encoding="utf-8", errors="replace") as fh:
            for line in fh:
                if line.startswith("Version:"):
                    return line.split(":", 1)[1].strip()
                if not line.strip():
                    break
    return None


def fetch(package: str) -> str:
    """Download the pinned release (no deps) once and unpack its top-level package's .py files;
    return the package directory. A corpus of another or an unknown version is fetched again."""
    corpus = CORPORA[package]
    target = os.path.join(CACHE, package)
    src = os.path.join(target, corpus.top)
    if os.path.isdir(src) and fetched_version(package) == corpus.version:
        return src
    os.makedirs(CACHE, exist_ok=True)
    # Unpack beside the old copy and swap at the end, so an interrupted fetch never leaves half a corpus.
    staging = tempfile.mkdtemp(prefix=f".{package}-", dir=CACHE)
    try:
        download = os.path.join(staging, "download")
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "-d", download, PINS[package]],
            check=True,
        )
        fresh = os.path.join(staging, "tree")
        _unpack(download, corpus.top, fresh)
        with open(os.path.join(fresh, _MARKER), "w", encoding="utf-8") as fh:
            fh.write(corpus.version + "\n")
        if os.path.lexists(target):
            old = os.path.join(staging, "old")
            os.rename(target, old)
        os.rename(fresh, target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return src


def _unpack(download: str, top: str, dest: str) -> None:
    """Extract ``top/**.py`` from the wheel (preferred) or the sdist in ``download`` into ``dest/top``."""
    os.makedirs(dest)
    wheels = glob.glob(os.path.join(download, "*.whl"))
    if wheels:
        with zipfile.ZipFile(wheels[0]) as zf:
            members = [m for m in zf.namelist() if m.startswith(top + "/") and m.endswith(".py")]
            zf.extractall(dest, members)
        return
    sdists = glob.glob(os.path.join(download, "*.tar.gz"))
    if not sdists:
        raise SystemExit(f"no wheel or sdist downloaded into {download}")
    with tarfile.open(sdists[0]) as tf:
        # An sdist holds <name>-<version>/[src/]<top>/...: keep the part from <top>/ on.
        for member in tf.getmembers():
            parts = member.name.split("/")
            if not member.isfile() or not member.name.endswith(".py") or top not in parts[1:3]:
                continue
            rel = "/".join(parts[parts.index(top, 1):])
            if ".." in rel.split("/"):
                continue
            path = os.path.join(dest, rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            fin = tf.extractfile(member)
            if fin is None:  # not a regular file (isfile() above rules that out)
                continue
            with fin, open(path, "wb") as fout:
                shutil.copyfileobj(fin, fout)


def main(argv: list[str]) -> int:
    if argv == ["--all"]:
        argv = list(CORPORA)
    unknown = [p for p in argv if p not in CORPORA]
    if unknown:
        print(f"unknown corpus: {', '.join(unknown)} (known: {', '.join(CORPORA)})", file=sys.stderr)
        return 2
    for package in argv or list(PACKAGES):
        print(fetch(package))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

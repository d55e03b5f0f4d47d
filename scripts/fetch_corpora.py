#!/usr/bin/env python3
"""Fetch the real-code corpora (newton, mujoco-warp, warp-lang) from PyPI into .cache/corpora/.

Used by the precision pass (docs/precision.md) and the benchmark. Nothing fetched is
committed: .cache/ is git-ignored. Prints the source directory of each package.

    python scripts/fetch_corpora.py            # all three
    python scripts/fetch_corpora.py newton     # one
"""

from __future__ import annotations

import glob
import os
import subprocess
import sys
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CACHE = os.path.join(ROOT, ".cache", "corpora")
PACKAGES = {"newton": "newton", "mujoco-warp": "mujoco_warp", "warp-lang": "warp"}
PINS = {"warp-lang": "warp-lang==1.19.0"}


def fetch(package: str) -> str:
    """Download the wheel (no deps) once and unpack its top-level package; return its directory."""
    top = PACKAGES[package]
    target = os.path.join(CACHE, package)
    src = os.path.join(target, top)
    if os.path.isdir(src):
        return src
    os.makedirs(target, exist_ok=True)
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "-d", target, PINS.get(package, package)],
        check=True,
    )
    wheels = glob.glob(os.path.join(target, "*.whl"))
    if not wheels:
        raise SystemExit(f"no wheel downloaded for {package}")
    with zipfile.ZipFile(wheels[0]) as zf:
        members = [m for m in zf.namelist() if m.startswith(top + "/") and m.endswith(".py")]
        zf.extractall(target, members)
    os.remove(wheels[0])
    return src


def main(argv: list[str]) -> int:
    for package in argv or list(PACKAGES):
        print(fetch(package))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""The --confirm cold-start profiler on a GPU: the issue-13 programs, what-ifs, and compare.

    python3 scripts/gpu_profile_demo.py OUT_DIR [--cpu] [--jobs N]

Needs warp-lang 1.19 and warplint's dependencies (libcst, pathspec, pyyaml) importable; warplint itself
runs from this checkout (no install needed: a shim package in OUT_DIR/.pkg maps ``warplint.rules`` to
``rules/`` as the installed package does). Steps, each writing its text output and artifacts to OUT_DIR:

1. ``gemm``: tests/confirm_programs/gpu_tile_gemm.py (two one-kernel 16x16 f32 tile-GEMM modules,
   ``wp.clear_lto_cache()`` between them) under ``warplint --confirm`` with the what-ifs
   ``enable_backward=False``, ``enable_mathdx_gemm=False``, ``no-clear-lto-cache`` and
   ``parallel-preload``, measured at once
   (``--what-if-jobs``) beside a re-measured baseline, one sample each (a cold tile-GEMM build takes
   30-120 s on an H200: three samples would not fit the time box). CUDA only: skipped with ``--cpu``.
2. ``block_dims``: tests/confirm_programs/gpu_block_dims.py (one module at block_dims 128/256/512, three
   independent modules built serially) with ``parallel-preload`` and ``enable_backward=False``, 3 samples.
3. ``compare``: ``warplint compare`` of each step's baseline against each candidate artifact.

``--cpu`` runs step 2 and 3 on the CPU (``enable_cpu_blocks``; parallel-preload is then "not applicable").
Writes OUT_DIR/summary.txt (all text outputs) and OUT_DIR/demo.json (commands, exit codes, wall times).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROGRAMS = os.path.join(ROOT, "tests", "confirm_programs")


# Steps run outside the checkout: a working directory holding warplint/ would shadow the shim package.
def make_package(out: str) -> str:
    """OUT/.pkg/warplint: every entry of warplint/ linked, plus rules -> rules/ (package-dir in pyproject)."""
    pkg_root = os.path.join(out, ".pkg")
    pkg = os.path.join(pkg_root, "warplint")
    shutil.rmtree(pkg_root, ignore_errors=True)
    os.makedirs(pkg)
    for name in os.listdir(os.path.join(ROOT, "warplint")):
        if name != "__pycache__":
            os.symlink(os.path.join(ROOT, "warplint", name), os.path.join(pkg, name))
    os.symlink(os.path.join(ROOT, "rules"), os.path.join(pkg, "rules"))
    return pkg_root


def run_step(name: str, cmd: list[str], *, cwd: str, env: dict[str, str], out: str, log: list[dict]) -> int:
    print(f"\n== {name}: {' '.join(cmd)}", flush=True)
    t = time.perf_counter()
    p = subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    wall = time.perf_counter() - t
    with open(os.path.join(out, f"{name}.txt"), "w", encoding="utf-8") as fh:
        fh.write(p.stdout)
    print(p.stdout, flush=True)
    print(f"== {name}: exit {p.returncode} in {wall:.1f} s", flush=True)
    log.append({"step": name, "command": cmd, "cwd": cwd, "returncode": p.returncode, "wall_s": round(wall, 1)})
    return p.returncode


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--cpu", action="store_true", help="run the non-tile steps on the CPU")
    ap.add_argument("--jobs", type=int, default=5, help="runs measured at once (the candidates and the baseline)")
    ap.add_argument("--timeout", type=int, default=400, help="seconds per pass")
    ap.add_argument("--samples", type=int, default=3, help="samples per side for block_dims (gemm: always 1)")
    ap.add_argument("--steps", default="gemm,block_dims", help="which programs to run (comma-separated)")
    a = ap.parse_args()
    out = os.path.abspath(a.out)
    os.makedirs(out, exist_ok=True)
    env = dict(os.environ)
    pkg = make_package(out)
    env["PYTHONPATH"] = pkg + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env["WARPLINT_DEMO_DEVICE"] = "cpu" if a.cpu else "cuda:0"
    py = sys.executable
    log: list[dict] = []
    t0 = time.perf_counter()
    probe = ("import sys, warp, warplint.rules, libcst; print('python', sys.version.split()[0], 'warp', "
             "warp.__version__, 'rules', len(warplint.rules.__path__))")
    rc = run_step("versions", [py, "-c", probe], cwd=out, env=env, out=out, log=log)
    if rc != 0:
        print("warp-lang, libcst or warplint is not importable: see versions.txt", file=sys.stderr)
        return 2
    lint = [py, "-m", "warplint"]
    steps = []
    wanted = set(a.steps.split(","))
    if not a.cpu and "gemm" in wanted:
        # auto: backward off, MathDx GEMM off, no clear, parallel preload; and the real code changes: WC907's
        # fixes applied in a private copy, the two modules merged into one
        steps.append(("gemm", "gpu_tile_gemm.py", ["--samples", "1", "--what-if", "auto", "--what-if", "fixes:WC907",
                                                   "--what-if", "merge-modules:gemm_a,gemm_b"]))
    if "block_dims" in wanted:
        steps.append(("block_dims", "gpu_block_dims.py", ["--samples", str(a.samples), "--what-if",
                                                          "parallel-preload", "--what-if", "enable_backward=False",
                                                          "--what-if", "auto"]))
    for name, program, extra in steps:
        art = os.path.join(out, name)
        shutil.rmtree(art, ignore_errors=True)
        run_step(name, [*lint, program, "--extend-select", "WC", "--confirm", "--confirm-timeout", str(a.timeout),
                        "--keep-artifacts", art, "--what-if-jobs", str(a.jobs), "--report",
                        os.path.join(out, f"{name}.html"), *extra, "--", py, program],
                 cwd=PROGRAMS, env=env, out=out, log=log)
        base = os.path.join(art, "confirm.json")
        if os.path.exists(os.path.join(art, "what-if-baseline.json")):  # candidates measured at once: their baseline
            base = os.path.join(art, "what-if-baseline.json")
        n = 1
        while os.path.exists(os.path.join(art, f"what-if-{n}.json")):
            cand = os.path.join(art, f"what-if-{n}.json")
            run_step(f"compare-{name}-{n}", [*lint, "compare", base, cand], cwd=out, env=env, out=out, log=log)
            n += 1
    total = time.perf_counter() - t0
    with open(os.path.join(out, "demo.json"), "w", encoding="utf-8") as fh:
        json.dump({"device": env["WARPLINT_DEMO_DEVICE"], "wall_s": round(total, 1), "steps": log}, fh, indent=2)
    with open(os.path.join(out, "summary.txt"), "w", encoding="utf-8") as fh:
        for step in log:
            with open(os.path.join(out, f"{step['step']}.txt"), encoding="utf-8") as part:
                fh.write(f"== {step['step']} (exit {step['returncode']}, {step['wall_s']} s)\n{part.read()}\n")
    print(f"\n== done in {total:.0f} s; outputs in {out}", flush=True)
    # exit 2 when a confirm step could not run its program (warplint's exit 2), else 0
    return 2 if any(s["returncode"] == 2 for s in log if not s["step"].startswith("compare")) else 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Overhead of the --confirm recorder: the same cold command with and without it, side by side.

Usage:
    python benchmarks/confirm_overhead.py [--runs 5] [--launches 20000] [-- COMMAND ...]

Without a command it measures two workloads:
  * ``compile``: tests/confirm_programs/churn.py (six module builds on CPU: compile-dominated);
  * ``launch``: a loop of N launches of one small kernel (per-launch hook cost), with two lines of the
    program given to the line probes (``--probes on`` measures the settrace path of Python < 3.12).
Each run gets fresh private WARP_CACHE_PATH/CUDA_CACHE_PATH directories (cold), runs alternate
with/without, and the report gives medians and the ratio.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from warplint.confirm.runner import Workspace  # noqa: E402 - after the sys.path insert

LAUNCH_LOOP = '''
import sys
import warp as wp

@wp.kernel
def k(a: wp.array(dtype=float)):
    i = wp.tid()
    a[i] = a[i] + 1.0

def step(a):
    wp.launch(k, dim=16, inputs=[a], device="cpu")  # PROBE

a = wp.zeros(16, dtype=float, device="cpu")
n = int(sys.argv[1])
step(a)  # the first launch builds the module
import time
t = time.perf_counter()
for _ in range(n):
    step(a)
wp.synchronize()
print("loop_s", time.perf_counter() - t)
'''


def run_once(cmd: list[str], cwd: str, recorder: bool, probe: dict | None,
             probes: str = "auto") -> tuple[float, float | None]:
    ws = Workspace(probe if recorder else None, probes=probes)
    try:
        if recorder:
            env = ws.env("bench", None)
        else:
            env = dict(os.environ)
            env["WARP_CACHE_PATH"] = ws.warp_cache
            env["CUDA_CACHE_PATH"] = ws.cuda_cache
            env["PYTHONPYCACHEPREFIX"] = ws.pycache
            env.setdefault("PYTHONUNBUFFERED", "1")
        t = time.perf_counter()
        p = subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        wall = time.perf_counter() - t
        loop = None
        for ln in p.stdout.splitlines():
            if ln.startswith("loop_s "):
                loop = float(ln.split()[1])
        if p.returncode != 0:
            raise SystemExit(f"command failed ({p.returncode}): {cmd}")
        if recorder and not os.path.exists(ws.events_path("bench")):
            raise SystemExit("the recorder did not run")
        return wall, loop
    finally:
        ws.cleanup()


def measure(name: str, cmd: list[str], cwd: str, runs: int, probe: dict | None, probes: str = "auto") -> dict:
    run_once(cmd, cwd, False, None)  # warm the OS file cache / imports once, not counted
    without: list[float] = []  # wall times without / with the recorder
    with_: list[float] = []
    lw: list[float] = []  # the program's own loop times, without / with
    lr: list[float] = []
    for i in range(runs):
        order = (False, True) if i % 2 == 0 else (True, False)
        for rec in order:
            wall, loop = run_once(cmd, cwd, rec, probe, probes)
            (with_ if rec else without).append(wall)
            if loop is not None:
                (lr if rec else lw).append(loop)
    m0, m1 = statistics.median(without), statistics.median(with_)
    out = {
        "name": name,
        "without": without,
        "with": with_,
        "median_without": m0,
        "median_with": m1,
        "ratio": m1 / m0,
        "min_ratio": min(with_) / min(without),
    }
    if lw and lr:
        out["loop_ratio"] = min(lr) / min(lw)
        out["loop_min"] = (min(lw), min(lr))
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--launches", type=int, default=20000)
    ap.add_argument("--probes", default="auto", choices=("auto", "on", "off"),
                    help="line probes as run_confirm(line_probes=...): auto = sys.monitoring on 3.12+, none before")
    ap.add_argument("command", nargs="*")
    a = ap.parse_args()
    results = []
    if a.command:
        results.append(measure("command", a.command, os.getcwd(), a.runs, None, a.probes))
    else:
        progs = os.path.join(ROOT, "tests", "confirm_programs")
        results.append(measure("compile (churn.py)", [sys.executable, "churn.py"], progs, a.runs, None, a.probes))
        with tempfile.TemporaryDirectory(prefix="warplint-bench-") as d:
            path = os.path.join(d, "launch_loop.py")
            with open(path, "w", encoding="utf-8") as fh:
                fh.write(LAUNCH_LOOP)
            probe_line = next(i for i, ln in enumerate(LAUNCH_LOOP.splitlines(), 1) if "# PROBE" in ln)
            # probe a line that never runs, so the tracer stays armed on step() for the whole loop
            probe = {os.path.realpath(path): [probe_line + 100, probe_line - 1]}
            results.append(
                measure(f"launch loop ({a.launches} launches)", [sys.executable, path, str(a.launches)], d, a.runs,
                        probe, a.probes)
            )
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cpus, {a.runs} runs each (alternating), cold caches, "
          f"probes={a.probes}")
    print(f"{'workload':<34} {'without (s)':>12} {'with (s)':>10} {'ratio':>7} {'min ratio':>9}  "
          "(medians of wall time)")
    for r in results:
        print(f"{r['name']:<34} {r['median_without']:>12.3f} {r['median_with']:>10.3f} {r['ratio']:>7.3f} "
              f"{r['min_ratio']:>9.3f}")
        if "loop_ratio" in r:
            print(f"{'':<34} launch loop alone (min): {r['loop_min'][0]:.3f} s -> {r['loop_min'][1]:.3f} s, "
                  f"ratio {r['loop_ratio']:.3f}")
        print(f"{'':<34} runs without: {', '.join(f'{x:.2f}' for x in r['without'])}")
        print(f"{'':<34} runs with:    {', '.join(f'{x:.2f}' for x in r['with'])}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

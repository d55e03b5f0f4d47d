#!/usr/bin/env python3
"""warplint speed, side by side with a bare LibCST parse of the same files (issue 6).

    python benchmarks/run.py                      # warp-lang, 3 repetitions
    python benchmarks/run.py --repeat 5 --corpus warp-lang newton mujoco-warp
    python benchmarks/run.py --jobs 2 --markdown  # table ready for docs/performance.md
    python benchmarks/run.py --site before=/tmp/old-site --site after=/tmp/new-site   # two versions, interleaved

``--site LABEL=DIR`` times the warplint installed in DIR (``pip install --no-deps --target DIR
<checkout>``) instead of this checkout's; given several times, every version runs each case in
the same repetition, so the comparison is side by side. The size of each version's cache after
the cold run is printed too.

Fetches the corpora with scripts/fetch_corpora.py (into the ignored .cache/corpora/),
copies each to a temporary directory (the "touched one file" case edits the copy), and
times, each in its own subprocess with the same interpreter, one repetition of every
case after another (so a load spike on a noisy machine hits all cases alike):

- bare parse      ``libcst.parse_module`` of every .py file, serial (the target to beat);
- bare parse xN   the same over N processes (what parallelism alone buys);
- cold            ``warplint --no-cache`` (nothing read or written);
- cold+write      ``warplint`` with an empty cache dir (what the first real run costs);
- warm            ``warplint`` again, nothing changed;
- touched 1 file  one file's content changed (a comment appended), cache otherwise warm;
- edited 1 file   one file's code changed (a module-level assignment appended: its model changes);
- edited 1 file, --daemon   the same, answered by the project's daemon (warplint/daemon.py; started and indexed
                  before the first repetition, not timed);
- warm, 1 file arg  ``warplint FILE`` (pre-commit): the file is checked with its project;
- flake8, 1 file  plain flake8 (E,F,W,C90; warplint's plugin left out, see PLAIN_FLAKE8) on that file, next
                  to flake8 with each version's plugin on it:
                  warm (nothing changed since the last run) and after its code was edited, without and with
                  ``daemon = true`` (the daemon indexes the project before the first repetition, not timed);
- LSP didChange   ``warplint server`` driven by a real LSP client over stdio (benchmarks/lsp_change.py): the
                  file is opened and its project indexed (not timed), then edited three times; the median
                  wait from ``didChange`` to the ``publishDiagnostics`` of that version (debounce included)
                  is the time shown, CPU and RSS are the whole session's;
- flake8 / ruff   on the same tree, if installed (reference points).

Before each case every version's daemon is waited for (``warplint daemon status``, untimed: a daemon answers one
request at a time), so no daemon's work after its answer (cache writes, a collection) is timed in another case.

The copied tree gets a ``pyproject.toml`` whose ``[tool.warplint] cache-dir`` is where the flake8
plugin keeps its cache: before each version's flake8 cases it names that version's cache, the one
its CLI cases pass with ``--cache-dir`` (the front ends share result-cache keys). Each ``--site``'s
plugin is timed (its directory comes first on the path, and flake8 takes the first distribution of a
name it finds); without ``--site``, this checkout's plugin.
``--skip-cold`` leaves the cold cases out (one untimed run fills each cache first): on a loaded
machine they dominate the run.

Prints median, min-max, CPU seconds (user+sys of the process tree), the ratio to the
bare parse median, and peak RSS (largest single process of the tree: the main process
or one worker). No numbers are asserted anywhere.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# flake8 without warplint's plugin: flake8 runs every installed plugin whatever --select says (it filters
# what is printed), so `--select E,F,...` alone still ran warplint's plugin (the editable checkout's) in the
# plain reference; the plugin is left out where flake8 finds plugins instead.
PLAIN_FLAKE8 = r"""
import sys
from flake8.plugins import finder
from flake8.main.cli import main

found = finder._find_importlib_plugins
finder._find_importlib_plugins = lambda: (p for p in found() if p.package != "warplint")
sys.exit(main(sys.argv[1:]))
"""

BARE_PARSE = r"""
import os, sys
from concurrent.futures import ProcessPoolExecutor
import libcst

def files(root):
    for d, dirs, names in os.walk(root):
        dirs.sort()
        for n in sorted(names):
            if n.endswith(".py"):
                yield os.path.join(d, n)

def parse(path):
    with open(path, "rb") as fh:
        data = fh.read()
    try:
        libcst.parse_module(data)
    except Exception:
        pass
    return 0

jobs = int(sys.argv[2])
paths = list(files(sys.argv[1]))
if jobs == 1:
    for p in paths:
        parse(p)
else:
    paths.sort(key=os.path.getsize, reverse=True)
    with ProcessPoolExecutor(jobs) as pool:
        list(pool.map(parse, paths))
"""


def run_timed(cmd: list[str], cwd: str | None = None, env: dict[str, str] | None = None
              ) -> tuple[float, float, float, int]:
    """(wall s, cpu s, peak RSS MiB, exit code) of ``cmd`` and its descendants."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
    if proc.returncode not in (0, 1):
        raise SystemExit(f"benchmark command failed ({proc.returncode}): {' '.join(cmd)}\n{err[-2000:]}")
    cpu = usage.ru_utime + usage.ru_stime
    rss = usage.ru_maxrss / 1024  # kB on Linux
    if sys.platform == "darwin":
        rss = usage.ru_maxrss / (1024 * 1024)
    return wall, cpu, rss, proc.returncode


def run_latency(cmd: list[str], env: dict[str, str] | None = None) -> tuple[float, float, float, int]:
    """(latency s, cpu s, peak RSS MiB, exit code) of a command that measures a latency itself and prints
    ``latency: SECONDS`` last (benchmarks/lsp_change.py): the editor's wait, not the session's length."""
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True)
    _, status, usage = os.wait4(proc.pid, 0)
    out = proc.stdout.read() if proc.stdout else ""
    code = os.waitstatus_to_exitcode(status)
    lines = [line for line in out.splitlines() if line.startswith("latency: ")]
    if code != 0 or not lines:
        err = proc.stderr.read() if proc.stderr else ""
        raise SystemExit(f"benchmark command failed ({code}): {' '.join(cmd)}\n{out[-1000:]}{err[-1000:]}")
    return float(lines[-1].split()[1]), usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, code


def fetch(corpus: str) -> str:
    out = subprocess.run(
        [sys.executable, os.path.join(ROOT, "scripts", "fetch_corpora.py"), corpus],
        check=True, capture_output=True, text=True,
    )
    return out.stdout.strip().splitlines()[-1]


def python_files(root: str) -> list[str]:
    found = []
    for d, dirs, names in os.walk(root):
        dirs.sort()
        found += [os.path.join(d, n) for n in sorted(names) if n.endswith(".py")]
    return found


def pick_file_to_touch(root: str) -> str:
    """A mid-sized file that defines kernels (its importers' findings may depend on it)."""
    candidates = []
    for path in python_files(root):
        with open(path, encoding="utf-8", errors="replace") as fh:
            text = fh.read()
        if "@wp.kernel" in text:
            candidates.append((len(text), path))
    candidates.sort()
    return candidates[len(candidates) // 2][1] if candidates else python_files(root)[0]


def tool_available(module: str) -> bool:
    return subprocess.run([sys.executable, "-c", f"import {module}"], capture_output=True).returncode == 0


def summarise(label: str, rows: list[tuple[float, float, float, int]]) -> dict:
    walls = [r[0] for r in rows]
    return {
        "label": label,
        "median": statistics.median(walls),
        "min": min(walls),
        "max": max(walls),
        "cpu": statistics.median(r[1] for r in rows),
        "rss": max(r[2] for r in rows),
    }


def bench_corpus(name: str, args) -> list[dict]:
    source = fetch(name)
    work = tempfile.mkdtemp(prefix=f"warplint-bench-{name}-")
    tree = os.path.join(work, os.path.basename(source))
    shutil.copytree(source, tree)
    # Inside the tree (under .warplint_cache, which discovery never walks): a config's cache-dir outside its
    # project is refused ("no cache: ... outside the project"), so the flake8 cases, which take theirs from the
    # tree's pyproject.toml, ran with no cache at all when these lived beside the tree (~19 s per "warm" run).
    cache = os.path.join(tree, ".warplint_cache", "bench")
    jobs = args.jobs
    warplint = [sys.executable, "-m", "warplint", "--exit-zero", "--output-file", os.devnull]
    if jobs:
        warplint += ["--jobs", str(jobs)]
    n_files = len(python_files(tree))
    size = sum(os.path.getsize(p) for p in python_files(tree))
    print(f"\n{name}: {n_files} files, {size / 1e6:.1f} MB  ({tree})", flush=True)

    sites: list[tuple[str, dict[str, str] | None]] = [("", None)]
    if args.site:
        sites = []
        for spec in args.site:
            label, _, directory = spec.partition("=")
            sites.append((f"[{label}] ", {**os.environ, "PYTHONPATH": os.path.abspath(directory)}))

    touched = pick_file_to_touch(tree)

    def flake8_cache_is(directory: str) -> None:
        with open(os.path.join(tree, "pyproject.toml"), "w", encoding="utf-8") as fh:
            fh.write(f"[tool.warplint]\ncache-dir = {directory!r}\n")

    flake8_cache_is(os.path.join(tree, ".warplint_cache", "flake8"))  # (cache-dir is not in the result-cache key)

    def touch(i: int) -> None:
        with open(touched, "a", encoding="utf-8") as fh:
            fh.write(f"\n# benchmark edit {i} {time.time()}\n")

    def daemon_idle(env: dict[str, str] | None) -> None:
        """Wait until the daemon is done with its last run (it answers one request at a time, and after a run that
        built an index it puts that index out of the collector's sight first)."""
        subprocess.run([sys.executable, "-m", "warplint", "daemon", "status", tree], env=env, capture_output=True)

    def edit(i: int) -> None:
        """A change to the file's code: its model changes (a module-level binding), every span stays."""
        with open(touched, "a", encoding="utf-8") as fh:
            fh.write(f"\n_benchmark_edit_{i}_{int(time.time() * 1000)} = {i}\n")

    # --jobs, else the cores (the condition binds looser than `or`: without the parentheses
    # --jobs was ignored where sched_getaffinity is missing)
    workers = jobs or (len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1))
    # (label, prepare, command): one repetition runs every case in this order (the warm
    # cases need the cache the case before them wrote), so load spikes hit all cases alike.
    Case = tuple[str, Callable[[int], None] | None, list[str], dict[str, str] | None]
    cases: list[Case] = []
    if not args.no_bare:
        cases.append(("bare parse (serial)", None, [sys.executable, "-c", BARE_PARSE, tree, "1"], None))
    if workers > 1 and not args.no_bare and not args.cold_only:
        cases.append((f"bare parse (x{workers})", None, [sys.executable, "-c", BARE_PARSE, tree, str(workers)], None))
    caches: dict[str, str] = {}
    for label, env in sites:
        site_cache = caches[label] = f"{cache}-{len(caches)}"

        def fresh_cache(_i: int, directory: str = site_cache) -> None:
            shutil.rmtree(directory, ignore_errors=True)

        if args.cold_only:
            cases.append((f"{label}warplint cold --no-cache", None, [*warplint, "--no-cache", tree], env))
            continue
        if args.skip_cold:
            run_timed([*warplint, "--cache-dir", site_cache, tree], env=env)  # fills the cache, untimed
        else:
            cases += [
                (f"{label}warplint cold --no-cache", None, [*warplint, "--no-cache", tree], env),
                (f"{label}warplint cold, writes cache", fresh_cache, [*warplint, "--cache-dir", site_cache, tree],
                 env),
            ]
        def catch_up(_i: int, directory: str = site_cache, site_env: dict[str, str] | None = env) -> None:
            flake8_cache_is(os.path.join(tree, ".warplint_cache", "flake8"))  # (no `daemon = true` left over)
            # the cases since this version's last run (another version's, the flake8 and editor cases) edited the
            # tree: bring its cache up to date, so that "warm" is a run with nothing changed
            run_timed([*warplint, "--cache-dir", directory, tree], env=site_env)

        cases += [
            (f"{label}warplint warm", catch_up, [*warplint, "--cache-dir", site_cache, tree], env),
            (f"{label}warplint touched 1 file", touch, [*warplint, "--cache-dir", site_cache, tree], env),
            (f"{label}warplint edited 1 file", edit, [*warplint, "--cache-dir", site_cache, tree], env),
            (f"{label}warplint warm, 1 file arg", None, [*warplint, "--cache-dir", site_cache, touched], env),
        ]

        def daemon_edit(i: int, directory: str = site_cache, site_env: dict[str, str] | None = env) -> None:
            if i == 0:  # the daemon starts and indexes the project (as any first run): not timed
                edit(1000)
                run_timed([*warplint, "--daemon", "--cache-dir", directory, tree], env=site_env)
                daemon_idle(site_env)
            edit(i)

        cases.append((f"{label}warplint edited 1 file, --daemon", daemon_edit,
                      [*warplint, "--daemon", "--cache-dir", site_cache, tree], env))
    latency = set()  # cases timed by what they print (the editor's wait), not by their process
    if tool_available("pygls") and not args.cold_only:
        for label, env in sites:
            def server_cache(_i: int) -> None:
                # The server keeps no cache outside the project (a config's cache-dir elsewhere is not its to
                # write): its own goes in the tree's .warplint_cache; the first repetition fills it (the
                # indexing is not timed, only the edits).
                with open(os.path.join(tree, "pyproject.toml"), "w", encoding="utf-8") as fh:
                    fh.write("[tool.warplint]\n")

            name = f"{label}LSP didChange -> diagnostics"
            latency.add(name)
            cases.append((name, server_cache, [sys.executable, os.path.join(ROOT, "benchmarks", "lsp_change.py"), tree,
                                       touched, "--changes", "3"], env))
    if tool_available("flake8") and not args.cold_only:
        plain = [sys.executable, "-c", PLAIN_FLAKE8, "--exit-zero"]  # flake8's default selection, no warplint
        plugin = [sys.executable, "-m", "flake8", "--exit-zero"]  # flake8's default selection: WC included

        cases.append(("flake8 1 file (E,F,W,C90)", None, [*plain, touched], None))
        for label, env in sites:
            def warm_flake8(_i: int, site_env: dict[str, str] | None = env, directory: str = caches[label]) -> None:
                flake8_cache_is(directory)  # this version's cache; its CLI cases keep it up to date
                run_timed([*plugin, touched], env=site_env)  # the cache holds the file's project as it is

            def daemon_flake8(i: int, site_env: dict[str, str] | None = env, directory: str = caches[label]) -> None:
                with open(os.path.join(tree, "pyproject.toml"), "w", encoding="utf-8") as fh:
                    fh.write(f"[tool.warplint]\ncache-dir = {directory!r}\ndaemon = true\n")
                if i == 0:  # the daemon indexes the project for flake8's selection: not timed
                    edit(2000)
                    run_timed([*plugin, touched], env=site_env)
                    daemon_idle(site_env)
                edit(i)

            cases += [
                (f"{label}flake8 1 file + warplint, warm", warm_flake8, [*plugin, touched], env),
                (f"{label}flake8 1 file + warplint, edited", edit, [*plugin, touched], env),
                (f"{label}flake8 1 file + warplint, edited, daemon", daemon_flake8, [*plugin, touched], env),
            ]
    if tool_available("flake8") and not args.no_tools and not args.cold_only:
        cases.append(("flake8 (E,F,W,C90)", None, [*plain, tree], None))  # a plain-flake8 reference
    ruff_path = shutil.which("ruff")
    if (ruff_path or tool_available("ruff")) and not args.no_tools and not args.cold_only:
        ruff = [ruff_path] if ruff_path else [sys.executable, "-m", "ruff"]
        cases.append(("ruff check (no cache)", None,
                      [*ruff, "check", "--no-cache", "--exit-zero", "--quiet", tree], None))
    rows: dict[str, list] = {label: [] for label, _, _, _ in cases}
    for i in range(args.repeat):
        for label, prepare, cmd, env in cases:
            if prepare is not None:
                prepare(i)
            if not args.cold_only:
                # each version's daemon done with its last run (the cache writes and the collection after its
                # answer): otherwise one version's daemon works on while the next case is timed on the same cores
                for _, site_env in sites:
                    daemon_idle(site_env)
            rows[label].append(run_latency(cmd, env=env) if label in latency else run_timed(cmd, env=env))
            print(f"  [{i + 1}/{args.repeat}] {label:28} {rows[label][-1][0]:8.2f} s", flush=True)
    if not args.cold_only:
        for label, env in sites:  # the daemons the --daemon cases started
            status = subprocess.run([sys.executable, "-m", "warplint", "daemon", "status", tree], env=env,
                                    capture_output=True, text=True)
            print(f"  {label}{status.stdout.strip()}")
            subprocess.run([sys.executable, "-m", "warplint", "daemon", "stop", tree], env=env, capture_output=True)
    for label, directory in caches.items():
        size = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(directory) for f in fs)
        print(f"  {label}cache size after the runs: {size / 1e6:.1f} MB")
    shutil.rmtree(work, ignore_errors=True)
    results = [summarise(label, rows[label]) for label, _, _, _ in cases]
    base = results[0]["median"] if not args.no_bare else 0.0  # no bare parse: no ratio (nan)
    for row in results:
        row["ratio"] = row["median"] / base if base else float("nan")
    print(f"\n{name}  ({n_files} files, {size / 1e6:.1f} MB, repeat {args.repeat}, cases interleaved)")
    print(table(results, markdown=args.markdown))
    return results


def table(results: list[dict], markdown: bool) -> str:
    head = ("case", "median s", "min-max s", "CPU s", "x bare parse", "peak RSS MiB")
    rows = [
        (
            row["label"], f"{row['median']:.2f}", f"{row['min']:.2f}-{row['max']:.2f}", f"{row['cpu']:.1f}",
            f"{row['ratio']:.2f}", f"{row['rss']:.0f}",
        )
        for row in results
    ]
    if markdown:
        lines = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
        lines += ["| " + " | ".join(r) + " |" for r in rows]
        return "\n".join(lines)
    widths = [max(len(str(x)) for x in col) for col in zip(head, *rows, strict=True)]
    fmt = "  ".join(f"{{:{'<' if i == 0 else '>'}{w}}}" for i, w in enumerate(widths))
    return "\n".join(fmt.format(*r) for r in (head, *rows))


def machine() -> str:
    import libcst  # noqa: F401 - version below

    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    mem = ""
    try:
        with open("/proc/meminfo") as fh:
            mem = f", {int(fh.readline().split()[1]) / 1024 / 1024:.0f} GiB RAM"
    except OSError:
        pass
    try:
        from importlib.metadata import version

        libcst_version = version("libcst")
    except Exception:  # noqa: BLE001 - the machine line is informative only; never fail the benchmark on it
        libcst_version = "?"
    load = ""
    if hasattr(os, "getloadavg"):
        load = ", load average {:.1f} {:.1f} {:.1f}".format(*os.getloadavg())
    return (f"{platform.platform()}, {platform.processor() or platform.machine()}, {cpus} cores{mem}, "
            f"Python {platform.python_version()}, LibCST {libcst_version}{load}")


def compile_measured(site_specs: list[str] | None) -> None:
    """Bytecode for the code timed, as an install has it (pip compiles at install time). An interpreter run with
    PYTHONDONTWRITEBYTECODE (some CI images, this project's build machine) never writes it for a checkout: every
    timed process compiled warplint's modules again, about 0.1 s of each CLI run."""
    import compileall

    directories = ([spec.partition("=")[2] for spec in site_specs] if site_specs
                   else [os.path.join(ROOT, "warplint"), os.path.join(ROOT, "rules")])
    for directory in directories:
        compileall.compile_dir(directory, quiet=1)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--corpus", nargs="+", default=["warp-lang"], choices=["warp-lang", "newton", "mujoco-warp"])
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--jobs", type=int, default=None, help="warplint --jobs (default: warplint's default, the cores)")
    p.add_argument("--markdown", action="store_true", help="print the tables as Markdown")
    p.add_argument("--no-tools", action="store_true",
                   help="leave out the whole-tree flake8 and ruff reference points (the one-file flake8 cases stay)")
    p.add_argument("--no-bare", action="store_true", help="leave out the bare-parse reference (no ratio column)")
    p.add_argument("--skip-cold", action="store_true",
                   help="leave out the cold cases (an untimed run fills each cache first)")
    p.add_argument("--cold-only", action="store_true",
                   help="only the serial bare parse and each version's cold --no-cache run (the cold ratio and "
                        "peak RSS, in a fraction of the time on a loaded machine)")
    p.add_argument("--site", action="append", metavar="LABEL=DIR",
                   help="time the warplint installed in DIR (repeatable: versions side by side)")
    args = p.parse_args(argv)
    print("machine:", machine())
    compile_measured(args.site)
    for name in args.corpus:
        bench_corpus(name, args)
    if hasattr(os, "getloadavg"):
        print("\nload average at the end: {:.1f} {:.1f} {:.1f}".format(*os.getloadavg()))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""``python -m benchmarks.oracle``: draw programs, label them on real Warp, score warplint against the labels.

    python -m benchmarks.oracle --seed 7 --count 50           # draw, run (cached by digest), score
    python -m benchmarks.oracle --fresh-seed --count 500 --docs   # a reported run: seed from os.urandom
    python -m benchmarks.oracle --rescore --seed 7 --count 50 # score again from the cached truth (no Warp)
    python -m benchmarks.oracle --rescore --docs              # the last run, docs/accuracy.md regenerated
    python -m benchmarks.oracle --rescore --seed 7 --count 50 --report-deliberate  # tests' cold starts reported too
    python -m benchmarks.oracle --ci-sample                   # rewrite benchmarks/oracle/data/ci_sample.json

A run draws from the newest generator version (``axes.GENERATOR_VERSION``) and records it; ``--rescore`` draws
with the version its run recorded (runs saved before versions were: version 1; by seed, the run of the oldest
version saved), and ``--generator N`` draws an older catalogue. Truth is cached in
``.cache/oracle/truth/<warp version>/<digest>.json`` (the program is stored with it, so a run can be re-scored
after the generator changed); each run's list of programs in ``.cache/oracle/runs/``.
The programs behind every miss and every false finding are written to ``.cache/oracle/report/<run>/``.
"""

from __future__ import annotations

import argparse
import datetime
import json
import multiprocessing
import os
import subprocess
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from typing import Any

from .axes import GENERATOR_VERSION
from .generate import Program, generate
from .report import REASONS, load_reasons, unexplained, weak_axis_values, write_docs, write_reading
from .score import lint_program, score_all

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CACHE = os.path.join(ROOT, ".cache", "oracle")
DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
CI_SAMPLE = os.path.join(DATA, "ci_sample.json")
CI_SEED = 20261203
CI_COUNT = 36
CI_GENERATOR = 1  # the committed sample's catalogue (axes.catalogue); rewriting it may move it to the newest
DEFAULT_DEPTH = 3


# -- truth cache --------------------------------------------------------------------------------------


def labeller_digest() -> str:
    """The code that turns a run into labels (this package's truth.py, the recorder, its event reader): truth
    cached under another labeller is not reused by a new run (``--rescore`` reads the run's own)."""
    import hashlib

    import warplint.confirm

    h = hashlib.sha256()
    confirm = os.path.dirname(os.path.abspath(warplint.confirm.__file__))
    for path in (os.path.join(os.path.dirname(os.path.abspath(__file__)), "truth.py"),
                 os.path.join(confirm, "_recorder.py"), os.path.join(confirm, "events.py")):
        with open(path, "rb") as fh:
            h.update(fh.read())
    return h.hexdigest()[:12]


def truth_path(digest: str, version: str) -> str:
    """``version`` is "<warp version>/<labeller digest>"."""
    return os.path.join(CACHE, "truth", version, f"{digest}.json")


def load_truth(digest: str, version: str) -> dict[str, Any] | None:
    try:
        with open(truth_path(digest, version), encoding="utf-8") as fh:
            data: dict[str, Any] = json.load(fh)
            return data
    except (OSError, ValueError):
        return None


def save_truth(program: Program, truth: dict[str, Any], version: str) -> None:
    path = truth_path(program.digest, version)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    record = dict(truth, program=program.to_json())
    tmp = path + f".{os.getpid()}.tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(record, fh, indent=1, sort_keys=True)
    os.replace(tmp, path)


# -- running programs on Warp -------------------------------------------------------------------------

_SLOT: dict[str, str] = {}


def _init_worker(slots: Any) -> None:
    slot = slots.get(timeout=10)
    _SLOT["pch"] = os.path.join(CACHE, "pch", f"w{slot}")
    _SLOT["pycache"] = os.path.join(CACHE, "pycache")


def _run_one(program_json: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    from .truth import run_program

    p = Program.from_json(program_json)
    return p.digest, run_program(p, pch_dir=_SLOT.get("pch"), pycache=_SLOT.get("pycache"))


def run_truths(programs: list[Program], version: str, jobs: int, echo: bool = True,
               refresh: bool = False) -> dict[str, dict[str, Any]]:
    """Truth for each program: from the cache, else by running it (``jobs`` programs at a time)."""
    truths: dict[str, dict[str, Any]] = {}
    todo = []
    for p in programs:
        t = None if refresh else load_truth(p.digest, version)
        if t is not None:
            truths[p.digest] = t
        else:
            todo.append(p)
    if not todo:
        return truths
    by_digest: dict[str, Program] = {}
    for p in todo:
        by_digest.setdefault(p.digest, p)  # identical programs (depth-0 draws repeat) run once
    todo = list(by_digest.values())
    ctx = multiprocessing.get_context("fork")
    slots: Any = ctx.Queue()
    for i in range(jobs):
        slots.put(i)
    t0 = time.monotonic()
    done = 0
    with ProcessPoolExecutor(max_workers=jobs, mp_context=ctx, initializer=_init_worker, initargs=(slots,)) as pool:
        futures = [pool.submit(_run_one, p.to_json()) for p in todo]
        for fut in as_completed(futures):
            digest, truth = fut.result()
            p = by_digest[digest]
            save_truth(p, truth, version)
            truths[digest] = truth
            done += 1
            if echo:
                left = (time.monotonic() - t0) / done * (len(todo) - done)
                state = truth.get("failed") or ("ok" if truth.get("recorder_ok") else "recorder failed")
                print(f"[{done}/{len(todo)}] {p.name} {p.mechanism}:{p.variant} {truth.get('wall_s')} s "
                      f"{len(truth.get('items') or [])} label(s) {state}; ~{left / 60:.1f} min left",
                      file=sys.stderr, flush=True)
    return truths


# -- runs ---------------------------------------------------------------------------------------------


def draw(seed: int, count: int, depth: int, version: int = GENERATOR_VERSION) -> list[Program]:
    return [generate(seed, i, depth, version) for i in range(count)]


def run_generator(meta: dict[str, Any]) -> int:
    """The generator version a run drew with: runs saved before versions were recorded drew version 1."""
    return int(meta.get("generator", 1))


def run_name(seed: int, count: int, depth: int, version: int = 1) -> str:
    """A run's name; a draw from a later generator version than 1 carries it (``-g2``), so drawing an old seed
    with a new catalogue never overwrites the run its rescores read."""
    return f"seed-{seed}-n{count}-d{depth}" + (f"-g{version}" if version > 1 else "")


def find_run(seed: int, count: int, depth: int, version: int | None = None) -> str:
    """The saved run of (seed, count, depth) drawn with ``version``; with no version, the one drawn with the
    oldest version saved (a seed drawn again with a newer catalogue leaves the run its rescores read as the
    one found)."""
    if version is not None:
        return run_name(seed, count, depth, version)
    for v in range(1, GENERATOR_VERSION + 1):
        name = run_name(seed, count, depth, v)
        if os.path.exists(os.path.join(CACHE, "runs", f"{name}.json")):
            return name
    return run_name(seed, count, depth, GENERATOR_VERSION)


def save_manifest(name: str, meta: dict[str, Any]) -> None:
    path = os.path.join(CACHE, "runs", f"{name}.json")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(meta, fh, indent=1)
    with open(os.path.join(CACHE, "runs", "last"), "w", encoding="utf-8") as fh:
        fh.write(name)


def load_manifest(name: str | None) -> dict[str, Any]:
    if name is None:
        with open(os.path.join(CACHE, "runs", "last"), encoding="utf-8") as fh:
            name = fh.read().strip()
    with open(os.path.join(CACHE, "runs", f"{name}.json"), encoding="utf-8") as fh:
        data: dict[str, Any] = json.load(fh)
        return data


def program_of_run(meta: dict[str, Any], index: int, truth: dict[str, Any]) -> Program:
    """Program ``index`` of a run: the generator's own draw while it still gives the same text (its name,
    axes and intent are the run's), else the program stored with the truth (an identical text drawn by
    another seed keeps that draw's record), renamed to its place in this run."""
    drawn = generate(meta["seed"], index, meta["depth"], run_generator(meta))
    if drawn.digest == meta["digests"][index]:
        return drawn
    p = Program.from_json(truth["program"])
    p.seed, p.index = meta["seed"], index
    return p


def generator_commit() -> str:
    """The last commit that changed the generator (the draw a seed gives)."""
    here = os.path.dirname(os.path.abspath(__file__))
    try:
        out = subprocess.run(["git", "log", "-1", "--format=%h", "--", os.path.join(here, "generate.py"),
                              os.path.join(here, "axes.py")], cwd=ROOT, capture_output=True, text=True, timeout=10)
        return out.stdout.strip() or "?"
    except (OSError, subprocess.SubprocessError):
        return "?"


def lint_all(programs: list[Program], report_deliberate: bool = False) -> dict[str, list[dict[str, Any]]]:
    return {p.digest: lint_program(p, report_deliberate) for p in programs}


def git_head() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                              timeout=10).stdout.strip() or "?"
    except (OSError, subprocess.SubprocessError):
        return "?"


# -- the CI sample ------------------------------------------------------------------------------------


def ci_programs() -> list[Program]:
    return draw(CI_SEED, CI_COUNT, DEFAULT_DEPTH, CI_GENERATOR)


def write_ci_sample(version: str, jobs: int) -> dict[str, Any]:
    programs = ci_programs()
    truths = run_truths(programs, version, jobs)
    data = {
        "about": "written by `python -m benchmarks.oracle --ci-sample`: programs and their runtime truth",
        "seed": CI_SEED, "count": CI_COUNT, "depth": DEFAULT_DEPTH, "generator": CI_GENERATOR,
        "warp_version": version.split("/")[0],
        "programs": [{"program": p.to_json(), "truth": canonical_truth(truths[p.digest])} for p in programs],
    }
    os.makedirs(DATA, exist_ok=True)
    with open(CI_SAMPLE, "w", encoding="utf-8") as fh:
        json.dump(data, fh, indent=1, sort_keys=True)
        fh.write("\n")
    return data


def canonical_truth(t: dict[str, Any]) -> dict[str, Any]:
    """What a truth says, without what changes from run to run (times, output)."""
    items = sorted((dict(i) for i in t.get("items") or ()), key=lambda i: json.dumps(i, sort_keys=True))
    return {"items": items, "failed": t.get("failed"), "recorder_ok": t.get("recorder_ok"),
            "warm_run": bool(t.get("warm_run")), "facts": {"backward": (t.get("facts") or {}).get("backward", {})}}


def load_ci_sample() -> tuple[list[Program], dict[str, dict[str, Any]], dict[str, Any]]:
    with open(CI_SAMPLE, encoding="utf-8") as fh:
        data = json.load(fh)
    programs = [Program.from_json(x["program"]) for x in data["programs"]]
    truths = {p.digest: x["truth"] for p, x in zip(programs, data["programs"], strict=True)}
    return programs, truths, data


# -- main ---------------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.oracle", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", type=int)
    ap.add_argument("--fresh-seed", action="store_true", help="draw the seed from os.urandom (a reported run)")
    ap.add_argument("--count", type=int, default=50)
    ap.add_argument("--depth", type=int, default=DEFAULT_DEPTH, help="at most this many non-trivial axes")
    ap.add_argument("--jobs", type=int, default=2, help="programs run on Warp at once")
    ap.add_argument("--generator", type=int,
                    help="draw from this generator version's catalogue (default: the newest); with --rescore "
                         "--seed, the run drawn with it (default: the oldest version saved for the seed)")
    ap.add_argument("--rescore", action="store_true", help="score cached truth again; no Warp run")
    ap.add_argument("--run", help="with --rescore: the run to score (a name in .cache/oracle/runs/)")
    ap.add_argument("--refresh", action="store_true", help="run the programs again even if their truth is cached")
    ap.add_argument("--docs", action="store_true", help="write docs/accuracy.md (and the lead of docs/precision.md)")
    ap.add_argument("--ci-sample", action="store_true", help="rewrite benchmarks/oracle/data/ci_sample.json")
    ap.add_argument("--json", help="write the score here")
    ap.add_argument("--report-deliberate", action="store_true",
                    help="score warplint with `report-deliberate = true` (cold starts made on purpose in tests and "
                         "benchmarks reported too): what the default's product decision costs; not with --docs")
    ap.add_argument("--check", action="store_true",
                    help="exit 1 when an axis value is below 80%% recall or precision without a written reason "
                         "in benchmarks/oracle/axis_reasons.toml")
    args = ap.parse_args(argv)
    if args.report_deliberate and (args.docs or args.ci_sample):
        ap.error("--report-deliberate scores a configuration other than the default: not for --docs or --ci-sample")

    from .truth import warp_version

    version = f"{warp_version()}/{labeller_digest()}"
    if args.ci_sample:
        write_ci_sample(version, args.jobs)
        programs, truths, _ = load_ci_sample()
        res = score_all(programs, truths, lint_all(programs))
        _print_summary(res)
        return 0
    if args.rescore:
        if args.seed is not None:
            name = find_run(args.seed, args.count, args.depth, args.generator)
            meta = load_manifest(name)
        else:
            meta = load_manifest(args.run)
            name = meta["name"]
        programs, truths = [], {}
        for index, digest in enumerate(meta["digests"]):
            t = load_truth(digest, meta.get("truth_key") or meta["warp_version"])
            if t is None:
                print(f"no cached truth for {digest}: run `python -m benchmarks.oracle --seed {meta['seed']} "
                      f"--count {meta['count']}` first", file=sys.stderr)
                return 2
            p = program_of_run(meta, index, t)
            programs.append(p)
            truths[p.digest] = t
    else:
        if args.fresh_seed:
            seed = int.from_bytes(os.urandom(4), "big")
        elif args.seed is not None:
            seed = args.seed
        else:
            ap.error("give --seed S, --fresh-seed or --rescore")
        generator = GENERATOR_VERSION if args.generator is None else args.generator
        programs = draw(seed, args.count, args.depth, generator)
        t0 = time.monotonic()
        truths = run_truths(programs, version, args.jobs, refresh=args.refresh)
        name = run_name(seed, args.count, args.depth, generator)
        meta = {"name": name, "seed": seed, "count": args.count, "depth": args.depth, "generator": generator,
                "warp_version": version.split("/")[0], "truth_key": version,
                "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
                "fresh": bool(args.fresh_seed), "generator_commit": generator_commit(), "repository_at": git_head(),
                "command": f"python -m benchmarks.oracle --seed {seed} --count {args.count} --depth {args.depth}"
                           + (f" --generator {generator}" if generator != GENERATOR_VERSION else ""),
                "wall_s": round(time.monotonic() - t0, 1), "jobs": args.jobs,
                "digests": [p.digest for p in programs]}
        save_manifest(name, meta)
    findings = lint_all(programs, args.report_deliberate)
    res = score_all(programs, truths, findings)
    res["meta"] = {k: v for k, v in meta.items() if k != "digests"}
    res["meta"]["warplint_commit"] = git_head()
    res["meta"]["rescored"] = bool(args.rescore)
    res["meta"]["scored_on"] = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    res["meta"]["report_deliberate"] = args.report_deliberate
    out_dir = os.path.join(CACHE, "report", name + ("-report-deliberate" if args.report_deliberate else ""))
    write_reading(out_dir, programs, truths, findings, res)
    _print_summary(res)
    print(f"programs behind each miss and false finding: {os.path.relpath(out_dir, ROOT)}/", file=sys.stderr)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(res, fh, indent=1, default=str)
    if args.docs:
        write_docs(res)
    return check_reasons(res) if args.check else 0


def check_reasons(res: dict[str, Any], path: str = REASONS) -> int:
    """``--check``: 1 when an axis value below the bar has no written reason (each is printed)."""
    reasons = load_reasons(path)
    for w in weak_axis_values(res, reasons):
        mark = "reason" if w["reason"] else "NO REASON"
        print(f"  {w['axis']}={w['value']} {w['metric']} {w['score']:.0%} ({', '.join(w['short']) or '-'}): {mark}")
    missing = unexplained(res, reasons)
    if missing:
        print(f"{len(missing)} axis value(s) below 80% without a reason in benchmarks/oracle/axis_reasons.toml",
              file=sys.stderr)
        return 1
    return 0


def _print_summary(res: dict[str, Any]) -> None:
    print(f"programs {res['programs']}, scored {res['scored']}, failed {len(res['failed'])}, "
          f"intent/runtime disagreements {len(res['disagreements'])}")
    print(f"{'mechanism':<10} {'truth':>6} {'found':>6} {'recall':>7} {'findings':>9} {'right':>6} {'precision':>9}")
    rows = [*list(res["per_mechanism"].items()), ("all", res["total"])]
    for m, r in rows:
        if not r["truth"] and not r["findings"]:
            continue
        rec = "-" if r["recall"] is None else f"{r['recall']:.0%}"
        pre = "-" if r["precision"] is None else f"{r['precision']:.0%}"
        print(f"{m:<10} {r['truth']:>6} {r['found']:>6} {rec:>7} {r['findings']:>9} {r['right']:>6} {pre:>9}")
    for c in res["miss_classes"][:10]:
        print(f"  miss class: {c['misses']} x {c['mechanism']} {c['kind']} ({c['variant']}); "
              f"{', '.join(c['common_axes'])}")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())


__all__ = ["main"]

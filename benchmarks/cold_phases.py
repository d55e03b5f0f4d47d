#!/usr/bin/env python3
"""Where a cold run's wall time goes: the engine's phases in the main process, and each worker's files.

    cd /tmp && python /path/to/benchmarks/cold_phases.py --no-cache --jobs 2 TREE     # any warplint arguments

Runs the CLI in this process (the cyclic collector off, as the console script) and prints to stderr:

- each engine phase as it begins and ends (``Session.add_files``, ``_importer_candidates``, ``_analyze_all``,
  the worker pool ``workers.run``, ``_parse_importers``, ``project``), with the wall seconds since the start
  and the main process's CPU seconds (``time.process_time``: a loaded machine inflates it far less than wall
  time); the rules (``check_model``) summed; the workers' CPU seconds;
- per worker: how many files it modelled, the wall seconds inside ``analyze``, and the gaps between two
  files split into pickling the answer and the rest (sending it, waiting for the next file); when the first
  file began after the start, and how long before the pool's end each worker finished (the tail).

The report goes to stdout as the CLI writes it (``--output-file /dev/null`` to drop it). The timings come
from wrappers around the engine's functions, set before the run; workers (forked) log to a temporary file.
"""

from __future__ import annotations

import collections
import gc
import os
import pickle
import resource
import sys
import tempfile
import time

from warplint import cli, engine, workers

START = time.monotonic()
START_CPU = time.process_time()
HANDLE, LOG = tempfile.mkstemp(prefix="cold-phases-", suffix=".log")
os.close(HANDLE)
marks: list[tuple[str, float, float]] = []
checks = {"files": 0, "cpu": 0.0, "wall": 0.0}


def mark(what: str) -> None:
    marks.append((what, time.monotonic() - START, time.process_time() - START_CPU))


def timed(owner, name: str) -> None:
    real = getattr(owner, name, None)
    if real is None:  # an older version measured with PYTHONPATH (no such phase there)
        return

    def wrapper(*args, **kwargs):
        mark(f"> {name}")
        try:
            return real(*args, **kwargs)
        finally:
            mark(f"< {name}")

    setattr(owner, name, wrapper)


def log(line: str) -> None:
    with open(LOG, "a", encoding="ascii") as fh:
        fh.write(line + "\n")


real_analyze = engine.analyze


def analyze(path, text, module=None, is_package=None, verdict=None):
    began = time.time()
    try:
        return real_analyze(path, text, module, is_package, verdict)
    finally:
        log(f"A {os.getpid()} {began:.4f} {time.time():.4f}")


class TimedPickle:
    """``pickle`` as the workers module sees it: ``dumps`` (the worker's answer) timed."""

    HIGHEST_PROTOCOL = pickle.HIGHEST_PROTOCOL
    loads = staticmethod(pickle.loads)

    @staticmethod
    def dumps(obj, protocol=None):
        began = time.time()
        blob = pickle.dumps(obj, protocol=protocol)
        log(f"D {os.getpid()} {time.time() - began:.4f} {len(blob)}")
        return blob


real_check = engine.Session.check_model


def check_model(self, *args, **kwargs):
    cpu, wall = time.process_time(), time.monotonic()
    try:
        return real_check(self, *args, **kwargs)
    finally:
        checks["files"] += 1
        checks["cpu"] += time.process_time() - cpu
        checks["wall"] += time.monotonic() - wall


def report() -> None:
    err = sys.stderr
    for what, wall, cpu in marks:
        err.write(f"{wall:8.2f} s {cpu:7.2f} CPU s  {what}\n")
    err.write(f"rules (check_model): {checks['files']} files, {checks['cpu']:.2f} CPU s, {checks['wall']:.2f} s\n")
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    err.write(f"workers: {children.ru_utime + children.ru_stime:.2f} CPU s\n")
    files: dict[str, list[tuple[float, float]]] = collections.defaultdict(list)
    pickling: dict[str, float] = collections.defaultdict(float)
    pickled = 0
    with open(LOG, encoding="ascii") as fh:
        for line in fh:
            kind, pid, *rest = line.split()
            if kind == "A":
                files[pid].append((float(rest[0]), float(rest[1])))
            else:
                pickling[pid] += float(rest[0])
                pickled += int(rest[1])
    os.unlink(LOG)
    if not files:
        return
    first = min(began for spans in files.values() for began, _ in spans)
    last = max(ended for spans in files.values() for _, ended in spans)
    started = time.time() - (time.monotonic() - START)
    err.write(f"pool: first file began {first - started:.2f} s after the start, last ended after {last - first:.2f} s;"
              f" {pickled / 1e6:.0f} MB pickled\n")
    for pid, spans in sorted(files.items()):
        spans.sort()
        inside = sum(ended - began for began, ended in spans)
        gaps = sum(spans[i + 1][0] - spans[i][1] for i in range(len(spans) - 1))
        err.write(f"worker {pid}: {len(spans)} files, analyze {inside:.2f} s, gaps {gaps:.2f} s (pickling"
                  f" {pickling[pid]:.2f} s, sending and waiting {gaps - pickling[pid]:.2f} s), ended"
                  f" {last - spans[-1][1]:.2f} s before the last\n")


def main() -> None:
    engine.analyze = analyze  # read by analyze_many at each call: the workers (forked after this) run it
    workers.pickle = TimedPickle  # type: ignore[assignment]
    engine.Session.check_model = check_model  # type: ignore[method-assign]
    for name in ("add_files", "_importer_candidates", "_analyze_all", "_parse_importers", "project"):
        timed(engine.Session, name)
    timed(workers, "run")
    gc.disable()
    mark("start")
    try:
        cli.main()
    finally:
        mark("end")
        sys.stdout.flush()
        report()
        sys.stderr.flush()
        os._exit(0)  # as the console script: no heap teardown


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""A cold run's tail (the index and the rules after the pool) again and again, without the pool.

    cd /tmp && MODE=record python /path/to/benchmarks/tail_replay.py --no-cache --jobs 2 --output-file OUT TREE
    cd /tmp && python /path/to/benchmarks/tail_replay.py --no-cache --jobs 2 --output-file OUT2 TREE   # replay

Runs the CLI in this process (the cyclic collector off, as the console script). ``MODE=record`` lets the worker
pool model the files and keeps each answer as the worker pickled it (``TAIL_BLOBS``, default
``/tmp/tail-blobs.pickle``); a replay hands those bytes back unpickled where the pool would, so the main process
gets the same ``FileModel`` objects a cold run gets (records' stored fields still pickled) and runs the same
tail. Prints to stderr the main process's CPU seconds in all, in ``Session.project`` (the index) and after it
(the rules, the report). A replay's report equals the recorded run's byte for byte. Models pickled by another
version of ``warplint.model`` cannot be replayed: record with the version measured.
"""

from __future__ import annotations

import gc
import os
import pickle
import sys
import time

from warplint import cli, engine

MODE = os.environ.get("MODE", "replay")
STORE = os.environ.get("TAIL_BLOBS", "/tmp/tail-blobs.pickle")
real_analyze_many = engine.analyze_many
real_project = engine.Session.project
recorded: dict[str, bytes] = {}
times: dict[str, float] = {}


def analyze_many(items, jobs, budget, progress=None, keep_pickled=True):
    if MODE == "record":
        answers = real_analyze_many(items, jobs, budget, progress, keep_pickled=True)
        for item, (model, blob, _) in zip(items, answers, strict=True):
            recorded[item[0]] = blob if blob is not None else pickle.dumps(model, protocol=pickle.HIGHEST_PROTOCOL)
        return [(model, blob if keep_pickled else None, failed) for model, blob, failed in answers]
    return [(pickle.loads(recorded[item[0]]), None, False) for item in items]


def project(self):
    if self._project is not None:
        return real_project(self)
    began = time.process_time()
    built = real_project(self)
    times["index"] = time.process_time() - began
    times["after index"] = time.process_time()
    return built


def main() -> None:
    if MODE == "replay":
        with open(STORE, "rb") as source:
            recorded.update(pickle.load(source))
    engine.analyze_many = analyze_many
    engine.Session.project = project  # type: ignore[method-assign]
    gc.disable()
    began = time.process_time()
    leave = os._exit

    def stay(code: int) -> None:  # the CLI's exit: the report below comes first
        pass

    os._exit = stay  # type: ignore[assignment]
    try:
        cli.main()
    except SystemExit:
        pass
    sys.stdout.flush()
    end = time.process_time()
    if MODE == "record":
        with open(STORE, "wb") as sink:
            pickle.dump(recorded, sink, protocol=pickle.HIGHEST_PROTOCOL)
    after = end - times.get("after index", end)
    sys.stderr.write(f"{MODE}: total {end - began:.2f} CPU s, index {times.get('index', 0.0):.2f},"
                     f" after the index {after:.2f}\n")
    leave(0)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Fuzz the engine: generated programs, mutated Warp files and long chains, each linted in a worker.

    python benchmarks/fuzz.py --count 5000 --seed 1 --timeout 20 --jobs 2

Inputs: hypothesmith programs (``from_grammar`` and ``from_node``), mutations of the Warp
files of the corpora (``scripts/fetch_corpora.py``: line deletions and duplications,
truncation, byte flips, bracket insertion, chain inflation) and the chains of ``chains.py``
around the measured thresholds. Each is linted by ``Session(...).lint_paths`` (all rules,
no cache, serial) in a worker subprocess with a per-input timeout; a worker that dies or
hangs is replaced. Counted: crashes (the worker died), hangs (timeout), internal errors
(an exception, or a run error), and false WC000s (a WC000 on an input CPython's
``compile`` accepts; those from LibCST's own limits and from max-file-size are counted apart). Each offending
input is written to ``.cache/fuzz/<kind>/`` (git-ignored) for reproduction.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import queue
import random
import subprocess
import sys
import threading
import time
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
OUT = os.path.join(ROOT, ".cache", "fuzz")

from chains import SHAPES  # noqa: E402

CHAIN_LENGTHS = (300, 1500, 3500, 9000)  # around the 512 KiB and 8 MiB thresholds of docs/robustness.md
LIBCST_LIMIT = "not parsed: LibCST rejects"
SIZE_LIMIT = "not checked: the file is"  # over max-file-size: a WC000 by design
WARP_HEADER = "import warp as wp\n"  # files that never mention warp are not even parsed


# ---------------------------------------------------------------------- inputs
def hypothesmith_programs(count: int, seed: int) -> list[str]:
    import warnings

    import hypothesmith
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as hypothesis_seed
    from hypothesis import strategies as st

    found: list[str] = []
    warnings.simplefilter("ignore")

    @hypothesis_seed(seed)
    @settings(max_examples=count, database=None, deadline=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(st.one_of(hypothesmith.from_grammar(), hypothesmith.from_node()))
    def collect(source: str) -> None:
        found.append(source)

    collect()
    return found[:count]


def warp_files() -> list[str]:
    roots = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "fetch_corpora.py")],
                           check=True, capture_output=True, text=True).stdout.split()
    texts = []
    for root in roots:
        for directory, _, names in sorted(os.walk(root)):
            for name in sorted(names):
                if name.endswith(".py"):
                    with open(os.path.join(directory, name), encoding="utf-8", errors="surrogateescape") as fh:
                        text = fh.read()
                    if "warp" in text and len(text) < 60_000:  # mutations of small files: more of them per minute
                        texts.append(text)
    return texts


def mutate(text: str, rng: random.Random) -> str:
    lines = text.splitlines(keepends=True) or [""]
    how = rng.choice(["delete lines", "duplicate lines", "truncate", "flip bytes", "insert brackets", "inflate chain"])
    if how == "delete lines":
        start = rng.randrange(len(lines))
        del lines[start:start + rng.randint(1, 5)]
    elif how == "duplicate lines":
        start = rng.randrange(len(lines))
        lines[start:start] = lines[start:start + rng.randint(1, 5)] * rng.randint(1, 3)
    elif how == "truncate":
        return text[: rng.randrange(len(text) + 1)]
    elif how == "flip bytes":
        data = bytearray(text.encode("utf-8", "surrogateescape"))
        for _ in range(rng.randint(1, 8)):
            if data:
                data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
        return data.decode("utf-8", "replace")
    elif how == "insert brackets":
        at = rng.randrange(len(text) + 1)
        return text[:at] + rng.choice("([{)]}") * rng.randint(1, 300) + text[at:]
    else:  # a long chain where an expression or a statement was
        shape = rng.choice(sorted(SHAPES))
        chain = SHAPES[shape](rng.choice(CHAIN_LENGTHS))
        at = rng.randrange(len(lines) + 1)
        lines[at:at] = [chain]
    return "".join(lines)


def inputs(count: int, seed: int) -> list[tuple[str, str]]:
    """(origin, source) pairs: a third generated programs, chains, the rest mutations; each
    starts with an import of warp."""
    rng = random.Random(seed)
    chains = [
        (f"chain {shape} x{n}", WARP_HEADER + SHAPES[shape](n)) for shape in sorted(SHAPES) for n in CHAIN_LENGTHS
    ]
    generated = [("hypothesmith", WARP_HEADER + s) for s in hypothesmith_programs(max(0, count // 3), seed)]
    corpus = warp_files()
    mutations: list[tuple[str, str]] = []
    while len(chains) + len(generated) + len(mutations) < count:
        mutations.append(("mutation", WARP_HEADER + mutate(rng.choice(corpus), rng)))
    found = chains + generated + mutations
    return found[:count] if count >= len(chains) else rng.sample(found, count)


# ---------------------------------------------------------------------- worker
def worker() -> int:
    """Child side: one JSON request per line in, a compile line and a result line out."""
    import tempfile
    import traceback
    import warnings

    from warplint.config import Config
    from warplint.engine import Session

    warnings.simplefilter("ignore")
    directory = tempfile.mkdtemp(prefix="warplint-fuzz-")
    path = os.path.join(directory, "fuzzed.py")
    for line in sys.stdin:
        source = json.loads(line)["source"]
        try:
            compile(source, "fuzzed.py", "exec")
            compiled = True
        except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError):
            compiled = False
        print(json.dumps({"compiled": compiled}), flush=True)
        with open(path, "w", encoding="utf-8", errors="surrogatepass") as fh:
            fh.write(source)
        try:
            session = Session(Config(root=directory, select=("ALL",)), cache=False, jobs=1)
            result = session.lint_paths([path])
            reply = {"status": "ok", "errors": result.errors,
                     "wc000": [d.message for d in result.diagnostics if d.code == "WC000"]}
        except Exception:  # noqa: BLE001 - what the fuzzer counts
            reply = {"status": "exception", "error": traceback.format_exc().strip().splitlines()[-1]}
        print(json.dumps(reply), flush=True)
    return 0


class Worker:
    def __init__(self) -> None:
        self.process = subprocess.Popen([sys.executable, __file__, "--worker"], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, cwd=ROOT)
        self.lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.process.stdout:  # type: ignore[union-attr]
            self.lines.put(line)
        self.lines.put(None)

    def lint(self, source: str, timeout: float) -> tuple[str, str, bool]:
        """(outcome, detail, compiled): ok / crash / hang / error / false WC000 / LibCST limit / size limit."""
        try:
            self.process.stdin.write(json.dumps({"source": source}) + "\n")  # type: ignore[union-attr]
            self.process.stdin.flush()  # type: ignore[union-attr]
        except (BrokenPipeError, OSError):
            return "crash", "worker gone before the input", False
        deadline = time.monotonic() + timeout
        replies: list[dict[str, Any]] = []
        while len(replies) < 2:
            try:
                line = self.lines.get(timeout=max(0.01, deadline - time.monotonic()))
            except queue.Empty:
                self.stop()
                return "hang", f"no result after {timeout} s", bool(replies and replies[0]["compiled"])
            if line is None:
                code = self.process.wait()
                return "crash", f"worker ended with {code}", bool(replies and replies[0]["compiled"])
            replies.append(json.loads(line))
        compiled, result = replies[0]["compiled"], replies[1]
        if result["status"] != "ok":
            return "error", result["error"], compiled
        if result["errors"]:
            return "error", result["errors"][0], compiled
        if compiled and result["wc000"]:
            message = result["wc000"][0]
            if message.startswith(SIZE_LIMIT):
                return "size limit", message, compiled
            return ("LibCST limit" if message.startswith(LIBCST_LIMIT) else "false WC000"), message, compiled
        return "ok", "", compiled

    def stop(self) -> None:
        self.process.kill()
        self.process.wait()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--count", type=int, default=5000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--timeout", type=float, default=20.0, help="seconds per input (default %(default)s)")
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.worker:
        return worker()
    started = time.monotonic()
    todo = inputs(args.count, args.seed)
    print(f"{len(todo)} inputs ({time.monotonic() - started:.0f} s to make)", flush=True)
    counts: collections.Counter[str] = collections.Counter()
    lock = threading.Lock()
    pending = iter(enumerate(todo))

    def drive() -> None:
        current = Worker()
        while True:
            with lock:
                item = next(pending, None)
            if item is None:
                break
            index, (origin, source) = item
            outcome, detail, _ = current.lint(source, args.timeout)
            if outcome in ("crash", "hang"):
                current = Worker()
            with lock:
                counts[outcome] += 1
                if outcome != "ok":
                    folder = os.path.join(OUT, outcome.replace(" ", "-"))
                    os.makedirs(folder, exist_ok=True)
                    with open(os.path.join(folder, f"{index:05d}.py"), "w", encoding="utf-8",
                              errors="surrogatepass") as fh:
                        fh.write(source)
                    print(f"{index}: {outcome} ({origin}): {detail}", flush=True)
        current.stop()

    threads = [threading.Thread(target=drive) for _ in range(max(1, args.jobs))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.monotonic() - started
    print(f"\n{sum(counts.values())} inputs in {elapsed:.0f} s: crashes {counts['crash']}, hangs {counts['hang']}, "
          f"internal errors {counts['error']}, false WC000s {counts['false WC000']} "
          f"(+ {counts['LibCST limit']} from LibCST's own limits, {counts['size limit']} over max-file-size), "
          f"ok {counts['ok']}")
    if len(counts) > 1 or "ok" not in counts:
        print(f"offending inputs: {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Run the user's command with private Warp/CUDA caches and the recorder injected.

Nothing here touches the user's caches or project: every file we create lives under one temporary
directory that is removed at the end (also on timeout, failure and Ctrl-C). Bytecode caches are
redirected there too (``PYTHONPYCACHEPREFIX``), so ``__pycache__`` is not written into the project.
"""

from __future__ import annotations

import collections
import json
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable

RECORDER_SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_recorder.py")
TAIL_LINES = 40


@dataclass
class PassResult:
    """One execution of the command (cold or warm)."""

    label: str
    returncode: int | None
    wall_s: float
    timed_out: bool
    interrupted: bool
    output_tail: list[str]
    events: list[dict[str, Any]] = field(default_factory=list)
    events_text: str = ""


class Workspace:
    """The private temp directory: caches, the injected ``sitecustomize``, event logs."""

    def __init__(self, lines: dict[str, list[int]] | None = None, probes: str = "auto"):
        self.probes = probes
        self.root = tempfile.mkdtemp(prefix="warplint-confirm-")
        self.warp_cache = os.path.join(self.root, "warp-cache")
        self.cuda_cache = os.path.join(self.root, "cuda-cache")
        self.inject = os.path.join(self.root, "inject")
        self.pycache = os.path.join(self.root, "pycache")
        for d in (self.warp_cache, self.cuda_cache, self.inject, self.pycache):
            os.makedirs(d)
        shutil.copyfile(RECORDER_SOURCE, os.path.join(self.inject, "sitecustomize.py"))
        self.lines_file = None
        if lines:
            self.lines_file = os.path.join(self.root, "lines.json")
            with open(self.lines_file, "w", encoding="utf-8") as fh:
                json.dump(lines, fh)

    def events_path(self, label: str) -> str:
        return os.path.join(self.root, f"events-{label}.jsonl")

    def env(self, label: str, base: dict[str, str] | None) -> dict[str, str]:
        env = dict(os.environ)
        if base:
            env.update(base)
        env["WARP_CACHE_PATH"] = self.warp_cache
        env["CUDA_CACHE_PATH"] = self.cuda_cache
        env["PYTHONPYCACHEPREFIX"] = self.pycache
        old = env.get("PYTHONPATH")
        env["PYTHONPATH"] = self.inject + (os.pathsep + old if old else "")
        env["WARPLINT_CONFIRM_EVENTS"] = self.events_path(label)
        env["WARPLINT_CONFIRM_RUN"] = label
        env["WARPLINT_CONFIRM_SKIP"] = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        if self.lines_file:
            env["WARPLINT_CONFIRM_LINES"] = self.lines_file
        else:
            env.pop("WARPLINT_CONFIRM_LINES", None)
        env["WARPLINT_CONFIRM_PROBES"] = self.probes
        env.setdefault("PYTHONUNBUFFERED", "1")
        return env

    def cleanup(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)


def _kill_group(proc: subprocess.Popen, grace: float = 3.0) -> None:
    try:
        if os.name == "posix":
            try:
                os.killpg(proc.pid, signal.SIGTERM)
            except ProcessLookupError:
                return
            try:
                proc.wait(timeout=grace)
            except subprocess.TimeoutExpired:
                pass
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        else:  # pragma: no cover - windows
            proc.kill()
        proc.wait(timeout=grace)
    except Exception:
        try:
            proc.kill()
        except Exception:
            pass


def run_pass(
    ws: Workspace,
    label: str,
    command: list[str],
    *,
    cwd: str,
    timeout: float,
    env: dict[str, str] | None = None,
    echo: Callable[[str], None] | None = None,
) -> PassResult:
    """Run ``command`` once; read its merged stdout/stderr; kill its process group on timeout."""
    tail: collections.deque[str] = collections.deque(maxlen=TAIL_LINES)
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        command,
        cwd=cwd,
        env=ws.env(label, env),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=(os.name == "posix"),
    )

    def reader() -> None:
        assert proc.stdout is not None
        for raw in iter(proc.stdout.readline, b""):
            line = raw.decode("utf-8", "replace").rstrip("\n")
            tail.append(line)
            if echo is not None:
                try:
                    echo(line)
                except Exception:
                    pass

    th = threading.Thread(target=reader, daemon=True)
    th.start()
    timed_out = interrupted = False
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        _kill_group(proc)
    except KeyboardInterrupt:
        interrupted = True
        _kill_group(proc)
        raise
    finally:
        wall = time.perf_counter() - t0
        if proc.poll() is None:
            _kill_group(proc)
        elif os.name == "posix" and not timed_out:
            # leftovers (daemonised children) of a finished program still hold our temp dirs
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        th.join(timeout=5)
        if proc.stdout is not None:
            try:
                proc.stdout.close()
            except Exception:
                pass
    text = ""
    try:
        with open(ws.events_path(label), encoding="utf-8") as fh:
            text = fh.read()
    except FileNotFoundError:
        pass
    events = []
    for line in text.splitlines():
        try:
            events.append(json.loads(line))
        except ValueError:
            continue  # a line cut short by a kill
    return PassResult(
        label=label,
        returncode=proc.returncode,
        wall_s=wall,
        timed_out=timed_out,
        interrupted=interrupted,
        output_tail=list(tail),
        events=events,
        events_text=text,
    )


"""Run the user's command with private Warp/CUDA caches and the recorder injected.

Nothing here touches the user's caches or project: every file we create lives under one temporary
directory that is removed at the end (also on timeout, failure, Ctrl-C, SIGTERM and SIGHUP). Bytecode
caches are redirected there too (``PYTHONPYCACHEPREFIX``), so ``__pycache__`` is not written into the project.

A pass always ends clean: the program writes its stdout/stderr to a file in that directory, which warplint
follows (no pipe that a leftover process could hold open), and when the pass ends -- the main process
exited, timed out, or warplint was interrupted -- the program's whole process tree is killed, including
processes that left its session. On Linux, warplint is a child subreaper while a pass runs (orphans
re-parent to it rather than to init) and the program's environment carries a random token
(``WARPLINT_CONFIRM_TOKEN``) by which ``/proc`` finds every process it started. Elsewhere the program's
process group is killed.
"""

from __future__ import annotations

import collections
import contextlib
import ctypes
import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from warplint.interrupts import Terminated

from .sources import output_digest, scan_cache

RECORDER_SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_recorder.py")
TAIL_LINES = 40
TOKEN_VARIABLE = "WARPLINT_CONFIRM_TOKEN"
POLL_S = 0.05  # how often the output file is read while the program runs
TERM_GRACE_S = 3.0  # a program still running at a timeout or an interrupt: SIGTERM, then SIGKILL this much later
SWEEP_LIMIT_S = 5.0  # bound on killing and reaping until nothing of the tree is left
READ_CHUNK = 1 << 20
MAX_LINE_BYTES = 1 << 16  # a longer line (or output without newlines) is cut, so the tail stays small

_PR_SET_CHILD_SUBREAPER = 36
_PR_GET_CHILD_SUBREAPER = 37


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
    sources: dict[str, dict[str, Any]] = field(default_factory=dict)  # cache dir name -> generated source stats
    output_digest: str | None = None  # of the program's own output, Warp's log lines left out

    def failure(self, what: str) -> str | None:
        """Why the ``what`` run ("cold", "warm") failed: it timed out, or exited with an error; None if not."""
        if self.timed_out:
            return f"{what} run timed out after {self.wall_s:.0f} s (process tree killed)"
        if self.returncode not in (0, None):
            return f"{what} run exited with code {self.returncode}"
        return None


class CannotRun(Exception):
    """The command could not be started (missing, not executable, bad working directory)."""


class Workspace:
    """The private temp directory: caches, the injected ``sitecustomize``, event logs, program output."""

    def __init__(self, lines: dict[str, list[int]] | None = None, probes: str = "auto",
                 whatif: dict[str, Any] | None = None):
        self.probes = probes
        self.root = tempfile.mkdtemp(prefix="warplint-confirm-")
        try:
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
            self.whatif_file = None
            if whatif:
                self.whatif_file = os.path.join(self.root, "whatif.json")
                with open(self.whatif_file, "w", encoding="utf-8") as fh:
                    json.dump(whatif, fh)
        except BaseException:
            self.cleanup()
            raise

    def events_path(self, label: str) -> str:
        return os.path.join(self.root, f"events-{label}.jsonl")

    def output_path(self, label: str) -> str:
        return os.path.join(self.root, f"output-{label}.txt")

    def env(self, label: str, base: dict[str, str] | None) -> dict[str, str]:
        env = dict(os.environ)
        if base:
            env.update(base)
        # the test warplint itself runs in (when it runs under pytest) is not the program's: a pytest program
        # sets its own, and the recorder attributes builds to it
        env.pop("PYTEST_CURRENT_TEST", None)
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
        if self.whatif_file:
            env["WARPLINT_CONFIRM_WHATIF"] = self.whatif_file
        else:
            env.pop("WARPLINT_CONFIRM_WHATIF", None)
        env.setdefault("PYTHONUNBUFFERED", "1")
        return env

    def cleanup(self) -> None:
        despite_interrupts(lambda: shutil.rmtree(self.root, ignore_errors=True))


def despite_interrupts(action: Callable[[], None], attempts: int = 10) -> None:
    """Run the idempotent ``action`` to the end although Ctrl-C, SIGTERM or SIGHUP arrive meanwhile
    (it is started again), then re-raise the first of them: cleanup must not stop half-way."""
    pending: BaseException | None = None
    for _ in range(attempts):
        try:
            action()
            break
        except (KeyboardInterrupt, Terminated) as exc:
            pending = pending or exc
    if pending is not None:
        raise pending


class _OutputFile:
    """Follows the file the program writes its merged stdout/stderr to: keeps the last lines, echoes each."""

    def __init__(self, path: str, echo: Callable[[str], None] | None):
        self.path = path
        self.echo = echo
        self.tail: collections.deque[str] = collections.deque(maxlen=TAIL_LINES)
        self._file = open(path, "rb")  # noqa: SIM115 - followed across read_new() calls, closed by close()
        self._partial = b""

    def read_new(self) -> None:
        """Take in what was written so far, up to the size now: a writer that never stops cannot keep us here."""
        end = os.fstat(self._file.fileno()).st_size
        while self._file.tell() < end:
            chunk = self._file.read(min(READ_CHUNK, end - self._file.tell()))
            if not chunk:
                break
            *lines, self._partial = (self._partial + chunk).split(b"\n")
            for raw in lines:
                self._line(raw)
            while len(self._partial) > MAX_LINE_BYTES:
                self._line(self._partial[:MAX_LINE_BYTES])
                self._partial = self._partial[MAX_LINE_BYTES:]

    def finish(self) -> None:
        """Read the rest, keep a last line without newline, close."""
        try:
            self.read_new()
            if self._partial:
                self._line(self._partial)
                self._partial = b""
        finally:
            self._file.close()

    def _line(self, raw: bytes) -> None:
        line = raw.decode("utf-8", "replace")
        self.tail.append(line)
        if self.echo is not None:
            try:
                self.echo(line)
            except Exception:  # noqa: BLE001 - a broken echo must not end the pass
                pass


def _process_table() -> dict[int, tuple[int, str]]:
    """pid -> (parent pid, state letter) of every process in ``/proc``, zombies included."""
    table = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as fh:
                stat = fh.read()
        except OSError:
            continue  # gone meanwhile
        fields = stat[stat.rindex(b")") + 2 :].split()  # the command name in (...) may hold spaces
        table[int(name)] = (int(fields[1]), fields[0].decode())
    return table


def _send(pid: int, signum: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):  # gone meanwhile, or changed user
        os.kill(pid, signum)


class ProcessTree:
    """Finds and ends every process of one pass.

    On Linux (``/proc``) the tree is: processes whose environment carries the pass's token, the children
    of warplint that it did not have when the pass started (the main process and, warplint being a
    subreaper, orphans re-parented to it), and everything below those. Warplint's own other children and
    unrelated processes are never signalled. Without ``/proc`` it is the main process's process group.
    """

    def __init__(self, token: str):
        self.marker = f"\0{TOKEN_VARIABLE}={token}\0".encode()
        self.warplint = os.getpid()
        self.has_proc = sys.platform.startswith("linux") and os.path.isdir("/proc/self")
        table = _process_table() if self.has_proc else {}
        self.own_children = {pid for pid, (ppid, _) in table.items() if ppid == self.warplint}
        self._terminated = False

    def members(self) -> dict[int, tuple[int, str]]:
        """pid -> (parent pid, state) of the tree now."""
        table = _process_table()
        below: dict[int, list[int]] = collections.defaultdict(list)
        for pid, (ppid, _) in table.items():
            below[ppid].append(pid)
        stack = [
            pid for pid, (ppid, _) in table.items()
            if (ppid == self.warplint and pid not in self.own_children) or self._carries_token(pid)
        ]
        found: dict[int, tuple[int, str]] = {}
        while stack:
            pid = stack.pop()
            if pid in found or pid == self.warplint or pid not in table:
                continue
            found[pid] = table[pid]
            stack.extend(below[pid])
        return found

    def _carries_token(self, pid: int) -> bool:
        try:
            with open(f"/proc/{pid}/environ", "rb") as fh:
                environ = fh.read()
        except OSError:
            return False  # gone, or another user's
        return self.marker in b"\0" + environ + b"\0"

    def end(self, proc: subprocess.Popen | None) -> None:
        """A main process still running gets SIGTERM (the tree too) and ``TERM_GRACE_S`` to exit, once;
        then SIGKILL for everything left, and the zombies that are ours are reaped. Idempotent."""
        if proc is not None and proc.poll() is None and not self._terminated:
            self._terminated = True
            self._signal_all(proc, signal.SIGTERM)
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=TERM_GRACE_S)
        if self.has_proc:
            self._sweep(proc)
            return
        self._signal_all(proc, getattr(signal, "SIGKILL", signal.SIGTERM))
        if proc is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=SWEEP_LIMIT_S)

    def _signal_all(self, proc: subprocess.Popen | None, signum: int) -> None:
        if self.has_proc:
            for pid in self.members():
                _send(pid, signum)
        elif os.name == "posix" and proc is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signum)  # the group outlives its leader; leftovers of a finished program too
        elif proc is not None and proc.poll() is None:  # pragma: no cover - windows
            proc.kill()

    def _sweep(self, proc: subprocess.Popen | None) -> None:
        """SIGKILL the tree until nothing of it is alive and no zombie of ours is left (bounded)."""
        deadline = time.monotonic() + SWEEP_LIMIT_S
        while True:
            members = self.members()
            alive = [pid for pid, (_, state) in members.items() if state != "Z"]
            our_zombies = [pid for pid, (ppid, state) in members.items() if state == "Z" and ppid == self.warplint]
            if not alive and not our_zombies:
                break
            for pid in alive:
                _send(pid, signal.SIGKILL)
            for pid in our_zombies:
                if proc is not None and pid == proc.pid:
                    proc.poll()  # Popen reaps its own child, so its returncode stays right
                else:
                    with contextlib.suppress(ChildProcessError):
                        os.waitpid(pid, os.WNOHANG)
            if time.monotonic() > deadline:
                break
            time.sleep(0.01)
        if proc is not None:
            proc.poll()


@contextlib.contextmanager
def _orphans_come_to_us() -> Iterator[None]:
    """Make this process a child subreaper (Linux) while a pass runs: the program's orphans (double forks,
    daemons) re-parent to us instead of init, so the sweep finds them below us and reaps them."""
    prctl = _libc_prctl()
    if prctl is None:
        yield
        return
    was = ctypes.c_int(0)
    prctl(_PR_GET_CHILD_SUBREAPER, ctypes.byref(was))
    if not was.value:
        prctl(_PR_SET_CHILD_SUBREAPER, ctypes.c_ulong(1))
    try:
        yield
    finally:
        if not was.value:  # a host that was a subreaper before stays one
            prctl(_PR_SET_CHILD_SUBREAPER, ctypes.c_ulong(0))


def _libc_prctl() -> Callable[..., int] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None


def _wait(proc: subprocess.Popen, timeout: float, output: _OutputFile) -> bool:
    """Wait for the main process while following its output; True when ``timeout`` expired first."""
    deadline = time.monotonic() + timeout
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return True
        try:
            proc.wait(timeout=min(POLL_S, left))
            return False
        except subprocess.TimeoutExpired:
            output.read_new()


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
    """Run ``command`` once, following its merged stdout/stderr; end its whole process tree however the
    pass ends (exit, ``timeout``, KeyboardInterrupt, ``Terminated``, which are re-raised after that)."""
    token = secrets.token_hex(16)
    child_env = ws.env(label, env)
    child_env[TOKEN_VARIABLE] = token
    output_path = ws.output_path(label)
    tree = ProcessTree(token)
    proc = output = None
    with _orphans_come_to_us():
        try:
            with open(output_path, "wb") as sink:
                t0 = time.perf_counter()
                try:
                    proc = subprocess.Popen(
                        command,
                        cwd=cwd,
                        env=child_env,
                        stdin=subprocess.DEVNULL,
                        stdout=sink,
                        stderr=subprocess.STDOUT,
                        start_new_session=(os.name == "posix"),
                    )
                except OSError as exc:
                    raise CannotRun(f"{exc.strerror or exc}: {exc.filename or command[0]!r}") from exc
            output = _OutputFile(output_path, echo)
            timed_out = _wait(proc, timeout, output)
            wall = time.perf_counter() - t0
        finally:
            despite_interrupts(lambda: tree.end(proc))
            if output is not None:
                output.finish()
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
        interrupted=False,
        output_tail=list(output.tail),
        events=events,
        events_text=text,
        sources=scan_cache(ws.warp_cache),
        output_digest=output_digest(output_path),
    )

"""Worker processes that model files, each file under a time and memory budget.

A file is modelled (parse + extraction) in a worker process when there is enough work to
share between cores, and always when it is one the main process should not risk: a file
the parse guard says may crash LibCST's native parser, or a very large one. A worker models
one file at a time, so whatever happens to it (a segfault in the parser, the memory budget,
a file that takes too long) is that file's: it gets one WC000 with the reason, and the run
goes on. A SIGKILL may be the OOM killer's choice of a bystander: that file is tried once
more in a fresh worker first.

Workers never outlive the main process: Linux's parent-death signal kills them when it
dies (a watchdog thread does the same where there is no such signal), they ignore Ctrl-C
(the main process ends them), and every way out of ``run`` kills what is left.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import pickle
import queue
import signal
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from typing import Any

Item = tuple[str, str, str, bool]  # (path, text, module, is_package), the arguments of engine.analyze
# What models one file in a worker: ``engine.analyze``, passed in by the engine (this module never imports it:
# the engine imports this one). A module-level function, so it reaches a spawned or forkserver worker by name.
Analyze = Callable[[str, str, str, bool], Any]


@dataclass(frozen=True)
class Budget:
    """What modelling one file may cost in a worker."""

    seconds: float
    memory_mib: int


@dataclass(frozen=True)
class Failure:
    """Why a file got no model: the one-line reason its WC000 gives."""

    reason: str


def can_start_workers() -> bool:
    # A daemonic process (flake8's own worker pool) may not have children.
    return not multiprocessing.current_process().daemon


def _context():
    """How workers start. fork is fastest (LibCST and the rules are already imported) but unsafe while other
    threads run (the editor server's, an embedding program's): a lock another thread holds stays held in the
    child forever. Then the fork server: a clean process that imports the engine once and forks each worker
    from there, so a worker starts without importing LibCST again. spawn where there is no fork server."""
    methods = multiprocessing.get_all_start_methods()
    if "fork" in methods and threading.active_count() == 1:
        return multiprocessing.get_context("fork")
    if "forkserver" in methods:
        context = multiprocessing.get_context("forkserver")
        # Imported once by the fork server (read when it starts): what modelling a file imports.
        context.set_forkserver_preload([f"{__package__}.{name}" for name in ("engine", "extract", "registry")]
                                       + ["libcst", "libcst.metadata"])
        return context
    return multiprocessing.get_context("spawn")


@contextlib.contextmanager
def _standard_library_first():
    """A fork server or spawned worker is a new interpreter started with ``-c``, which puts the working
    directory first on its path while it imports ``multiprocessing`` (and through it ``math``, ``socket``...):
    run from a project folder holding a ``math.py`` (newton's package root does), the worker imported that and
    died. Safe-path mode (Python 3.11+) leaves the working directory out; the worker gets the parent's path
    from multiprocessing afterwards. Only the interpreters started meanwhile see the variable."""
    if sys.version_info < (3, 11) or os.environ.get("PYTHONSAFEPATH"):
        yield
        return
    os.environ["PYTHONSAFEPATH"] = "1"
    try:
        yield
    finally:
        os.environ.pop("PYTHONSAFEPATH", None)


# ---------------------------------------------------------------------- the worker side
# Each answer is one message: a tag byte, then the pickled model or the failure's reason.
_MODEL, _FAILED = b"M", b"F"

def _die_with_parent(main: int) -> None:
    """SIGKILL this worker when the main process (pid ``main``) dies, however it dies. A forked or spawned
    worker is the main process's child; one from the fork server is the fork server's, which exits when
    the main process does (its end of a pipe closes), and the parent-death signal follows it."""
    parent = os.getppid()
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        PR_SET_PDEATHSIG = 1
        if libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0) == 0:
            if os.getppid() != parent or not _alive(main):  # it died before the signal was armed
                os._exit(1)
            return
    except (OSError, AttributeError):
        pass

    def watch() -> None:  # no parent-death signal here: poll
        while os.getppid() == parent and _alive(main):
            time.sleep(0.5)
        os._exit(1)

    threading.Thread(target=watch, daemon=True).start()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # EPERM: it exists
        return True
    return True


def _limit_memory(budget_mib: int) -> None:
    """Cap the address space at what the worker holds now plus the budget: past it,
    allocations fail (MemoryError in Python, an abort in native code) in this worker only."""
    try:
        import resource

        with open("/proc/self/status", encoding="ascii") as fh:
            size_kib = next(int(line.split()[1]) for line in fh if line.startswith("VmSize:"))
        limit = size_kib * 1024 + budget_mib * 1024 * 1024
        _, hard = resource.getrlimit(resource.RLIMIT_AS)
        if hard != resource.RLIM_INFINITY:
            limit = min(limit, hard)
        resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    except (ImportError, OSError, StopIteration, ValueError):
        pass  # not Linux: the time budget still bounds the file


def _silence_native_stderr() -> None:
    """LibCST's Rust parser prints "memory allocation of N bytes failed" and backtraces at the
    memory budget: the user's terminal is not the place (the file's WC000 says what happened)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 2)
        os.close(devnull)
    except OSError:
        pass


def _reader(conn: Connection) -> queue.SimpleQueue:
    """The items the main process sends, read as they come by a thread of their own (None once the pipe
    closes). The main process hands a worker its next file while it models one; were that file's text read
    only once the worker is done, a text larger than the pipe holds would block the main process's send
    while the worker blocks sending its answer, which the main process then never reads."""
    inbox: queue.SimpleQueue = queue.SimpleQueue()

    def read() -> None:
        while True:
            try:
                item = conn.recv()
            except (EOFError, OSError):
                inbox.put(None)
                return
            inbox.put(item)

    threading.Thread(target=read, daemon=True).start()
    return inbox


def _worker_main(conn: Connection, parent: int, memory_mib: int, analyze: Analyze) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the main process's to handle
    if hasattr(signal, "pthread_sigmask"):  # blocked across the fork (see _Worker), ignored from now on
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    _die_with_parent(parent)
    for name in ("SIGTERM", "SIGHUP"):
        signal.signal(getattr(signal, name), signal.SIG_DFL)
    from . import parse_guard

    parse_guard.IN_SACRIFICIAL_PROCESS = True  # a parser crash here costs one file, not the run
    _silence_native_stderr()
    inbox = _reader(conn)  # started before the budget is measured: its stack is the worker's, not a file's
    _limit_memory(memory_mib)
    while True:
        item = inbox.get()
        if item is None:
            return
        try:
            blob = pickle.dumps(analyze(*item), protocol=pickle.HIGHEST_PROTOCOL)
        except MemoryError:
            conn.send_bytes(_FAILED + b"exceeded the memory budget (file-memory) while modelling it")
            return  # what is left of this heap is not worth reusing
        except Exception as exc:  # noqa: BLE001 - a bug of ours on this file: say so, go on
            conn.send_bytes(_FAILED + f"internal error while modelling it: {type(exc).__name__}: {exc}".encode())
            continue
        conn.send_bytes(_MODEL + blob)


# ---------------------------------------------------------------------- the main side
class _Worker:
    def __init__(self, context, memory_mib: int, analyze: Analyze) -> None:
        self.conn, child = context.Pipe()
        self.process = context.Process(target=_worker_main, args=(child, os.getpid(), memory_mib, analyze),
                                       daemon=True)
        # SIGINT stays blocked from the fork until the worker ignores it: a Ctrl-C to the process group
        # in between would otherwise end the fresh worker with a KeyboardInterrupt traceback. Here, a
        # Ctrl-C that arrives meanwhile is delivered as soon as the mask is restored.
        mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT}) if hasattr(signal, "pthread_sigmask") else None
        try:
            with _standard_library_first():
                self.process.start()
        finally:
            if mask is not None:
                signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        child.close()
        # The items given to it, in order: the first is the one it is modelling (since ``started``), the one after
        # waits in its pipe, so that it goes on while the main process reads the answer before.
        self.given: deque[int] = deque()
        self.started = 0.0

    def give(self, index: int, item: Item) -> None:
        if not self.given:
            self.started = time.monotonic()
        self.given.append(index)
        try:
            self.conn.send(item)
        except OSError:
            pass  # it died before it got the file: its sentinel says so, and the file is retried

    def answered(self) -> int:
        """The item it answered; the next one given (if any) is the one it is modelling now."""
        index = self.given.popleft()
        # the worker began the next one when it sent this answer, which the main process may read later: the
        # next item's clock starts at the reading, a little late, never early
        self.started = time.monotonic()
        return index

    def kill(self) -> None:
        if self.process.is_alive():
            try:
                self.process.kill()
            except OSError:
                pass
        self.process.join(timeout=5)
        self.conn.close()


def _maybe_not_its_fault(exitcode: int | None) -> bool:
    """A worker models one file at a time, so a crash there is that file's. Only a SIGKILL may
    come from outside (the OOM killer picks the largest process, not the guilty one): retry."""
    return exitcode == -signal.SIGKILL


def _death_reason(exitcode: int | None, budget: Budget) -> str:
    if exitcode is not None and exitcode < 0:
        try:
            name = signal.Signals(-exitcode).name
        except ValueError:
            name = f"signal {-exitcode}"
        if name == "SIGKILL":
            return "the process modelling it was killed (SIGKILL; out of memory?)"
        if name == "SIGABRT":  # what the native parser does when an allocation fails
            return f"the parser aborted on it (SIGABRT; the file-memory budget is {budget.memory_mib} MiB)"
        return f"the parser crashed on it ({name})"
    return f"the process modelling it exited unexpectedly (status {exitcode})"


def run(items: list[Item], jobs: int, budget: Budget, on_done: Callable[[int, bytes | Failure], None],
        analyze: Analyze) -> None:
    """Model ``items`` in up to ``jobs`` workers, largest first, each with ``analyze(*item)`` (``engine.analyze``);
    ``on_done(index, blob or Failure)`` for each. Items never attempted because no worker could be started get
    no call (the caller models those itself).

    While more items wait than there are workers, each worker holds its next item in its pipe: it goes on to
    that one as soon as it has sent an answer, and never waits for the main process to read the answer and
    run ``on_done`` (unpickling the model) before it gets more work. In the last items each worker holds one,
    so that none waits behind another's long file while a worker is idle."""
    if not items:
        return
    context = _context()
    queue = deque(sorted(range(len(items)), key=lambda i: -len(items[i][1])))
    tries = dict.fromkeys(range(len(items)), 0)
    workers: list[_Worker] = []
    size = max(1, min(jobs, len(items)))

    def give(worker: _Worker) -> None:
        queued = queue.popleft()
        tries[queued] += 1
        worker.give(queued, items[queued])

    def requeue_waiting(worker: _Worker) -> None:
        """The items a worker that is gone held in its pipe: never begun, so not a try of theirs."""
        for waiting in reversed(worker.given):
            tries[waiting] -= 1
            queue.appendleft(waiting)
        worker.given.clear()

    try:
        while queue or any(w.given for w in workers):
            while queue and len(workers) < size:
                try:
                    workers.append(_Worker(context, budget.memory_mib, analyze))
                except OSError:
                    if not workers:
                        return
                    size = len(workers)
                    break
            for worker in workers:
                if not worker.given and queue:
                    give(worker)
            for worker in workers:
                if len(worker.given) == 1 and len(queue) > len(workers):
                    give(worker)
            busy = [w for w in workers if w.given]
            deadline = min(w.started for w in busy) + budget.seconds
            ready = wait([w.conn for w in busy] + [w.process.sentinel for w in busy],
                         timeout=max(0.0, deadline - time.monotonic()))
            for worker in list(busy):
                message: bytes | Failure | None = None
                if worker.conn in ready:
                    try:
                        message = _receive(worker.conn)
                    except (EOFError, OSError):
                        message = None
                if message is not None:
                    index = worker.answered()
                    if isinstance(message, Failure):  # after a MemoryError it is on its way out: never reuse
                        worker.kill()
                        workers.remove(worker)
                        requeue_waiting(worker)
                    elif not worker.given and queue:
                        give(worker)  # its next file before this answer is handled
                    on_done(index, message)
                    continue
                died = worker.process.sentinel in ready or worker.conn in ready
                late = time.monotonic() - worker.started > budget.seconds
                if not (died or late):
                    continue
                worker.kill()
                workers.remove(worker)
                index = worker.given.popleft()  # the one it was modelling
                requeue_waiting(worker)
                if late:
                    on_done(index, Failure(f"modelling it took longer than the file-timeout ({budget.seconds:g} s)"))
                elif tries[index] < 2 and _maybe_not_its_fault(worker.process.exitcode):
                    queue.appendleft(index)  # once more, in a fresh worker
                else:
                    on_done(index, Failure(_death_reason(worker.process.exitcode, budget)))
    finally:
        for worker in workers:
            worker.kill()


def _receive(conn: Connection) -> bytes | Failure:
    data = conn.recv_bytes()
    if data[:1] == _FAILED:
        return Failure(data[1:].decode("utf-8", "replace"))
    return data[1:]

"""The daemon itself (``warplint/daemon.py`` is how runs reach it): it answers the runs of one project, each the
CLI's own ``check_command`` or the flake8 plugin's check of one file, run in this process with the client's
arguments, working directory and environment, against the sessions ``Sessions`` keeps across runs.

Started by ``daemon._start`` as ``python -c`` with the working directory (its socket's private directory) taken
off ``sys.path``: ``main(["ROOT", "--socket", PATH])``. This module is the top of the house: it runs the front
ends (cli.py, flake8_plugin.py), which know of it only as the ``sessions`` they are handed.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import gc
import io
import os
import signal
import site
import socket
import sysconfig
import time
import traceback
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from . import interrupts
from .cache import StatDigests
from .daemon import IDLE_SECONDS, connect, receive, send

if TYPE_CHECKING:
    from .config import Config
    from .engine import Session


def main(argv: list[str]) -> None:
    """``ROOT --socket PATH [--idle SECONDS]``: serve until idle, then leave without tearing the heap down."""
    parser = argparse.ArgumentParser(prog="warplint-daemon")
    parser.add_argument("root")
    parser.add_argument("--socket", required=True)
    parser.add_argument("--idle", type=float, default=IDLE_SECONDS)
    args = parser.parse_args(argv)
    for name in ("SIGTERM", "SIGHUP"):  # unwind (the socket is removed on the way out), and stop after a run
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), _terminated)
    code = 0
    try:
        code = serve(args.socket, args.root, args.idle)
    except BaseException:  # noqa: BLE001 - a daemon has no terminal: it leaves quietly, clients check here
        code = 1
    os._exit(code)


_SIGNALLED: list[int] = []  # SIGTERM or SIGHUP arrived: the run it interrupted is answered, then the daemon exits


def _terminated(signum: int, _frame: object) -> None:
    _SIGNALLED.append(signum)
    raise interrupts.Terminated(signum)  # (the CLI's run it interrupts says "terminated", as in a terminal)


class Sessions:
    """The sessions the daemon's runs share (one per config and cache setting, the ``KEEP`` used last; the CLI's and
    the flake8 plugin's runs share one when their configs agree), each started afresh whenever what it holds may
    no longer be what is on disk or in the environment (``session``)."""

    KEEP = 2  # a session holds the project's index: two cover a CLI run with options of its own beside the plain

    def __init__(self) -> None:
        self._kept: list[_Kept] = []  # the one used last, last
        self.started = 0  # sessions started (the tests and ``warplint daemon status`` read it)
        self.reused = 0
        self.built = False  # a session was started since the daemon last froze what it holds

    def after_answer(self) -> None:
        """Write what the kept sessions' caches hold back (a fresh process reads them) and free the indexes their
        runs replaced: the work a run leaves for after its answer."""
        for kept in self._kept:
            kept.session.flush_caches()
            kept.session.free_retired()

    def session(self, config: Config, cache: bool, make: Callable[[], Session]) -> Session:
        """A session for a run under ``config``: the one kept for it when it still holds, else a new one from
        ``make``."""
        from .discovery import Discovery
        from .warp_version import environment

        stamped_at = time.time_ns()
        discovery = Discovery(config)
        listing = list(discovery.files([config.root]))
        files = {os.path.abspath(p): _stamp(p) for p in listing}
        settled = (environment(config.root, config.warp_version, config.warp_version_source).cache_key(),
                   _installed_stamp())
        found = next((k for k in self._kept if k.config == config and k.cache == cache), None)
        if found is not None:
            self._kept.remove(found)
            if found.settled == settled and files.keys() == found.files.keys() and not found.imports_changed(files):
                found.session.run_again(config, found.unchanged(files), (config.root, listing, list(discovery.notes)))
                found.files, found.stamped_at = files, stamped_at
                self._kept.append(found)
                self.reused += 1
                return found.session
            found.session.flush_caches()
        del found  # the old index goes before the new one is built
        while len(self._kept) >= self.KEEP:
            self._kept.pop(0).session.flush_caches()
        session = make()
        session.records_reads = True  # its facts are kept across the runs, with what they read
        session.hold_cache_writes()  # written once the answer is out (``after_answer``)
        session.retire_indexes = True  # an index an edit replaced is freed then too
        session.group_indexes = {}  # and so is each group's index, when a run is grouped
        self._kept.append(_Kept(config, cache, settled, files, session, stamped_at))
        self.started += 1
        self.built = True
        return session


class _Kept:
    """A session the daemon keeps, with what it was started under and the files' stamps at its last run."""

    def __init__(self, config: Config, cache: bool, settled: tuple, files: dict[str, Stamp], session: Session,
                 stamped_at: int) -> None:
        self.config, self.cache, self.settled, self.files, self.session = config, cache, settled, files, session
        self.stamped_at = stamped_at  # when ``files`` were stamped (time.time_ns)

    def unchanged(self, files: dict[str, Stamp]) -> frozenset[str]:
        """The files whose text is the one the last run read: stamped the same now and then, and last changed
        (written, or its status) ``StatDigests.RACY_NS`` before they were stamped then (a rewrite within the
        timestamps' granularity would look unchanged)."""
        settled_by = self.stamped_at - StatDigests.RACY_NS
        return frozenset(path for path, stamp in files.items()
                         if self.files.get(path) == stamp and max(stamp[0], stamp[2]) < settled_by)

    def imports_changed(self, files: dict[str, Stamp]) -> bool:
        """Whether a file changed since the last run has other import lines now (module names follow imports)."""
        from .module_names import imports_of
        from .sources import read_source

        for path, stamp in files.items():
            if self.files.get(path) == stamp:
                continue
            before = self.session.texts.get(path)
            text = read_source(path, self.session.config.max_file_size)[0]
            if before is None or text is None or imports_of(before) != imports_of(text):
                return True
        return False


Stamp = tuple[int, int, int, int]  # (st_mtime_ns, st_size, st_ctime_ns, st_ino)


def _stamp(path: str) -> Stamp:
    try:
        info = os.stat(path)
    except OSError:
        return (-1, -1, -1, -1)
    return (info.st_mtime_ns, info.st_size, info.st_ctime_ns, info.st_ino)


def _installed_stamp() -> tuple:
    """This interpreter's install folders as they are now (``sysconfig``'s purelib and platlib, the user's site
    folder): installing or removing a package changes its folder's modification time (the installed modules the
    rules read, and the Warp found there). Not the other entries of ``sys.path``: the working directory's changes
    whenever a file is made there."""
    paths = sysconfig.get_paths()
    folders = {paths["purelib"], paths["platlib"], site.getusersitepackages()}
    return tuple((folder, _stamp(folder)) for folder in sorted(folders))


def serve(where: str, root: str, idle: float = IDLE_SECONDS) -> int:
    """Answer runs on ``where`` until idle for ``idle`` seconds, asked to stop, or the socket is no longer ours."""
    from .cli import main

    answering = connect(where)
    if answering is not None:
        answering.close()
        return 0  # another daemon answers there already
    with contextlib.suppress(FileNotFoundError):
        os.unlink(where)  # a daemon that died left it
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        listener.bind(where)
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            return 0  # one started at the same moment won
        raise
    os.chmod(where, 0o600)
    ours = os.stat(where).st_ino
    listener.listen(16)
    listener.settimeout(min(idle, 60.0))
    sessions = Sessions()
    answered, last = 0, time.monotonic()
    gc.disable()
    home = os.getcwd()
    try:
        while True:
            try:
                connection, _ = listener.accept()
            except TimeoutError:
                if time.monotonic() - last > idle or not _still_ours(where, ours):
                    return 0
                continue
            with connection:
                connection.settimeout(None)
                try:
                    request = receive(connection)
                except (OSError, ValueError):
                    continue
                if request.get("stop"):
                    with contextlib.suppress(OSError):
                        send(connection, {"stopped": True})
                    return 0
                if request.get("status"):
                    with contextlib.suppress(OSError):
                        send(connection, {"pid": os.getpid(), "root": root, "runs": answered,
                                           "sessions_started": sessions.started, "idle_s": time.monotonic() - last})
                    continue
                answer = _run(request, sessions, main)
                os.chdir(home)
                with contextlib.suppress(OSError):
                    send(connection, answer)
                sessions.after_answer()
                answered += 1
                last = time.monotonic()
            # The collector runs here, after an answer is out, never during a run (the daemon keeps it off: each
            # collection a run's allocations set off would scan every object of the index again). A new index is
            # then put out of its sight (millions of acyclic objects, as the language server does), once the garbage
            # of the one it replaced is collected (a frozen object is never collected: unfrozen first).
            if sessions.built:
                gc.unfreeze()
                gc.collect()
                gc.freeze()
                sessions.built = False
            else:
                gc.collect()
            if _SIGNALLED or not _still_ours(where, ours):
                return 0
    finally:
        listener.close()
        with contextlib.suppress(OSError):
            if _still_ours(where, ours):
                os.unlink(where)


def _still_ours(where: str, inode: int) -> bool:
    try:
        return os.stat(where).st_ino == inode
    except OSError:
        return False


def _run(request: dict, sessions: Sessions, main: Callable[..., int]) -> dict:
    """One run: a command line (``argv``) or the flake8 plugin's check of one file (``flake8``)."""
    argv, flake8, cwd, env = request.get("argv"), request.get("flake8"), request.get("cwd"), request.get("env")
    if not (isinstance(cwd, str) and isinstance(env, dict)):
        return {"failed": "a malformed request"}
    try:
        with _environment(env):
            os.chdir(cwd)
            if isinstance(argv, list) and all(isinstance(a, str) for a in argv):
                out, err = io.StringIO(), io.StringIO()
                status = main(["check", *argv], out, err, sessions=sessions)
                return {"status": status, "out": out.getvalue(), "err": err.getvalue()}
            if isinstance(flake8, dict):
                from .flake8_plugin import check_in_daemon

                found = check_in_daemon(str(flake8["path"]), str(flake8["text"]), frozenset(flake8["codes"]),
                                        bool(flake8["check_context"]), sessions)
                return {"findings": found}
    except Exception as exc:  # noqa: BLE001 - the client runs it itself; the daemon goes on
        return {"failed": "".join(traceback.format_exception_only(type(exc), exc)).strip()}
    return {"failed": "a malformed request"}


@contextlib.contextmanager
def _environment(env: dict[str, Any]) -> Iterator[None]:
    """The client's environment for one run (module lookup, the Warp found, NO_COLOR: what its own run reads)."""
    before = dict(os.environ)
    os.environ.clear()
    os.environ.update({str(k): str(v) for k, v in env.items()})
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(before)

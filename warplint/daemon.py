"""A project's linter kept running between runs: ``warplint --daemon`` (or ``daemon = true`` in
``[tool.warplint]``) has the run answered by it, so a run after an edit models the edited files only and takes the
project's facts over from the run before (reads.py), as the editor's server does (issue 28).

One daemon per (project root, warplint build, interpreter), listening on a Unix socket in a directory only the
user can enter. The first run that asks for it starts it and waits for its answer (that run indexes the project,
as any first run does); it serves one run at a time and exits after ``IDLE_SECONDS`` without one, when its
socket is removed, or on ``warplint daemon stop``. A run it answers is the CLI's own ``check_command``, run in the
daemon's process with the client's arguments, working directory and environment, against the session ``Sessions``
keeps: a session is started afresh when the config, the Warp environment, the installed packages or the project's
set of files changed since the run before, or when an edit changed a file's import lines (module names are read
from them). A run the daemon cannot answer (no Unix sockets, a daemon that fails) runs in the client's process.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import io
import json
import os
import socket
import stat
import struct
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .config import Config
    from .engine import Session

IDLE_SECONDS = 3 * 3600.0  # a daemon nobody asked for this long exits (its memory is the project's index)
START_SECONDS = 20.0  # how long a client waits for a daemon it started to listen
_HEADER = struct.Struct("!Q")
_MAX_PATH = 100  # a Unix socket's path is at most 104-108 bytes


class Unavailable(Exception):
    """The daemon cannot answer (no Unix sockets here, no private directory for its socket, it failed)."""


def address(root: str) -> str:
    """The socket of the daemon for the project at ``root`` run by this warplint and this interpreter (a warplint
    upgraded, its rules edited or another venv's starts a daemon of its own)."""
    from . import __version__
    from .cache import registry_salt

    if not hasattr(socket, "AF_UNIX"):
        raise Unavailable("this platform has no Unix sockets")
    salt = registry_salt()
    if salt is None:
        raise Unavailable("warplint's own sources cannot be read")
    key = json.dumps([os.path.realpath(root), salt, __version__, sys.executable, sys.prefix])
    where = os.path.join(_private_directory(), hashlib.sha256(key.encode()).hexdigest()[:24] + ".sock")
    if len(where.encode()) > _MAX_PATH:
        raise Unavailable(f"the socket path would be too long: {where}")
    return where


def _private_directory() -> str:
    """``$TMPDIR/warplint-UID``, made 0700 and checked to be the user's own (another user's would let them answer
    for the daemon)."""
    uid = os.getuid() if hasattr(os, "getuid") else 0
    directory = os.path.join(tempfile.gettempdir(), f"warplint-{uid}")
    with contextlib.suppress(FileExistsError):
        os.mkdir(directory, 0o700)
    info = os.lstat(directory)
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != uid or info.st_mode & 0o077:
        raise Unavailable(f"{directory} is not a private directory of this user")
    return directory


# ---------------------------------------------------------------------------------------------------- the wire
def _send(connection: socket.socket, message: dict) -> None:
    data = json.dumps(message).encode()
    connection.sendall(_HEADER.pack(len(data)) + data)


def _receive(connection: socket.socket) -> dict:
    header = _read_exactly(connection, _HEADER.size)
    (size,) = _HEADER.unpack(header)
    found = json.loads(_read_exactly(connection, size))
    if not isinstance(found, dict):
        raise ValueError("not a message")
    return found


def _read_exactly(connection: socket.socket, size: int) -> bytes:
    parts = bytearray()
    while len(parts) < size:
        chunk = connection.recv(min(size - len(parts), 1 << 20))
        if not chunk:
            raise ConnectionError("the other end closed the connection")
        parts += chunk
    return bytes(parts)


# ---------------------------------------------------------------------------------------------------- the client
def ask(root: str, argv: list[str], starting: Callable[[], None] | None = None) -> tuple[int, str, str]:
    """Have the daemon of ``root`` run ``warplint check ARGV`` in this working directory and environment:
    (exit status, stdout, stderr). Starts one when none answers, after calling ``starting`` (its first answer
    indexes the project). Raises ``Unavailable`` when no daemon can answer."""
    answer = _exchange(root, {"argv": argv}, starting)
    return int(answer["status"]), str(answer["out"]), str(answer["err"])


def ask_flake8(root: str, path: str, text: str, codes: frozenset[str], check_context: bool
               ) -> list[tuple[int, int, str, str]]:
    """The findings of ``path`` (flake8 read it as ``text``) for the flake8 plugin, from the daemon of ``root``
    (started when none runs): (line, column, code, message)."""
    answer = _exchange(root, {"flake8": {"path": path, "text": text, "codes": sorted(codes),
                                         "check_context": check_context}})
    return [(int(line), int(col), str(code), str(message)) for line, col, code, message in answer["findings"]]


def _exchange(root: str, request: dict, starting: Callable[[], None] | None = None) -> dict:
    """Send a run's ``request`` (with this working directory and environment) to the daemon of ``root``, starting
    one when none answers (after calling ``starting``); its answer."""
    where = address(root)
    connection = _connect(where)
    if connection is None:
        if starting is not None:
            starting()
        _start(where, root)
        connection = _wait_for(where)
    with connection:
        try:
            _send(connection, {**request, "cwd": os.getcwd(), "env": dict(os.environ)})
            answer = _receive(connection)
        except (OSError, ValueError) as exc:
            raise Unavailable(f"the daemon did not answer: {exc}") from None
    if "failed" in answer:
        raise Unavailable(f"the daemon failed: {answer['failed']}")
    return answer


def stop(root: str) -> bool:
    """Ask the daemon of ``root`` to exit; False when none runs."""
    connection = _connect(address(root))
    if connection is None:
        return False
    with connection, contextlib.suppress(OSError, ValueError):
        _send(connection, {"stop": True})
        _receive(connection)
    return True


def status(root: str) -> dict | None:
    """What the daemon of ``root`` says of itself (pid, runs answered, seconds idle); None when none runs."""
    connection = _connect(address(root))
    if connection is None:
        return None
    with connection:
        try:
            _send(connection, {"status": True})
            return _receive(connection)
        except (OSError, ValueError):
            return None


def _connect(where: str) -> socket.socket | None:
    connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        connection.connect(where)
    except OSError:
        connection.close()
        return None
    return connection


# The daemon's interpreter imports nothing from the directory it starts in, nor from the projects whose runs it
# answers in theirs (a project's own `math.py` would shadow the standard library's): `-c` puts the working
# directory first on sys.path, which the daemon takes off before importing warplint.
_SERVE = "import sys; del sys.path[0]; from warplint.cli import entry; entry()"


def _start(where: str, root: str) -> None:
    """Start the daemon in a session of its own (it outlives this process and is no child of a terminal's job),
    in the socket's private directory."""
    command = [sys.executable, "-c", _SERVE, "daemon", "serve", root, "--socket", where]
    with open(os.devnull, "rb") as nothing_in, open(os.devnull, "wb") as nothing_out:
        subprocess.Popen(command, stdin=nothing_in, stdout=nothing_out, stderr=nothing_out,
                         cwd=os.path.dirname(where), start_new_session=True, close_fds=True)


def _wait_for(where: str) -> socket.socket:
    deadline = time.monotonic() + START_SECONDS
    while time.monotonic() < deadline:
        connection = _connect(where)
        if connection is not None:
            return connection
        time.sleep(0.02)
    raise Unavailable(f"the daemon started did not listen on {where} within {START_SECONDS:.0f} s")


# ---------------------------------------------------------------------------------------------------- the daemon
class Sessions:
    """The sessions the daemon's runs share (one per config and cache setting: the CLI's and the flake8 plugin's
    select differently; the ``KEEP`` used last), each started afresh whenever what it holds may no longer be
    what is on disk or in the environment (``session``)."""

    KEEP = 2  # a session holds the project's index: two are the CLI's and flake8's

    def __init__(self) -> None:
        self._kept: list[_Kept] = []  # the one used last, last
        self.started = 0  # sessions started (the tests and ``warplint daemon status`` read it)
        self.reused = 0
        self.built = False  # a session was started since the daemon last froze what it holds

    def session(self, config: Config, cache: bool, make: Callable[[], Session]) -> Session:
        """A session for a run under ``config``: the one kept for it when it still holds, else a new one from
        ``make``."""
        from .discovery import Discovery
        from .warp_version import environment

        files = {os.path.abspath(p): _stamp(p) for p in Discovery(config).files([config.root])}
        settled = (environment(config.root, config.warp_version, config.warp_version_source).cache_key(),
                   _installed_stamp())
        found = next((k for k in self._kept if k.config == config and k.cache == cache), None)
        if found is not None:
            self._kept.remove(found)
            if found.settled == settled and files.keys() == found.files.keys() and not found.imports_changed(files):
                found.session.run_again(config)
                found.files = files
                self._kept.append(found)
                self.reused += 1
                return found.session
        del found  # the old index goes before the new one is built
        while len(self._kept) >= self.KEEP:
            self._kept.pop(0)
        session = make()
        session.records_reads = True  # its facts are kept across the runs, with what they read
        session.group_indexes = {}  # and so is each group's index, when a run is grouped
        self._kept.append(_Kept(config, cache, settled, files, session))
        self.started += 1
        self.built = True
        return session


class _Kept:
    """A session the daemon keeps, with what it was started under and the files' stamps at its last run."""

    def __init__(self, config: Config, cache: bool, settled: tuple, files: dict[str, tuple[int, int]],
                 session: Session) -> None:
        self.config, self.cache, self.settled, self.files, self.session = config, cache, settled, files, session

    def imports_changed(self, files: dict[str, tuple[int, int]]) -> bool:
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


def _stamp(path: str) -> tuple[int, int]:
    try:
        info = os.stat(path)
    except OSError:
        return (-1, -1)
    return (info.st_mtime_ns, info.st_size)


def _installed_stamp() -> tuple:
    """The package folders on ``sys.path`` as they are now: installing or removing a package changes its folder's
    modification time (the installed modules the rules read, and the Warp found there). Not the other entries:
    the working directory's changes whenever a file is made there."""
    return tuple((entry, _stamp(entry)) for entry in sys.path
                 if os.path.basename(entry) in ("site-packages", "dist-packages"))


def serve(where: str, root: str, idle: float = IDLE_SECONDS) -> int:
    """Answer runs on ``where`` until idle for ``idle`` seconds, asked to stop, or the socket is no longer ours."""
    import gc

    from .cli import main

    with contextlib.suppress(FileNotFoundError):
        if _connect(where) is not None:
            return 0  # another daemon answers there already
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
                    request = _receive(connection)
                except (OSError, ValueError):
                    continue
                if request.get("stop"):
                    with contextlib.suppress(OSError):
                        _send(connection, {"stopped": True})
                    return 0
                if request.get("status"):
                    with contextlib.suppress(OSError):
                        _send(connection, {"pid": os.getpid(), "root": root, "runs": answered,
                                           "sessions_started": sessions.started, "idle_s": time.monotonic() - last})
                    continue
                answer = _run(request, sessions, main)
                os.chdir(home)
                with contextlib.suppress(OSError):
                    _send(connection, answer)
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
            if not _still_ours(where, ours):
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

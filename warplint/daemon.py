"""A project's linter kept running between runs: ``warplint --daemon`` (or ``daemon = true`` in
``[tool.warplint]``) has the run answered by it, so a run after an edit models the edited files only and takes the
project's facts over from the run before (reads.py), as the editor's server does (issue 28). This module is how a
run reaches it (the socket, the wire, starting one); the daemon itself is ``daemon_server.py``.

One daemon per (project root, warplint build, interpreter), listening on a Unix socket in a directory only the
user can enter. The first run that asks for it starts it and waits for its answer (that run indexes the project,
as any first run does); it serves one run at a time and exits after ``IDLE_SECONDS`` without one, when its
socket is removed, or on ``warplint daemon stop``. A run it cannot answer (no Unix sockets, a daemon that fails)
runs in the client's process.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import socket
import stat
import struct
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable

IDLE_SECONDS = 3 * 3600.0  # a daemon nobody asked for this long exits (its memory is the project's index)
START_SECONDS = 20.0  # how long a client waits for a daemon it started to listen
_HEADER = struct.Struct("!Q")
_MAX_PATH = 100  # a Unix socket's path is at most 104-108 bytes


def in_ci() -> bool:
    """A CI job (its runners set ``CI``): it runs warplint once, so a project's ``daemon = true`` starts no daemon
    there (``--daemon`` still does)."""
    return os.environ.get("CI", "").lower() not in ("", "0", "false")


class Unavailable(Exception):
    """The daemon cannot answer (no Unix sockets here, no private directory for its socket, it failed)."""


class NotRunning(Unavailable):
    """No daemon runs, and the client asked for one that does (``ask(start=False)``)."""


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
    # (the interpreter by its file and its environment: `python` and `python3` of one venv are one)
    key = json.dumps([os.path.realpath(root), salt, __version__, os.path.realpath(sys.executable), sys.prefix])
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
def send(connection: socket.socket, message: dict) -> None:
    data = json.dumps(message).encode()
    connection.sendall(_HEADER.pack(len(data)) + data)


def receive(connection: socket.socket) -> dict:
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
def ask(root: str, argv: list[str], starting: Callable[[], None] | None = None, start: bool = True
        ) -> tuple[int, str, str]:
    """Have the daemon of ``root`` run ``warplint check ARGV`` in this working directory and environment:
    (exit status, stdout, stderr). Starts one when none answers (unless ``start`` is false: ``NotRunning``), after
    calling ``starting`` (its first answer indexes the project). Raises ``Unavailable`` when no daemon can answer."""
    answer = _exchange(root, {"argv": argv}, starting, start)
    return int(answer["status"]), str(answer["out"]), str(answer["err"])


def ask_flake8(root: str, path: str, text: str, codes: frozenset[str], check_context: bool
               ) -> list[tuple[int, int, str, str]]:
    """The findings of ``path`` (flake8 read it as ``text``) for the flake8 plugin, from the daemon of ``root``
    (started when none runs): (line, column, code, message)."""
    answer = _exchange(root, {"flake8": {"path": path, "text": text, "codes": sorted(codes),
                                         "check_context": check_context}})
    return [(int(line), int(col), str(code), str(message)) for line, col, code, message in answer["findings"]]


def _exchange(root: str, request: dict, starting: Callable[[], None] | None = None, start: bool = True) -> dict:
    """Send a run's ``request`` (with this working directory and environment) to the daemon of ``root``, starting
    one when none answers (after calling ``starting``; unless ``start`` is false: ``NotRunning``); its answer."""
    where = address(root)
    connection = connect(where)
    if connection is None:
        if not start:
            raise NotRunning(f"no daemon listens on {where}")
        if starting is not None:
            starting()
        _start(where, root)
        connection = _wait_for(where)
    with connection:
        try:
            send(connection, {**request, "cwd": os.getcwd(), "env": dict(os.environ)})
            answer = receive(connection)
        except (OSError, ValueError) as exc:
            raise Unavailable(f"the daemon did not answer: {exc}") from None
    if "failed" in answer:
        raise Unavailable(f"the daemon failed: {answer['failed']}")
    return answer


def stop(root: str) -> bool:
    """Ask the daemon of ``root`` to exit; False when none runs."""
    connection = connect(address(root))
    if connection is None:
        return False
    with connection, contextlib.suppress(OSError, ValueError):
        send(connection, {"stop": True})
        receive(connection)
    return True


def status(root: str) -> dict | None:
    """What the daemon of ``root`` says of itself (pid, runs answered, seconds idle); None when none runs."""
    connection = connect(address(root))
    if connection is None:
        return None
    with connection:
        try:
            send(connection, {"status": True})
            return receive(connection)
        except (OSError, ValueError):
            return None


def connect(where: str) -> socket.socket | None:
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
_SERVE = "import sys; del sys.path[0]; from warplint.daemon_server import main; main(sys.argv[1:])"


def _start(where: str, root: str) -> None:
    """Start the daemon in a session of its own (it outlives this process and is no child of a terminal's job),
    in the socket's private directory."""
    command = [sys.executable, "-c", _SERVE, root, "--socket", where]
    with open(os.devnull, "rb") as nothing_in, open(os.devnull, "wb") as nothing_out:
        subprocess.Popen(command, stdin=nothing_in, stdout=nothing_out, stderr=nothing_out,
                         cwd=os.path.dirname(where), start_new_session=True, close_fds=True)


def _wait_for(where: str) -> socket.socket:
    deadline = time.monotonic() + START_SECONDS
    while time.monotonic() < deadline:
        connection = connect(where)
        if connection is not None:
            return connection
        time.sleep(0.02)
    raise Unavailable(f"the daemon started did not listen on {where} within {START_SECONDS:.0f} s")


# ---------------------------------------------------------------------------------------------------- the daemon

"""Reading source files as every front end reads them, and finding installed modules' files.

Light on purpose (the standard library only): the flake8 plugin's warm path computes the
result-cache key from these without importing the engine, LibCST or the rules, and the
engine reads through the same functions, so both get the same texts and the same key.
"""

from __future__ import annotations

import importlib.machinery
import io
import os
import stat
import tokenize


def decode(data: bytes) -> str:
    """Decode Python source honouring a PEP 263 coding line; UTF-8 otherwise."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError:
        encoding = "utf-8"
    try:
        text = data.decode(encoding)
    except (UnicodeDecodeError, LookupError):
        raise
    except Exception as exc:  # noqa: BLE001 - a codec's own failure (punycode: UnicodeError; a package's codec: anything)
        raise UnicodeDecodeError(encoding, data, 0, len(data), str(exc) or type(exc).__name__) from None
    return text[1:] if text.startswith("\ufeff") else text


class NotRegularFile(OSError):
    """A FIFO, a device, a socket or a directory where a file was expected."""

    def __init__(self) -> None:
        super().__init__("not a regular file")


class FileTooLarge(OSError):
    def __init__(self, size: int, limit: int) -> None:
        super().__init__(f"the file is {_bytes(size)}, over the limit of {_bytes(limit)}")
        self.size = size
        self.limit = limit


def read_regular(path: str, limit: int) -> bytes:
    """The bytes of the regular file ``path``, at most ``limit`` of them: the one way warplint reads a file it
    did not just write (sources, cache entries, config, artifacts). Opening a FIFO would block and a device
    never ends, so the open does not block and anything but a regular file is refused. Raises ``OSError``
    (``NotRegularFile``, ``FileTooLarge``, or what the system said)."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    try:
        info = os.fstat(fd)
        if _is_null_device(info):
            return b""  # `--config /dev/null`: empty, as the null device reads
        if not stat.S_ISREG(info.st_mode):
            raise NotRegularFile()
        if info.st_size > limit:
            raise FileTooLarge(info.st_size, limit)
        with os.fdopen(fd, "rb", closefd=False) as fh:
            data = fh.read(limit + 1)
    finally:
        os.close(fd)
    if len(data) > limit:  # it grew while we looked
        raise FileTooLarge(len(data), limit)
    return data


def leaves_tree(path: str, root: str) -> bool:
    """Whether ``path`` reaches, through a symlink, a file outside ``root``'s tree (both with links resolved).
    A path without a link is where the user put it: never said to leave."""
    real = os.path.realpath(path)
    if real == os.path.abspath(path):
        return False
    top = os.path.realpath(root)
    return os.path.commonpath([real, top]) != top


def write_refusal(path: str, root: str) -> str | None:
    """Why warplint must not rewrite ``path`` (``--fix``, ``--add-noqa``), or None. Not through a symlink
    that leaves ``root``'s tree (a cloned repository's ``x.py -> ~/.bashrc``); not a file the user cannot
    write (read-only, as ruff refuses it) or one of another user's (a rename in a writable directory would
    replace it, and its owner with it)."""
    if leaves_tree(path, root):
        return f"it is a symlink to {os.path.realpath(path)}, outside the project: not rewritten"
    target = os.path.realpath(path)
    try:
        info = os.stat(target)
    except OSError as exc:
        return f"cannot write it: {exc.strerror or exc}"
    if hasattr(os, "geteuid") and os.geteuid() != 0 and info.st_uid != os.geteuid():
        return "it belongs to another user: not rewritten"
    if not os.access(target, os.W_OK) or not info.st_mode & stat.S_IWUSR:
        return "it is read-only: not rewritten"
    return None


def reread_limit(text: str | None) -> int:
    """The most bytes a file whose text was ``text`` can hold in any encoding it was decoded from: reading it
    again to check it did not change needs no more (larger means changed)."""
    return 4 * len(text or "") + 4096


def _is_null_device(info: os.stat_result) -> bool:
    """``info`` is the system's null device (the one ``os.devnull`` names), which reads as empty."""
    if not stat.S_ISCHR(info.st_mode):
        return False
    try:
        null = os.stat(os.devnull)
    except OSError:
        return False
    return stat.S_ISCHR(null.st_mode) and null.st_rdev == info.st_rdev


def read_source(path: str, limit: int) -> tuple[str | None, str | None]:
    """(text, None) or (None, the one-line reason), through ``read_regular``."""
    try:
        data = read_regular(path, limit)
    except FileTooLarge as exc:
        return None, too_large(exc.size, limit)
    except OSError as exc:
        return None, f"cannot read file: {exc.strerror or exc}"
    try:
        return decode(data), None
    except (UnicodeDecodeError, LookupError) as exc:
        return None, f"cannot decode file: {exc}"


def too_large(size: int | None, limit: int) -> str:
    """The WC000 reason of a file over ``max-file-size`` (``size`` None: a stream, not read past the limit)."""
    what = "the input is" if size is None else f"the file is {_bytes(size)},"
    return (f"not checked: {what} over the max-file-size of {_bytes(limit)} "
            "(raise max-file-size in [tool.warplint] to check it)")


def text_over_limit(text: str, limit: int) -> int | None:
    """The size in bytes (UTF-8) of ``text`` when it is over ``limit``, else None: an editor's document or
    stdin gets the same limit as a file on disk."""
    if len(text) <= limit // 4:
        return None
    size = len(text) if len(text) > limit else len(text.encode("utf-8", "surrogatepass"))
    return size if size > limit else None


def _bytes(n: int) -> str:
    return f"{n / 2**20:.1f} MiB" if n >= 2**20 else f"{n:,} bytes"


def locate_installed(module: str) -> str | None:
    """Path of the source file for ``module`` in an installed package, never importing it.

    ``importlib.util.find_spec("pkg.sub")`` would import ``pkg``; PathFinder on the
    top-level name only searches sys.path, and the rest is joined as a path.
    """
    top, _, rest = module.partition(".")
    try:
        spec = importlib.machinery.PathFinder.find_spec(top)
    except (ImportError, ValueError):
        return None
    if spec is None:
        return None
    if spec.submodule_search_locations:
        for base in spec.submodule_search_locations:
            path = os.path.join(base, *rest.split(".")) if rest else base
            for candidate in (path + ".py", os.path.join(path, "__init__.py")):
                if os.path.isfile(candidate):
                    return candidate
        return None
    if not rest and spec.origin and spec.origin.endswith(".py"):
        return spec.origin
    return None

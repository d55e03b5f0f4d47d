"""The on-disk caches in ``.warplint_cache/``: per-file models, and per-project findings.

``ModelCache`` keeps the ``FileModel`` of every parsed file (the expensive part: LibCST
parse + extraction). Findings are cached only per project state (``ResultCache``: keyed by
every indexed file's path and digest and the effective config): when anything changed, the
rules run again over the whole project index, so a change in one file reaches every
file whose findings depend on it (an importer of a module whose kernels changed) with
no dependency tracking to get wrong.

Keys: an entry is used only if the file's content digest, its module name and
package-ness match, and the cache file itself belongs to the current *salt*: the
warplint version, the Warp facts version, the cache format, the Python and LibCST
versions, and the source of the engine modules that build models plus the source of
every rule module (rules add ``rule_facts`` to models, so adding or editing a rule
invalidates). A cache file written under another salt is ignored (and removed when
this one is saved).

Layout: ``<dir>/models-<salt>-<shard>.pickle`` (the models in ``MODEL_SHARDS`` files by a hash of the
path, so a run after one edit rewrites one shard, not every model of the project; each shard keeps, beside
the models, what each of its files imports, by the text's digest, for the module namer) and
``<dir>/results-<salt>.pickle`` (a warm run reads one file), ``<dir>/digests-<salt>.pickle``
(``StatDigests``, the flake8 plugin's warm path), plus a ``CACHEDIR.TAG`` and a ``.gitignore``
of ``*``; beside the user's secret, ``rules-<salt>.pickle`` (``registry.rule_table``). Writes go to a temporary file and
are renamed into place (``os.replace``); a cache that cannot be read (corrupt,
truncated, other format) is treated as empty, one that cannot be written is skipped:
the cache never makes a run fail.

Trust: a cache directory can come from anywhere (a cloned repository may ship one), and
unpickling runs code. So every cache file is authenticated: it starts with a keyed BLAKE2b
tag over its kind, salt and payload, made with a per-user secret kept outside every project
(``user_secret``: ``$XDG_CACHE_HOME/warplint/cache-key``, mode 0600). A file whose tag does
not verify is never unpickled -- it is a miss, and rewritten on save. Without a usable secret
(no writable home, a key file others can read) there is no cache. After the tag checks, every
entry's shape is still validated before use: anything unexpected is a miss.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import re
import stat
import sys
import tempfile
import time
import zlib
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from .sources import read_regular

if TYPE_CHECKING:  # imported where used: the flake8 plugin's warm path reads no model
    from .model import FileModel

CACHE_FORMAT = 6
MAGIC = b"warplint-cache-6\n"
TAG_SIZE = 32
SECRET_SIZE = 32
# The most warplint reads of one cache file, and of a source file it hashes: a cloned repository can plant a
# FIFO, a link to /dev/zero or a huge file under a predictable name (sources.read_regular refuses the first two).
CACHE_FILE_LIMIT = 2**30
HASHED_FILE_LIMIT = 2**26
DEFAULT_DIRNAME = ".warplint_cache"
CACHEDIR_TAG = (
    "Signature: 8a477f597d28d172789f06886806bc55\n"
    "# This file is a cache directory tag created by warplint.\n"
    "# For information about cache directory tags see https://bford.info/cachedir/\n"
)
# Engine modules whose code decides what a model contains, or (results cache) what the rules conclude.
_MODEL_MODULES = ("extract", "model", "locate", "names", "facts", "fastwalk", "engine", "cache", "diagnostic",
                  "parse_guard", "index", "warp_api", "warp_version", "warp_versions_data",
                  "noqa", "edits", "rule",  # suppressions and WC001, the fixes' edits, Report: in cached findings
                  "registry", "sources")  # WC000/WC001 are defined in the registry; how files are read and decoded


def digest(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


_SOURCE_DIGESTS: dict[tuple, str] = {}  # (path, stat signature)... -> digest, for this process


def _source_digest(named: Iterable[tuple[str, str]]) -> str | None:
    """A digest of (name, path) files: their names (where they sit in warplint, not on disk: the same
    warplint installed in two environments, a venv and pre-commit's, must share the project's cache) and
    their bytes."""
    labels = {path: name for name, path in named}
    files = sorted(labels, key=lambda path: (labels[path], path))  # in the names' order, the same everywhere
    try:  # a run asks for the salt several times (selection, models, results): read the sources once
        stats = [(path, os.stat(path)) for path in files]
        signature = tuple((p, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev) for p, st in stats)
    except OSError:
        return None
    known = _SOURCE_DIGESTS.get(signature)
    if known is not None:
        return known
    # Kept for the user by the files' stat signatures (as ``StatDigests`` keeps a project's): reading and
    # hashing warplint's ~130 sources was a third of a warm run. Kept only when the newest change is over
    # ``StatDigests.RACY_NS`` old (a rewrite within the timestamps' granularity would look unchanged).
    key = hashlib.blake2b(repr((sorted(labels.items()), signature)).encode(), digest_size=10).hexdigest()
    kept = load_user_entry("sources", key)
    if kept is not None and isinstance(kept.get("digest"), str):
        _SOURCE_DIGESTS[signature] = kept["digest"]
        return kept["digest"]
    h = hashlib.blake2b(digest_size=16)
    for path in files:
        try:
            h.update(labels[path].encode() + b"\0" + read_regular(path, HASHED_FILE_LIMIT) + b"\0")
        except OSError:
            return None
    _SOURCE_DIGESTS[signature] = found = h.hexdigest()
    newest = max((max(st.st_mtime_ns, st.st_ctime_ns) for _, st in stats), default=0)
    if time.time_ns() - newest > StatDigests.RACY_NS:
        store_user_entry("sources", key, {"digest": found})
    return found


def _libcst_version() -> str:
    """LibCST's version from its distribution, without importing LibCST (or ``importlib.metadata``, a tenth
    of a warm run): the one ``libcst-VERSION.dist-info`` beside the package, else what metadata says."""
    import importlib.util

    try:
        spec = importlib.util.find_spec("libcst")
        origin = spec.origin if spec is not None else None
        if origin:
            site = os.path.dirname(os.path.dirname(origin))
            found = [n[len("libcst-"):-len(".dist-info")] for n in os.listdir(site)
                     if n.startswith("libcst-") and n.endswith(".dist-info")]
            if len(found) == 1:
                return found[0]
    except (ImportError, OSError, ValueError):
        pass
    from importlib import metadata

    try:
        return metadata.version("libcst")
    except metadata.PackageNotFoundError:
        return "?"


def registry_salt() -> str | None:
    """The salt of the registry's rules (``registry.salt_for(all_rules())``) without importing a rule, LibCST or
    the engine (the flake8 plugin's warm path): they are the modules of ``warplint.rules``, whose sources are
    hashed."""
    return rules_salt([], "registry")


def rules_salt(rule_files: list[str], codes: str) -> str | None:
    """The cache salt for this warplint with the rules of ``rule_files`` (besides every module of
    ``warplint.rules``, always hashed) and ``codes``; None when a source cannot be read (no cache).
    ``registry.salt_for`` picks the arguments for a rule set."""
    from . import __version__
    from .facts import WARP_FACTS_VERSION

    here = os.path.dirname(os.path.abspath(__file__))
    files = [os.path.join(here, f"{name}.py") for name in _MODEL_MODULES] + rule_files
    # The semantic layer (warplint/semantic/*.py) decides what the rules conclude (results cache).
    semantic_dir = os.path.join(here, "semantic")
    if os.path.isdir(semantic_dir):
        files += [os.path.join(semantic_dir, n) for n in os.listdir(semantic_dir) if n.endswith(".py")]
    # Every module of the rules package: the rules and the helpers they share (rules/_*.py).
    rules_dir = os.path.join(here, "rules")
    try:
        import warplint.rules as package

        rules_dir = next(iter(package.__path__))
        files += [os.path.join(rules_dir, n) for n in os.listdir(rules_dir) if n.endswith(".py")]
    except (ImportError, OSError, StopIteration):
        pass
    def label(path: str) -> str:  # rules/ sits beside warplint/ in a checkout and inside it when installed
        if os.path.dirname(path) == rules_dir:
            return "rules/" + os.path.basename(path)
        return os.path.relpath(path, here).replace(os.sep, "/")

    sources = _source_digest((label(path), path) for path in files)
    if sources is None:
        return None
    libcst_version = _libcst_version()  # the distribution's, not libcst.__version__: no LibCST imported
    key = "|".join(
        (str(CACHE_FORMAT), __version__, WARP_FACTS_VERSION, sys.version, libcst_version, codes, sources)
    )
    return hashlib.blake2b(key.encode(), digest_size=10).hexdigest()


def run_key(config: Any, enabled: Iterable[str], warp_key: str,
            files: Iterable[tuple[str, str | None, str | None]]) -> str:
    """The results key (``Session._run_key`` says what it covers): ``config`` (its select, extend-select
    and ignore count through ``enabled``, the codes they leave), ``warp_key`` (which Warp's facts the
    rules use), ``files`` as (absolute path, digest of its text or None, why it could not be read)."""
    h = hashlib.blake2b(digest_size=20)
    settings = {k: v for k, v in config.__dict__.items()
                if k not in ("cache_dir", "select", "extend_select", "ignore", "daemon")}  # (who answers: the same)
    h.update(repr((sorted(settings.items(), key=lambda kv: kv[0]), sorted(enabled))).encode())
    h.update(warp_key.encode())
    # module names follow the import roots the project's packaging declares outside [tool.warplint]
    from .module_names import declared_roots

    h.update(repr(sorted(declared_roots(config.root, getattr(config, "src", ())))).encode())
    for absolute, text_digest, error in sorted(files, key=lambda e: e[0]):
        h.update(b"\0" + absolute.encode("utf-8", "surrogatepass"))
        h.update(b"\1" + (text_digest if text_digest is not None else f"error:{error}").encode())
    return h.hexdigest()


def secret_path() -> str:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "warplint", "cache-key")


_SECRETS: dict[str, bytes | None] = {}


def user_secret() -> bytes | None:
    """This user's cache key (made on first use); None when none can be kept safely."""
    path = secret_path()
    if path not in _SECRETS:
        _SECRETS[path] = _read_secret(path) or _create_secret(path)
    return _SECRETS[path]


def _read_secret(path: str) -> bytes | None:

    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size != SECRET_SIZE:
            return None
        # Someone else who can read (or replace) the key could forge cache files.
        if hasattr(os, "getuid") and (info.st_uid != os.getuid() or info.st_mode & 0o077):
            return None
        data = os.read(fd, SECRET_SIZE + 1)
    except OSError:
        return None
    finally:
        os.close(fd)
    return data if len(data) == SECRET_SIZE else None


def _create_secret(path: str) -> bytes | None:
    """Write a new key with O_EXCL semantics (``os.link`` of a private temp file): when two
    processes race, both end up using the one that landed."""
    directory = os.path.dirname(path)
    try:
        os.makedirs(directory, mode=0o700, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".tmp-key-", dir=directory)  # mkstemp files are 0600
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(os.urandom(SECRET_SIZE))
            try:
                os.link(tmp, path)
            except FileExistsError:
                pass
        finally:
            os.unlink(tmp)
    except OSError:
        return None
    return _read_secret(path)


USER_KEEP = 8  # salts whose user-level entries are kept (warplint versions installed side by side)


def load_user_entry(kind: str, salt: str) -> dict | None:
    """The payload this user's warplint kept for ``kind`` under ``salt``, outside every project (beside the
    key), else None."""
    secret = user_secret()
    if secret is None:
        return None
    data, _ = _load_sealed(os.path.join(os.path.dirname(secret_path()), f"{kind}-{salt}.pickle"), secret, kind, salt)
    return data


def store_user_entry(kind: str, salt: str, payload: dict) -> None:
    """Keep ``payload`` for ``load_user_entry``; of ``kind``, the newest ``USER_KEEP`` salts stay (not only
    this one: two installed versions would remove each other's). Failures are ignored."""
    secret = user_secret()
    if secret is None:
        return
    directory = os.path.dirname(secret_path())
    body = pickle.dumps({**payload, "format": CACHE_FORMAT, "salt": salt}, protocol=pickle.HIGHEST_PROTOCOL)
    try:
        _write_atomic(os.path.join(directory, f"{kind}-{salt}.pickle"), seal(secret, kind, salt, body))
        others = [os.path.join(directory, n) for n in os.listdir(directory)
                  if n.startswith(f"{kind}-") and n.endswith(".pickle")]
        others.sort(key=lambda p: os.stat(p).st_mtime, reverse=True)
        for old in others[USER_KEEP:]:
            if is_own_file(old):
                os.unlink(old)
    except OSError:
        pass


def _tag(secret: bytes, kind: str, salt: str, payload: bytes | memoryview) -> bytes:
    h = hashlib.blake2b(key=secret, digest_size=TAG_SIZE, person=b"warplint-cache")
    h.update(f"{kind}\0{salt}\0".encode())
    h.update(payload)
    return h.digest()


def seal(secret: bytes, kind: str, salt: str, payload: bytes) -> bytes:
    """The bytes of a cache file: magic, tag, payload."""
    return MAGIC + _tag(secret, kind, salt, payload) + payload


def unseal(secret: bytes, kind: str, salt: str, data: bytes) -> memoryview | None:
    """The payload of a cache file written with this user's secret for ``kind``/``salt``, else None."""
    import hmac

    head = len(MAGIC) + TAG_SIZE
    if len(data) < head or not data.startswith(MAGIC):
        return None
    payload = memoryview(data)[head:]
    if not hmac.compare_digest(data[len(MAGIC):head], _tag(secret, kind, salt, payload)):
        return None
    return payload


def _signature(path: str) -> tuple | None:
    """What tells a cache file another process replaced apart from the one read or written here."""
    try:
        found = os.stat(path)
    except OSError:
        return None
    return (found.st_mtime_ns, found.st_size, found.st_ino)


def _load_sealed(path: str, secret: bytes, kind: str, salt: str) -> tuple[dict | None, bool]:
    """(payload dict or None, whether a file was there). Unpickles only authenticated bytes."""
    try:
        data = read_regular(path, CACHE_FILE_LIMIT)
    except FileNotFoundError:
        return None, False
    except OSError:
        return None, True
    payload = unseal(secret, kind, salt, data)
    if payload is None:
        return None, True
    try:
        loaded = pickle.loads(payload)
    except Exception:  # noqa: BLE001 - our own bytes, but from an older/broken run: a miss
        return None, True
    if not (isinstance(loaded, dict) and loaded.get("format") == CACHE_FORMAT and loaded.get("salt") == salt):
        return None, True
    return loaded, True


def default_directory(root: str, configured: str | None) -> str:
    if configured:
        return configured if os.path.isabs(configured) else os.path.join(root, configured)
    return os.path.join(root, DEFAULT_DIRNAME)


MODEL_SHARDS = 16


def _shard_of(absolute: str) -> int:
    return zlib.crc32(absolute.encode("utf-8", "surrogatepass")) % MODEL_SHARDS


class ModelCache:
    """Models by absolute path, each with the digest of the text it was built from."""

    def __init__(self, directory: str, salt: str, secret: bytes, named: bool = False) -> None:
        self.directory = os.path.abspath(directory)
        self.named = named  # the user named the directory: written even when warplint did not make it
        self.salt = salt
        self.secret = secret
        # path -> (digest, module, is_package, pickled model, noqa signature): models are unpickled on
        # use, so a run over a few files does not pay for the whole project's models.
        self.entries: dict[str, tuple[str, str, bool, bytes, str]] = {}
        # path -> (digest, what its text imports: ``module_names.imports_of``), kept for the module namer
        self._imports: dict[str, tuple[str, tuple[list[str], bool]]] = {}
        self._dirty: set[int] = set()
        self.hits = 0
        self.misses = 0
        self._loaded = False
        self._signatures: dict[int, tuple | None] = {}  # shard -> its file as last read or written here
        self.held = False  # writes wait for ``flush``

    def shard_path(self, shard: int) -> str:
        return os.path.join(self.directory, f"models-{self.salt}-{shard}.pickle")

    def changed(self, absolute: str) -> None:
        """``absolute``'s entry changed: its shard is written on save."""
        self._dirty.add(_shard_of(absolute))

    def load(self) -> None:
        if self._loaded:
            return
        self._loaded = True
        self._read_shards(range(MODEL_SHARDS))

    def flush(self) -> None:
        """Write what ``held`` kept back."""
        held, self.held = self.held, False
        self.save()
        self.held = held

    def refresh(self) -> None:
        """Read again the shards another process wrote since this object read or wrote them (a daemon keeps
        its cache across runs; a shard with changes of its own not yet saved is kept as it is)."""
        if not self._loaded:
            return
        stale = [shard for shard in range(MODEL_SHARDS)
                 if shard not in self._dirty and _signature(self.shard_path(shard)) != self._signatures.get(shard)]
        if stale:
            for table in (self.entries, self._imports):
                for absolute in [a for a in table if _shard_of(a) in stale]:
                    del table[absolute]
            self._read_shards(stale)

    def _read_shards(self, shards: Iterable[int]) -> None:
        def read(shard: int) -> tuple[dict | None, bool]:
            path = self.shard_path(shard)
            self._signatures[shard] = _signature(path)  # (before reading: a file replaced meanwhile reads stale)
            return _load_sealed(path, self.secret, "models", f"{self.salt}-{shard}")

        # Reading and authenticating a shard (hashlib lets go of the GIL over large buffers) overlaps with
        # unpickling another: a third of the load on a large project.
        from concurrent.futures import ThreadPoolExecutor

        shards = list(shards)
        with ThreadPoolExecutor(max_workers=2, thread_name_prefix="warplint-cache") as pool:
            loaded = list(pool.map(read, shards))
        for shard, (data, present) in zip(shards, loaded, strict=True):
            if data is not None and isinstance(data.get("entries"), dict):
                self.entries.update(data["entries"])
                if isinstance(data.get("imports"), dict):
                    self._imports.update(data["imports"])
            elif present:  # corrupt, truncated, foreign or planted: start it empty, rewrite on save
                self._dirty.add(shard)

    def get(self, absolute: str, text_digest: str, path: str, module: str, is_package: bool) -> FileModel | None:
        from .model import FileModel

        self.load()
        entry = self.entries.get(absolute)
        if (
            not isinstance(entry, tuple)
            or len(entry) != 5
            or entry[0] != text_digest
            or entry[1] != module
            or entry[2] != is_package
            or not isinstance(entry[3], bytes)
            or not entry[3]  # only the digest of a file that was not parsed (``remember``)
        ):
            self.misses += 1
            return None
        try:
            model = pickle.loads(entry[3])
        except Exception:  # noqa: BLE001 - a damaged entry is a miss
            model = None
        if not isinstance(model, FileModel):
            self.misses += 1
            return None
        self.hits += 1
        if model.path != path:
            model.path = path
        return model

    def imports(self, absolute: str, text_digest: str) -> tuple[list[str], bool] | None:
        """What the text of ``absolute`` with this digest imports, when an earlier run kept it."""
        self.load()
        entry = self._imports.get(absolute)
        if not (isinstance(entry, tuple) and len(entry) == 2 and entry[0] == text_digest):
            return None
        known = entry[1]
        if not (isinstance(known, tuple) and len(known) == 2 and isinstance(known[0], list)
                and all(isinstance(name, str) for name in known[0]) and isinstance(known[1], bool)):
            return None
        return known

    def keep_imports(self, absolute: str, text_digest: str, imports: tuple[list[str], bool]) -> None:
        self.load()
        self._imports[absolute] = (text_digest, imports)
        self.changed(absolute)

    def knows(self, absolute: str, text_digest: str) -> bool:
        """Whether an earlier run saw this text of the file (kept its model, or only its digest)."""
        self.load()
        entry = self.entries.get(absolute)
        return isinstance(entry, tuple) and len(entry) == 5 and entry[0] == text_digest

    def previous(self, absolute: str) -> tuple[str, str, FileModel] | None:
        """(text digest, noqa signature, model) of the entry kept for ``absolute``, whatever text it was
        built from: what a changed file's model was (a comment added leaves it as it was)."""
        from .model import FileModel

        self.load()
        entry = self.entries.get(absolute)
        if not (isinstance(entry, tuple) and len(entry) == 5 and isinstance(entry[3], bytes) and entry[3]):
            return None
        try:
            model = pickle.loads(entry[3])
        except Exception:  # noqa: BLE001 - a damaged entry is a miss
            return None
        return (entry[0], entry[4], model) if isinstance(model, FileModel) else None

    def remember(self, absolute: str, text_digest: str, module: str, is_package: bool) -> None:
        """Keep only the digest of a file the prefilter did not parse (no model): the next run can tell
        it did not change. A later ``put`` of its parsed model replaces it."""
        self.load()
        entry = self.entries.get(absolute)
        if entry is None or entry[0] != text_digest:
            self.entries[absolute] = (text_digest, module, is_package, b"", "")
            self.changed(absolute)

    def put(self, absolute: str, text_digest: str, model: FileModel, blob: bytes | None = None,
            noqa: str = "") -> None:
        """Keep ``model`` (``blob``: the model already pickled, e.g. by a worker; ``noqa``: the signature of
        the text's noqa lines, which the findings read besides the model)."""
        self.load()
        if model.error is not None and model.error.startswith(("cannot read", "cannot decode")):
            return
        if blob is None:
            try:
                blob = pickle.dumps(model, protocol=pickle.HIGHEST_PROTOCOL)
            except (pickle.PicklingError, RecursionError, TypeError, AttributeError):
                return
        self.entries[absolute] = (text_digest, model.module, model.is_package, blob, noqa)
        self.changed(absolute)

    def save(self) -> bool:
        """Write the shards that changed; False when one could not be written (ignored). Held while ``held``
        (a daemon writes once its answer is out: ``flush``)."""
        if not self._dirty or self.held:
            return True
        for absolute in [a for a in self.entries if not os.path.exists(a)]:
            del self.entries[absolute]  # deleted or renamed files
            self.changed(absolute)
        for absolute in [a for a in self._imports if a not in self.entries and not os.path.exists(a)]:
            del self._imports[absolute]
            self.changed(absolute)
        shards: dict[int, dict] = {shard: {} for shard in self._dirty}
        imports: dict[int, dict] = {shard: {} for shard in self._dirty}
        for absolute, entry in self.entries.items():
            part = shards.get(_shard_of(absolute))
            if part is not None:
                part[absolute] = entry
        for absolute, known in self._imports.items():
            part = imports.get(_shard_of(absolute))
            if part is not None:
                part[absolute] = known
        for shard, entries in sorted(shards.items()):
            payload = {"format": CACHE_FORMAT, "salt": f"{self.salt}-{shard}", "entries": entries,
                       "imports": imports[shard]}
            if not _replace_sealed(self.directory, self.shard_path(shard), "models", f"{self.salt}-{shard}",
                                   self.secret, payload, keep=f"models-{self.salt}-", named=self.named):
                return False
            self._signatures[shard] = _signature(self.shard_path(shard))
            self._dirty.discard(shard)
        return True


GITIGNORE = "# Created by warplint automatically.\n*\n"


def leaves_root(directory: str, root: str) -> bool:
    """Whether ``directory``, links resolved, is not strictly inside ``root``'s tree (links resolved): a
    ``.warplint_cache`` symlinked elsewhere, or a ``cache-dir`` of a cloned project's config naming ``~``."""
    real, top = os.path.realpath(directory), os.path.realpath(root)
    return os.path.commonpath([real, top]) != top or real == top


def _claim_directory(directory: str, named: bool) -> bool:
    """Whether warplint may write into ``directory``: one it makes now (or an empty one), one that holds
    warplint's ``CACHEDIR.TAG``, or one the user named (``--cache-dir``). A directory of someone else's --
    a home directory a symlink or a cloned config points at -- gets no tag, no ``.gitignore`` of ``*``, no
    cache file, and nothing in it is deleted. The tag files are written when missing."""
    if not os.path.lexists(directory):
        os.makedirs(directory, exist_ok=True)
    elif not (named or _is_warplint_directory(directory)):
        try:
            if os.listdir(directory):
                return False
        except OSError:
            return False
    for name, content in (("CACHEDIR.TAG", CACHEDIR_TAG), (".gitignore", GITIGNORE)):
        path = os.path.join(directory, name)
        if not os.path.exists(path):
            _write_atomic(path, content)
    return True


def _is_warplint_directory(directory: str) -> bool:
    try:
        return read_regular(os.path.join(directory, "CACHEDIR.TAG"), 4096) == CACHEDIR_TAG.encode()
    except OSError:
        return False


# What a file warplint leaves in a cache directory starts with (a temp file: a prefix of one of these).
_OWN_HEADS = (MAGIC[:len(b"warplint-cache-")], CACHEDIR_TAG.encode(), GITIGNORE.encode())
_OWN_NAME = re.compile(
    r"(?:(?:models|results|digests|rules|sources)-[0-9a-f]{20}(?:-\d+)?\.pickle|\.tmp-[A-Za-z0-9_]{8})\Z")


def is_own_file(path: str) -> bool:
    """Whether ``path`` is a file warplint wrote: its naming, a regular file (not a link), this user's, and a
    header of warplint's (a cache file's magic of any format; a temp file's bytes a prefix of one)."""
    if not _OWN_NAME.match(os.path.basename(path)):
        return False
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return False
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or (hasattr(os, "getuid") and info.st_uid != os.getuid()):
            return False
        head = os.read(fd, 64)
    except OSError:
        return False
    finally:
        os.close(fd)
    if head.startswith(_OWN_HEADS[0]):
        return re.match(rb"warplint-cache-\d+\n", head) is not None
    temp = os.path.basename(path).startswith(".tmp-")
    return temp and any(own.startswith(head[:len(own)]) for own in _OWN_HEADS)


def _write_atomic(path: str, content: str | bytes) -> None:
    """Write to a temp file beside ``path``, then rename: readers never see half a file."""
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=os.path.dirname(path))
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(content.encode("utf-8") if isinstance(content, str) else content)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


class ResultCache:
    """Project results: the findings of a project's files, per file, by a key over every input
    that can change them (see ``Session._run_key``: every file the project indexes, the config),
    plus the installed-package files the rules read (re-checked on use). An entry holds the
    files checked so far under that key; a run that names other files adds theirs. A warm run
    with nothing changed needs no models at all: read, hash, look up, report -- the CLI on the
    tree or on one file, pre-commit and flake8 alike."""

    KEEP = 16  # different projects or configs (a select narrowed in flake8, ...)

    def __init__(self, directory: str, salt: str, secret: bytes, named: bool = False) -> None:
        self.directory = os.path.abspath(directory)
        self.named = named
        self.path = os.path.join(self.directory, f"results-{salt}.pickle")
        self.salt = salt
        self.secret = secret
        self._entries: dict | None = None
        self._used: set[str] = set()  # keys this run read or wrote: never evicted by it
        self._runs: dict[str, str] = {}  # key -> the run that last wrote or read it (``_run``)
        self._run = f"{os.getpid()}-{time.time_ns()}"
        self._signature: tuple | None = None  # the file as last read or written here
        self.held = False  # ``put`` keeps its entry in memory, written by ``flush`` (a daemon's, once it answered)
        self._unwritten = False

    def start_run(self) -> None:
        """Another run over this object (a daemon keeps its cache across runs): what the last one used may be
        evicted, and the file is read again if another process wrote it since."""
        self._used = set()
        self._run = f"{os.getpid()}-{time.time_ns()}"
        if self._entries is not None and not self._unwritten and _signature(self.path) != self._signature:
            self._entries = None

    def _load(self) -> dict:
        if self._entries is None:
            self._signature = _signature(self.path)
            data, _ = _load_sealed(self.path, self.secret, "results", self.salt)
            entries = data.get("entries") if data is not None else None
            self._entries = entries if isinstance(entries, dict) else {}
            runs = data.get("runs") if data is not None else None
            self._runs = {k: runs.get(k, "") for k in self._entries} if isinstance(runs, dict) else {}
        return self._entries

    def get(self, key: str) -> dict | None:
        self._used.add(key)
        if key in self._load():
            self._runs[key] = self._run
        entry = self._load().get(key)
        if not _valid_result(entry):
            return None
        assert isinstance(entry, dict)
        for path, expected in entry["externals"]:
            try:
                data: bytes | None = read_regular(path, HASHED_FILE_LIMIT)
            except OSError:
                data = None
            found = None if data is None else hashlib.blake2b(data, digest_size=16).hexdigest()
            if found != expected:
                return None
        return entry

    def put(self, key: str, entry: dict, *also: str) -> None:
        """Keep ``entry`` under ``key`` (and the keys ``also``: one entry, several keys); one write."""
        entries = self._load()
        for k in (key, *also):
            entries.pop(k, None)
            entries[k] = entry
            self._used.add(k)
            self._runs[k] = self._run
        # Entries are evicted by run, the oldest runs first, keeping KEEP earlier runs and every entry this run
        # uses. A run over more projects than KEEP (a tree of loose scripts, each folder its own project; newton's
        # 34) asks for the earlier run's entries one project after another: evicting entry by entry dropped
        # each just before it was asked for, so after one edit every project was checked again.
        stale_runs: list[str] = []
        for k in entries:
            run = self._runs.get(k, "")
            if k not in self._used and run not in stale_runs:
                stale_runs.append(run)
        dropped = set(stale_runs[:max(0, len(stale_runs) - self.KEEP)])
        for k in [k for k in entries if k not in self._used and self._runs.get(k, "") in dropped]:
            entries.pop(k)
            self._runs.pop(k, None)
        self._unwritten = True
        if not self.held:
            self.flush()

    def flush(self) -> None:
        """Write the entries ``put`` kept in memory."""
        if not self._unwritten or self._entries is None:
            return
        self._unwritten = False
        entries = self._entries
        payload = {"format": CACHE_FORMAT, "salt": self.salt, "entries": entries,
                   "runs": {k: self._runs.get(k, "") for k in entries}}
        if _replace_sealed(self.directory, self.path, "results", self.salt, self.secret, payload, named=self.named):
            self._signature = _signature(self.path)


class StatDigests:
    """Text digests of files by their stat signature (size, mtime, ctime, inode, device): a warm run tells
    that nothing changed without reading and hashing every file of the project (the flake8 plugin's warm
    path, ``_cached``). A signature is kept only when the file's last change is ``RACY_NS`` older than the
    look: a file written again within the timestamps' granularity, same size, would otherwise look
    unchanged (git's "racy" entries). Any change of content changes the ctime, which no tool sets back."""

    RACY_NS = 2_000_000_000

    def __init__(self, directory: str, salt: str, secret: bytes, named: bool = False) -> None:
        self.directory = os.path.abspath(directory)
        self.named = named
        self.path = os.path.join(self.directory, f"digests-{salt}.pickle")
        self.salt = salt
        self.secret = secret
        self._entries: dict | None = None
        self._listings: dict | None = None
        self.dirty = False

    def _load(self) -> dict:
        if self._entries is None:
            data, _ = _load_sealed(self.path, self.secret, "digests", self.salt)
            entries = data.get("entries") if data is not None else None
            listings = data.get("listings") if data is not None else None
            self._entries = entries if isinstance(entries, dict) else {}
            self._listings = listings if isinstance(listings, dict) else {}
        return self._entries

    def digest_of(self, absolute: str, limit: int) -> tuple[str | None, str | None]:
        """(digest of the text ``sources.read_source(absolute, limit)`` reads, None) or (None, why not)."""
        import time

        from .sources import read_source

        entries = self._load()
        try:
            info = os.stat(absolute)
        except OSError:
            info = None
        signature = None
        if info is not None and stat.S_ISREG(info.st_mode) and info.st_size <= limit:
            signature = (info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino, info.st_dev)
            known = entries.get(absolute)
            if isinstance(known, tuple) and len(known) == 2 and known[0] == signature and isinstance(known[1], str):
                return known[1], None
        text, error = read_source(absolute, limit)  # read after the look: a write in between changes the ctime
        if text is None:
            return None, error
        found = digest(text)
        if signature is not None and time.time_ns() - max(signature[1], signature[2]) > self.RACY_NS:
            entries[absolute] = (signature, found)
            self.dirty = True
        return found, None

    def listing(self, key: str, root: str, prune: Callable[[str], bool],
                compute: Callable[[], tuple[list[str], list[str]]]) -> tuple[list[str], list[str]]:
        """``compute()`` (a recursive discovery listing of ``root`` under the settings ``key`` names, and the
        notes discovery made on the way), or what it gave before when no directory under ``root`` it could
        have walked changed since: the signature covers every directory (``prune``: names discovery never
        enters, whatever the config), each ``.gitignore`` in them and each symlink's target (a new, removed
        or renamed entry changes its directory's mtime). Kept only when nothing in it changed in the last
        ``RACY_NS``."""
        import time

        signature, newest = _tree_signature(root, prune)
        self._load()
        assert self._listings is not None
        known = self._listings.get(key)
        if (isinstance(known, tuple) and len(known) == 3 and known[0] == signature and isinstance(known[1], list)
                and isinstance(known[2], list)):
            return known[1], known[2]
        files, notes = compute()
        if time.time_ns() - newest > self.RACY_NS:
            self._listings[key] = (signature, list(files), list(notes))
            self.dirty = True
        return files, notes

    def save(self) -> None:
        if not self.dirty:
            return
        entries = {a: e for a, e in self._load().items() if os.path.exists(a)}
        payload = {"format": CACHE_FORMAT, "salt": self.salt, "entries": entries, "listings": self._listings}
        if _replace_sealed(self.directory, self.path, "digests", self.salt, self.secret, payload, named=self.named):
            self.dirty = False


def _tree_signature(root: str, prune: Callable[[str], bool]) -> tuple[list, int]:
    """(the sorted signature of what a walk of ``root`` sees, the newest change time in it)."""

    signature: list[tuple] = []
    newest = 0
    stack = [root]
    while stack:
        directory = stack.pop()
        try:
            info = os.stat(directory)
            entries = list(os.scandir(directory))
        except OSError:
            signature.append((directory, "unreadable"))
            continue
        signature.append((directory, info.st_mtime_ns, info.st_ctime_ns, info.st_ino, info.st_dev))
        newest = max(newest, info.st_mtime_ns, info.st_ctime_ns)
        for entry in entries:
            try:
                if entry.is_symlink():  # not walked into (os.walk does not follow links); its target's kind counts
                    target = os.stat(entry.path)
                    signature.append((entry.path, "link", stat.S_IFMT(target.st_mode), target.st_ino))
                elif entry.name == ".gitignore":
                    gi = entry.stat()
                    signature.append((entry.path, gi.st_size, gi.st_mtime_ns, gi.st_ctime_ns, gi.st_ino))
                    newest = max(newest, gi.st_mtime_ns, gi.st_ctime_ns)
                elif entry.is_dir(follow_symlinks=False) and not prune(entry.name):
                    stack.append(entry.path)
            except OSError:
                signature.append((entry.path, "gone"))
    signature.sort(key=repr)
    return signature, newest


def _valid_result(entry: object) -> bool:
    """A results entry as ``Session`` writes it: per absolute path (whether it was parsed, its
    Diagnostics), the installed files read as (path, digest) pairs, the modules not found."""
    from .diagnostic import Diagnostic

    if not isinstance(entry, dict):
        return False
    files, externals, missing = entry.get("files"), entry.get("externals"), entry.get("missing")
    return (
        isinstance(files, dict)
        and all(isinstance(path, str) and isinstance(found, tuple) and len(found) == 2
                and isinstance(found[0], bool) and isinstance(found[1], list)
                and all(isinstance(d, Diagnostic) for d in found[1]) for path, found in files.items())
        and isinstance(externals, list)
        and all(isinstance(e, tuple) and len(e) == 2 and isinstance(e[0], str) for e in externals)
        and isinstance(missing, list) and all(isinstance(m, str) for m in missing)
    )


def file_digest(path: str) -> str | None:
    try:
        return hashlib.blake2b(read_regular(path, HASHED_FILE_LIMIT), digest_size=16).hexdigest()
    except OSError:
        return None


STALE_TEMP_S = 600.0  # a temp file this old is left from a killed run, not a write in progress


def _replace_sealed(directory: str, path: str, kind: str, salt: str, secret: bytes, payload: dict,
                    keep: str | None = None, named: bool = False) -> bool:
    """Write ``payload`` sealed to ``path`` atomically (temp file + rename), then drop this kind's
    files of other salts (other versions / rule sets; files named ``keep...`` stay: the other shards)
    and temp files of killed runs -- only files ``is_own_file`` recognises. False when it could not be
    written, or may not be (``_claim_directory``; ``named``: the user named the directory)."""
    import time

    try:
        if not _claim_directory(directory, named):
            return False
        _write_atomic(path, seal(secret, kind, salt, pickle.dumps(payload, protocol=pickle.HIGHEST_PROTOCOL)))
        now = time.time()
        for name in os.listdir(directory):
            other = os.path.join(directory, name)
            stale_kind = (name.startswith(f"{kind}-") and name.endswith(".pickle") and name != os.path.basename(path)
                          and not (keep and name.startswith(keep)))
            try:
                if (stale_kind or (name.startswith(".tmp-") and now - os.lstat(other).st_mtime > STALE_TEMP_S)
                        ) and is_own_file(other):
                    os.unlink(other)
            except OSError:
                pass
    except (OSError, pickle.PicklingError, RecursionError, TypeError, AttributeError):
        return False
    return True

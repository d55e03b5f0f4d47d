"""The on-disk caches in ``.warplint_cache/``: per-file models, and whole-run findings.

``ModelCache`` keeps the ``FileModel`` of every parsed file (the expensive part: LibCST
parse + extraction). Findings are cached only per whole run (``ResultCache``: keyed by
every file's path and digest and the effective config): when anything changed, the
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

Layout: ``<dir>/models-<salt>.pickle`` and ``<dir>/results-<salt>.pickle`` (a warm run
reads one file), plus a ``CACHEDIR.TAG`` and a ``.gitignore`` of ``*``. Writes go to a temporary file and
are renamed into place (``os.replace``); a cache that cannot be read (corrupt,
truncated, other format) is treated as empty, one that cannot be written is skipped:
the cache never makes a run fail.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import sys
import tempfile
from typing import Iterable

from .model import FileModel

CACHE_FORMAT = 2
DEFAULT_DIRNAME = ".warplint_cache"
CACHEDIR_TAG = (
    "Signature: 8a477f597d28d172789f06886806bc55\n"
    "# This file is a cache directory tag created by warplint.\n"
    "# For information about cache directory tags see https://bford.info/cachedir/\n"
)
# Engine modules whose code decides what a model contains.
_MODEL_MODULES = ("extract", "model", "locate", "names", "facts", "fastwalk", "engine", "cache", "diagnostic")


def digest(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


def _source_digest(paths: Iterable[str]) -> str | None:
    h = hashlib.blake2b(digest_size=16)
    for path in sorted(set(paths)):
        try:
            with open(path, "rb") as fh:
                h.update(path.encode() + b"\0" + fh.read() + b"\0")
        except OSError:
            return None
    return h.hexdigest()


def salt_for(rules: dict) -> str | None:
    """The cache salt for this warplint and rule set; None when it cannot be told (no cache)."""
    import libcst

    from . import __version__
    from .facts import WARP_FACTS_VERSION

    here = os.path.dirname(os.path.abspath(__file__))
    files = [os.path.join(here, f"{name}.py") for name in _MODEL_MODULES]
    for rule in rules.values():
        module = sys.modules.get(type(rule).__module__)
        path = getattr(module, "__file__", None)
        if not path:
            return None  # a rule without a source file (defined in a REPL): do not cache
        files.append(os.path.abspath(path))
    # Helpers shared by rules (rules/_*.py) feed their visitors too.
    rules_dir = os.path.join(here, "rules")
    try:
        import warplint.rules as package

        rules_dir = list(package.__path__)[0]
        files += [os.path.join(rules_dir, n) for n in os.listdir(rules_dir) if n.endswith(".py")]
    except (ImportError, OSError, IndexError):
        pass
    sources = _source_digest(files)
    if sources is None:
        return None
    key = "|".join(
        (
            str(CACHE_FORMAT), __version__, WARP_FACTS_VERSION, sys.version, getattr(libcst, "__version__", "?"),
            ",".join(sorted(rules)), sources,
        )
    )
    return hashlib.blake2b(key.encode(), digest_size=10).hexdigest()


def default_directory(root: str, configured: str | None) -> str:
    if configured:
        return configured if os.path.isabs(configured) else os.path.join(root, configured)
    return os.path.join(root, DEFAULT_DIRNAME)


class ModelCache:
    """Models by absolute path, each with the digest of the text it was built from."""

    def __init__(self, directory: str, salt: str) -> None:
        self.directory = os.path.abspath(directory)
        self.salt = salt
        self.path = os.path.join(self.directory, f"models-{salt}.pickle")
        # path -> (digest, module, is_package, pickled model): models are unpickled on
        # use, so a run over a few files does not pay for the whole project's models.
        self.entries: dict[str, tuple[str, str, bool, bytes]] = {}
        self.dirty = False
        self.hits = 0
        self.misses = 0
        self._loaded = False

    def load(self) -> None:
        if self._loaded:
            return
        self._loaded = True
        try:
            with open(self.path, "rb") as fh:
                data = pickle.load(fh)
        except FileNotFoundError:
            return
        except Exception:  # noqa: BLE001 - corrupt/truncated/foreign: start empty, rewrite on save
            self.dirty = True
            return
        if (
            isinstance(data, dict)
            and data.get("format") == CACHE_FORMAT
            and data.get("salt") == self.salt
            and isinstance(data.get("entries"), dict)
        ):
            self.entries = data["entries"]
        else:
            self.dirty = True

    def get(self, absolute: str, text_digest: str, path: str, module: str, is_package: bool) -> FileModel | None:
        self.load()
        entry = self.entries.get(absolute)
        if (
            not isinstance(entry, tuple)
            or len(entry) != 4
            or entry[0] != text_digest
            or entry[1] != module
            or entry[2] != is_package
            or not isinstance(entry[3], bytes)
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

    def put(self, absolute: str, text_digest: str, model: FileModel, blob: bytes | None = None) -> None:
        """Keep ``model`` (``blob``: the model already pickled, e.g. by a worker)."""
        self.load()
        if model.error is not None and model.error.startswith(("cannot read", "cannot decode")):
            return
        if blob is None:
            try:
                blob = pickle.dumps(model, protocol=pickle.HIGHEST_PROTOCOL)
            except (pickle.PicklingError, RecursionError, TypeError, AttributeError):
                return
        self.entries[absolute] = (text_digest, model.module, model.is_package, blob)
        self.dirty = True

    def save(self) -> bool:
        """Write the cache if it changed; False when it could not be written (ignored)."""
        if not self.dirty:
            return True
        for absolute in [a for a in self.entries if not os.path.exists(a)]:
            del self.entries[absolute]  # deleted or renamed files
        if not _replace_pickle(self.directory, self.path, "models-", {"format": CACHE_FORMAT, "salt": self.salt,
                                                                       "entries": self.entries}):
            return False
        self.dirty = False
        return True


def _prepare_directory(directory: str) -> None:
    os.makedirs(directory, exist_ok=True)
    for name, content in (("CACHEDIR.TAG", CACHEDIR_TAG), (".gitignore", "# Created by warplint automatically.\n*\n")):
        path = os.path.join(directory, name)
        if not os.path.exists(path):
            _write_atomic(path, content)


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
    """Whole-run results: the findings of one ``lint_paths`` run, by a key over every
    input that can change them (see ``Session._run_key``), plus the installed-package
    files the rules read (re-checked on use). A warm run with nothing changed needs
    no models at all: read, hash, look up, report."""

    KEEP = 16  # different file sets (a pre-commit subset, the whole tree, ...)

    def __init__(self, directory: str, salt: str) -> None:
        self.directory = os.path.abspath(directory)
        self.path = os.path.join(self.directory, f"results-{salt}.pickle")
        self.salt = salt
        self._entries: dict | None = None

    def _load(self) -> dict:
        if self._entries is None:
            self._entries = {}
            try:
                with open(self.path, "rb") as fh:
                    data = pickle.load(fh)
                if isinstance(data, dict) and data.get("format") == CACHE_FORMAT and data.get("salt") == self.salt:
                    entries = data.get("entries")
                    if isinstance(entries, dict):
                        self._entries = entries
            except Exception:  # noqa: BLE001 - missing/corrupt: no results
                pass
        return self._entries

    def get(self, key: str) -> dict | None:
        entry = self._load().get(key)
        if not isinstance(entry, dict):
            return None
        for path, expected in entry.get("externals", ()):
            try:
                with open(path, "rb") as fh:
                    data = fh.read()
            except OSError:
                data = None
            found = None if data is None else hashlib.blake2b(data, digest_size=16).hexdigest()
            if found != expected:
                return None
        return entry

    def put(self, key: str, entry: dict) -> None:
        entries = self._load()
        entries.pop(key, None)
        entries[key] = entry
        while len(entries) > self.KEEP:
            entries.pop(next(iter(entries)))
        _replace_pickle(self.directory, self.path, "results-", {"format": CACHE_FORMAT, "salt": self.salt,
                                                                "entries": entries})


def file_digest(path: str) -> str | None:
    try:
        with open(path, "rb") as fh:
            return hashlib.blake2b(fh.read(), digest_size=16).hexdigest()
    except OSError:
        return None


def _replace_pickle(directory: str, path: str, prefix: str, payload: dict) -> bool:
    """Write ``payload`` to ``path`` atomically (temp file + rename), then drop this kind's
    files of other salts (other versions / rule sets). False when it could not be written."""
    try:
        _prepare_directory(directory)
        _write_atomic(path, pickle.dumps(payload, protocol=pickle.HIGHEST_PROTOCOL))
        for name in os.listdir(directory):
            if name.startswith(prefix) and name.endswith(".pickle") and name != os.path.basename(path):
                try:
                    os.unlink(os.path.join(directory, name))
                except OSError:
                    pass
    except (OSError, pickle.PicklingError, RecursionError, TypeError, AttributeError):
        return False
    return True

"""A file's module name as Python's import system gives it, which is the name Warp gives its module.

Python names a module after the ``sys.path`` entry it is imported through: ``examples/particles/kernels.py``
is ``kernels`` when ``examples/particles`` is on the path (``python examples/particles/main.py`` puts the
script's folder first) and ``examples.particles.kernels`` when the project root is (``python -m
examples.particles.main`` from there: folders without ``__init__.py`` are namespace packages). A file's
*base* is the folder above its regular packages (``names.package_base``); the entry is the base or a folder
above it, decided once per base from the project's evidence, strongest first:

1. the run command, when known (``--confirm -- python -m pkg.main``, ``[tool.warplint.confirm] command``):
   ``-m`` imports the named module through the working directory;
2. the project's import statements: ``from examples.particles.kernels import k`` names the file through the
   root, ``from sim import step`` beside ``sim.py`` through the importer's folder;
3. the folders the project declares as import roots: ``src`` in ``[tool.warplint]``, setuptools'
   ``package-dir`` / ``packages.find.where``, hatch's ``packages``, poetry's ``packages.from``;
4. a relative import in a file directly in a folder without ``__init__.py`` makes that folder a package:
   the most likely run is ``python -m`` from the project root;
5. else the base itself (the file's directory for a loose script).

Evidence is read from the files each file is indexed with (``ProjectScope``), as on disk, so every front end
names a file alike. ``reason`` says which evidence decided a name other than the base's.
"""

from __future__ import annotations

import keyword
import os
import shlex
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from .import_lines import import_lines
from .names import package_base

# Folders above a base that can be an import root: up to the project root, at most this many.
_MAX_ROOT_DEPTH = 6


@dataclass(frozen=True)
class RunHint:
    """How the program is run: ``python -m module`` or ``python script.py``, from ``cwd``."""

    cwd: str
    module: str | None = None  # -m
    script: str | None = None  # absolute path of the script

    @staticmethod
    def of(command: Iterable[str], cwd: str) -> RunHint | None:
        """The hint a command gives (``python [options] -m pkg.mod ...`` / ``python [options] path.py ...``);
        None for anything else (a console script, a shell line)."""
        words = list(command)
        if len(words) == 1:  # a configured command given as one string
            words = shlex.split(words[0]) if words[0].strip() else []
        if not words or "python" not in os.path.basename(words[0]):
            return None
        rest = words[1:]
        while rest and rest[0].startswith("-") and rest[0] != "-m":
            takes_value = rest[0] in ("-W", "-X", "-Q")
            rest = rest[2:] if takes_value else rest[1:]
        if len(rest) >= 2 and rest[0] == "-m":
            return RunHint(os.path.abspath(cwd), module=rest[1])
        if rest and rest[0].endswith(".py"):
            return RunHint(os.path.abspath(cwd), script=os.path.abspath(os.path.join(cwd, rest[0])))
        return None


def imports_of(text: str) -> tuple[list[str], bool]:
    """(absolute module names ``text`` imports, ``from X import n`` giving X and X.n; whether it has a relative
    import)."""
    found: list[str] = []
    relative = False
    for line in import_lines(text):
        if line.level:
            relative = True
            continue
        found.append(line.module)
        found.extend(f"{line.module}.{name}" for name in line.names if name != "*")
    return found, relative


def _identifier(name: str) -> bool:
    return name.isidentifier() and not keyword.iskeyword(name)


@dataclass
class _Base:
    """The files of one base folder and the folders it can be imported through."""

    directory: str
    roots: list[str]  # the base first, then each folder above it that could be a sys.path entry
    files: list[str]
    relative_at_top: bool = False  # a file directly in it (not in a package below) imports relatively


class ModuleNames:
    """File -> (module name, is package), from the evidence of the files it is indexed with."""

    def __init__(self, root: str, declared_roots: Iterable[str], run: RunHint | None,
                 scope_files: Callable[[str], list[str]], read: Callable[[str], str | None],
                 imports: Callable[[str, str], tuple[list[str], bool]] | None = None) -> None:
        self.root = os.path.abspath(root)
        self.declared = {os.path.abspath(r) for r in declared_roots}
        self.run = run
        self._scope_files = scope_files
        self._read = read
        # (path, its text) -> ``imports_of(text)``: a session answers it from its cache for a text seen before
        self._imports = imports if imports is not None else (lambda _, text: imports_of(text))
        # id(listing) -> (listing, base -> (root, why, whether it was a guess), the files some file imports)
        self._decisions: dict[int, tuple[list[str], dict[str, tuple[str, str, bool]], set[str]]] = {}
        self._package_bases: dict[str, tuple[list[str], bool, str]] = {}
        self._gaps: dict[str, int | None] = {}  # package_base's memo
        self._packaging: dict[str, set[str]] = {}  # project folder -> the import roots its packaging declares

    def _package_base(self, path: str) -> tuple[list[str], bool, str]:
        found = self._package_bases.get(path)
        if found is None:
            found = self._package_bases[path] = package_base(path, self._gaps)
        return found

    def narrowed(self, scope_files: Callable[[str], list[str]]) -> ModuleNames:
        """The same naming with evidence from ``scope_files`` (fewer files: a file checked alone)."""
        return ModuleNames(self.root, self.declared, self.run, scope_files, self._read, self._imports)

    def name_of(self, path: str) -> tuple[str, bool]:
        parts, is_package, base = self._package_base(os.path.abspath(path))
        root = self._decision(path, base)[0]
        return _joined(base, root, parts, path), is_package

    def reason(self, path: str) -> str:
        """Why ``path`` has the name it has, when evidence put its import root above its folder ('' if not)."""
        _, _, base = self._package_base(os.path.abspath(path))
        return self._decision(path, base)[1]

    def guess(self, path: str) -> tuple[str, str] | None:
        """(the folder, what was assumed) when the evidence for ``path``'s name was ambiguous and the name is
        the most likely run's: one file imported under two names, or relative imports in a namespace folder."""
        _, _, base = self._package_base(os.path.abspath(path))
        root, why, guessed = self._decision(path, base)
        if not guessed:
            return None
        return base, f"its modules are named {_joined_dir(base, root)}.*: {why}"

    def runs_as_main(self, path: str, script: bool) -> bool:
        """Whether the file runs as ``__main__`` (the name Warp then gives its module): the run command's target
        when a command is known; else, the most likely run, a ``script`` (a file whose ``if __name__ ==
        "__main__":`` block is how it runs) that no file of its project imports."""
        path = os.path.abspath(path)
        if self.run is not None:
            return self.run_target() == path
        return script and path not in self._evidence(path)[2]

    def run_target(self) -> str | None:
        """The file the run command runs as ``__main__`` (absolute), when a command is known."""
        run = self.run
        if run is None:
            return None
        if run.script is not None:
            return run.script
        stem = os.path.join(run.cwd, *(run.module or "").split("."))
        for candidate in (stem + ".py", os.path.join(stem, "__main__.py")):
            if os.path.isfile(candidate):
                return candidate
        return None

    # ------------------------------------------------------------------ evidence
    def _decision(self, path: str, base: str) -> tuple[str, str, bool]:
        return self._evidence(path)[1].get(base) or (base, "", False)

    def _evidence(self, path: str) -> tuple[list[str], dict[str, tuple[str, str, bool]], set[str]]:
        listing = self._scope_files(path)
        entry = self._decisions.get(id(listing))
        if entry is None or entry[0] is not listing:
            entry = self._decisions[id(listing)] = (listing, *self._decide(listing))
        return entry

    def _bases(self, listing: list[str]) -> dict[str, _Base]:
        bases: dict[str, _Base] = {}
        for path in listing:
            _, _, directory = self._package_base(path)
            found = bases.get(directory)
            if found is None:
                found = bases[directory] = _Base(directory, self._roots_above(directory), [])
            found.files.append(path)
        return bases

    def _roots_above(self, base: str) -> list[str]:
        """``base`` and the folders above it it could be imported through: each folder between them a valid
        package name, none above the project root (the config root or a folder with a project marker)."""
        from .config import PROJECT_MARKERS, never_a_project_root

        roots = [base]
        directory = base
        for _ in range(_MAX_ROOT_DEPTH):
            if directory == self.root or never_a_project_root(directory) or any(
                    os.path.exists(os.path.join(directory, marker)) for marker in PROJECT_MARKERS):
                break
            parent, name = os.path.split(directory)
            if not _identifier(name) or parent == directory:
                break
            directory = parent
            roots.append(directory)
        return roots

    def _decide(self, listing: list[str]) -> tuple[dict[str, tuple[str, str, bool]], set[str]]:
        """(base folder -> (its import root, why, whether the evidence was ambiguous) for the bases whose root
        is not the base itself or was a guess, the files some file imports by a name they can have)."""
        bases = self._bases(listing)
        # Every name a file (or a package above it) can be imported as -> the (base, root) pairs giving it.
        spelled: dict[str, set[tuple[str, str]]] = {}
        files: dict[str, set[str]] = {}  # the full names only -> the files they name
        for base in bases.values():
            for path in base.files:
                parts, _, _ = self._package_base(path)
                for root in base.roots:
                    full = _prefix(base.directory, root) + parts
                    for n in range(1, len(full) + 1):
                        spelled.setdefault(".".join(full[:n]), set()).add((base.directory, root))
                    files.setdefault(".".join(full), set()).add(path)
        imported: set[str] = set()
        votes: dict[tuple[str, str], set[str]] = {}
        for base in bases.values():
            for path in base.files:
                text = self._read(path)
                if text is None or "import" not in text:
                    continue
                targets, relative = self._imports(path, text)
                if relative and os.path.dirname(path) == base.directory and not os.path.isfile(
                        os.path.join(base.directory, "__init__.py")):
                    base.relative_at_top = True
                for target in set(targets):
                    imported.update(files.get(target, ()))
                    for hit in _chosen(spelled.get(target), path):
                        votes.setdefault(hit, set()).add(path)
        run_root = self._run_root(bases)
        decisions: dict[str, tuple[str, str, bool]] = {}
        for base in bases.values():
            if base.directory == run_root[0]:
                decisions[base.directory] = (run_root[1], run_root[2], False)
                continue
            counted = {root: len(votes.get((base.directory, root), ())) for root in base.roots}
            best = max(counted.values(), default=0)
            if best:
                # Several spellings import one file twice (two module objects); the most imported one is the
                # one Warp most likely names, ties broken toward the declared root, then the outermost.
                tied = [r for r in base.roots if counted[r] == best]
                root = next((r for r in tied if r in self._declared(base)), tied[-1])
                why = f"imported as {_joined_dir(base.directory, root)} by the project's files"
                twice = sum(1 for c in counted.values() if c) > 1
                if twice:
                    why += ", more often than under its other name (Python would load it twice)"
                decisions[base.directory] = (root, why, twice)
                continue
            declared = next((r for r in base.roots if r in self._declared(base)), None)
            if declared is not None:
                decisions[base.directory] = (declared, "under a declared import root", False)
            elif base.relative_at_top and len(base.roots) > 1:
                decisions[base.directory] = (
                    base.roots[-1], "relative imports in a folder without __init__.py: assumed run with python -m "
                    "from the project root", True)
        return {d: v for d, v in decisions.items() if v[0] != d or v[2]}, imported

    def _declared(self, base: _Base) -> set[str]:
        """The declared import roots a base can be imported through: the config's, and those the packaging of
        the project holding it declares (a nested project's own pyproject.toml)."""
        project = base.roots[-1]
        if project not in self._packaging:
            self._packaging[project] = set(declared_roots(project, ())) if project != self.root else set()
        return self.declared | self._packaging[project]

    def _run_root(self, bases: dict[str, _Base]) -> tuple[str | None, str, str]:
        """(the base of the module ``python -m`` runs, the working directory it is imported through, why)."""
        run, target = self.run, self.run_target()
        if run is None or run.module is None or target is None:
            return None, "", ""
        _, _, directory = self._package_base(target)
        base = bases.get(directory)
        if base is None or run.cwd not in base.roots:
            return None, "", ""
        return directory, run.cwd, f"run as python -m {run.module}"


def _chosen(hits: set[tuple[str, str]] | None, importer: str) -> list[tuple[str, str]]:
    """The (base, root) pairs an import from ``importer`` means among those that spell its name: Python looks
    first in the importer's own folder (a script's ``sys.path[0]``), then the nearest root holding it. A
    package's name (``import examples``) can mean several bases through one root: each gets the vote."""
    if not hits:
        return []
    if len(hits) == 1:
        return list(hits)
    holding = [h for h in hits if importer.startswith(h[1].rstrip(os.sep) + os.sep)]
    if not holding:
        return []
    nearest = max(len(h[1]) for h in holding)
    return [h for h in holding if len(h[1]) == nearest]


def _prefix(base: str, root: str) -> list[str]:
    """The folder names from ``root`` down to ``base`` (``root`` is ``base`` or a folder above it)."""
    return [] if base == root else base[len(root.rstrip(os.sep)) + 1:].split(os.sep)


def _joined(base: str, root: str, parts: list[str], path: str) -> str:
    full = _prefix(base, root) + parts
    if full:
        return ".".join(full)
    stem = os.path.basename(path)
    return stem[:-3] if stem.endswith(".py") else stem


def _joined_dir(base: str, root: str) -> str:
    return ".".join(_prefix(base, root)) or os.path.basename(base)


def declared_roots(root: str, configured: Iterable[str]) -> list[str]:
    """Import roots the project declares: ``src`` in [tool.warplint] (``configured``), and in its pyproject.toml
    the packaging settings that put a folder on sys.path when it is installed (setuptools ``package-dir``
    for the root package and ``packages.find.where``, hatch's wheel ``packages`` parents, poetry's
    ``packages.from``) and setup.cfg's ``package_dir``."""
    found = [os.path.join(root, r) for r in configured]
    pyproject = os.path.join(root, "pyproject.toml")
    if os.path.isfile(pyproject):
        found += [os.path.join(root, r) for r in _packaging_roots(pyproject)]
    setup_cfg = os.path.join(root, "setup.cfg")
    if os.path.isfile(setup_cfg):
        found += [os.path.join(root, r) for r in _setup_cfg_roots(setup_cfg)]
    return [os.path.normpath(r) for r in found]


def _packaging_roots(path: str) -> list[str]:
    from .config import ConfigError, _read_toml

    try:
        document = _read_toml(path)
    except ConfigError:  # the config's own reading reports a broken pyproject.toml
        return []
    tool = document.get("tool") if isinstance(document, dict) else None
    tool = tool if isinstance(tool, dict) else {}
    roots: list[str] = []
    setuptools = tool.get("setuptools")
    if isinstance(setuptools, dict):
        package_dir = setuptools.get("package-dir")
        if isinstance(package_dir, dict) and isinstance(package_dir.get(""), str):
            roots.append(package_dir[""])
        packages = setuptools.get("packages")
        find = packages.get("find") if isinstance(packages, dict) else None
        where = find.get("where") if isinstance(find, dict) else None
        if isinstance(where, list):
            roots += [w for w in where if isinstance(w, str)]
    wheel = _table(tool, "hatch", "build", "targets", "wheel")
    if isinstance(wheel.get("packages"), list):
        roots += [os.path.dirname(p.rstrip("/")) for p in wheel["packages"] if isinstance(p, str)]
    poetry = tool.get("poetry")
    if isinstance(poetry, dict) and isinstance(poetry.get("packages"), list):
        roots += [p["from"] for p in poetry["packages"] if isinstance(p, dict) and isinstance(p.get("from"), str)]
    return [r for r in roots if r not in ("", ".")]


def _table(document: dict, *keys: str) -> dict:
    for key in keys:
        found = document.get(key)
        document = found if isinstance(found, dict) else {}
    return document


def _setup_cfg_roots(path: str) -> list[str]:
    import configparser

    parser = configparser.ConfigParser()
    try:
        parser.read(path, encoding="utf-8")
        value = parser.get("options", "package_dir", fallback="")
    except (configparser.Error, UnicodeDecodeError, OSError):
        return []
    for line in value.splitlines():
        key, _, target = line.partition("=")
        if not key.strip() and target.strip():
            return [target.strip()]
    return []

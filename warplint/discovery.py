"""Which files to lint: paths, directories, globs, .gitignore and exclude patterns."""

from __future__ import annotations

import glob
import os
import stat
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

from .config import Config
from .sources import leaves_tree

if TYPE_CHECKING:  # imported by the first Discovery: a warm run on a kept listing makes none
    import pathspec

DEFAULT_EXCLUDES = (
    ".git", ".hg", ".svn", ".venv", "venv", ".tox", ".nox", "__pycache__", "build", "dist", "node_modules",
    ".eggs", "*.egg-info", ".mypy_cache", ".pytest_cache", ".ruff_cache", ".warplint_cache", "site-packages",
)


_SPECIAL_KINDS = (
    (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)  # anything else that is neither a regular file nor a directory: "a special file"


class Discovery:
    def __init__(self, config: Config) -> None:
        import pathspec

        self.config = config
        self.exclude = pathspec.PathSpec.from_lines(
            "gitignore", (*DEFAULT_EXCLUDES, *config.exclude, *config.extend_exclude)
        )
        self._gitignores: dict[str, pathspec.PathSpec | None] = {}
        self.notes: list[str] = []  # what the last ``files`` call skipped, one line each

    def _gitignore(self, directory: str) -> pathspec.PathSpec | None:
        if directory not in self._gitignores:
            spec = None
            path = os.path.join(directory, ".gitignore")
            if os.path.isfile(path):
                try:
                    with open(path, encoding="utf-8", errors="replace") as fh:
                        spec = self._gitignore_spec(path, fh)
                except OSError:
                    spec = None
            self._gitignores[directory] = spec
        return self._gitignores[directory]

    def _gitignore_spec(self, path: str, lines: Iterable[str]) -> pathspec.PathSpec:
        """Like git, skip lines that are not valid patterns ('!', a trailing backslash)."""
        import pathspec
        from pathspec.util import lookup_pattern

        gitignore_pattern = lookup_pattern("gitignore")
        patterns = []
        for number, line in enumerate(lines, 1):
            try:
                patterns.append(gitignore_pattern(line))
            except ValueError:
                shown = line.rstrip("\r\n")
                self.notes.append(f"{path}:{number}: ignoring invalid pattern {shown!r}")
        return pathspec.PathSpec(patterns)

    def _ignored(self, path: str, is_dir: bool, gitignore_dirs: list[str]) -> bool:
        rel = os.path.relpath(path, self.config.root).replace(os.sep, "/")
        probe = rel + "/" if is_dir else rel
        name = os.path.basename(path) + ("/" if is_dir else "")
        if self.exclude.match_file(probe) or self.exclude.match_file(name):
            return True
        for directory in gitignore_dirs:
            spec = self._gitignore(directory)
            if spec is not None:
                sub = os.path.relpath(path, directory).replace(os.sep, "/") + ("/" if is_dir else "")
                if spec.match_file(sub):
                    return True
        return False

    def excluded(self, path: str) -> bool:
        """Whether ``path`` matches an exclude pattern (the defaults, ``exclude``, ``extend-exclude``),
        itself or through a directory above it; .gitignore files are not consulted."""
        absolute = os.path.abspath(path)
        # gitignore-style patterns match a file through its directories (`vendored/` matches vendored/a.py)
        return self._ignored(absolute, os.path.isdir(absolute), [])

    def files(self, paths: list[str]) -> Iterator[str]:
        """Python files under ``paths``; explicitly named files are always included, unless
        ``force-exclude`` is set and an exclude pattern matches them (as ruff's ``--force-exclude``).

        Only regular files come out (or missing paths, for the caller to report): a FIFO
        would block the reader, a device never ends; those are skipped with a note."""
        self.notes = []
        seen: set[str] = set()
        for raw in paths:
            if any(ch in raw for ch in "*?[") and not os.path.exists(raw):
                matches = sorted(glob.glob(raw, recursive=True))
                for m in matches:
                    yield from self._walk(m, seen, explicit=False)
                continue
            if self.config.force_exclude and os.path.exists(raw) and self.excluded(raw):
                continue
            yield from self._walk(raw, seen, explicit=True)

    def _walk(self, path: str, seen: set[str], explicit: bool) -> Iterator[str]:
        if self._special(path):
            return
        if os.path.isfile(path):
            absolute = os.path.abspath(path)
            if absolute not in seen and (explicit or path.endswith((".py", ".pyi"))):
                seen.add(absolute)
                yield os.path.normpath(path)
            return
        if not os.path.isdir(path):
            # Reported by the caller as a missing path.
            yield path
            return
        top = os.path.abspath(path)
        # The tree a link may point into: the project when the walk is inside it (pkg/x.py -> ../shared.py)
        root = os.path.realpath(self.config.root)
        tree = root if os.path.commonpath([os.path.realpath(top), root]) == root else top
        git_dirs = self._gitignore_chain(top)
        if explicit and self._ignored(top, True, git_dirs[:-1]):
            # The user named an ignored directory: lint it, applying only its own .gitignore files.
            git_dirs = [top]
        for directory, dirnames, filenames in os.walk(path, onerror=self._unreadable):
            absolute_dir = os.path.abspath(directory)
            chain = git_dirs + [d for d in _ancestors(absolute_dir, top) if d not in git_dirs]
            dirnames[:] = sorted(
                d for d in dirnames if not self._ignored(os.path.join(absolute_dir, d), True, chain)
            )
            for name in sorted(filenames):
                if not name.endswith(".py"):
                    continue
                full = os.path.join(absolute_dir, name)
                shown = os.path.normpath(os.path.join(directory, name))
                if (full in seen or self._ignored(full, False, chain) or self._special(shown)
                        or self._leaves(full, shown, tree)):
                    continue
                seen.add(full)
                yield shown

    def _special(self, path: str) -> bool:
        """Whether ``path`` (followed through symlinks) exists but is not a regular file or
        directory; noted. Missing and unreadable paths are left to the reader to report."""
        try:
            mode = os.stat(path).st_mode
        except (OSError, ValueError):
            return False
        if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
            return False
        kind = next((name for is_kind, name in _SPECIAL_KINDS if is_kind(mode)), "a special file")
        self.notes.append(f"skipped {path}: {kind}, not a regular file")
        return True

    def _leaves(self, full: str, path: str, top: str) -> bool:
        """Whether ``path``, found by a walk, is a symlink to a file outside the tree ``top``; noted. Such a
        link is not followed (a cloned repository's ``x.py -> /proc/self/environ`` or ``-> ~/.bashrc``), as
        walks never follow links to directories; a link named on the command line is the user's choice."""
        # Walks do not enter linked directories; a dangling link reads nothing (the reader reports it).
        if not (os.path.islink(full) and os.path.exists(full) and leaves_tree(full, top)):
            return False
        self.notes.append(f"skipped {path}: a symlink to a file outside {os.path.normpath(top)}")
        return True

    def _unreadable(self, error: OSError) -> None:
        self.notes.append(f"skipped directory {os.path.normpath(error.filename)}: {error.strerror or error}")

    def _gitignore_chain(self, top: str) -> list[str]:
        """.gitignore files that apply from the repository (or config) root down to ``top``."""
        chain: list[str] = []
        directory = top
        while True:
            chain.insert(0, directory)
            if os.path.isdir(os.path.join(directory, ".git")) or directory == self.config.root:
                break
            parent = os.path.dirname(directory)
            if parent == directory:
                break
            directory = parent
        return chain


def _ancestors(directory: str, top: str) -> list[str]:
    result: list[str] = []
    while directory.startswith(top) and directory != top:
        result.insert(0, directory)
        directory = os.path.dirname(directory)
    return result


class ProjectScope:
    """The files a file is indexed with, so that its cross-file facts (a kernel's module set in another
    file, the launches of its importers) are the same whichever front end checks it: the CLI on the
    file or on its directory, stdin, pre-commit, flake8 and the editor.

    - Where the config root is a project (a pyproject.toml was read, or the root holds a project
      marker) and the file is one discovery finds under it: every file discovery finds under the root.
    - Else a loose script: the ``.py`` files beside it and the folders below it that they import (``python
      main.py`` puts the script's folder first on ``sys.path``: ``from pkg import kernels`` reads ``pkg/``
      beside it, a package or a namespace folder), never the rest of the tree below: a script in ``/tmp``
      or a home directory must not index everything under it.
    - Else the file's package: its directory, walked up while ``__init__.py`` exists; or, when the folder
      above it holds scripts that import it, those scripts' scope (one index for the program).

    Listings are made once per scope and kept (a front end's session lives for one run, or for an
    editor session, as its index does)."""

    def __init__(self, config: Config, root_is_project: bool | None = None) -> None:
        from .config import PROJECT_MARKERS, never_a_project_root

        self.config = config
        root = config.root
        if root_is_project is None:
            root_is_project = config.source is not None or (not never_a_project_root(root) and any(
                os.path.exists(os.path.join(root, marker)) for marker in PROJECT_MARKERS))
        self.root_is_project = root_is_project
        self._listings: dict[str, list[str]] = {}  # scope directory -> absolute paths
        self._root_members: set[str] | None = None
        self._imported_folders: dict[str, list[str]] = {}  # folder -> the folders below it its scripts import

    def _listing(self, directory: str, recursive: bool) -> list[str]:
        found = self._listings.get(directory)
        if found is None:
            if recursive:
                found = [os.path.abspath(p) for p in Discovery(self.config).files([directory])]
            else:
                found = self._scripts(directory)
                for folder in self.imported_folders(directory):
                    found += [os.path.abspath(p) for p in Discovery(self.config).files([folder])]
            self._listings[directory] = found
        return found

    @staticmethod
    def _scripts(directory: str) -> list[str]:
        try:
            names = sorted(os.listdir(directory))
        except OSError:
            names = []
        return [os.path.join(directory, n) for n in names
                if n.endswith(".py") and os.path.isfile(os.path.join(directory, n))
                and not leaves_tree(os.path.join(directory, n), directory)]

    def imported_folders(self, directory: str) -> list[str]:
        """The folders right below ``directory`` that its loose scripts import by their first name (``import
        pkg.x``, ``from pkg import x``): with the script's folder first on ``sys.path``, those are the
        script's own code, a regular package or a namespace folder alike. Read from the import lines."""
        found = self._imported_folders.get(directory)
        if found is None:
            from .module_names import imports_of

            names: set[str] = set()
            for script in self._scripts(directory):
                if os.path.basename(script) == "__init__.py":
                    return self._imported_folders.setdefault(directory, [])  # a package, not a scripts' folder
                try:
                    with open(script, encoding="utf-8", errors="replace") as fh:
                        text = fh.read(self.config.max_file_size)
                except OSError:
                    continue
                names.update(name.split(".")[0] for name in imports_of(text)[0])
            found = [os.path.join(directory, n) for n in sorted(names)
                     if n.isidentifier() and os.path.isdir(os.path.join(directory, n))
                     and not leaves_tree(os.path.join(directory, n), directory)]
            self._imported_folders[directory] = found
        return found

    def beside(self, path: str) -> list[str]:
        """Absolute paths of the ``.py`` files in ``path``'s folder (not below it)."""
        return self._listing(os.path.dirname(os.path.abspath(path)), False)

    def remember(self, directory: str, files: list[str]) -> None:
        """``files`` (absolute paths) is what discovery found walking ``directory`` alone. When that is the
        project's root, it is the listing every file under it is indexed with (``files_for``), not walked again
        (the CLI on a project's root walks it once). Any other folder's listing is left to be made when asked
        (a loose script's is its folder alone, not the tree below)."""
        root = os.path.abspath(self.config.root)
        if self.root_is_project and os.path.abspath(directory) == root:
            self._listings.setdefault(root, files)

    def files_for(self, path: str) -> list[str]:
        """Absolute paths of the files ``path`` is indexed with (``path`` itself included when on disk)."""
        return self._listing(*self.scope_of(path))

    def scope_of(self, path: str) -> tuple[str, bool]:
        """(directory, recursive): the listing ``path`` is indexed with; files with the same scope share
        one project index, files with different ones never see each other's facts."""
        absolute = os.path.abspath(path)
        root = os.path.abspath(self.config.root)
        if self.root_is_project and absolute.startswith(root.rstrip(os.sep) + os.sep):
            listing = self._listing(root, True)
            if self._root_members is None:
                self._root_members = set(listing)
            if absolute in self._root_members or not os.path.exists(absolute):
                return root, True
        from .config import never_a_project_root

        directory = os.path.dirname(absolute)
        importer = self._importing_folder(directory)
        if importer is not None:
            return importer, False  # code the scripts of a folder above import: their program's index
        if not os.path.isfile(os.path.join(directory, "__init__.py")):
            return directory, False
        while (os.path.isfile(os.path.join(os.path.dirname(directory), "__init__.py"))
               and not never_a_project_root(os.path.dirname(directory))):
            directory = os.path.dirname(directory)
        if never_a_project_root(directory):  # a stray ~/__init__.py: the files beside it only
            return directory, False
        return directory, True

    def _importing_folder(self, directory: str) -> str | None:
        """The nearest folder above ``directory`` whose loose scripts import the folder ``directory`` is in
        (its first component below that folder), looked for through a package's chain of ``__init__.py``
        folders and namespace folders alike, at most a few levels up; None when no script imports it."""
        from .config import never_a_project_root

        child = directory
        for _ in range(4):
            parent = os.path.dirname(child)
            if parent == child or never_a_project_root(parent):
                return None
            if child in self.imported_folders(parent):
                return parent
            child = parent
        return None

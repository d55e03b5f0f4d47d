"""Which files to lint: paths, directories, globs, .gitignore and exclude patterns."""

from __future__ import annotations

import glob
import os
from typing import Iterator

import pathspec

from .config import Config

DEFAULT_EXCLUDES = (
    ".git", ".hg", ".svn", ".venv", "venv", ".tox", ".nox", "__pycache__", "build", "dist", "node_modules",
    ".eggs", "*.egg-info", ".mypy_cache", ".pytest_cache", ".ruff_cache", ".warplint_cache", "site-packages",
)


class Discovery:
    def __init__(self, config: Config) -> None:
        self.config = config
        self.exclude = pathspec.PathSpec.from_lines(
            "gitignore", (*DEFAULT_EXCLUDES, *config.exclude, *config.extend_exclude)
        )
        self._gitignores: dict[str, pathspec.PathSpec | None] = {}

    def _gitignore(self, directory: str) -> pathspec.PathSpec | None:
        if directory not in self._gitignores:
            spec = None
            path = os.path.join(directory, ".gitignore")
            if os.path.isfile(path):
                try:
                    with open(path, encoding="utf-8", errors="replace") as fh:
                        spec = pathspec.PathSpec.from_lines("gitignore", fh)
                except OSError:
                    spec = None
            self._gitignores[directory] = spec
        return self._gitignores[directory]

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

    def files(self, paths: list[str]) -> Iterator[str]:
        """Python files under ``paths``; explicitly named files are always included."""
        seen: set[str] = set()
        for raw in paths:
            if any(ch in raw for ch in "*?[") and not os.path.exists(raw):
                matches = sorted(glob.glob(raw, recursive=True))
                for m in matches:
                    yield from self._walk(m, seen, explicit=False)
                continue
            yield from self._walk(raw, seen, explicit=True)

    def _walk(self, path: str, seen: set[str], explicit: bool) -> Iterator[str]:
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
        git_dirs = self._gitignore_chain(top)
        if explicit and self._ignored(top, True, git_dirs[:-1]):
            # The user named an ignored directory: lint it, applying only its own .gitignore files.
            git_dirs = [top]
        for directory, dirnames, filenames in os.walk(path):
            absolute_dir = os.path.abspath(directory)
            chain = git_dirs + [d for d in _ancestors(absolute_dir, top) if d not in git_dirs]
            dirnames[:] = sorted(
                d for d in dirnames if not self._ignored(os.path.join(absolute_dir, d), True, chain)
            )
            for name in sorted(filenames):
                if not name.endswith(".py"):
                    continue
                full = os.path.join(absolute_dir, name)
                if full in seen or self._ignored(full, False, chain):
                    continue
                seen.add(full)
                yield os.path.normpath(os.path.join(directory, name))

    def _gitignore_chain(self, top: str) -> list[str]:
        """.gitignore files that apply from the repository (or config) root down to ``top``."""
        chain = []
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
    result = []
    while directory.startswith(top) and directory != top:
        result.insert(0, directory)
        directory = os.path.dirname(directory)
    return result

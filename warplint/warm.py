"""The warm path: a project's findings from the result cache, with no model, no rule, no LibCST and
no engine imported, and no file read whose stat signature is unchanged since it was last hashed.

Shared by the two front ends that start a process per run: the CLI (``cli._warm_answer``: a run on the
project's root or on files of it, as pre-commit runs it) and the flake8 plugin (``flake8_plugin._cached``).
The key is the one ``Session._run_key`` computes (``cache.run_key`` over the config, the enabled codes,
the Warp environment and every indexed file's absolute path and digest), so a key that differs in any way
from the engine's is a miss, never a wrong answer: the engine then checks as before.

What is trusted without reading: a file's digest while its stat signature (size, mtime, ctime, inode,
device) is the one kept, kept only when the file's last change was over ``StatDigests.RACY_NS`` older than
the look (git's racy rule); the project's listing while no directory discovery could walk, no
``.gitignore`` and no symlink's target changed (``StatDigests.listing``).
"""

from __future__ import annotations

import fnmatch
import os
from typing import Any

from . import cache
from .diagnostic import Diagnostic, LintResult
from .discovery import DEFAULT_EXCLUDES, Discovery, ProjectScope


class WarmPath:
    """The result cache of ``settings`` (the effective config), looked up without the engine.

    ``where``: the cache directory (default: the config's); ``named``: the user named it (``--cache-dir``),
    as ``Session.configure_cache`` takes it."""

    def __init__(self, settings: Any, table: dict, salt: str, secret: bytes, where: str | None = None,
                 named: bool = False, scope: ProjectScope | None = None) -> None:
        self.settings = settings
        self.table = table
        self.where = where or cache.default_directory(settings.root, settings.cache_dir)
        self.digests = cache.StatDigests(self.where, salt, secret, named=named)
        self.results = cache.ResultCache(self.where, salt, secret, named=named)
        self.scope = scope if scope is not None else ProjectScope(settings)

    def root_listing(self) -> tuple[list[str], list[str]] | None:
        """(absolute paths, discovery's notes) of every file discovery finds under the config root, when the
        root is a project; kept in the digests while no directory discovery could walk changed (matching
        every path of a large tree against the exclude patterns and .gitignore files was most of a warm run
        once files were not read). None where the root is no project, or a ``!`` pattern could let
        discovery into a default-excluded directory (the signature does not cover those)."""
        config = self.settings
        if not self.scope.root_is_project or any(
                str(p).startswith("!") for p in (*config.exclude, *config.extend_exclude)):
            return None
        root = os.path.abspath(config.root)

        def never_walked(name: str) -> bool:  # whatever the config: the defaults come first and are not negated
            return any(fnmatch.fnmatchcase(name, pattern) for pattern in DEFAULT_EXCLUDES)

        def walk() -> tuple[list[str], list[str]]:
            discovery = Discovery(config)
            found = [os.path.abspath(p) for p in discovery.files([root])]
            return found, list(discovery.notes)

        key = repr((root, config.exclude, config.extend_exclude, config.force_exclude))
        return self.digests.listing(key, root, never_walked, walk)

    def files_for(self, path: str) -> list[str]:
        """``scope.files_for(path)``: the root's listing (from the digests when unchanged) for a file in it."""
        root = os.path.abspath(self.settings.root)
        if path.startswith(root.rstrip(os.sep) + os.sep):
            listed = self.root_listing()
            if listed is not None and (path in set(listed[0]) or not os.path.exists(path)):
                return listed[0]
        return self.scope.files_for(path)

    def digest_of(self, absolute: str) -> tuple[str | None, str | None]:
        """(digest of the file's text, None) or (None, why it could not be read), as the engine reads it."""
        return self.digests.digest_of(absolute, self.settings.max_file_size)

    def entry(self, files: list[tuple[str, str | None, str | None]]) -> dict | None:
        """The stored results of the project whose files are ``files`` ((absolute path, digest, error), every
        file the engine indexes them with), or None. Saves the digests learned on the way."""
        from .sources import locate_installed
        from .warp_version import environment

        self.digests.save()
        settings = self.settings
        warp = environment(settings.root, settings.warp_version, settings.warp_version_source)
        key = cache.run_key(settings, settings.enabled_codes(self.table), warp.cache_key(), files)
        found = self.results.get(key)
        if found is None or any(locate_installed(m) for m in found["missing"]):
            return None  # (a module looked for and not found then is installed now)
        return found


def naming_notes(naming: dict, targets: list[str]) -> list[str]:
    """The module-naming notes of the checked files, each once."""
    return list(dict.fromkeys(naming[a] for a in targets if a in naming))


def spelled(diagnostic: Diagnostic, names: dict[str, str]) -> Diagnostic:
    """A cached finding with its paths spelled as this run names the files (``names``: absolute -> as given)."""
    import copy
    import dataclasses

    related = diagnostic.related
    if any(r.path in names for r in related):
        related = tuple(dataclasses.replace(r, path=names[r.path]) if r.path in names else r for r in related)
    # a shallow copy, not dataclasses.replace (its __init__ per finding was a tenth of a warm run)
    found = copy.copy(diagnostic)
    found.path = names.get(diagnostic.path, diagnostic.path)
    found.related = related
    return found


def lint_root_files(settings: Any, table: dict, paths: list[str], where: str | None, named: bool,
                    nested_configs: bool) -> LintResult | None:
    """What ``Session.lint_paths(paths, project_context=True)`` answers from the result cache, when every
    path is the config root or a file of its listing (a run on the project, pre-commit's run on files of
    it) and the root is a project: all of them one project index, as the engine groups them. None
    wherever the engine could group or spell anything otherwise (``nested_configs``: a pyproject.toml below
    the root could govern some files; a discovery note to print; a glob) or the cache misses."""
    secret = cache.user_secret()
    salt = cache.registry_salt()
    if secret is None or salt is None:
        return None
    if where is None and cache.leaves_root(cache.default_directory(settings.root, settings.cache_dir),
                                           settings.root):
        return None  # the engine would say why there is no cache
    warm = WarmPath(settings, table, salt, secret, where=where, named=named)
    listed = warm.root_listing()
    if listed is None or listed[1]:
        return None
    listing, _ = listed
    root = os.path.abspath(settings.root)
    members = set(listing)
    names: dict[str, str] = {}  # absolute -> as discovery spells it for these paths (first spelling wins)
    for raw in paths:
        absolute = os.path.abspath(raw)
        if absolute == root and os.path.isdir(raw):
            if settings.force_exclude and Discovery(settings).excluded(raw):
                return None
            for member in listing:
                names.setdefault(member, os.path.normpath(os.path.join(raw, os.path.relpath(member, absolute))))
        elif absolute in members and os.path.isfile(raw):
            names.setdefault(absolute, os.path.normpath(raw))
        else:
            return None
    if not names or (nested_configs and _nested_pyproject(root, names)):
        return None
    files = [(absolute, *warm.digest_of(absolute)) for absolute in listing]
    entry = warm.entry(files)
    targets = list(names)
    if entry is None or any(a not in entry["files"] for a in targets):
        return None
    result = LintResult([], cached=True)
    result.notes.extend(naming_notes(entry.get("naming", {}), targets))
    for absolute in targets:
        parsed, diagnostics = entry["files"][absolute]
        result.files += 1
        result.parsed += parsed
        result.diagnostics.extend(spelled(d, names) for d in diagnostics)
    result.diagnostics.sort(key=Diagnostic.sort_key)
    result.paths = list(names.values())
    return result


def _nested_pyproject(root: str, files: dict[str, str]) -> bool:
    """Whether a pyproject.toml sits in a directory strictly below ``root`` on the way to one of ``files``
    (the CLI reads the nearest one's settings for the files under it: another group, another index)."""
    seen: set[str] = set()
    for absolute in files:
        directory = os.path.dirname(absolute)
        while directory != root and directory not in seen and directory.startswith(root):
            seen.add(directory)
            if os.path.isfile(os.path.join(directory, "pyproject.toml")):
                return True
            directory = os.path.dirname(directory)
    return False

"""``--what-if fixes``: warplint's own proposed fixes, applied to a private copy of the project.

The user's files are never written: the project (the command's working directory) is copied into the what-if's
temp dir, the fixes are applied there (one pass per file with ``warplint.fixes.apply_fixes``; a file that no
longer parses is left as it was), and the candidate runs in the copy. ``fixes`` takes the safe fixes of every
finding; ``fixes:WC907,WC303`` every fix (safe or not) of those codes.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Sequence

from warplint.diagnostic import Diagnostic, Fix
from warplint.fixes import apply_fixes, parses

# not part of what the program runs, and often large: never copied
SKIP = (".git", ".hg", ".svn", ".venv", "venv", "__pycache__", "node_modules", ".tox", ".nox", ".mypy_cache",
        ".ruff_cache", ".pytest_cache", ".cache")
MAX_COPY_BYTES = 512 * 1024 * 1024


def chosen(diagnostics: Sequence[Diagnostic], codes: Sequence[str]) -> list[Diagnostic]:
    """The findings whose fixes the what-if applies."""
    if codes:
        return [d for d in diagnostics if d.fix is not None and d.code in codes]
    return [d for d in diagnostics if d.fix is not None and d.fix.is_safe]


def _size(root: str) -> int:
    total = 0
    for here, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d not in SKIP]
        for f in files:
            try:
                total += os.lstat(os.path.join(here, f)).st_size
            except OSError:
                pass
        if total > MAX_COPY_BYTES:
            break
    return total


def prepare(diagnostics: Sequence[Diagnostic], codes: Sequence[str], cwd: str, command: list[str],
            dest: str) -> tuple[str | None, list[str], str]:
    """Copy ``cwd`` to ``dest`` and apply the fixes there: (the copy, or None when nothing was applied; the
    command with paths into the project pointed at the copy; what was applied, or why nothing was)."""
    cwd = os.path.abspath(cwd)
    todo = chosen(diagnostics, codes)
    what = f"fixes of {', '.join(codes)}" if codes else "safe fixes"
    if not todo:
        return None, command, f"no finding carries {what}"
    by_file: dict[str, list[tuple[Diagnostic, Fix]]] = {}
    outside = []
    for d in todo:
        path = os.path.abspath(d.path if os.path.isabs(d.path) else os.path.join(cwd, d.path))
        if os.path.commonpath([path, cwd]) != cwd:
            outside.append(d)
            continue
        assert d.fix is not None
        by_file.setdefault(os.path.relpath(path, cwd), []).append((d, d.fix))
    if not by_file:
        return None, command, f"every finding with {what} is outside the project ({cwd})"
    if _size(cwd) > MAX_COPY_BYTES:
        return None, command, f"the project is larger than {MAX_COPY_BYTES >> 20} MiB: not copied"
    copy = os.path.join(dest, "project")
    shutil.copytree(cwd, copy, symlinks=True, ignore=shutil.ignore_patterns(*SKIP))
    applied: list[str] = []
    for rel, items in sorted(by_file.items()):
        target = os.path.join(copy, rel)
        try:
            with open(target, encoding="utf-8", newline="") as fh:
                text = fh.read()
        except (OSError, UnicodeDecodeError):
            continue
        done = apply_fixes(text, [f for _, f in items])
        if not done.applied or not parses(done.text):
            continue
        with open(target, "w", encoding="utf-8", newline="") as fh:
            fh.write(done.text)
        applied += [f"{items[i][0].code} at {rel}:{items[i][0].line}" for i in done.applied]
    if not applied:
        shutil.rmtree(copy, ignore_errors=True)
        return None, command, f"none of the {len(todo)} fix(es) applied cleanly"
    there = [_moved(arg, cwd, copy) for arg in command]
    skipped = f"; {len(outside)} outside the project left out" if outside else ""
    return copy, there, f"applied in a private copy: {', '.join(applied[:6])}" + (
        f" and {len(applied) - 6} more" if len(applied) > 6 else "") + skipped


def _moved(arg: str, cwd: str, copy: str) -> str:
    """An absolute path into the project, pointed at the same file in the copy (when the copy has it)."""
    if os.path.isabs(arg) and os.path.commonpath([os.path.abspath(arg), cwd]) == cwd:
        there = os.path.join(copy, os.path.relpath(arg, cwd))
        if os.path.exists(there):
            return there
    return arg

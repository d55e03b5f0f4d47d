"""Where a runtime finding's fix goes, and what the edit is.

A cost finding (``costs.py``) is about builds; the launch that triggered a build is evidence, not the line to
change. This module moves each finding to the line its fix belongs on, from recorded facts only:

- WC907 (backward never used): the module's ``set_module_options`` call when the program made one, else its
  first kernel definition (the decorator line Python reports as the function's first line);
- WC906 (link-dominated build): the tile call whose code generation built the LTOs (Warp's own codegen line,
  recorded by the LTO hook), else the module's kernel definitions;
- WC909 (serial builds): the first top-level line of the entry file after its imports and after the kernel
  definitions of the modules to preload;
- WC910 (fragmented modules): the kernel definitions of the group.

The launches and builds stay as related locations. The edit is text (``Placement.edit``); where the edit is a
plain insertion whose meaning is clear it is also a ``Fix`` (never safe: switching backward off, or loading
modules earlier, changes what the program does in paths this run did not take).
"""

from __future__ import annotations

import ast
import functools
import os
from dataclasses import dataclass, field

from warplint.diagnostic import Applicability, Edit, Fix

from .costs import CostFinding, SiteNote
from .events import norm_path
from .profile import IdentityCost, Profile


@dataclass
class Placement:
    site: tuple  # (path, line): where the fix goes
    edit: str  # the concrete edit, as text
    fix: Fix | None = None  # the same edit as an applicable fix, where it is a plain insertion
    related: list[SiteNote] = field(default_factory=list)  # the evidence: launches, builds


@functools.lru_cache(maxsize=64)
def _parsed(path: str, mtime: float) -> ast.Module | None:
    try:
        with open(path, encoding="utf-8") as fh:
            return ast.parse(fh.read())
    except (OSError, SyntaxError, ValueError, UnicodeDecodeError):
        return None


def _tree(path: str) -> ast.Module | None:
    try:
        return _parsed(path, os.path.getmtime(path))
    except OSError:
        return None


def warp_alias(tree: ast.Module) -> str | None:
    """The name the file binds the ``warp`` package to at top level (``import warp as wp``), if any."""
    for node in tree.body:
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name == "warp":
                    return a.asname or "warp"
    return None


def _start(node: ast.stmt) -> int:
    return min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", ())])


def _top_level_statement_at(tree: ast.Module, line: int) -> ast.stmt | None:
    for node in tree.body:
        if _start(node) <= line <= (node.end_lineno or node.lineno):
            return node
    return None


def _names_module(node: ast.stmt, module: str) -> bool:
    """Does this definition's decorator name its module with this string (``@wp.kernel(module="name")``)?"""
    for d in getattr(node, "decorator_list", ()):
        for kw in getattr(d, "keywords", ()) if isinstance(d, ast.Call) else ():
            if kw.arg == "module" and isinstance(kw.value, ast.Constant) and kw.value.value == module:
                return True
    return False


def _kernel_sites(ids: list[IdentityCost], cwd: str) -> list[tuple[str, int, str, str | None, str | None]]:
    """(path, first line, key, qualname, Python module) of every kernel of these identities, in line order."""
    seen: dict[tuple[str, int], tuple[str, int, str, str | None, str | None]] = {}
    for i in ids:
        for k in i.kernel_sites:
            path = norm_path(k[0], cwd)
            if path and not str(k[0]).startswith("<"):
                entry = (path, int(k[1]), str(k[2]), k[3] if len(k) > 3 else None, k[4] if len(k) > 4 else None)
                seen.setdefault((entry[0], entry[1]), entry)
    return sorted(seen.values(), key=lambda e: (e[0], e[1]))


def _evidence(c: CostFinding, profile: Profile) -> list[SiteNote]:
    """The builds and the launches of the finding's modules, as related locations (after the finding's own)."""
    out = list(c.related)
    have = {n.site for n in out}
    for i in c.loads:
        if i.site and tuple(i.site) not in have:
            have.add(tuple(i.site))
            out.append(SiteNote(tuple(i.site), f"{i.label()} built here ({i.ms / 1000.0:.2f} s)"))
    mods = {i.module for i in c.loads}
    for shape, count in profile.topology.items():
        if shape.module in mods and count.site and tuple(count.site) not in have:
            have.add(tuple(count.site))
            out.append(SiteNote(tuple(count.site), f"{shape.kernel} launched here"))
    return out


def _backward(c: CostFinding, profile: Profile, cwd: str) -> Placement | None:
    module = c.data.get("module")
    calls = [s for s in profile.run.set_options if s.get("module") == module and s.get("_site")
             and not s.get("internal")]
    if calls:
        site = calls[0]["_site"]
        return Placement(site, 'add "enable_backward": False to this set_module_options(...) call',
                         related=_evidence(c, profile))
    kernels = _kernel_sites(c.loads, cwd)
    if not kernels:
        return None
    path, line, _key, qualname, pymodule = kernels[0]
    names = ", ".join(sorted({k[2] for k in kernels})[:4])
    per_kernel = f"pass enable_backward=False to the kernel decorator of {names}"
    tree = _tree(path)
    alias = warp_alias(tree) if tree is not None else None
    node = _top_level_statement_at(tree, line) if tree is not None else None
    # set_module_options() with no module resolves the caller's module, as Warp does: the file's own module;
    # a kernel placed in a module by name (@wp.kernel(module="name")) gets module="name"
    target = "" if pymodule == module else f', module="{module}"'
    if target and not (node is not None and _names_module(node, str(module))):
        node = None
    if alias is None or node is None or "<locals>" in str(qualname or ""):
        return Placement((path, line), per_kernel, related=_evidence(c, profile))
    text = f'{alias}.set_module_options({{"enable_backward": False}}{target})\n\n\n'
    fix = Fix(f"Turn backward code generation off for module {module} (no kernel of it was differentiated)",
              (Edit.insert(line, 0, text),), Applicability.UNSAFE)
    return Placement((path, line), f"insert before this line: {text.strip()}", fix, _evidence(c, profile))


def _link(c: CostFinding, profile: Profile, cwd: str) -> Placement | None:
    (i,) = c.loads[:1] or (None,)
    if i is None:
        return None
    calls = []
    for e in profile.run.ltos:
        site = e.get("_call")
        if (e.get("module") == i.module and e.get("built") and e.get("pid") == i.pid and site
                and i.start_s <= float(e.get("t") or 0) <= i.end_s and site not in calls):
            calls.append(site)
    edit = (f'set "enable_mathdx_gemm": False in module {i.module}\'s options for float32 GEMMs '
            "(or use fewer distinct tile shapes); keep the LTO cache between runs")
    if calls:
        related = [SiteNote(s, "this tile call built MathDx LTO artifacts too") for s in calls[1:]]
        return Placement(calls[0], edit, related=related + _evidence(c, profile))
    kernels = _kernel_sites(c.loads, cwd)
    if not kernels:
        return None
    return Placement(kernels[0][:2], edit, related=_evidence(c, profile))


def _serial(c: CostFinding, profile: Profile, cwd: str) -> Placement | None:
    first = min(c.loads, key=lambda i: i.start_s, default=None)
    if first is None or not first.site:
        return None
    entry = first.site[0]
    tree = _tree(entry)
    if tree is None:
        return None
    alias = warp_alias(tree)
    line_of_use = int(first.site[1])
    after = 0  # the last top-level line the preload must follow: imports, and these modules' kernels in this file
    for node in tree.body:
        if node.lineno > line_of_use:
            break
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            after = max(after, node.end_lineno or node.lineno)
    for path, line, *_ in _kernel_sites(c.loads, cwd):
        defined = _top_level_statement_at(tree, line) if path == entry else None
        if defined is not None:
            after = max(after, defined.end_lineno or defined.lineno)
    if after == 0 or after >= line_of_use:
        return None
    by_target: dict[tuple, list[str]] = {}
    for i in sorted(c.loads, key=lambda i: i.start_s):
        names = by_target.setdefault((i.device, i.block_dim), [])
        if i.module not in names:
            names.append(i.module)
    w = alias or "wp"
    lines = []
    for (device, block_dim), names in by_target.items():
        mods = ", ".join(f'{w}.get_module("{n}")' for n in names)
        lines.append(f'{w}.force_load(device="{device}", modules=[{mods}], block_dim={block_dim}, '
                     f"max_workers={len(names)})")
    text = "\n".join(lines) + "\n"
    # before the first statement after them (not on the blank lines between)
    insert_at = min((_start(n) for n in tree.body if _start(n) > after), default=after + 1)
    fix = None
    if alias is not None:
        fix = Fix("Build the modules at once after the imports (a parallel preload)",
                  (Edit.insert(insert_at, 0, text),), Applicability.UNSAFE)
    return Placement((entry, insert_at), "insert before this line: " + "; ".join(lines), fix,
                     _evidence(c, profile))


def _fragmented(c: CostFinding, profile: Profile, cwd: str) -> Placement | None:
    kernels = _kernel_sites(c.loads, cwd)
    if not kernels:
        return None
    target = sorted(c.data.get("modules") or [kernels[0][4] or "shared"])[0]
    names = ", ".join(k[2] for k in kernels[:6])
    edit = f'put the kernels {names} into one module: @wp.kernel(module="{target}") on each'
    related = [SiteNote(k[:2], f"kernel {k[2]} defined here (its own module)") for k in kernels[1:]]
    return Placement(kernels[0][:2], edit, related=related + _evidence(c, profile))


PLACE = {"WC907": _backward, "WC906": _link, "WC909": _serial, "WC910": _fragmented}


def placement(c: CostFinding, profile: Profile, cwd: str) -> Placement | None:
    """Where this cost finding's fix goes (None: keep the finding where the build was triggered)."""
    how = PLACE.get(c.code)
    if how is None:
        return None
    try:
        return how(c, profile, cwd)
    except (OSError, ValueError):
        return None

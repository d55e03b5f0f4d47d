"""Warp name canonicalisation and module naming from file paths."""

from __future__ import annotations

import os

# Old and private spellings of public Warp API, mapped to the public name.
_PRIVATE_NAMESPACES = ("context", "build", "codegen", "types", "utils", "tape")


def canonical(dotted: str) -> str:
    """``warp._src.context.launch`` / ``warp.context.launch`` -> ``warp.launch``."""
    if not dotted.startswith("warp."):
        return dotted
    parts = dotted.split(".")
    if len(parts) >= 4 and parts[1] == "_src" and parts[2] in _PRIVATE_NAMESPACES:
        return "warp." + ".".join(parts[3:])
    if len(parts) >= 3 and parts[1] in ("context", "build"):
        return "warp." + ".".join(parts[2:])
    return dotted


def is_warp(dotted: str | None, *names: str) -> bool:
    """True when ``dotted`` is ``warp.<one of names>`` (any when names is empty)."""
    if not dotted or not dotted.startswith("warp."):
        return False
    return not names or dotted[5:] in names


_WARP_PROJECT_PACKAGES = ("warp.tests.", "warp.examples.")


def is_warp_api(dotted: str | None) -> bool:
    """A name of Warp's API (``warp.zeros``, ``warp.config.x``); Warp's own tests and examples are
    project code when Warp's source tree is what is linted."""
    if not dotted or not (dotted == "warp" or dotted.startswith("warp.")):
        return False
    return not dotted.startswith(_WARP_PROJECT_PACKAGES)


# Folders without ``__init__.py`` followed upwards to a regular package above them (namespace portions).
_MAX_NAMESPACE_GAP = 3
_PROJECT_ROOT_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", ".git")


def module_name_for_path(path: str) -> tuple[str, bool]:
    """The dotted module name a file has under the directory above its packages (``package_base``):
    its ``__name__`` when that directory is the ``sys.path`` entry it is imported through, and whether
    it is a package __init__. ``warplint.module_names`` decides the entry from the project's evidence."""
    parts, is_package, _ = package_base(path)
    stem = os.path.basename(path)
    return ".".join(parts) or (stem[:-3] if stem.endswith(".py") else stem), is_package


def package_base(path: str, gaps: dict[str, int | None] | None = None) -> tuple[list[str], bool, str]:
    """(the file's name parts below its base, whether it is a package __init__, the base directory).

    Walks up while the directory is a package (has ``__init__.py``). A folder without one inside
    a regular package is a namespace package and part of the name (``newton/_src/solvers/x.py``
    under ``newton/__init__.py`` is ``newton._src.solvers.x``): up to three such folders in a row
    are followed to a package above them, never past a project root (``pyproject.toml``, ``.git``).
    ``gaps``: a memo of ``_namespace_gap`` by folder, for a caller naming many files.
    """
    path = os.path.abspath(path)
    directory, filename = os.path.split(path)
    stem = filename[:-3] if filename.endswith(".py") else filename
    is_package = stem == "__init__"
    parts: list[str] = [] if is_package else [stem]
    while True:
        if gaps is None:
            gap = _namespace_gap(directory)
        elif directory in gaps:
            gap = gaps[directory]
        else:
            gap = gaps[directory] = _namespace_gap(directory)
        if gap is None:
            break
        for _ in range(gap + 1):
            parent, package = os.path.split(directory)
            if not package:
                return [p for p in parts if p], is_package, directory
            directory = parent
            parts.insert(0, package)
    return [p for p in parts if p], is_package, directory


def _namespace_gap(directory: str) -> int | None:
    """How many folders without ``__init__.py`` lead from ``directory`` up to a regular package (0:
    ``directory`` is one); None when none does within the bound."""
    probe = directory
    for gap in range(_MAX_NAMESPACE_GAP + 1):
        if os.path.isfile(os.path.join(probe, "__init__.py")):
            return gap
        if any(os.path.exists(os.path.join(probe, marker)) for marker in _PROJECT_ROOT_MARKERS):
            return None
        parent = os.path.dirname(probe)
        if parent == probe:
            return None
        probe = parent
    return None


def resolve_relative(module: str, is_package: bool, level: int, target: str | None) -> str:
    """Absolute module for ``from <level dots><target> import ...`` written in ``module``."""
    if level == 0:
        return target or ""
    package = module if is_package else module.rpartition(".")[0]
    for _ in range(level - 1):
        package = package.rpartition(".")[0]
    if target:
        return f"{package}.{target}" if package else target
    return package


def dotted_name(node) -> str | None:
    """``a.b.c`` for a Name/Attribute chain (a LibCST node), else None."""
    import libcst as cst

    parts: list[str] = []
    while isinstance(node, cst.Attribute):
        parts.append(node.attr.value)
        node = node.value
    if isinstance(node, cst.Name):
        parts.append(node.value)
        return ".".join(reversed(parts))
    return None

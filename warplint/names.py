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


def module_name_for_path(path: str) -> tuple[str, bool]:
    """The dotted module name a file is imported as, and whether it is a package __init__.

    Walks up while the directory is a package (has ``__init__.py``).
    """
    path = os.path.abspath(path)
    directory, filename = os.path.split(path)
    stem = filename[:-3] if filename.endswith(".py") else filename
    is_package = stem == "__init__"
    parts: list[str] = [] if is_package else [stem]
    while os.path.isfile(os.path.join(directory, "__init__.py")):
        directory, package = os.path.split(directory)
        parts.insert(0, package)
        if not package:
            break
    return ".".join(p for p in parts if p) or stem, is_package


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

"""Finds the rules: every ``Rule`` subclass defined in a module of ``warplint.rules``."""

from __future__ import annotations

import functools
import importlib
import pkgutil

from .rule import Rule


class FileError(Rule):
    """A file that cannot be read, decoded or parsed.

    warplint reports it once and goes on with the other files. Fix the syntax error
    (or exclude the file) so the file's Warp code can be checked.
    """

    code = "WC000"
    name = "file-error"
    mechanism = "-"
    summary = "The file could not be read or parsed, so it was not checked."
    confidence = "high"


@functools.lru_cache(maxsize=1)
def all_rules() -> dict[str, Rule]:
    """Rule instances by code, sorted by code."""
    import warplint.rules as package

    found: dict[str, Rule] = {FileError.code: FileError()}
    for info in pkgutil.iter_modules(package.__path__):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{package.__name__}.{info.name}")
        for obj in vars(module).values():
            if (
                isinstance(obj, type) and issubclass(obj, Rule) and obj is not Rule
                and obj.__module__ == module.__name__
            ):
                obj.validate()
                if obj.code in found:
                    raise TypeError(f"duplicate rule code {obj.code} in {module.__name__}")
                found[obj.code] = obj()
    return dict(sorted(found.items()))


def get_rule(code: str) -> Rule | None:
    return all_rules().get(code.upper())

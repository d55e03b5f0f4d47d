"""The semantic layer's shape: imports run one way (CONTRIBUTING.md, "The semantic layer"), and rules read
the layer through one door (``Project``'s methods), importing only its vocabulary."""

import ast
import glob
import importlib
import inspect
import os

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SEMANTIC = os.path.join(ROOT, "warplint", "semantic")

# Each module's row, bottom first: a module imports only modules of lower rows (type-only imports too).
ROWS = {
    "values": 0, "context": 0, "file_facts": 0, "budget": 0, "reads": 0, "resolution": 0, "statement_order": 0,
    "bindings": 1,
    "evaluator": 2,
    "kernels": 3, "events": 3, "layer": 3,
    "devices": 4, "facts_paths": 4, "arg_types": 4, "module_options": 4,
    "launches": 5,
    "builds": 6, "variants": 6, "collect": 6,
    "generics": 7, "differentiation": 7, "membership": 7, "deliberate": 7,
}


def _tree(path: str) -> ast.Module:
    with open(path, encoding="utf-8") as fh:
        return ast.parse(fh.read())


def _semantic_imports(path: str) -> set[str]:
    """The warplint.semantic modules a file imports (relative or absolute, anywhere in the file)."""
    found = set()
    for node in ast.walk(_tree(path)):
        if isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level == 1 and not module:  # from . import devices
                found.update(alias.name for alias in node.names)
            elif node.level == 1:
                found.add(module.partition(".")[0])
            elif module.startswith("warplint.semantic."):
                found.add(module.split(".")[2])
            elif module == "warplint.semantic":
                found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.Import):
            found.update(a.name.split(".")[2] for a in node.names if a.name.startswith("warplint.semantic."))
    return found


def test_every_semantic_module_has_a_row():
    modules = {os.path.basename(p)[:-3] for p in glob.glob(os.path.join(SEMANTIC, "*.py"))} - {"__init__"}
    assert modules == set(ROWS), "give each module of warplint/semantic/ its row in ROWS (and CONTRIBUTING's table)"


@pytest.mark.parametrize("module", sorted(ROWS))
def test_imports_run_down(module):
    imported = _semantic_imports(os.path.join(SEMANTIC, f"{module}.py"))
    upward = sorted(m for m in imported if m in ROWS and ROWS[m] >= ROWS[module])
    assert not upward, f"warplint/semantic/{module}.py (row {ROWS[module]}) imports {upward}: same row or above"


def test_the_layer_imports_neither_the_facade_nor_the_engine():
    for path in glob.glob(os.path.join(SEMANTIC, "*.py")):
        for node in ast.walk(_tree(path)):
            if isinstance(node, ast.ImportFrom) and node.module:
                assert node.module not in ("warplint.index", "warplint.engine", "warplint.rule"), path
                assert not (node.level == 2 and node.module in ("index", "engine", "rule")), path


def test_the_import_check_sees_an_upward_import(tmp_path):
    path = tmp_path / "x.py"
    path.write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .launches import IdentityFacts\n"
                    "from warplint.semantic import builds\n")
    assert _semantic_imports(str(path)) == {"launches", "builds"}


def _rule_files() -> list[str]:
    return sorted(glob.glob(os.path.join(ROOT, "rules", "*.py")))


@pytest.mark.parametrize("path", _rule_files(), ids=os.path.basename)
def test_rules_read_the_layer_through_the_facade(path):
    """A rule imports types and constants from warplint.semantic, never a fact function, and does not reach
    past the façade (``project.layer``, an evaluator)."""
    tree = _tree(path)
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("warplint.semantic"):
            module = importlib.import_module(node.module or "")
            for alias in node.names:
                value = getattr(module, alias.name)
                assert inspect.isclass(value) or not callable(value), (
                    f"{os.path.basename(path)} imports the function {node.module}.{alias.name}: ask the Project")
        if isinstance(node, ast.Attribute):
            assert node.attr not in ("layer", "evaluator", "_facts", "_bindings", "_evaluator"), (
                f"{os.path.basename(path)}:{node.lineno} reaches past the façade (.{node.attr})")

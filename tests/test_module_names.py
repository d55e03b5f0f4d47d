"""Module names as Python's import system gives them (warplint/module_names.py): Warp names a module after
the Python module, so every message and the WC501 fix must use the name the program's run gives."""

import json
import os
import shutil
import subprocess
import sys

import pytest

from warplint.config import Config, load_config
from warplint.engine import Session
from warplint.module_names import ModuleNames, RunHint, imports_of
from warplint.registry import all_rules

DEFAULT_CODES = tuple(code for code, rule in all_rules().items() if rule.default_enabled and not rule.runtime_only)
FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures", "module_names")


def _names(layout: str) -> dict[str, str]:
    """relative path -> module name, for every file of a fixture layout linted as its own project."""
    root = os.path.join(FIXTURES, layout)
    session = Session(load_config(root, set(all_rules())).with_overrides(select=DEFAULT_CODES), cache=False)
    session.lint_paths([root], project_context=True)
    return {os.path.relpath(path, root): model.module for path, model in session.models.items()}


def test_a_namespace_package_imported_from_the_root_is_named_from_the_root():
    names = _names("namespace_run")
    # main.py imports apps.particles.kernels: the root is on sys.path, both folders are namespace packages
    assert names["apps/particles/kernels.py"] == "apps.particles.kernels"
    assert names["apps/particles/main.py"] == "apps.particles.main"
    # a relative import in a folder without __init__.py: only python -m from the root runs it
    assert names["apps/fluids/kernels.py"] == "apps.fluids.kernels"
    # no importer: the configured run command (python -m tools.bench.main) names it
    assert names["tools/bench/main.py"] == "tools.bench.main"


def test_the_run_command_names_modules_nobody_imports():
    root = os.path.join(FIXTURES, "namespace_run")
    listing = [os.path.join(root, "tools", "bench", "main.py")]
    path = listing[0]

    def read(p):
        with open(p) as fh:
            return fh.read()

    unhinted = ModuleNames(root, (), None, lambda _: listing, read)
    assert unhinted.name_of(path) == ("main", False)
    run = RunHint.of(["python", "-X", "dev", "-m", "tools.bench.main"], root)
    hinted = ModuleNames(root, (), run, lambda _: listing, read)
    assert hinted.name_of(path) == ("tools.bench.main", False)
    assert hinted.reason(path) == "run as python -m tools.bench.main"
    assert hinted.run_target() == path
    script = RunHint.of(["python3", "tools/bench/main.py"], root)
    assert script is not None and script.script == path
    assert ModuleNames(root, (), script, lambda _: listing, read).name_of(path) == ("main", False)


def test_a_src_layout_is_named_from_its_declared_root():
    names = _names("src_layout")
    # [tool.setuptools.packages.find] where = ["src"]: acme (no __init__.py) is a namespace package
    assert names["src/acme/physics/kernels.py"] == "acme.physics.kernels"
    assert names["src/acme/physics/__init__.py"] == "acme.physics"


def test_a_nested_projects_packaging_is_read_from_a_parent_root():
    # linted from a folder above (a monorepo's root): src_layout's own pyproject.toml declares src/
    session = Session(Config(root=FIXTURES, select=DEFAULT_CODES), cache=False)
    session.keep_indexes = True  # a grouped run lets go of each group's models once its findings are out
    session.lint_paths([FIXTURES], project_context=True)
    kernels = os.path.join(FIXTURES, "src_layout", "src", "acme", "physics", "kernels.py")
    # src_layout is a project of its own (its pyproject.toml): a grouped run models it in its own index
    index = session._owners.get(kernels, session)
    assert index is not session
    assert index.models[kernels].module == "acme.physics.kernels"


def test_src_setting_declares_an_import_root(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.warplint]\nsrc = ["lib"]\n')
    (tmp_path / "lib" / "ns" / "ops").mkdir(parents=True)
    (tmp_path / "lib" / "ns" / "ops" / "k.py").write_text("import warp as wp\n")
    config = load_config(str(tmp_path), set(DEFAULT_CODES))
    assert config.src == ("lib",)
    session = Session(config, cache=False)
    session.lint_paths([str(tmp_path)], project_context=True)
    assert session.models[str(tmp_path / "lib" / "ns" / "ops" / "k.py")].module == "ns.ops.k"


def test_a_script_folder_importing_its_siblings_keeps_their_short_names():
    names = _names("script_folder")
    # `from sim import step` in demo/main.py: demo/ is sys.path[0] (python demo/main.py), not the root
    assert names["demo/sim.py"] == "sim"
    assert names["demo/main.py"] == "main"


def test_regular_packages_are_named_as_before():
    names = _names("regular")
    assert names == {"pkg/__init__.py": "pkg", "pkg/kernels.py": "pkg.kernels", "app.py": "app"}


def test_imports_are_read_without_parsing():
    text = ("import a.b, c as d\nfrom e.f import (g,\n    h as i)\nfrom . import j\n"
            "    from k import *  # comment\nx = 1; import l\n")
    found, relative = imports_of(text)
    assert set(found) == {"a.b", "c", "e.f", "e.f.g", "e.f.h", "k", "l"}  # l: after a semicolon
    assert relative


def test_one_file_is_named_alike_alone_and_with_its_directory(run_cli):
    root = os.path.join(FIXTURES, "namespace_run")
    alone = json.loads(run_cli("apps/particles/main.py", "--no-cache", "--unsafe-fixes", "--format", "json",
                               cwd=root)[1])
    whole = json.loads(run_cli(".", "--no-cache", "--unsafe-fixes", "--format", "json", cwd=root)[1])
    fixes = [f["fix"] for f in alone if f["code"] == "WC501"]
    assert fixes and fixes == [f["fix"] for f in whole if f["code"] == "WC501"]
    assert 'get_module("apps.particles.kernels")' in fixes[0]["edits"][0]["content"]


@pytest.mark.parametrize("layout,command,kernel", [
    ("namespace_run", ["-m", "apps.particles.main"], "advance"),
    ("script_app", ["app.py"], "fill"),
])
def test_warp_names_the_module_as_warplint_does(tmp_path, run_cli, layout, command, kernel):
    """Real Warp on CPU: wp.get_module(name) for the name the WC501 fix writes holds the launched kernel."""
    project = tmp_path / "project"
    shutil.copytree(os.path.join(FIXTURES, layout), project)
    found = json.loads(run_cli(".", "--no-cache", "--unsafe-fixes", "--format", "json", cwd=str(project))[1])
    (fix,) = [f["fix"] for f in found if f["code"] == "WC501"]
    content = fix["edits"][0]["content"]
    names = [part.split('"', 1)[0] for part in content.split('get_module("')[1:]]
    env = {**os.environ, "WARP_CACHE_PATH": str(tmp_path / "warp-cache"), "PYTHONDONTWRITEBYTECODE": "1"}
    run = subprocess.run([sys.executable, *command, *names], cwd=project, env=env, capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0, run.stderr
    held = json.loads(run.stdout.strip().splitlines()[-1])  # name -> the kernels of wp.get_module(name)
    assert [kernel] in held.values(), (names, held)


def test_the_confirm_command_says_which_file_runs_as_main(tmp_path):
    """An imported script is not __main__ unless the command runs it (`--confirm -- python app.py`)."""
    shutil.copytree(os.path.join(FIXTURES, "script_app"), tmp_path, dirs_exist_ok=True)
    (tmp_path / "tool.py").write_text("import app\n")
    env = {**os.environ, "WARP_CACHE_PATH": str(tmp_path / "warp-cache")}

    def fix_text(*extra):
        proc = subprocess.run([sys.executable, "-m", "warplint", "app.py", "--no-cache", "--unsafe-fixes", "--format",
                               "json", *extra], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
        document = json.loads(proc.stdout)
        findings = document["findings"] if isinstance(document, dict) else document
        (fix,) = [f["fix"] for f in findings if f["code"] == "WC501"]
        return fix["edits"][0]["content"]

    assert 'get_module("app")' in fix_text()  # imported by tool.py: the most likely run imports it
    assert 'get_module("__main__")' in fix_text("--confirm", "--", sys.executable, "app.py")


def test_a_guessed_name_is_said_cold_and_warm(tmp_path, run_cli):
    """Relative imports in a folder without __init__.py: the name assumes python -m from the root, and says so,
    also when the findings come from the result cache."""
    shutil.copytree(os.path.join(FIXTURES, "namespace_run"), tmp_path, dirs_exist_ok=True)
    note = ("warplint: note: apps/fluids: its modules are named apps.fluids.*: relative imports in a "
            "folder without __init__.py: assumed run with python -m from the project root")
    cold = run_cli("apps/fluids/main.py", "-v", cwd=str(tmp_path))
    warm = run_cli("apps/fluids/main.py", "-v", cwd=str(tmp_path))
    assert note in cold[2].splitlines() and note in warm[2].splitlines()
    assert "from the result cache" in warm[2]
    assert note not in run_cli("apps/particles/main.py", cwd=str(tmp_path))[2]  # imported by its full name


def test_a_test_file_runs_under_its_module_name(tmp_path, run_cli):
    """`if __name__ == "__main__": unittest.main()` is not how a test file runs: a runner imports it."""
    with open(os.path.join(FIXTURES, "script_app", "app.py")) as fh:
        source = fh.read()
    (tmp_path / "pyproject.toml").write_text("")
    # in a test file the launching helper is a test (the runner calls it); a helper nothing calls launches nothing
    (tmp_path / "test_app.py").write_text(source.replace("def warm(", "def test_warm("))
    (tmp_path / "app.py").write_text(source)
    found = json.loads(run_cli(".", "--no-cache", "--unsafe-fixes", "--format", "json", cwd=str(tmp_path))[1])
    fixes = {f["path"]: f["fix"]["edits"][0]["content"] for f in found if f["code"] == "WC501"}
    assert 'get_module("test_app")' in fixes["test_app.py"] and "__main__" not in fixes["test_app.py"]
    assert 'get_module("__main__")' in fixes["app.py"] and 'get_module("app")' not in fixes["app.py"]


def test_the_result_cache_follows_declared_roots(tmp_path, run_cli):
    """The packaging settings are not Python files: changing them must not answer from the result cache."""
    shutil.copytree(os.path.join(FIXTURES, "src_layout"), tmp_path, dirs_exist_ok=True)
    assert "from the result cache" not in run_cli(".", "-v", cwd=str(tmp_path))[2]
    assert "from the result cache" in run_cli(".", "-v", cwd=str(tmp_path))[2]
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text(pyproject.read_text().replace('where = ["src"]', 'where = ["src/acme"]'))
    assert "from the result cache" not in run_cli(".", "-v", cwd=str(tmp_path))[2]


def test_each_files_imports_are_read_once_per_text_across_runs(tmp_path, monkeypatch):
    """The namer reads what every file of the project imports; a later run takes each unchanged text's imports
    from the cache (by its digest) and reads only the edited file again, with the names the evidence gives."""
    import warplint.engine as engine

    root = tmp_path / "proj"
    shutil.copytree(os.path.join(FIXTURES, "namespace_run"), root)
    config = load_config(str(root), set(all_rules())).with_overrides(select=DEFAULT_CODES)
    read: list[str] = []

    def counted(text: str) -> tuple[list[str], bool]:
        read.append(text)
        return imports_of(text)

    monkeypatch.setattr(engine, "imports_of", counted)

    def names() -> dict[str, str]:
        session = Session(config, cache=True, cache_dir=str(tmp_path / "cache"))
        session.lint_paths([str(root)], project_context=True)
        return {os.path.relpath(path, root): model.module for path, model in session.models.items()}

    first = names()
    assert len(read) == 5 and first["apps/particles/kernels.py"] == "apps.particles.kernels"
    read.clear()
    assert names() == {} and read == []  # nothing changed: the result cache answers, nothing is modelled
    main = root / "apps" / "particles" / "main.py"
    main.write_text(main.read_text().replace("from apps.particles.kernels import", "from particles.kernels import"))
    read.clear()
    edited = names()
    assert read == [main.read_text()]  # only the edited file's imports are read again
    # its evidence now names the folder above particles/ as the import root
    assert edited["apps/particles/kernels.py"] == "particles.kernels"

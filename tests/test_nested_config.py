"""Configuration per file, hierarchical as in ruff (issue 30 item 4): each file is governed by the
nearest pyproject.toml with a ``[tool.warplint]`` table, whether the run names the file or a directory
above it; command-line options override every config; the result cache keys each file's findings by
the config that governs it. Through the real CLI."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

# a wp.force_load() without modules= (WC501); the module builds no backward code (else WC406 too)
APP = textwrap.dedent(
    """\
    import warp as wp

    wp.set_module_options({"enable_backward": False})


    def run(a):
        wp.force_load()
        wp.launch(step, dim=1, inputs=[a])


    @wp.kernel
    def step(a: wp.array(dtype=float)):
        a[0] = 1.0
    """
)


@pytest.fixture
def tree(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.warplint]\nignore = []\n")
    (tmp_path / "top.py").write_text(APP)
    nested = tmp_path / "nested"
    nested.mkdir()
    (nested / "pyproject.toml").write_text('[tool.warplint]\nignore = ["WC501"]\n')
    (nested / "app.py").write_text(APP)
    # a pyproject.toml without the table does not make a config: its parent's governs
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "pyproject.toml").write_text("[project]\nname = 'plain'\n")
    (plain / "app.py").write_text(APP)
    return tmp_path


def codes(cwd, *args) -> dict[str, list[str]]:
    result = subprocess.run([sys.executable, "-m", "warplint", "--format", "json", *args], cwd=cwd,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode in (0, 1), result.stderr
    found: dict[str, list[str]] = {}
    for entry in json.loads(result.stdout):
        found.setdefault(entry["path"].replace("\\", "/"), []).append(entry["code"])
    return {path: sorted(set(c)) for path, c in found.items()}


@pytest.mark.parametrize("cache", [[], ["--no-cache"]], ids=["cache", "no-cache"])
def test_each_file_is_governed_by_its_nearest_config_however_it_is_named(tree, cache):
    whole = codes(tree, *cache, ".")
    assert "WC501" in whole["top.py"] and "WC501" in whole["plain/app.py"]
    assert "WC501" not in whole.get("nested/app.py", []), whole
    assert codes(tree, *cache, "nested/app.py") == codes(tree, *cache, "nested") == {}
    assert codes(tree / "nested", *cache, "app.py") == {}
    assert codes(tree, *cache, "plain/app.py") == {"plain/app.py": whole["plain/app.py"]}


def test_command_line_options_override_every_config(tree):
    found = codes(tree, "--ignore", "WC501", ".")
    assert all("WC501" not in c for c in found.values()), found
    # the nested config's own setting stays under options that do not touch it
    assert codes(tree, "--select", "WC501", ".") == {"top.py": ["WC501"], "plain/app.py": ["WC501"]}
    (tree / "nested" / "pyproject.toml").write_text('[tool.warplint]\nexclude = ["app.py"]\n')
    assert "nested/app.py" not in codes(tree, ".")
    assert "nested/app.py" in codes(tree, "--exclude", "", ".")  # --exclude replaces every config's


def test_the_result_cache_follows_a_change_to_a_nested_config(tree):
    assert "WC501" not in codes(tree, ".").get("nested/app.py", [])
    (tree / "nested" / "pyproject.toml").write_text("[tool.warplint]\nignore = []\n")
    assert "WC501" in codes(tree, ".").get("nested/app.py", [])
    assert "WC501" in codes(tree, "nested/app.py")["nested/app.py"]

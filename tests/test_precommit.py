"""The hooks in .pre-commit-hooks.yaml, run by the real pre-commit on a temporary git repo.

pre-commit clones this checkout (at HEAD: commit hook changes before running this locally)
and pip-installs it into a hook environment, so the first run needs the package index for
libcst and pathspec. One PRE_COMMIT_HOME is shared by the tests of a session.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BAD = "import warp as wp\n\nwp.force_load()\n"
GOOD = "import warp as wp\n\nwp.force_load(modules=[wp.get_module('app')])\n"


def run(cmd, cwd, env, check=False) -> subprocess.CompletedProcess:
    result = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    if check and result.returncode != 0:
        raise AssertionError(f"{cmd} failed ({result.returncode}):\n{result.stdout}\n{result.stderr}")
    return result


@pytest.fixture(scope="session")
def precommit_env(tmp_path_factory):
    env = dict(os.environ)
    env.update(
        PRE_COMMIT_HOME=str(tmp_path_factory.mktemp("pre-commit-home")),
        # `warplint` (for the system-language confirm hook) and `python` from this environment
        PATH=os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", ""),
        GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.com", GIT_COMMITTER_NAME="t",
        GIT_COMMITTER_EMAIL="t@example.com", GIT_CONFIG_NOSYSTEM="1", HOME=str(tmp_path_factory.mktemp("home")),
        PIP_DISABLE_PIP_VERSION_CHECK="1",
    )
    env.pop("VIRTUAL_ENV", None)
    return env


@pytest.fixture
def repo(tmp_path, precommit_env):
    head = run(["git", "rev-parse", "HEAD"], ROOT, precommit_env, check=True).stdout.strip()
    run(["git", "init", "-q", "-b", "main"], tmp_path, precommit_env, check=True)
    (tmp_path / ".pre-commit-config.yaml").write_text(
        textwrap.dedent(
            f"""\
            repos:
              - repo: {ROOT}
                rev: {head}
                hooks:
                  - id: warplint
                  - id: warplint-confirm
            """
        )
    )
    (tmp_path / "pyproject.toml").write_text(
        '[tool.warplint]\nconfirm = {command = "python -c \\"import warp\\"", timeout = 120}\n'
    )
    run(["git", "add", "."], tmp_path, precommit_env, check=True)
    run(["git", "commit", "-q", "-m", "init"], tmp_path, precommit_env, check=True)
    run([sys.executable, "-m", "pre_commit", "install"], tmp_path, precommit_env, check=True)
    return tmp_path


def test_commit_fails_on_a_bad_file_and_passes_after_the_fix(repo, precommit_env):
    (repo / "bad.py").write_text(BAD)
    (repo / "notes.txt").write_text("not python\n")
    run(["git", "add", "bad.py", "notes.txt"], repo, precommit_env, check=True)
    failed = run(["git", "commit", "-m", "bad"], repo, precommit_env)
    assert failed.returncode == 1, failed.stdout + failed.stderr
    output = failed.stdout + failed.stderr
    assert "warplint" in output and "Failed" in output
    assert "bad.py:3:1: WC501 [force-load-all-modules]" in output
    assert "notes.txt" not in output  # only Python files are passed
    assert "warplint --confirm" not in output  # manual stage: not run on commit
    assert run(["git", "log", "--oneline"], repo, precommit_env).stdout.count("\n") == 1

    (repo / "bad.py").write_text(GOOD)
    run(["git", "add", "bad.py"], repo, precommit_env, check=True)
    passed = run(["git", "commit", "-m", "fixed"], repo, precommit_env)
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert "warplint...." in passed.stderr + passed.stdout and "Passed" in passed.stderr + passed.stdout
    assert run(["git", "log", "--oneline"], repo, precommit_env).stdout.count("\n") == 2


def test_noqa_and_config_apply_in_the_hook(repo, precommit_env):
    (repo / "a.py").write_text("import warp as wp\n\nwp.force_load()  # noqa: WC501\n")
    (repo / "b.py").write_text(BAD)
    (repo / "pyproject.toml").write_text('[tool.warplint]\nper-file-ignores = {"b.py" = ["WC501"]}\n')
    (repo / "c.py").write_text(BAD)
    hook = [sys.executable, "-m", "pre_commit", "run", "warplint", "--files"]
    result = run([*hook, "a.py", "b.py"], repo, precommit_env)
    assert result.returncode == 0, result.stdout + result.stderr
    result = run([*hook, "a.py", "b.py", "c.py"], repo, precommit_env)
    assert result.returncode == 1 and "c.py:3:1: WC501" in result.stdout
    assert "a.py:" not in result.stdout and "b.py:" not in result.stdout


def test_manual_confirm_hook(repo, precommit_env):
    (repo / "app.py").write_text("import warp as wp\n")
    result = run(
        [sys.executable, "-m", "pre_commit", "run", "warplint-confirm", "--hook-stage", "manual", "--all-files"],
        repo, precommit_env,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "warplint --confirm" in result.stdout and "Passed" in result.stdout


def test_excluded_files_are_skipped_even_when_pre_commit_names_them(repo, precommit_env):
    """pre-commit passes file names; the hook's --force-exclude keeps [tool.warplint] exclude in force."""
    (repo / "pyproject.toml").write_text('[tool.warplint]\nextend-exclude = ["vendored/"]\n')
    (repo / "vendored").mkdir()
    (repo / "vendored" / "lib.py").write_text(BAD)
    (repo / "app.py").write_text(GOOD)
    hook = [sys.executable, "-m", "pre_commit", "run", "warplint", "--files"]
    result = run([*hook, "vendored/lib.py", "app.py"], repo, precommit_env)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Passed" in result.stdout
    # the same file, not excluded, fails the hook: the pass above is the exclusion's doing
    (repo / "pyproject.toml").write_text("[tool.warplint]\n")
    result = run([*hook, "vendored/lib.py", "app.py"], repo, precommit_env)
    assert result.returncode == 1 and "vendored/lib.py:3:1: WC501" in result.stdout


def test_the_local_hook_of_the_docs(tmp_path, precommit_env):
    """docs/pre-commit.md's `repo: local` hook, exactly as written there, on a real commit."""
    with open(os.path.join(ROOT, "docs", "pre-commit.md"), encoding="utf-8") as fh:
        doc = fh.read()
    config = next(block for block in (part.split("```")[0] for part in doc.split("```yaml\n")[1:])
                  if "repo: local" in block)
    run(["git", "init", "-q", "-b", "main"], tmp_path, precommit_env, check=True)
    (tmp_path / ".pre-commit-config.yaml").write_text(config)
    (tmp_path / "pyproject.toml").write_text('[tool.warplint]\nextend-exclude = ["legacy/"]\n')
    (tmp_path / "legacy").mkdir()
    (tmp_path / "legacy" / "old.py").write_text(BAD)
    run(["git", "add", "."], tmp_path, precommit_env, check=True)
    run(["git", "commit", "-q", "--no-verify", "-m", "init"], tmp_path, precommit_env, check=True)
    run([sys.executable, "-m", "pre_commit", "install"], tmp_path, precommit_env, check=True)
    (tmp_path / "legacy" / "old.py").write_text(BAD + "wp.force_load()\n")  # excluded: does not block
    (tmp_path / "bad.py").write_text(BAD)
    run(["git", "add", "."], tmp_path, precommit_env, check=True)
    failed = run(["git", "commit", "-m", "bad"], tmp_path, precommit_env)
    output = failed.stdout + failed.stderr
    assert failed.returncode == 1 and "bad.py:3:1: WC501" in output and "legacy" not in output, output
    (tmp_path / "bad.py").write_text(GOOD)
    run(["git", "add", "bad.py"], tmp_path, precommit_env, check=True)
    passed = run(["git", "commit", "-m", "fixed"], tmp_path, precommit_env)
    assert passed.returncode == 0, passed.stdout + passed.stderr

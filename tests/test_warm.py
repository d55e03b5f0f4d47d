"""The CLI's warm path (``warm.lint_root_files``): a run with nothing changed is answered from the result
cache without the engine and without reading files whose stat signature was kept; anything that changed
what the engine would index (an edit, a new file, a deleted file, a ``.gitignore``) is seen. Every answer is
compared with a ``--no-cache`` run of the same tree. No timing is asserted here (see benchmarks/run.py)."""

from __future__ import annotations

import ast
import os
import subprocess
import sys

import pytest

from warplint import cache

APP = "import warp as wp\nimport kernels_lib\n\nwp.config.enable_backward = False\n"
LIB_WITH_KERNEL = "import warp as wp\n\n\n@wp.kernel\ndef k(a: wp.array(dtype=float)):\n    a[0] = 1.0\n"
# the same size as LIB_WITH_KERNEL, and no kernel: app.py's WC401 goes away
LIB_WITHOUT_KERNEL = "import warp as wp\n\n\ndef k(a):\n    return a\n".ljust(len(LIB_WITH_KERNEL) - 1) + "\n"
LATE = "import warp as wp\n\nwp.force_load()\n"
WARM_NOTE = "no file read again"


@pytest.fixture
def project(tmp_path, monkeypatch):
    # every signature is kept at once (the racy rule's own test below runs with the real window)
    monkeypatch.setattr(cache.StatDigests, "RACY_NS", 0)
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "pyproject.toml").write_text("[tool.warplint]\n")
    (tree / "app.py").write_text(APP)
    (tree / "kernels_lib.py").write_text(LIB_WITH_KERNEL)
    return tree


def findings(run_cli, tree, *extra: str) -> tuple[list[tuple[str, str]], str]:
    """((file, code) of every finding, stderr) of the CLI on ``tree``."""
    code, out, err = run_cli(str(tree), "--format", "concise", "-j", "1", "-v", *extra, cwd=str(tree.parent))
    assert code in (0, 1), err
    found = sorted((os.path.basename(line.split(":")[0]), line.split()[1]) for line in out.splitlines()
                   if line.split()[1:2] and line.split()[1].startswith("WC"))
    return found, err


def check_warm_equals_cold(run_cli, tree, expect_warm: bool | None) -> list[tuple[str, str]]:
    """The run's findings, asserted equal to a ``--no-cache`` run's; ``expect_warm``: whether the warm path
    answered (None: either; a project state checked before is a hit)."""
    warm, err = findings(run_cli, tree)
    assert expect_warm is None or (WARM_NOTE in err) is expect_warm, err
    cold, _ = findings(run_cli, tree, "--no-cache")
    assert warm == cold
    return warm


def test_an_edit_between_two_warm_runs_is_seen(run_cli, project):
    """The same size, the modification time put back: only the ctime tells the rewrite (which no tool sets
    back). A stat path that trusted the kept signature would report app.py's WC401 still."""
    assert ("app.py", "WC401") in check_warm_equals_cold(run_cli, project, expect_warm=False)  # cold: fills
    assert ("app.py", "WC401") in check_warm_equals_cold(run_cli, project, expect_warm=True)
    lib = project / "kernels_lib.py"
    before = os.stat(lib)
    lib.write_text(LIB_WITHOUT_KERNEL)
    os.utime(lib, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert os.stat(lib).st_size == before.st_size
    assert ("app.py", "WC401") not in check_warm_equals_cold(run_cli, project, expect_warm=False)
    assert ("app.py", "WC401") not in check_warm_equals_cold(run_cli, project, expect_warm=True)


def test_a_new_file_a_deleted_file_and_a_gitignore_change_are_seen(run_cli, project):
    check_warm_equals_cold(run_cli, project, expect_warm=False)
    check_warm_equals_cold(run_cli, project, expect_warm=True)
    (project / "late.py").write_text(LATE)  # new: its finding appears
    assert ("late.py", "WC501") in check_warm_equals_cold(run_cli, project, expect_warm=False)
    assert ("late.py", "WC501") in check_warm_equals_cold(run_cli, project, expect_warm=True)
    (project / ".gitignore").write_text("late.py\n")  # ignored now: its finding goes (the first run's state)
    assert ("late.py", "WC501") not in check_warm_equals_cold(run_cli, project, expect_warm=None)
    check_warm_equals_cold(run_cli, project, expect_warm=True)
    (project / ".gitignore").write_text("other.py\n")  # the same directory listing, the .gitignore edited
    assert ("late.py", "WC501") in check_warm_equals_cold(run_cli, project, expect_warm=None)
    (project / "kernels_lib.py").unlink()  # deleted: app.py's import no longer reaches a kernel
    assert ("app.py", "WC401") not in check_warm_equals_cold(run_cli, project, expect_warm=False)
    check_warm_equals_cold(run_cli, project, expect_warm=True)


def test_a_file_in_a_new_subdirectory_is_seen(run_cli, project):
    check_warm_equals_cold(run_cli, project, expect_warm=False)
    (project / "pkg").mkdir()
    check_warm_equals_cold(run_cli, project, expect_warm=True)  # an empty directory: the same files
    (project / "pkg" / "late.py").write_text(LATE)  # changes pkg's mtime, not the root's
    assert ("late.py", "WC501") in check_warm_equals_cold(run_cli, project, expect_warm=False)


def test_one_file_named_is_answered_with_its_project(run_cli, project):
    """pre-commit names the changed files (with --force-exclude): each is checked with its whole project, and
    a second run with nothing changed is answered warm, spelled as named, as a ``--no-cache`` run answers."""
    def run(*extra: str) -> tuple[int, str, str]:
        return run_cli("app.py", "--format", "concise", "-j", "1", "-v", "--force-exclude", *extra, cwd=str(project))

    first = run()
    assert WARM_NOTE not in first[2]
    code, out, err = run()
    assert WARM_NOTE in err and code == 1 and "WC401" in out
    assert out.splitlines()[0].startswith("app.py:")
    assert (code, out) == run("--no-cache")[:2]


def test_a_nested_config_is_left_to_the_engine(run_cli, project):
    """A pyproject.toml below the root governs the files under it (another index): not answered warm."""
    (project / "sub").mkdir()
    (project / "sub" / "pyproject.toml").write_text("[tool.warplint]\nignore = ['WC501']\n")
    (project / "sub" / "late.py").write_text(LATE)
    check_warm_equals_cold(run_cli, project, expect_warm=False)
    assert ("late.py", "WC501") not in check_warm_equals_cold(run_cli, project, expect_warm=False)


def test_a_fresh_change_is_not_trusted_by_its_signature(run_cli, project, monkeypatch):
    """git's racy rule, with the real window: a file changed less than ``RACY_NS`` before the look keeps no
    signature (a rewrite within the timestamps' granularity, the same size, would look unchanged), so the
    next run reads it; the signatures of older files are kept."""
    monkeypatch.setattr(cache.StatDigests, "RACY_NS", 2_000_000_000)
    old = project / "kernels_lib.py"
    past = os.stat(old).st_mtime_ns - 10_000_000_000
    os.utime(old, ns=(past, past))  # (its ctime is now: the ctime counts too)
    findings(run_cli, project)
    kept = cache.StatDigests(str(project / ".warplint_cache"), cache.registry_salt() or "", cache.user_secret() or b"")
    kept._load()
    assert str(project / "app.py") not in kept._entries  # written a moment ago
    monkeypatch.setattr(cache.StatDigests, "RACY_NS", 0)
    findings(run_cli, project)
    kept = cache.StatDigests(str(project / ".warplint_cache"), cache.registry_salt() or "", cache.user_secret() or b"")
    kept._load()
    assert str(project / "app.py") in kept._entries


def test_a_warm_cli_run_imports_no_engine_no_rule_no_libcst(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.warplint]\n")
    (tmp_path / "app.py").write_text(LATE)
    argv = [str(tmp_path), "--format", "concise", "-j", "1", "-o", str(tmp_path / "out.txt")]
    probe = ("import sys\nfrom warplint.cli import main\n"
             f"code = main({argv!r})\n"
             "print(code, sorted(m for m in sys.modules if m.split('.')[0] in ('libcst', 'warp')\n"
             "                   or m.startswith(('warplint.rules.', 'warplint.engine', 'warplint.semantic'))))\n")
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "xdg")}

    def run() -> tuple[str, list[str]]:
        done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, cwd=tmp_path,
                              check=True)
        code, _, imported = done.stdout.strip().partition(" ")
        return code, ast.literal_eval(imported)

    cold = run()
    assert cold[0] == "1" and "warplint.engine" in cold[1]
    assert run() == ("1", [])
    assert "WC501" in (tmp_path / "out.txt").read_text()


def test_a_run_over_more_projects_than_the_cache_keeps_is_warm_next_time(run_cli, tmp_path):
    """A root that is no project, holding more folders of loose scripts than ``ResultCache.KEEP``: each folder
    is its own project and result entry; a run evicted its own first entries, so the next was never warm."""
    tree = tmp_path / "scripts"
    for i in range(cache.ResultCache.KEEP + 2):
        (tree / f"s{i}").mkdir(parents=True)
        (tree / f"s{i}" / "run.py").write_text(LATE)
    where = str(tmp_path / "c")
    first = run_cli(str(tree), "--format", "concise", "-j", "1", "-v", "--cache-dir", where, cwd=str(tmp_path))
    again = run_cli(str(tree), "--format", "concise", "-j", "1", "-v", "--cache-dir", where, cwd=str(tmp_path))
    assert first[1] == again[1] and first[1].count("WC501") == cache.ResultCache.KEEP + 2
    assert "findings from the result cache" in again[2], again[2]


def test_an_edit_leaves_the_other_projects_answered_from_the_result_cache(tmp_path):
    """A run over more projects than ``ResultCache.KEEP`` after one of them changed (newton: 34 projects, an
    edit touches 2) asks for the earlier run's entries one project after another, writing the changed one's
    anew: evicting entry by entry dropped each next entry just before it was asked for, so every project was
    checked again. Entries go a whole run at a time now."""
    secret = b"k" * 32
    projects = [f"project-{i}" for i in range(cache.ResultCache.KEEP + 2)]
    entry = {"files": {}, "externals": [], "missing": []}
    first = cache.ResultCache(str(tmp_path), "salt", secret)
    for key in projects:
        assert first.get(key) is None
        first.put(key, entry)
    after_edit = cache.ResultCache(str(tmp_path), "salt", secret)
    hits = []
    for i, key in enumerate(projects):
        if i == 0:  # the edited project: a new key, checked and written
            assert after_edit.get(f"{key}-edited") is None
            after_edit.put(f"{key}-edited", entry)
        else:
            hits.append(after_edit.get(key) is not None)
    assert all(hits), hits


SIZES = "BLOCK = 64\n"  # no mention of the library: only a Warp file importing it gets it parsed
KERNELS = ("@wp.kernel\ndef a(x: wp.array(dtype=float)):\n    pass\n\n\n"
           "@wp.kernel\ndef b(x: wp.array(dtype=float)):\n    pass\n\n\n")
LAUNCHES_ONE_SIZE = ("import warp as wp\n\n\n" + KERNELS
                     + "def step(x):\n    wp.launch(a, dim=8, inputs=[x], block_dim=128)\n"
                     "    wp.launch(b, dim=8, inputs=[x], block_dim=128)\n")
LAUNCHES_TWO_SIZES = ("import warp as wp\nfrom sizes import BLOCK\n\n\n" + KERNELS
                      + "def step(x):\n    wp.launch(a, dim=8, inputs=[x], block_dim=128)\n"
                      "    wp.launch(b, dim=8, inputs=[x], block_dim=BLOCK)\n")


def test_a_file_seen_unparsed_is_parsed_once_an_edited_file_imports_it(run_cli, tmp_path, monkeypatch):
    """A file without Warp that an earlier run saw and left unparsed (nothing imported it) is not parsed ahead
    with the changed files; once an edit makes a Warp file import it, it is parsed then, and its constant
    decides the finding as in a cold run."""
    monkeypatch.setattr(cache.StatDigests, "RACY_NS", 0)
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "pyproject.toml").write_text("[tool.warplint]\n")
    (tree / "app.py").write_text(LAUNCHES_ONE_SIZE)
    (tree / "sizes.py").write_text(SIZES)
    assert ("app.py", "WC303") not in check_warm_equals_cold(run_cli, tree, expect_warm=False)
    (tree / "app.py").write_text(LAUNCHES_TWO_SIZES)
    assert ("app.py", "WC303") in check_warm_equals_cold(run_cli, tree, expect_warm=False)

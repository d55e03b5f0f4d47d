"""A hostile repository, generated at test time, and an unlucky user (issue 29, items 2, 3, 6, 7): warplint
writes only into directories it made or the user named, deletes only its own files, follows no symlink out of
the tree it walks, rewrites no file the user cannot write, and keeps stdin under max-file-size. Every run is a
subprocess with a timeout: a hang fails the test."""

from __future__ import annotations

import os
import pickle
import subprocess
import sys

import pytest

from warplint import cache

APP = "import warp as wp\nwp.config.cache_kernels = False\n"
FIXABLE = "import warp as wp\nwp.set_module_options({'max_unrol': 4})\n"  # WC104, a safe fix


def warplint(cwd, *args: str, stdin: bytes | None = None, env: dict | None = None,
             timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "warplint", *args], cwd=cwd, capture_output=True, input=stdin,
                          timeout=timeout, env=env)


def text(run: subprocess.CompletedProcess) -> str:
    return run.stdout.decode(errors="replace") + run.stderr.decode(errors="replace")


@pytest.fixture
def project(tmp_path):
    root = tmp_path / "project"
    root.mkdir()
    (root / "pyproject.toml").write_text("[tool.warplint]\n")
    (root / "app.py").write_text(APP)
    return root


def someone_elses(directory) -> dict[str, bytes]:
    """A directory that is not warplint's (a home directory), holding files with warplint's naming."""
    directory.mkdir()
    planted = {
        "notes.txt": b"mine",
        "results-0123456789abcdef0123.pickle": b"my results",
        "models-0123456789abcdef0123-3.pickle": b"my models",
        ".tmp-abcdefgh": b"my temp",
    }
    for name, data in planted.items():
        (directory / name).write_bytes(data)
        old = os.stat(directory / name).st_mtime - 2 * cache.STALE_TEMP_S
        os.utime(directory / name, (old, old))
    return planted


def untouched(directory, planted: dict[str, bytes]) -> bool:
    return sorted(os.listdir(directory)) == sorted(planted) and all(
        (directory / name).read_bytes() == data for name, data in planted.items())


# ---------------------------------------------------------------------- item 2: where the cache is written
def test_a_symlinked_cache_directory_out_of_the_project_is_not_written(project, tmp_path):
    home = tmp_path / "home"
    planted = someone_elses(home)
    (project / ".warplint_cache").symlink_to(home)
    run = warplint(project, ".")
    assert run.returncode == 1 and b"WC202" in run.stdout
    assert untouched(home, planted), sorted(os.listdir(home))  # no CACHEDIR.TAG, no .gitignore, nothing deleted
    assert b"outside the project" in run.stderr


def test_a_cloned_configs_cache_dir_out_of_the_project_is_not_written(project, tmp_path):
    home = tmp_path / "home"
    planted = someone_elses(home)
    (project / "pyproject.toml").write_text(f'[tool.warplint]\ncache-dir = "{home}"\n')
    run = warplint(project, ".")
    assert run.returncode == 1 and b"WC202" in run.stdout
    assert untouched(home, planted), sorted(os.listdir(home))
    (project / "pyproject.toml").write_text('[tool.warplint]\ncache-dir = "../home"\n')
    assert warplint(project, ".").returncode == 1
    assert untouched(home, planted), sorted(os.listdir(home))


def test_a_directory_in_the_project_that_is_not_warplints_is_not_written(project):
    src = project / "src"
    (project / "pyproject.toml").write_text('[tool.warplint]\ncache-dir = "src"\n')  # a .gitignore of * would hide it
    (src / "pkg").mkdir(parents=True)
    (src / "pkg" / "mod.py").write_text(APP)
    assert warplint(project, ".").returncode == 1
    assert sorted(os.listdir(src)) == ["pkg"]


def test_a_named_cache_directory_is_used(project, tmp_path):
    named = tmp_path / "named"
    named.mkdir()
    assert warplint(project, ".", "--cache-dir", str(named)).returncode == 1
    assert (named / "CACHEDIR.TAG").exists() and any(n.startswith("results-") for n in os.listdir(named))


def test_only_warplints_own_files_are_deleted(project):
    assert warplint(project, ".").returncode == 1
    directory = project / ".warplint_cache"
    stale_salt = "f" * 20
    ours = directory / f"results-{stale_salt}.pickle"  # another warplint version's file: removed
    ours.write_bytes(cache.MAGIC + b"\0" * cache.TAG_SIZE + pickle.dumps({}))
    foreign = directory / f"models-{stale_salt}-1.pickle"  # the naming, not the header: kept
    foreign.write_bytes(b"a user's file")
    elsewhere = project / "precious.txt"
    elsewhere.write_bytes(b"keep")
    linked = directory / f"digests-{stale_salt}.pickle"  # a link, even to a file of ours: kept, target too
    linked.symlink_to(elsewhere)
    (project / "app.py").write_text(APP + "\n")  # something to save
    assert warplint(project, ".").returncode == 1
    assert not ours.exists() and foreign.read_bytes() == b"a user's file"
    assert linked.is_symlink() and elsewhere.read_bytes() == b"keep"


# ---------------------------------------------------------------------- item 3: symlinks out of the tree
def test_a_symlink_out_of_the_tree_is_not_read(project):
    (project / "env.py").symlink_to("/proc/self/environ")
    env = {**os.environ, "WARPLINT_TEST_SECRET": "hunter2-do-not-print"}
    run = warplint(project, ".", env=env)
    assert b"hunter2" not in run.stdout + run.stderr
    assert b"skipped env.py: a symlink to a file outside" in run.stderr and run.returncode == 1


def test_a_symlink_out_of_the_tree_is_not_rewritten_by_fix(project, tmp_path):
    outside = tmp_path / "outside.py"
    outside.write_text(FIXABLE)
    (project / "link.py").symlink_to(outside)
    (project / "inside.py").write_text(FIXABLE)
    (project / "inlink.py").symlink_to(project / "inside.py")  # a link within the tree is followed
    assert b"link.py" not in warplint(project, ".", "--no-cache").stdout.replace(b"inlink.py", b"")
    run = warplint(project, "link.py", "inside.py", "--fix", "--no-cache")  # named: read, still not written
    assert outside.read_text() == FIXABLE
    assert run.returncode == 2 and b"not fixed: link.py: it is a symlink to" in run.stderr
    assert "max_unroll" in (project / "inside.py").read_text()
    assert b"1 fixed" in run.stdout


# ---------------------------------------------------------------------- item 6: files the user cannot write
def test_fix_leaves_a_read_only_file_alone_and_does_not_count_it(project):
    for name in ("a.py", "b.py"):
        (project / name).write_text(FIXABLE)
    os.chmod(project / "a.py", 0o444)
    run = warplint(project, "a.py", "b.py", "--fix", "--no-cache")
    assert (project / "a.py").read_text() == FIXABLE and "max_unroll" in (project / "b.py").read_text()
    assert run.returncode == 2 and b"not fixed: a.py: it is read-only" in run.stderr
    assert b"(1 fixed, 1 remaining)" in run.stdout, run.stdout
    assert b"'max_unrol': 4" in run.stdout  # the finding left is shown on the text the file still holds


def test_fix_leaves_another_users_file_alone(project, monkeypatch):
    """In process, as another user would see a file of this one's that it may write (group-writable, in a
    directory it may write): a rename would replace the file and its owner."""
    from warplint.fixes import write_fixed

    path = project / "a.py"
    path.write_text(FIXABLE)
    os.chmod(path, 0o666)
    owner = os.stat(path).st_uid
    monkeypatch.setattr(os, "geteuid", lambda: owner + 1)
    problem = write_fixed(str(path), FIXABLE, FIXABLE.replace("unrol", "unroll"), str(project))
    assert problem is not None and "belongs to another user" in problem
    assert path.read_text() == FIXABLE


# ---------------------------------------------------------------------- item 7: the small ones
def test_stdin_over_max_file_size_is_not_read_past_it(project):
    big = APP.encode() + b"x = 1  # padding\n" * 400_000  # 6.8 MB
    run = warplint(project, "-", "--no-cache", stdin=big, timeout=60)
    assert run.returncode == 1 and b"WC000" in run.stdout and b"over the max-file-size" in run.stdout
    fixed = warplint(project, "-", "--no-cache", "--fix", stdin=big, timeout=60)
    assert fixed.stdout == big  # --fix prints stdin as it came


@pytest.mark.parametrize("version", ["1.19.0.0", "01.19", " 1.19", "1.19 ", "1.\u0669", "1", "1.x", ""])
def test_odd_warp_versions_are_refused(project, version):
    run = warplint(project, ".", "--warp-version", version)
    assert run.returncode == 2 and run.stderr.count(b"\n") == 1 and b"--warp-version" in run.stderr


def test_server_usage_errors_are_one_line(project):
    run = warplint(project, "server", "--no-such-flag")
    assert run.returncode == 2 and run.stderr.count(b"\n") == 1, run.stderr


def test_confirm_without_a_command_says_which_it_runs(project):
    (project / "pyproject.toml").write_text('[tool.warplint.confirm]\ncommand = "true --from-config"\n')
    run = warplint(project, "app.py", "--confirm", "--no-cache")
    assert b"--confirm runs [tool.warplint.confirm] command from" in run.stderr
    assert b"true --from-config" in run.stderr


# ---------------------------------------------------------------------- the cache under stress
def _findings(run: subprocess.CompletedProcess) -> bytes:
    return b"\n".join(line for line in run.stdout.splitlines() if b" WC" in line)


def test_three_concurrent_runs_with_edits_between_equal_no_cache(project):
    for i in range(30):
        (project / f"m{i}.py").write_text(APP if i % 2 else "import warp as wp\nwp.force_load()\n")
    for edit in range(3):
        runs = [subprocess.Popen([sys.executable, "-m", "warplint", ".", "--format", "concise"], cwd=project,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE) for _ in range(3)]
        outs = [run.communicate(timeout=180)[0] for run in runs]
        expected = _findings(warplint(project, ".", "--format", "concise", "--no-cache"))
        assert expected and all(b"\n".join(x for x in out.splitlines() if b" WC" in x) == expected for out in outs)
        (project / f"m{edit}.py").write_text("import warp as wp\n")  # an edit between the rounds
        (project / f"new{edit}.py").write_text(APP)


@pytest.mark.parametrize("damage", ["truncate", "flip", "zero-length", "wrong-version"])
def test_a_damaged_cache_gives_what_no_cache_gives(project, damage):
    (project / "lib.py").write_text("import warp as wp\nwp.force_load()\n")
    expected = _findings(warplint(project, ".", "--format", "concise", "--no-cache"))
    assert warplint(project, ".").returncode == 1
    directory = project / ".warplint_cache"
    for name in os.listdir(directory):
        if not name.endswith(".pickle"):
            continue
        path = directory / name
        data = bytearray(path.read_bytes())
        if damage == "truncate":
            del data[len(data) // 2:]
        elif damage == "flip":
            data[len(data) * 2 // 3] ^= 0x40
        elif damage == "zero-length":
            data = bytearray()
        else:
            data[:len(cache.MAGIC)] = b"warplint-cache-4\n"
        path.write_bytes(bytes(data))
    assert _findings(warplint(project, ".", "--format", "concise")) == expected
    assert _findings(warplint(project, ".", "--format", "concise")) == expected  # rewritten, read again

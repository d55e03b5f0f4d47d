"""``warplint --daemon``: runs answered by the project's daemon, which keeps the index between runs (issue 28).

Real processes throughout: the CLI as users run it, the daemon it starts, a cold ``--no-cache`` run to compare
with. Each test has its own ``TMPDIR`` (where the daemon's socket lives) and stops every daemon it started.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest
from test_incremental import CROSS, CROSS_EDITS, _edit, _python_files, _source_tree

STEPS = 4


@pytest.fixture
def daemon_env(tmp_path):
    """The environment the CLI runs in: a private TMPDIR; every daemon started under it stopped afterwards."""
    temp = tempfile.mkdtemp(prefix="wl")  # short: a socket's path is at most about 100 bytes
    env = {k: v for k, v in os.environ.items() if k != "CI"}  # (a CI job's `daemon = true` starts no daemon)
    env["TMPDIR"] = temp
    roots: list[str] = []
    yield env, roots
    for root in roots:
        subprocess.run([sys.executable, "-m", "warplint", "daemon", "stop", root], env=env, capture_output=True,
                       timeout=60)
    shutil.rmtree(temp, ignore_errors=True)


def _warplint(env: dict, cwd: str, *argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "warplint", *argv], env=env, cwd=cwd, capture_output=True,
                          text=True, timeout=600)


def _findings(run: subprocess.CompletedProcess, path: str) -> list:
    assert run.returncode in (0, 1), run.stderr
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)


def _tree(tmp_path, daemon_setting: str = "daemon = true\n") -> str:
    tree = str(tmp_path / "tree")
    shutil.copytree(_source_tree(), tree, ignore=shutil.ignore_patterns("__pycache__", ".warplint_cache"))
    for name, text in CROSS.items():
        os.makedirs(os.path.dirname(os.path.join(tree, name)), exist_ok=True)
        Path(tree, name).write_text(text, encoding="utf-8")
    Path(tree, "pyproject.toml").write_text("[tool.warplint]\n" + daemon_setting, encoding="utf-8")
    return tree


def test_runs_after_edits_answer_as_a_cold_run(tmp_path, daemon_env):
    env, roots = daemon_env
    tree = _tree(tmp_path)
    roots.append(tree)
    cache = str(tmp_path / "cache")
    report, cold_report = str(tmp_path / "daemon.json"), str(tmp_path / "cold.json")

    def answered() -> list:
        run = _warplint(env, tree, "--format", "json", "-o", report, "--cache-dir", cache, "--jobs", "1", ".")
        return _findings(run, report)

    def cold() -> list:
        run = _warplint(env, tree, "--format", "json", "-o", cold_report, "--no-cache", "--jobs", "1", ".")
        return _findings(run, cold_report)

    first = _warplint(env, tree, "--format", "json", "-o", report, "--cache-dir", cache, "--jobs", "1", ".")
    assert "starting a daemon" in first.stderr
    assert _findings(first, report) == cold()
    rng = random.Random(2812)
    files = [f for f in _python_files(tree) if "warp" in Path(f).read_text(encoding="utf-8")]
    edits: list = [None] * STEPS + list(CROSS_EDITS)
    for step, cross in enumerate(edits):
        if cross is None:
            edited = _edit(rng, tree, files)
        else:
            name, old, new = cross
            edited = os.path.join(tree, name)
            text = Path(edited).read_text(encoding="utf-8")
            Path(edited).write_text(text.replace(old, new), encoding="utf-8")
        assert answered() == cold(), f"step {step}: {os.path.relpath(edited, tree)}"
    status = _warplint(env, tree, "daemon", "status")
    assert status.returncode == 0, status.stderr
    assert "runs answered" in status.stdout
    # the runs went to one daemon, which kept its index for most of them (a run whose edit changes import lines
    # starts a new one)
    runs = int(status.stdout.split(" runs answered")[0].rsplit(" ", 1)[1])
    built = int(status.stdout.split(" built")[0].rsplit(" ", 2)[1])
    assert runs == len(edits) + 1 and built == 1
    stopped = _warplint(env, tree, "daemon", "stop")
    assert "stopped the daemon" in stopped.stdout
    assert "no daemon runs" in _warplint(env, tree, "daemon", "status").stdout


def test_the_daemon_keeps_its_index_across_runs(tmp_path, daemon_env):
    """A run after an edit that leaves the imports as they were is answered over the index the run before left."""
    from warplint.config import load_config
    from warplint.daemon_server import Sessions
    from warplint.engine import Session

    tree = _tree(tmp_path, daemon_setting="")
    config = load_config(tree, set())
    sessions = Sessions()
    made = lambda: Session(config, cache=False, jobs=1)  # noqa: E731 - as the CLI makes its session
    first = sessions.session(config, False, made)
    first.lint_paths([tree], project_context=True)
    pipeline = Path(tree, "crossfile", "pipeline.py")
    pipeline.write_text(pipeline.read_text(encoding="utf-8") + "\n_edited = 1\n", encoding="utf-8")
    again = sessions.session(config, False, made)
    assert again is first and sessions.reused == 1
    old_model = first.models[str(Path(tree, "crossfile", "blur.py"))]
    assert first._kept_facts is not None
    kept_before = first._kept_facts.taken_over
    again.lint_paths([tree], project_context=True)
    assert again.models[str(Path(tree, "crossfile", "blur.py"))] is old_model  # not modelled again
    assert first._kept_facts.taken_over > kept_before  # the facts the edit cannot change are taken over
    # an edit of import lines, a new file, another config: a new session
    pipeline.write_text("import os\n" + pipeline.read_text(encoding="utf-8"), encoding="utf-8")
    second = sessions.session(config, False, made)
    assert second is not first
    assert sessions.session(config, False, made) is second and sessions.reused == 2
    Path(tree, "crossfile", "extra.py").write_text("import warp as wp\n", encoding="utf-8")
    assert sessions.session(config, False, made) is not second
    assert sessions.session(config.with_overrides(report_deliberate=True), False, made) is not second


def test_a_run_the_daemon_cannot_answer_runs_here(tmp_path, daemon_env):
    env, roots = daemon_env
    tree = _tree(tmp_path)
    roots.append(tree)
    deep = tmp_path / ("d" * 120)
    deep.mkdir()
    elsewhere = {**env, "TMPDIR": str(deep)}  # no socket path fits: no daemon, the run is checked here
    report = str(tmp_path / "here.json")
    run = _warplint(elsewhere, tree, "--format", "json", "-o", report, "--no-cache", "--jobs", "1", "-v", ".")
    plain = _warplint(elsewhere, tree, "--format", "json", "-o", report, "--jobs", "1", "-v", "--cache-dir",
                      str(tmp_path / "c"), ".")
    assert "no daemon: the socket path would be too long" in plain.stderr
    assert _findings(plain, report) == _findings(run, report)


def test_runs_that_change_files_are_not_the_daemons(tmp_path, daemon_env):
    env, roots = daemon_env
    tree = _tree(tmp_path)
    roots.append(tree)
    fixed = _warplint(env, tree, "--fix", "--cache-dir", str(tmp_path / "c"), "--jobs", "1", ".")
    assert fixed.returncode in (0, 1), fixed.stderr
    assert "starting a daemon" not in fixed.stderr
    assert "no daemon runs" in _warplint(env, tree, "daemon", "status").stdout


def test_a_bad_daemon_setting_is_one_line(tmp_path, daemon_env):
    env, _ = daemon_env
    tree = _tree(tmp_path, daemon_setting='daemon = "yes"\n')
    run = _warplint(env, tree, ".")
    assert run.returncode == 2
    assert run.stderr.strip() == "warplint: error: [tool.warplint] 'daemon' must be true or false, got 'yes'"


def test_flake8_is_answered_by_the_daemon(tmp_path, daemon_env):
    """With ``daemon = true`` the flake8 plugin asks the daemon; after an edit of another file it reports what the
    plugin reports without the daemon (the cross-file finding the edit makes)."""
    env, roots = daemon_env
    tree = _tree(tmp_path)
    roots.append(tree)
    plain = str(tmp_path / "plain")
    shutil.copytree(tree, plain)
    Path(plain, "pyproject.toml").write_text("[tool.warplint]\n", encoding="utf-8")

    def flake8(root: str) -> list[str]:
        run = subprocess.run([sys.executable, "-m", "flake8", "--no-show-source", "--select", "WC",
                              os.path.join("crossfile", "pipeline.py")], env=env, cwd=root, capture_output=True,
                             text=True, timeout=600)
        assert run.returncode in (0, 1), run.stderr
        return run.stdout.splitlines()

    cli = _warplint(env, tree, "--jobs", "1", ".")  # the CLI's run indexes the project for flake8's too
    assert "starting a daemon" in cli.stderr
    before = flake8(tree)
    assert before == flake8(plain)
    name, old, new = CROSS_EDITS[0]  # an option change in tuning.py: pipeline.py's WC102
    for root in (tree, plain):
        edited = Path(root, name)
        edited.write_text(edited.read_text(encoding="utf-8").replace(old, new), encoding="utf-8")
    after = flake8(tree)
    assert after == flake8(plain) and after != before
    assert any("WC102" in line for line in after)
    # an opt-in rule flake8 alone selects (the daemon checks flake8's codes over the CLI's index)
    unique = textwrap.dedent("""\
        @wp.kernel(module="unique")
        def a(x: wp.array(dtype=float)):
            pass


        @wp.kernel(module="unique")
        def b(x: wp.array(dtype=float)):
            pass
        """)

    def flake8_unique(root: str) -> list[str]:
        Path(root, "crossfile", "pipeline.py").write_text(Path(root, "crossfile", "pipeline.py").read_text(
            encoding="utf-8") + "\n" + unique, encoding="utf-8")
        run = subprocess.run([sys.executable, "-m", "flake8", "--no-show-source", "--select", "WC304",
                              os.path.join("crossfile", "pipeline.py")], env=env, cwd=root, capture_output=True,
                             text=True, timeout=600)
        return run.stdout.splitlines()

    opted = flake8_unique(tree)
    assert opted == flake8_unique(plain) and any("WC304" in line for line in opted), opted
    status = _warplint(env, tree, "daemon", "status")
    assert " 4 runs answered, 1 index built" in status.stdout, status.stdout


def test_a_daemon_that_runs_answers_before_the_result_cache_is_looked_in(tmp_path, daemon_env):
    """Once a daemon runs, the client asks it first, also when nothing changed (it knows from the files' stamps,
    where the client's look in the result cache would come before every edit's run too); the answer is the warm
    path's."""
    env, roots = daemon_env
    tree = _tree(tmp_path)
    roots.append(tree)
    report = str(tmp_path / "r.json")
    argv = ("--format", "json", "-o", report, "--jobs", "1", "--cache-dir", str(tmp_path / "c"), ".")
    first = _warplint(env, tree, *argv)
    assert "starting a daemon" in first.stderr
    found = _findings(first, report)
    answers = [_findings(_warplint(env, tree, *argv), report) for _ in range(2)]
    status = _warplint(env, tree, "daemon", "status").stdout
    assert " 3 runs answered, 1 index built" in status, status
    warm = _warplint(env, tree, *argv, "--no-daemon")
    assert answers == [found, found] == [_findings(warm, report)] * 2


def test_a_daemon_that_died_is_replaced(tmp_path, daemon_env):
    """A daemon killed without a chance to clean up leaves its socket file: the next run starts another in its
    place and answers as a cold run."""
    import signal

    env, roots = daemon_env
    tree = _tree(tmp_path)
    roots.append(tree)
    report = str(tmp_path / "r.json")
    first = _warplint(env, tree, "--format", "json", "-o", report, "--jobs", "1", "--cache-dir", str(tmp_path / "c"),
                      ".")
    assert "starting a daemon" in first.stderr
    status = _warplint(env, tree, "daemon", "status").stdout
    pid = int(status.split("pid ")[1].split(",")[0])
    os.kill(pid, signal.SIGKILL)
    Path(tree, "crossfile", "pipeline.py").write_text(
        Path(tree, "crossfile", "pipeline.py").read_text(encoding="utf-8") + "\n_edited = 2\n", encoding="utf-8")
    again = _warplint(env, tree, "--format", "json", "-o", report, "--jobs", "1", "--cache-dir", str(tmp_path / "c"),
                      ".")
    assert "starting a daemon" in again.stderr
    answered = _findings(again, report)
    cold = _warplint(env, tree, "--format", "json", "-o", report, "--jobs", "1", "--no-cache", ".")
    assert answered == _findings(cold, report)
    assert f"pid {pid}," not in _warplint(env, tree, "daemon", "status").stdout


def test_the_daemon_imports_nothing_from_the_project(tmp_path, daemon_env):
    """A project's own `math.py` at its root (newton has one) shadows nothing in the daemon: it runs from its socket's
    directory and takes the working directory off sys.path before importing warplint."""
    env, roots = daemon_env
    tree = _tree(tmp_path)
    roots.append(tree)
    Path(tree, "math.py").write_text("raise ImportError('the project shadows the standard library')\n",
                                     encoding="utf-8")
    script = os.path.join(os.path.dirname(sys.executable), "warplint")  # the console script, as users run it
    report = str(tmp_path / "r.json")

    def warplint(*argv: str) -> subprocess.CompletedProcess:
        return subprocess.run([script, "--format", "json", "-o", report, "--jobs", "1", *argv, "."], env=env,
                              cwd=tree, capture_output=True, text=True, timeout=600)

    run = warplint("-v", "--cache-dir", str(tmp_path / "c"))
    assert "starting a daemon" in run.stderr and "no daemon" not in run.stderr, run.stderr
    # the console script's interpreter (`python3`) and this one (`python`) of one venv share the daemon
    assert "1 run answered" in _warplint(env, str(tmp_path), "daemon", "status", tree).stdout
    assert _findings(run, report) == _findings(warplint("--no-cache"), report)


def test_a_ci_job_starts_no_daemon(tmp_path, daemon_env):
    """`daemon = true` is a developer's setting: under CI (its runners set `CI`) the run is checked in its own
    process; `--daemon` still asks for one."""
    env, roots = daemon_env
    tree = _tree(tmp_path)
    roots.append(tree)
    ci = {**env, "CI": "true"}
    run = _warplint(ci, tree, "--jobs", "1", "--cache-dir", str(tmp_path / "c"), ".")
    assert run.returncode == 1 and "starting a daemon" not in run.stderr, run.stderr
    assert "no daemon runs" in _warplint(env, tree, "daemon", "status").stdout
    forced = _warplint(ci, tree, "--daemon", "--jobs", "1", "--cache-dir", str(tmp_path / "c2"), ".")
    assert "starting a daemon" in forced.stderr


def test_sigterm_stops_the_daemon_and_removes_its_socket(tmp_path, daemon_env):
    import signal
    import time

    env, roots = daemon_env
    tree = _tree(tmp_path)
    roots.append(tree)
    _warplint(env, tree, "--jobs", "1", "--cache-dir", str(tmp_path / "c"), ".")
    status = _warplint(env, tree, "daemon", "status").stdout
    pid = int(status.split("pid ")[1].split(",")[0])
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.1)
    else:
        raise AssertionError("the daemon did not exit on SIGTERM")
    sockets = list(Path(env["TMPDIR"]).glob("warplint-*/*.sock"))
    assert sockets == [] and "no daemon runs" in _warplint(env, tree, "daemon", "status").stdout


def test_a_package_installed_starts_a_new_session(tmp_path):
    """Installing or removing a package changes the modification time of this interpreter's install folder: the
    installed modules the rules read may differ, so the daemon builds its index again."""
    import sysconfig

    from warplint.config import load_config
    from warplint.daemon_server import Sessions
    from warplint.engine import Session

    tree = _tree(tmp_path, daemon_setting="")
    config = load_config(tree, set())
    sessions = Sessions()
    made = lambda: Session(config, cache=False, jobs=1)  # noqa: E731 - as the CLI makes its session
    first = sessions.session(config, False, made)
    assert sessions.session(config, False, made) is first
    folder = sysconfig.get_paths()["purelib"]
    before = os.stat(folder)
    try:
        os.utime(folder, ns=(before.st_atime_ns, before.st_mtime_ns + 1_000_000_000))  # as `pip install` does
        assert sessions.session(config, False, made) is not first
    finally:
        os.utime(folder, ns=(before.st_atime_ns, before.st_mtime_ns))


def test_a_runs_cache_writes_and_the_index_it_replaced_wait_for_its_answer(tmp_path):
    """The daemon answers first: the run's cache writes and the freeing of the index its edit replaced come after
    (``Sessions.after_answer``), and then a fresh process's warm run reads the daemon's result."""
    import io

    from warplint.cli import main
    from warplint.daemon_server import Sessions

    tree = _tree(tmp_path, daemon_setting="")
    cache = str(tmp_path / "cache")
    out = str(tmp_path / "out.json")
    argv = ["check", "--exit-zero", "--format", "json", "-o", out, "--cache-dir", cache, "-j", "1", tree]
    sessions = Sessions()
    main(argv, io.StringIO(), io.StringIO(), sessions=sessions)
    sessions.after_answer()
    def stamps() -> dict[str, int]:  # the index's caches (the warm path's stat digests are the client's)
        return {name: os.stat(os.path.join(cache, name)).st_mtime_ns for name in os.listdir(cache)
                if name.startswith(("models-", "results-"))}

    written = stamps()
    path = next(p for p in _python_files(tree) if "@wp.kernel" in Path(p).read_text(encoding="utf-8"))
    Path(path).write_text(Path(path).read_text(encoding="utf-8") + "\nEDITED = 1\n", encoding="utf-8")
    main(argv, io.StringIO(), io.StringIO(), sessions=sessions)
    assert sessions.reused == 1
    assert stamps() == written
    session = sessions._kept[-1].session
    indexes = [index for _, index in (session.group_indexes or {}).values()] or [session]
    assert any(index._retired is not None for index in indexes)  # the index before the edit, still held
    answer = json.loads(Path(out).read_text(encoding="utf-8"))
    sessions.after_answer()
    assert all(index._retired is None for index in indexes)
    assert stamps() != written
    warm = subprocess.run([sys.executable, "-m", "warplint", *argv[1:], "--no-daemon", "-v"], capture_output=True,
                          text=True, timeout=600, cwd=str(tmp_path))
    assert warm.returncode == 0 and json.loads(Path(out).read_text(encoding="utf-8")) == answer


def test_a_run_the_daemon_answers_does_not_look_in_the_result_cache_again(tmp_path, monkeypatch):
    """The client looked for the run's findings in the result cache before it asked the daemon: the daemon's run
    goes to its kept session (which holds its own results in memory), and still answers as the warm path does."""
    import io

    from warplint import warm
    from warplint.cli import main
    from warplint.daemon_server import Sessions

    tree = _tree(tmp_path, daemon_setting="")
    cache = str(tmp_path / "cache")
    out = str(tmp_path / "out.json")
    argv = ["check", "--exit-zero", "--format", "json", "-o", out, "--cache-dir", cache, "-j", "1", tree]
    main(argv, io.StringIO(), io.StringIO())  # a plain run fills the result cache
    answer = json.loads(Path(out).read_text(encoding="utf-8"))
    looked = []
    real = warm.lint_root_files
    monkeypatch.setattr(warm, "lint_root_files", lambda *a, **k: looked.append(a) or real(*a, **k))
    main(argv, io.StringIO(), io.StringIO())
    assert len(looked) == 1  # (the spy sees the warm path of a run the daemon does not answer)
    sessions = Sessions()
    for _ in range(2):
        main(argv, io.StringIO(), io.StringIO(), sessions=sessions)
        sessions.after_answer()
        assert json.loads(Path(out).read_text(encoding="utf-8")) == answer
    assert len(looked) == 1 and sessions.reused == 1


def test_a_run_after_an_edit_reads_again_only_the_files_changed_on_disk(tmp_path, monkeypatch):
    """A kept session's next run reads from disk only the files stamped otherwise than at its last run (or changed
    too shortly before it to tell): an edit is seen, a same-size rewrite with the old modification time too (its
    status change time moved), and the other files' texts are the ones the last run read. The tree is walked once
    per run (the walk that stamps the files is the run's), its notes said all the same."""
    import io
    import time

    from warplint.cache import StatDigests
    from warplint.cli import main
    from warplint.daemon_server import Sessions
    from warplint.discovery import Discovery
    from warplint.engine import Session

    tree = _tree(tmp_path, daemon_setting="")
    long_ago = time.time() - 3600  # every file settled well before the first run (``StatDigests.RACY_NS``)
    files = _python_files(tree)
    for path in files:
        os.utime(path, (long_ago, long_ago))
    out = str(tmp_path / "out.json")
    argv = ["check", "--exit-zero", "--format", "json", "-o", out, "-j", "1", tree]
    os.mkfifo(os.path.join(tree, "pipe.py"))  # discovery's note on it comes with every run
    read: list[str] = []
    real = Session.read
    monkeypatch.setattr(Session, "read", lambda self, path: read.append(os.path.abspath(path)) or real(self, path))
    walks: list[list[str]] = []
    real_files = Discovery.files
    monkeypatch.setattr(Discovery, "files", lambda self, paths: walks.append(paths) or real_files(self, paths))
    sessions = Sessions()

    def run() -> list:
        read.clear()
        walks.clear()
        err = io.StringIO()
        main([*argv, "--cache-dir", str(tmp_path / "cache")], io.StringIO(), err, sessions=sessions)
        sessions.after_answer()
        assert "pipe.py: a FIFO, not a regular file" in err.getvalue()
        if sessions.reused:  # a kept session's run walks the tree once (the first also walks what it indexes)
            assert walks.count([tree]) == 1
        return json.loads(Path(out).read_text(encoding="utf-8"))

    def cold() -> list:
        main([*argv, "--no-cache"], io.StringIO(), io.StringIO())
        return json.loads(Path(out).read_text(encoding="utf-8"))

    run()
    assert len(set(read)) >= len(files)  # the first run reads every file
    run()
    assert set(read) == set(files)  # made moments ago (their status change): too recent to tell, read again
    monkeypatch.setattr(StatDigests, "RACY_NS", 0)  # from here on, a change is told from the stamps at once
    run()
    run()
    assert read == []  # nothing changed: nothing read again
    pipeline = Path(tree, "crossfile", "pipeline.py")
    name, old, new = CROSS_EDITS[1]
    assert pipeline == Path(tree, name) and old in pipeline.read_text(encoding="utf-8")
    pipeline.write_text(pipeline.read_text(encoding="utf-8").replace(old, new), encoding="utf-8")
    found = run()
    assert set(read) == {str(pipeline)} and found == cold()
    # the same number of bytes, the modification time set back: only the status change time tells
    blur = Path(tree, "crossfile", "blur.py")
    before = blur.read_text(encoding="utf-8")
    changed = before.replace('module="crossfile.tuning"', 'module="crossfile.tunxng"')  # its kernels' module moves
    assert changed != before and len(changed) == len(before)
    blur.write_text(changed, encoding="utf-8")
    os.utime(blur, (long_ago, long_ago))
    moved = run()
    assert str(blur) in read and moved == cold() and moved != found
    assert sessions.reused == 5  # one session throughout

"""`--confirm` always ends clean: whatever the program leaves running, however warplint is stopped.

Real processes, no mocks, no Warp (the programs are plain Python, so each pass takes well under a second).
Everything that could hang runs in a subprocess with a timeout: a regression fails the test, it does not
hang the suite. Every process a program starts carries this test's tmp dir in its command line, so the
checks (and the teardown, which kills what a failing test left) only ever look at the test's own processes.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest
from foreground import foreground

PY = sys.executable

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="process trees are checked via /proc")

PROGRAM = textwrap.dedent(
    """
    import os, signal, subprocess, sys, time

    MODE, MARK = sys.argv[1], sys.argv[2]  # MARK (the test's tmp dir) is in every command line started here
    SLEEP = "import time; time.sleep(120)"
    TICKER = (
        "import sys, time\\n"
        "for i in range(1200):\\n"
        "    print('tick', i, flush=True)\\n"
        "    print('tock', i, file=sys.stderr, flush=True)\\n"
        "    time.sleep(0.1)\\n"
    )

    def note(kind, pid):
        with open(os.path.join(MARK, "pids"), "a") as fh:
            fh.write(f"{kind} {pid}\\n")

    def noted(kind):
        try:
            with open(os.path.join(MARK, "pids")) as fh:
                return sum(1 for line in fh if line.split()[0] == kind)
        except FileNotFoundError:
            return 0

    note("main", os.getpid())
    if MODE == "setsid-output":  # a daemon in its own session that keeps our stdout and stderr open
        daemon = subprocess.Popen([sys.executable, "-c", TICKER, MARK], start_new_session=True)
        note("daemon", daemon.pid)
        print("main done", flush=True)
    elif MODE in ("double-fork", "double-fork-clean-env"):  # the classic daemon; optionally without our env
        before = noted("daemon")
        child = os.fork()
        if child == 0:
            os.setsid()
            if os.fork() == 0:
                note("daemon", os.getpid())
                env = {} if MODE == "double-fork-clean-env" else os.environ
                os.execve(sys.executable, [sys.executable, "-c", SLEEP, MARK], env)
            os._exit(0)
        os.waitpid(child, 0)
        deadline = time.monotonic() + 10
        while noted("daemon") == before and time.monotonic() < deadline:
            time.sleep(0.01)
        print("main done", flush=True)
    elif MODE in ("sleep", "sleep-ignoring-sigterm", "fail"):
        if MODE == "sleep-ignoring-sigterm":
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
        daemon = subprocess.Popen([sys.executable, "-c", SLEEP, MARK], start_new_session=True)
        note("daemon", daemon.pid)
        print("started", flush=True)
        if MODE == "fail":
            sys.exit(3)
        time.sleep(120)
    elif MODE == "lines":
        print("one", flush=True)
        time.sleep(0.2)
        print("two", flush=True)
        sys.stdout.write("three, no newline")
    """
)

# run_confirm in a child Python, so a hang is a timeout; the driver also keeps a child of its own, which
# the pass must leave alone, and reports whether it is still a subreaper afterwards (it must not be)
DRIVER = textwrap.dedent(
    """
    import ctypes, json, subprocess, sys, time
    from warplint.confirm import run_confirm

    args = json.loads(sys.argv[1])
    own = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)", args["mark"]],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    echoed = []
    t = time.perf_counter()
    r = run_confirm([], args["command"], cwd=args["cwd"], timeout=args["timeout"], echo=echoed.append,
                    warm=args["warm"])
    elapsed = time.perf_counter() - t
    subreaper = ctypes.c_int(-1)
    ctypes.CDLL(None).prctl(37, ctypes.byref(subreaper))  # PR_GET_CHILD_SUBREAPER
    report = {"failed": r.failed, "last_output": r.last_output, "echoed": echoed, "elapsed": elapsed,
              "workspace": r.summary["workspace"], "own_child_alive": own.poll() is None,
              "subreaper_after": subreaper.value}
    own.kill()
    own.wait()
    with open(args["report"], "w") as fh:
        json.dump(report, fh)
    """
)


# --------------------------------------------------------------------------------------------------
# helpers


def _state(pid: int, mark: str) -> str | None:
    """The process's state letter if ``pid`` is one of this test's processes (its command line holds ``mark``)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            if mark.encode() not in fh.read():
                return None
        with open(f"/proc/{pid}/stat", "rb") as fh:
            stat = fh.read()
    except OSError:
        return None
    return stat[stat.rindex(b")") + 2 :].split()[0].decode()


def _alive(pid: int, mark: str) -> bool:
    state = _state(pid, mark)
    return state is not None and state != "Z"  # a zombie waiting for its reaper is gone


def _pids(tmp_path) -> dict[str, list[int]]:
    pids: dict[str, list[int]] = {}
    try:
        with open(tmp_path / "pids") as fh:
            for line in fh:
                kind, pid = line.split()
                pids.setdefault(kind, []).append(int(pid))
    except FileNotFoundError:
        pass
    return pids


def _alive_after(pids: list[int], mark: str, within: float = 2.0) -> list[int]:
    """The pids still alive ``within`` seconds from now (a SIGKILL takes a moment to land)."""
    deadline = time.monotonic() + within
    while True:
        alive = [pid for pid in pids if _alive(pid, mark)]
        if not alive or time.monotonic() > deadline:
            return alive
        time.sleep(0.05)


def _leftover_workspaces(private_tmp) -> list[str]:
    return sorted(name for name in os.listdir(private_tmp) if name.startswith("warplint-confirm-"))


@pytest.fixture
def private_tmp(tmp_path):
    """A TMPDIR of the test's own: the only place warplint may create (and must remove) its workspace."""
    path = tmp_path / "private-tmp"
    path.mkdir()
    return path


@pytest.fixture(autouse=True)
def _kill_what_a_failed_test_left(tmp_path):
    yield
    mark = str(tmp_path)
    for pids in _pids(tmp_path).values():
        for pid in pids:
            if _state(pid, mark) is not None:
                os.kill(pid, signal.SIGKILL)


def _env(private_tmp) -> dict[str, str]:
    return dict(os.environ, TMPDIR=str(private_tmp))


def _confirm_api(tmp_path, private_tmp, mode: str, *, timeout: float = 30, warm: bool = False) -> dict:
    (tmp_path / "prog.py").write_text(PROGRAM)
    args = {"command": [PY, "prog.py", mode, str(tmp_path)], "cwd": str(tmp_path), "timeout": timeout,
            "warm": warm, "mark": str(tmp_path), "report": str(tmp_path / "report.json")}
    with open(tmp_path / "driver.log", "w") as log:
        driver = subprocess.run([PY, "-c", DRIVER, json.dumps(args)], cwd=tmp_path, env=_env(private_tmp),
                                stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, timeout=60)
    assert driver.returncode == 0, (tmp_path / "driver.log").read_text()
    return json.loads((tmp_path / "report.json").read_text())


def _check_ended_clean(report: dict, tmp_path, private_tmp) -> None:
    pids = _pids(tmp_path)
    assert pids.get("daemon"), f"the program did not start its daemon: {report['last_output']}"
    assert _alive_after(pids["daemon"] + pids["main"], str(tmp_path)) == []
    assert report["own_child_alive"], "a child of the caller that has nothing to do with the program was killed"
    assert report["subreaper_after"] == 0
    assert not os.path.exists(report["workspace"])
    assert _leftover_workspaces(private_tmp) == []


# --------------------------------------------------------------------------------------------------
# whatever the program leaves running ends with the pass; nothing it leaves holds warplint


def test_setsid_daemon_holding_stdout_and_stderr_does_not_hold_warplint(tmp_path, private_tmp):
    report = _confirm_api(tmp_path, private_tmp, "setsid-output", warm=True)
    assert report["failed"] is None
    assert report["elapsed"] < 15, "warplint waited for the daemon instead of the program's main process"
    assert "main done" in report["last_output"]
    assert len(_pids(tmp_path)["daemon"]) == 2  # one per pass, each killed
    _check_ended_clean(report, tmp_path, private_tmp)


@pytest.mark.parametrize("mode", ["double-fork", "double-fork-clean-env"])
def test_double_forked_daemon_is_killed_after_a_normal_exit(tmp_path, private_tmp, mode):
    # the clean-env daemon has no token in its environment: only re-parenting to warplint finds it
    report = _confirm_api(tmp_path, private_tmp, mode)
    assert report["failed"] is None
    assert "main done" in report["last_output"]
    _check_ended_clean(report, tmp_path, private_tmp)


def test_timeout_ends_the_program_and_its_daemon(tmp_path, private_tmp):
    report = _confirm_api(tmp_path, private_tmp, "sleep", timeout=1)
    assert report["failed"].startswith("cold run timed out after")
    assert report["elapsed"] < 10
    _check_ended_clean(report, tmp_path, private_tmp)


def test_failing_program_leaves_nothing(tmp_path, private_tmp):
    report = _confirm_api(tmp_path, private_tmp, "fail")
    assert report["failed"] == "cold run exited with code 3"
    assert report["last_output"] == ["started"]
    _check_ended_clean(report, tmp_path, private_tmp)


def test_output_is_echoed_line_by_line_and_kept(tmp_path, private_tmp):
    report = _confirm_api(tmp_path, private_tmp, "lines")
    assert report["failed"] is None
    assert report["echoed"] == report["last_output"] == ["one", "two", "three, no newline"]


# --------------------------------------------------------------------------------------------------
# SIGTERM, SIGHUP, Ctrl-C to `warplint --confirm`: exit 128+N promptly, program gone, temp dir gone


@pytest.mark.parametrize(
    "signame, mode, exit_code, message",
    [
        ("SIGTERM", "sleep", 143, "warplint: terminated"),
        ("SIGHUP", "sleep-ignoring-sigterm", 129, "warplint: terminated"),  # SIGKILL after the grace period
        ("SIGINT", "sleep", 130, "warplint: interrupted"),
    ],
)
def test_signal_to_warplint_ends_the_program(tmp_path, private_tmp, signame, mode, exit_code, message):
    (tmp_path / "prog.py").write_text(PROGRAM)
    command = [PY, "-m", "warplint", "prog.py", "--no-cache", "--confirm", "--", PY, "prog.py", mode, str(tmp_path)]
    with open(tmp_path / "out.txt", "w") as out, open(tmp_path / "err.txt", "w") as err:
        warplint = subprocess.Popen(foreground(command), cwd=tmp_path, env=_env(private_tmp), stdin=subprocess.DEVNULL,
                                    stdout=out, stderr=err)
        try:
            deadline = time.monotonic() + 60
            while "daemon" not in _pids(tmp_path) and warplint.poll() is None and time.monotonic() < deadline:
                time.sleep(0.05)
            assert warplint.poll() is None, (tmp_path / "err.txt").read_text()
            assert "daemon" in _pids(tmp_path), "the program did not start within 60 s"
            t = time.monotonic()
            warplint.send_signal(getattr(signal, signame))
            returncode = warplint.wait(timeout=30)
            elapsed = time.monotonic() - t
        finally:
            if warplint.poll() is None:
                warplint.kill()
                warplint.wait(timeout=10)
    assert returncode == exit_code
    assert elapsed < 10
    assert (tmp_path / "err.txt").read_text().splitlines()[-1] == message
    pids = _pids(tmp_path)
    assert _alive_after(pids["main"] + pids["daemon"], str(tmp_path)) == []
    assert _leftover_workspaces(private_tmp) == []


def test_cli_returns_while_a_silent_daemon_holds_the_output(tmp_path, private_tmp):
    # a daemon that never writes: with a pipe, warplint would wait for an end of file that never comes
    (tmp_path / "prog.py").write_text(PROGRAM)
    command = [PY, "-m", "warplint", "prog.py", "--no-cache", "--confirm", "--", PY, "prog.py", "double-fork",
               str(tmp_path)]
    proc = subprocess.run(command, cwd=tmp_path, env=_env(private_tmp), stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "warplint --confirm: cold run" in proc.stdout
    pids = _pids(tmp_path)
    assert len(pids["daemon"]) == 2
    assert _alive_after(pids["main"] + pids["daemon"], str(tmp_path)) == []
    assert _leftover_workspaces(private_tmp) == []


# --------------------------------------------------------------------------------------------------
# bad settings: one line, exit 2, before anything runs


def _one_line_error(code: int, err: str, *expected: str) -> None:
    assert code == 2, err
    assert err.count("\n") == 1 and err.startswith("warplint: error: "), err
    assert "internal error" not in err and "Traceback" not in err
    for text in expected:
        assert text in err, err


RAN = "open('ran', 'w').close()"  # the program of the tests below: it leaves a file if it was run


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "0", "-1", "soon"])
def test_confirm_timeout_flag_must_be_finite_positive(run_cli, tmp_path, value):
    (tmp_path / "app.py").write_text("x = 1\n")
    code, _, err = run_cli("app.py", "--confirm", f"--confirm-timeout={value}", "--", PY, "-c", RAN)
    _one_line_error(code, err, "--confirm-timeout", repr(value))
    assert not (tmp_path / "ran").exists()


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "0", "-1", "'300'"])
def test_configured_timeout_must_be_finite_positive(run_cli, tmp_path, value):
    (tmp_path / "app.py").write_text("x = 1\n")
    (tmp_path / "pyproject.toml").write_text(f"[tool.warplint.confirm]\ntimeout = {value}\n")
    code, _, err = run_cli("app.py", "--confirm", "--", PY, "-c", RAN)
    _one_line_error(code, err, "confirm.timeout")
    assert not (tmp_path / "ran").exists()


def test_configured_timeout_is_used(run_cli, tmp_path):
    (tmp_path / "app.py").write_text("import time\ntime.sleep(30)\n")
    (tmp_path / "pyproject.toml").write_text("[tool.warplint.confirm]\ntimeout = 0.5\n")
    t = time.monotonic()
    code, _, err = run_cli("app.py", "--confirm", "--", PY, "app.py")
    assert time.monotonic() - t < 15
    assert code == 2 and "cold run timed out after" in err


@pytest.mark.parametrize(
    "program, expected",
    [
        ("./tool.sh", "is not executable"),
        ("./missing-tool", "does not exist"),
        ("./subdir", "is a directory"),
        ("warplint-test-no-such-command", "command not found"),
    ],
)
def test_command_that_cannot_run(run_cli, tmp_path, program, expected):
    (tmp_path / "app.py").write_text("x = 1\n")
    (tmp_path / "tool.sh").write_text("#!/bin/sh\ntouch ran\n")
    os.chmod(tmp_path / "tool.sh", 0o644)
    (tmp_path / "subdir").mkdir()
    code, _, err = run_cli("app.py", "--confirm", "--", program)
    _one_line_error(code, err, expected, repr(program))
    assert not (tmp_path / "ran").exists()


def test_configured_command_that_cannot_run(run_cli, tmp_path):
    (tmp_path / "app.py").write_text("x = 1\n")
    (tmp_path / "pyproject.toml").write_text("[tool.warplint.confirm]\ncommand = ['./app.py']\n")
    code, _, err = run_cli("app.py", "--confirm")
    _one_line_error(code, err, "is not executable")


@pytest.mark.parametrize("command, expected", [("python -c 'print(1)", "No closing quotation"), ("   ", "is empty")])
def test_configured_command_string_that_does_not_split(run_cli, tmp_path, command, expected):
    (tmp_path / "app.py").write_text("x = 1\n")
    (tmp_path / "pyproject.toml").write_text(f"[tool.warplint.confirm]\ncommand = {json.dumps(command)}\n")
    code, _, err = run_cli("app.py", "--confirm")
    _one_line_error(code, err, "confirm.command", expected)


def test_api_reports_a_command_it_cannot_start(tmp_path):
    from warplint.confirm import run_confirm

    (tmp_path / "tool.sh").write_text("#!/bin/sh\n")
    os.chmod(tmp_path / "tool.sh", 0o644)
    r = run_confirm([], ["./tool.sh"], cwd=str(tmp_path), timeout=10)
    assert r.failed == "cannot run the command: Permission denied: './tool.sh'"
    assert not os.path.exists(r.summary["workspace"])
    for bad in (float("nan"), float("inf"), 0, -1):
        with pytest.raises(ValueError, match="finite number of seconds"):
            run_confirm([], ["./tool.sh"], cwd=str(tmp_path), timeout=bad)

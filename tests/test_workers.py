"""Worker processes: a crash, a slow or a memory-hungry file costs that file only; workers end with us.

Real processes throughout: a worker dies for real (its memory budget makes LibCST's native
parser abort, or it is SIGKILLed as the OOM killer would), the signals are real signals to a
real ``warplint``.
"""

from __future__ import annotations

import faulthandler
import os
import pickle
import signal
import subprocess
import sys
import time

import pytest
from foreground import foreground

from warplint import workers
from warplint.engine import analyze
from warplint.model import FileModel

GOOD = "import warp as wp\n\nwp.force_load()\n"
WARPLINT = [sys.executable, "-c", "from warplint.cli import entry; entry()"]


def busy_source(n: int) -> str:
    """An ordinary Warp file of about ``n`` kernels (~200 bytes each): slow enough to model."""
    parts = ["import warp as wp\n"]
    for i in range(n):
        parts.append(f"\n@wp.kernel\ndef k{i}(a: wp.array(dtype=float)):\n    i = wp.tid()\n"
                     f"    a[i] = a[i] * {i}.0 + wp.sin(a[i]) - wp.cos(float(i))\n")
    return "".join(parts)


def children_of(pid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as fh:
                    fields = fh.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid and fields[0] != "Z":
                found.append(int(entry))
    return found


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def wait_for(predicate, timeout: float = 30.0) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.05)
    return False


def test_a_dying_worker_costs_its_file_only():
    big = busy_source(10_000)  # ~2 MB: needs far more than 96 MiB to model (a small file, under 40 MiB)
    items = [("big.py", big, "big", False), ("good.py", GOOD, "good", False)]
    answers: dict[int, object] = {}
    workers.run(items, 1, workers.Budget(600, 96), answers.__setitem__, analyze)  # one worker: good.py comes after
    failure = answers[0]
    assert isinstance(failure, workers.Failure)
    assert "memory" in failure.reason, failure.reason
    model = pickle.loads(answers[1])  # type: ignore[arg-type]  # bytes for a modelled file, asserted next
    assert isinstance(model, FileModel) and model.path == "good.py" and model.error is None


def test_a_killed_worker_is_retried_then_reported(tmp_path):
    """The OOM killer's SIGKILL: the file is tried once more in a fresh worker, then reported."""
    (tmp_path / "pyproject.toml").write_text("[tool.warplint]\n")
    (tmp_path / "huge.py").write_text(busy_source(10_000))  # modelled in a worker even with -j 1
    (tmp_path / "good.py").write_text(GOOD)
    proc = subprocess.Popen([*WARPLINT, ".", "--format", "concise", "--no-cache", "-j", "1"], cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    killed: list[int] = []
    while len(killed) < 2 and proc.poll() is None:
        for pid in children_of(proc.pid):
            if pid not in killed:
                os.kill(pid, signal.SIGKILL)
                killed.append(pid)
        time.sleep(0.02)
    stdout, stderr = proc.communicate(timeout=300)
    assert len(killed) == 2 and proc.returncode == 1, stderr
    lines = stdout.splitlines()
    assert any(line.startswith("huge.py:") and " WC000 " in line and "SIGKILL" in line for line in lines), lines
    assert any(line.startswith("good.py:") and " WC501 " in line for line in lines), lines


def test_the_time_budget_ends_one_file():
    big = busy_source(10_000)  # ~2 MB: modelled in a worker even in a serial run
    items = [("big.py", big, "big", False), ("good.py", GOOD, "good", False)]
    answers: dict[int, object] = {}
    workers.run(items, 1, workers.Budget(2.0, 4096), answers.__setitem__, analyze)
    assert isinstance(answers[0], workers.Failure) and "file-timeout" in answers[0].reason
    assert isinstance(pickle.loads(answers[1]), FileModel)  # type: ignore[arg-type]  # bytes for a modelled file


def test_cli_reports_a_failed_file_as_one_finding_and_goes_on(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.warplint]\nfile-memory = 32\n")
    (tmp_path / "huge.py").write_text(busy_source(10_000))
    (tmp_path / "good.py").write_text(GOOD)
    run = subprocess.run([*WARPLINT, ".", "--format", "concise", "--no-cache", "-j", "1"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 1, run.stderr
    lines = run.stdout.splitlines()
    assert any(line.startswith("huge.py:") and " WC000 " in line and "memory" in line for line in lines), lines
    assert any(line.startswith("good.py:") and " WC501 " in line for line in lines), lines
    assert "internal error" not in run.stderr


@pytest.fixture
def slow_project(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.warplint]\n")
    for i in range(8):
        (tmp_path / f"m{i}.py").write_text(busy_source(2_000))
    return tmp_path


def start_and_wait_for_workers(root) -> tuple[subprocess.Popen, list[int]]:
    proc = subprocess.Popen(foreground([*WARPLINT, ".", "--no-cache", "-j", "2"]), cwd=root, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    assert wait_for(lambda: len(children_of(proc.pid)) >= 2), "workers never started"
    return proc, children_of(proc.pid)


@pytest.mark.parametrize("signum, code, word", [(signal.SIGINT, 130, "interrupted"),
                                                (signal.SIGTERM, 143, "terminated"),
                                                (signal.SIGHUP, 129, "terminated")])
def test_signals_end_the_run_and_its_workers(slow_project, signum, code, word):
    proc, kids = start_and_wait_for_workers(slow_project)
    # Ctrl-C in a terminal reaches the whole foreground process group; kill(1) reaches one process.
    if signum == signal.SIGINT:
        os.killpg(proc.pid, signum)
    else:
        os.kill(proc.pid, signum)
    _, stderr = proc.communicate(timeout=30)
    assert proc.returncode == code, stderr
    assert stderr.strip() == f"warplint: {word}"
    assert wait_for(lambda: not any(alive(k) for k in kids), 10)


def test_workers_die_with_a_killed_main_process(slow_project):
    proc, kids = start_and_wait_for_workers(slow_project)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    assert wait_for(lambda: not any(alive(k) for k in kids), 10)


def test_a_long_chain_in_a_small_file_is_bounded_too(tmp_path, run_cli):
    """9,000 ``+`` links in one 36 kB statement take LibCST minutes: not in the main process."""
    (tmp_path / "pyproject.toml").write_text("[tool.warplint]\nfile-timeout = 1\n")
    (tmp_path / "chain.py").write_text("import warp as wp\nx = " + " + ".join(["a"] * 9_000) + "\n")
    (tmp_path / "good.py").write_text(GOOD)
    code, out, _ = run_cli(".", "--no-cache", "--format", "concise", "-j", "1", "-q")
    lines = sorted(out.splitlines())
    assert code == 1 and len(lines) == 2, out
    assert lines[0].startswith("chain.py:1:1: WC000 ") and "file-timeout (1 s)" in lines[0]
    assert lines[1].startswith("good.py:3:1: WC501 ")


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_ctrl_c_in_the_middle_of_many_files(tmp_path, jobs):
    """Ctrl-C while 200 files are being modelled, serially here or in workers: exit 130, one line
    on stderr (no traceback, no internal error), and no process of the run left behind."""
    (tmp_path / "pyproject.toml").write_text("[tool.warplint]\n")
    source = busy_source(60)
    for i in range(200):
        (tmp_path / f"m{i:03d}.py").write_text(source)
    proc = subprocess.Popen(foreground([*WARPLINT, ".", "--no-cache", "-j", jobs]), cwd=tmp_path,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, start_new_session=True)
    seen: set[int] = set()
    end = time.monotonic() + 3.0  # well into the modelling (the whole run takes over 15 s of CPU)
    while time.monotonic() < end or (jobs != "1" and not seen):
        seen.update(children_of(proc.pid))
        assert proc.poll() is None, "the run ended before it was interrupted"
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGINT)  # what a terminal's Ctrl-C does
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130 and stderr == "warplint: interrupted\n", stderr
    assert jobs == "1" or seen
    assert wait_for(lambda: not any(alive(k) for k in seen), 10)


def test_workers_started_from_a_thread_model_their_files(tmp_path):
    """With other threads alive (the editor server, a program calling warplint from a thread) fork is unsafe:
    the workers come from the fork server, and must still model their files -- not all exit with status 1
    at once (issue 30, item 1). A worker's failure is never cached."""
    import threading

    from warplint.config import Config
    from warplint.engine import Session

    long_line = "TABLE = [" + ", ".join(["1.0"] * 1500) + "]\n"  # over 4,000 characters: modelled in a worker
    (tmp_path / "pyproject.toml").write_text("[tool.warplint]\n")
    (tmp_path / "app.py").write_text("import warp as wp\nwp.force_load()\n" + long_line)
    found: list = []
    alive = threading.Event()
    keeper = threading.Thread(target=alive.wait, daemon=True)  # a second thread, as in the server
    keeper.start()
    try:
        session = Session(Config(root=str(tmp_path)))
        found.extend(session.lint_paths([str(tmp_path)]).diagnostics)
    finally:
        alive.set()
    assert [d.code for d in found] == ["WC501"], [d.message for d in found]
    assert not session._unsettled


def test_a_workers_failure_is_not_cached(tmp_path, monkeypatch):
    """A "not checked" that came from a worker's failure may be the machine's: neither its model nor the run's
    results are kept, and the next run models the file again."""
    from warplint.config import Config
    from warplint.engine import Session

    long_line = "TABLE = [" + ", ".join(["1.0"] * 1500) + "]\n"
    (tmp_path / "pyproject.toml").write_text("[tool.warplint]\n")
    (tmp_path / "app.py").write_text("import warp as wp\nwp.force_load()\n" + long_line)

    def failing(items, jobs, budget, on_done, analyze):
        for index in range(len(items)):
            on_done(index, workers.Failure("the process modelling it exited unexpectedly (status 1)"))

    with monkeypatch.context() as patch:
        patch.setattr(workers, "run", failing)
        first = Session(Config(root=str(tmp_path))).lint_paths([str(tmp_path)]).diagnostics
    assert [d.code for d in first] == ["WC000"]
    again = Session(Config(root=str(tmp_path))).lint_paths([str(tmp_path)]).diagnostics
    assert [d.code for d in again] == ["WC501"]


def _one_pool_project(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.warplint]\n")
    pkg = tmp_path / "app"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "settings.py").write_text("BLOCK = 256\n")  # no warp: imported by Warp code (its constants)
    (pkg / "sim.py").write_text("import warp as wp\nfrom app.settings import BLOCK\n\n"
                                "@wp.kernel\ndef k(a: wp.array(dtype=float)):\n    a[wp.tid()] = float(BLOCK)\n\n"
                                "def step(a):\n    wp.launch(k, dim=BLOCK, inputs=[a])\n")
    (pkg / "driver.py").write_text("from app.sim import step\n\ndef run(a):\n    step(a)\n")  # imports Warp code
    (pkg / "broken.py").write_text("import warp as wp\ndef (:\n")  # mentions warp, does not parse
    (pkg / "uses_broken.py").write_text("from app.broken import thing\n")  # imports only a module with no model
    (pkg / "plain.py").write_text("import os\n\nHOME = os.environ.get('HOME')\n")


def test_files_that_import_warp_code_are_modelled_in_the_one_pool(tmp_path, monkeypatch):
    """Files that do not mention warp but import Warp code (or hold what Warp code imports) are parsed in the
    same worker pool as the Warp files, not in a second pool after it (issue 28 item 3: no serial phase); the
    choice stays the one the models make: a file parsed ahead whose import turns out to name no Warp model
    keeps the unparsed model, and a file importing nothing Warp is never parsed."""
    from warplint import engine
    from warplint.config import Config
    from warplint.engine import Session

    _one_pool_project(tmp_path)
    batches: list[list[str]] = []
    real_run = workers.run

    def recording(items, *args, **kwargs):
        batches.append(sorted(os.path.basename(item[0]) for item in items))
        return real_run(items, *args, **kwargs)

    monkeypatch.setattr(workers, "run", recording)
    monkeypatch.setattr(engine, "PARALLEL_MIN_CHARS", 0)
    session = Session(Config(root=str(tmp_path)), cache=False, jobs=2)
    session.lint_paths([str(tmp_path)], project_context=True)
    assert batches == [["broken.py", "driver.py", "settings.py", "sim.py", "uses_broken.py"]]
    models = {os.path.basename(path): model for path, model in session.models.items()}
    assert not models["settings.py"].rule_facts.get("unparsed") and models["settings.py"].constants
    assert not models["driver.py"].rule_facts.get("unparsed") and models["driver.py"].calls
    assert models["uses_broken.py"].rule_facts.get("unparsed") and not models["uses_broken.py"].imports
    assert models["plain.py"].rule_facts.get("unparsed")
    assert models["broken.py"].error
    assert not session._ahead and not session._unsettled


def test_pickled_models_are_not_kept_without_a_cache(tmp_path, monkeypatch):
    """With no cache nothing reads the pickled models the workers send: they are dropped as each is read,
    not held until the last file is done."""
    from warplint import engine
    from warplint.config import Config
    from warplint.engine import analyze_many

    (tmp_path / "a.py").write_text(busy_source(3))
    (tmp_path / "b.py").write_text(busy_source(4))
    items = [(str(tmp_path / n), (tmp_path / n).read_text(), n[0], False) for n in ("a.py", "b.py")]
    monkeypatch.setattr(engine, "PARALLEL_MIN_CHARS", 0)
    budget = workers.Budget(Config(root=str(tmp_path)).file_timeout, Config(root=str(tmp_path)).file_memory)
    kept = analyze_many(items, 2, budget, keep_pickled=True)
    dropped = analyze_many(items, 2, budget, keep_pickled=False)
    assert all(isinstance(blob, bytes) for _, blob, _ in kept)
    assert [blob for _, blob, _ in dropped] == [None, None]
    assert [model for model, _, _ in dropped] == [model for model, _, _ in kept]


def test_the_project_root_is_walked_once(tmp_path, monkeypatch):
    """The CLI on a project's root walks it once: the files it lists are the project's listing the files are
    indexed with (ProjectScope), not walked a second time before the first file is parsed. The same files
    are found and checked."""
    from warplint import discovery
    from warplint.config import Config
    from warplint.engine import Session

    _one_pool_project(tmp_path)
    walks: list[str] = []
    real_walk = discovery.Discovery._walk

    def recording(self, path, seen, explicit):
        walks.append(os.path.abspath(path))
        return real_walk(self, path, seen, explicit)

    monkeypatch.setattr(discovery.Discovery, "_walk", recording)
    session = Session(Config(root=str(tmp_path)), cache=False, jobs=1)
    result = session.lint_paths([str(tmp_path)], project_context=True)
    assert walks == [str(tmp_path)]
    assert sorted(os.path.basename(p) for p in session.models) == sorted(
        ["__init__.py", "settings.py", "sim.py", "driver.py", "broken.py", "uses_broken.py", "plain.py"])
    assert result.files == 7


def test_workers_started_from_a_folder_holding_a_math_module(tmp_path):
    """An editor starts the server in the workspace root; a fork server or spawned worker started there with ``-c``
    imported the project's ``math.py`` instead of Python's (``multiprocessing`` imports ``math``) and died, so
    the server failed on every file of newton's package root. A fresh process: the fork server is started once."""
    project = tmp_path / "project"
    project.mkdir()
    (project / "math.py").write_text("raise ImportError('the project math module, not the standard one')\n")
    (project / "pyproject.toml").write_text("[tool.warplint]\n")
    long_line = "TABLE = [" + ", ".join(["1.0"] * 1500) + "]\n"  # modelled in a worker
    (project / "app.py").write_text("import warp as wp\nwp.force_load()\n" + long_line)
    runner = tmp_path / "runner.py"
    runner.write_text(
        "import threading\n"
        "from warplint.config import Config\n"
        "from warplint.engine import Session\n"
        "if __name__ == '__main__':\n"
        "    alive = threading.Event()\n"
        "    threading.Thread(target=alive.wait, daemon=True).start()  # a second thread, as in the server\n"
        "    session = Session(Config(root='.'))\n"
        "    print(sorted(d.code for d in session.lint_paths(['app.py']).diagnostics))\n"
        "    print('unsettled', bool(session._unsettled))\n"
        "    alive.set()\n")
    done = subprocess.run([sys.executable, str(runner)], cwd=project, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split("\n")[:2] == ["['WC501']", "unsettled False"], (done.stdout, done.stderr[-2000:])


def stamped_analyze(path: str, text: str, module: str, is_package: bool) -> tuple[float, float]:
    """A stand-in for ``engine.analyze`` whose answer is when the worker began and ended the item."""
    began = time.time()
    time.sleep(0.02)
    return began, time.time()


def test_a_worker_goes_on_to_its_next_file_while_the_main_process_reads_an_answer():
    """Issue 28 item 3: the main process reading an answer (unpickling the model in ``on_done``) does not hold a
    worker up: while more files wait than there are workers, each holds its next file and begins it as soon as
    it has sent an answer. Before, a worker got its next file only after ``on_done`` of the last one returned."""
    items = [(f"m{i}.py", "x" * (100 - i), f"m{i}", False) for i in range(6)]  # sizes decide the order: m0 first
    began: dict[int, float] = {}
    handled: dict[int, float] = {}

    def on_done(index: int, answer) -> None:
        began[index] = pickle.loads(answer)[0]
        time.sleep(0.5)  # a slow main process
        handled[index] = time.time()

    workers.run(items, 1, workers.Budget(60, 4096), on_done, stamped_analyze)
    assert sorted(began) == list(range(6))
    # the next file begun before the answer before it was handled, for the files followed by more than one
    assert [began[i + 1] < handled[i] for i in range(4)] == [True] * 4


def failing_analyze(path: str, text: str, module: str, is_package: bool) -> str:
    """A stand-in for ``engine.analyze`` that fails as a worker can over one file, by the file's name."""
    if path == "abort.py":
        faulthandler.disable()  # pytest's, inherited by the worker: no traceback on the test's stderr
        os.abort()  # the native parser's crash
    if path == "memory.py":
        raise MemoryError  # the memory budget: the worker answers, then leaves
    if path == "slow.py":
        time.sleep(60)  # past the file-timeout
    return path


@pytest.mark.parametrize("failing, reason", [("abort.py", "SIGABRT"), ("memory.py", "memory"),
                                             ("slow.py", "file-timeout")])
def test_files_waiting_in_a_worker_that_fails_are_modelled_elsewhere(failing, reason):
    """A file handed to a worker ahead (waiting in its pipe) is not that worker's failure: when the worker dies
    over the file it was modelling, answers a failure and leaves, or runs out of time, the files waiting behind
    it are modelled by a fresh worker, each once."""
    items = [(failing, "x" * 100, "failing", False)] + [(f"good{i}.py", "x", f"good{i}", False) for i in range(4)]
    answers: dict[int, list] = {}
    workers.run(items, 1, workers.Budget(2.0, 4096), lambda i, a: answers.setdefault(i, []).append(a),
                failing_analyze)
    assert sorted(answers) == list(range(5)) and all(len(a) == 1 for a in answers.values())
    assert isinstance(answers[0][0], workers.Failure) and reason in answers[0][0].reason, answers[0]
    assert [pickle.loads(answers[i][0]) for i in range(1, 5)] == [f"good{i}.py" for i in range(4)]


def test_a_large_file_handed_ahead_while_a_large_answer_is_sent():
    """A worker holding its next file: the main process sends a text larger than the pipe holds while the
    worker sends an answer larger than the pipe holds. The worker reads what it is sent as it comes, so
    neither waits for the other forever (it did: the main process blocked in its send, the worker in its)."""
    script = (
        "from warplint import workers\n"
        "def echo(path, text, module, is_package):\n"
        "    return text  # an answer as large as the file\n"
        "items = [(f'm{i}.py', str(i) * (1 << 20), f'm{i}', False) for i in range(6)]\n"
        "got = {}\n"
        "workers.run(items, 1, workers.Budget(60, 4096), got.__setitem__, echo)\n"
        "print(sorted(got))\n"
    )
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert run.stdout.strip() == str(list(range(6))), run.stderr


def test_every_groups_files_are_modelled_in_one_pool_before_any_group_is_linted(tmp_path, monkeypatch):
    """A run over several projects (a nested config: each group linted with its own index) models every
    group's files in one worker pool first, so a small group is not modelled serially after the group before
    it (issue 28 item 3: Warp's tree is its package and a dozen loose example folders). Each group still
    gets its own index: the findings are those of a serial run."""
    from warplint import engine
    from warplint.cli import nearest_configs
    from warplint.config import load_config
    from warplint.engine import Session
    from warplint.registry import all_rules

    _one_pool_project(tmp_path)
    other = tmp_path / "examples"
    other.mkdir()
    (other / "pyproject.toml").write_text("[tool.warplint]\n")
    (other / "demo.py").write_text("import warp as wp\n\n@wp.kernel\ndef k(a: wp.array(dtype=float)):\n"
                                   "    a[wp.tid()] = 1.0\n\nwp.launch(k, dim=4, inputs=[wp.zeros(4)])\n")
    (other / "settings.py").write_text("import warp as wp\n\nwp.config.cache_kernels = False\n")

    def lint(jobs: int) -> tuple[list[list[str]], list[tuple[str, int, str]]]:
        batches: list[list[str]] = []
        real_run = workers.run

        def recording(items, *args, **kwargs):
            batches.append(sorted(os.path.relpath(item[0], tmp_path) for item in items))
            return real_run(items, *args, **kwargs)

        monkeypatch.setattr(workers, "run", recording)
        config = load_config(str(tmp_path), set(all_rules()))
        session = Session(config, cache=False, jobs=jobs)
        session.configs = nearest_configs(config, set(all_rules()), lambda found: found)
        found = session.lint_paths([str(tmp_path)], project_context=True).diagnostics
        return batches, sorted((os.path.relpath(d.path, tmp_path), d.span.line, d.code) for d in found)

    monkeypatch.setattr(engine, "PARALLEL_MIN_CHARS", 0)
    batches, parallel = lint(jobs=2)
    assert batches == [["app/broken.py", "app/driver.py", "app/settings.py", "app/sim.py", "app/uses_broken.py",
                        "examples/demo.py", "examples/settings.py"]]
    _, serial = lint(jobs=1)
    assert parallel == serial
    assert ("examples/settings.py", 3, "WC202") in parallel

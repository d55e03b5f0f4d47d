"""``--watch`` and ``--generate-shell-completion`` (issue 30 item 11), through the real command line: the
watch in a subprocess that sees a file edited, the bash script through bash's own ``complete``."""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
import threading
import time

from foreground import foreground

CLEAN = "import warp as wp\n"
FINDING = "import warp as wp\n\nwp.force_load()\n"


def _reader(stream, lines: queue.Queue) -> None:
    for line in stream:
        lines.put(line)
    lines.put(None)


def _until(lines: queue.Queue, wanted: str, seconds: float = 120) -> list[str]:
    """The lines read until one holds ``wanted`` (an AssertionError with them when it never comes)."""
    seen: list[str] = []
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            line = lines.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            break
        if line is None:
            break
        seen.append(line)
        if wanted in line:
            return seen
    raise AssertionError(f"no {wanted!r} in {seen}")


def test_watch_checks_again_after_an_edit_and_ctrl_c_ends_it_cleanly(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.warplint]\n")
    app = tmp_path / "app.py"
    app.write_text(CLEAN)
    proc = subprocess.Popen(foreground([sys.executable, "-m", "warplint", "--watch", "--format", "concise", "."]),
                            cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    lines: queue.Queue = queue.Queue()
    threading.Thread(target=_reader, args=(proc.stdout, lines), daemon=True).start()
    try:
        first = _until(lines, "Watching for file changes")
        assert any("All checks passed" in line for line in first), first
        app.write_text(FINDING)
        second = _until(lines, "Watching for file changes")
        assert any("files changed" in line for line in second), second  # the separator (not a terminal)
        assert any(line.startswith("app.py:3:1: WC501") for line in second), second
        app.write_text(CLEAN)
        third = _until(lines, "Watching for file changes")
        assert any("All checks passed" in line for line in third), third
    finally:
        os.killpg(proc.pid, signal.SIGINT)  # Ctrl-C in the terminal
        _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 0, stderr
    assert "Traceback" not in stderr and "interrupted" not in stderr, stderr


def test_watch_refuses_what_it_cannot_repeat(tmp_path):
    result = subprocess.run([sys.executable, "-m", "warplint", "--watch", "--fix", "."], cwd=tmp_path,
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 2 and result.stderr.count("\n") == 1, result.stderr
    assert "--watch checks files on disk" in result.stderr and "--fix" in result.stderr, result.stderr


def _bash_completions(script: str, *words: str) -> list[str]:
    """What bash's completion for ``words`` (the last one being completed) offers, with ``script`` loaded."""
    program = ('eval "$SCRIPT"; complete -p warplint >/dev/null || exit 3; '
               'COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _warplint; printf "%s\\n" "${COMPREPLY[@]}"')
    result = subprocess.run(["bash", "-c", program, "bash", *words], env={**os.environ, "SCRIPT": script},
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0 and result.stderr == "", result.stderr
    return result.stdout.split()


def test_bash_completion_completes_options_choices_and_rule_codes(tmp_path):
    script = subprocess.run([sys.executable, "-m", "warplint", "--generate-shell-completion", "bash"],
                            capture_output=True, text=True, timeout=60, check=True).stdout
    assert _bash_completions(script, "warplint", "--sel") == ["--select"]
    assert _bash_completions(script, "warplint", "--generate-shell") == ["--generate-shell-completion"]
    assert _bash_completions(script, "warplint", "--format", "ju") == ["junit"]
    codes = _bash_completions(script, "warplint", "--select", "WC10")
    assert "WC101" in codes and all(c.startswith("WC10") for c in codes), codes
    assert "WC101,WC501" in _bash_completions(script, "warplint", "--ignore", "WC101,WC50")  # after a comma
    assert "WC404" in _bash_completions(script, "warplint", "rule", "WC4")
    assert "check" in _bash_completions(script, "warplint", "ch")


def test_zsh_and_fish_scripts_are_written_from_the_same_parser():
    def generated(shell: str) -> str:
        return subprocess.run([sys.executable, "-m", "warplint", "--generate-shell-completion", shell],
                              capture_output=True, text=True, timeout=60, check=True).stdout

    fish, zsh = generated("fish"), generated("zsh")
    assert "complete -c warplint -l select -x -a 'ALL WC000" in fish
    assert "complete -c warplint -l format -x -a" in fish and "-l config -r -F" in fish
    assert zsh.startswith("#compdef warplint") and "complete -o filenames -F _warplint warplint" in zsh
    bad = subprocess.run([sys.executable, "-m", "warplint", "--generate-shell-completion", "tcsh"],
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1

"""The everyday command line next to ruff's: summary line, empty paths, colour, -q/-v, repeatable
selections, excludes and per-file ignores on the command line, --show-settings/--show-files,
--add-noqa, unused noqa (WC001), `rule` by name, --statistics per format, the progress line,
carets under wide characters, and the README's example output.

Through the real CLI: in-process (``run_cli``) where only the output matters, in a subprocess or
under a pseudo-terminal where the terminal, the environment or the console script matters.
"""

from __future__ import annotations

import json
import os
import pty
import re
import select
import subprocess
import sys
import time

from warplint.cli import COMMANDS
from warplint.progress import ProgressBar
from warplint.registry import all_rules

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BAD = "import warp as wp\nwp.force_load()\n"
CLEAN = "import warp as wp\nwp.load_module('app', device='cpu')\n"
WARPLINT = [sys.executable, "-c", "from warplint.cli import entry; entry()"]
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def write(tmp_path, name, text):
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def warplint(*argv, cwd, env=None, stdin=None):
    merged = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
    merged.update(env or {})
    return subprocess.run([*WARPLINT, *argv], cwd=cwd, env=merged, input=stdin, capture_output=True, text=True,
                          timeout=300)


def in_terminal(argv, cwd, env=None, timeout=300.0) -> tuple[int, str]:
    """Run warplint with stdout and stderr on a pseudo-terminal; (exit code, everything it wrote)."""
    merged = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
    merged.update({"TERM": "xterm", **(env or {})})
    pid, fd = pty.fork()
    if pid == 0:  # the child: becomes warplint
        os.chdir(cwd)
        os.execve(sys.executable, [*WARPLINT, *argv], merged)
    chunks = []
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        ready, _, _ = select.select([fd], [], [], 0.5)
        if ready:
            try:
                data = os.read(fd, 65536)
            except OSError:  # EIO: the child closed the terminal
                break
            if not data:
                break
            chunks.append(data)
    _, status = os.waitpid(pid, 0)
    os.close(fd)
    return os.waitstatus_to_exitcode(status), b"".join(chunks).decode("utf-8", "replace")


# ---------------------------------------------------------------------- summary line
def test_summary_line_as_ruff(tmp_path, run_cli):
    write(tmp_path, "bad.py", BAD + "wp.force_load(device='cpu')\n")
    write(tmp_path, "clean.py", CLEAN)
    code, out, _ = run_cli("bad.py")
    assert code == 1 and out.endswith("\n\nFound 2 findings.\n")
    code, out, _ = run_cli("bad.py", "--format", "concise", "--exit-zero")
    assert code == 0 and out.splitlines()[-1] == "Found 2 findings." and len(out.splitlines()) == 3
    code, out, _ = run_cli("clean.py", "--format", "concise")
    assert code == 0 and out == "All checks passed!\n"
    for machine in ("json", "sarif", "github"):  # no summary where a program reads the output
        _, out, _ = run_cli("bad.py", "--format", machine)
        assert "Found" not in out, machine
    json.loads(run_cli("bad.py", "--format", "json")[1])
    _, out, _ = run_cli("bad.py", "--format", "concise", "--output-file", "report.txt")
    assert out == "" and (tmp_path / "report.txt").read_text().endswith("\nFound 2 findings.\n")


def test_summary_counts_fixable_findings(tmp_path, run_cli):
    write(tmp_path, "stale.py", CLEAN.replace("'cpu')", "'cpu')  # noqa: WC501") + BAD.splitlines()[1] + "\n")
    code, out, _ = run_cli("stale.py", "--format", "concise", "--extend-select", "WC001")
    assert code == 1 and out.splitlines()[-1] == "Found 2 findings (1 fixable with --fix).", out


def test_quiet_prints_findings_only_and_verbose_says_what_ran(tmp_path, run_cli):
    write(tmp_path, "bad.py", BAD)
    (tmp_path / "empty").mkdir()
    code, out, err = run_cli("bad.py", "--format", "concise", "-q")
    assert code == 1 and out.count("\n") == 1 and out.startswith("bad.py:2:1: WC501") and err == ""
    code, out, err = run_cli("empty", "-q")
    assert (code, out, err) == (0, "", "")
    code, out, err = run_cli("bad.py", "--format", "concise", "-v", "--no-cache")
    assert code == 1 and re.fullmatch(r"warplint: checked 1 file \(1 parsed\), 1 finding; cache off; \d+ jobs; "
                                      r"[0-9.]+ s\n", err), err
    run_cli("bad.py", "-v")
    _, _, err = run_cli("bad.py", "-v")
    assert "findings from the result cache" in err
    code, _, err = run_cli("bad.py", "-q", "-v")
    assert code == 2 and err.count("\n") == 1


# ---------------------------------------------------------------------- paths
def test_a_path_without_python_files_and_a_missing_path(tmp_path, run_cli):
    write(tmp_path, "docs/readme.txt", "not python\n")
    code, out, err = run_cli("docs")
    assert (code, out) == (0, "All checks passed!\n")
    assert err == "warplint: warning: No Python files found under the given path(s)\n"
    code, out, err = run_cli("nowhere")
    assert code == 2 and err == "warplint: error: nowhere: no such file or directory\n"


def test_stdin_filename_alone_reads_stdin_only(tmp_path, run_cli):
    write(tmp_path, "other.py", BAD)  # must not be linted: the file comes on stdin
    code, out, err = run_cli("--stdin-filename", "pkg/mod.py", "--format", "concise", stdin=CLEAN)
    assert (code, out, err) == (0, "All checks passed!\n", "")
    code, out, _ = run_cli("--stdin-filename", "pkg/mod.py", "--format", "concise", stdin=BAD)
    assert code == 1 and out.startswith("pkg/mod.py:2:1: WC501") and "other.py" not in out


def test_excludes_and_per_file_ignores_on_the_command_line(tmp_path, run_cli):
    write(tmp_path, "pyproject.toml", '[tool.warplint]\nexclude = ["generated/"]\n'
                                      'per-file-ignores = { "tests/*" = ["WC201"] }\n')
    write(tmp_path, "generated/g.py", BAD)
    write(tmp_path, "vendored/v.py", BAD)
    write(tmp_path, "tests/t.py", BAD + "wp.clear_kernel_cache()\n")
    write(tmp_path, "app.py", BAD)

    def files(*argv):
        return {line.split(":")[0] for line in run_cli("--format", "concise", *argv)[1].splitlines()[:-1]}

    sep = os.sep
    assert files() == {"app.py", f"tests{sep}t.py", f"vendored{sep}v.py"}
    assert files("--extend-exclude", "vendored/") == {"app.py", f"tests{sep}t.py"}
    assert files("--exclude", "vendored/,tests/") == {"app.py", f"generated{sep}g.py"}  # replaces the config's
    assert files("--exclude", "vendored/", "--exclude", "tests/") == {"app.py", f"generated{sep}g.py"}
    # named on the command line: checked, unless --force-exclude (pre-commit names every file)
    assert files("generated/g.py", "app.py") == {f"generated{sep}g.py", "app.py"}
    assert files("generated/g.py", "app.py", "--force-exclude") == {"app.py"}
    code, _, err = run_cli("generated/g.py", "--force-exclude")
    assert code == 0 and "No Python files found" in err

    def codes(*argv):
        return sorted(line.split()[1] for line in run_cli("tests/t.py", "--format", "concise", *argv)[1]
                      .splitlines()[:-1])

    assert codes() == ["WC501"]  # the config's per-file ignore
    assert codes("--per-file-ignores", "tests/*:WC501") == ["WC201"]  # replaces it
    assert codes("--extend-per-file-ignores", "tests/*:WC501") == []
    assert codes("--per-file-ignores", "tests/*:WC501,WC201") == []
    assert codes("--per-file-ignores", "other/*:WC201,tests/*:WC501") == ["WC201"]
    code, _, err = run_cli("--per-file-ignores", "WC501")
    assert code == 2 and "GLOB:CODES" in err and err.count("\n") == 1
    code, _, err = run_cli("--per-file-ignores", "tests/*:XX9")
    assert code == 2 and "XX9" in err


def test_force_exclude_from_the_config(tmp_path, run_cli):
    write(tmp_path, "pyproject.toml", '[tool.warplint]\nextend-exclude = ["legacy"]\nforce-exclude = true\n')
    write(tmp_path, "legacy/old.py", BAD)
    assert run_cli(os.path.join("legacy", "old.py"))[0] == 0
    write(tmp_path, "pyproject.toml", '[tool.warplint]\nforce-exclude = "yes"\n')
    code, _, err = run_cli("legacy")
    assert code == 2 and "force-exclude" in err


def test_repeated_and_comma_separated_selections_accumulate(tmp_path, run_cli):
    write(tmp_path, "bad.py", BAD + "wp.clear_kernel_cache()\nwp.config.cache_kernels = False\n")

    def codes(*argv):
        return sorted({line.split()[1] for line in run_cli("bad.py", "--format", "concise", *argv)[1]
                       .splitlines()[:-1]})

    assert codes() == ["WC201", "WC202", "WC501"]
    assert codes("--select", "WC201", "--select", "WC501") == ["WC201", "WC501"]
    assert codes("--select", "WC201,WC202", "--select", "WC501") == ["WC201", "WC202", "WC501"]
    assert codes("--ignore", "WC201", "--ignore", "WC202") == ["WC501"]
    assert codes("--select", "WC201", "--extend-select", "WC202", "--extend-select", "WC501") == [
        "WC201", "WC202", "WC501"]


def test_show_files_and_show_settings(tmp_path, run_cli):
    write(tmp_path, "pyproject.toml", '[tool.warplint]\nignore = ["WC201"]\nextend-exclude = ["vendored/"]\n')
    write(tmp_path, "pkg/a.py", BAD)
    write(tmp_path, "pkg/b.py", CLEAN)
    write(tmp_path, "vendored/v.py", BAD)
    write(tmp_path, "notes.txt", "")
    code, out, _ = run_cli("--show-files")
    assert code == 0 and out.splitlines() == [os.path.join("pkg", "a.py"), os.path.join("pkg", "b.py")]
    code, out, _ = run_cli("--show-files", "--extend-exclude", "pkg/b.py")
    assert out.splitlines() == [os.path.join("pkg", "a.py")]
    code, out, err = run_cli("--show-files", "missing.py")
    assert code == 2 and "missing.py" in err

    code, out, _ = run_cli("--show-settings", "--extend-select", "WC304", "--jobs", "1")
    assert code == 0
    settings = {line.split(" = ")[0]: line for line in out.splitlines() if not line.startswith("#")}
    source = str(tmp_path / "pyproject.toml")
    assert settings["ignore"] == f'ignore = ["WC201"]  # {source}'
    assert settings["extend-exclude"] == f'extend-exclude = ["vendored/"]  # {source}'
    assert settings["extend-select"] == 'extend-select = ["WC304"]  # command line'
    assert settings["max-file-size"] == "max-file-size = 4194304  # default"
    enabled = next(line for line in out.splitlines() if line.startswith("# rules enabled"))
    assert "WC304" in enabled and "WC201" not in enabled and "WC501" in enabled


# ---------------------------------------------------------------------- colour
def test_colour_follows_the_flag_the_terminal_and_the_environment(tmp_path):
    write(tmp_path, "bad.py", BAD)
    plain = warplint("bad.py", cwd=tmp_path)
    assert plain.returncode == 1 and not ANSI.search(plain.stdout)  # a pipe: auto is off
    always = warplint("bad.py", "--color", "always", cwd=tmp_path)
    assert "\x1b[1;31mWC501\x1b[0m" in always.stdout and ANSI.sub("", always.stdout) == plain.stdout
    assert ANSI.search(warplint("bad.py", cwd=tmp_path, env={"FORCE_COLOR": "1"}).stdout)
    assert not ANSI.search(warplint("bad.py", cwd=tmp_path, env={"FORCE_COLOR": "1", "NO_COLOR": "1"}).stdout)
    json.loads(warplint("bad.py", "--format", "json", "--color", "always", cwd=tmp_path).stdout)  # never coloured
    code, seen = in_terminal(["bad.py", "--no-cache"], tmp_path)
    assert code == 1 and "\x1b[1;31mWC501\x1b[0m" in seen
    code, seen = in_terminal(["bad.py", "--no-cache"], tmp_path, env={"NO_COLOR": "1"})
    assert code == 1 and "WC501" in seen and not ANSI.search(seen)
    code, seen = in_terminal(["bad.py", "--no-cache", "--color", "never"], tmp_path)
    assert code == 1 and not ANSI.search(seen)


# ---------------------------------------------------------------------- carets
def test_carets_line_up_under_wide_characters_and_tabs(tmp_path, run_cli):
    # "漢字" is 2 characters and 4 terminal columns; the tab expands to the next multiple of 4
    write(tmp_path, "wide.py", 'import warp as wp\nif True:\n\tx = "漢字";  wp.force_load()\n')
    _, out, _ = run_cli("wide.py")
    lines = out.splitlines()
    i = next(n for n, line in enumerate(lines) if line.startswith("3 |"))
    assert lines[i] == '3 |     x = "漢字";  wp.force_load()'
    assert lines[i + 1] == "  | " + " " * (4 + len('x = "') + 4 + len('";  ')) + "^" * len("wp.force_load()") + " WC501"
    # combining marks take no column: "é" written as e + U+0301
    write(tmp_path, "mark.py", 'import warp as wp\nname = "e\u0301"; wp.force_load()\n')
    _, out, _ = run_cli("mark.py")
    lines = out.splitlines()
    i = next(n for n, line in enumerate(lines) if line.startswith("2 |"))
    assert lines[i + 1] == "  | " + " " * len('name = "é"; ') + "^" * len("wp.force_load()") + " WC501"


def test_a_form_feed_does_not_shift_lines(tmp_path, run_cli):
    """Python ends lines at \\n, \\r and \\r\\n only: the noqa reader and the excerpt count the same way."""
    write(tmp_path, "ff.py", "import warp as wp\n\x0c\nwp.force_load()  # noqa: WC501\nwp.force_load()\n")
    code, out, _ = run_cli("ff.py")
    assert code == 1 and out.startswith("ff.py:4:1: WC501") and "4 | wp.force_load()\n" in out


# ---------------------------------------------------------------------- help and rule
def test_help_lists_every_subcommand(tmp_path):
    done = warplint("--help", cwd=tmp_path)
    assert done.returncode == 0
    for name, _ in COMMANDS:
        assert f"warplint {name} " in done.stdout
        assert warplint(name, "--help", cwd=tmp_path).returncode == 0, name
    assert {name for name, _ in COMMANDS} >= {"check", "rule", "server"}


def test_rule_by_code_or_name_with_suggestions(run_cli):
    for spelling in ("WC101", "wc101", "kernel-joins-loaded-module", "Kernel_Joins_Loaded_Module"):
        code, out, _ = run_cli("rule", spelling)
        assert code == 0 and out.startswith("# WC101 kernel-joins-loaded-module"), spelling
    code, out, err = run_cli("rule", "kernel-join-loaded-modules")
    assert code == 2 and out == "" and "did you mean `kernel-joins-loaded-module`?" in err and err.count("\n") == 1
    code, _, err = run_cli("rule", "WC5O1")
    assert code == 2 and "`WC501`" in err
    code, _, err = run_cli("rule", "nothing-like-it")
    assert code == 2 and "did you mean" not in err
    code, out, _ = run_cli("rule", "unused-noqa")
    assert code == 0 and out.startswith("# WC001 unused-noqa") and "opt-in" in out
    names = [r.name for r in all_rules().values()]
    assert len(set(names)) == len(names), "a rule name names one rule (ruff's names are unique too)"


def test_mistyped_options_are_refused_with_a_suggestion_and_prefixes_are_not_options(run_cli):
    for typed, meant in (("--stat", "--statistics"), ("--unsafe", "--unsafe-fixes"), ("--selec", "--select")):
        code, out, err = run_cli(typed, ".")
        assert code == 2 and out == "" and f"did you mean `{meant}`?" in err and err.count("\n") == 1, typed
    code, _, err = run_cli("--no-such-flag-at-all", ".")
    assert code == 2 and "did you mean" not in err


def test_a_missing_path_is_no_passed_check(tmp_path, run_cli):
    write(tmp_path, "bad.py", BAD)
    code, out, err = run_cli("nope.py")
    assert code == 2 and "All checks passed" not in out and out.endswith("Found 1 error.\n")
    assert err == "warplint: error: nope.py: no such file or directory\n"
    code, out, _ = run_cli("nope.py", "bad.py")
    assert code == 2 and out.endswith("Found 1 finding and 1 error.\n")


def test_rule_is_styled_on_a_terminal_and_markdown_when_piped(tmp_path):
    piped = warplint("rule", "WC201", cwd=tmp_path)
    assert piped.returncode == 0 and piped.stdout.startswith("# WC201 kernel-cache-cleared\n")
    assert "```python" in piped.stdout and "`wp.clear_kernel_cache()`" in piped.stdout
    code, shown = in_terminal(["rule", "WC201"], tmp_path)
    assert code == 0 and shown.startswith("\x1b[1m\x1b[4mWC201 kernel-cache-cleared\x1b[0m")
    plain = re.sub(r"\x1b\[[0-9;]*m", "", shown).replace("\r\n", "\n")
    assert "```" not in plain and "**" not in plain and "`" not in plain.split("Example")[0]
    assert "\nWhy\n" in plain and "\n    import warp as wp\n" in plain  # headings and code blocks, unmarked
    assert in_terminal(["rule", "WC201", "--format", "markdown"], tmp_path)[1].startswith("# WC201")
    assert in_terminal(["rule", "WC201"], tmp_path, env={"NO_COLOR": "1"})[1].startswith("# WC201")


# ---------------------------------------------------------------------- statistics
def test_statistics_respect_the_format_and_the_output_file(tmp_path, run_cli):
    write(tmp_path, "bad.py", BAD + "wp.force_load(device='cpu')\nwp.clear_kernel_cache()\n")
    code, out, _ = run_cli("bad.py", "--statistics")
    assert code == 1 and out == ("    2\tWC501\tforce-load-all-modules\n    1\tWC201\tkernel-cache-cleared\n"
                                 "Found 3 findings.\n")
    code, out, _ = run_cli("bad.py", "--statistics", "--format", "json")
    assert code == 1 and json.loads(out) == [
        {"code": "WC501", "name": "force-load-all-modules", "count": 2, "fixable": False, "fixable_count": 0},
        {"code": "WC201", "name": "kernel-cache-cleared", "count": 1, "fixable": False, "fixable_count": 0}]
    code, out, _ = run_cli("bad.py", "--statistics", "--format", "json", "-o", "stats.json")
    assert out == "" and json.loads((tmp_path / "stats.json").read_text())[0]["count"] == 2
    for refused in ("sarif", "github"):
        code, out, err = run_cli("bad.py", "--statistics", "--format", refused, "-o", "x")
        assert code == 2 and out == "" and f"--format {refused}" in err and not (tmp_path / "x").exists()
        assert "(use text, concise or json)" in err


def test_statistics_mark_fixes_only_unsafe_fixes_apply(tmp_path, run_cli):
    write(tmp_path, "k.py", "import warp as wp\ndef body(x: wp.array(dtype=float)):\n    x[0] = 1.0\n"
                            "k = wp.kernel(body, module='solver', module_options={'max_unroll': 4})\n"
                            "@wp.kernel(module_options={'fast_math': True})\ndef j(x: wp.array(dtype=float)):\n"
                            "    x[0] = 1.0\n")
    _, out, _ = run_cli("k.py", "--statistics", "--select", "WC302")
    assert out.splitlines()[:2] == ["    2\tWC302\t[*] module-options-without-unique",
                                    "[*] fixable with `warplint --fix`"]
    write(tmp_path, "k.py", "import warp as wp\ndef body(x: wp.array(dtype=float)):\n    x[0] = 1.0\n"
                            "k = wp.kernel(body, module='solver', module_options={'max_unroll': 4})\n")
    _, out, _ = run_cli("k.py", "--statistics", "--select", "WC302")
    assert out.splitlines()[:2] == ["    1\tWC302\t[-] module-options-without-unique",
                                    "[-] fixable with `warplint --fix --unsafe-fixes`"]
    _, out, _ = run_cli("k.py", "--statistics", "--select", "WC302", "--unsafe-fixes")
    assert out.splitlines()[:2] == ["    1\tWC302\t[*] module-options-without-unique",
                                    "[*] fixable with `warplint --fix --unsafe-fixes`"]


def test_formats_are_the_writers():
    from warplint.report import FORMATS, HUMAN_FORMATS, STATISTICS_FORMATS, WRITERS

    assert list(WRITERS) == list(FORMATS) and set(HUMAN_FORMATS) < set(STATISTICS_FORMATS) <= set(FORMATS)


# ---------------------------------------------------------------------- --add-noqa and WC001
def test_add_noqa_marks_every_finding_and_keeps_every_other_byte(tmp_path, run_cli):
    original = (b"import warp as wp\r\n\r\n"
                b"wp.force_load()  # explain\r\n"
                b"wp.force_load()  # noqa: E501 - a long line\r\n"
                b"wp.clear_kernel_cache(); wp.force_load()   \r\n"
                b'x = """\r\n""" ; wp.force_load()\r\n'
                b's = "# noqa: E1"; wp.force_load()\r\n'
                b"y = 1 + \\\r\n    wp.force_load()\r\n")
    path = tmp_path / "legacy.py"
    path.write_bytes(original)
    os.chmod(path, 0o640)
    code, out, err = run_cli("legacy.py", "--add-noqa")
    assert code == 0 and out == ""
    assert err == "Added 6 noqa directives.\n"
    assert path.read_bytes() == (b"import warp as wp\r\n\r\n"
                                 b"wp.force_load()  # explain  # noqa: WC501\r\n"
                                 b"wp.force_load()  # noqa: E501, WC501 - a long line\r\n"
                                 b"wp.clear_kernel_cache(); wp.force_load()  # noqa: WC201, WC501\r\n"
                                 b'x = """\r\n""" ; wp.force_load()  # noqa: WC501\r\n'
                                 b's = "# noqa: E1"; wp.force_load()  # noqa: WC501\r\n'
                                 b"y = 1 + \\\r\n    wp.force_load()  # noqa: WC501\r\n")
    assert os.stat(path).st_mode & 0o777 == 0o640
    assert run_cli("legacy.py", "--extend-select", "WC001") == (0, "All checks passed!\n", "")
    assert run_cli("legacy.py", "--add-noqa")[2] == "Added 0 noqa directives.\n"  # idempotent
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".warplint-")] == []  # no temp file left


def test_add_noqa_where_a_comment_cannot_go(tmp_path, run_cli):
    source = 'import warp as wp\nwp.launch(k, dim=1, inputs=[wp.force_load(), """\n"""])\n'
    path = write(tmp_path, "open.py", source)
    code, _, err = run_cli("open.py", "--add-noqa", "--select", "WC501")
    assert code == 0 and "open.py:2: no noqa added: it ends inside a multi-line string" in err
    assert path.read_text() == source


def test_add_noqa_keeps_a_bom_and_a_coding_line(tmp_path, run_cli):
    bom = b"\xef\xbb\xbfimport warp as wp\nwp.force_load()  # noqa: E501\n"
    (tmp_path / "bom.py").write_bytes(bom)
    latin = b"# -*- coding: latin-1 -*-\nimport warp as wp\ns = '\xe9'; wp.force_load()\n"
    (tmp_path / "latin.py").write_bytes(latin)
    assert run_cli(".", "--add-noqa")[0] == 0
    assert (tmp_path / "bom.py").read_bytes() == bom.replace(b"E501", b"E501, WC501")
    assert (tmp_path / "latin.py").read_bytes() == latin.replace(b"()\n", b"()  # noqa: WC501\n")
    assert run_cli(".")[0] == 0


def test_add_noqa_refuses_what_it_cannot_do(tmp_path, run_cli):
    write(tmp_path, "bad.py", BAD)
    for argv in (("--stdin-filename", "x.py"), ("-",), ("--statistics",)):
        code, _, err = run_cli("bad.py", "--add-noqa", *argv, stdin="")
        assert code == 2 and err.count("\n") == 1, argv


def test_unused_noqa_reports_and_its_fix(tmp_path, run_cli):
    write(tmp_path, "stale.py", "import warp as wp\n\n"
                                "wp.force_load()  # noqa: WC501, WC201\n"
                                "wp.load_module('a', device='cpu')  # noqa: WC501  - moved\n"
                                "wp.load_module('a', device='cpu')  # noqa: E501\n")
    code, out, _ = run_cli("stale.py", "--format", "json", "--extend-select", "WC001")
    found = json.loads(out)
    assert code == 1 and [(d["line"], d["code"], d["message"]) for d in found] == [
        (3, "WC001", "Unused `noqa` directive (unused: `WC201`)"),
        (4, "WC001", "Unused `noqa` directive (unused: `WC501`)")]
    first, second = (d["fix"] for d in found)
    assert first["applicability"] == "safe" and first["edits"] == [
        {"location": {"row": 3, "column": 26}, "end_location": {"row": 3, "column": 38}, "content": "WC501"}]
    # the whole directive goes; the explanation after it stays a comment
    assert second["edits"] == [
        {"location": {"row": 4, "column": 36}, "end_location": {"row": 4, "column": 49}, "content": "#"}]
    code, out, _ = run_cli("stale.py", "--format", "concise")  # opt-in: off by default
    assert code == 0


# ---------------------------------------------------------------------- progress
def test_progress_bar_is_rate_limited_and_erased():
    class Terminal:
        def __init__(self):
            self.text = ""

        def write(self, text):
            self.text += text

        def flush(self):
            pass

    now = [0.0]
    terminal = Terminal()
    bar = ProgressBar(terminal, delay=1.0, interval=0.1, clock=lambda: now[0])  # type: ignore[arg-type]
    bar(1, 100)
    assert terminal.text == ""  # not within the first second
    for done in range(2, 100):
        now[0] = 1.0 + done * 0.01  # 100 files a second
        bar(done, 100)
    assert 9 <= terminal.text.count("\r\x1b[K") <= 11
    bar(100, 100)
    assert re.search(r"\r\x1b\[Kwarplint: modelling files 100/100 \[#+\] 100%$", terminal.text)
    bar.close()
    assert terminal.text.endswith("\r\x1b[K")
    size = len(terminal.text)
    bar.close()
    assert len(terminal.text) == size


def test_progress_names_its_phase_and_the_time_left():
    class Terminal:
        text = ""

        def write(self, text):
            self.text += text

        def flush(self):
            pass

    now = [0.0]
    terminal = Terminal()
    bar = ProgressBar(terminal, delay=1.0, interval=0.1, clock=lambda: now[0])  # type: ignore[arg-type]
    for done in range(1, 40):
        now[0] = done * 0.1  # 10 files a second: 400 files take 40 s
        bar(done, 400)
    now[0] = 5.0
    bar(50, 400)
    assert terminal.text.endswith(" 12% ~35 s left")  # 5 s for 50 files: 350 more take 35 s
    now[0] += 0.2
    bar(1, 50, "modelling files that import them")
    # a new phase: named, and no time left until its own rate is known
    assert re.search(r"\r\x1b\[Kwarplint: modelling files that import them 1/50 (\[\.+\] )?  2%$", terminal.text)
    now[0] += 300
    bar(10, 50, "modelling files that import them")
    assert terminal.text.endswith(" 20% ~20 min left")


def test_progress_line_on_a_terminal_only(tmp_path):
    body = "".join(f"\n@wp.kernel\ndef k{i}(a: wp.array(dtype=float)):\n    a[wp.tid()] = {i}.0\n" for i in range(300))
    for n in range(40):
        write(tmp_path, f"m{n}.py", "import warp as wp\n" + body)
    code, seen = in_terminal([".", "--no-cache", "-j", "1", "--format", "concise"], tmp_path)
    assert code == 0, seen
    assert "warplint: modelling files" in seen and "\r\x1b[K" in seen
    last = seen.rsplit("warplint: modelling files", 1)[1]
    assert "\r\x1b[K" in last  # erased after the last redraw, before the summary
    assert seen.rstrip().endswith("All checks passed!")
    piped = warplint(".", "--no-cache", "-j", "1", cwd=tmp_path)
    assert piped.returncode == 0 and piped.stderr == ""


# ---------------------------------------------------------------------- README
def test_readme_example_output_is_the_real_output():
    """The README's ``$ warplint examples/`` block: its lines before ``...`` open the real output
    and its lines after close it."""
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as fh:
        readme = fh.read()
    block = re.search(r"```console\n\$ warplint examples/\n(.*?)```", readme, re.S)
    assert block, "README.md has no ```console block for `warplint examples/`"
    head, _, tail = block.group(1).partition("\n...\n")
    done = warplint("examples/", "--no-cache", "--color", "never", cwd=ROOT)
    assert done.returncode == 1, done.stderr
    assert done.stdout.startswith(head + "\n"), done.stdout
    assert tail and done.stdout.endswith(tail), done.stdout


def test_fix_removes_unused_noqa_codes(tmp_path, run_cli):
    path = write(tmp_path, "stale.py", "import warp as wp\n\n"
                                       "wp.force_load()  # noqa: WC501, WC201\n"
                                       "wp.load_module('a', device='cpu')  # explain  # noqa: WC501\n"
                                       "wp.load_module('a', device='cpu')  # noqa: E501, WC501\n")
    code, out, _ = run_cli("stale.py", "--extend-select", "WC001", "--fix")
    assert code == 0 and out == "Found 3 findings (3 fixed, 0 remaining).\n"
    assert path.read_text() == ("import warp as wp\n\n"
                                "wp.force_load()  # noqa: WC501\n"
                                "wp.load_module('a', device='cpu')  # explain\n"
                                "wp.load_module('a', device='cpu')  # noqa: E501\n")
    assert run_cli("stale.py", "--extend-select", "WC001")[0] == 0


def test_force_exclude_holds_for_the_stdin_filename(tmp_path):
    write(tmp_path, "pyproject.toml", '[tool.warplint]\nextend-exclude = ["vendored/"]\n')
    source = "import warp as wp\nwp.force_load()\n"
    named = warplint("--stdin-filename", "vendored/a.py", "--format", "concise", "-", cwd=tmp_path, stdin=source)
    assert named.returncode == 1 and named.stdout.startswith("vendored/a.py:2:1: WC501")  # as a path named
    forced = warplint("--force-exclude", "--stdin-filename", "vendored/a.py", "-", cwd=tmp_path, stdin=source)
    assert forced.returncode == 0 and "WC501" not in forced.stdout
    fixed = warplint("--force-exclude", "--fix", "--stdin-filename", "vendored/a.py", "-", cwd=tmp_path, stdin=source)
    assert fixed.returncode == 0 and fixed.stdout == source  # the code comes back as it was

"""The command line as a user meets it: exit codes, formats, config, noqa, stdin, bad files."""

import json
import os
import subprocess
import sys

import pytest

BAD = "import warp as wp\nwp.force_load()\n"
CLEAN = "import warp as wp\nwp.load_module('app', device='cpu')\n"


def write(tmp_path, name, text):
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_exit_codes(tmp_path, run_cli):
    write(tmp_path, "clean.py", CLEAN)
    assert run_cli("clean.py")[0] == 0
    write(tmp_path, "bad.py", BAD)
    code, out, _ = run_cli("bad.py")
    assert code == 1 and "bad.py:2:1: WC501" in out
    assert run_cli("bad.py", "--exit-zero")[0] == 0
    code, _, err = run_cli("--format", "yaml")
    assert code == 2 and err.startswith("warplint: error:") and err[-1] == "\n" and err.count("\n") == 1


def test_default_path_is_current_directory(tmp_path, run_cli):
    write(tmp_path, "pkg/bad.py", BAD)
    code, out, _ = run_cli()
    assert code == 1 and os.path.join("pkg", "bad.py") in out


def test_text_format_shows_source_and_caret(tmp_path, run_cli):
    write(tmp_path, "bad.py", "import warp as wp\n\ndef f():\n    wp.force_load(device='cpu')\n")
    _, out, _ = run_cli("bad.py")
    lines = out.splitlines()
    i = next(n for n, line in enumerate(lines) if line.startswith("4 |"))
    assert lines[i] == "4 |     wp.force_load(device='cpu')"
    assert lines[i + 1] == "  |     " + "^" * len("wp.force_load(device='cpu')") + " WC501"


def test_concise_json_github_sarif(tmp_path, run_cli):
    write(tmp_path, "bad.py", BAD)
    _, out, _ = run_cli("bad.py", "--format", "concise")
    assert out.startswith("bad.py:2:1: WC501 ") and out.endswith("\nFound 1 finding.\n") and out.count("\n") == 2
    _, out, _ = run_cli("bad.py", "--format", "json")
    (item,) = json.loads(out)
    assert {k: item[k] for k in ("path", "line", "column", "end_line", "end_column", "code", "name",
                                 "mechanism", "confidence", "fix")} == {
        "path": "bad.py", "line": 2, "column": 1, "end_line": 2, "end_column": 16, "code": "WC501",
        "name": "force-load-all-modules", "mechanism": "CS-13", "confidence": "high", "fix": None}
    assert item["message"]
    _, out, _ = run_cli("bad.py", "--format", "github")
    assert out.startswith(
        "::warning file=bad.py,line=2,col=1,endLine=2,endColumn=16,title=WC501 force-load-all-modules::"
    )
    _, out, _ = run_cli("bad.py", "--format", "sarif")
    sarif = json.loads(out)
    (result,) = sarif["runs"][0]["results"]
    assert result["ruleId"] == "WC501"
    assert result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "bad.py"


def test_select_ignore_extend_select(tmp_path, run_cli):
    write(tmp_path, "bad.py", BAD + "wp.clear_kernel_cache()\n")
    _, out, _ = run_cli("bad.py", "--format", "concise")
    assert "WC501" in out and "WC201" in out
    _, out, _ = run_cli("bad.py", "--format", "concise", "--select", "WC5")
    assert "WC501" in out and "WC201" not in out
    _, out, _ = run_cli("bad.py", "--format", "concise", "--ignore", "WC501")
    assert "WC501" not in out and "WC201" in out
    _, out, _ = run_cli("bad.py", "--format", "concise", "--select", "WC2", "--extend-select", "WC501")
    assert "WC501" in out and "WC201" in out
    code, _, err = run_cli("bad.py", "--select", "WC999")
    assert code == 2 and "WC999" in err


def test_statistics(tmp_path, run_cli):
    write(tmp_path, "bad.py", BAD + "wp.force_load(device='cpu')\n")
    _, out, _ = run_cli("bad.py", "--format", "concise", "--statistics")
    assert "    2\tWC501\tforce-load-all-modules" in out


def test_noqa_forms(tmp_path, run_cli):
    write(tmp_path, "a.py", "import warp as wp\nwp.force_load()  # noqa: WC501\nwp.force_load()  # noqa\n"
                            "wp.force_load()  # noqa: E501\nwp.force_load()  # NOQA:WC501,WC201\n")
    _, out, _ = run_cli("a.py", "--format", "concise", "-q")
    assert [line.split(":")[1] for line in out.splitlines()] == ["4"]
    write(tmp_path, "b.py", "import warp as wp\n# warplint: noqa\nwp.force_load()\n")
    write(tmp_path, "c.py", "import warp as wp\n# warplint: noqa: WC201\nwp.force_load()\n")
    assert run_cli("b.py")[0] == 0
    assert "WC501" in run_cli("c.py", "--format", "concise")[1]


def test_noqa_lines_are_numbered_as_the_parser_numbers_them(tmp_path, run_cli):
    """Directives are found by searching the text, not by splitting it into lines: the line a directive
    suppresses on must still count \\r\\n, lone \\r and non-ASCII text before it as the parser does."""
    text = ("import warp as wp\r\n'''é İ ∑\rstill the string'''\r\n"
            "wp.force_load()  # NoQa: WC501\nwp.force_load()\r\nwp.force_load()  # noqa\n"
            "x = '# NOQA'; wp.force_load()\n")
    (tmp_path / "a.py").write_bytes(text.encode("utf-8"))
    _, out, _ = run_cli("a.py", "--format", "concise", "-q")
    assert [line.split(":")[1] for line in out.splitlines()] == ["5"]


def test_config_from_pyproject(tmp_path, run_cli):
    write(tmp_path, "pyproject.toml", '[tool.warplint]\nignore = ["WC201"]\n'
                                      'per-file-ignores = { "legacy/*" = ["WC501"] }\nextend-exclude = ["vendored/"]\n')
    write(tmp_path, "src/app.py", BAD + "wp.clear_kernel_cache()\n")
    write(tmp_path, "legacy/old.py", BAD)
    write(tmp_path, "vendored/lib.py", BAD)
    _, out, _ = run_cli("--format", "concise")
    message = out.split(" WC501 ", 1)[1].splitlines()[0]
    assert out.splitlines() == [f"{os.path.join('src', 'app.py')}:2:1: WC501 {message}", "Found 1 finding."]


def test_a_nested_pyproject_without_the_table_does_not_hide_the_parents_settings(tmp_path, run_cli):
    write(tmp_path, "pyproject.toml", '[tool.warplint]\nignore = ["WC501"]\n')
    write(tmp_path, "pkg/pyproject.toml", '[project]\nname = "pkg"\n')  # a nested package, no [tool.warplint]
    write(tmp_path, "pkg/app.py", BAD + "wp.clear_kernel_cache()\n")
    for argv, cwd in ((["."], None), (["pkg/app.py"], None), (["app.py"], tmp_path / "pkg")):
        _, out, _ = run_cli(*argv, "--format", "concise", "--no-cache", cwd=cwd)
        assert [line.split(" ")[1] for line in out.splitlines()[:-1]] == ["WC201"], (argv, out)
    write(tmp_path, "pkg/pyproject.toml", '[project]\nname = "pkg"\n[tool.warplint]\n')  # with the table: it rules
    _, out, _ = run_cli("app.py", "--format", "concise", "--no-cache", cwd=tmp_path / "pkg")
    assert sorted(line.split(" ")[1] for line in out.splitlines()[:-1]) == ["WC201", "WC501"]


@pytest.mark.parametrize("section, key", [
    ('[tool.warplint]\nselekt = ["WC1"]\n', "selekt"),
    ('[tool.warplint]\nselect = "WC1"\n', "select"),
    ('[tool.warplint]\nignore = ["XX1"]\n', "XX1"),
    ('[tool.warplint.confirm]\ntimeout = -1\n', "confirm.timeout"),
    ('[tool.warplint.confirm]\ncmd = "x"\n', "confirm.cmd"),
    ('[tool.warplint\n', "invalid TOML"),
])
def test_config_errors_are_one_line(tmp_path, run_cli, section, key):
    write(tmp_path, "pyproject.toml", section)
    write(tmp_path, "a.py", BAD)
    code, out, err = run_cli("a.py")
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and key in err and "Traceback" not in err


def test_stdin(tmp_path, run_cli):
    code, out, _ = run_cli("-", "--stdin-filename", "pkg/mod.py", "--format", "concise", stdin=BAD)
    assert code == 1 and out.startswith("pkg/mod.py:2:1: WC501")


def test_syntax_error_and_unreadable_files_do_not_stop_the_run(tmp_path, run_cli):
    write(tmp_path, "broken.py", "import warp as wp\ndef (:\n")
    write(tmp_path, "bad.py", BAD)
    (tmp_path / "latin.py").write_bytes(b"import warp\nx = '\xff\xfe'\n")
    code, out, err = run_cli(".", "--format", "concise")
    assert code == 1
    assert "broken.py:2:" in out and "WC000" in out and "syntax error" in out
    assert "latin.py:1:1: WC000" in out and "cannot decode" in out
    assert "bad.py:2:1: WC501" in out
    code, out, err = run_cli("missing_dir")
    assert code == 2 and "missing_dir" in err and err.count("\n") == 1


def test_unreadable_file_in_a_directory(tmp_path, run_cli):
    write(tmp_path, "pkg/bad.py", BAD)
    os.symlink(tmp_path / "nowhere.py", tmp_path / "pkg" / "dangling.py")
    code, out, _ = run_cli("pkg", "--format", "concise")
    assert code == 1 and "dangling.py:1:1: WC000" in out and "cannot read" in out
    assert "bad.py:2:1: WC501" in out


def test_no_cache_before_a_cache_exists(tmp_path, run_cli):
    write(tmp_path, "bad.py", BAD)
    assert run_cli("bad.py", "--no-cache")[0] == 1


def test_rule_command(run_cli):
    code, out, _ = run_cli("rule", "WC501")
    assert code == 0 and out.startswith("# WC501 force-load-all-modules") and "## Why" in out
    code, out, _ = run_cli("rule", "--all")
    rows = {line.split()[0]: line.split() for line in out.splitlines()[1:]}
    assert code == 0 and rows["WC101"][1:4] == ["kernel-joins-loaded-module", "CS-1", "on"]
    assert rows["WC304"][3] == "opt-in" and rows["WC901"][3] == "runtime"
    code, _, err = run_cli("rule", "WC999")
    assert code == 2 and "WC999" in err


def test_confirm_needs_a_command(tmp_path, run_cli):
    write(tmp_path, "bad.py", BAD)
    code, _, err = run_cli("bad.py", "--confirm")
    assert code == 2 and "--confirm needs a command" in err


def test_console_script_runs_as_module(tmp_path):
    write(tmp_path, "bad.py", BAD)
    proc = subprocess.run([sys.executable, "-m", "warplint", "bad.py", "--format", "concise"],
                          cwd=tmp_path, capture_output=True, text=True)
    assert proc.returncode == 1 and "WC501" in proc.stdout and proc.stderr == ""


def test_python_warnings_about_the_linted_code_are_not_printed(tmp_path):
    """CPython warns about odd code it reads (an invalid escape, evaluated by LibCST and
    parsed again for positions); those warnings are the user's code, not warplint's output."""
    source = tmp_path / "odd.py"
    source.write_text('import warp as wp\npattern = "\\d+"\nwp.launch(k, dim=1)\n', encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-W", "default", "-m", "warplint", "--no-cache", str(source)],
        capture_output=True, text=True, timeout=120,
    )
    assert done.returncode in (0, 1), done.stderr
    assert done.stderr == ""

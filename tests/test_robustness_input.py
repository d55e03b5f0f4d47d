"""Bad input the user hands warplint -- config, paths, special files, stdin, output targets --
gives a one-line error (exit 2) or a one-line note, never a traceback, and never stops the run."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import tempfile

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

from warplint.config import find_project_root

BAD = "import warp as wp\nwp.force_load()\n"
FINDING = "bad.py:2:1: WC501"


def warplint(*argv, cwd, stdin: bytes | None = None, env: dict | None = None, stdout=subprocess.PIPE):
    """The console entry point in a fresh process; a hang (a FIFO opened) fails the test."""
    return subprocess.run(
        [sys.executable, "-m", "warplint", "--no-cache", *argv], cwd=cwd, input=stdin, stdout=stdout,
        stderr=subprocess.PIPE, timeout=60, env={**os.environ, **(env or {})}, check=False,
    )


def assert_one_error(code: int, err: str, *words: str) -> None:
    assert code == 2, err
    assert err.startswith("warplint: error: ") and err.count("\n") == 1, err
    assert "internal error" not in err and "Traceback" not in err
    for word in words:
        assert word in err, err


# ---------------------------------------------------------------------- 1. .gitignore and exclude patterns
def test_invalid_gitignore_lines_are_ignored_with_a_note(tmp_path, run_cli):
    (tmp_path / ".gitignore").write_text("!\nbuild\\\nignored.py\n")
    (tmp_path / "bad.py").write_text(BAD)
    (tmp_path / "ignored.py").write_text(BAD)
    code, out, err = run_cli(".", "--format", "concise")
    assert code == 1 and out.startswith(FINDING) and "ignored.py" not in out  # the valid line still applies
    notes = err.splitlines()
    assert len(notes) == 2 and all(n.startswith("warplint: note: ") for n in notes), err
    assert ".gitignore:1: ignoring invalid pattern '!'" in notes[0]
    assert ".gitignore:2: ignoring invalid pattern 'build\\\\'" in notes[1]


def test_invalid_exclude_pattern_is_a_config_error(tmp_path, run_cli):
    (tmp_path / "pyproject.toml").write_text('[tool.warplint]\nextend-exclude = ["ok/", "!"]\n')
    (tmp_path / "bad.py").write_text(BAD)
    code, _, err = run_cli("bad.py")
    assert_one_error(code, err, "'extend-exclude'", "'!'")


# ---------------------------------------------------------------------- 2. codecs that fail their own way
def test_a_codec_that_raises_gives_one_wc000_and_the_run_goes_on(tmp_path, run_cli):
    (tmp_path / "puny.py").write_text("# coding: punycode\nimport warp as wp\nwp.force_load()\n")
    (tmp_path / "undefined.py").write_text("# coding: undefined\nimport warp as wp\n")
    (tmp_path / "bad.py").write_text(BAD)
    code, out, err = run_cli(".", "--format", "concise", "-q")
    assert code == 1 and err == ""
    lines = out.splitlines()
    assert [line.split(" ", 2)[:2] for line in lines] == [
        ["bad.py:2:1:", "WC501"], ["puny.py:1:1:", "WC000"], ["undefined.py:1:1:", "WC000"]]
    assert "cannot decode file" in lines[1] and "punycode" in lines[1]


# ---------------------------------------------------------------------- 3. pyproject.toml that tomllib chokes on
@pytest.mark.parametrize("content, words", [
    (b'[tool.warplint]\nselect = ["WC5"]\nname = "\xff"\n', ["not UTF-8"]),
    ('[tool.warplint]\nselect = ["WC5"]\n'.encode("utf-16"), ["not UTF-8"]),
    (b'tool = "x"\n', ["[tool] must be a table"]),
    (b"a = " + b"[" * 5000 + b"]" * 5000 + b"\n", ["nested too deeply"]),
])
def test_unreadable_pyproject_is_a_one_line_config_error(tmp_path, run_cli, content, words):
    (tmp_path / "pyproject.toml").write_bytes(content)
    (tmp_path / "bad.py").write_text(BAD)
    code, out, err = run_cli("bad.py")
    assert out == ""
    assert_one_error(code, err, "pyproject.toml", *words)


# ---------------------------------------------------------------------- 4. NUL bytes in cache-dir
def test_nul_byte_in_cache_dir(tmp_path, run_cli):
    (tmp_path / "bad.py").write_text(BAD)
    assert_one_error(*run_cli("bad.py", "--cache-dir", "a\0b")[::2], "--cache-dir")  # argv itself cannot hold one
    (tmp_path / "pyproject.toml").write_text('[tool.warplint]\ncache-dir = "a\\u0000b"\n')
    assert_one_error(*run_cli("bad.py")[::2], "'cache-dir'")


# ---------------------------------------------------------------------- 5. where the report cannot go
@pytest.mark.parametrize("target", [".", "missing/report.txt", "/dev/full"])
def test_output_file_that_cannot_be_written(tmp_path, run_cli, target):
    if target == "/dev/full" and not os.path.exists(target):
        pytest.skip("no /dev/full here")
    (tmp_path / "bad.py").write_text(BAD)
    code, _, err = run_cli("bad.py", "-o", target)
    assert_one_error(code, err, f"cannot write {target}")
    assert not (tmp_path / "missing").exists()


def test_stdout_on_a_full_disk(tmp_path):
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full here")
    (tmp_path / "bad.py").write_text(BAD)
    with open("/dev/full", "w") as full:
        done = warplint("bad.py", cwd=tmp_path, stdout=full)
    assert_one_error(done.returncode, done.stderr.decode(), "cannot write the report", "No space left")


# ---------------------------------------------------------------------- 6. file names that are not UTF-8
@pytest.fixture
def undecodable_name(tmp_path):
    try:
        with open(os.path.join(os.fsencode(tmp_path), b"bad\xff.py"), "wb") as fh:
            fh.write(BAD.encode())
    except OSError:
        pytest.skip("this file system wants UTF-8 names")
    return tmp_path


def test_sarif_percent_encodes_the_name_bytes(undecodable_name, run_cli):
    import json

    code, out, err = run_cli(".", "--format", "sarif")
    assert code == 1 and err == ""
    (result,) = json.loads(out)["runs"][0]["results"]
    assert result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "bad%FF.py"


@pytest.mark.parametrize("fmt, line", [
    ("text", "bad\\xff.py:2:1: WC501 [force-load-all-modules]"),
    ("concise", "bad\\xff.py:2:1: WC501 "),
    ("github", "::warning file=bad\\xff.py,line=2,col=1,"),
    ("junit", '<?xml version="1.0" encoding="UTF-8"?>\n<testsuites name="warplint" tests="1" failures="1" errors="0">\n'
              '  <testsuite name="bad\\xff.py"'),
])
def test_text_output_escapes_the_name_on_a_strict_stdout(undecodable_name, fmt, line):
    done = warplint(".", "--format", fmt, cwd=undecodable_name, env={"PYTHONIOENCODING": "utf-8:strict"})
    assert done.returncode == 1 and done.stderr == b"", done.stderr
    assert done.stdout.decode("utf-8").startswith(line)


def test_output_file_escapes_the_name(undecodable_name, run_cli):
    assert run_cli(".", "-o", "report.txt", "--format", "concise")[0] == 1
    assert (undecodable_name / "report.txt").read_text(encoding="utf-8").startswith("bad\\xff.py:2:1: WC501")


# ---------------------------------------------------------------------- 7. unreadable directories
CHILD_WITHOUT_ROOT = """\
import io, os, sys
from warplint.cli import main
main(["--no-cache", "."], io.StringIO(), io.StringIO())  # imports all the run needs while the stdlib is readable
if os.geteuid() == 0:
    os.setuid(65534)  # root reads mode-000 directories; "nobody" does not
sys.exit(main(["--no-cache", "--format", "concise", "."]))
"""


def test_unreadable_directory_is_skipped_with_a_note():
    # Not under tmp_path: pytest's directory is private to root, and the run must be "nobody"'s.
    with tempfile.TemporaryDirectory() as top:
        os.chmod(top, 0o755)
        os.makedirs(os.path.join(top, "pkg", "secret"))
        for relative in ("bad.py", "pkg/ok.py", "pkg/secret/hidden.py"):
            with open(os.path.join(top, relative), "w") as fh:
                fh.write(BAD)
        secret = os.path.join(top, "pkg", "secret")
        os.chmod(secret, 0)
        try:
            done = subprocess.run([sys.executable, "-c", CHILD_WITHOUT_ROOT], cwd=top, capture_output=True,
                                  text=True, timeout=120, check=False)
        finally:
            os.chmod(secret, 0o755)
    assert done.returncode == 1, done.stderr
    assert done.stderr == f"warplint: note: skipped directory {os.path.join('pkg', 'secret')}: Permission denied\n"
    assert [line.split(" ")[0] for line in done.stdout.splitlines()] == ["bad.py:2:1:", "pkg/ok.py:2:1:", "Found"]


# ---------------------------------------------------------------------- 8. stdin decoded as a file is
def test_stdin_honours_a_coding_line_and_a_bom(tmp_path):
    latin = "# -*- coding: latin-1 -*-\nimport warp as wp\nname = 'é'\nwp.force_load()\n".encode("latin-1")
    done = warplint("-", "--stdin-filename", "app.py", "--format", "concise", cwd=tmp_path, stdin=latin)
    assert done.returncode == 1 and done.stdout.startswith(b"app.py:4:1: WC501"), done.stderr
    done = warplint("-", "--format", "concise", cwd=tmp_path, stdin=b"\xef\xbb\xbf" + BAD.encode())
    assert done.returncode == 1 and done.stdout.startswith(b"stdin.py:2:1: WC501"), done.stderr


def test_stdin_that_does_not_decode_is_an_error_like_such_a_file_is_a_wc000(tmp_path):
    utf16 = BAD.encode("utf-16")  # with a BOM; CPython does not read UTF-16 source either
    done = warplint("-", cwd=tmp_path, stdin=utf16)
    assert done.stdout == b""
    assert_one_error(done.returncode, done.stderr.decode(), "cannot decode stdin")
    (tmp_path / "utf16.py").write_bytes(utf16)
    done = warplint("utf16.py", "--format", "concise", cwd=tmp_path)
    assert done.returncode == 1 and done.stdout.startswith(b"utf16.py:1:1: WC000 cannot decode file")


# ---------------------------------------------------------------------- 9. --config that is not a project's file
def test_config_dev_null_keeps_the_cache_in_the_working_projects_root(tmp_path, run_cli):
    if not os.path.exists("/dev/null"):
        pytest.skip("no /dev/null here")
    (tmp_path / "setup.cfg").write_text("")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "bad.py").write_text(BAD)
    code, out, err = run_cli("--config", "/dev/null", "bad.py", "--format", "concise", cwd=tmp_path / "sub")
    assert code == 1 and out.startswith(FINDING) and err == ""
    assert (tmp_path / ".warplint_cache").is_dir() and not (tmp_path / "sub" / ".warplint_cache").exists()
    assert not os.path.exists("/dev/.warplint_cache")


@pytest.mark.parametrize("config", [".", "missing.toml"])
def test_config_that_is_not_a_file(tmp_path, run_cli, config):
    (tmp_path / "bad.py").write_text(BAD)
    assert_one_error(*run_cli("--config", config, "bad.py")[::2], f"cannot read {config}")


# ---------------------------------------------------------------------- 10. FIFOs, devices, sockets
@pytest.fixture
def special_files(tmp_path):
    (tmp_path / "bad.py").write_text(BAD)
    (tmp_path / "sub").mkdir()
    os.mkfifo(tmp_path / "fifo.py")
    os.symlink("/dev/zero", tmp_path / "sub" / "zero.py")  # a symlink survives git clone
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(tmp_path / "sub" / "sock.py"))
    yield tmp_path
    server.close()


def test_special_files_under_a_directory_are_skipped_with_a_note(special_files):
    done = warplint(".", "--format", "concise", cwd=special_files)
    assert done.returncode == 1 and done.stdout.decode().startswith(FINDING)
    assert done.stderr.decode().splitlines() == [
        "warplint: note: skipped fifo.py: a FIFO, not a regular file",
        f"warplint: note: skipped {os.path.join('sub', 'sock.py')}: a socket, not a regular file",
        f"warplint: note: skipped {os.path.join('sub', 'zero.py')}: a character device, not a regular file",
    ]


@pytest.mark.parametrize("argv", [["fifo.py", "sub/zero.py", "sub/sock.py", "bad.py"], ["*.py", "sub/*.py", "bad.py"]])
def test_special_files_named_explicitly_or_by_glob_are_skipped_with_a_note(special_files, argv):
    done = warplint(*argv, "--format", "concise", cwd=special_files)
    assert done.returncode == 1 and done.stdout.decode().splitlines()[0].startswith(FINDING)
    notes = done.stderr.decode().splitlines()
    assert len(notes) == 3 and all(n.startswith("warplint: note: skipped ") for n in notes), notes
    assert {n.rsplit(": ", 1)[1] for n in notes} == {"a FIFO, not a regular file", "a socket, not a regular file",
                                                 "a character device, not a regular file"}


# ---------------------------------------------------------------------- 11. the editor server and stray files
KERNELS = "import warp as wp\n\n\n@wp.kernel\ndef k(a: wp.array(dtype=float)):\n    a[0] = 1.0\n"
MAIN = "import warp as wp\n\nimport kernels\n\nwp.config.enable_backward = False\n"  # WC401 once kernels is indexed


@pytest.fixture
def trees(tmp_path):
    """The same two files in the workspace folder, in a project outside it, and in no project."""
    found = {}
    for name, marker in (("workspace", None), ("project", "setup.cfg"), ("stray", None)):
        directory = tmp_path / name
        directory.mkdir()
        (directory / "kernels.py").write_text(KERNELS)
        if marker:
            (directory / marker).write_text("")
        found[name] = directory
    return found


@pytest_lsp.fixture(
    config=ClientServerConfig(server_command=[sys.executable, "-m", "warplint", "server", "--debounce", "0.05"])
)
async def client(lsp_client: LanguageClient, trees):
    folder = trees["workspace"]
    await lsp_client.initialize_session(
        types.InitializeParams(
            capabilities=types.ClientCapabilities(), root_uri=folder.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=folder.as_uri(), name="ws")],
        )
    )
    yield
    await lsp_client.shutdown_session()


async def diagnostics_on_open(client: LanguageClient, path) -> list[str]:
    uri = path.as_uri()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id="python", version=1, text=MAIN)
        )
    )

    async def published():
        while uri not in client.diagnostics:
            await asyncio.sleep(0.02)
        return [str(d.code) for d in client.diagnostics[uri]]

    return await asyncio.wait_for(published(), 30)


@pytest.mark.asyncio
async def test_lsp_indexes_projects_and_a_stray_file_with_its_neighbours(client: LanguageClient, trees):
    assert find_project_root(str(trees["stray"])) is None, "the temporary directory lies inside a project"
    assert await diagnostics_on_open(client, trees["workspace"] / "main.py") == ["WC401"]
    assert await diagnostics_on_open(client, trees["project"] / "main.py") == ["WC401"]
    # Outside any project a file is checked with the scripts beside it, as the CLI and flake8 check it
    # (discovery.ProjectScope: never the tree below its directory, so /x.py does not read all of /).
    assert await diagnostics_on_open(client, trees["stray"] / "main.py") == ["WC401"]
    assert not (trees["stray"] / ".warplint_cache").exists()


# ---------------------------------------------------------------------- 12. --stdin-filename without '-'
def test_stdin_filename_alone_reads_stdin_as_ruff_does(tmp_path, run_cli):
    (tmp_path / "bad.py").write_text(BAD)
    code, out, err = run_cli("--stdin-filename", "pkg/mod.py", "--format", "concise", "-q", stdin=BAD)
    assert code == 1 and out.startswith("pkg/mod.py:2:1: WC501") and out.count("\n") == 1 and err == ""
    code, out, err = run_cli("bad.py", "--stdin-filename", "pkg/mod.py", "--format", "concise", "-q", stdin=BAD)
    assert code == 1 and out.startswith("pkg/mod.py:2:1: WC501") and out.count("\n") == 1
    assert err == "warplint: note: ignoring bad.py in favour of stdin (--stdin-filename)\n"


@pytest.mark.parametrize("stray", [".git", "__init__.py"])
def test_a_script_under_a_home_with_a_marker_is_not_indexed_with_the_whole_home(tmp_path, monkeypatch, stray):
    """A dotfiles repository (``~/.git``) or a stray ``~/__init__.py`` makes no project of the home directory:
    a script in ``~/scratch`` is indexed with the files beside it, not with everything under ``~``."""
    from warplint.config import load_config
    from warplint.discovery import ProjectScope
    from warplint.registry import all_rules

    home = tmp_path / "home"
    (home / "big" / "deep").mkdir(parents=True)
    (home / "scratch").mkdir()
    if stray == ".git":
        (home / ".git").mkdir()
    else:
        (home / "__init__.py").write_text("")
        (home / "scratch" / "__init__.py").write_text("")
    for i in range(5):
        (home / "big" / "deep" / f"m{i}.py").write_text("import warp as wp\n")
    script = home / "scratch" / "a.py"
    script.write_text("import warp as wp\nwp.clear_kernel_cache()\n")
    monkeypatch.setenv("HOME", str(home))
    assert find_project_root(str(script.parent)) is None
    config = load_config(str(script.parent), set(all_rules()))
    indexed = ProjectScope(config).files_for(str(script))
    assert not [p for p in indexed if os.sep + "big" + os.sep in p], indexed
    assert str(script) in indexed


@pytest.mark.parametrize("setting", ["max-file-size = 9223372036854775808", "file-memory = 100000000000000000000",
                                     "file-timeout = 1e300"])
def test_an_oversized_limit_is_a_config_error(tmp_path, run_cli, setting):
    # once an internal error (OverflowError: an index-sized integer), or a timer no platform takes
    (tmp_path / "pyproject.toml").write_text(f"[tool.warplint]\n{setting}\n")
    (tmp_path / "bad.py").write_text(BAD)
    assert_one_error(*run_cli("bad.py", cwd=tmp_path)[::2], "must be at most")

"""Fixes: --fix / --unsafe-fixes / --diff / --show-fixes, byte preservation, JSON and SARIF, the editor.

Each rule with a fix has a before/after pair in tests/fixtures/fixes/CODE/ (a project: every file of
``before/`` is linted together; ``after/`` is what ``--fix --unsafe-fixes`` must leave).
"""

from __future__ import annotations

import difflib
import io
import json
import os
import shutil
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from warplint.cli import main
from warplint.diagnostic import Edit, Fix, Span
from warplint.fixes import apply_fixes

FIXES = Path(__file__).parent / "fixtures" / "fixes"
CODES = sorted(p.name for p in FIXES.iterdir() if p.is_dir())
UNSAFE_ONLY = {"WC301", "WC304", "WC501"}  # every fix of these rules is unsafe
CONFIG = '[tool.warplint]\nextend-select = ["WC304"]\n'


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main([*argv, "--no-cache"], out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def project(tmp_path: Path, code: str) -> Path:
    root = tmp_path / code
    shutil.copytree(FIXES / code / "before", root)
    (root / "pyproject.toml").write_text(CONFIG)
    return root


def files_of(root: Path) -> dict[str, str]:
    return {p.name: p.read_text() for p in sorted(root.glob("*.py"))}


def test_at_least_eight_rules_have_fix_fixtures():
    assert len(CODES) >= 8
    for code in CODES:
        assert files_of(FIXES / code / "before") != files_of(FIXES / code / "after"), code


@pytest.mark.parametrize("code", CODES)
def test_fix_gives_the_expected_text_and_is_idempotent(tmp_path, code):
    root = project(tmp_path, code)
    status, _, err = run(str(root), "--select", code, "--fix", "--unsafe-fixes")
    assert status in (0, 1), err
    assert files_of(root) == files_of(FIXES / code / "after")
    again = files_of(root)
    status, out, _ = run(str(root), "--select", code, "--fix", "--unsafe-fixes", "--show-fixes")
    assert files_of(root) == again
    assert "No fixes applied." in out
    status, out, _ = run(str(root), "--select", code, "--diff", "--unsafe-fixes")
    assert (status, out) == (0, "")


@pytest.mark.parametrize("code", sorted(UNSAFE_ONLY))
def test_unsafe_fixes_need_unsafe_fixes(tmp_path, code):
    root = project(tmp_path, code)
    status, out, _ = run(str(root), "--select", code, "--fix", "--show-fixes")
    assert status == 1  # nothing fixed, the findings remain
    assert files_of(root) == files_of(FIXES / code / "before")
    assert "No fixes applied." in out
    status, out, _ = run(str(root), "--select", code, "--show-fixes")
    assert "unsafe fix" in out and "hidden: see them with --unsafe-fixes" in out
    status, out, _ = run(str(root), "--select", code, "--show-fixes", "--unsafe-fixes")
    assert "(unsafe)" in out


def test_safe_and_unsafe_fixes_of_one_rule(tmp_path):
    root = project(tmp_path, "WC302")
    run(str(root), "--select", "WC302", "--fix")
    text = (root / "app.py").read_text()
    assert '@wp.kernel(module_options={"fast_math": True}, module="unique")  # WC302' in text  # safe: added
    assert '@wp.kernel(module="physics", module_options={})  # WC302' in text  # unsafe: left


def test_diff_prints_what_fix_would_do_and_changes_nothing(tmp_path):
    root = project(tmp_path, "WC104")
    path = root / "app.py"
    before = path.read_text()
    status, out, err = run(str(path), "--select", "WC104", "--diff")
    assert status == 1
    assert path.read_text() == before
    expected = "".join(difflib.unified_diff(before.splitlines(True), (FIXES / "WC104" / "after" / "app.py")
                                            .read_text().splitlines(True), str(path), str(path)))
    assert out == expected
    assert "would fix 6 findings in 1 file" in err
    run(str(path), "--select", "WC104", "--fix")
    assert run(str(path), "--select", "WC104", "--diff")[:2] == (0, "")


def test_fix_exit_codes_follow_ruff(tmp_path):
    path = tmp_path / "app.py"
    (tmp_path / "pyproject.toml").write_text("[tool.warplint]\n")
    path.write_text("import warp as wp\nwp.set_module_options({'max_unrol': 4})\n")
    assert run(str(path), "--fix")[0] == 0  # all fixed
    assert path.read_text() == "import warp as wp\nwp.set_module_options({'max_unroll': 4})\n"
    path.write_text("import warp as wp\nwp.set_module_options({'max_unrol': 4, 'zzz': 1})\n")
    status, out, _ = run(str(path), "--fix", "--format", "concise")
    assert status == 1 and "`zzz` is not a module option" in out and "`max_unrol`" not in out


def test_show_fixes_lists_applied_fixes_per_file(tmp_path):
    root = project(tmp_path, "WC105")
    status, out, _ = run(str(root), "--select", "WC105", "--fix", "--show-fixes", "--format", "concise")
    assert status == 1  # verbose, quiet, fast_math, block_dim have no fix
    assert "Fixed 3 findings:" in out
    assert f"- {root / 'app.py'}:\n    3 x WC105 (unknown-config-name)" in out


def test_fix_that_would_not_parse_is_dropped_with_a_message(tmp_path, monkeypatch):
    from warplint.registry import all_rules

    rule = type(all_rules()["WC105"])

    def broken(name, written, names):  # a fix whose result does not parse
        return Fix("break it", (Edit(written, "("),)) if written is not None else None

    monkeypatch.setattr(rule, "_fix", staticmethod(broken))
    path = tmp_path / "app.py"
    (tmp_path / "pyproject.toml").write_text("[tool.warplint]\n")
    source = "import warp as wp\nwp.config.mode_ = 'release'\n"
    path.write_text(source)
    status, _, err = run(str(path), "--fix")
    assert path.read_text() == source
    assert status == 1
    assert f"dropped the WC105 fix (break it) for {path}: the fixed code would not parse" in err


def test_overlapping_fixes_wait_for_the_next_round():
    text = "abc\n"
    first = Fix("x", (Edit(Span(1, 0, 1, 2), "X"),))
    second = Fix("y", (Edit(Span(1, 1, 1, 3), "Y"),))
    third = Fix("z", (Edit(Span(1, 3, 1, 3), "!"),))
    done = apply_fixes(text, [first, second, third])
    assert (done.text, done.applied, done.deferred) == ("Xc!\n", [0, 2], [1])
    stale = Fix("s", (Edit(Span(1, 0, 1, 1), "Q", expected="z"),))
    assert apply_fixes(text, [stale]).invalid == [0]


def cli(*argv: str, cwd: Path, stdin: bytes | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONIOENCODING": "utf-8"}
    return subprocess.run([sys.executable, "-m", "warplint", *argv, "--no-cache"], cwd=cwd, input=stdin,
                          capture_output=True, env=env, timeout=120)


def test_bytes_are_preserved_through_the_real_cli(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.warplint]\n")
    bom = tmp_path / "bom.py"
    bom.write_bytes(b"\xef\xbb\xbfimport warp as wp\r\n# caf\xc3\xa9\r\nif True:\r\n\twp.set_module_options("
                    b"{'max_unrol': 4})\r\n")
    latin = tmp_path / "latin.py"
    latin.write_bytes(b"# -*- coding: latin-1 -*-\r\nimport warp as wp\r\n# caf\xe9\r\n"
                      b"wp.set_module_options({\"max_unrol\": 4})  # \xe9t\xe9")
    broken = tmp_path / "broken.py"  # not UTF-8 and no coding line: Python refuses it, so do we
    broken.write_bytes(b"import warp as wp\n# caf\xe9\nwp.set_module_options({'max_unrol': 4})\n")
    os.chmod(latin, 0o640)
    before = {p: p.read_bytes() for p in (bom, latin, broken)}
    done = cli(".", "--fix", cwd=tmp_path)
    assert done.returncode == 1, done.stderr  # broken.py stays a finding (WC000)
    assert bom.read_bytes() == before[bom].replace(b"'max_unrol'", b"'max_unroll'")
    assert latin.read_bytes() == before[latin].replace(b'"max_unrol"', b'"max_unroll"')
    assert broken.read_bytes() == before[broken]
    assert stat.S_IMODE(latin.stat().st_mode) == 0o640
    left = {p.name for p in tmp_path.iterdir() if p.name != ".warplint_cache"}
    assert left == {"pyproject.toml", "bom.py", "latin.py", "broken.py"}  # no temporary file left


def test_fix_keeps_hard_links_and_the_owner(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.warplint]\n")
    linked = tmp_path / "linked.py"
    linked.write_bytes(b"import warp as wp\nwp.set_module_options({'max_unrol': 4})\n")
    other_name = tmp_path / "other_name.txt"
    os.link(linked, other_name)
    owned = tmp_path / "owned.py"
    owned.write_bytes(linked.read_bytes())
    given_away = os.getuid() == 0  # only root can give a file to another user; then the fix must keep it
    if given_away:
        os.chown(owned, 4321, 4321)
    inode = linked.stat().st_ino
    done = cli(".", "--fix", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    fixed = b"import warp as wp\nwp.set_module_options({'max_unroll': 4})\n"
    assert linked.read_bytes() == fixed and other_name.read_bytes() == fixed
    assert linked.stat().st_ino == inode and linked.stat().st_nlink == 2  # still one file with two names
    assert owned.read_bytes() == fixed
    if given_away:
        assert (owned.stat().st_uid, owned.stat().st_gid) == (4321, 4321)
    left = {p.name for p in tmp_path.iterdir() if p.name != ".warplint_cache"}
    assert left == {"pyproject.toml", "linked.py", "other_name.txt", "owned.py"}  # no temporary file left


def test_stdin_fix_prints_the_fixed_code(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.warplint]\n")
    source = b"import warp as wp\r\nwp.set_module_options({'fastmath': True, 'zzz': 1})\r\n"
    done = cli("-", "--fix", "--stdin-filename", "app.py", cwd=tmp_path, stdin=source)
    assert done.stdout == source.replace(b"'fastmath'", b"'fast_math'")
    assert done.returncode == 1  # 'zzz' remains, reported on stderr
    assert b"`zzz` is not a module option" in done.stderr


def test_json_and_sarif_carry_the_fix(tmp_path):
    path = tmp_path / "app.py"
    (tmp_path / "pyproject.toml").write_text("[tool.warplint]\n")
    path.write_text("import warp as wp\nwp.set_module_options({'max_unrol': 4})\nwp.force_load()\n")
    _, out, _ = run(str(path), "--format", "json")
    findings = {d["code"]: d for d in json.loads(out)}
    assert findings["WC104"]["fix"] == {
        "applicability": "safe",
        "message": "Replace `max_unrol` with `max_unroll`",
        "edits": [{"location": {"row": 2, "column": 25}, "end_location": {"row": 2, "column": 34},
                   "content": "max_unroll"}],
    }
    assert findings["WC501"]["fix"] is None  # no launch in the project: nothing to list
    _, out, _ = run(str(path), "--format", "sarif")
    result = next(r for r in json.loads(out)["runs"][0]["results"] if r["ruleId"] == "WC104")
    change = result["fixes"][0]["artifactChanges"][0]
    assert change["artifactLocation"]["uri"].endswith("app.py")
    assert change["replacements"] == [{
        "deletedRegion": {"startLine": 2, "startColumn": 25, "endLine": 2, "endColumn": 34},
        "insertedContent": {"text": "max_unroll"},
    }]
    assert result["properties"]["fixApplicability"] == "safe"


def test_fix_and_confirm_do_not_combine(tmp_path):
    status, _, err = run(str(tmp_path), "--fix", "--confirm", "--", sys.executable, "-c", "pass")
    assert status == 2 and "do not combine with --confirm" in err


# ---------------------------------------------------------------------- the editor
pytest_lsp = pytest.importorskip("pytest_lsp")
from lsprotocol import types  # noqa: E402
from pytest_lsp import ClientServerConfig, LanguageClient  # noqa: E402

from tests.test_lsp import apply_edits, open_doc, rng  # noqa: E402

DOC = textwrap.dedent(
    """\
    import warp as wp

    wp.set_module_options({"fastmath": True, "max_unrol": 4})
    wp.config.enable_backwards = False


    @wp.kernel(module="physics", module_options={"fast_math": True})
    def k(x: wp.array(dtype=float)):
        x[0] = 1.0
    """
)


@pytest.fixture
def editor_workspace(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.warplint]\n")
    (tmp_path / "app.py").write_text(DOC)
    return tmp_path


async def _open_session(client: LanguageClient, workspace) -> None:
    await client.initialize_session(
        types.InitializeParams(
            capabilities=types.ClientCapabilities(),
            root_uri=workspace.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=workspace.as_uri(), name="ws")],
        )
    )


@pytest_lsp.fixture(
    config=ClientServerConfig(server_command=[sys.executable, "-m", "warplint", "server", "--debounce", "0.05"])
)
async def editor(lsp_client: LanguageClient, editor_workspace):
    await _open_session(lsp_client, editor_workspace)
    yield
    await lsp_client.shutdown_session()


@pytest.mark.asyncio
async def test_lsp_quick_fixes_and_fix_all(editor: LanguageClient, editor_workspace):
    uri = await open_doc(editor, editor_workspace / "app.py", DOC)
    identifier = types.TextDocumentIdentifier(uri=uri)
    actions = await editor.text_document_code_action_async(types.CodeActionParams(
        text_document=identifier, range=rng(2, 0, 2, 10),
        context=types.CodeActionContext(diagnostics=[], only=[types.CodeActionKind.QuickFix])))
    titles = [a.title for a in actions]
    assert "Replace `fastmath` with `fast_math` (WC104)" in titles
    fix = next(a for a in actions if a.title == "Replace `fastmath` with `fast_math` (WC104)")
    assert fix.is_preferred and fix.kind == types.CodeActionKind.QuickFix
    assert apply_edits(DOC, fix.edit.changes[uri]) == DOC.replace('"fastmath"', '"fast_math"')

    actions = await editor.text_document_code_action_async(types.CodeActionParams(
        text_document=identifier, range=rng(6, 0, 6, 80),
        context=types.CodeActionContext(diagnostics=[], only=[types.CodeActionKind.QuickFix])))
    unsafe = next(a for a in actions if "WC302" in a.title and "noqa" not in a.title)
    assert unsafe.title == 'Replace the module with module="unique" (WC302) (unsafe)' and not unsafe.is_preferred

    actions = await editor.text_document_code_action_async(types.CodeActionParams(
        text_document=identifier, range=rng(0, 0, 0, 0),
        context=types.CodeActionContext(diagnostics=[], only=[types.CodeActionKind.SourceFixAll])))
    assert [a.kind for a in actions] == ["source.fixAll.warplint"]
    assert actions[0].title == "Fix all safe warplint findings (3)"
    fixed = apply_edits(DOC, actions[0].edit.changes[uri])
    assert fixed == (DOC.replace('"fastmath"', '"fast_math"').replace('"max_unrol"', '"max_unroll"')
                     .replace("enable_backwards", "enable_backward"))  # the unsafe WC302 fix is not applied


def test_lsp_fix_all_lints_the_text_it_fixes(tmp_path):
    """The findings last published may be of an older version of the document (an edit within the debounce,
    fix-all on save): their edits must not land on the new text, at the old coordinates."""
    from warplint.lsp import create_server

    (tmp_path / "pyproject.toml").write_text('[tool.warplint]\nwarp-version = "1.16"\n')  # WC503: racy CPU loads
    old = "import warp as wp\nwp.force_load(max_workers=4)\n"
    new = "import warp as wp\npool.start(n_threads_max=16)\nwp.force_load(max_workers=4)\n"  # a line added
    path = str(tmp_path / "app.py")
    (tmp_path / "app.py").write_text(old)
    server = create_server()
    published = server.lint(path, old)
    assert any(d.code == "WC503" and d.fix is not None for d in published)
    fixed, count = server.fix_all(path, new, published)
    assert fixed == new.replace("max_workers=4", "max_workers=0") and count == 1


@pytest_lsp.fixture(
    config=ClientServerConfig(server_command=[sys.executable, "-m", "warplint", "server", "--debounce", "1.5"])
)
async def slow_editor(lsp_client: LanguageClient, editor_workspace):
    await _open_session(lsp_client, editor_workspace)
    yield
    await lsp_client.shutdown_session()


@pytest.mark.asyncio
async def test_lsp_quick_fixes_wait_for_the_findings_of_the_current_text(slow_editor: LanguageClient,
                                                                          editor_workspace):
    """Within the debounce after an edit, the findings last published are of the old text: their quick
    fixes would edit the old coordinates of the new text, so none are offered until the new ones arrive."""
    from tests.test_lsp import change, wait_diagnostics

    uri = await open_doc(slow_editor, editor_workspace / "app.py", DOC)
    identifier = types.TextDocumentIdentifier(uri=uri)
    quick = types.CodeActionContext(diagnostics=[], only=[types.CodeActionKind.QuickFix])
    change(slow_editor, uri, 2, types.TextDocumentContentChangePartial(range=rng(0, 0, 0, 0), text="# top\n"))
    stale = await slow_editor.text_document_code_action_async(
        types.CodeActionParams(text_document=identifier, range=rng(2, 0, 2, 10), context=quick))
    assert not [a for a in stale if "fastmath" in a.title], [a.title for a in stale]
    await wait_diagnostics(slow_editor, uri)
    fresh = await slow_editor.text_document_code_action_async(
        types.CodeActionParams(text_document=identifier, range=rng(3, 0, 3, 10), context=quick))
    fix = next(a for a in fresh if a.title == "Replace `fastmath` with `fast_math` (WC104)")
    new_text = "# top\n" + DOC
    assert apply_edits(new_text, fix.edit.changes[uri]) == new_text.replace('"fastmath"', '"fast_math"')

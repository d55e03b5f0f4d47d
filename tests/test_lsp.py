"""`warplint server` driven by a real LSP client over stdio (pytest-lsp)."""

from __future__ import annotations

import asyncio
import io
import json
import sys
import textwrap

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

from warplint.registry import all_rules
from warplint.testing import split_example

BAD = textwrap.dedent(
    """\
    import warp as wp

    wp.force_load()
    wp.force_load(device="cpu")  # noqa: E501
    """
)
TIMEOUT = 20


@pytest.fixture
def workspace(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.warplint]\nrule-url = "https://example.org/warplint/{code}.html"\n')
    (tmp_path / "app.py").write_text(BAD)
    return tmp_path


@pytest_lsp.fixture(
    config=ClientServerConfig(server_command=[sys.executable, "-m", "warplint", "server", "--debounce", "0.05"])
)
async def client(lsp_client: LanguageClient, workspace):
    lsp_client.registrations = []

    @lsp_client.feature(types.CLIENT_REGISTER_CAPABILITY)
    def register_capability(params: types.RegistrationParams):
        lsp_client.registrations.extend(params.registrations)

    await lsp_client.initialize_session(
        types.InitializeParams(
            capabilities=types.ClientCapabilities(
                workspace=types.WorkspaceClientCapabilities(
                    did_change_watched_files=types.DidChangeWatchedFilesClientCapabilities(dynamic_registration=True)
                ),
                text_document=types.TextDocumentClientCapabilities(
                    publish_diagnostics=types.PublishDiagnosticsClientCapabilities(version_support=True)
                ),
            ),
            root_uri=workspace.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=workspace.as_uri(), name="ws")],
        )
    )
    yield
    await lsp_client.shutdown_session()
    # exit after shutdown: the server process ends by itself with status 0
    assert lsp_client._server.returncode == 0


async def open_doc(client: LanguageClient, path, text: str, version: int = 1) -> str:
    uri = path.as_uri()
    client.diagnostics.pop(uri, None)
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id="python", version=version, text=text)
        )
    )
    await wait_diagnostics(client, uri)
    return uri


async def wait_diagnostics(client: LanguageClient, uri: str) -> list:
    """Wait until diagnostics for ``uri`` arrive (callers pop ``client.diagnostics[uri]`` before
    the message that should trigger them; the server only publishes for the current version)."""

    async def until():
        while uri not in client.diagnostics:
            await asyncio.sleep(0.02)
        return list(client.diagnostics[uri])

    return await asyncio.wait_for(until(), TIMEOUT)


def change(client: LanguageClient, uri: str, version: int, *changes) -> None:
    client.diagnostics.pop(uri, None)
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=list(changes),
        )
    )


def rng(line, col, end_line, end_col):
    return types.Range(types.Position(line, col), types.Position(end_line, end_col))


def apply_edits(text: str, edits) -> str:
    """Apply LSP TextEdits (UTF-16 positions; ASCII text here) to ``text``."""
    lines = text.splitlines(True)

    def offset(pos):
        return sum(len(line) for line in lines[: pos.line]) + pos.character

    for edit in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
        text = text[: offset(edit.range.start)] + edit.new_text + text[offset(edit.range.end) :]
    return text


def cli_json(*argv) -> list[dict]:
    from warplint.cli import main

    out, err = io.StringIO(), io.StringIO()
    main(["--format", "json", "--no-cache", *argv], out=out, err=err)
    return json.loads(out.getvalue())


@pytest.mark.asyncio
async def test_open_publishes_cli_diagnostics_with_ranges(client: LanguageClient, workspace):
    uri = await open_doc(client, workspace / "app.py", BAD)
    diagnostics = client.diagnostics[uri]
    assert [(d.code, d.range) for d in diagnostics] == [
        ("WC501", rng(2, 0, 2, 15)),
        ("WC501", rng(3, 0, 3, 27)),
    ]
    first = diagnostics[0]
    assert first.source == "warplint"
    assert first.code_description.href == "https://example.org/warplint/WC501.html"  # the project's rule-url
    assert first.severity == types.DiagnosticSeverity.Warning  # WC501 is high confidence
    assert first.message.startswith("`force_load()` without `modules=`")
    # the same findings, positions and messages as the CLI
    expected = cli_json(str(workspace / "app.py"))
    assert [(d.code, d.range.start.line + 1, d.range.start.character + 1, d.message) for d in diagnostics] == [
        (e["code"], e["line"], e["column"], e["message"]) for e in expected
    ]


@pytest.mark.asyncio
async def test_change_updates_diagnostics(client: LanguageClient, workspace):
    uri = await open_doc(client, workspace / "app.py", BAD)
    # insert two lines above the first finding: it moves down (incremental sync)
    change(client, uri, 2, types.TextDocumentContentChangePartial(range=rng(1, 0, 1, 0), text="x = 1\ny = 2\n"))
    diagnostics = await wait_diagnostics(client, uri)
    assert [(d.code, d.range) for d in diagnostics] == [("WC501", rng(4, 0, 4, 15)), ("WC501", rng(5, 0, 5, 27))]
    # fix the code: the findings go away
    change(
        client, uri, 3,
        types.TextDocumentContentChangeWholeDocument(
            text="import warp as wp\nwp.force_load(modules=[wp.get_module('k')])\n"
        ),
    )
    assert await wait_diagnostics(client, uri) == []


@pytest.mark.asyncio
async def test_noqa_code_actions_apply_and_silence(client: LanguageClient, workspace):
    uri = await open_doc(client, workspace / "app.py", BAD)
    diagnostics = client.diagnostics[uri]
    text = BAD
    results = []
    for d in diagnostics:
        actions = await client.text_document_code_action_async(
            types.CodeActionParams(
                text_document=types.TextDocumentIdentifier(uri=uri),
                range=d.range,
                context=types.CodeActionContext(diagnostics=[d]),
            )
        )
        noqa = [a for a in actions if "noqa" in a.title]
        assert len(noqa) == 1 and noqa[0].kind == types.CodeActionKind.QuickFix
        assert noqa[0].title == "Suppress WC501 on this line with `# noqa: WC501`"
        results.append(apply_edits(text, noqa[0].edit.changes[uri]))
    # appended to a line without noqa; added to an existing noqa list
    assert results[0].splitlines()[2] == "wp.force_load()  # noqa: WC501"
    assert results[1].splitlines()[3] == 'wp.force_load(device="cpu")  # noqa: E501, WC501'
    # the edited text is clean
    actions = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri), range=diagnostics[1].range,
            context=types.CodeActionContext(diagnostics=[diagnostics[1]]),
        )
    )
    both = apply_edits(results[0], next(a for a in actions if "noqa" in a.title).edit.changes[uri])
    change(client, uri, 2, types.TextDocumentContentChangeWholeDocument(text=both))
    assert await wait_diagnostics(client, uri) == []


@pytest.mark.asyncio
async def test_rule_examples_match_cli_and_code_actions_apply(client: LanguageClient, workspace):
    """Every rule's single-file INVALID example: the server reports what the CLI reports, each
    finding's noqa action silences it, and where the rule offers a fix, the fix action's edits are
    the CLI's fix edits."""
    (workspace / "pyproject.toml").write_text('[tool.warplint]\nselect = ["ALL"]\n')
    version = 0
    checked = 0
    for rule in all_rules().values():
        for example in rule.invalid:
            files = split_example(example)
            if len(files) != 1:
                continue
            version += 1
            path = workspace / f"example_{rule.code}_{version}.py"
            path.write_text(example)
            expected = cli_json(str(path))
            uri = await open_doc(client, path, example, version)
            got = client.diagnostics[uri]
            assert [(d.code, d.range.start.line + 1, d.range.start.character + 1, d.message) for d in got] == [
                (e["code"], e["line"], e["column"], e["message"]) for e in expected
            ], rule.code
            severity = {"high": "Warning", "medium": "Information", "low": "Hint"}
            assert [d.severity.name for d in got] == [severity[e["confidence"]] for e in expected]
            assert all((d.code_description and d.code_description.href) == e["url"] is None
                       for d, e in zip(got, expected, strict=True))  # no rule-url here: no link anywhere
            for d, e in zip(got, expected, strict=True):
                actions = await client.text_document_code_action_async(
                    types.CodeActionParams(
                        text_document=types.TextDocumentIdentifier(uri=uri),
                        range=d.range,
                        context=types.CodeActionContext(diagnostics=[d]),
                    )
                )
                mine = [a for a in actions if a.diagnostics and a.diagnostics[0].range == d.range]
                fixes = [a for a in mine if a.kind == types.CodeActionKind.QuickFix
                         and not a.title.startswith("Suppress")]
                if e["fix"] is None:
                    assert fixes == []
                else:
                    edits = fixes[0].edit.changes[uri]
                    assert [
                        (x.range.start.line + 1, x.range.start.character + 1, x.range.end.line + 1,
                         x.range.end.character + 1, x.new_text) for x in edits
                    ] == [(y["location"]["row"], y["location"]["column"], y["end_location"]["row"],
                           y["end_location"]["column"], y["content"]) for y in e["fix"]["edits"]]
                noqa = [a for a in mine if a.title.startswith("Suppress")]
                silenced = apply_edits(example, noqa[0].edit.changes[uri])
                path.write_text(silenced)
                assert [x for x in cli_json(str(path)) if x["code"] == d.code and x["line"] == e["line"]] == []
                path.write_text(example)
                checked += 1
            client.text_document_did_close(
                types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
            )
    assert checked >= 2


@pytest.mark.asyncio
async def test_pyproject_is_read_and_reread(client: LanguageClient, workspace):
    pyproject = workspace / "pyproject.toml"
    pyproject.write_text('[tool.warplint]\nignore = ["WC501"]\n')
    uri = await open_doc(client, workspace / "app.py", BAD)
    assert list(client.diagnostics[uri]) == []
    # the client's file watcher reports the change: re-read, re-check open files
    pyproject.write_text("[tool.warplint]\n")
    # the server asked the client to watch pyproject.toml files
    assert [(r.method, r.register_options["watchers"]) for r in client.registrations] == [
        (types.WORKSPACE_DID_CHANGE_WATCHED_FILES, [{"globPattern": "**/pyproject.toml"}])
    ]
    client.diagnostics.pop(uri)
    client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(
            changes=[types.FileEvent(uri=pyproject.as_uri(), type=types.FileChangeType.Changed)]
        )
    )
    assert [d.code for d in await wait_diagnostics(client, uri)] == ["WC501", "WC501"]
    # saving pyproject.toml in the editor does the same
    pyproject.write_text('[tool.warplint]\nignore = ["WC5"]\n')
    client.diagnostics.pop(uri)
    client.text_document_did_save(types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=pyproject.as_uri())))
    assert await wait_diagnostics(client, uri) == []


@pytest.mark.asyncio
async def test_config_error_is_a_message_not_a_crash(client: LanguageClient, workspace):
    (workspace / "pyproject.toml").write_text('[tool.warplint]\nselect = ["XX9"]\n')
    uri = await open_doc(client, workspace / "app.py", BAD)
    # still linting (default rules), and the user is told why their config is not used
    assert [d.code for d in client.diagnostics[uri]] == ["WC501", "WC501"]
    errors = [m for m in client.messages if m.type == types.MessageType.Error]
    assert len(errors) == 1 and "unknown rule selector 'XX9'" in errors[0].message


@pytest.mark.asyncio
async def test_related_locations_become_related_information(client: LanguageClient, workspace):
    text = (
        "import warp as wp\n\n@wp.kernel\ndef a(x: wp.array(dtype=float)):\n    x[0] = 1.0\n\n"
        "@wp.kernel\ndef b(x: wp.array(dtype=float)):\n    x[0] = 2.0\n\n"
        "def go(k, x, threads=256):\n    wp.launch(k, dim=1, inputs=[x], block_dim=threads)\n\n"
        "def run(x):\n    go(a, x)\n    go(b, x, 128)\n"
    )
    (workspace / "blocks.py").write_text(text)
    uri = await open_doc(client, workspace / "blocks.py", text)
    (finding,) = [d for d in client.diagnostics[uri] if d.code == "WC303"]
    assert finding.range.start.line == 15  # the call of the wrapper that passes 128
    related = finding.related_information
    assert [(r.location.uri, r.location.range.start.line, r.message) for r in related] == [
        (uri, 14, "`a` launched at block_dim 256"), (uri, 11, "the launch inside the wrapper"),
        (uri, 15, "module `blocks` is launched at block_dim 128, 256: on CUDA the whole module compiles once per "
                  "block_dim; give the kernels that need another block size their own module")]

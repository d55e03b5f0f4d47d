"""One answer everywhere, for every rule's fixture (issue 30 item 3): each fixture file gets the same
findings linted as part of its directory, named alone on the command line, piped on stdin with
``--stdin-filename``, through flake8 (a real subprocess) and through the language server (a real
client over stdio), each cold (no result cache) and warm (the cache filled by an earlier run).

Every fixture is copied into a project of its own (a directory with a ``pyproject.toml`` that selects
every rule), so each front end finds the same config and the same project for it. The runs are
batched to keep the test fit for a CI machine of two cores: one directory run over all projects, one
process that calls the CLI for every file in turn, one flake8 run over every file, one editor session
that opens every file.
"""

from __future__ import annotations

import asyncio
import glob
import json
import os
import shutil
import subprocess
import sys

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures")
TIMEOUT = 300
Finding = tuple[int, int, str, str]  # line, 1-based column, code, message


def rule_fixtures() -> list[str]:
    """Every rule's fixture: tests/fixtures/WCnnn*.py files and WCnnn*/ directories."""
    return sorted(glob.glob(os.path.join(FIXTURES, "WC[0-9][0-9][0-9]*")))


@pytest.fixture(scope="module", params=["projects", "loose"])
def projects(request, tmp_path_factory) -> dict[str, str]:
    """The fixtures copied under one tree; the relative path of every fixture file -> its text.

    ``projects``: each fixture in a project directory of its own, whose ``pyproject.toml`` selects every rule.
    ``loose``: as the repository holds them, with no config (the default rules): the single-file fixtures
    side by side are loose scripts indexed together, each directory a package or a folder of scripts."""
    tree = tmp_path_factory.mktemp(request.param)
    for fixture in rule_fixtures():
        name = os.path.basename(fixture)
        if request.param == "loose":
            (shutil.copytree if os.path.isdir(fixture) else shutil.copy)(fixture, tree / name)
            continue
        project = tree / name.removesuffix(".py")
        if os.path.isdir(fixture):
            shutil.copytree(fixture, project)
        else:
            project.mkdir()
            shutil.copy(fixture, project / name)
        (project / "pyproject.toml").write_text('[tool.warplint]\nselect = ["ALL"]\n')
    texts = {"__root__": str(tree)}
    for path in sorted(glob.glob(str(tree / "**" / "*.py"), recursive=True)):
        with open(path, encoding="utf-8") as fh:
            texts[os.path.relpath(path, tree)] = fh.read()
    return texts


def _root(projects: dict[str, str]) -> str:
    return projects["__root__"]


def _files(projects: dict[str, str]) -> dict[str, str]:
    return {name: text for name, text in projects.items() if name != "__root__"}


def by_file(entries: list[dict], root: str, names) -> dict[str, list[Finding]]:
    got: dict[str, list[Finding]] = {name: [] for name in names}
    for e in entries:
        name = os.path.relpath(os.path.join(root, e["path"]), root)
        got.setdefault(name, []).append((e["line"], e["column"], e["code"], e["message"]))
    return {name: sorted(found) for name, found in got.items()}


def directory_runs(root: str, names, *flags: str) -> list[tuple[str, dict[str, list[Finding]]]]:
    """(what was named, the findings of each file under it): the whole tree, then each directory in it, as
    a user would type ``warplint .`` or ``warplint WC101``."""
    directories = sorted(d for d in os.listdir(root) if os.path.isdir(os.path.join(root, d)))
    results = cli_batch(root, [[*flags, directory] for directory in [".", *directories]])
    return [(directory, by_file(result, root, [n for n in names if directory in (".", n.split(os.sep)[0])]))
            for directory, result in zip([".", *directories], results, strict=True)]


def directory_differences(reference: dict, runs) -> dict:
    return {directory: found for directory, run in runs if (found := differences(reference, run))}


# Calls warplint's CLI (``warplint.cli.main``) once per job in one interpreter, each with its own
# arguments and stdin: the real command line without the start-up of a process per file.
DRIVER = r"""
import io, json, sys
from warplint.cli import main
jobs = json.load(sys.stdin)
results = []
for argv, stdin in jobs:
    out, err = io.StringIO(), io.StringIO()
    sys.stdin = io.StringIO(stdin or "")
    code = main(["--format", "json", *argv], out, err)
    if code not in (0, 1):
        raise SystemExit(f"warplint {argv}: exit {code}: {err.getvalue()}")
    results.append(json.loads(out.getvalue()))
json.dump(results, sys.__stdout__)
"""


def cli_batch(cwd: str, jobs: list) -> list[list[dict]]:
    jobs = [job if isinstance(job, tuple) else (job, None) for job in jobs]
    result = subprocess.run([sys.executable, "-c", DRIVER], cwd=cwd, input=json.dumps(jobs),
                            capture_output=True, text=True, timeout=TIMEOUT)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def alone_runs(root: str, names, *flags: str) -> dict[str, list[Finding]]:
    results = cli_batch(root, [[*flags, name] for name in names])
    return {name: by_file(result, root, [name]).get(name, []) for name, result in zip(names, results, strict=True)}


def stdin_runs(root: str, files: dict[str, str], *flags: str) -> dict[str, list[Finding]]:
    names = list(files)
    results = cli_batch(root, [([*flags, "--stdin-filename", name, "-"], files[name]) for name in names])
    return {name: by_file(result, root, [name]).get(name, []) for name, result in zip(names, results, strict=True)}


def flake8_run(root: str, names) -> dict[str, list[Finding]]:
    result = subprocess.run([sys.executable, "-m", "flake8", "--select", "WC", *names],
                            cwd=root, capture_output=True, text=True, timeout=TIMEOUT)
    assert result.stderr == "", result.stderr
    got: dict[str, list[Finding]] = {name: [] for name in names}
    for line in result.stdout.splitlines():
        path, row, col, rest = line.split(":", 3)
        code, message = rest.strip().split(" ", 1)
        got[os.path.normpath(path)].append((int(row), int(col), code, message))
    return {name: sorted(found) for name, found in got.items()}


def differences(expected: dict, got: dict) -> dict:
    """Where ``got`` (findings of some files) says otherwise than ``expected`` (of all)."""
    return {name: {"expected": expected[name], "got": found} for name, found in got.items()
            if found != expected.get(name)}


@pytest.fixture(scope="module")
def reference(projects) -> dict[str, list[Finding]]:
    """What each project says about its files as a directory, cold (no result cache)."""
    files = _files(projects)
    runs = directory_runs(_root(projects), files, "--no-cache")
    found = runs[0][1]
    assert set(found) == set(files), "findings outside the fixture files"
    assert directory_differences(found, runs) == {}, "each directory alone, cold"
    # the fixtures mean something: most rules report in them
    assert len({code for findings in found.values() for _, _, code, _ in findings}) >= 20
    return found


def test_cli_alone_stdin_and_directory_agree_cold_and_warm(projects, reference):
    root, files = _root(projects), _files(projects)
    names = list(files)
    assert differences(reference, alone_runs(root, names, "--no-cache")) == {}, "alone, cold"
    assert differences(reference, stdin_runs(root, files, "--no-cache")) == {}, "stdin, cold"
    # the cache filled file by file (each alone), then read by the directory runs and the other front ends
    assert differences(reference, alone_runs(root, names)) == {}, "alone, filling the cache"
    assert directory_differences(reference, directory_runs(root, names)) == {}, "directories, warm"
    assert differences(reference, alone_runs(root, names)) == {}, "alone, warm"
    assert differences(reference, stdin_runs(root, files)) == {}, "stdin, warm"


def test_flake8_agrees_cold_and_warm(projects, reference, tmp_path):
    root, files = _root(projects), _files(projects)
    for cache in glob.glob(os.path.join(root, "**", ".warplint_cache"), recursive=True):
        shutil.rmtree(cache)
    assert differences(reference, flake8_run(root, list(files))) == {}, "flake8, cold"
    assert differences(reference, flake8_run(root, list(files))) == {}, "flake8, warm"


@pytest_lsp.fixture(
    config=ClientServerConfig(server_command=[sys.executable, "-m", "warplint", "server", "--debounce", "0.05"])
)
async def client(lsp_client: LanguageClient, projects):
    root = _root(projects)
    await lsp_client.initialize_session(
        types.InitializeParams(
            capabilities=types.ClientCapabilities(
                text_document=types.TextDocumentClientCapabilities(
                    publish_diagnostics=types.PublishDiagnosticsClientCapabilities(version_support=True)
                ),
            ),
            root_uri=f"file://{root}",
            workspace_folders=[types.WorkspaceFolder(uri=f"file://{root}", name="fixtures")],
        )
    )
    yield
    await lsp_client.shutdown_session()


def lsp_found(diagnostics) -> list[Finding]:
    return sorted((d.range.start.line + 1, d.range.start.character + 1, str(d.code), d.message) for d in diagnostics)


async def published(client: LanguageClient, uris: dict[str, str], expected: dict) -> dict[str, list[Finding]]:
    """The diagnostics published for every file once each equals what is expected (a server may publish
    a file's own findings first), or the last ones published after the time allowed."""
    async def until():
        while any(lsp_found(client.diagnostics.get(uri, [])) != expected[name] or uri not in client.diagnostics
                  for name, uri in uris.items()):
            await asyncio.sleep(0.05)

    try:
        await asyncio.wait_for(until(), TIMEOUT)
    except TimeoutError:
        pass
    return {name: lsp_found(client.diagnostics.get(uri, [])) for name, uri in uris.items()}


@pytest.mark.asyncio
async def test_editor_agrees_cold(client: LanguageClient, projects, reference):
    root, files = _root(projects), _files(projects)
    for cache in glob.glob(os.path.join(root, "**", ".warplint_cache"), recursive=True):
        shutil.rmtree(cache)
    uris = {}
    for name, text in files.items():
        uri = uris[name] = f"file://{os.path.join(root, name)}"
        client.text_document_did_open(types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id="python", version=1, text=text)))
    assert differences(reference, await published(client, uris, reference)) == {}


@pytest.mark.asyncio
async def test_editor_agrees_warm(client: LanguageClient, projects, reference):
    root, files = _root(projects), _files(projects)
    assert directory_differences(reference, directory_runs(root, files)) == {}  # fills the result cache
    uris = {}
    for name, text in files.items():
        uri = uris[name] = f"file://{os.path.join(root, name)}"
        client.text_document_did_open(types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id="python", version=1, text=text)))
    assert differences(reference, await published(client, uris, reference)) == {}

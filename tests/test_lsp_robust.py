"""The editor server under what editors and projects send it (issue 29, items 4, 5, 7; issue 30, item 1):
documents modelled in worker processes started from the server's threads (a line over 4,000 characters, a
project of a few hundred files), a document over max-file-size, badly framed messages, and the
shutdown/exit sequence. Through a real client over stdio (pytest-lsp), or raw bytes where a client would
never send them; every wait has a timeout."""

from __future__ import annotations

import asyncio
import json
import os
import select
import subprocess
import sys
import time

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

from warplint import engine

SERVER = [sys.executable, "-m", "warplint", "server", "--debounce", "0.05"]
FORCE_LOAD = "import warp as wp\n\nwp.force_load()\n"
APP = "import warp as wp\nimport kernels_lib\n\nwp.config.enable_backward = False\n"  # WC401 needs kernels_lib's kernel
KERNELS = "import warp as wp\n\n\n@wp.kernel\ndef k(a: wp.array(dtype=float)):\n    a[0] = 1.0\n"
FILES = 200
PADDING = "# " + "padding " * 30 + "\n"


@pytest.fixture
def workspace(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.warplint]\nmax-file-size = 100000\n")
    (tmp_path / "app.py").write_text(APP)
    (tmp_path / "kernels_lib.py").write_text(KERNELS)
    # enough text that the index is modelled in parallel, in workers the server's threads start
    per_file = engine.PARALLEL_MIN_CHARS // FILES + 1
    for i in range(FILES):
        (tmp_path / f"mod{i:03}.py").write_text(FORCE_LOAD + PADDING * (per_file // len(PADDING) + 1))
    return tmp_path


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER))
async def client(lsp_client: LanguageClient, workspace):
    await lsp_client.initialize_session(
        types.InitializeParams(capabilities=types.ClientCapabilities(), root_uri=workspace.as_uri(),
                               workspace_folders=[types.WorkspaceFolder(uri=workspace.as_uri(), name="ws")]))
    yield
    if not lsp_client.stopped:  # a test that shut it down itself looks at what it left
        await lsp_client.shutdown_session()


async def diagnostics_once(client: LanguageClient, path, text: str, until, timeout: float = 240) -> list:
    """Open ``path`` with ``text``; the diagnostics published for it once ``until(codes)`` holds."""
    uri = path.as_uri()
    client.text_document_did_open(types.DidOpenTextDocumentParams(
        text_document=types.TextDocumentItem(uri=uri, language_id="python", version=1, text=text)))

    async def wait():
        while True:
            found = client.diagnostics.get(uri)
            if found is not None and until([d.code for d in found]):
                return list(found)
            await asyncio.sleep(0.05)

    return await asyncio.wait_for(wait(), timeout)


def cli_findings(root, *extra: str) -> list[str]:
    run = subprocess.run([sys.executable, "-m", "warplint", ".", "--format", "concise", *extra], cwd=root,
                         capture_output=True, text=True, timeout=300)
    return sorted(line for line in run.stdout.splitlines() if " WC" in line)


@pytest.mark.asyncio
async def test_a_project_of_hundreds_of_files_is_indexed_and_cached_right(client: LanguageClient, workspace):
    found = await diagnostics_once(client, workspace / "app.py", APP, lambda codes: "WC401" in codes)
    assert [d.code for d in found] == ["WC401"]  # from kernels_lib's model, made in a worker
    await client.shutdown_session()
    # what the server cached is what a cold run finds: no "not checked" for any file
    cached = cli_findings(workspace)
    assert not [line for line in cached if " WC000 " in line], cached[:3]
    assert cached == cli_findings(workspace, "--no-cache")


@pytest.mark.asyncio
async def test_a_line_over_4000_characters_is_modelled(client: LanguageClient, workspace):
    long_line = "TABLE = [" + ", ".join(["1.0"] * 1500) + "]\n"
    assert len(long_line) > engine.IN_PROCESS_MAX_LINE
    found = await diagnostics_once(client, workspace / "mod000.py", FORCE_LOAD + long_line,
                                   bool)
    assert [d.code for d in found] == ["WC501"], [d.message for d in found]


@pytest.mark.asyncio
async def test_a_document_over_max_file_size_gets_the_clis_note(client: LanguageClient, workspace):
    big = FORCE_LOAD + PADDING * (120_000 // len(PADDING))
    found = await diagnostics_once(client, workspace / "mod001.py", big, bool)
    assert [d.code for d in found] == ["WC000"] and "over the max-file-size" in found[0].message, found[0].message


# ---------------------------------------------------------------------- raw bytes: framing and the exit sequence
def frame(message: dict, length: object = None) -> bytes:
    body = json.dumps(message).encode()
    return f"Content-Length: {len(body) if length is None else length}\r\n\r\n".encode() + body


def request(request_id: int | None, method: str, params: dict | None = None) -> dict:
    message: dict = {"jsonrpc": "2.0", "method": method, "params": params or {}}
    if request_id is not None:
        message["id"] = request_id
    return message


INITIALIZE = request(1, "initialize", {"capabilities": {}, "processId": None, "rootUri": None})
HOVER = {"textDocument": {"uri": "file:///nowhere/x.py"}, "position": {"line": 0, "character": 0}}


class RawClient:
    def __init__(self, cwd) -> None:
        self.process = subprocess.Popen(SERVER, cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.DEVNULL)
        self.buffer = b""

    def send(self, data: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(data)
        self.process.stdin.flush()

    def answer(self, request_id: object, timeout: float = 30) -> dict:
        """The response to ``request_id`` (None: an error without an id), skipping notifications."""
        assert self.process.stdout is not None
        deadline = time.monotonic() + timeout
        while True:
            while b"\r\n\r\n" in self.buffer:
                head, rest = self.buffer.split(b"\r\n\r\n", 1)
                length = int(next(line for line in head.split(b"\r\n") if line.startswith(b"Content-Length"))
                             .split(b":")[1])
                if len(rest) < length:
                    break
                message, self.buffer = json.loads(rest[:length]), rest[length:]
                if "method" not in message and message.get("id") == request_id:
                    return message
            left = deadline - time.monotonic()
            assert left > 0, f"no answer to {request_id!r}"
            ready, _, _ = select.select([self.process.stdout], [], [], left)
            if ready:
                data = os.read(self.process.stdout.fileno(), 65536)
                assert data, "the server closed its output"
                self.buffer += data

    def close(self) -> int:
        try:
            return self.process.wait(timeout=30)
        finally:
            if self.process.poll() is None:
                self.process.kill()


@pytest.fixture
def raw(tmp_path):
    client = RawClient(tmp_path)
    client.send(frame(INITIALIZE))
    assert "result" in client.answer(1)
    client.send(frame(request(None, "initialized")))
    yield client
    if client.process.poll() is None:
        client.process.kill()


@pytest.mark.parametrize("bad", [
    frame(request(7, "shutdown"), length="abc"),
    frame(request(7, "shutdown"), length=-5),
    json.dumps(request(7, "shutdown")).encode(),  # no header at all
    b"Content-Length 12\r\n\r\n" + json.dumps(request(7, "shutdown")).encode(),  # not a header line
], ids=["letters", "negative", "missing", "no-colon"])
def test_a_badly_framed_message_is_answered_and_the_next_one_served(raw, bad):
    raw.send(bad + frame(request(2, "textDocument/hover", HOVER)))
    error = raw.answer(None)
    assert error["error"]["code"] == -32700  # parse error, its id unknown
    served = raw.answer(2)
    assert served["error"]["code"] == -32601  # served: warplint has no hover (method not found)
    raw.send(frame(request(3, "shutdown")))
    assert raw.answer(3)["result"] is None  # the shutdown inside the bad message was not run


def test_invalid_json_and_invalid_requests_get_their_errors(raw):
    raw.send(frame(request(2, "x"), length=None).replace(b'"jsonrpc"', b'"jsonrpc\\'))  # not JSON
    assert raw.answer(None)["error"]["code"] == -32700
    raw.send(frame({"jsonrpc": "2.0", "id": 5}))  # neither a request nor a response
    assert raw.answer(5)["error"]["code"] == -32600


def test_after_shutdown_a_request_is_invalid_and_exit_ends_with_0(raw):
    raw.send(frame(request(2, "shutdown")))
    assert raw.answer(2)["result"] is None
    raw.send(frame(request(3, "textDocument/hover", HOVER)))
    assert raw.answer(3)["error"]["code"] == -32600  # InvalidRequest, not silence
    raw.send(frame(request(None, "exit")))
    assert raw.close() == 0


def test_exit_without_shutdown_ends_with_1(raw):
    raw.send(frame(request(None, "exit")))
    assert raw.close() == 1

#!/usr/bin/env python3
"""How long the editor waits for warplint's diagnostics after an edit (issue 28), with a real LSP client.

    python benchmarks/lsp_change.py ROOT FILE [--changes 3] [--debounce 0.3] [--edit assignment|comment]

Starts ``warplint server`` over stdio (the interpreter running this script, so ``PYTHONPATH`` picks the
warplint measured), opens FILE (its project is indexed; not timed), then edits it ``--changes`` times
(``didChange``: a module-level assignment appended, so its model changes; ``--edit comment``: a comment typed at
the end of the file's first import line, which leaves its model as it was) and times each edit from the
``didChange`` to the ``publishDiagnostics`` for that document version, the server's debounce included.
Prints one line per edit and ``latency: MEDIAN`` (seconds) last; benchmarks/run.py reads that line.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from queue import Empty, Queue
from typing import Any


class Client:
    """A minimal LSP client: framed JSON-RPC over the server's stdin/stdout, notifications queued."""

    def __init__(self, command: list[str], cwd: str) -> None:
        self.errors = tempfile.TemporaryFile()  # noqa: SIM115 - the server's stderr, kept as long as it runs
        self.process = subprocess.Popen(command, cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=self.errors)
        self.messages: Queue[dict] = Queue()
        self.next_id = 0
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        stream = self.process.stdout
        assert stream is not None
        while True:
            length = None
            while True:
                line = stream.readline()
                if not line:
                    return
                if line in (b"\r\n", b"\n"):
                    break
                name, _, value = line.decode("ascii").partition(":")
                if name.lower() == "content-length":
                    length = int(value)
            if length is None:
                continue
            self.messages.put(json.loads(stream.read(length)))

    def send(self, message: dict) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode()
        stdin = self.process.stdin
        assert stdin is not None
        stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        stdin.flush()

    def request(self, method: str, params: Any, timeout: float = 600) -> Any:
        self.next_id += 1
        ident = self.next_id
        self.send({"id": ident, "method": method, "params": params})
        return self.wait(lambda m: m.get("id") == ident and "method" not in m, timeout).get("result")

    def notify(self, method: str, params: Any) -> None:
        self.send({"method": method, "params": params})

    def wait(self, accept, timeout: float) -> dict:
        end = time.monotonic() + timeout
        while True:
            try:
                message = self.messages.get(timeout=min(1.0, max(0.0, end - time.monotonic())))
            except Empty:
                if self.process.poll() is not None:  # the server is gone: say why instead of waiting out the hour
                    self.errors.seek(0)
                    tail = self.errors.read().decode(errors="replace").strip().splitlines()[-3:]
                    raise SystemExit(f"lsp_change: the server exited ({self.process.returncode}): "
                                     + " | ".join(tail)) from None
                if time.monotonic() >= end:
                    raise SystemExit("lsp_change: no answer from the server in time") from None
                continue
            if message.get("method") == "window/logMessage" and (message.get("params") or {}).get("type") == 1:
                self.errors.seek(0)
                sys.stderr.write(self.errors.read().decode(errors="replace")[-4000:])
                raise SystemExit(f"lsp_change: the server failed: {message['params'].get('message')}")
            if "method" in message and "id" in message:  # a request from the server (progress tokens): accept
                self.send({"id": message["id"], "result": None})
            if accept(message):
                return message

    def close(self) -> None:
        try:
            self.request("shutdown", None, timeout=30)
            self.notify("exit", None)
            self.process.wait(timeout=30)
        except (SystemExit, subprocess.TimeoutExpired, BrokenPipeError):
            self.process.kill()


def published(uri: str, version: int):
    def accept(message: dict) -> bool:
        params = message.get("params") or {}
        return (message.get("method") == "textDocument/publishDiagnostics" and params.get("uri") == uri
                and params.get("version") == version)
    return accept


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root")
    parser.add_argument("file")
    parser.add_argument("--changes", type=int, default=3)
    parser.add_argument("--debounce", type=float, default=None, help="the server's (default: its own, 0.3 s)")
    parser.add_argument("--edit", choices=("assignment", "comment"), default="assignment")
    args = parser.parse_args(argv)
    root, path = os.path.abspath(args.root), os.path.abspath(args.file)
    # Not ``-m``: it puts the working directory (the project root) first on sys.path, and a project module
    # named like a standard one (newton's ``math.py``) would shadow it in the server.
    command = [sys.executable, "-c", "import sys; del sys.path[0]; from warplint.cli import entry; entry()", "server"]
    if args.debounce is not None:
        command += ["--debounce", str(args.debounce)]
    client = Client(command, root)
    client.request("initialize", {"processId": os.getpid(), "rootUri": Path(root).as_uri(),
                                  "capabilities": {"window": {"workDoneProgress": True},
                                                   "textDocument": {"publishDiagnostics": {"versionSupport": True}}}})
    client.notify("initialized", {})
    uri = Path(path).as_uri()
    text = Path(path).read_text(encoding="utf-8")
    start = time.perf_counter()
    client.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1,
                                                            "text": text}})
    # the first publish may be the file's own findings while its project is indexed: wait for the indexed one
    indexing = {"begun": False, "ended": False}

    def indexed(message: dict) -> bool:
        if message.get("method") == "$/progress":
            kind = (message.get("params") or {}).get("value", {}).get("kind")
            indexing["begun"] |= kind == "begin"
            indexing["ended"] |= kind == "end"
        return published(uri, 1)(message) and (indexing["ended"] or not indexing["begun"])

    client.wait(indexed, 3600)  # a cold index of a large project on a loaded machine
    print(f"open + index: {time.perf_counter() - start:.2f} s", flush=True)
    times = []
    lines = text.splitlines(keepends=True)
    first_import = next((i for i, line in enumerate(lines) if line.startswith(("import ", "from "))), 0)
    for version in range(2, args.changes + 2):
        if args.edit == "comment":
            edited = list(lines)
            edited[first_import] = edited[first_import].rstrip("\n") + f"  # edit {version}\n"
            text = "".join(edited)
        else:
            text += f"\n_lsp_edit_{version} = {version}\n"
        start = time.perf_counter()
        client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": version},
                                                 "contentChanges": [{"text": text}]})
        client.wait(published(uri, version), 600)
        times.append(time.perf_counter() - start)
        print(f"didChange {version - 1}: {times[-1]:.3f} s", flush=True)
    client.close()
    print(f"latency: {statistics.median(times):.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

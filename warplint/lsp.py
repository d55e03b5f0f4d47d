"""``warplint server``: a language server (stdio) for editors.

A thin adapter over ``warplint.engine.Session``: diagnostics are exactly what the
CLI reports for the same file and ``[tool.warplint]`` (``check_text`` against the
project index), published on open, save and (debounced) change. Code actions:
"suppress with ``# noqa: WCxxx``" on every finding, and the rule's fix where it
has one. ``--confirm`` never runs here.

Linting runs on one worker thread (the Session is not shared between threads),
so the editor connection stays responsive while the project index is built on
the first check.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import os
import re
import sys
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from . import __version__

DEBOUNCE_S = 0.3
SEVERITY_BY_CONFIDENCE = {"high": "Warning", "medium": "Information", "low": "Hint"}
_NOQA_CODES = re.compile(r"#\s*noqa:\s?(?P<codes>[A-Z][A-Z0-9]*(?:[\s,]+[A-Z][A-Z0-9]*)*)", re.I)
_BARE_NOQA = re.compile(r"#\s*noqa(?!:)", re.I)

log = logging.getLogger("warplint.lsp")


# ---------------------------------------------------------------------- pure helpers (tested through the server)
def noqa_edit(line_text: str, code: str) -> tuple[int, int, str] | None:
    """(start column, end column, new text) that suppresses ``code`` on this line, in code points.

    Extends an existing ``# noqa: A,B`` list, otherwise appends ``  # noqa: CODE``.
    None when a comment cannot be added safely (a backslash continuation).
    """
    body = line_text.rstrip("\r\n")
    m = _NOQA_CODES.search(body)
    if m:
        codes = re.split(r"[\s,]+", m.group("codes").strip())
        if code in (c.upper() for c in codes):
            return None
        end = m.end("codes")
        return end, end, f", {code}"
    if _BARE_NOQA.search(body):
        return None  # already suppresses everything
    stripped = body.rstrip()
    if stripped.endswith("\\"):
        return None
    return len(stripped), len(body), f"  # noqa: {code}"


# ---------------------------------------------------------------------- framing (the base protocol)
# A header line: a token, a colon, a value, CRLF (RFC 7230's field syntax, as the LSP base protocol uses it).
_HEADER_LINE = re.compile(rb"([!#$%&'*+.^_`|~0-9A-Za-z-]+):[ \t]*([^\r\n]*?)[ \t]*\r\n")
_HEADER_START = re.compile(rb"[!#$%&'*+.^_`|~0-9A-Za-z-]*(?::[^\r\n]*)?\r?\Z")  # a header line, not all here yet
_CONTENT_LENGTH = re.compile(rb"content-length:", re.I)
MAX_HEADER_LINE = 8192
PARSE_ERROR, INVALID_REQUEST = -32700, -32600


class Framing:
    """The client's byte stream cut into message bodies. A message that is not framed as the base protocol
    says (a ``Content-Length`` that is not a number, a negative one, no header at all, a header line that is
    not one) gives one error, and reading goes on at the next ``Content-Length:`` header: one bad message
    costs that message, not the session."""

    def __init__(self) -> None:
        self.buffer = bytearray()
        self._resync = False

    def feed(self, data: bytes) -> None:
        self.buffer += data

    def next(self) -> tuple[str, bytes] | None:
        """("body", bytes) or ("error", why), or None when more bytes are needed."""
        if self._resync and not self._skip_to_header():
            return None
        length: int | None = None
        position = 0
        while self.buffer.startswith(b"\r\n"):  # blank lines between messages carry nothing
            del self.buffer[:2]
        while True:
            if self.buffer.startswith(b"\r\n", position):
                if length is None:
                    return self._bad(b"no Content-Length header")
                end = position + 2 + length
                if len(self.buffer) < end:
                    return None
                body = bytes(self.buffer[position + 2:end])
                del self.buffer[:end]
                return "body", body
            line = _HEADER_LINE.match(self.buffer, position)
            if line is None:
                rest = self.buffer[position:position + MAX_HEADER_LINE + 1]
                if len(rest) <= MAX_HEADER_LINE and _HEADER_START.match(rest):
                    return None  # the line is still arriving
                return self._bad(b"not a header line: " + bytes(rest[:40]))
            if line.group(1).lower() == b"content-length":
                value = line.group(2)
                if not value.isdigit() or len(value) > 12:
                    return self._bad(b"Content-Length is not a byte count: " + value[:40])
                length = int(value)
            position = line.end()

    def _bad(self, why: bytes) -> tuple[str, bytes]:
        del self.buffer[:1]  # the next header is after this one
        self._resync = True
        self._skip_to_header()
        return "error", why

    def _skip_to_header(self) -> bool:
        """Drop bytes up to the next ``Content-Length:``; whether one was found."""
        found = _CONTENT_LENGTH.search(self.buffer)
        if found is None:
            keep = len(b"content-length:") - 1  # it may be arriving
            del self.buffer[:max(0, len(self.buffer) - keep)]
            return False
        del self.buffer[:found.start()]
        self._resync = False
        return True


def _error(request_id: Any, code: int, message: str) -> dict:
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}


def _request_id(message: Any) -> Any:
    """The id of a request to answer an error with: a string or an integer, else None (JSON-RPC's null)."""
    value = message.get("id") if isinstance(message, dict) else None
    return value if isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool)) else None


async def _serve_stream(server: Any, fd: int) -> int:
    """Read ``fd`` (the client's stdin) and hand each message to ``server``'s protocol; the exit code
    (LSP: 0 after ``shutdown`` then ``exit``, else 1)."""
    import json
    import threading

    loop = asyncio.get_running_loop()
    chunks: asyncio.Queue[bytes] = asyncio.Queue()

    def read() -> None:  # a daemon thread: a blocked read never holds the process at exit
        while True:
            try:
                data = os.read(fd, 1 << 16)
            except OSError:
                data = b""
            loop.call_soon_threadsafe(chunks.put_nowait, data)
            if not data:
                return

    threading.Thread(target=read, name="warplint-stdin", daemon=True).start()
    protocol = server.protocol
    framing = Framing()
    while True:
        event = framing.next()
        if event is None:
            data = await chunks.get()
            if not data:  # the client went away without exit
                return 0 if protocol._shutdown else 1
            framing.feed(data)
            continue
        kind, payload = event
        if kind == "error":
            log.warning("badly framed message: %s", payload.decode("ascii", "replace"))
            protocol._send_data(_error(None, PARSE_ERROR, "Parse error: " + payload.decode("ascii", "replace")))
            continue
        try:
            message = json.loads(payload)
        except (ValueError, UnicodeDecodeError) as exc:
            protocol._send_data(_error(None, PARSE_ERROR, f"Parse error: {exc}"))
            continue
        method = message.get("method") if isinstance(message, dict) else None
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0" or (
                method is None and "result" not in message and "error" not in message):
            protocol._send_data(_error(_request_id(message), INVALID_REQUEST, "Invalid Request"))
            continue
        if protocol._shutdown and method != "exit":
            if "id" in message and method is not None:  # requests are answered, notifications dropped
                protocol._send_data(_error(_request_id(message), INVALID_REQUEST, "the server is shut down"))
            continue
        try:
            structured = protocol.structure_message(message)
        except Exception as exc:  # noqa: BLE001 - pygls' JsonRpcInvalidParams and the like: answer, go on
            if "id" in message and method is not None:
                code = getattr(exc, "code", INVALID_REQUEST)
                protocol._send_data(_error(_request_id(message), code, str(exc) or type(exc).__name__))
            continue
        try:
            protocol.handle_message(structured)
        except SystemExit as exc:  # pygls' exit handler: 0 after shutdown, else 1
            return exc.code if isinstance(exc.code, int) else 1
        except Exception:  # an editor must not lose its server over one message
            log.exception("cannot handle a message")


def run_stdio(server: Any) -> int:
    """Serve on stdin/stdout until ``exit`` or the end of stdin; the process's exit code."""
    from pygls.io_ import StdoutWriter

    server._stop_event = threading.Event()
    server.protocol.set_writer(StdoutWriter(sys.stdout.buffer))
    try:
        return asyncio.run(_serve_stream(server, sys.stdin.fileno()))
    except BrokenPipeError:  # the client went away
        return 0 if server.protocol._shutdown else 1
    finally:
        server.executor.shutdown(wait=False, cancel_futures=True)


def serve(argv: Sequence[str] = ()) -> int:
    """Entry point of ``warplint server`` (stdio)."""
    import argparse

    class _Parser(argparse.ArgumentParser):
        def error(self, message: str) -> Any:  # one line, exit 2 (as ``warplint check``)
            self.exit(2, f"warplint server: error: {message}\n")

    parser = _Parser(prog="warplint server", description="warplint language server (stdio)")
    parser.add_argument("--stdio", action="store_true", help="talk LSP over stdin/stdout (the default and only mode)")
    parser.add_argument("--log-file", help="write the server's log here")
    parser.add_argument("--debounce", type=float, default=DEBOUNCE_S, help="seconds to wait after a change (0.3)")
    args = parser.parse_args(list(argv))
    try:
        server = create_server(debounce=args.debounce)
    except ImportError as exc:
        sys.stderr.write(
            f"warplint: error: the language server needs pygls and lsprotocol ({exc.name} is missing): "
            "pip install 'warplint[lsp]'\n"
        )
        return 2
    if args.log_file:
        logging.basicConfig(filename=args.log_file, level=logging.INFO)
    return run_stdio(server)


def create_server(debounce: float = DEBOUNCE_S):
    from lsprotocol import types
    from pygls.lsp.server import LanguageServer
    from pygls.uris import to_fs_path

    from .config import Config, ConfigError, find_project_root, load_config
    from .registry import all_rules
    from .report import rule_url

    class WarplintServer(LanguageServer):
        def __init__(self) -> None:
            super().__init__("warplint", __version__, text_document_sync_kind=types.TextDocumentSyncKind.Incremental)
            self.debounce = debounce
            self.executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="warplint")
            self.configs: dict[str, tuple[Any, bool]] = {}  # directory -> (Config, whether its root is indexed)
            self.sessions: dict[str, Any] = {}  # config root -> Session (indexed on first use, unless stray)
            self.results: dict[str, list] = {}  # uri -> warplint Diagnostics last published
            self.result_versions: dict[str, int | None] = {}  # uri -> the document version they are for
            self.pending: dict[str, asyncio.Task] = {}
            self.config_errors: set[str] = set()
            self.unshown_errors: list[str] = []

        # -------------------------------------------------------------- config and sessions (worker thread)
        def config_for(self, path: str) -> tuple[Any, bool]:
            """(Config, whether its root is a project: the cache lives there). Found as the CLI finds it."""
            directory = os.path.dirname(path)
            found = self.configs.get(directory)
            if found is None:
                try:
                    config = load_config(directory, set(all_rules()))
                except ConfigError as exc:
                    self.report_config_error(str(exc))
                    config = Config(root=directory)
                # Indexed with its project as the CLI indexes it (discovery.ProjectScope); a cache only
                # where the root is a project (none next to a stray file).
                indexed = config.source is not None or find_project_root(config.root) == config.root
                found = self.configs[directory] = (config, indexed)
            return found

        def report_config_error(self, message: str) -> None:
            # Called on the worker thread: queued, shown from the event loop by check().
            if message not in self.config_errors:
                self.config_errors.add(message)
                self.unshown_errors.append(message)

        def show_config_errors(self) -> None:
            while self.unshown_errors:
                message = self.unshown_errors.pop(0)
                self.window_show_message(
                    types.ShowMessageParams(
                        type=types.MessageType.Error,
                        message=f"warplint: {message} (using the default rules until it is fixed)",
                    )
                )

        def session_for(self, config, indexed: bool):
            session = self.sessions.get(config.root)
            if session is None:
                from .engine import Session

                session = Session(config, cache=indexed)  # no cache directory next to a stray file
                session.retire_indexes = True  # freed after the answer (``lint``)
                self.sessions[config.root] = session
            return session

        def lint(self, path: str, text: str) -> list:
            session = self.session_for(*self.config_for(path))
            enabled = gc.isenabled()
            gc.disable()  # until the answer is out: the first collection scans every object the check made
            try:
                return session.check_text(path, text)
            finally:
                self.after_answer(session, enabled)

        def after_answer(self, session, collector: bool) -> None:
            """Next on this thread, once the diagnostics are out: free the index an edit replaced, and let the
            collector run again (its first collection scans the objects the check made: about 7 % of a check on
            newton, py-spy)."""
            def later() -> None:
                session.free_retired()
                if collector:
                    gc.enable()

            try:
                self.executor.submit(later)
            except RuntimeError:  # shutting down
                later()

        def fix_all(self, path: str, text: str, found: list) -> tuple[str, int]:
            """``text`` with every safe fix applied, re-linted round after round; the session is left
            indexing ``text`` again (the editor applies the edit, or not, and tells us with didChange).
            ``found`` (the findings last published) may be of an older version of ``text``: their edits are
            not applied to it, ``text`` is linted first."""
            from .fixes import fix_text

            try:
                return fix_text(text, self.lint(path, text), lambda new: self.lint(path, new))
            finally:
                self.lint(path, text)

        def unindexed(self, path: str) -> int:
            """How many files ``path`` is indexed with are not modelled yet (0: its index is ready)."""
            return self.session_for(*self.config_for(path)).unindexed(path)

        def lint_alone(self, path: str, text: str) -> list:
            """The file's own findings, from its facts alone: shown while its project is indexed."""
            from .engine import Session

            config, indexed = self.config_for(path)
            return Session(config, cache=indexed).check_alone(path, text)

        def index(self, path: str, token: str | None, loop: asyncio.AbstractEventLoop) -> None:
            """Model the files ``path`` is indexed with; ``$/progress`` reports under ``token`` (sent
            from ``loop``, the server's event loop: this runs on the worker thread)."""
            session = self.session_for(*self.config_for(path))

            def report(done: int, total: int, phase: str) -> None:
                if token is not None and total:
                    value = types.WorkDoneProgressReport(message=f"{phase} {done}/{total}",
                                                         percentage=min(100, done * 100 // total))
                    loop.call_soon_threadsafe(self.work_done_progress.report, token, value)

            session.progress = report
            try:
                session.index_context(path)
            finally:
                session.progress = None
            session.free_retired()
            # The project's models stay for the session (millions of small, acyclic objects): out of the cyclic
            # collector's sight, so each collection a check triggers does not scan them all again (a third of
            # a check's CPU after a didChange on newton). Reference counting still frees a model replaced later.
            gc.collect()
            gc.freeze()

        def forget(self, path: str) -> None:
            """After didClose: the project index goes back to the file on disk."""
            found = self.configs.get(os.path.dirname(path))
            session = self.sessions.get(found[0].root) if found is not None else None
            if session is not None and os.path.isfile(path):
                text, error = session.read(path)
                session.add_file(path, text, error)

        def reload_config(self) -> None:
            self.configs.clear()
            self.sessions.clear()
            self.config_errors.clear()

        # -------------------------------------------------------------- publishing (event loop)
        async def check(self, uri: str, delay: float = 0.0) -> None:
            if delay:
                await asyncio.sleep(delay)
            if uri not in self.workspace.text_documents:
                return  # closed meanwhile
            document = self.workspace.get_text_document(uri)
            path = to_fs_path(uri)
            if path is None or not path.endswith((".py", ".pyi")):
                return
            version, text = document.version, document.source
            loop = asyncio.get_running_loop()
            try:
                pending = await loop.run_in_executor(self.executor, self.unindexed, path)
                if pending:
                    await self.index_project(uri, path, version, text, pending)
                diagnostics = await loop.run_in_executor(self.executor, self.lint, path, text)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # an editor must not lose its server over one file
                log.exception("warplint failed on %s", path)
                self.window_log_message(
                    types.LogMessageParams(type=types.MessageType.Error, message=f"warplint failed on {path}: {exc!r}")
                )
                return
            finally:
                self.show_config_errors()
            if not self.publish(uri, version, diagnostics):
                return  # a newer check is on its way
            await self.republish_others(uri)

        def publish(self, uri: str, version: int | None, diagnostics: list) -> bool:
            """Publish ``diagnostics`` for ``version`` of the document; False when it has changed since."""
            if uri not in self.workspace.text_documents:
                return False
            current = self.workspace.get_text_document(uri)
            if current.version != version:
                return False
            self.results[uri] = diagnostics
            self.result_versions[uri] = version
            self.text_document_publish_diagnostics(
                types.PublishDiagnosticsParams(
                    uri=uri, version=version, diagnostics=[self.to_lsp(current, d) for d in diagnostics]
                )
            )
            return True

        async def index_project(self, uri: str, path: str, version: int | None, text: str, pending: int) -> None:
            """Index the files ``path`` is checked with, under a ``$/progress`` token when the client
            takes one; the file's own findings are published first, so the editor is not blank meanwhile."""
            import uuid

            loop = asyncio.get_running_loop()
            caps = self.client_capabilities
            token: str | None = None
            if caps.window is not None and caps.window.work_done_progress:
                token = f"warplint-index-{uuid.uuid4().hex}"
                try:
                    await self.work_done_progress.create_async(token)
                except Exception:  # noqa: BLE001 - a client that refuses the token gets no progress, still findings
                    token = None
            if token is not None:
                self.work_done_progress.begin(token, types.WorkDoneProgressBegin(
                    title="warplint: indexing the project", message=f"{pending} files", percentage=0))
            try:
                if pending > 1:
                    alone = await loop.run_in_executor(self.executor, self.lint_alone, path, text)
                    self.publish(uri, version, alone)
                await loop.run_in_executor(self.executor, self.index, path, token, loop)
            finally:
                if token is not None:
                    self.work_done_progress.end(token, types.WorkDoneProgressEnd(message="project indexed"))

        async def republish_others(self, changed_uri: str) -> None:
            """After a check, the other open documents whose findings changed (a fix in one file
            ends a related finding in another) are published again."""
            loop = asyncio.get_running_loop()
            for uri in list(self.results):
                if uri == changed_uri or uri not in self.workspace.text_documents:
                    continue
                task = self.pending.get(uri)
                if task is not None and not task.done():
                    continue  # its own check is on its way
                document = self.workspace.get_text_document(uri)
                path = to_fs_path(uri)
                if path is None:
                    continue
                version = document.version
                diagnostics = await loop.run_in_executor(self.executor, self.lint, path, document.source)
                if _finding_keys(diagnostics) != _finding_keys(self.results.get(uri, [])):
                    self.publish(uri, version, diagnostics)

        def schedule(self, uri: str, delay: float = 0.0) -> None:
            previous = self.pending.pop(uri, None)
            if previous is not None and not previous.done():
                previous.cancel()
            self.pending[uri] = asyncio.get_running_loop().create_task(self.check(uri, delay))

        def to_range(self, document, line: int, col: int, end_line: int, end_col: int):
            from pygls.workspace import ServerTextPosition, ServerTextRange

            start = ServerTextPosition(max(line - 1, 0), max(col, 0))
            end = ServerTextPosition(max(end_line - 1, 0), max(end_col, 0))
            return document.range_to_client_units(ServerTextRange(start, end))

        def to_lsp(self, document, d) -> Any:
            span = d.span
            url = rule_url(d.code, self.config_for(d.path)[0].rule_url)
            return types.Diagnostic(
                range=self.to_range(document, span.line, span.col, span.end_line, span.end_col),
                message=d.message,
                severity=getattr(types.DiagnosticSeverity, SEVERITY_BY_CONFIDENCE.get(d.confidence, "Information")),
                code=d.code,
                code_description=types.CodeDescription(href=url) if url else None,
                source="warplint",
                data={"name": d.name, "mechanism": d.mechanism, "confidence": d.confidence},
                related_information=[self.to_related(r) for r in d.related] or None,
            )

        def to_related(self, related) -> Any:
            from pygls.uris import from_fs_path

            span = related.span
            start = types.Position(max(span.line - 1, 0), max(span.col, 0))
            end = types.Position(max(span.end_line - 1, 0), max(span.end_col, 0))
            uri = from_fs_path(os.path.abspath(related.path)) or related.path
            return types.DiagnosticRelatedInformation(types.Location(uri, types.Range(start, end)), related.message)

        async def pyproject_changed(self) -> None:
            await asyncio.get_running_loop().run_in_executor(self.executor, self.reload_config)
            for uri in list(self.workspace.text_documents):
                if uri.endswith((".py", ".pyi")):
                    self.schedule(uri)

    server = WarplintServer()

    @server.feature(types.INITIALIZED)
    async def initialized(ls: WarplintServer, params: types.InitializedParams) -> None:
        caps = ls.client_capabilities
        watched = caps.workspace and caps.workspace.did_change_watched_files
        if watched and watched.dynamic_registration:
            try:
                await ls.client_register_capability_async(
                    types.RegistrationParams(
                        registrations=[
                            types.Registration(
                                id="warplint-pyproject",
                                method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                                register_options=types.DidChangeWatchedFilesRegistrationOptions(
                                    watchers=[types.FileSystemWatcher(glob_pattern="**/pyproject.toml")]
                                ),
                            )
                        ]
                    )
                )
            except Exception:  # noqa: BLE001 - didSave of pyproject.toml still reloads
                log.warning("client refused the pyproject.toml watcher")

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    async def did_open(ls: WarplintServer, params: types.DidOpenTextDocumentParams) -> None:
        ls.schedule(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    async def did_change(ls: WarplintServer, params: types.DidChangeTextDocumentParams) -> None:
        ls.schedule(params.text_document.uri, ls.debounce)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE, types.SaveOptions(include_text=False))
    async def did_save(ls: WarplintServer, params: types.DidSaveTextDocumentParams) -> None:
        uri = params.text_document.uri
        if uri.endswith("/pyproject.toml"):
            await ls.pyproject_changed()
        else:
            ls.schedule(uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    async def did_close(ls: WarplintServer, params: types.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        task = ls.pending.pop(uri, None)
        if task is not None:
            task.cancel()
        ls.results.pop(uri, None)
        ls.result_versions.pop(uri, None)
        path = to_fs_path(uri)
        if path:
            await asyncio.get_running_loop().run_in_executor(ls.executor, ls.forget, path)
        ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))

    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    async def watched_files(ls: WarplintServer, params: types.DidChangeWatchedFilesParams) -> None:
        if any(change.uri.endswith("/pyproject.toml") for change in params.changes):
            await ls.pyproject_changed()

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix, FIX_ALL]),
    )
    async def code_action(ls: WarplintServer, params: types.CodeActionParams) -> list:
        uri = params.text_document.uri
        found = ls.results.get(uri)
        if not found:
            return []
        document = ls.workspace.get_text_document(uri)
        only = params.context.only
        # Findings of an older version of the text have stale positions: no per-finding edits until the
        # current version's are published (fix-all lints the text it fixes).
        fresh = ls.result_versions.get(uri) == document.version
        wanted = fresh and _wanted(types.CodeActionKind.QuickFix, only)
        actions = quick_fixes(ls, params, document, found) if wanted else []
        path = to_fs_path(uri)
        if path and _wanted(FIX_ALL, only) and any(d.fix is not None and d.fix.is_safe for d in found):
            text = document.source
            fixed, count = await asyncio.get_running_loop().run_in_executor(ls.executor, ls.fix_all, path, text, found)
            if count:
                from .fixes import changed_region

                span, new_text = changed_region(text, fixed)
                rng = ls.to_range(document, span.line, span.col, span.end_line, span.end_col)
                actions.append(types.CodeAction(
                    title=f"Fix all safe warplint findings ({count})", kind=FIX_ALL,
                    edit=types.WorkspaceEdit(changes={uri: [types.TextEdit(range=rng, new_text=new_text)]}),
                ))
        return actions

    def quick_fixes(ls: WarplintServer, params: types.CodeActionParams, document, found: list) -> list:
        lines = document.lines
        uri = params.text_document.uri
        asked = {str(d.code) for d in params.context.diagnostics if d.source == "warplint"}
        actions = []
        for d in found:
            rng = ls.to_range(document, d.span.line, d.span.col, d.span.end_line, d.span.end_col)
            if not _overlaps(rng, params.range) or (asked and d.code not in asked):
                continue
            lsp_diagnostic = ls.to_lsp(document, d)
            if d.fix is not None:
                edits = [
                    types.TextEdit(
                        range=ls.to_range(document, e.span.line, e.span.col, e.span.end_line, e.span.end_col),
                        new_text=e.text,
                    )
                    for e in d.fix.edits
                ]
                actions.append(
                    types.CodeAction(
                        title=f"{d.fix.message} ({d.code})" + ("" if d.fix.is_safe else " (unsafe)"),
                        kind=types.CodeActionKind.QuickFix,
                        diagnostics=[lsp_diagnostic],
                        is_preferred=d.fix.is_safe,
                        edit=types.WorkspaceEdit(changes={uri: edits}),
                    )
                )
            if 0 < d.span.line <= len(lines):
                edit = noqa_edit(lines[d.span.line - 1], d.code)
                if edit is not None:
                    start, end, text = edit
                    actions.append(
                        types.CodeAction(
                            title=f"Suppress {d.code} on this line with `# noqa: {d.code}`",
                            kind=types.CodeActionKind.QuickFix,
                            diagnostics=[lsp_diagnostic],
                            edit=types.WorkspaceEdit(
                                changes={
                                    uri: [
                                        types.TextEdit(
                                            range=ls.to_range(document, d.span.line, start, d.span.line, end),
                                            new_text=text,
                                        )
                                    ]
                                }
                            ),
                        )
                    )
        return actions

    @server.feature(types.SHUTDOWN)
    def shutdown(ls: WarplintServer, params: Any) -> None:
        for task in ls.pending.values():
            task.cancel()
        ls.executor.shutdown(wait=False, cancel_futures=True)

    return server


def _finding_keys(diagnostics: list) -> list[tuple]:
    return [(d.code, d.span, d.message, d.related) for d in diagnostics]


FIX_ALL = "source.fixAll.warplint"


def _wanted(kind: Any, only: Sequence | None) -> bool:
    """Whether a code action of ``kind`` answers a request for the kinds ``only`` (None: any); kinds are
    hierarchical: asking for ``source.fixAll`` or ``source`` gets ``source.fixAll.warplint``."""
    name = str(getattr(kind, "value", kind))
    asked = [str(getattr(o, "value", o)) for o in only or ()]
    return not asked or any(name == o or name.startswith(f"{o}.") for o in asked)


def _overlaps(a, b) -> bool:
    a_start, a_end = (a.start.line, a.start.character), (a.end.line, a.end.character)
    b_start, b_end = (b.start.line, b.start.character), (b.end.line, b.end.character)
    return a_start <= b_end and b_start <= a_end

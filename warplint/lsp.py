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
import logging
import os
import re
import sys
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


def serve(argv: Sequence[str] = ()) -> int:
    """Entry point of ``warplint server`` (stdio)."""
    import argparse

    parser = argparse.ArgumentParser(prog="warplint server", description="warplint language server (stdio)")
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
    server.start_io()
    return 0


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
                self.sessions[config.root] = session
            return session

        def lint(self, path: str, text: str) -> list:
            return self.session_for(*self.config_for(path)).check_text(path, text)

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

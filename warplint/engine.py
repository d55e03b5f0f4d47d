"""The lint pipeline: discover -> prefilter -> parse + extract -> index -> rules -> suppress.

Front ends (CLI, flake8, LSP, --confirm) all go through ``Session``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import gc
import os
import pickle
import re
import warnings
from collections import Counter
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from . import cache as _cache
from . import parse_guard, warp_version, workers
from .config import Config
from .diagnostic import Diagnostic, LintResult, Span
from .discovery import Discovery, ProjectScope
from .model import FileModel
from .module_names import ModuleNames, RunHint, declared_roots, imports_of
from .names import module_name_for_path
from .noqa import Suppressions, find_suppressions, unused_codes, unused_noqa_reports
from .registry import FileError, UnusedNoqa, all_rules, salt_for, selection_table
from .rule import Report, Rule
from .semantic.file_facts import FileFacts
from .sources import decode as decode  # decode: where the front ends import it from
from .sources import locate_installed, read_source, text_over_limit, too_large
from .warm import naming_notes as _naming_notes
from .warm import spelled as _spelled

if TYPE_CHECKING:  # LibCST, the extractor and the index are imported when a file is parsed or checked:
    import libcst as cst  # a run answered from the result cache needs none of them

    from .index import CallResolution, KeptFacts, Project

_NOQA_LINE = re.compile(r"^.*noqa.*$", re.M | re.I)  # every line a suppression (or WC001) could read
# Changed files compared model by model with their cached models before the rules run again (each costs a
# parse; beyond a few, running the rules is the cheaper answer).
MAX_UNCHANGED_CHECKS = 8


def noqa_signature(text: str) -> str:
    """A digest of the lines of ``text`` that suppressions could read (with their line numbers)."""
    import hashlib

    lines = [(text.count("\n", 0, m.start()), m.group()) for m in _NOQA_LINE.finditer(text)]
    return hashlib.blake2b(repr(lines).encode(), digest_size=16).hexdigest()


def rule_visitors(rules: Iterable[Rule]) -> list[tuple[str, cst.CSTVisitor]]:
    found = []
    for rule in rules:
        visitor = rule.collect()
        if visitor is not None:
            found.append((rule.code, visitor))
    return found


@contextlib.contextmanager
def collector_paused():
    """CSTs and models are large, (almost) acyclic graphs: the cyclic collector only re-scans
    them, again and again while they are built or unpickled (a warm run that re-checks a
    project spent 60 % of its time there). Paused for one lint run; garbage it would have
    found is collected once the collector is back."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def analyze(path: str, text: str, module: str | None = None, is_package: bool | None = None,
            verdict: parse_guard.Verdict | None = None) -> FileModel:
    """Parse and extract one file. Never raises for bad input: ``model.error`` says why.
    ``verdict``: the parse guard's, when the caller already has it."""
    # CPython warns about the code it reads (invalid escapes in literals LibCST evaluates,
    # the ast parse for positions): the user's code, not ours to print.
    with collector_paused(), warnings.catch_warnings():
        warnings.simplefilter("ignore", SyntaxWarning)
        warnings.simplefilter("ignore", DeprecationWarning)
        return _analyze(path, text, module, is_package, verdict or parse_guard.classify(text))


def _analyze(path: str, text: str, module: str | None, is_package: bool | None,
             verdict: parse_guard.Verdict) -> FileModel:
    if module is None or is_package is None:
        module, is_package = module_name_for_path(path)
    model = FileModel(path=path, module=module, is_package=is_package)
    model.mentions_warp = "warp" in text
    # LibCST's native parser segfaults on long chains (see parse_guard): never hand it one
    # it may not survive, unless a crash here costs only this file.
    if verdict.kind is parse_guard.Kind.INVALID:
        model.error = verdict.reason
        return model
    stack = verdict.stack
    if verdict.kind is parse_guard.Kind.ISOLATE:
        if not parse_guard.IN_SACRIFICIAL_PROCESS:
            model.error = f"not parsed: {verdict.reason}; LibCST's parser could crash on it"
            return model
        stack = parse_guard.MAX_STACK
    try:
        return parse_guard.call_with_stack(stack, _parse_and_extract, model, text, stack)
    except MemoryError:  # no room for the parser's thread stack
        model.error = f"could not parse: no memory for a {stack >> 20} MiB parser stack"
        return model


def _parse_and_extract(model: FileModel, text: str, stack: int) -> FileModel:
    import libcst as cst

    try:
        tree = cst.parse_module(text)
    except cst.ParserSyntaxError as exc:
        model.error = f"syntax error: {exc.message} (line {exc.raw_line}, column {exc.raw_column})"
        if parse_guard.cpython_rejects(text, stack) is None:
            # LibCST's own limits (e.g. more than ~3,000 implicitly concatenated strings)
            model.error = f"not parsed: LibCST rejects this file, which CPython accepts: {model.error}"
        column = max(exc.raw_column, 0)
        model.rule_facts["error_span"] = Span(exc.raw_line, column, exc.raw_line, column)
        return model
    except (RecursionError, MemoryError, ValueError) as exc:
        model.error = f"could not parse: {type(exc).__name__}"
        return model
    try:
        return _extracted(tree, text, model)
    except RecursionError:
        pass
    fresh = FileModel(path=model.path, module=model.module, is_package=model.is_package)
    fresh.mentions_warp = model.mentions_warp
    # A valid file deeper than the recursion limit allows (a long chain: our traversal,
    # LibCST's code generation and rule visitors recurse once or more per level): again,
    # on a fresh model, with the room it needs.
    frames = parse_guard.FRAMES_PER_LEVEL * parse_guard.tree_depth(tree)
    try:
        with parse_guard.recursion_room(frames):
            return parse_guard.call_with_stack(parse_guard.python_stack(frames), _extracted, tree, text, fresh)
    except RecursionError:
        fresh.error = "could not analyse: nesting too deep"
        return fresh


def _extracted(tree: cst.Module, text: str, model: FileModel) -> FileModel:
    from .extract import extract
    from .semantic.file_facts import tables_at_extraction

    visitors = rule_visitors(all_rules().values())
    extract(tree, model, [v for _, v in visitors], text)
    for code, visitor in visitors:
        facts = getattr(visitor, "facts", None)  # may compute positions: inside the recursion handling
        if facts is not None:
            model.rule_facts[code] = facts
    model.tables_at_extraction = tables_at_extraction(model)
    return model


class ImportLineNames:
    """Each file's imported names read from its import lines (``_import_line_names``), kept while the text asked
    about is the one held: a run after an edit asks them of every unparsed file (``Session._parse_importers``). A
    model's own are a table of the model (``FileFacts``)."""

    def __init__(self) -> None:
        self._of_texts: dict[str, tuple[str, str, bool, frozenset[str]]] = {}  # path -> (text, module, package, names)

    def of_text(self, path: str, text: str, module: str, is_package: bool) -> frozenset[str]:
        known = self._of_texts.get(path)
        if known is None or known[1] != module or known[2] != is_package or (known[0] is not text and known[0] != text):
            known = self._of_texts[path] = (text, module, is_package,
                                            frozenset(_import_line_names(text, module, is_package)))
        return known[3]


def _imported_names(model: FileModel) -> set[str]:
    """The modules ``model`` imports from and the names it imports from them, dotted (``pkg.mod.name``)."""
    found: set[str] = set()
    for imp in model.imports:
        found.add(imp.module)
        found.update(f"{imp.module}.{name}" for name, _ in imp.names)
    return found


def _import_line_names(text: str, module: str, is_package: bool) -> set[str]:
    """The modules ``text``'s import statements name and the names they import from them, dotted and absolute:
    what its model's imports will hold (``_imported_names``), read from the text before any parse."""
    from .import_lines import import_lines

    found: set[str] = set()
    for line in import_lines(text):
        source = line.absolute(module, is_package)
        found.add(source)
        found.update(f"{source}.{name}" for name in line.names if name != "*")
    return found


# --------------------------------------------------------------------- workers
# Below this much source (characters) a process pool costs more than it saves.
PARALLEL_MIN_CHARS = 400_000
# A file this large is modelled in a worker even in a serial run: there, its time and
# memory are bounded (a 10 MB one-line list once took 222 s and 20 GB in process).
IN_PROCESS_MAX_CHARS = 512 * 1024
# So is a file with a line this long: LibCST's parse time grows quadratically with a chain's
# links (`a + a + ...` x9,000 in one statement: minutes), and long chains sit on long lines.
# No file of the six corpora (2,857 files) has a line over 4,000 characters.
IN_PROCESS_MAX_LINE = 4_000


def default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


_LONG_LINE = re.compile(f"[^\n]{{{IN_PROCESS_MAX_LINE + 1}}}")  # C speed, no list of lines


def _must_isolate(text: str, verdict: parse_guard.Verdict) -> bool:
    """Files the main process should not model itself (see ``workers``): very large ones, those
    with very long lines, and those whose parse might crash the process (``parse_guard``)."""
    if len(text) > IN_PROCESS_MAX_CHARS or verdict.kind is parse_guard.Kind.ISOLATE:
        return True
    return len(text) > IN_PROCESS_MAX_LINE and _LONG_LINE.search(text) is not None


FAILED_PREFIX = "not checked: "  # the error of a model whose worker failed (never cached)


def _failed_model(item: tuple[str, str, str, bool], reason: str) -> FileModel:
    path, text, module, is_package = item
    model = FileModel(path=path, module=module, is_package=is_package, error=FAILED_PREFIX + reason)
    model.mentions_warp = "warp" in text
    return model


class ModelledTogether:
    """Models made in one pool for several indexes (a grouped run, ``Session._model_groups_together``). A
    file may be modelled by more than one index (one group's file, another's context): each gets a model of
    its own, as if it had modelled the file itself (an index's models are its own to change)."""

    def __init__(self, answers: Iterable[tuple[tuple[str, str, str, bool],
                                               tuple[FileModel, bytes | None, bool]]] = (),
                 wanted: Counter[tuple[str, str, str, bool]] | None = None) -> None:
        self._answers = dict(answers)
        self._left = wanted if wanted is not None else Counter()

    def take(self, item: tuple[str, str, str, bool]) -> tuple[FileModel, bytes | None, bool] | None:
        """The answer for ``item`` (path, text, module, is_package), or None when none was made for it."""
        answer = self._answers.get(item)
        if answer is None:
            return None
        self._left[item] -= 1
        if self._left[item] <= 0:
            del self._answers[item]
            return answer
        model, blob, failed = answer
        copy = pickle.dumps(model) if blob is None else blob
        return pickle.loads(copy), blob, failed


def analyze_many(items: list[tuple[str, str, str, bool]], jobs: int, budget: workers.Budget,
                 progress: Callable[[int, int], None] | None = None, keep_pickled: bool = True,
                 ) -> list[tuple[FileModel, bytes | None, bool]]:
    """``analyze`` each (path, text, module, is_package) into (model, pickled model or None, whether its
    worker failed). In ``jobs`` worker processes when there is enough work, and always for the files
    ``_must_isolate`` picks; a file whose worker fails gets a model with the error (one WC000), marked failed:
    the failure may be the machine's, not the file's, so it is never cached. Workers return pickled models
    (no CSTs cross over); the bytes come back with the model for the cache. The rest are
    modelled here (no pickled model then). ``progress(done, total)`` after each file. ``keep_pickled=False``:
    no bytes come back (nothing caches them; a project's pickled models held until the last file is done
    were a sixth of a cold run's peak memory)."""
    parallel = jobs > 1 and len(items) > 1 and sum(len(i[1]) for i in items) >= PARALLEL_MIN_CHARS
    # Workers classify again themselves; those modelled here use this verdict (classified once).
    verdicts = [None if parallel else parse_guard.classify(item[1]) for item in items]
    remote = [i for i, (item, verdict) in enumerate(zip(items, verdicts, strict=True))
              if verdict is None or _must_isolate(item[1], verdict)]
    results: list[tuple[FileModel, bytes | None, bool] | None] = [None] * len(items)
    if remote and workers.can_start_workers():
        def done(k: int, answer: bytes | workers.Failure) -> None:
            i = remote[k]
            if isinstance(answer, workers.Failure):
                results[i] = (_failed_model(items[i], answer.reason), None, True)
            else:
                results[i] = (pickle.loads(answer), answer if keep_pickled else None, False)
            if progress is not None:
                progress(sum(r is not None for r in results), len(items))

        workers.run([items[i] for i in remote], jobs, budget, done, analyze)
    finished = sum(r is not None for r in results)
    for i, r in enumerate(results):
        if r is None:
            results[i] = (analyze(*items[i], verdict=verdicts[i]), None, False)
            finished += 1
            if progress is not None:
                progress(finished, len(items))
    return [r for r in results if r is not None]  # all of them, modelled above


MAX_PER_RULE_AND_LINE = 10  # a generated or minified line can hold thousands of one finding


def _checked(rules: list[Rule], model: FileModel, project: Project) -> tuple[tuple[Report, ...], ...]:
    """Each rule's own reports on ``model`` (``Rule.check``), in the order of ``rules``."""
    return tuple(tuple(rule.check(model, project)) for rule in rules)


def _bounded_per_line(diagnostics: list[Diagnostic]) -> list[Diagnostic]:
    """At most MAX_PER_RULE_AND_LINE findings of one rule on one line; the last one shown says
    how many more there were (a 320 kB line once gave 20,000 findings and 9.6 GB of text)."""
    counts: dict[tuple[str, int], int] = {}
    for d in diagnostics:
        counts[(d.code, d.span.line)] = counts.get((d.code, d.span.line), 0) + 1
    if all(n <= MAX_PER_RULE_AND_LINE for n in counts.values()):
        return diagnostics
    shown: dict[tuple[str, int], int] = {}
    kept = []
    for d in diagnostics:
        key = (d.code, d.span.line)
        seen = shown[key] = shown.get(key, 0) + 1
        if seen > MAX_PER_RULE_AND_LINE:
            continue
        if seen == MAX_PER_RULE_AND_LINE and counts[key] > seen:
            hidden = counts[key] - seen
            kept.append(dataclasses.replace(
                d, message=f"{d.message} ({hidden} more {d.code} findings on this line not shown)",
                data={**d.data, "not_shown_on_line": hidden}))
            continue
        kept.append(d)
    return kept


def _run_hint(config: Config) -> RunHint | None:
    """How the program runs: the command a front end was given, else the configured --confirm command
    (run from the project root)."""
    if config.run_command:
        return RunHint.of(config.run_command, config.run_cwd or config.root)
    configured = config.confirm.get("command")
    if configured:
        return RunHint.of([configured] if isinstance(configured, str) else configured, config.root)
    return None


def _absolute(diagnostic: Diagnostic) -> Diagnostic:
    """``diagnostic`` with absolute paths (as the result cache keeps findings, for any working directory)."""
    related = tuple(dataclasses.replace(r, path=os.path.abspath(r.path)) for r in diagnostic.related)
    return dataclasses.replace(diagnostic, path=os.path.abspath(diagnostic.path), related=related)


class Session:
    """One configuration, its rules, and the project index; reused across checks.

    ``cache`` (default on) keeps parsed models in ``.warplint_cache/`` next to the
    config root (or ``cache_dir`` / the config's ``cache-dir``); ``jobs`` is the number
    of worker processes for parsing (default: the cores available; 1 = serial).
    """

    def __init__(
        self,
        config: Config,
        rules: dict[str, Rule] | None = None,
        *,
        cache: bool = True,
        cache_dir: str | None = None,
        jobs: int | None = None,
        root_is_project: bool | None = None,
    ) -> None:
        self.config = config
        self._rules = rules  # None: the registry's, imported when a file is checked (``rules``)
        self.enabled = config.enabled_codes(rules if rules is not None else selection_table(kept=cache))
        self._configured_codes = self.enabled  # (a daemon's run may check other codes: ``run_again`` resets them)
        self.discovery = Discovery(config)
        # The Warp the project runs against (asked for, Warp's own tree, the project's venv, warplint's own)
        self.warp_environment = warp_version.environment(config.root, config.warp_version, config.warp_version_source)
        self.scope = ProjectScope(config, root_is_project)  # which files a checked file is indexed with
        # Module names from the project's evidence (its imports, declared roots, the run command)
        self.names = ModuleNames(config.root, declared_roots(config.root, config.src), _run_hint(config),
                                 self.scope.files_for, self._disk_text, self._imports_of)
        self._context_reads: dict[str, tuple[str | None, str | None]] = {}  # context files, read once a session
        # the files whose texts the last run read are known to be on disk still (``run_again``): not read again
        self._reads_kept: frozenset[str] = frozenset()
        self._walked: tuple[str, list[str], list[str]] | None = None  # a walk the daemon made for this run
        self._digests: dict[str, tuple[str, str]] = {}  # absolute path -> (text, its digest)
        self._suppressions: dict[str, tuple[str, Suppressions]] = {}  # absolute path -> (text, its noqa comments)
        self._import_lines = ImportLineNames()  # each unparsed file's imported names, read once per text
        self._project_context = False  # a lint_paths run indexed its files with their projects
        self.models: dict[str, FileModel] = {}  # absolute path -> model
        self._project: Project | None = None  # the index over self.models while they are unchanged
        self._file_facts = FileFacts()  # each model's own tables, kept across the indexes built over it
        self._kept_facts: KeptFacts | None = None  # facts with what they read, taken over while that holds
        self._call_resolution: CallResolution | None = None  # calls resolved, kept for the files an edit leaves
        # facts kept across edits, each with what it read (reads.py): an editor's session (``check_text``) records
        # them; a run that builds one layer does not pay for the recording
        self.records_reads = False
        self.retire_indexes = False  # keep an index replaced by an edit until ``free_retired`` (after the answer)
        self._retired: Project | None = None
        self.texts: dict[str, str] = {}
        self._external: dict[str, FileModel | None] = {}
        self.jobs = jobs if jobs is not None and jobs > 0 else default_jobs()
        self.budget = workers.Budget(config.file_timeout, config.file_memory)
        self.progress: Callable[[int, int, str], None] | None = None  # (files modelled, of, phase) as it goes on
        self._cache: _cache.ModelCache | None = None
        # Absolute paths whose model is a worker's failure (a crash, the budget, a worker that could not start):
        # never cached, never in a stored result, modelled again when next asked for.
        self._unsettled: set[str] = set()
        # Files without a mention of warp that add_files parsed ahead for _parse_importers: absolute path ->
        # (the text, its model); only those it chooses join the index.
        self._ahead: dict[str, tuple[str, FileModel]] = {}
        # Models a grouped run made for every group in one pool before linting them (``_model_groups_together``);
        # ``_analyze_all`` takes each from here.
        self._modelled_together = ModelledTogether()
        # A front end that reads a config per file (the CLI) sets ``configs``: path -> the Config governing it.
        self.configs: Callable[[str], Config] | None = None
        self._children: dict[int, Session] = {}  # id(config) -> the session of the files it governs (_child)
        self._owners: dict[str, Session] = {}  # absolute path -> the index a grouped run checked it in
        # Whether a grouped run keeps each group's index once its findings are out: a re-check (``recheck``, the
        # fixes' rounds) reuses it. Without it the next group's index is built while the last one's is still held
        # (newton is 34 projects for the CLI); a re-check of a released index models its files again.
        self.keep_indexes = False
        # A daemon's session keeps each group's index across its runs (scope -> (config, index); None: not kept)
        self.group_indexes: dict[tuple[str, bool], tuple[Config, Session]] | None = None
        self._cache_settings: tuple[bool, str | None] | None = None  # what ``configure_cache`` was last given
        self._writes_held = False  # ``hold_cache_writes``
        self._caches: dict[str, tuple[_cache.ModelCache, _cache.ResultCache]] = {}
        self.configure_cache(cache, cache_dir)

    def run_again(self, config: Config, unchanged: frozenset[str] = frozenset(),
                  walked: tuple[str, list[str], list[str]] | None = None) -> None:
        """Start another run over this session's index (a daemon's, ``daemon_server.Sessions``): ``config`` is equal to
        the one it has (the run's own object: a grouped run tells its configs apart by identity), and what the
        last run read from disk is read again (the models of texts that did not change are kept), but for the files
        of ``unchanged`` (absolute paths), whose texts on disk are known to be the ones it read. ``walked``: (a
        path, the files discovery found under it just now, its notes), for a run over that path."""
        self.config = config
        self.enabled = self._configured_codes
        self.discovery = Discovery(config)
        self._context_reads = {path: read for path, read in self._context_reads.items() if path in unchanged}
        self._reads_kept = unchanged
        self._walked = walked
        self._children, self._owners = {}, {}
        self.progress = None

    @property
    def rules(self) -> dict[str, Rule]:
        if self._rules is None:
            self._rules = all_rules()
        return self._rules

    def configure_cache(self, enabled: bool = True, directory: str | None = None) -> None:
        if self._cache_settings == (enabled, directory):
            return  # kept (``lint_paths`` reads again what another process wrote since)
        self._cache_settings = (enabled, directory)
        self._cache = None
        self._results = None
        self._caches = {}  # cache directory -> its (model, result) caches, shared by nested configs' sessions (_child)
        self.cache_note: str | None = None  # why there is no cache, when the user may want to know
        if not enabled:
            return
        salt = salt_for(self._rules) if self._rules is not None else _cache.registry_salt()
        secret = _cache.user_secret()  # None: no key kept safely, so no cache is trusted
        if salt is not None and secret is not None:
            where = directory or _cache.default_directory(self.config.root, self.config.cache_dir)
            if directory is None and _cache.leaves_root(where, self.config.root):
                # A symlinked .warplint_cache or a config's cache-dir elsewhere (a cloned project's): not ours
                # to write into unless the user names it.
                self.cache_note = (f"no cache: {where} is outside the project (a symlink, or cache-dir); "
                                   "name it with --cache-dir to use it")
                return
            self._cache = _cache.ModelCache(where, salt, secret, named=directory is not None)
            self._results = _cache.ResultCache(where, salt, secret, named=directory is not None)
            self._caches = {self._cache.directory: (self._cache, self._results)}
            self._cache.held = self._results.held = self._writes_held

    def _run_key(self, files: list[tuple[str, str | None, str | None]], digests: dict[str, str] | None = None) -> str:
        """Everything the findings of a project's files depend on, besides installed packages
        (checked separately): the files (absolute path, content), the effective config and rule
        selection, and what decides the Warp version whose facts the rules consult. Front ends that index
        the same files under the same config share a key (the CLI, pre-commit and flake8): the
        findings are stored per file and spelled as each run names its paths."""
        entries = []
        for path, text, error in files:
            absolute = os.path.abspath(path)
            digest = (digests or {}).get(absolute) or (self._digest(absolute, text) if text is not None else None)
            entries.append((absolute, digest, error))
        return _cache.run_key(self.config, self.enabled, self.warp_environment.cache_key(), entries)

    def _digest(self, absolute: str, text: str) -> str:
        known = self._digests.get(absolute)
        if known is not None and known[0] == text:  # (a daemon's run reads every text again: equal, not the same)
            value = known[1]
        else:
            value = _cache.digest(text)
        self._digests[absolute] = (text, value)
        return value

    @property
    def cache(self) -> _cache.ModelCache | None:
        return self._cache

    def save_cache(self) -> None:
        if self._cache is not None:
            self._cache.save()

    def hold_cache_writes(self) -> None:
        """Keep this session's cache writes in memory until ``flush_caches`` (a daemon writes once it answered)."""
        self._writes_held = True
        for models, results in self._caches.values():
            models.held = results.held = True

    def flush_caches(self) -> None:
        for models, results in self._caches.values():
            models.flush()
            results.flush()

    def _analyze_all(self, items: list[tuple[str, str, str, bool]], phase: str = "modelling files") -> list[FileModel]:
        """``analyze`` with the cache in front and the worker pool behind; ``phase`` names the pass on the
        progress line."""
        cache = self._cache
        shown = self.progress
        progress = (lambda done, total: shown(done, total, phase)) if shown is not None else None
        if cache is None:
            fresh = self._analyze_many(items, progress, keep_pickled=False)
            for (path, _, _, _), (_, _, failed) in zip(items, fresh, strict=True):
                self._settle(os.path.abspath(path), failed)
            return [model for model, _, _ in fresh]
        keys = [(absolute, self._digest(absolute, text)) for absolute, text in
                ((os.path.abspath(path), text) for path, text, _, _ in items)]
        models: list[FileModel | None] = [
            cache.get(absolute, key, item[0], item[2], item[3])
            for (absolute, key), item in zip(keys, items, strict=True)
        ]
        missing = [i for i, m in enumerate(models) if m is None]
        if missing:
            fresh = self._analyze_many([items[i] for i in missing], progress)
            for i, (model, blob, failed) in zip(missing, fresh, strict=True):
                models[i] = model
                self._settle(keys[i][0], failed)
                if not failed:
                    cache.put(keys[i][0], keys[i][1], model, blob, noqa_signature(items[i][1]))
        return [m for m in models if m is not None]  # all of them: every miss was analysed above

    def _analyze_many(self, items: list[tuple[str, str, str, bool]], progress: Callable[[int, int], None] | None,
                      keep_pickled: bool = True) -> list[tuple[FileModel, bytes | None, bool]]:
        """``analyze_many``, taking the models modelled together with other groups' files first."""
        answers = [self._modelled_together.take(item) for item in items]
        missing = [i for i, answer in enumerate(answers) if answer is None]
        if missing:
            fresh = analyze_many([items[i] for i in missing], self.jobs, self.budget, progress, keep_pickled)
            for i, answer in zip(missing, fresh, strict=True):
                answers[i] = answer
        return [a for a in answers if a is not None]  # all of them: each None was modelled above

    def _settle(self, absolute: str, failed: bool) -> None:
        if failed:
            self._unsettled.add(absolute)
        else:
            self._unsettled.discard(absolute)

    # ------------------------------------------------------------------ reading
    def _imports_of(self, absolute: str, text: str) -> tuple[list[str], bool]:
        """``module_names.imports_of(text)``, kept in the cache by the text's digest: naming any file reads the
        imports of every file of its project (on newton, about 0.1 s of each run that models a file)."""
        cache = self._cache
        if cache is None:
            return imports_of(text)
        digest = self._digest(absolute, text)
        known = cache.imports(absolute, digest)
        if known is None:
            known = imports_of(text)
            cache.keep_imports(absolute, digest, known)
        return known

    def _disk_text(self, absolute: str) -> str | None:
        """A file's text on disk, read once a session (the context files' reads)."""
        read = self._context_reads.get(absolute)
        if read is None:
            read = self._context_reads[absolute] = self.read(absolute)
        return read[0]

    def read(self, path: str) -> tuple[str | None, str | None]:
        """(text, None) or (None, the one-line reason); see ``sources.read_source``."""
        return read_source(path, self.config.max_file_size)

    def sized(self, text: str | None, error: str | None = None) -> tuple[str | None, str | None]:
        """(text, error) of a text that did not come from a file (stdin, an editor's document), under the
        ``max-file-size`` a file on disk has."""
        size = text_over_limit(text, self.config.max_file_size) if text is not None else None
        return (None, too_large(size, self.config.max_file_size)) if size is not None else (text, error)

    def load_external(self, module: str) -> FileModel | None:
        """Installed (non-project) module, read from disk and modelled; never imported."""
        if module in self._external:
            return self._external[module]
        self._external[module] = None
        path = locate_installed(module)
        if path is None:
            return None
        text, _error = self.read(path)
        if text is None:
            return None
        name, is_package = module, os.path.basename(path) == "__init__.py"
        if "warp" in text:
            model = self._analyze_all([(path, text, name, is_package)])[0]
        else:
            model = FileModel(path, name, is_package)
        self._external[module] = model
        return model

    def add_file(self, path: str, text: str | None, error: str | None = None) -> FileModel:
        return self.add_files([(path, text, error)])[0]

    def add_files(self, files: list[tuple[str, str | None, str | None]], importers_ahead: bool = False
                  ) -> list[FileModel]:
        """Model (path, text, error) triples: prefilter, cache, then parse the rest together.
        ``importers_ahead``: ``_parse_importers`` follows; the files it may choose among the texts no earlier run
        saw (a superset read from their import lines) are parsed in the same pool, not in a second one after it,
        and kept aside for it."""
        models: list[FileModel | None] = []
        todo: list[int] = []
        items: list[tuple[str, str, str, bool]] = []
        unparsed: list[tuple[str, str, str, bool]] = []
        changed = False
        # a file modelled before from another text: if its new model is the same (a comment, a blank at a line's
        # end, a docstring edited; any edit of a file without Warp that nothing parsed), the index and every fact
        # derived from it still hold
        earlier: dict[int, FileModel] = {}
        for path, text, error in files:
            absolute = os.path.abspath(path)
            known = self.models.get(absolute)
            if (known is not None and text is not None and known.path == path and self.texts.get(absolute) == text
                    and absolute not in self._unsettled):
                models.append(known)  # modelled already, from this text: keeps the index
                continue
            module, is_package = self.names.name_of(absolute)
            if text is not None and "warp" in text and known is not None and known.path == path and (
                    known.error is None and not known.rule_facts.get("unparsed") and absolute not in self._unsettled):
                earlier[len(models)] = known
            elif text is None or "warp" in text:
                changed = True
            if text is None:
                model = FileModel(path=path, module=module, is_package=is_package, error=error)
            elif "warp" in text:
                model = None
                todo.append(len(models))
                items.append((path, text, module, is_package))
            else:
                model = FileModel(path=path, module=module, is_package=is_package)
                model.rule_facts["unparsed"] = True
                if known is not None and model == known and absolute not in self._unsettled:
                    # still a file without Warp that nothing parsed: the index holds nothing of it (should a Warp
                    # file import it now, ``_parse_importers`` parses it and builds the index again)
                    model = known
                else:
                    changed = True
                if self._cache is None or not self._cache.knows(absolute, self._digest(absolute, text)):
                    # a text an earlier run saw was judged then: ``_parse_importers`` reads its kept model, or
                    # parses it after all should a changed Warp file import it now (rare: no pool ahead for it)
                    unparsed.append((path, text, module, is_package))
                if self._cache is not None:  # the next run can tell it did not change (_key_before_unchanged_models)
                    self._cache.remember(absolute, self._digest(absolute, text), module, is_package)
            models.append(model)
            if text is not None:
                self.texts[absolute] = text
        ahead = self._importer_candidates(items, unparsed) if importers_ahead else []
        analysed = self._analyze_all(items + ahead)
        for i, model in zip(todo, analysed, strict=False):
            known = earlier.get(i)
            same = known is not None and model == known
            changed |= known is not None and not same
            models[i] = known if same else model  # the same object: the index over it stays
        for (path, text, _, _), model in zip(ahead, analysed[len(items):], strict=True):
            self._ahead[os.path.abspath(path)] = (text, model)
        done = [m for m in models if m is not None]  # all of them: each None was in todo
        for (path, _, _), model in zip(files, done, strict=True):
            self.models[os.path.abspath(path)] = model
        if changed:
            self._index_changed()
        return done

    def _importer_candidates(self, warp_items: list[tuple[str, str, str, bool]],
                             unparsed: list[tuple[str, str, str, bool]]) -> list[tuple[str, str, str, bool]]:
        """The files of ``unparsed`` (no mention of warp) that ``_parse_importers`` may choose once the files
        of ``warp_items`` are modelled, read from import lines: a file whose module a Warp file imports from,
        or that imports a module whose text mentions warp. A superset as far as the import lines tell;
        ``_parse_importers`` decides on the models and parses any file this missed."""
        if not unparsed:
            return []
        warp_modules = {m.module for m in self.models.values() if m.mentions_warp and not m.error}
        warp_modules.update(module for _, _, module, _ in warp_items)
        imported_by_warp: set[str] = set()
        for m in self.models.values():
            if m.mentions_warp and not m.error:
                imported_by_warp.update(self._file_facts.cached(m, _imported_names))
        for path, text, module, is_package in warp_items:
            imported_by_warp |= self._import_lines.of_text(path, text, module, is_package)
        return [item for item in unparsed
                if item[2] in imported_by_warp or self._import_lines.of_text(*item) & warp_modules]

    def _parse_importers(self) -> None:
        """Files that never mention warp are parsed only if they import a project module
        that does something Warp-related (they may order its launches and option calls)."""
        warp_modules = {m.module for m in self.models.values() if m.mentions_warp and not m.error}
        if not warp_modules:
            self._ahead = {}
            return
        # Modules Warp code imports from may hold the constants it uses (block sizes, names).
        imported_by_warp: set[str] = set()
        for m in self.models.values():
            if m.mentions_warp and not m.error:
                imported_by_warp.update(self._file_facts.cached(m, _imported_names))
        ahead, self._ahead = self._ahead, {}
        chosen: list[str] = []
        for absolute, model in list(self.models.items()):
            if not model.rule_facts.get("unparsed"):
                continue
            if model.module in imported_by_warp or self._import_lines.of_text(
                    model.path, self.texts.get(absolute, ""), model.module, model.is_package) & warp_modules:
                chosen.append(absolute)
        for absolute, (_, model) in ahead.items():
            if absolute not in chosen and model.error is not None and model.error.startswith(FAILED_PREFIX):
                self._unsettled.discard(absolute)  # its model is the unparsed one, which is settled
        parsed_ahead = [a for a in chosen if a in ahead and ahead[a][0] == self.texts.get(a)
                        and a not in self._unsettled]
        for absolute in parsed_ahead:
            self.models[absolute] = ahead[absolute][1]
            self._index_changed()
        rest = [a for a in chosen if a not in parsed_ahead]
        items = [(self.models[a].path, self.texts.get(a, ""), self.models[a].module, self.models[a].is_package)
                 for a in rest]
        for absolute, model in zip(rest, self._analyze_all(items, "modelling files that import them"), strict=True):
            self.models[absolute] = model
            self._index_changed()

    def _index_changed(self) -> None:
        """The models changed: the index is built again when next asked. A front end that answers first and
        frees after (``retire_indexes``: an editor) gets the old one kept aside until ``free_retired`` or the
        next change."""
        if self.retire_indexes and self._project is not None:
            self._retired = self._project  # one kept aside at most: an older one is freed now
        self._project = None

    def free_retired(self) -> None:
        """Free the index kept aside (on newton, about 7 % of an edit's check in the editor, measured with py-spy),
        and those of the group indexes kept (a daemon's)."""
        self._retired = None
        for _, index in (self.group_indexes or {}).values():
            index._retired = None

    def project(self) -> Project:
        """The project index over the current models; built once until a model changes (flake8 and the
        editor check file after file against the same index, and its project-wide facts are not cheap)."""
        if self._project is None:
            from .index import CallResolution, KeptFacts, Project

            if self._kept_facts is None:
                self._kept_facts = KeptFacts()
                self._call_resolution = CallResolution()
            self._file_facts.keep_only(self.models.values())
            assert self._kept_facts is not None
            self._kept_facts.keep_only(self.models.values())
            carries = self.records_reads  # an editor's session: facts and resolved calls carried across its layers
            self._project = Project(self.models.values(), self.load_external, self.warp_environment,
                                    self.names.runs_as_main, self._file_facts, self._kept_facts if carries else None,
                                    self._call_resolution if carries else None)
        return self._project

    # ------------------------------------------------------------------ checking
    def check_model(self, model: FileModel, project: Project) -> list[Diagnostic]:
        absolute = os.path.abspath(model.path)
        ignored = self.config.ignored_for(absolute)
        text = self.texts.get(absolute, "")
        if model.error is not None:
            codes = frozenset({FileError.code})
            span = model.rule_facts.get("error_span", Span(1, 0, 1, 0))
            diagnostics = [self._diagnostic(FileError(), model.path, Report(span, model.error))]
        else:
            codes = self.enabled
            diagnostics = []
            if model.mentions_warp or not model.rule_facts.get("unparsed"):
                project_reports = self._project_reports(project)
                rules = [self.rules[code] for code in sorted(codes)
                         if not (ignored and any(code.startswith(i) for i in ignored))]
                own = (self._own_reports if self.records_reads else _checked)(rules, model, project)
                for rule, reports in zip(rules, own, strict=True):
                    for report in (*reports, *project_reports(rule).get(model.path, ())):
                        if report.deliberate is None or self.config.report_deliberate:  # opt-in (config.py)
                            diagnostics.append(self._diagnostic(rule, model.path, report))
        suppressions = self._suppressions_in(absolute, text)
        kept = [d for d in diagnostics if d.code in codes and not suppressions.suppressed(d.code, d.span.line)]
        if UnusedNoqa.code in codes and not any(UnusedNoqa.code.startswith(i) for i in ignored):
            kept.extend(d for d in self._unused_noqa(model.path, text, diagnostics, ignored)
                        if not suppressions.suppressed(d.code, d.span.line))
        unique: dict[tuple, Diagnostic] = {}
        for d in kept:
            unique.setdefault((d.path, d.span, d.code, d.message), d)
        return _bounded_per_line(sorted(unique.values(), key=Diagnostic.sort_key))

    def _suppressions_in(self, absolute: str, text: str) -> Suppressions:
        """The file's noqa comments, read once per text (a kept session checks every file again after an edit)."""
        known = self._suppressions.get(absolute)
        # (the text held is the current object, so an earlier equal one is not kept alive beside it)
        self._suppressions[absolute] = (text, known[1] if known is not None and known[0] == text
                                        else find_suppressions(text))
        return self._suppressions[absolute][1]

    def _unused_noqa(self, path: str, text: str, found: list[Diagnostic], ignored: tuple[str, ...]) -> list[Diagnostic]:
        """WC001, the engine's own finding: it needs every rule's findings on a line before suppression."""
        enabled = [c for c in self.enabled if not any(c.startswith(i) for i in ignored)]
        runtime = [c for c, r in self.rules.items() if r.runtime_only]
        unused = unused_codes(text, ((d.span.line, d.code) for d in found), enabled, self.rules, runtime)
        rule = self.rules[UnusedNoqa.code]
        return [self._diagnostic(rule, path, report) for report in unused_noqa_reports(text, unused)]

    @staticmethod
    def _own_reports(rules: list[Rule], model: FileModel, project: Project) -> tuple[tuple[Report, ...], ...]:
        """The rules' checks of one file, kept by an editor's session across edits while what they read holds (a
        check reads the project through its door alone, recorded: ``Layer.kept``); one fact for the file's rules,
        since most checks read little and each fact kept costs a look-up."""
        family = "checks " + " ".join(rule.code for rule in rules)
        return project.layer.kept(family, model, lambda _layer: _checked(rules, model, project))

    @staticmethod
    def _project_reports(project: Project) -> Callable[[Rule], dict[str, list[Report]]]:
        """rule -> ``rule.check_project`` once per project, grouped by file path: one table per project, found once
        per file checked, not once per file and rule (a re-check after an edit goes through every file's rules)."""
        by_code: dict[str, dict[str, list[Report]]] = project.cached("project reports", dict)

        def reports_of(rule: Rule) -> dict[str, list[Report]]:
            found = by_code.get(rule.code)
            if found is None:
                found = by_code[rule.code] = {}
                for file, report in rule.check_project(project):
                    found.setdefault(file.path, []).append(report)
            return found

        return reports_of

    def keeps(self, diagnostic: Diagnostic) -> bool:
        """Whether ignore / per-file-ignores / noqa let a finding made elsewhere (--confirm) through."""
        owner = self._owners.get(os.path.abspath(diagnostic.path), self)
        if owner is not self:  # governed by a nested config
            return owner.keeps(diagnostic)
        code = diagnostic.code
        ignored = (*self.config.ignore, *self.config.ignored_for(diagnostic.path))
        if any(code.startswith(i) or i == "ALL" for i in ignored):
            return False
        text = self.texts.get(os.path.abspath(diagnostic.path))
        if text is None:
            text, _ = self.read(diagnostic.path)
        return not find_suppressions(text or "").suppressed(code, diagnostic.span.line)

    @staticmethod
    def _diagnostic(rule: Rule, path: str, report: Report) -> Diagnostic:
        return Diagnostic(
            path=path, span=report.span, code=rule.code, name=rule.name, mechanism=rule.mechanism,
            message=report.message, confidence=report.data.get("confidence", rule.confidence), fix=report.fix,
            data={**report.data, **({"deliberate": report.deliberate} if report.deliberate else {})},
            related=report.related,
        )

    def lint_paths(self, *args, **kwargs) -> LintResult:
        """Lint files under ``paths``; see ``_lint_paths``."""
        try:
            with collector_paused():
                return self._lint_paths(*args, **kwargs)
        finally:
            # (a later run reads and walks again, unless ``run_again`` says otherwise)
            self._reads_kept, self._walked = frozenset(), None

    def _lint_paths(
        self,
        paths: list[str],
        stdin: tuple[str, str] | tuple[str, str | None, str | None] | None = None,
        *,
        cache: bool | None = None,
        cache_dir: str | None = None,
        jobs: int | None = None,
        project_context: bool = False,
        check_context: bool = False,
    ) -> LintResult:
        """Lint files under ``paths``; ``stdin`` is (display filename, text) for ``-``, or (display filename,
        None, why it was not read).

        ``cache``/``cache_dir``/``jobs`` override the session's settings for this call.
        ``project_context``: index each file with its project (``ProjectScope``), so that its
        cross-file facts do not depend on which other files were named; only the named files are
        reported. ``check_context``: check the project's other files too and keep their findings
        in the result cache (flake8 asks file by file: the next files are answered from there).
        """
        if cache is not None or cache_dir is not None:
            self.configure_cache(cache if cache is not None else self._cache is not None, cache_dir)
        if jobs is not None and jobs > 0:
            self.jobs = jobs
        # Each run of a kept session (a daemon's) asks for the same caches: kept, read again only where another
        # process wrote them since (every shard read back each run was a tenth of a daemon's run on newton).
        for models, results in self._caches.values():
            models.refresh()
            results.start_run()
        result = LintResult([])
        targets: list[str] = []
        files: list[tuple[str, str | None, str | None]] = []
        walked = [p for p in paths if p != "-"]
        shared = self._walked if self._walked is not None and walked == [self._walked[0]] else None
        # (the daemon's walk of this run, ``run_again``)
        listed: Iterable[str] = shared[1] if shared is not None else self.discovery.files(walked)
        for path in listed:
            if not os.path.lexists(path):
                result.errors.append(f"{path}: no such file or directory")
                continue
            absolute = os.path.abspath(path)
            known = self._context_reads.get(absolute) if absolute in self._reads_kept else None
            text, error = known if known is not None else self.read(path)
            self._context_reads.setdefault(absolute, (text, error))  # read once (module names)
            files.append((path, text, error))
            targets.append(absolute)
        if project_context and len(walked) == 1 and os.path.isdir(walked[0]) and not result.errors:
            self.scope.remember(walked[0], list(targets))  # one directory walked: its listing, as ProjectScope's
        result.notes.extend(shared[2] if shared is not None else self.discovery.notes)  # (made by the walk)
        if self.cache_note is not None:
            result.notes.append(self.cache_note)
        if stdin is not None and not (self.config.force_exclude and self.discovery.excluded(stdin[0])):
            # --force-exclude holds for the name stdin is checked as, as for a named path (ruff too)
            name, text, error = stdin if len(stdin) == 3 else (*stdin, None)
            text, error = self.sized(text, error)
            files.append((name, text, error))
            targets.append(os.path.abspath(name))
        result.paths = [path for path, _, _ in files]
        if project_context:
            groups = self._groups(files, paths)
            if len(groups) != 1 or sum(len(group) for _, group in groups.values()) != len(files) or any(
                    config is not self.config or self._environment_elsewhere(config, scope)
                    for (_, scope), (config, _) in groups.items()):
                return self._lint_groups(groups, result, check_context)
            self._project_context = True
            files += self._context_of(files)
        return self._lint_files(files, targets, result, check_context=check_context)

    def _groups(self, files: list[tuple[str, str | None, str | None]], paths: list[str]
                ) -> dict[tuple[int, tuple[str, bool]], tuple[Config, list[tuple[str, str | None, str | None]]]]:
        """The files by (the config that governs each, ``config_for``; the project it is indexed with):
        each group is linted with its own index, so a file's cross-file facts come from its project
        alone, whichever other files the run names (a directory of several projects, a nested config).
        A file found by a walk that its own config excludes is left out, as if that config had walked."""
        named = {os.path.normpath(p) for p in paths}
        groups: dict[tuple[int, tuple[str, bool]], tuple[Config, list[tuple[str, str | None, str | None]]]] = {}
        for item in files:
            config = self.config_for(item[0])
            child = self._child(config)
            if child is not self and os.path.normpath(item[0]) not in named and child.discovery.excluded(item[0]):
                continue
            groups.setdefault((id(config), child.scope.scope_of(item[0])), (config, []))[1].append(item)
        return groups

    def config_for(self, path: str) -> Config:
        """The config that governs ``path``: this session's, unless a front end that reads a config per
        file (the CLI, as ruff: the nearest ``[tool.warplint]``) sets ``configs``."""
        return self.configs(path) if self.configs is not None else self.config

    def _child(self, config: Config) -> Session:
        """The session of the files ``config`` governs (this one for its own config): its discovery,
        project scope and Warp environment, with this session's rules, texts and progress. Caches are
        one object per directory: two writing the same files would undo each other's entries."""
        known = self._children.get(id(config))
        if known is None:
            known = self if config is self.config else Session(config, self._rules, cache=False, jobs=self.jobs)
            if known is not self:
                known.progress, known.budget = self.progress, self.budget
                where = _cache.default_directory(config.root, config.cache_dir)
                if self._cache is not None and not _cache.leaves_root(where, config.root):
                    if where not in self._caches:
                        secret = self._cache.secret
                        self._caches[where] = (_cache.ModelCache(where, self._cache.salt, secret),
                                               _cache.ResultCache(where, self._cache.salt, secret))
                        self._caches[where][0].held = self._caches[where][1].held = self._writes_held
                    known._cache, known._results = self._caches[where]
            self._children[id(config)] = known
        return known

    def _environment_elsewhere(self, config: Config, scope: tuple[str, bool]) -> bool:
        """Whether the files of ``scope`` run against the Warp found from their own directory, not the root's:
        under a root that is no project (no config, no marker: merely where the run started), a folder's
        scripts are their own project, as when each is linted from there (its venv, its requirements)."""
        child = self._child(config)
        return not child.scope.root_is_project and os.path.abspath(scope[0]) != os.path.abspath(config.root)

    def _fork(self) -> Session:
        """A session like this one with an index of its own (models, project, installed modules)."""
        import copy

        index = copy.copy(self)
        index.models, index._project, index._external, index._unsettled, index._owners = {}, None, {}, set(), {}
        index.texts = {}  # its own: whether a model is current is judged by the text it was made from
        index._ahead, index._modelled_together = {}, ModelledTogether()
        index._project_context = True
        return index

    def release_index(self) -> None:
        """Let go of the models and the project index (the texts stay: reports and ``keeps`` read them)."""
        self.models, self._project, self._external, self._ahead = {}, None, {}, {}

    def _lint_groups(self, groups: dict, result: LintResult, check_context: bool) -> LintResult:
        """Each group linted with its own index; one result, as if one run."""
        cached = True
        planned = []
        for (_, scope), (config, files) in groups.items():
            index = self._group_index(config, scope)
            if index is None:
                index = self._child(config)._fork()
                if self.group_indexes is not None:
                    self.group_indexes[scope] = (config, index)
                if self._environment_elsewhere(config, scope):
                    index.warp_environment = warp_version.environment(scope[0], config.warp_version,
                                                                      config.warp_version_source)
            index.progress = self.progress
            planned.append((index, files, files + index._context_of(files)))
        if len(planned) > 1:
            self._model_groups_together([(index, every) for index, _, every in planned])
        for index, files, every in planned:
            targets = [os.path.abspath(path) for path, _, _ in files]
            part = index._lint_files(every, targets, LintResult([]), check_context=check_context)
            index._modelled_together = ModelledTogether()  # what it did not take is not kept
            self._owners.update((absolute, index) for absolute in targets)
            self.texts.update(index.texts)
            if not self.keep_indexes and self.group_indexes is None:
                index.release_index()
            result.files += part.files
            result.parsed += part.parsed
            result.diagnostics.extend(part.diagnostics)
            result.errors.extend(part.errors)
            result.notes.extend(note for note in part.notes if note not in result.notes)  # module naming
            cached = cached and part.cached
        result.cached = cached
        result.diagnostics.sort(key=Diagnostic.sort_key)
        return result

    def _group_index(self, config: Config, scope: tuple[str, bool]) -> Session | None:
        """The index a grouped run of this session built for ``scope`` under a config equal to ``config``, when
        the session keeps them (a daemon's): it runs again over the models it holds."""
        kept = self.group_indexes.get(scope) if self.group_indexes is not None else None
        if kept is None or kept[0] != config:
            return None
        index = kept[1]
        index.run_again(config, self._reads_kept)
        index.enabled = self.enabled  # (this run's codes: a daemon's flake8 run checks flake8's)
        return index

    def _model_groups_together(self, planned: list[tuple[Session, list[tuple[str, str | None, str | None]]]]
                               ) -> None:
        """Model the files every group's index will model, in one pool, before any group is linted: a group
        under ``PARALLEL_MIN_CHARS`` would otherwise be modelled serially after the one before it (Warp's tree
        is its package and a dozen loose example folders: about 6 s of a cold run's tail). Each index gets the
        items it will ask for, named as it names them; a file its cache already knows is left to the cache."""
        items: list[tuple[str, str, str, bool]] = []  # with repeats: a file one group lints is another's context
        for index, files in planned:
            warp_items: list[tuple[str, str, str, bool]] = []
            unparsed: list[tuple[str, str, str, bool]] = []
            for path, text, _ in files:
                if text is None:
                    continue
                absolute = os.path.abspath(path)
                if index._cache is not None and index._cache.knows(absolute, index._digest(absolute, text)):
                    continue
                module, is_package = index.names.name_of(absolute)
                (warp_items if "warp" in text else unparsed).append((path, text, module, is_package))
            items += warp_items + index._importer_candidates(warp_items, unparsed)
        wanted = Counter(items)
        if len(wanted) < 2:
            return
        shown = self.progress
        progress = (lambda done, total: shown(done, total, "modelling files")) if shown is not None else None
        keep_pickled = any(index._cache is not None for index, _ in planned)
        distinct = list(wanted)
        together = ModelledTogether(zip(distinct, analyze_many(distinct, self.jobs, self.budget, progress,
                                                               keep_pickled), strict=True), wanted)
        for index, _ in planned:
            index._modelled_together = together  # shared: each index takes its own copy of a model

    def _lint_files(self, files: list[tuple[str, str | None, str | None]], targets: list[str], result: LintResult,
                    check_context: bool) -> LintResult:
        run_key = None
        spelled = {os.path.abspath(path): path for path, _, _ in files}

        def answer(entry: dict) -> LintResult:
            for path, text, _ in files:
                if text is not None:
                    self.texts[os.path.abspath(path)] = text
            result.notes.extend(_naming_notes(entry.get("naming", {}), targets))
            for absolute in targets:
                parsed, diagnostics = entry["files"][absolute]
                result.files += 1
                result.parsed += parsed
                result.diagnostics.extend(_spelled(d, spelled) for d in diagnostics)
            result.diagnostics.sort(key=Diagnostic.sort_key)
            result.cached = True
            return result

        hit = None
        if self._results is not None:
            run_key = self._run_key(files)
            hit = self._usable_result(run_key, targets)
            if hit is not None and all(a in hit["files"] for a in targets):
                return answer(hit)
            # Files changed. If their models did not (a comment, a blank line at the end) and neither did
            # their noqa lines, nothing the findings read changed: those of the texts before still hold.
            before = self._key_before_unchanged_models(files)
            same = self._usable_result(before, targets) if before is not None else None
            if same is not None and all(a in same["files"] for a in targets):
                self._results.put(run_key, same)
                self.save_cache()  # the changed files' models, under their new digests
                return answer(same)
        self.add_files(files, importers_ahead=True)
        self._parse_importers()
        project = self.project()
        checked: dict[str, tuple[bool, list[Diagnostic]]] = {}
        for absolute in (list(spelled) if check_context and run_key is not None else targets):
            model = self.models[absolute]
            checked[absolute] = (not model.rule_facts.get("unparsed"), self.check_model(model, project))
        naming = {a: note for a in checked if (note := self._naming_guess(a))}
        result.notes.extend(_naming_notes(naming, targets))
        for absolute in targets:
            parsed, diagnostics = checked[absolute]
            result.files += 1
            result.parsed += parsed
            result.diagnostics.extend(diagnostics)
        result.diagnostics.sort(key=Diagnostic.sort_key)
        self.save_cache()  # after the rules: installed packages they read are cached too
        if run_key is not None and self._results is not None and not self._unsettled:
            externals = [(m.path, _cache.file_digest(m.path)) for m in self._external.values() if m is not None]
            # Modules not found now are re-looked-up on use (one may have been installed since).
            missing = sorted(name for name, m in self._external.items() if m is None)
            stored = dict(hit["files"]) if hit is not None else {}  # the other files' findings stay valid
            stored.update((a, (parsed, [_absolute(d) for d in found])) for a, (parsed, found) in checked.items())
            naming = {**(hit.get("naming", {}) if hit is not None else {}), **naming}
            self._results.put(run_key, {"files": stored, "externals": externals, "missing": missing,
                                        "naming": naming})
        return result

    def _naming_guess(self, absolute: str) -> str | None:
        """A note when the file's module name rests on a guess at how the program runs (``ModuleNames.guess``)."""
        guess = self.names.guess(absolute)
        if guess is None:
            return None
        folder, what = guess
        here = os.getcwd()
        shown = os.path.relpath(folder) if folder == here or folder.startswith(here.rstrip(os.sep) + os.sep) else folder
        return f"{shown}: {what}"

    def _usable_result(self, key: str, targets: list[str]) -> dict | None:
        entry = self._results.get(key) if self._results is not None else None
        if entry is not None and any(locate_installed(name) for name in entry["missing"]):
            return None  # a module looked for and not found then is installed now
        return entry

    def _key_before_unchanged_models(self, files: list[tuple[str, str | None, str | None]]) -> str | None:
        """The result key of the texts the changed files had when their cached models were built, when
        every changed file is a Warp file whose new model equals that one and whose noqa lines are the
        same (suppressions and WC001 read the text; rules read models only). The changed files are
        modelled here (the run would model them anyway). None when any of that does not hold."""
        cache = self._cache
        if cache is None:
            return None
        changed: list[tuple[str, str | None, str | None]] = []
        earlier: dict[str, tuple[str, str, FileModel]] = {}
        cache.load()
        for path, text, error in files:
            absolute = os.path.abspath(path)
            if text is None:
                continue
            entry = cache.entries.get(absolute)
            if entry is not None and len(entry) == 5 and entry[0] == self._digest(absolute, text):
                continue  # unchanged
            if "warp" not in text:
                return None  # whether it is parsed depends on its imports: not judged here
            known = cache.previous(absolute)
            if known is None:
                return None  # a new file
            earlier[absolute] = known
            changed.append((path, text, error))
        if not changed or len(changed) > MAX_UNCHANGED_CHECKS:
            return None
        for model, (path, text, _) in zip(self.add_files(changed), changed, strict=True):
            _, old_noqa, old_model = earlier[os.path.abspath(path)]
            old_model.path = model.path
            if old_model != model or old_noqa != noqa_signature(text or ""):
                return None
        return self._run_key(files, {a: known[0] for a, known in earlier.items()})

    def _context_of(self, files: list[tuple[str, str | None, str | None]]
                    ) -> list[tuple[str, str | None, str | None]]:
        """(path, text, error) of the files ``files`` are indexed with (``ProjectScope``) and that are not
        among them; each read once per session (a flake8 run, an editor session)."""
        named = {os.path.abspath(path) for path, _, _ in files}
        context: list[tuple[str, str | None, str | None]] = []
        listed: set[int] = set()  # the files of a project share one listing: each is gone through once
        for path, _, _ in files:
            listing = self.scope.files_for(path)
            if id(listing) in listed:
                continue
            listed.add(id(listing))
            for absolute in listing:
                if absolute in named:
                    continue
                named.add(absolute)
                read = self._context_reads.get(absolute)
                if read is None:
                    read = self._context_reads[absolute] = self.read(absolute)
                context.append((absolute, *read))
        return context

    def recheck(self, paths: list[str], changed: dict[str, str]) -> list[Diagnostic]:
        """The findings of ``paths`` once the files in ``changed`` hold their new text (in memory only):
        how fixes are linted again before anything is written."""
        with collector_paused():
            return self._recheck_grouped(paths, changed)

    def _recheck_grouped(self, paths: list[str], changed: dict[str, str]) -> list[Diagnostic]:
        if self._owners:  # a grouped run: each file in the index it was checked in
            by_index: dict[int, tuple[Session, list[str]]] = {}
            for path in paths:
                index = self._owners.get(os.path.abspath(path), self)
                by_index.setdefault(id(index), (index, []))[1].append(path)
            found = []
            for index, group in by_index.values():
                if index is self:
                    found.extend(self._recheck(group, changed))
                    continue
                mine = {p: t for p, t in changed.items()
                        if self._owners.get(os.path.abspath(p)) is index or os.path.abspath(p) in index.models}
                found.extend(index.recheck(group, mine))
                self.texts.update((os.path.abspath(p), t) for p, t in mine.items())
            return sorted(found, key=Diagnostic.sort_key)
        return self._recheck(paths, changed)

    def _recheck(self, paths: list[str], changed: dict[str, str]) -> list[Diagnostic]:
        files: list[tuple[str, str | None, str | None]] = [(path, text, None) for path, text in changed.items()]
        for path in paths:
            absolute = os.path.abspath(path)
            if path not in changed and absolute not in self.models:  # a result-cache hit models nothing
                known = self.texts.get(absolute)
                files.append((path, known, None) if known is not None else (path, *self.read(path)))
        if self._project_context:  # the same index the run had
            files += self._context_of(files)
        self.add_files(files, importers_ahead=True)
        self._parse_importers()
        project = self.project()
        found = [d for path in paths for d in self.check_model(self.models[os.path.abspath(path)], project)]
        return sorted(found, key=Diagnostic.sort_key)

    def check_text(self, path: str, text: str) -> list[Diagnostic]:
        """Re-check one (possibly unsaved) file against the project index (the editor): the files it is
        indexed with (``ProjectScope``, as the CLI indexes it) are modelled on first use."""
        with collector_paused():  # an editor's check: each collection would scan the new facts (half its time)
            return self._check_text(path, text)

    def _check_text(self, path: str, text: str) -> list[Diagnostic]:
        self.records_reads = True
        self.index_context(path)
        absolute = os.path.abspath(path)
        known = self.models.get(absolute)
        if (known is not None and self.texts.get(absolute) == text and known.error is None
                and not known.rule_facts.get("unparsed")):
            return self.check_model(known, self.project())  # unchanged since it was indexed: reuse both
        model = self.add_file(path, *self.sized(text))
        if model.rule_facts.get("unparsed") and model.error is None:
            self._parse_importers()
            model = self.models[os.path.abspath(path)]
        return self.check_model(model, self.project())

    def unindexed(self, path: str) -> int:
        """How many of the files ``path`` is indexed with are not modelled yet."""
        absolute = os.path.abspath(path)
        return sum(p not in self.models for p in self.scope.files_for(path) if p != absolute)

    def check_alone(self, path: str, text: str) -> list[Diagnostic]:
        """The findings of ``path`` from its own facts only, no other file indexed (what an editor shows
        while the project index is built)."""
        # the project's import evidence is the index's to read: module names from the files beside it
        self.names = self.names.narrowed(self.scope.beside)
        model = self.add_file(path, *self.sized(text))
        return self.check_model(model, self.project())

    def index_context(self, path: str) -> None:
        """Model the files ``path`` is indexed with that are not modelled yet (read from disk)."""
        context = [item for item in self._context_of([(path, None, None)])
                   if os.path.abspath(item[0]) not in self.models]
        if context:
            with collector_paused():  # models read back or parsed: millions of acyclic objects
                self.add_files(context, importers_ahead=True)
                self._parse_importers()
                self.save_cache()

    def index_root(self) -> None:
        """Model every file under the config root (for editors and flake8)."""
        files = []
        for path in self.discovery.files([self.config.root]):
            if os.path.abspath(path) not in self.models:
                text, error = self.read(path)
                files.append((path, text, error))
        self.add_files(files, importers_ahead=True)
        self._parse_importers()
        self.save_cache()

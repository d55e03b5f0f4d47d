"""Command line: ``warplint [PATH ...]``, ``warplint rule CODE``, ``warplint server``.

Exit codes (as ruff): 0 no findings, 1 findings, 2 usage, configuration or internal error.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import math
import os
import shlex
import shutil
import sys
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, NoReturn, TextIO

from . import __version__, interrupts
from .config import Config, ConfigError, _positive, load_config, validate_selectors
from .interrupts import Terminated
from .progress import ProgressBar, erase_progress
from .progress import wanted as progress_wanted
from .registry import all_rules, selection_table
from .report import COLORS, FORMATS, HUMAN_FORMATS, PLAIN, STATISTICS_FORMATS, WRITERS, shown_path, write_statistics
from .rule import Rule
from .sources import read_source

if TYPE_CHECKING:
    from .engine import Session

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


class UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("allow_abbrev", False)  # `--stat` is a typo, not --statistics (ruff takes no prefixes)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:  # one line, exit 2 (argparse would print usage too)
        import difflib

        unknown = [w for w in message.partition("unrecognized arguments: ")[2].split() if w.startswith("--")]
        options = [o for action in self._actions for o in action.option_strings if o.startswith("--")]
        close = next((m for w in unknown for m in difflib.get_close_matches(w.partition("=")[0], options, n=1,
                                                                            cutoff=0.6)), None)
        raise UsageError(message + (f"; did you mean `{close}`?" if close else ""))


def _csv(value: str) -> list[str]:
    return [v.strip() for v in value.split(",") if v.strip()]


def _seconds(value: str) -> float:
    """A finite number of seconds > 0 (``nan`` and ``inf`` parse as floats but would mean no timeout)."""
    try:
        seconds = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {value!r}") from None
    if not (math.isfinite(seconds) and seconds > 0):
        raise argparse.ArgumentTypeError(f"must be a finite number of seconds > 0, got {value!r}")
    return seconds


# The subcommands ``main`` dispatches on (name, what it does); listed by ``warplint --help``.
COMMANDS = (
    ("check", "lint PATHs (the default command: `warplint src/` is `warplint check src/`)"),
    ("rule", "a rule's documentation, by code or name (`warplint rule WC101`); --all lists them"),
    ("server", "the language server for editors, on stdio (needs the [lsp] extra)"),
    ("compare", "compare two --confirm artifacts: BASELINE.json CANDIDATE.json (cold-start cost, same workload?)"),
    ("daemon", "the project's daemon that --daemon runs ask: `warplint daemon status|stop [PATH]`"),
)


def _commands_help() -> str:
    width = max(len(name) for name, _ in COMMANDS)
    return "commands:\n" + "".join(f"  warplint {name:{width}}  {text}\n" for name, text in COMMANDS)


def check_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="warplint", description="Find code that makes NVIDIA Warp compile more than it must.",
                epilog=_commands_help(), formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("paths", nargs="*", help="files, directories or globs to check (default: .); '-' reads stdin")
    # Repeatable and comma-separated: every occurrence adds to the list (as ruff).
    p.add_argument("--select", type=_csv, action="extend", metavar="CODES",
                   help="rule codes or prefixes to enable (replaces the default set)")
    p.add_argument("--extend-select", type=_csv, action="extend", default=[], metavar="CODES",
                   help="rule codes or prefixes to enable in addition")
    p.add_argument("--ignore", type=_csv, action="extend", default=[], metavar="CODES",
                   help="rule codes or prefixes to disable")
    p.add_argument("--format", choices=FORMATS, default="text", help="output format (default: text)")
    p.add_argument("--output-file", "-o", help="write the report here instead of stdout")
    p.add_argument("--statistics", action="store_true", help="print the number of findings per rule")
    p.add_argument("--exit-zero", action="store_true", help="exit 0 even when there are findings")
    p.add_argument("--config", help="path to a pyproject.toml to read [tool.warplint] from")
    p.add_argument("--stdin-filename", help="read stdin, reported under this name (as ruff: implies '-')")
    p.add_argument("--no-cache", action="store_true", help="do not read or write the cache")
    p.add_argument("--report-deliberate", action="store_true", default=None,
                   help="also report deliberate cold starts (cache clears in tests and benchmarks)")
    p.add_argument("--cache-dir", help="cache directory (default: .warplint_cache next to the config)")
    p.add_argument("--daemon", action=argparse.BooleanOptionalAction, default=None,
                   help="have the project's daemon answer (started on first use; it keeps the project's index "
                        "between runs); default: `daemon` in [tool.warplint], off")
    p.add_argument("--jobs", "-j", type=int, default=None, help="worker processes (default: number of cores)")
    p.add_argument("--warp-version", type=_warp_version, metavar="X.Y[.Z]",
                   help="the Warp the code runs against (default: found from the project, see docs/warp-versions.md)")
    p.add_argument("--confirm", action="store_true", help="run the program after `--` to confirm findings")
    p.add_argument("--confirm-timeout", type=_seconds, default=None, help="seconds per --confirm run (default 300)")
    p.add_argument("--keep-artifacts", metavar="DIR", help="keep --confirm's JSON artifact and logs in DIR")
    _confirm_profiling_options(p)
    p.add_argument("--fix", action="store_true", help="apply the safe fixes (stdin: print the fixed code)")
    p.add_argument("--unsafe-fixes", action="store_true", help="with --fix/--diff, apply the unsafe fixes too")
    p.add_argument("--diff", action="store_true", help="print the diff --fix would apply; change nothing")
    p.add_argument("--show-fixes", action="store_true", help="list the fixes applied (or, without --fix, available)")
    files = p.add_argument_group("which files")
    files.add_argument("--exclude", type=_csv, action="extend", metavar="PATTERNS",
                       help="gitignore-style patterns to skip (replaces the config's `exclude`)")
    files.add_argument("--extend-exclude", type=_csv, action="extend", metavar="PATTERNS",
                       help="patterns to skip in addition to `exclude`")
    files.add_argument("--force-exclude", action="store_true", default=None,
                       help="apply the exclude patterns to paths named on the command line too (pre-commit)")
    files.add_argument("--per-file-ignores", type=_per_file_ignores, action="extend", metavar="GLOB:CODES",
                       help="`tests/*:WC201,WC501` (replaces the config's `per-file-ignores`)")
    files.add_argument("--extend-per-file-ignores", type=_per_file_ignores, action="extend", metavar="GLOB:CODES",
                       help="like --per-file-ignores, in addition to the config's")
    shown = p.add_argument_group("output")
    shown.add_argument("--color", choices=("auto", "always", "never"), default="auto",
                       help=f"colour the {' and '.join(HUMAN_FORMATS)} output (auto: on a terminal, unless "
                            "NO_COLOR is set; FORCE_COLOR forces it)")
    shown.add_argument("-q", "--quiet", action="store_true", help="print the findings only (no summary, no notes)")
    shown.add_argument("-v", "--verbose", action="store_true",
                       help="say on stderr what was checked: files, cache use, time")
    shown.add_argument("--show-settings", action="store_true",
                       help="print the settings in effect, and where each comes from, then exit")
    shown.add_argument("--show-files", action="store_true", help="print the files that would be checked, then exit")
    shown.add_argument("--add-noqa", action="store_true",
                       help="add `# noqa: CODE` to every line with a finding (a baseline for legacy code)")
    shown.add_argument("--watch", "-w", action="store_true",
                       help="check again whenever a Python file or config under the paths changes (Ctrl-C stops)")
    p.add_argument("--generate-shell-completion", choices=("bash", "zsh", "fish"), metavar="{bash,zsh,fish}",
                   help="print a completion script for the shell, then exit")
    p.add_argument("--version", action="version", version=f"warplint {__version__}")
    return p


def _per_file_ignores(value: str) -> list[tuple[str, str]]:
    """``GLOB:CODES`` pairs, comma-separated: ``tests/*:WC201,WC501`` or ``a/*:WC201,b/*:WC501``
    (a piece without a colon is one more code for the glob before it)."""
    pairs: list[tuple[str, str]] = []
    for piece in _csv(value):
        glob, colon, code = piece.rpartition(":")
        if colon:
            pairs.append((glob.strip(), code.strip()))
        elif pairs:
            pairs.append((pairs[-1][0], piece))
        else:
            raise argparse.ArgumentTypeError(f"expected GLOB:CODES (e.g. 'tests/*:WC201'), got {value!r}")
        if not pairs[-1][0] or not pairs[-1][1]:
            raise argparse.ArgumentTypeError(f"expected GLOB:CODES (e.g. 'tests/*:WC201'), got {value!r}")
    return pairs


def rule_command(argv: Sequence[str], out: TextIO) -> int:
    p = _Parser(prog="warplint rule", description="Show a rule's documentation.")
    p.add_argument("code", nargs="?", help="rule code or name, e.g. WC101 or kernel-joins-loaded-module")
    p.add_argument("--all", action="store_true", help="list every rule")
    p.add_argument("--format", choices=("text", "markdown", "json"), default="text",
                   help="text: styled on a terminal, Markdown when piped (default); markdown: always Markdown")
    p.add_argument("--color", choices=("auto", "always", "never"), default="auto",
                   help="style the text on a terminal (auto: unless NO_COLOR is set)")
    args = p.parse_args(argv)
    rules = all_rules()
    if args.all:
        if args.format == "json":
            import json

            json.dump([_rule_json(r) for r in rules.values()], out, indent=2)
            out.write("\n")
            return EXIT_CLEAN
        out.write(f"{'code':6}  {'name':42}  {'mech':6}  {'default':8}  {'confidence':10}  summary\n")
        for r in rules.values():
            default = "runtime" if r.runtime_only else ("on" if r.default_enabled else "opt-in")
            out.write(f"{r.code:6}  {r.name:42}  {r.mechanism:6}  {default:8}  {r.confidence:10}  {r.summary}\n")
        return EXIT_CLEAN
    if not args.code:
        raise UsageError("give a rule code (e.g. `warplint rule WC101`) or --all")
    rule = find_rule(args.code, rules)
    if args.format == "json":
        import json

        json.dump(_rule_json(rule), out, indent=2)
        out.write("\n")
    else:
        from .docs import markdown_for_terminal, rule_markdown

        text = rule_markdown(rule) + f"\nWarp facts used here: {_warp_facts_here()}\n"
        styled = args.format == "text" and use_color(args.color, out)
        out.write(markdown_for_terminal(text) if styled else text)
    return EXIT_CLEAN


def _warp_version(value: str) -> str:
    from .config import requested_warp_version

    try:
        return requested_warp_version(value, "--warp-version")
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _warp_facts_here() -> str:
    """Which Warp's facts a lint of the current directory would use (warplint/warp_version.py)."""
    from .warp_version import environment

    try:
        config = load_config(os.getcwd(), set(all_rules()))
    except ConfigError as exc:
        return f"cannot tell ({exc})"
    return environment(config.root, config.warp_version, config.warp_version_source).facts().describe()


def find_rule(wanted: str, rules: dict) -> Rule:
    """The rule with code or kebab name ``wanted`` (any case; ``_`` for ``-`` too), else a
    usage error with the closest codes and names."""
    key = wanted.strip().lower().replace("_", "-")
    for rule in rules.values():  # names are unique (tests/test_cli_polish.py)
        if key in (rule.code.lower(), rule.name):
            return rule
    import difflib

    names = [r.code for r in rules.values()] + [r.name for r in rules.values()]
    close = difflib.get_close_matches(key.upper() if key.startswith("wc") else key, names, n=3, cutoff=0.6)
    hint = f"; did you mean {' or '.join(f'`{c}`' for c in close)}?" if close else ""
    raise UsageError(f"unknown rule {wanted!r}{hint} (see `warplint rule --all`)")


def _rule_json(rule) -> dict:
    return {
        "code": rule.code, "name": rule.name, "mechanism": rule.mechanism, "summary": rule.summary,
        "confidence": rule.confidence, "default_enabled": rule.default_enabled,
        "runtime_only": rule.runtime_only, "doc": rule.doc(),
    }


def _split_confirm_command(argv: list[str]) -> tuple[list[str], list[str] | None]:
    if "--" in argv:
        i = argv.index("--")
        return argv[:i], argv[i + 1 :]
    return argv, None


def check_command(argv: list[str], out: TextIO, err: TextIO, sessions: Any = None) -> int:
    """``warplint check ARGV``. ``sessions``: the daemon's (``daemon_server.Sessions``), when it runs this."""
    started = time.monotonic()
    argv, command = _split_confirm_command(list(argv))
    parser = check_parser()
    args = parser.parse_args(argv)
    _check_flags(args)
    rules = selection_table(kept=not args.no_cache)  # not the rules: a run the result cache answers imports none
    known = set(rules)
    if args.generate_shell_completion:
        from .completion import script

        out.write(script(args.generate_shell_completion, parser, [*known, "ALL"], [name for name, _ in COMMANDS]))
        return EXIT_CLEAN
    if args.watch:
        if "-" in args.paths or args.stdin_filename or args.fix or args.diff or args.confirm or args.add_noqa:
            raise UsageError("--watch checks files on disk: it does not combine with stdin, --fix, --diff, "
                             "--add-noqa or --confirm")
        from .watch import watch

        again = [a for a in argv if a not in ("--watch", "-w")]
        return watch(lambda: _checked(again, out, err), args.paths or ["."], out)
    paths = args.paths or ["."]
    if args.stdin_filename and "-" not in args.paths:
        # As ruff: --stdin-filename means the file comes on stdin; paths given besides are not read.
        err.writelines(f"warplint: note: ignoring {shown_path(path)} in favour of stdin (--stdin-filename)\n"
                       for path in args.paths)
        paths = ["-"]
    if args.cache_dir is not None and "\0" in args.cache_dir:
        raise UsageError("--cache-dir: the path holds a NUL byte")
    if "-" in paths and not args.stdin_filename:
        args.stdin_filename = "stdin.py"
    start = args.stdin_filename if "-" in paths else paths[0]
    start = start if os.path.exists(start) else os.getcwd()
    select = tuple(validate_selectors("--select", args.select, known)) if args.select is not None else None
    extend_select = tuple(validate_selectors("--extend-select", args.extend_select, known))
    ignore = tuple(validate_selectors("--ignore", args.ignore, known))

    def with_options(config: Config) -> Config:
        """``config`` under the command line's options (they override every config, nested ones too)."""
        config = config.with_overrides(
            select=select, extend_select=tuple(config.extend_select) + extend_select,
            ignore=tuple(config.ignore) + ignore, cache_dir=args.cache_dir, report_deliberate=args.report_deliberate,
            warp_version=args.warp_version, warp_version_source="--warp-version" if args.warp_version else None,
        )
        return _file_overrides(config, args, known)

    config = with_options(load_config(start if os.path.isdir(start) else os.path.dirname(os.path.abspath(start)),
                                      known, args.config))
    if args.confirm and not command and not config.confirm.get("command"):
        raise UsageError("--confirm needs a command: `warplint PATH --confirm -- python -m app`, "
                         "or [tool.warplint.confirm] command = ...")
    if command is not None and not args.confirm:
        raise UsageError("a command after `--` is only used with --confirm")
    if args.confirm and (args.fix or args.diff):
        raise UsageError("--fix and --diff do not combine with --confirm (it runs the code as it is)")
    confirm_plan = _confirm_plan(args, config, command) if args.confirm else None  # bad settings fail before the lint
    if confirm_plan is not None:  # module names follow the run (`python -m pkg.main` imports through the cwd)
        config = config.with_overrides(run_command=tuple(confirm_plan[0]), run_cwd=os.getcwd())
    if confirm_plan is not None and not command and not args.quiet:  # a cloned project's command: say what runs
        err.write(f"warplint: note: --confirm runs [tool.warplint.confirm] command from "
                  f"{shown_path(config.source or 'the config')}: {shlex.join(confirm_plan[0])}\n")
    profiling = _confirm_profiling(args)
    if profiling and not args.confirm:
        raise UsageError(f"{', '.join(sorted(profiling))} only work with --confirm")

    if args.show_settings:
        return _show_settings(config, args, rules, out)

    stdin = None
    stdin_bytes: list[bytes] = []
    wants_daemon = sessions is None and _daemon_wanted(args, config, paths)
    if wants_daemon:
        # A daemon that runs answers first: it knows what changed from the files' stamps against its index (a
        # tenth of a second when nothing did), where looking in the result cache here first costs as much again
        # before an edit's run.
        answered = _ask_daemon(config, argv, args, out, err, start=False)
        if answered is not None:
            return answered
    # the daemon's client looked in the result cache before it asked (the same files, a moment ago): a run the
    # daemon answers does not read that file again (it grows with the runs a session makes: 16 runs' findings)
    result = _warm_result(args, config, paths, rules) if sessions is None else None
    session: Session | None = None
    if result is not None:  # nothing changed since the last run: no engine, no rule, no file read
        texts: dict[str, str] = {}

        def source(path: str) -> str | None:  # read for the report only, the files with findings
            absolute = os.path.abspath(path)
            if absolute not in texts:
                texts[absolute] = read_source(absolute, config.max_file_size)[0] or ""
            return texts[absolute]
    elif wants_daemon:  # none ran: one is started, which indexes the project
        answered = _ask_daemon(config, argv, args, out, err)
        if answered is not None:
            return answered
    if result is None:
        from .engine import Session

        def new_session() -> Session:
            return Session(config, cache=not args.no_cache)

        session = sessions.session(config, not args.no_cache, new_session) if sessions is not None else new_session()
        session.keep_indexes = bool(args.fix or args.diff)  # the fixes' rounds re-check each group's index
        if args.config is None:  # as ruff: each file under the nearest [tool.warplint] (a nested project's own)
            session.configs = nearest_configs(config, known, with_options)
        if args.show_files:
            return _show_files(session, paths, out, err)
        bar = ProgressBar(err) if progress_wanted(err) and not args.quiet else None
        session.progress = bar
        if "-" in paths:
            stdin = (args.stdin_filename, *_read_stdin(stdin_bytes, config.max_file_size))
        # every file with its project's cross-file facts, as flake8, pre-commit and the editor see it
        result = session.lint_paths(paths, stdin=stdin, project_context=True, **_engine_options(args))
        if bar is not None:
            bar.close()
        texts = session.texts

        def source(path: str) -> str | None:
            return texts.get(os.path.abspath(path))
    for message in [] if args.quiet else result.notes:
        err.write(f"warplint: note: {message}\n")
    for message in result.errors:
        err.write(f"warplint: error: {message}\n")
    if not result.files and stdin is None and not result.errors and not args.quiet:
        err.write("warplint: warning: No Python files found under the given path(s)\n")
    diagnostics = result.diagnostics
    if args.add_noqa and session is not None:
        return _add_noqa(session, diagnostics, err)
    fixes = None
    if (args.diff or args.fix) and session is not None:
        from . import fixes as _fixes

        fixes = _fixes.fix_session(session, result, unsafe=args.unsafe_fixes)
        if args.diff:
            return _write_diff(fixes, out, err)
        diagnostics = result.diagnostics = _write_fixes(fixes, stdin, stdin_bytes, out, err, result.errors,
                                                        result.diagnostics, config.root)
        for path, (original, _) in fixes.texts.items():
            if path not in fixes.fixed:  # not written: its findings are shown on the text it still holds
                texts[os.path.abspath(path)] = original
        result.fixed = fixes.fixed_count
        if stdin is not None:
            out = err  # stdout holds the fixed code; the findings left go to stderr (as ruff)

    status = EXIT_ERROR if result.errors else EXIT_CLEAN
    confirm_result = None
    if confirm_plan is not None and session is not None:
        confirm_result = _run_confirm(args, confirm_plan, diagnostics)
        if confirm_result is not None:
            runtime = [d for d in confirm_result.runtime_findings if session.keeps(d)]
            diagnostics = sorted(list(confirm_result.diagnostics) + runtime, key=lambda d: d.sort_key())

    stream = _open_output(args.output_file) if args.output_file else _lenient(out)
    palette = COLORS if use_color(args.color, stream) and args.format in HUMAN_FORMATS else PLAIN
    try:
        if confirm_result is not None and args.format == "json":
            # With --confirm the JSON document is an object: the findings plus the run summary.
            import json

            from .report import to_json_objects

            json.dump({"findings": to_json_objects(diagnostics, config.rule_url), "confirm": confirm_result.to_json()},
                      stream, indent=2, default=str)
            stream.write("\n")
        elif args.statistics:  # the table instead of the findings, as ruff
            write_statistics(diagnostics, stream, args.format, args.unsafe_fixes, palette)
        else:
            WRITERS[args.format](diagnostics, stream, sources=source, root=config.root, palette=palette,
                                 rule_url_template=config.rule_url, unsafe_fixes=args.unsafe_fixes)
        if args.show_fixes:
            from . import fixes as _fixes

            listing = _fixes.fix_summary(fixes.fixed) if fixes is not None else _fixes.available_summary(
                diagnostics, args.unsafe_fixes)
            (stream if args.format in HUMAN_FORMATS else err).write(listing)
        if confirm_result is not None and args.format in HUMAN_FORMATS:
            from .confirm import render_summary

            summary = render_summary(confirm_result)
            stream.write(summary if summary.endswith("\n") else summary + "\n")
        if args.format in HUMAN_FORMATS and not args.quiet:
            stream.write(summary_line(diagnostics, result, args.unsafe_fixes) + "\n")
        stream.flush()  # a full disk shows here, not at exit
    except BrokenPipeError:
        raise
    except OSError as exc:
        raise UsageError(f"cannot write {args.output_file or 'the report'}: {exc.strerror or exc}") from None
    finally:
        if stream is not out:
            with contextlib.suppress(OSError):  # a failed write, already reported, fails the close again
                stream.close()
    if confirm_result is not None and confirm_result.failed:
        err.write(f"warplint: error: --confirm: {confirm_result.failed}\n")
        for line in (confirm_result.last_output or [])[-20:]:
            err.write(f"  | {line}\n")
        return EXIT_ERROR
    if status == EXIT_CLEAN and diagnostics and not args.exit_zero:
        status = EXIT_FINDINGS
    if args.verbose:
        _write_verbose(session, result, time.monotonic() - started, err)
    return status


def _daemon_wanted(args, config: Config, paths: list[str]) -> bool:
    """Whether this run is the daemon's to answer: asked for (``--daemon``, else the config's ``daemon`` outside
    CI), and a run that only reports the files on disk (not stdin, --fix, --diff, --add-noqa, --confirm,
    --no-cache)."""
    if args.daemon is not None:
        wanted = args.daemon
    else:
        from .daemon import in_ci

        wanted = config.daemon and not in_ci()
    return bool(wanted) and _only_reports_files(args, paths)


def _only_reports_files(args, paths: list[str]) -> bool:
    """A run that reports findings of files on disk and changes nothing: not stdin, --fix, --diff, --add-noqa,
    --confirm, --show-files, --no-cache (what the warm path and the daemon may answer)."""
    return not (args.no_cache or args.fix or args.diff or args.add_noqa or args.confirm or args.show_files
                or "-" in paths)


def _ask_daemon(config: Config, argv: list[str], args, out: TextIO, err: TextIO, start: bool = True) -> int | None:
    """The run answered by the project's daemon (started when none runs, if ``start``); None when it cannot answer
    (the run goes on here, saying why under --verbose, unless only none ran)."""
    from . import daemon

    if args.color == "auto" and not args.output_file and use_color("auto", out):
        argv = [*argv, "--color", "always"]  # the daemon writes into a buffer, not to this terminal

    def starting() -> None:  # said before its first answer, which indexes the project
        if not args.quiet:
            err.write(f"warplint: note: starting a daemon for {shown_path(config.root)}; it keeps the project's "
                      "index for the next runs (`warplint daemon stop` stops it)\n")
            err.flush()

    try:
        status, found_out, found_err = daemon.ask(config.root, argv, starting, start)
    except daemon.NotRunning:
        return None
    except daemon.Unavailable as why:
        if args.verbose:
            err.write(f"warplint: note: no daemon: {why}; checking here\n")
        return None
    err.write(found_err)
    out.write(found_out)
    return status


def daemon_command(argv: Sequence[str], out: TextIO) -> int:
    """``warplint daemon status|stop [PATH]``."""
    from . import daemon

    p = _Parser(prog="warplint daemon", description="The daemon --daemon runs ask (docs/daemon.md).")
    p.add_argument("action", choices=("status", "stop"))
    p.add_argument("path", nargs="?", default=".", help="a file or folder of the project (default: .)")
    args = p.parse_args(argv)
    start = args.path if os.path.isdir(args.path) else os.path.dirname(os.path.abspath(args.path))
    root = load_config(start, set()).root
    try:
        if args.action == "stop":
            stopped = daemon.stop(root)
            out.write(f"stopped the daemon of {shown_path(root)}\n" if stopped
                      else f"no daemon runs for {shown_path(root)}\n")
            return EXIT_CLEAN
        found = daemon.status(root)
    except daemon.Unavailable as why:
        raise UsageError(f"no daemon here: {why}") from None
    if found is None:
        out.write(f"no daemon runs for {shown_path(root)}\n")
        return EXIT_FINDINGS
    runs, built = found["runs"], found["sessions_started"]
    out.write(f"daemon of {shown_path(root)}: pid {found['pid']}, {runs} run{'s' * (runs != 1)} answered, "
              f"{built} {'index' if built == 1 else 'indexes'} built, idle {found['idle_s']:.0f} s\n")
    return EXIT_CLEAN


def _warm_result(args, config: Config, paths: list[str], table: dict):
    """The findings from the result cache when nothing the run reads changed (``warm.lint_root_files``), for a
    run that only reports: None for anything else (stdin, --fix, --diff, --add-noqa, --confirm, --show-files)
    and on a miss."""
    if not _only_reports_files(args, paths) or any(ch in raw for raw in paths for ch in "*?["):
        return None
    _engine_options(args)  # bad options fail as on any run
    from .warm import lint_root_files

    where = os.path.abspath(args.cache_dir) if args.cache_dir else None
    return lint_root_files(config, table, paths, where, named=where is not None, nested_configs=args.config is None)


def nearest_configs(base: Config, known: set[str], with_options: Callable[[Config], Config]
                    ) -> Callable[[str], Config]:
    """path -> the config that governs it: the one of the nearest pyproject.toml with a ``[tool.warplint]``
    table (``find_pyproject``), under the command line's options; ``base`` where that is the run's own or
    there is none. One Config object per file read (the engine groups files by it)."""
    from .config import find_pyproject

    by_directory: dict[str, Config] = {}
    by_source: dict[str, Config] = {} if base.source is None else {os.path.abspath(base.source): base}

    def config_for(path: str) -> Config:
        directory = os.path.dirname(os.path.abspath(path))
        found = by_directory.get(directory)
        if found is None:
            source = find_pyproject(directory)
            if source is None:
                found = base
            else:
                source = os.path.abspath(source)
                found = by_source.get(source)
                if found is None:
                    found = by_source[source] = with_options(load_config(directory, known))
            by_directory[directory] = found
        return found

    return config_for


def _checked(argv: list[str], out: TextIO, err: TextIO) -> int:
    """One check of a --watch loop: a bad config is reported and the watch goes on (it may be fixed next)."""
    try:
        return check_command(argv, out, err)
    except (UsageError, ConfigError) as exc:
        err.write(f"warplint: error: {exc}\n")
        return EXIT_ERROR


def _write_diff(fixes, out: TextIO, err: TextIO) -> int:
    """``--diff``: the unified diff of every file --fix would change; exit 1 when there is one."""
    from .fixes import unified_diff

    for message in fixes.notes:
        err.write(f"warplint: note: {message}\n")
    for path, (original, fixed) in sorted(fixes.texts.items()):
        out.write(unified_diff(path, original, fixed))
    if fixes.texts:
        err.write(f"warplint: would fix {fixes.fixed_count} finding{'s' if fixes.fixed_count != 1 else ''} "
                  f"in {len(fixes.texts)} file{'s' if len(fixes.texts) != 1 else ''}\n")
    return EXIT_FINDINGS if fixes.texts else EXIT_CLEAN


def _write_fixes(fixes, stdin: tuple[str, str | None, str | None] | None, stdin_bytes: list[bytes], out: TextIO,
                 err: TextIO, errors: list[str], before: list, root: str) -> list:
    """``--fix``: write each changed file (stdin: print the code, fixed or not); the findings left. A file
    that cannot be written is an error (appended to ``errors``: exit 2); its fixes are not counted and its
    findings (``before``: those of the run) stay reported."""
    from .fixes import encode_like, write_fixed

    for message in fixes.notes:
        err.write(f"warplint: note: {message}\n")
    for path, (original, fixed) in sorted(fixes.texts.items()):
        if stdin is not None and path == stdin[0]:
            continue
        problem = write_fixed(path, original, fixed, root)
        if problem is not None:
            errors.append(f"not fixed: {shown_path(path)}: {problem}")
            err.write(f"warplint: error: {errors[-1]}\n")
            fixes.fixed.pop(path, None)
            fixes.diagnostics = sorted([d for d in fixes.diagnostics if d.path != path]
                                       + [d for d in before if d.path == path], key=lambda d: d.sort_key())
    if stdin is not None and stdin[1] is None:  # not read past max-file-size: printed as it came
        _copy_stdin_through(stdin_bytes, out)
    elif stdin is not None:
        original, fixed = fixes.texts.get(stdin[0], (stdin[1], stdin[1]))
        buffer = getattr(out, "buffer", None)
        if buffer is not None and stdin_bytes:
            out.flush()
            try:
                buffer.write(encode_like(stdin_bytes[0], original, fixed))
            except ValueError as exc:
                err.write(f"warplint: error: not fixed: stdin: {exc}\n")
                buffer.write(stdin_bytes[0])
            buffer.flush()
        else:
            out.write(fixed)
    return fixes.diagnostics


def _copy_stdin_through(head: list[bytes], out: TextIO) -> None:
    """--fix on a stdin over max-file-size: what was read, then the rest, a chunk at a time."""
    import shutil

    buffer = getattr(out, "buffer", None)
    source = getattr(sys.stdin, "buffer", None)
    if buffer is None or source is None:
        return
    out.flush()
    for chunk in head:
        buffer.write(chunk)
    with contextlib.suppress(OSError):
        shutil.copyfileobj(source, buffer, 2**20)
    buffer.flush()


def _read_stdin(raw: list[bytes] | None = None, limit: int | None = None) -> tuple[str | None, str | None]:
    """(text, None): stdin decoded as a file is (a PEP 263 coding line, a BOM); a text-only stdin (an
    embedding program's StringIO) as it is. Its bytes are appended to ``raw`` (for --fix). At most ``limit``
    (``max-file-size``) are read, as of a file on disk: past it, (None, the WC000 reason) and the rest of
    stdin is left unread (--fix copies it through, ``_copy_stdin_rest``)."""
    from .engine import decode
    from .sources import too_large

    if sys.stdin is None:
        raise UsageError("cannot read stdin: it is closed")
    buffer = getattr(sys.stdin, "buffer", None)
    cap = -1 if limit is None else limit + 1
    try:
        if buffer is None:
            text = sys.stdin.read(cap)
            return (None, too_large(None, limit)) if limit is not None and len(text) > limit else (text, None)
        data = buffer.read(cap)
        if raw is not None:
            raw.append(data)
        if limit is not None and len(data) > limit:
            return None, too_large(None, limit)
        return decode(data), None
    except OSError as exc:
        raise UsageError(f"cannot read stdin: {exc.strerror or exc}") from None
    except (UnicodeDecodeError, LookupError) as exc:
        raise UsageError(f"cannot decode stdin: {exc}") from None


def _check_flags(args) -> None:
    """Combinations that cannot work, refused before anything runs."""
    if args.quiet and args.verbose:
        raise UsageError("--quiet and --verbose contradict each other")
    if args.statistics and args.format not in STATISTICS_FORMATS:
        usable = f"{', '.join(STATISTICS_FORMATS[:-1])} or {STATISTICS_FORMATS[-1]}"
        raise UsageError(f"--statistics is not available with --format {args.format} (use {usable})")
    if args.add_noqa:
        clash = [flag for flag, on in (("--fix", args.fix), ("--diff", args.diff), ("--confirm", args.confirm),
                                       ("--statistics", args.statistics)) if on]
        if clash:
            raise UsageError(f"--add-noqa does not combine with {clash[0]}")
        if args.stdin_filename or "-" in args.paths:
            raise UsageError("--add-noqa writes files: it cannot read stdin")


def _file_overrides(config: Config, args, known: set[str]) -> Config:
    """The command line's excludes and per-file ignores over the config's (``--exclude`` and
    ``--per-file-ignores`` replace, the ``--extend-`` forms add)."""
    from .config import _globs

    exclude = _globs("--exclude", args.exclude) if args.exclude is not None else None
    extend_exclude = (tuple(config.extend_exclude) + _globs("--extend-exclude", args.extend_exclude)
                      if args.extend_exclude else None)

    def ignores(pairs: list[tuple[str, str]] | None, flag: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
        grouped: dict[str, list[str]] = {}
        for glob, code in pairs or ():
            grouped.setdefault(glob, []).extend(validate_selectors(flag, [code], known))
        return tuple((glob, tuple(codes)) for glob, codes in grouped.items())

    per_file = None
    if args.per_file_ignores is not None:
        per_file = ignores(args.per_file_ignores, "--per-file-ignores")
    if args.extend_per_file_ignores:
        base = per_file if per_file is not None else config.per_file_ignores
        per_file = tuple(base) + ignores(args.extend_per_file_ignores, "--extend-per-file-ignores")
    return config.with_overrides(exclude=exclude, extend_exclude=extend_exclude, force_exclude=args.force_exclude,
                                 per_file_ignores=per_file)


def use_color(choice: str, stream: TextIO) -> bool:
    """``--color``: ``auto`` colours a terminal, unless NO_COLOR is set; FORCE_COLOR colours anything."""
    if choice != "auto":
        return choice == "always"
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR", "0") not in ("", "0"):
        return True
    try:
        return stream.isatty() and os.environ.get("TERM", "") != "dumb"
    except (AttributeError, ValueError, OSError):
        return False


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def summary_line(diagnostics: list, result, unsafe: bool) -> str:
    """ruff's last line: "All checks passed!", "Found 5 findings (2 fixable).", after --fix
    "Found 5 findings (3 fixed, 2 remaining)."."""
    fixed = getattr(result, "fixed", 0)
    errors = len(getattr(result, "errors", ()) or ())
    if fixed:
        return f"Found {_plural(fixed + len(diagnostics), 'finding')} ({fixed} fixed, {len(diagnostics)} remaining)."
    if errors:  # a path that could not be checked is no passed check (ruff counts it as an error too)
        found = f"{_plural(len(diagnostics), 'finding')} and " if diagnostics else ""
        return f"Found {found}{_plural(errors, 'error')}."
    if not diagnostics:
        return "All checks passed!"
    def fixable(with_unsafe: bool) -> int:
        return sum(1 for d in diagnostics if d.fix is not None and (with_unsafe or d.fix.is_safe))

    notes = []
    if fixable(unsafe):
        notes.append(f"{fixable(unsafe)} fixable with --fix")
    hidden = 0 if unsafe else fixable(True) - fixable(False)
    if hidden:
        notes.append(f"{hidden} more with --unsafe-fixes")
    return f"Found {_plural(len(diagnostics), 'finding')}" + (f" ({'; '.join(notes)})." if notes else ".")


def _write_verbose(session, result, seconds: float, err: TextIO) -> None:
    """-v: what the run did, on stderr (``session``: None where the warm path answered, no engine started)."""
    if session is None:
        err.write(f"warplint: checked {_plural(result.files, 'file')} ({result.parsed} parsed), "
                  f"{_plural(len(result.diagnostics), 'finding')}; findings from the result cache (nothing "
                  f"changed, no file read again); {seconds:.2f} s\n")
        return
    cache = session.cache
    if result.cached:
        how = "findings from the result cache (nothing changed)"
    elif cache is not None:
        how = f"models: {cache.hits} from the cache, {cache.misses} built"
    else:
        how = "cache off"
    err.write(f"warplint: checked {_plural(result.files, 'file')} ({result.parsed} parsed), "
              f"{_plural(len(result.diagnostics), 'finding')}; {how}; {session.jobs} jobs; {seconds:.2f} s\n")


def _show_settings(config: Config, args, rules: dict, out: TextIO) -> int:
    """--show-settings: every setting in effect, and where it comes from."""
    import dataclasses
    import json

    from .discovery import DEFAULT_EXCLUDES

    in_file: set[str] = set()
    if config.source is not None:
        from .config import _read_toml

        section = _read_toml(config.source).get("tool", {}).get("warplint", {})
        in_file = set(section) if isinstance(section, dict) else set()
    defaults = Config(root=config.root)
    out.write(f"# warplint {__version__}; config: {config.source or 'none (defaults)'}\n")
    for field in dataclasses.fields(config):
        if field.name in ("root", "source"):
            continue
        value = getattr(config, field.name)
        key = field.name.replace("_", "-")
        from_cli = getattr(args, field.name, None) not in (None, [], False) or (
            field.name == "per_file_ignores" and bool(args.extend_per_file_ignores))
        where = []
        if key in in_file:
            where.append(config.source)
        if from_cli:
            where.append("command line")
        if not where:
            where.append("default" if value == getattr(defaults, field.name) else "computed")
        shown = {glob: list(codes) for glob, codes in value} if field.name == "per_file_ignores" else value
        out.write(f"{key} = {json.dumps(shown, default=list)}  # {' + '.join(str(w) for w in where)}\n")
    out.write(f"# root (patterns and the cache are relative to it): {config.root}\n")
    out.write(f"# always excluded: {', '.join(DEFAULT_EXCLUDES)}\n")
    enabled = sorted(config.enabled_codes(rules))
    out.write(f"# rules enabled ({len(enabled)}): {', '.join(enabled)}\n")
    return EXIT_CLEAN


def _show_files(session, paths: list[str], out: TextIO, err: TextIO) -> int:
    """--show-files: the files a run on ``paths`` would check, one a line; exit 2 for a missing path."""
    status = EXIT_CLEAN
    found = []
    for path in session.discovery.files([p for p in paths if p != "-"]):
        if os.path.lexists(path):
            found.append(path)
        else:
            err.write(f"warplint: error: {shown_path(path)}: no such file or directory\n")
            status = EXIT_ERROR
    for message in session.discovery.notes:
        err.write(f"warplint: note: {message}\n")
    out.writelines(f"{shown_path(path)}\n" for path in sorted(found))
    return status


def _add_noqa(session, diagnostics: list, err: TextIO) -> int:
    """--add-noqa: each reported line gets ``# noqa: CODES`` (merged into a noqa comment it has),
    written in place, atomically; every other byte of the file stays as it was."""
    from .engine import decode
    from .noqa import add_noqa, ascii_compatible, write_atomically
    from .registry import FileError, UnusedNoqa
    from .sources import read_regular, reread_limit, write_refusal

    by_file: dict[str, dict[int, set[str]]] = {}
    for d in diagnostics:
        if d.code not in (FileError.code, UnusedNoqa.code):  # a file that did not parse; a noqa for a noqa
            by_file.setdefault(d.path, {}).setdefault(d.span.line, set()).add(d.code)
    added = 0
    status = EXIT_CLEAN
    for path, codes in sorted(by_file.items()):
        shown = shown_path(path)
        try:
            data = read_regular(path, reread_limit(session.texts.get(os.path.abspath(path))))
            text = decode(data)
        except (OSError, UnicodeDecodeError, LookupError) as exc:
            err.write(f"warplint: error: {shown}: cannot read it again: {getattr(exc, 'strerror', None) or exc}\n")
            status = EXIT_ERROR
            continue
        if text != session.texts.get(os.path.abspath(path)):
            err.write(f"warplint: note: {shown}: changed while it was checked; no noqa added\n")
            continue
        if not ascii_compatible(data):
            err.write(f"warplint: note: {shown}: its encoding cannot take an ASCII comment; no noqa added\n")
            continue
        new, count, skipped = add_noqa(data, text, codes)
        for skip in skipped:
            err.write(f"warplint: note: {shown}:{skip.line}: no noqa added: {skip.reason}\n")
        refused = write_refusal(path, session.config.root) if count else None
        if refused is not None:
            err.write(f"warplint: error: {shown}: {refused}\n")
            status = EXIT_ERROR
            continue
        if count:
            try:
                write_atomically(path, new)
            except OSError as exc:
                err.write(f"warplint: error: {shown}: cannot write it: {exc.strerror or exc}\n")
                status = EXIT_ERROR
                continue
            added += count
    err.write(f"Added {_plural(added, 'noqa directive')}.\n")
    return status


def _open_output(path: str) -> TextIO:
    try:
        # backslashreplace: a surrogate (from a file name that is not UTF-8) must not fail the report
        return open(path, "w", encoding="utf-8", errors="backslashreplace")
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {exc.strerror or exc}") from None
    except ValueError:  # open() refuses a name holding a NUL byte
        raise UsageError(f"cannot write {path!r}: the name holds a NUL byte") from None


def _lenient(stream: TextIO) -> TextIO:
    """``stream``, set to write what it cannot encode escaped (a file name that is not UTF-8
    on a strict stdout, non-ASCII on an ASCII one) instead of failing the report."""
    if getattr(stream, "errors", None) == "strict" and hasattr(stream, "reconfigure"):
        stream.reconfigure(errors="backslashreplace")
    return stream


def _engine_options(args) -> dict:
    if args.jobs is not None and args.jobs < 1:
        raise UsageError("--jobs must be at least 1")
    options: dict = {"cache": not args.no_cache, "jobs": args.jobs}
    if args.cache_dir:  # relative to the working directory (a config `cache-dir` is relative to its root)
        options["cache_dir"] = os.path.abspath(args.cache_dir)
    return options


def _confirm_plan(args, config: Config, command: list[str] | None) -> tuple[list[str], float]:
    """The --confirm command and per-pass timeout, checked before anything runs."""
    if not command:
        configured = config.confirm.get("command")
        if isinstance(configured, str):
            try:
                command = shlex.split(configured)
            except ValueError as exc:  # an unbalanced quote
                raise ConfigError(f"[tool.warplint] 'confirm.command' is not a valid command line "
                                  f"({exc}): {configured!r}") from None
        else:  # a list of strings (load_config checked it); unset is caught by the caller
            command = list(configured or ())
        if not command:
            raise ConfigError("[tool.warplint] 'confirm.command' is empty")
    _check_runnable(command[0])
    if args.confirm_timeout is not None:
        return command, args.confirm_timeout
    return command, _positive("confirm.timeout", config.confirm.get("timeout", 300), float)


def _check_runnable(program: str) -> None:
    """``program`` exists and may be executed, looked up as the OS will (a path, else on PATH)."""
    if os.sep in program or (os.altsep and os.altsep in program):
        if os.path.isdir(program):
            raise UsageError(f"--confirm: {program!r} is a directory, not a program")
        if not os.path.exists(program):
            raise UsageError(f"--confirm: {program!r} does not exist")
        if not os.access(program, os.X_OK):
            raise UsageError(f"--confirm: {program!r} is not executable (chmod +x it, or run it through its "
                             "interpreter)")
    elif shutil.which(program) is None:
        raise UsageError(f"--confirm: command not found: {program!r} (not an executable on PATH)")


def _run_confirm(args, plan: tuple[list[str], float], diagnostics):
    from .confirm import run_confirm

    command, timeout = plan
    return run_confirm(diagnostics, command, cwd=os.getcwd(), timeout=timeout, keep_artifacts=args.keep_artifacts,
                       **_confirm_profiling(args))


def _confirm_profiling_options(p: argparse.ArgumentParser) -> None:
    from .confirm_options import add_options

    add_options(p)


def _confirm_profiling(args) -> dict:
    """--what-if / --samples / --what-if-jobs, checked (a bad value is a UsageError before anything runs)."""
    from .confirm_options import ProfilingOptionError, options_of

    try:
        return options_of(args)
    except ProfilingOptionError as exc:
        raise UsageError(str(exc)) from None


def main(argv: Sequence[str] | None = None, out: TextIO | None = None, err: TextIO | None = None,
         sessions: Any = None) -> int:
    """The command line. ``sessions``: the daemon's, when it answers a run (``daemon_server.serve``)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    out = out or sys.stdout
    err = err or sys.stderr
    try:
        if argv and argv[0] == "rule":
            return rule_command(argv[1:], out)
        if argv and argv[0] == "server":
            from .lsp import serve

            return serve(argv[1:])
        if argv and argv[0] == "compare":
            from .confirm.compare import command as compare_command

            return compare_command(argv[1:], out, err)
        if argv and argv[0] == "daemon":
            return daemon_command(argv[1:], out)
        if argv and argv[0] == "check":
            argv = argv[1:]
        return check_command(argv, out, err, sessions)
    except (UsageError, ConfigError) as exc:
        err.write(f"warplint: error: {exc}\n")
        return EXIT_ERROR
    except (KeyboardInterrupt, Terminated) as exc:
        erase_progress()  # the progress line, if one is on the terminal
        err.write("warplint: interrupted\n" if isinstance(exc, KeyboardInterrupt) else "warplint: terminated\n")
        return interrupts.exit_code(exc)
    except BrokenPipeError:
        return EXIT_CLEAN
    except Exception as exc:  # never a traceback for users; say what broke
        if sessions is not None:
            raise  # the daemon's run: the client runs it itself
        err.write(f"warplint: internal error: {type(exc).__name__}: {exc} (please report; rerun with "
                  "WARPLINT_DEBUG=1 for the traceback)\n")
        if os.environ.get("WARPLINT_DEBUG"):
            raise
        return EXIT_ERROR


def entry() -> None:
    """The console script: ``main``, then leave without tearing the heap down.

    A cold run on a large project ends holding millions of small model objects;
    freeing them one by one at interpreter exit took ~5 s on the Warp tree -- after the
    report was already out. Output is flushed and the cache saved by then. For the
    same reason the cyclic collector stays off in this short-lived process: turned back
    on after the run, its first pass re-scanned every model (~1 s); the trees and
    models are acyclic, and reference counting frees what the run lets go of."""
    if sys.argv[1:2] != ["server"] and not {"--watch", "-w"} & set(sys.argv):  # long-lived: they keep the collector
        gc.disable()
    interrupts.install()  # SIGTERM/SIGHUP unwind like Ctrl-C: workers and --confirm's program end with us
    code = main()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (BrokenPipeError, ValueError):
        pass
    os._exit(code)


if __name__ == "__main__":  # pragma: no cover
    entry()

"""The flake8 plugin, run through the real flake8 (in a subprocess unless noted)."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import textwrap

import pytest

from warplint import __version__
from warplint.registry import all_rules
from warplint.testing import split_example

BAD = textwrap.dedent(
    """\
    import os
    import warp as wp

    wp.force_load()
    if True:
        wp.force_load(device="cuda:0")  # noqa: WC501
    wp.force_load(device="cpu")  # noqa: E501
    try:
        wp.load_module("app.kernelz")
    except RuntimeError:
        pass
    """
)
MESSAGE_501 = "WC501 `force_load()` without `modules=` builds every registered module; pass the ones you launch"
MESSAGE_502 = "WC502 the `load_module()` error is caught and dropped; log or re-raise it"


def flake8(cwd, *args) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "flake8", "--no-show-source", *args],
        cwd=cwd, capture_output=True, text=True, timeout=120,
    )


def cli(cwd, *args) -> list[dict]:
    from warplint.cli import main

    out, err = io.StringIO(), io.StringIO()
    old = os.getcwd()
    try:
        os.chdir(cwd)
        main(["--format", "json", "--no-cache", *args], out=out, err=err)
    finally:
        os.chdir(old)
    return json.loads(out.getvalue())


@pytest.fixture
def project(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.warplint]\n")
    (tmp_path / "bad.py").write_text(BAD)
    return tmp_path


def test_select_wc_exact_lines_and_columns_match_the_cli(project):
    result = flake8(project, "--select", "WC", "bad.py")
    assert result.returncode == 1, result.stderr
    assert result.stderr == ""
    assert result.stdout.splitlines() == [
        f"bad.py:4:1: {MESSAGE_501}",
        f"bad.py:7:1: {MESSAGE_501}",
        f"bad.py:9:5: {MESSAGE_502}",
    ]
    # flake8's 1-based column is the CLI's column (the plugin yields 0-based offsets)
    expected = [(e["line"], e["column"], e["code"]) for e in cli(project, "bad.py")]
    got = [(*line.split(":")[1:3], line.split(": ")[1].split()[0]) for line in result.stdout.splitlines()]
    assert [(int(a), int(b), c) for a, b, c in got] == expected


def test_default_selection_reports_wc_next_to_pyflakes(project):
    result = flake8(project, "bad.py")
    codes = [line.split(": ")[1].split()[0] for line in result.stdout.splitlines()]
    assert codes == ["F401", "WC501", "WC501", "WC502"]


def test_flake8_ignore_and_noqa(project):
    (project / "noqa.py").write_text(BAD.replace('device="cpu")  # noqa: E501', 'device="cpu")  # noqa'))
    result = flake8(project, "--select", "WC", "--extend-ignore", "WC502", "bad.py", "noqa.py")
    assert result.stdout.splitlines() == [f"bad.py:4:1: {MESSAGE_501}", f"bad.py:7:1: {MESSAGE_501}",
                                          f"noqa.py:4:1: {MESSAGE_501}"]
    assert flake8(project, "--select", "WC,F", "--ignore", "WC5", "bad.py").stdout.splitlines() == [
        "bad.py:1:1: F401 'os' imported but unused"
    ]
    # flake8's --disable-noqa: the lines warplint would also hide are shown (flake8 filters, not the plugin)
    shown = flake8(project, "--select", "WC501", "--disable-noqa", "bad.py").stdout.splitlines()
    assert [line.split(":")[1] for line in shown] == ["4", "7"]  # the engine still honours the WC501 noqa comment


def test_tool_warplint_config_is_honoured(project):
    (project / "pyproject.toml").write_text('[tool.warplint]\nignore = ["WC502"]\n')
    assert [line.split(": ")[1][:5] for line in flake8(project, "--select", "WC", "bad.py").stdout.splitlines()] == [
        "WC501", "WC501",
    ]
    # an explicit flake8 --select of the exact code wins over the project's ignore (like naming an opt-in rule)
    out = flake8(project, "--select", "WC502", "bad.py").stdout.splitlines()
    assert out == [f"bad.py:9:5: {MESSAGE_502}"]


def test_broken_config_is_reported_not_a_crash(project):
    (project / "pyproject.toml").write_text('[tool.warplint]\nselect = ["XX1"]\n')
    result = flake8(project, "--select", "WC", "bad.py")
    assert "Traceback" not in result.stderr
    assert result.stdout.splitlines() == [
        "bad.py:1:1: WC000 warplint configuration error: 'select': unknown rule selector 'XX1' "
        "(see `warplint rule --all`)"
    ]


def test_syntax_error_does_not_crash_flake8(project):
    (project / "broken.py").write_text("import warp as wp\ndef f(:\n    wp.force_load()\n")
    result = flake8(project, "bad.py", "broken.py")
    assert result.returncode == 1
    assert "Traceback" not in result.stderr and "warplint" not in result.stderr
    lines = result.stdout.splitlines()
    assert [line for line in lines if line.startswith("broken.py")] == [
        line for line in lines if line.startswith("broken.py:2:") and " E999 " in line
    ] and any(line.startswith("broken.py:2:") for line in lines)
    assert sum(" WC50" in line for line in lines) == 3  # the good file is still checked


def test_version_lists_the_plugin(tmp_path):
    result = flake8(tmp_path, "--version")
    assert f"warplint: {__version__}" in result.stdout


def test_plugin_import_does_not_import_libcst():
    code = "import sys, warplint.flake8_plugin; assert 'libcst' not in sys.modules, 'libcst imported'"
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


def test_jobs_and_stdin(project):
    (project / "two.py").write_text(BAD)
    many = flake8(project, "--select", "WC", "--jobs", "2", "bad.py", "two.py").stdout.splitlines()
    assert len(many) == 6 and sum(line.startswith("two.py:") for line in many) == 3
    piped = subprocess.run(
        [sys.executable, "-m", "flake8", "--select", "WC", "--stdin-display-name", "bad.py", "-"],
        cwd=project, input=BAD, capture_output=True, text=True, timeout=120,
    )
    assert piped.stdout.splitlines() == [f"bad.py:4:1: {MESSAGE_501}", f"bad.py:7:1: {MESSAGE_501}",
                                         f"bad.py:9:5: {MESSAGE_502}"]


def test_index_built_once_per_process(project, monkeypatch):
    """Real flake8, in-process (one worker): the project index is built once for all files, and a
    second run with nothing changed is answered from the result cache without building one."""
    from flake8.main.application import Application

    from warplint import flake8_plugin

    for name in ("a.py", "b.py", "c.py"):
        (project / name).write_text(BAD)
    (project / "pkg").mkdir()
    (project / "pkg" / "unlinted.py").write_text("import warp as wp\n")
    monkeypatch.setattr(flake8_plugin, "_SESSIONS", {})
    monkeypatch.setattr(flake8_plugin, "_CONFIGS", {})
    monkeypatch.setattr(flake8_plugin, "_REGISTRY", {})
    monkeypatch.setattr(flake8_plugin, "_DIGESTS", {})
    monkeypatch.setattr(flake8_plugin, "_SCOPES", {})
    from warplint.index import Project

    built = []
    real_project = Project.__init__
    monkeypatch.setattr(Project, "__init__", lambda self, *a, **k: (built.append(1), real_project(self, *a, **k))[1])
    monkeypatch.chdir(project)
    app = Application()
    app.run(["--select", "WC", "--jobs", "1", "--output-file", str(project / "out.txt"), "a.py", "b.py", "c.py"])
    assert app.result_count == 9
    assert len(built) == 1  # one project index for all three files
    (session,) = flake8_plugin._SESSIONS.values()
    # every file under the root is in the index, including ones flake8 was not asked to check
    assert str(project / "pkg" / "unlinted.py") in session.models
    for name in ("_SESSIONS", "_CONFIGS", "_REGISTRY", "_DIGESTS", "_SCOPES"):  # a new flake8 process
        monkeypatch.setattr(flake8_plugin, name, {})
    again = Application()
    again.run(["--select", "WC", "--jobs", "1", "--output-file", str(project / "out2.txt"), "a.py", "b.py", "c.py"])
    assert again.result_count == 9
    assert len(built) == 1  # nothing changed: the findings came from the result cache, no model was loaded
    assert flake8_plugin._SESSIONS == {}  # ... nor any engine session made: the warm path answered
    assert flake8_plugin._REGISTRY["table"] is not None  # (the first run kept the rule table)
    assert (project / "out.txt").read_text() == (project / "out2.txt").read_text()


WARM_PROBE = """
import sys
from flake8.main import cli
sys.argv = ["flake8", *sys.argv[1:]]
try:
    cli.main()
except SystemExit:
    pass
loaded = sorted(m for m in sys.modules if m == "libcst" or m.startswith(("warplint.rules.", "warplint.engine")))
print("loaded:", loaded)
"""


def test_warm_run_imports_neither_libcst_nor_the_rules(project):
    """The second flake8 run with nothing changed answers from the result cache with neither LibCST,
    nor the engine, nor a rule imported (most of what the plugin cost on a warm run), and says the
    same; the first run imports them (it checks)."""
    (project / "lib.py").write_text("import warp as wp\n\n@wp.kernel\ndef k(a: wp.array(dtype=float)):\n    pass\n")
    first = subprocess.run([sys.executable, "-c", WARM_PROBE, "--select", "WC", "bad.py"], cwd=project,
                           capture_output=True, text=True, timeout=120)
    second = subprocess.run([sys.executable, "-c", WARM_PROBE, "--select", "WC", "bad.py"], cwd=project,
                            capture_output=True, text=True, timeout=120)
    *findings, loaded = first.stdout.splitlines()
    assert "'libcst'" in loaded and "warplint.engine" in loaded, first.stdout + first.stderr
    assert second.stdout.splitlines() == [*findings, "loaded: []"], second.stdout + second.stderr
    assert findings == [f"bad.py:4:1: {MESSAGE_501}", f"bad.py:7:1: {MESSAGE_501}", f"bad.py:9:5: {MESSAGE_502}"]
    # a change to another file of the project changes the key: the engine checks again
    (project / "lib.py").write_text("import warp as wp\nwp.config.cache_kernels = False\n")
    third = subprocess.run([sys.executable, "-c", WARM_PROBE, "--select", "WC", "bad.py"], cwd=project,
                           capture_output=True, text=True, timeout=120)
    assert third.stdout.splitlines()[:-1] == findings and "'libcst'" in third.stdout.splitlines()[-1]


def test_warm_key_is_the_sessions_key(project, monkeypatch):
    """The warm path's answer is the engine's: after a check through the Session, ``_cached`` finds
    the stored findings under the key it computes itself (a different key would be a miss), for
    the flake8 default and a narrowed selection; a changed text of the file is a miss."""
    from flake8.options.parse_args import parse_args

    from warplint import flake8_plugin
    from warplint.cache import registry_salt
    from warplint.registry import remember_table, rule_table

    for name in ("_SESSIONS", "_CONFIGS", "_REGISTRY", "_DIGESTS", "_SCOPES"):
        monkeypatch.setattr(flake8_plugin, name, {})
    (project / "other.py").write_text("import warp as wp\nwp.force_load()\n")
    salt = registry_salt()
    assert salt is not None
    remember_table(salt)
    table = rule_table(salt)
    assert table is not None
    path = str(project / "bad.py")
    for argv in ([], ["--select", "WC5", "--extend-select", "WC001"]):
        monkeypatch.setattr(flake8_plugin.WarplintChecker, "_options", parse_args(argv)[1])
        config = flake8_plugin._config_for(path, set(table))
        codes = flake8_plugin.codes_to_run(config, table, flake8_plugin.WarplintChecker._options)
        assert codes == flake8_plugin.codes_to_run(config, all_rules(), flake8_plugin.WarplintChecker._options)
        assert flake8_plugin._cached(path, BAD, config, codes, salt, table) is None  # nothing checked yet
        session = flake8_plugin._session_for(config, codes)
        result = session.lint_paths([], stdin=(path, BAD), project_context=True, check_context=True)
        expected = [(d.span.line, d.span.col, d.code, d.message) for d in result.diagnostics]
        assert expected
        assert flake8_plugin._cached(path, BAD, config, codes, salt, table) == expected
        assert flake8_plugin._cached(path, BAD + "\n# changed\n", config, codes, salt, table) is None


def test_rule_table_is_the_registry():
    """``registry.rule_table`` (what the warm path selects from) lists what ``all_rules`` finds, and selects
    the same codes; it is kept under the salt of the registry's rules, the salt the engine uses."""
    from warplint import cache
    from warplint.config import Config
    from warplint.registry import RuleInfo, remember_table, rule_table, salt_for

    salt = cache.registry_salt()
    assert salt is not None and salt == salt_for(all_rules())
    remember_table(salt)
    table = rule_table(salt)
    assert table == {code: RuleInfo(code, rule.name, rule.default_enabled, rule.runtime_only)
                     for code, rule in all_rules().items()}
    assert any(not info.default_enabled for info in table.values()) and any(i.runtime_only for i in table.values())
    for config in (Config(root="."), Config(root=".", select=("ALL",)), Config(root=".", select=("WC1", "WC001")),
                   Config(root=".", extend_select=("WC9",), ignore=("WC2",))):
        assert config.enabled_codes(table) == config.enabled_codes(all_rules())
    assert rule_table("0" * 20) is None  # another salt: nothing kept


def test_opt_in_rules_need_their_exact_code():
    """Which rules run under flake8's own option parsing (a default-on and an opt-in rule)."""
    from flake8.options.parse_args import parse_args

    from warplint.config import Config
    from warplint.flake8_plugin import codes_to_run
    from warplint.rule import Rule

    class OptIn(Rule):
        """An opt-in rule."""

        code, name, mechanism, summary, default_enabled = "WC777", "opt-in", "CS-0", "s", False

    rules = {"WC501": all_rules()["WC501"], "WC777": OptIn()}
    config = Config(root=".")
    assert codes_to_run(config, rules, parse_args([])[1]) == {"WC501"}
    assert codes_to_run(config, rules, parse_args(["--select", "WC"])[1]) == {"WC501"}
    assert codes_to_run(config, rules, parse_args(["--extend-select", "WC777"])[1]) == {"WC501", "WC777"}
    assert codes_to_run(config, rules, parse_args(["--select", "WC777"])[1]) == {"WC777"}
    assert codes_to_run(config, rules, parse_args(["--select", "E,F"])[1]) == set()
    assert codes_to_run(config, rules, parse_args(["--extend-ignore", "WC5"])[1]) == set()


def test_multi_file_rule_examples_match_the_cli(tmp_path):
    """Cross-file findings: flake8 on the first file of every multi-file INVALID example reports
    what the CLI reports for that file when linting the whole example project."""
    checked = 0
    for rule in all_rules().values():
        for n, example in enumerate(rule.invalid):
            files = split_example(example)
            if len(files) < 2:
                continue
            root = tmp_path / f"{rule.code}_{n}"
            for name, text in files.items():
                (root / name).parent.mkdir(parents=True, exist_ok=True)
                (root / name).write_text(text)
            (root / "pyproject.toml").write_text(f'[tool.warplint]\nselect = ["{rule.code}"]\n')
            first = next(iter(files))
            expected = [
                f"{first}:{e['line']}:{e['column']}: {e['code']} {e['message']}"
                for e in cli(root, ".") if e["path"].endswith(first)
            ]
            assert flake8(root, "--select", "WC", first).stdout.splitlines() == expected
            checked += 1
    assert checked >= 0


def test_stat_digests_read_only_what_changed(tmp_path, monkeypatch):
    """The warm path's digests: a file whose stat signature was kept is not read again; a rewrite with the
    same size and mtime is (its ctime moved); a file changed just now is not kept (racy), so it is read."""
    from warplint import cache, sources

    secret = os.urandom(32)
    a, b = tmp_path / "a.py", tmp_path / "b.py"
    a.write_text("x = 1\n")
    b.write_text("y = 2\n")
    reads: list[str] = []
    real = sources.read_source
    monkeypatch.setattr(sources, "read_source", lambda path, limit: (reads.append(path), real(path, limit))[1])

    fresh = cache.StatDigests(str(tmp_path / "c"), "s", secret)
    assert fresh.digest_of(str(a), 1000) == (cache.digest("x = 1\n"), None)
    assert not fresh.dirty  # written just now: not kept
    monkeypatch.setattr(cache.StatDigests, "RACY_NS", 0)
    first = cache.StatDigests(str(tmp_path / "c"), "s", secret)
    assert [first.digest_of(str(p), 1000) for p in (a, b)] == [(cache.digest("x = 1\n"), None),
                                                                (cache.digest("y = 2\n"), None)]
    first.save()
    reads.clear()
    again = cache.StatDigests(str(tmp_path / "c"), "s", secret)
    assert again.digest_of(str(a), 1000) == (cache.digest("x = 1\n"), None)
    assert reads == []  # from the kept signature
    before = os.stat(b)
    b.write_text("y = 3\n")  # same size; mtime set back: only the ctime tells
    os.utime(b, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert again.digest_of(str(b), 1000) == (cache.digest("y = 3\n"), None)
    assert reads == [str(b)]
    assert again.digest_of(str(b), 3)[0] is None  # over max-file-size: the reader's answer
    reads.clear()
    cache.StatDigests(str(tmp_path / "c"), "s", os.urandom(32)).digest_of(str(a), 1000)
    assert reads == [str(a)]  # kept under another user's key: not trusted, read


def test_one_file_run_checks_that_file_only(project, monkeypatch):
    """Real flake8, in-process: given one file, the plugin checks that file against the project index and
    no other (after an edit the next run's key differs anyway); given two, every file of the project,
    so that runs on the others are answered from the result cache."""
    from flake8.main.application import Application

    from warplint import flake8_plugin
    from warplint.engine import Session

    for name in ("a.py", "b.py", "c.py"):
        (project / name).write_text(BAD)
    checked: list[str] = []
    real_check = Session.check_model
    monkeypatch.setattr(Session, "check_model",
                        lambda self, model, index: (checked.append(os.path.basename(model.path)),
                                                    real_check(self, model, index))[1])
    monkeypatch.chdir(project)

    def run(*files: str, out: str) -> int:
        for name in ("_SESSIONS", "_CONFIGS", "_REGISTRY", "_DIGESTS", "_SCOPES"):  # a new flake8 process
            monkeypatch.setattr(flake8_plugin, name, {})
        app = Application()
        app.run(["--select", "WC", "--jobs", "1", "--output-file", str(project / out), *files])
        return app.result_count

    assert run("a.py", out="one.txt") == 3
    assert checked == ["a.py"]
    checked.clear()
    assert run("b.py", out="other.txt") == 3  # b.py was not checked: not in the result cache
    assert checked == ["b.py"]
    (project / "a.py").write_text(BAD + "\nX = 1\n")
    checked.clear()
    assert run("a.py", "b.py", out="two.txt") == 6
    assert sorted(checked) == ["a.py", "b.py", "bad.py", "c.py"]
    checked.clear()
    assert run("c.py", out="three.txt") == 3
    assert checked == []  # checked with the two
    assert (project / "one.txt").read_text().replace("a.py", "c.py") == (project / "three.txt").read_text()


def test_kept_listing_follows_the_tree(tmp_path, monkeypatch):
    """The warm path's project listing is listed again when a directory discovery walks changed (a file
    added below, a .gitignore edited, a renamed directory), not for changes in directories it never walks."""
    from warplint import cache
    from warplint.discovery import DEFAULT_EXCLUDES

    monkeypatch.setattr(cache.StatDigests, "RACY_NS", 0)
    where, tmp_path = tmp_path / "cache", tmp_path / "tree"  # the cache outside the tree
    (tmp_path / "pkg" / "sub").mkdir(parents=True)
    (tmp_path / "build").mkdir()
    (tmp_path / "pkg" / "sub" / "a.py").write_text("x = 1\n")
    calls: list[int] = []

    def listed() -> tuple[list[str], list[str]]:
        calls.append(1)
        return sorted(str(p) for p in tmp_path.rglob("*.py") if "build" not in p.parts), []

    def listing() -> list[str]:
        digests = cache.StatDigests(str(where), "s", b"k" * 32)
        found, _ = digests.listing("key", str(tmp_path), lambda name: name in DEFAULT_EXCLUDES, listed)
        digests.save()
        return found

    first = listing()
    assert listing() == first and len(calls) == 1  # nothing changed: kept
    (tmp_path / "build" / "gen.py").write_text("y = 2\n")
    assert listing() == first and len(calls) == 1  # a directory discovery never walks
    (tmp_path / "pkg" / "sub" / "b.py").write_text("y = 2\n")
    assert listing() == [*first, str(tmp_path / "pkg" / "sub" / "b.py")] and len(calls) == 2
    (tmp_path / ".gitignore").write_text("")
    listing()
    (tmp_path / ".gitignore").write_text("pkg/sub/b.py\n")
    listing()
    assert len(calls) == 4  # created, then edited
    (tmp_path / "pkg" / "sub").rename(tmp_path / "pkg" / "moved")
    assert str(tmp_path / "pkg" / "moved" / "a.py") in listing() and len(calls) == 5


def test_warm_path_sees_a_new_file(project, monkeypatch):
    """A file added to the project after the last check changes the key even where the listing was kept:
    ``_cached`` misses instead of answering from the project as it was."""
    from warplint import cache, flake8_plugin
    from warplint.registry import remember_table, rule_table

    monkeypatch.setattr(cache.StatDigests, "RACY_NS", 0)
    for name in ("_SESSIONS", "_CONFIGS", "_REGISTRY", "_DIGESTS", "_SCOPES"):
        monkeypatch.setattr(flake8_plugin, name, {})
    (project / "pkg").mkdir()
    (project / "pkg" / "lib.py").write_text("import warp as wp\n")
    salt = cache.registry_salt()
    assert salt is not None
    remember_table(salt)
    table = rule_table(salt)
    assert table is not None
    path = str(project / "bad.py")
    config = flake8_plugin._config_for(path, set(table))
    codes = flake8_plugin.codes_to_run(config, table, None)
    assert flake8_plugin._cached(path, BAD, config, codes, salt, table) is None  # keeps the listing
    session = flake8_plugin._session_for(config, codes)
    session.lint_paths([], stdin=(path, BAD), project_context=True)
    for name in ("_DIGESTS", "_SCOPES"):
        monkeypatch.setattr(flake8_plugin, name, {})
    assert flake8_plugin._cached(path, BAD, config, codes, salt, table) is not None
    (project / "pkg" / "new.py").write_text("import warp as wp\nwp.config.cache_kernels = False\n")
    for name in ("_DIGESTS", "_SCOPES"):
        monkeypatch.setattr(flake8_plugin, name, {})
    assert flake8_plugin._cached(path, BAD, config, codes, salt, table) is None

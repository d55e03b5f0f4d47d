"""The cache (``.warplint_cache/``) is invalidated by exactly what changes findings.

Cross-file dependence: WC401 flags ``wp.config.enable_backward = False`` after
``import kernels_lib`` only while ``kernels_lib`` defines kernels at import time.
No timing is asserted here (see benchmarks/run.py).
"""

from __future__ import annotations

import ast
import os
import pickle
import subprocess
import sys

import pytest

from warplint.cache import ModelCache
from warplint.cli import main
from warplint.config import Config
from warplint.engine import Session

APP = "import warp as wp\nimport kernels_lib\n\nwp.config.enable_backward = False\n"
LIB_WITH_KERNEL = (
    "import warp as wp\n\n\n@wp.kernel\ndef k(a: wp.array(dtype=float)):\n    a[0] = 1.0\n"
)
LIB_WITHOUT_KERNEL = "import warp as wp\n\n\ndef helper():\n    return wp.float32(1.0)\n"


@pytest.fixture
def project(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.warplint]\n")
    (tmp_path / "app.py").write_text(APP)
    (tmp_path / "kernels_lib.py").write_text(LIB_WITH_KERNEL)
    return tmp_path


def lint(root, *extra: str, select: str = "WC401") -> tuple[int, list[str]]:
    out = os.path.join(root, "out.txt")
    code = main([str(root), "--select", select, "--format", "concise", "-o", out, "-j", "1", *extra])
    with open(out, encoding="utf-8") as fh:
        return code, [line for line in fh.read().splitlines() if "WC" in line]


def codes(lines: list[str]) -> list[tuple[str, str]]:
    return [(os.path.basename(line.split(":")[0]), line.split()[1]) for line in lines]


def test_change_in_imported_module_changes_importer_findings(project):
    code, lines = lint(project)
    assert code == 1 and codes(lines) == [("app.py", "WC401")]
    cache_dir = project / ".warplint_cache"
    assert (cache_dir / "CACHEDIR.TAG").read_text().startswith("Signature: 8a477f597d28d172789f06886806bc55")
    assert (cache_dir / ".gitignore").read_text().strip().endswith("*")
    assert any(n.startswith("models-") for n in os.listdir(cache_dir))

    # warm: same findings, straight from the result cache
    assert lint(project) == (code, lines)
    config = Config(root=str(project), select=("WC401",))
    first = Session(config, jobs=1).lint_paths([str(project)])
    warm = Session(config, jobs=1).lint_paths([str(project)])
    assert not first.cached and warm.cached
    assert warm.diagnostics == first.diagnostics and [d.code for d in warm.diagnostics] == ["WC401"]

    # app.py is unchanged, but the module it imports no longer defines kernels
    (project / "kernels_lib.py").write_text(LIB_WITHOUT_KERNEL)
    code, lines = lint(project)
    assert code == 0 and lines == []

    # and back
    (project / "kernels_lib.py").write_text(LIB_WITH_KERNEL)
    code, lines = lint(project)
    assert code == 1 and codes(lines) == [("app.py", "WC401")]


def test_cached_models_match_fresh_models(project):
    Session(Config(root=str(project))).index_root()  # fills the cache
    warm = Session(Config(root=str(project)))
    warm.index_root()
    assert warm.cache is not None and warm.cache.hits == 2 and warm.cache.misses == 0
    fresh = Session(Config(root=str(project)), cache=False)
    fresh.index_root()
    assert warm.models == fresh.models


def test_index_reads_cached_importer_model(project):
    """Editor path: index_root from the cache, then the changed file re-checked."""
    Session(Config(root=str(project), select=("WC401",))).index_root()
    session = Session(Config(root=str(project), select=("WC401",)))
    session.index_root()
    app = str(project / "app.py")
    assert [d.code for d in session.check_text(app, APP)] == ["WC401"]
    assert session.project().defines_kernels_at_import("kernels_lib") == "kernels_lib"
    session.check_text(str(project / "kernels_lib.py"), LIB_WITHOUT_KERNEL)
    assert session.project().defines_kernels_at_import("kernels_lib") is None
    assert session.check_text(app, APP) == []


def test_config_change_changes_findings(project):
    assert codes(lint(project)[1]) == [("app.py", "WC401")]
    (project / "pyproject.toml").write_text('[tool.warplint]\nignore = ["WC401"]\n')
    assert lint(project) == (0, [])
    (project / "pyproject.toml").write_text('[tool.warplint]\nper-file-ignores = { "other.py" = ["WC401"] }\n')
    assert codes(lint(project)[1]) == [("app.py", "WC401")]
    assert lint(project, "--ignore", "WC4") == (0, [])
    (project / "app.py").write_text(APP.replace("= False\n", "= False  # noqa: WC401\n"))
    assert lint(project) == (0, [])


@pytest.mark.parametrize("garbage", [b"", b"not a pickle", pickle.dumps({"format": 1, "salt": "x", "entries": 3}),
                                     pickle.dumps({"format": 1, "entries": {"/a.py": ("d", "m", False, 42)}})])
def test_corrupt_cache_is_survived(project, garbage):
    lint(project)
    cache_dir = project / ".warplint_cache"
    for name in os.listdir(cache_dir):
        if name.endswith(".pickle"):
            (cache_dir / name).write_bytes(garbage)
    code, lines = lint(project)
    assert code == 1 and codes(lines) == [("app.py", "WC401")]
    # and the cache was rewritten in a readable form
    session = Session(Config(root=str(project)))
    session.index_root()
    assert session.cache.hits == 2


def test_truncated_entry_in_valid_cache_is_a_miss(project, tmp_path):
    session = Session(Config(root=str(project)))
    session.index_root()
    cache: ModelCache = session.cache
    cache.entries[str(project / "app.py")] = ("wrong-digest", "app", False, cache.entries[str(project / "app.py")][3])
    cache.changed(str(project / "app.py"))
    cache.save()
    again = Session(Config(root=str(project)))
    again.index_root()
    assert again.cache.misses == 1 and again.cache.hits == 1


def test_no_cache_before_any_cache_exists(project):
    code, lines = lint(project, "--no-cache")
    assert code == 1 and codes(lines) == [("app.py", "WC401")]
    assert not (project / ".warplint_cache").exists()


def test_cache_dir_option(project, tmp_path_factory):
    elsewhere = tmp_path_factory.mktemp("elsewhere") / "c"
    lint(project, "--cache-dir", str(elsewhere))
    assert (elsewhere / "CACHEDIR.TAG").exists()
    assert not (project / ".warplint_cache").exists()
    (project / "pyproject.toml").write_text('[tool.warplint]\ncache-dir = "build/lintcache"\n')
    lint(project)
    assert (project / "build" / "lintcache" / "CACHEDIR.TAG").exists()


def test_unwritable_cache_dir_is_not_an_error(project):
    blocker = project / "blocker"
    blocker.write_text("a file, not a directory\n")
    code, lines = lint(project, "--cache-dir", str(blocker / "cache"))
    assert code == 1 and codes(lines) == [("app.py", "WC401")]


def test_rule_set_is_part_of_the_key(project):
    a = Session(Config(root=str(project)))
    rules = dict(a.rules)
    rules.pop(sorted(rules)[-1])
    b = Session(Config(root=str(project)), rules=rules)
    assert a.cache.salt != b.cache.salt


def test_parallel_workers_give_the_same_models(project, monkeypatch):
    import warplint.engine as engine

    for i in range(4):
        (project / f"mod{i}.py").write_text(LIB_WITH_KERNEL + f"\nX = {i}\n")
    serial = Session(Config(root=str(project)), cache=False, jobs=1)
    serial.index_root()
    monkeypatch.setattr(engine, "PARALLEL_MIN_CHARS", 0)
    parallel = Session(Config(root=str(project)), cache=False, jobs=2)
    parallel.index_root()
    assert parallel.models == serial.models


def test_salt_covers_the_code_cached_findings_come_from(monkeypatch):
    """Suppressions and WC001 (noqa.py), the fixes' edits (edits.py) and Report (rule.py) decide the findings
    the results cache keeps: editing one of them must not serve the findings of the code before."""
    from warplint import cache
    from warplint.registry import all_rules, salt_for

    seen: list[str] = []
    monkeypatch.setattr(cache, "_source_digest", lambda named: seen.extend(path for _, path in named) or "x")
    salt_for(all_rules())
    names = {os.path.basename(p) for p in seen if os.path.dirname(p) == os.path.dirname(cache.__file__)}
    assert {"noqa.py", "edits.py", "rule.py", "engine.py"} <= names, sorted(names)


def test_the_source_digest_is_read_once_and_follows_edits(tmp_path, monkeypatch):
    """A run asks for the salt several times; the sources are hashed once while unchanged, again after an edit."""
    import hashlib

    from warplint import cache

    hashed: list[int] = []

    class CountingHashlib:
        @staticmethod
        def blake2b(*args, **kwargs):
            if kwargs.get("digest_size") == 16:  # the sources' digest (not the key of the one kept for the user)
                hashed.append(1)
            return hashlib.blake2b(*args, **kwargs)

    monkeypatch.setattr(cache, "hashlib", CountingHashlib)
    source = tmp_path / "rule.py"
    source.write_text("code = 1\n")
    first = cache._source_digest([("source.py", str(source))])
    assert first is not None and cache._source_digest([("source.py", str(source))]) == first
    assert len(hashed) == 1  # the second ask read nothing
    before = source.stat().st_mtime_ns
    source.write_text("code = 2\n")  # same size: the stat signature's times move (set apart: coarse clocks)
    os.utime(source, ns=(before + 10**9, before + 10**9))
    assert cache._source_digest([("source.py", str(source))]) not in (None, first)
    assert cache._source_digest([("missing.py", str(tmp_path / "missing.py"))]) is None


def test_cached_calls_and_assignments_unpickle_their_values_on_first_read():
    import dataclasses

    from warplint.diagnostic import Span
    from warplint.model import Assignment, Call, Context, Value

    call = Call("warp.launch", Span(3, 4, 3, 30), (Value("name", text="k"),),
                {"dim": Value("const", text="8", const=8)}, Context("run", 2))
    back = pickle.loads(pickle.dumps(call))
    assert isinstance(back, Call) and back.callee == "warp.launch" and back.ctx == call.ctx
    assert "_unpacked" not in back.__dict__  # the arguments are still bytes
    again = pickle.loads(pickle.dumps(back))  # re-pickled unread: the same bytes go on
    assert again.__dict__["_packed"] == back.__dict__["_packed"]
    assert back.bound("dim") == Value("const", text="8", const=8) and back.args == call.args
    assert back == call and call == back
    moved = dataclasses.replace(back, callee="warp.launch_tiled")
    assert moved.args == call.args and moved.callee == "warp.launch_tiled"
    assignment = Assignment(Value("name", text="x"), Value("const", const=1), Span(1, 0, 1, 5), Context("", 1))
    read = pickle.loads(pickle.dumps(assignment))
    assert read.target == assignment.target and "_unpacked" not in read.__dict__
    assert read.value == assignment.value and read == assignment
    assert read.span == assignment.span and "span" not in read.__dict__  # spans are read back lazily too
    plain = pickle.loads(pickle.dumps(Call("app.f", Span(1, 0, 1, 3), (), {}, Context("", 1))))
    assert "has_star_args" not in plain.__dict__ and plain.has_star_args is False  # defaults: the class's
    assert plain.assigned_to == () and plain.receiver is None
    assert "_packed" not in back.__dict__ and "_packed" not in read.__dict__  # read once: the bytes are gone
    assert pickle.loads(pickle.dumps(back)) == call  # and pickled again from the values


def test_cached_functions_unpickle_their_name_sets_on_first_read():
    from warplint.diagnostic import Span
    from warplint.model import Context, Function, Value

    fn = Function("run", "run", Span(1, 4, 1, 7), [], [], Context("", 1), locals={"a", "b"}, loaded={"wp", "a"},
                  warp_calls={"warp.launch"}, returns=[Value("name", text="a")])
    back = pickle.loads(pickle.dumps(fn))
    assert isinstance(back, Function) and back.qualname == "run" and back.ctx == fn.ctx
    assert "_packed" in back.__dict__ and "_unpacked" not in back.__dict__  # most functions are never asked
    assert back.binds == "" and "_unpacked" not in back.__dict__  # what the binder asks of every one reads none
    assert back.locals == {"a", "b"} and back.loaded == {"wp", "a"} and back.returns == fn.returns
    assert back == fn and fn == back and pickle.loads(pickle.dumps(back)) == fn


def test_a_glimpsed_stored_field_stays_packed():
    """``glimpse`` reads a stored field of a record read back from the cache without keeping it unpacked (the
    binder asks it of every name a method is called on), and reads a record never stored as an attribute."""
    from warplint.diagnostic import Span
    from warplint.model import Assignment, Context, Value, glimpse

    made = Value("call", text="Solver(...)", ref="app.Solver")
    assignment = Assignment(Value("name", text="s"), made, Span(2, 0, 2, 14), Context("run", 1))
    back = pickle.loads(pickle.dumps(assignment))
    assert glimpse(back, "value") == made and glimpse(back, "span") == assignment.span
    assert "_packed" in back.__dict__ and "_unpacked" not in back.__dict__
    assert glimpse(back, "ctx") == assignment.ctx and glimpse(assignment, "value") is made
    assert back.value == made and "_unpacked" in back.__dict__


def test_stored_fields_name_the_model_classes_by_code():
    """A stored record's bytes name ``Value``, ``Span`` and the empty keywords by their one-byte extension codes,
    not by module and name (a quarter of those bytes), and read back as they were."""
    from warplint.diagnostic import Span
    from warplint.model import Call, Context, Value

    call = Call("app.f", Span(3, 4, 3, 30), (Value("name", text="x", ref="app.x", span=Span(3, 6, 3, 7)),), {},
                Context("run", 2))
    back = pickle.loads(pickle.dumps(call))
    packed = back.__dict__["_packed"]
    assert b"warplint" not in packed and b"Span" not in packed and b"_no_keywords" not in packed
    assert back.args == call.args and back.span == call.span and back == call


def test_read_back_values_share_their_strings_and_empty_keywords():
    from warplint.model import NO_KEYWORDS, Value

    first, second = (pickle.loads(pickle.dumps(Value("name", text="wp.vec3", ref="warp." + "vec3"))) for _ in "ab")
    assert first.kind is second.kind and first.text is second.text and first.ref is second.ref
    assert first.kwargs is NO_KEYWORDS and first.kwargs == {} and not hasattr(first, "__dict__")
    with pytest.raises(TypeError):
        first.kwargs["dim"] = first  # shared by every value: never written to
    call = Value("call", kwargs={"dim": first})
    assert pickle.loads(pickle.dumps(call)).kwargs == {"dim": first}


def test_a_grouped_run_lets_go_of_each_index(tmp_path):
    """A root that is no project, holding folders of scripts: each folder is indexed on its own, and the CLI
    keeps no index once its findings are out (only fixes re-check them); a re-check models it again."""
    launch = "import warp as wp\n\nwp.config.fast_math = True\n"  # no such config name: one finding
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "run.py").write_text(launch)
    session = Session(Config(root=str(tmp_path)), cache=False, jobs=1)
    found = session.lint_paths([str(tmp_path)], project_context=True).diagnostics
    indexes = {id(index): index for index in session._owners.values()}.values()
    assert found and len(indexes) == 2 and all(not index.models and index._project is None for index in indexes)
    path = str(tmp_path / "a" / "run.py")
    assert session.recheck([path], {}) == [d for d in found if d.path == path]


def test_a_warm_run_imports_neither_the_rules_nor_libcst(tmp_path):
    """A run the result cache answers selects rules from the table an earlier run kept: importing the rules
    (and with them LibCST) was most of a warm run's time. ``--no-cache`` keeps no table either."""
    (tmp_path / "app.py").write_text("import warp as wp\n\nwp.force_load()\n")
    argv = [str(tmp_path), "--format", "concise", "-j", "1", "-o", str(tmp_path / "out.txt")]
    probe = ("import sys\nfrom warplint.cli import main\n"
             f"code = main({argv!r} + sys.argv[1:])\n"
             "print(code, sorted({m.split('.')[0] if m.startswith('libcst') else m for m in sys.modules\n"
             "                    if m.startswith(('libcst', 'warplint.rules.', 'warplint.extract'))}))\n")
    user_cache = tmp_path / "xdg"
    env = {**os.environ, "XDG_CACHE_HOME": str(user_cache)}

    def run(*extra: str) -> tuple[str, list[str]]:
        done = subprocess.run([sys.executable, "-c", probe, *extra], capture_output=True, text=True, env=env,
                              cwd=tmp_path, check=True)
        code, _, imported = done.stdout.strip().partition(" ")
        return code, ast.literal_eval(imported)

    uncached = run("--no-cache")
    assert uncached[0] == "1" and "libcst" in uncached[1]
    assert not user_cache.exists() and not (tmp_path / ".warplint_cache").exists()
    cold = run()
    assert cold[0] == "1" and "libcst" in cold[1] and any(m.startswith("warplint.rules.") for m in cold[1])
    assert "WC501" in (tmp_path / "out.txt").read_text()
    assert run() == ("1", [])
    assert "WC501" in (tmp_path / "out.txt").read_text()


def test_every_module_the_salt_hashes_exists():
    # A module moved or renamed without updating the list makes the salt None, and the cache silently off.
    import warplint.cache as cache_module

    here = os.path.dirname(cache_module.__file__)
    missing = [name for name in cache_module._MODEL_MODULES if not os.path.exists(os.path.join(here, f"{name}.py"))]
    assert not missing
    assert cache_module.registry_salt() is not None


def test_the_same_warplint_installed_elsewhere_has_the_same_salt(tmp_path):
    """A checkout's editable install and a copy installed into another environment (pre-commit's hook env, a CI
    venv) share a project's cache: the salt hashes what the sources are, not where they lie."""
    import shutil

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    site = tmp_path / "site"  # laid out as pip installs it: rules/ becomes warplint/rules (package-dir)
    ignore = shutil.ignore_patterns("__pycache__")
    shutil.copytree(os.path.join(root, "warplint"), site / "warplint", ignore=ignore)
    shutil.copytree(os.path.join(root, "rules"), site / "warplint" / "rules", ignore=ignore)
    ask = [sys.executable, "-c", "import warplint, warplint.cache as c; print(warplint.__file__, c.registry_salt())"]
    here = subprocess.run(ask, capture_output=True, text=True, check=True, timeout=120).stdout.split()
    there = subprocess.run(ask, capture_output=True, text=True, check=True, timeout=120, cwd=tmp_path,
                           env={**os.environ, "PYTHONPATH": str(site)}).stdout.split()
    assert here[0] != there[0] and there[0].startswith(str(site))  # two copies of warplint, in two places
    assert here[1] == there[1] != "None"


def _result_file(root) -> str:
    found = [n for n in os.listdir(os.path.join(root, ".warplint_cache")) if n.startswith("results-")]
    assert len(found) == 1
    return os.path.join(root, ".warplint_cache", found[0])


def test_a_kept_session_keeps_its_caches_and_reads_what_another_process_wrote(project):
    """A daemon's session runs again and again with the same cache settings: its caches stay the same objects
    (not every shard read back each run), and what another process wrote since is read again."""
    session = Session(Config(root=str(project)), jobs=1)
    first = session.lint_paths([str(project)], project_context=True)
    models, results = session.cache, session._results
    assert models is not None and models.entries and not first.cached
    # another process (its own cache objects) runs after an edit and writes both caches
    (project / "kernels_lib.py").write_text(LIB_WITHOUT_KERNEL)
    other = Session(Config(root=str(project)), jobs=1).lint_paths([str(project)], project_context=True)
    assert not other.cached
    written = ModelCache(models.directory, models.salt, models.secret)
    written.load()
    digest = written.entries[str(project / "kernels_lib.py")][0]
    assert models.entries[str(project / "kernels_lib.py")][0] != digest
    again = session.lint_paths([str(project)], project_context=True)
    assert session.cache is models and session._results is results  # kept
    assert models.entries[str(project / "kernels_lib.py")][0] == digest  # the shard the CLI wrote, read again
    assert again.cached and again.diagnostics == other.diagnostics  # the other's result, read again


def test_held_cache_writes_wait_for_the_flush(project):
    """A daemon answers first and writes its caches after: nothing reaches the disk until ``flush_caches``,
    and then a fresh process's warm run finds the result."""
    session = Session(Config(root=str(project)), jobs=1)
    session.hold_cache_writes()
    found = session.lint_paths([str(project)], project_context=True, cache_dir=str(project / ".warplint_cache"))
    cache_dir = project / ".warplint_cache"
    assert not cache_dir.exists() or not [n for n in os.listdir(cache_dir) if n.endswith(".pickle")]
    session.flush_caches()
    assert any(n.startswith("models-") for n in os.listdir(cache_dir)) and _result_file(project)
    fresh = Session(Config(root=str(project)), jobs=1)
    warm = fresh.lint_paths([str(project)], project_context=True)
    assert warm.cached and warm.diagnostics == found.diagnostics


def test_a_kept_result_cache_evicts_across_runs(project, monkeypatch):
    """Each run of a kept session is a run of its own for eviction: the keys an earlier run used may go, so a
    daemon's result file does not grow with every edit."""
    from warplint import cache as _cache

    monkeypatch.setattr(_cache.ResultCache, "KEEP", 1)
    session = Session(Config(root=str(project)), jobs=1)
    for n in range(5):
        (project / "app.py").write_text(APP + f"\nX = {n}\n")
        session.lint_paths([str(project)], project_context=True)
    assert session._results is not None and len(session._results._load()) <= 3

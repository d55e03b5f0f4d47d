"""A cache directory that arrives with a cloned repository is never trusted.

Every way a planted ``.warplint_cache/`` could act is tried against the real CLI and the real
flake8: a pickle whose loading runs code (old and current layout, under the predictable salt),
a forged results entry that would hide every finding, a genuine file with one byte flipped.
Each time no code runs and the findings equal those of a run without a cache.
"""

from __future__ import annotations

import os
import pickle
import stat
import subprocess
import sys

import pytest

from warplint import cache
from warplint.cache import CACHE_FORMAT, MAGIC, TAG_SIZE, seal
from warplint.cli import main
from warplint.config import Config
from warplint.engine import Session
from warplint.registry import all_rules, salt_for

APP = "import warp as wp\n\nwp.force_load()\n"


class _RunsCode:
    """Unpickling this writes ``marker``: what a planted cache would do with a shell command."""

    def __init__(self, marker: str) -> None:
        self.marker = marker

    def __reduce__(self):
        return (exec, (f"open({self.marker!r}, 'w').write('pwned')",))


@pytest.fixture
def project(tmp_path):
    root = tmp_path / "repo"
    root.mkdir()
    (root / "pyproject.toml").write_text("[tool.warplint]\n")
    (root / "app.py").write_text(APP)
    return root


def lint(root) -> tuple[int, list[str]]:
    out = str(root.parent / "out.txt")
    code = main([str(root), "--format", "concise", "-o", out, "-j", "1"])
    with open(out, encoding="utf-8") as fh:
        return code, [line.split(" ", 1)[1] for line in fh.read().splitlines() if " WC" in line]


def evil_payload(marker) -> bytes:
    salt = salt_for(all_rules())
    return pickle.dumps({"format": CACHE_FORMAT, "salt": salt, "entries": _RunsCode(str(marker))})


def plant(root, data: bytes) -> None:
    salt = salt_for(all_rules())
    directory = root / ".warplint_cache"
    directory.mkdir(exist_ok=True)
    for kind in ("models", "results"):
        (directory / f"{kind}-{salt}.pickle").write_bytes(data)


@pytest.mark.parametrize("layout", ["bare pickle", "forged tag", "attacker's own key"])
def test_planted_pickle_never_runs(project, tmp_path, layout):
    expected = lint(project)  # also writes a genuine cache, which the planted files replace
    assert expected[0] == 1 and expected[1][0].startswith("WC501")
    marker = tmp_path / "pwned"
    payload = evil_payload(marker)
    salt = salt_for(all_rules())
    if layout == "bare pickle":
        data = payload
    elif layout == "forged tag":
        data = MAGIC + os.urandom(TAG_SIZE) + payload
    else:
        data = seal(os.urandom(32), "models", salt, payload)
    plant(project, data)
    assert lint(project) == expected
    assert not marker.exists()
    # flake8 (a fresh process, the plugin's own session) reads the same cache.
    plant(project, data)
    run = subprocess.run([sys.executable, "-m", "flake8", "--select", "WC", "app.py"], cwd=project,
                         capture_output=True, text=True, timeout=120)
    assert "WC501" in run.stdout, run.stdout + run.stderr
    assert not marker.exists()


def test_forged_results_entry_does_not_hide_findings(project):
    expected = lint(project)
    session = Session(Config(root=str(project), source=str(project / "pyproject.toml")), jobs=1)
    results = session._results
    assert results is not None
    # An attacker who knows every input can compute the run key, but not this user's key.
    key = session._run_key([(str(project / "app.py"), APP, None)])
    forged = {key: {"files": 1, "parsed": 1, "diagnostics": [], "externals": [], "missing": []}}
    payload = pickle.dumps({"format": CACHE_FORMAT, "salt": results.salt, "entries": forged})
    with open(results.path, "wb") as fh:
        fh.write(seal(os.urandom(32), "results", results.salt, payload))
    assert lint(project) == expected


def test_tampered_genuine_cache_is_a_miss(project):
    expected = lint(project)
    models = [n for n in os.listdir(project / ".warplint_cache") if n.startswith("models-")]
    path = project / ".warplint_cache" / models[0]
    data = bytearray(path.read_bytes())
    data[-5] ^= 0xFF  # inside the payload: the tag no longer matches
    path.write_bytes(bytes(data))
    session = Session(Config(root=str(project)), jobs=1)
    session.index_root()
    assert session.cache is not None and session.cache.hits == 0 and session.cache.misses == 1
    assert lint(project) == expected


def test_genuine_cache_is_used(project):
    lint(project)
    session = Session(Config(root=str(project)), jobs=1)
    session.index_root()
    assert session.cache is not None and session.cache.hits == 1


def test_key_readable_by_others_means_no_cache(project, tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "home-cache"))
    monkeypatch.setattr(cache, "_SECRETS", {})
    key = cache.user_secret()
    assert key is not None and len(key) == 32
    path = cache.secret_path()
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert cache.user_secret() == key  # made once, then read back
    os.chmod(path, 0o644)
    monkeypatch.setattr(cache, "_SECRETS", {})
    assert cache.user_secret() is None
    assert Session(Config(root=str(project))).cache is None
    assert lint(project)[0] == 1 and not (project / ".warplint_cache").exists()


def test_wrongly_shaped_entries_are_misses(project):
    """Entries with the right tag but the wrong shape (an older warplint's bug, say) are misses."""
    lint(project)
    session = Session(Config(root=str(project)), jobs=1)
    results = session._results
    assert results is not None
    for bad in ({"files": "1"}, {"files": 1, "parsed": 1, "diagnostics": ["x"], "externals": [], "missing": []},
                {"files": 1, "parsed": 1, "diagnostics": [], "externals": [("a",)], "missing": []}):
        results._entries = {"k": bad}
        assert results.get("k") is None
    models = session.cache
    assert models is not None
    models.load()
    absolute = str(project / "app.py")
    models.entries[absolute] = ("digest", "app", False, pickle.dumps("not a model"))
    assert models.get(absolute, "digest", "app.py", "app", False) is None


def test_stale_temp_files_are_removed(project):
    lint(project)
    directory = project / ".warplint_cache"
    # mkstemp's names; a killed write leaves a prefix of a cache file's bytes
    stale, fresh = directory / ".tmp-killed01", directory / ".tmp-writing"
    foreign = directory / ".tmp-notours1"  # warplint's naming, someone else's bytes: kept
    stale.write_bytes(cache.MAGIC[:8])
    fresh.write_bytes(cache.MAGIC[:8])
    foreign.write_bytes(b"someone's notes")
    old = os.stat(stale).st_mtime - 2 * cache.STALE_TEMP_S
    for path in (stale, foreign):
        os.utime(path, (old, old))
    (project / "app.py").write_text(APP + "\n")  # something to save
    lint(project)
    assert not stale.exists() and fresh.exists() and foreign.exists()

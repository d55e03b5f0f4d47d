"""benchmarks/call_counts.py: its reading of a profile, and a clear error for a site that is not a folder."""

import cProfile
import importlib.util
import os
import pickle

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _script():
    spec = importlib.util.spec_from_file_location("call_counts", os.path.join(ROOT, "benchmarks", "call_counts.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _twice(blob):
    return [pickle.loads(blob) for _ in range(2)]


def test_a_profile_is_read_as_calls_and_pickles_read_back(tmp_path):
    profile = cProfile.Profile()
    profile.enable()
    for _ in range(3):
        _twice(pickle.dumps([1, 2]))
    profile.disable()
    path = tmp_path / "p.prof"
    profile.dump_stats(str(path))
    calls, loads, _, per_function = _script()._counts(str(path))
    assert loads == 6
    assert per_function["test_call_counts.py:_twice"] == 3
    assert calls >= sum(per_function.values()) - 1  # every call counted once (the disable call aside)


def test_a_site_that_is_not_a_folder_is_a_usage_error(tmp_path, capsys):
    assert _script().main(["--site", f"x={tmp_path / 'missing'}"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("call_counts: --site") and "\n" not in err

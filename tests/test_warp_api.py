"""The Warp API table binds arguments as Python would for Warp 1.19's signatures."""

from __future__ import annotations

import inspect
import os
import subprocess
import sys

import pytest

from warplint import warp_api
from warplint.engine import analyze


def bound(source: str, parameter: str):
    model = analyze("app.py", "import warp as wp\nfrom warp import force_load\n" + source)
    (call,) = [c for c in model.calls if c.callee.startswith("warp.")]
    value = call.bound(parameter)
    return None if value is None else value.const


def test_positional_and_keyword_arguments_bind_to_their_parameters():
    assert bound("wp.force_load('cpu', None, 64)\n", "block_dim") == 64
    assert bound("wp.force_load(block_dim=128)\n", "block_dim") == 128
    assert bound("force_load('cuda:0', None, 32, 4)\n", "max_workers") == 4
    assert bound("wp.load_module('m', 'cpu', False, 64)\n", "block_dim") == 64
    assert bound("wp.load_module('m', 'cpu', False, 64)\n", "device") == "cpu"
    assert bound("wp.get_module_options('app.solver')\n", "module") == "app.solver"
    assert bound("wp.set_module_options({}, 'app.solver')\n", "module") == "app.solver"
    assert bound("wp.launch(k, 8, [], [], [], [], 'cpu', None, False, True, False, 0, 64)\n", "block_dim") == 64
    assert bound("wp.force_load('cpu')\n", "block_dim") is None


def test_keyword_only_parameters_never_bind_by_position():
    assert warp_api.SIGNATURES["kernel"].position_of("module") is None
    assert bound("wp.kernel(f, module='unique')\n", "module") == "unique"


@pytest.mark.parametrize("name", sorted(set(warp_api.SIGNATURES) - {"launch_tiled"}))
def test_table_matches_the_installed_warp(name):
    """The table is 1.19.0's; the test environment installs warp-lang 1.19 (CPU)."""
    import warp as wp

    target = getattr(wp, name)
    signature = inspect.signature(target.__init__ if isinstance(target, type) else target)
    parameters = [p for p in signature.parameters.values() if p.name != "self"
                  and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    positional = [p.name for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    table = warp_api.SIGNATURES[name]
    assert list(table.parameters) == [p.name for p in parameters]
    assert list(table.parameters[: table.positional]) == positional


def test_the_test_suite_refuses_a_question_the_table_cannot_answer():
    """tests/conftest.py turns strict mode on: a Warp callee without a signature, or a parameter its signature
    lacks, raises (a positional argument would otherwise be missed without a word); project code does not."""
    model = analyze("app.py", "import warp as wp\nwp.tile_zeros(8)\nwp.force_load('cpu')\nhelper(1)\n")
    unknown, force_load, helper = model.calls
    assert warp_api.STRICT
    with pytest.raises(warp_api.UnknownWarpParameter, match=r"warp\.tile_zeros\(\) has no signature"):
        unknown.bound("shape")
    with pytest.raises(warp_api.UnknownWarpParameter, match="no parameter 'module'"):
        force_load.bound("module")  # force_load takes modules=
    assert force_load.bound("device").const == "cpu" and helper.bound("device") is None


def test_a_run_answers_none_and_pays_nothing_for_the_check():
    """Without the test suite's flag, ``Call.bound`` is the plain method and answers None as documented."""
    env = {k: v for k, v in os.environ.items() if k != warp_api.STRICT_ENV}
    code = ("from warplint.engine import analyze\nfrom warplint.model import Call\n"
            "(call,) = analyze('app.py', 'import warp as wp\\nwp.tile_zeros(8)\\n').calls\n"
            "assert not hasattr(Call.bound, '__wrapped__') and call.bound('shape') is None\n")
    subprocess.run([sys.executable, "-c", code], env=env, check=True)

"""The Warp API table binds arguments as Python would for Warp 1.19's signatures."""

from __future__ import annotations

import inspect

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

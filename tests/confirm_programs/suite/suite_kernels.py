"""A tiny Warp test suite for `warplint --confirm -- pytest` (CPU): a fixture's setup builds one module,
a test's call another, a parametrised test one module per parameter. Not collected by the repository's
own test run (the name does not start with test_)."""

import pytest
import warp as wp


@wp.kernel(module="suite_fixture")
def fill(a: wp.array(dtype=float)):
    a[wp.tid()] = 1.0


@wp.kernel(module="suite_call")
def double(a: wp.array(dtype=float)):
    a[wp.tid()] = a[wp.tid()] * 2.0


@pytest.fixture
def filled():
    a = wp.zeros(4, dtype=float, device="cpu")
    wp.launch(fill, dim=4, inputs=[a], device="cpu")
    return a


def test_double(filled):
    wp.launch(double, dim=4, inputs=[filled], device="cpu")
    assert filled.numpy().sum() == 8.0


@pytest.mark.parametrize("n", [1, 2])
def test_scale(n):
    @wp.kernel(module=f"suite_scale_{n}")
    def scale(a: wp.array(dtype=float)):
        a[wp.tid()] = a[wp.tid()] * float(n)

    a = wp.ones(4, dtype=float, device="cpu")
    wp.launch(scale, dim=4, inputs=[a], device="cpu")
    assert a.numpy().sum() == 4.0 * n

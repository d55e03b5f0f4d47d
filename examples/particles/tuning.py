"""Option helpers."""

import warp as wp

from examples.particles import kernels


def fast_mode():
    wp.set_module_options({"max_unroll": 2}, module=kernels)

"""A library whose kernels are created at import: its Warp module snapshots wp.config then."""

import warp as wp


@wp.kernel
def lib_add(a: wp.array(dtype=float)):
    i = wp.tid()
    a[i] = a[i] + 1.0


def step(a):
    wp.launch(lib_add, dim=a.shape[0], inputs=[a], device="cpu")

"""--confirm --what-if fixes / merge-modules test program (CPU).

A kernel with a large adjoint that nothing differentiates (WC907: its fix inserts
`wp.set_module_options({"enable_backward": False})` before the definition), and three one-kernel
modules with the same options (WC910: merge-modules). Markers are used by tests; keep them.
"""

import warp as wp


@wp.kernel  # MARK:def_smooth
def smooth(a: wp.array(dtype=float), b: wp.array(dtype=float)):
    i = wp.tid()
    x = a[i]
    for _j in range(16):  # unrolled: a large forward and adjoint
        x = wp.sin(x) * wp.exp(x * 0.1) + wp.sqrt(x * x + 1.0)
    b[i] = x


@wp.kernel(module="part_a", enable_backward=False)  # MARK:def_part
def fill_a(a: wp.array(dtype=float)):
    a[wp.tid()] += 1.0


@wp.kernel(module="part_b", enable_backward=False)
def fill_b(a: wp.array(dtype=float)):
    a[wp.tid()] += 2.0


@wp.kernel(module="part_c", enable_backward=False)
def fill_c(a: wp.array(dtype=float)):
    a[wp.tid()] += 3.0


a = wp.full(16, 0.5, dtype=float, device="cpu")
b = wp.zeros(16, dtype=float, device="cpu")
wp.launch(smooth, dim=16, inputs=[a, b], device="cpu")
c = wp.zeros(16, dtype=float, device="cpu")
for k in (fill_a, fill_b, fill_c):
    wp.launch(k, dim=16, inputs=[c], device="cpu")
print("fix demo", round(float(b.numpy().sum()), 3), float(c.numpy().sum()))

"""--confirm test program: where the cold start goes (CPU).

`enable_cpu_blocks` keeps block_dim in the module hash on CPU, as on CUDA. The main module has a
differentiable-looking kernel that nothing differentiates, launched at two block_dims; three
one-kernel modules with the same options are built one after another. Markers are used by
tests/test_confirm_profile.py; keep them.
"""

import warp as wp

wp.config.enable_cpu_blocks = True


@wp.kernel  # MARK:def_smooth
def smooth(a: wp.array(dtype=float), b: wp.array(dtype=float)):  # MARK:smooth
    i = wp.tid()
    x = a[i]
    for _j in range(16):  # unrolled: a large forward and adjoint
        x = wp.sin(x) * wp.exp(x * 0.1) + wp.sqrt(x * x + 1.0)
    b[i] = x


@wp.kernel(module="frag_a", enable_backward=False)  # MARK:def_frag
def fill_a(a: wp.array(dtype=float)):
    x = a[wp.tid()]
    for _j in range(16):  # unrolled (a loop of max_unroll's 16 at most): each build stays over WC910's bar
        x = wp.sin(x) * wp.exp(x * 0.1) + wp.sqrt(x * x + 1.0)
    for _j in range(16):
        x = wp.cos(x) * wp.exp(x * 0.2) + wp.sqrt(x * x + 1.0)
    for _j in range(16):
        x = wp.tanh(x) * wp.exp(x * 0.3) + wp.sqrt(x * x + 1.0)
    for _j in range(16):
        x = wp.atan(x) * wp.exp(x * 0.4) + wp.sqrt(x * x + 1.0)
    a[wp.tid()] = x


@wp.kernel(module="frag_b", enable_backward=False)
def fill_b(a: wp.array(dtype=float)):
    x = a[wp.tid()]
    for _j in range(16):  # unrolled (a loop of max_unroll's 16 at most): each build stays over WC910's bar
        x = wp.sin(x) * wp.exp(x * 0.1) + wp.sqrt(x * x + 2.0)
    for _j in range(16):
        x = wp.cos(x) * wp.exp(x * 0.2) + wp.sqrt(x * x + 2.0)
    for _j in range(16):
        x = wp.tanh(x) * wp.exp(x * 0.3) + wp.sqrt(x * x + 2.0)
    for _j in range(16):
        x = wp.atan(x) * wp.exp(x * 0.4) + wp.sqrt(x * x + 2.0)
    a[wp.tid()] = x


@wp.kernel(module="frag_c", enable_backward=False)
def fill_c(a: wp.array(dtype=float)):
    x = a[wp.tid()]
    for _j in range(16):  # unrolled (a loop of max_unroll's 16 at most): each build stays over WC910's bar
        x = wp.sin(x) * wp.exp(x * 0.1) + wp.sqrt(x * x + 3.0)
    for _j in range(16):
        x = wp.cos(x) * wp.exp(x * 0.2) + wp.sqrt(x * x + 3.0)
    for _j in range(16):
        x = wp.tanh(x) * wp.exp(x * 0.3) + wp.sqrt(x * x + 3.0)
    for _j in range(16):
        x = wp.atan(x) * wp.exp(x * 0.4) + wp.sqrt(x * x + 3.0)
    a[wp.tid()] = x


a = wp.full(16, 0.5, dtype=float, device="cpu")  # MARK:defs_end
b = wp.zeros(16, dtype=float, device="cpu")
for _ in range(3):
    wp.launch(smooth, dim=16, inputs=[a, b], device="cpu", block_dim=1)  # MARK:bd_main
wp.launch(smooth, dim=16, inputs=[a, b], device="cpu", block_dim=4)  # MARK:bd_odd
c = wp.zeros(16, dtype=float, device="cpu")
wp.launch(fill_a, dim=16, inputs=[c], device="cpu")  # MARK:frag
wp.launch(fill_b, dim=16, inputs=[c], device="cpu")
wp.launch(fill_c, dim=16, inputs=[c], device="cpu")
print("profile demo", round(float(b.numpy().sum()), 3), float(c.numpy().sum()))

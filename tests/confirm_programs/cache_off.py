"""--confirm test program: the compiled-kernel cache is switched off, so every run compiles."""

import warp as wp

wp.config.cache_kernels = False  # MARK:cache_off


@wp.kernel
def k(a: wp.array(dtype=float)):
    i = wp.tid()
    a[i] = a[i] + 2.0


a = wp.zeros(4, dtype=float, device="cpu")
wp.launch(k, dim=4, inputs=[a], device="cpu")
print("cache_off done", a.numpy().tolist())

"""--confirm test program (CPU): clears the kernel cache after its work, so every run is cold."""

import warp as wp


@wp.kernel
def inc(a: wp.array(dtype=float)):
    a[wp.tid()] = a[wp.tid()] + 1.0


a = wp.zeros(8, dtype=float, device="cpu")
wp.launch(inc, dim=8, inputs=[a], device="cpu")
print("clear cache demo", float(a.numpy().sum()))
wp.clear_kernel_cache()  # MARK:clear

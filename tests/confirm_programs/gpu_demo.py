"""--confirm demo for CUDA: one module launched at two block_dims (CS-5), one with a late set_module_options (CS-3).

Not run by the CPU test suite; scripts/gpu_confirm_demo.sh runs it under --confirm on a GPU machine.
"""

import warp as wp

DEV = "cuda:0"


@wp.kernel
def saxpy(x: wp.array(dtype=float), y: wp.array(dtype=float), a: float):
    i = wp.tid()
    y[i] = a * x[i] + y[i]


@wp.kernel(module="late_opts")
def scale(y: wp.array(dtype=float), s: float):
    i = wp.tid()
    y[i] = y[i] * s


n = 1 << 16
x = wp.ones(n, dtype=float, device=DEV)
y = wp.zeros(n, dtype=float, device=DEV)
wp.launch(saxpy, dim=n, inputs=[x, y, 2.0], device=DEV, block_dim=128)  # MARK:bd128
wp.launch(saxpy, dim=n, inputs=[x, y, 2.0], device=DEV, block_dim=256)  # MARK:bd256
wp.launch(scale, dim=n, inputs=[y, 0.5], device=DEV)
wp.set_module_options({"fast_math": True}, module="late_opts")  # MARK:late_opts
wp.launch(scale, dim=n, inputs=[y, 0.5], device=DEV)
wp.synchronize_device(DEV)
print("gpu demo done", float(y.numpy()[0]))

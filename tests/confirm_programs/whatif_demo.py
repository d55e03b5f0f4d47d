"""--confirm --what-if test program (CPU): one module whose kernel looks differentiable (a large
adjoint), never differentiated. `enable_backward=False` shrinks the build without changing the
workload; `enable_cpu_blocks=True` changes it (the block_dim=4 launch then really runs at 4).
"""

import warp as wp


@wp.kernel
def smooth(a: wp.array(dtype=float), b: wp.array(dtype=float)):
    i = wp.tid()
    x = a[i]
    for _j in range(16):  # unrolled: a large forward and adjoint
        x = wp.sin(x) * wp.exp(x * 0.1) + wp.sqrt(x * x + 1.0)
    b[i] = x


a = wp.full(16, 0.5, dtype=float, device="cpu")
b = wp.zeros(16, dtype=float, device="cpu")
wp.launch(smooth, dim=16, inputs=[a, b], device="cpu", block_dim=4)
print("whatif demo", round(float(b.numpy().sum()), 3))

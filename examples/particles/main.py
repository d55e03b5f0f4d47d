"""Entry point: python -m examples.particles.main"""

import warp as wp

from examples.particles import kernels, tuning

wp.config.enable_backward = False  # too late: kernels is already imported


def main(steps: int = 10):
    wp.clear_kernel_cache()
    n = 1024
    x = wp.zeros(n, dtype=wp.vec3, device="cpu")
    v = wp.ones(n, dtype=wp.vec3, device="cpu")
    for g in (9.81, 1.62):
        for _ in range(steps):
            wp.launch(kernels.integrate, dim=n, inputs=[x, v, 0.01], device="cpu")
            wp.launch(kernels.make_gravity(g), dim=n, inputs=[v, 0.01], device="cpu")
        tuning.fast_mode()
    try:
        wp.load_module("examples.particles.kernelz", device="cpu")
    except RuntimeError:
        pass


if __name__ == "__main__":
    main()

"""Kernels of a tiny particle simulation (a library module)."""

import warp as wp


@wp.kernel
def integrate(x: wp.array(dtype=wp.vec3), v: wp.array(dtype=wp.vec3), dt: float):
    i = wp.tid()
    x[i] = x[i] + v[i] * dt


@wp.kernel
def damp(v: wp.array(dtype=wp.vec3), factor: float):
    i = wp.tid()
    v[i] = v[i] * factor


def make_gravity(g: float):
    # A new kernel per value of g, in the shared module examples.particles.kernels.
    @wp.kernel
    def gravity(v: wp.array(dtype=wp.vec3), dt: float):
        i = wp.tid()
        v[i] = v[i] + wp.vec3(0.0, -g, 0.0) * dt

    return gravity

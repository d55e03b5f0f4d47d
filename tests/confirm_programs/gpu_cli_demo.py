"""End-to-end --confirm demo for CUDA through the CLI (static findings + runtime verdicts).

    warplint gpu_cli_demo.py --confirm -- python gpu_cli_demo.py

One module launched at two block_dims (WC303, CS-5), options changed after a launch
(WC102, CS-3), a kernel created after its module loaded (WC101, CS-1). Not run by the
CPU test suite (it needs a CUDA device); docs/confirm.md records a run.
"""

import warp as wp

DEV = "cuda:0"


@wp.kernel
def saxpy(x: wp.array(dtype=float), y: wp.array(dtype=float), a: float):
    i = wp.tid()
    y[i] = a * x[i] + y[i]


@wp.kernel
def square(y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = y[i] * y[i]


@wp.kernel(module="late_opts")
def scale(y: wp.array(dtype=float), s: float):
    i = wp.tid()
    y[i] = y[i] * s


def make_offset(c: float):
    @wp.kernel(module="late_opts")
    def offset(y: wp.array(dtype=float)):
        i = wp.tid()
        y[i] = y[i] + c

    return offset


def main():
    n = 1 << 16
    x = wp.ones(n, dtype=float, device=DEV)
    y = wp.zeros(n, dtype=float, device=DEV)
    wp.launch(saxpy, dim=n, inputs=[x, y, 2.0], device=DEV, block_dim=128)
    wp.launch(square, dim=n, inputs=[y], device=DEV)  # default block_dim 256: a second build of __main__
    wp.launch(scale, dim=n, inputs=[y, 0.5], device=DEV)
    wp.set_module_options({"fast_math": True}, module="late_opts")
    wp.launch(scale, dim=n, inputs=[y, 0.5], device=DEV)
    wp.launch(make_offset(1.0), dim=n, inputs=[y], device=DEV)
    wp.synchronize_device(DEV)
    print("gpu cli demo done", float(y.numpy()[0]))


if __name__ == "__main__":
    main()

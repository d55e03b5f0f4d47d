"""The concurrent first CPU load race (WC503), run against whichever warp the interpreter has.

Warp 1.17's regression test (test_module_parallel_load.py, _run_parallel_cpu_cold_start) as a program:
four CPU modules force-loaded on four threads in a fresh process, the native compile and load calls held
at a barrier so they start together, then every kernel launched. Exit 0 and "OK <version>" when every
kernel was found; a "Failed to find forward kernel" error otherwise. Run each try in a fresh process with
its own cache, e.g.:

    for i in $(seq 12); do WARP_CACHE_PATH=$(mktemp -d) venv-1.16/bin/python scripts/check_cpu_load_race.py; done
"""

import threading
import uuid
from unittest import mock

import numpy as np
import warp as wp
import warp._src.context as context


def make_kernel():
    @wp.kernel(module=f"parallel_cpu_load_{uuid.uuid4().hex}")
    def transform(values: wp.array(dtype=wp.int32)):
        tid = wp.tid()
        values[tid] = values[tid] * 2 + 1

    return transform


def main() -> None:
    wp.init()
    kernels = [make_kernel() for _ in range(4)]
    compile_barrier, load_barrier = threading.Barrier(4), threading.Barrier(4)
    runtime = context.runtime
    assert runtime is not None  # wp.init() made it
    llvm = runtime.llvm
    compile_cpp, load_obj = llvm.wp_compile_cpp, llvm.wp_load_obj

    def held_compile(*args):
        compile_barrier.wait(timeout=120)
        return compile_cpp(*args)

    def held_load(*args):
        load_barrier.wait(timeout=120)
        return load_obj(*args)

    with mock.patch.object(llvm, "wp_compile_cpp", side_effect=held_compile), \
            mock.patch.object(llvm, "wp_load_obj", side_effect=held_load):
        wp.force_load(device="cpu", modules=[k.module for k in kernels], block_dim=1, max_workers=4)
    values: wp.array = wp.array([0, 1, 2, 3], dtype=wp.int32, device="cpu")
    for kernel in kernels:
        wp.launch(kernel, dim=values.shape, inputs=[values], device="cpu", block_dim=1)
    np.testing.assert_array_equal(values.numpy(), [15, 31, 47, 63])
    print("OK", wp.config.version)


if __name__ == "__main__":
    main()

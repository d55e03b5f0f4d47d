"""--confirm test program: the import-order trap across two files, and a wp.config name that does not exist."""

import warp as wp

import trap_lib

wp.config.enable_backward = False  # MARK:trap (too late: trap_lib's module was created at import)
wp.config.fast_math = True  # MARK:nonexistent (no such config in Warp 1.19)

a = wp.zeros(4, dtype=float, device="cpu")
trap_lib.step(a)
print("trap done", a.numpy().tolist())

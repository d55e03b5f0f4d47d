"""--confirm test program: one kernel whose content differs in every process (a constant from the
process id), so the warm run compiles as much as the cold one (tests/test_confirm_text.py)."""

import os

import warp as wp

RUN = wp.constant(float(os.getpid()))


@wp.kernel
def stamp(a: wp.array(dtype=float)):  # MARK:stamp
    a[wp.tid()] = RUN


a = wp.zeros(1, dtype=float, device="cpu")
wp.launch(stamp, dim=1, inputs=[a], device="cpu")
print("stamped", a.numpy().tolist())

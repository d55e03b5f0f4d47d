"""--confirm test program: one rebuild that three findings explain (tests/test_confirm_text.py).

A kernel created after its module was launched: the definition, the call that creates it and its
launch are each a finding about the same rebuild. Keep the markers."""

import warp as wp


@wp.kernel
def first(a: wp.array(dtype=float)):
    i = wp.tid()
    a[i] = a[i] + 1.0


def make_late():
    @wp.kernel  # MARK:late
    def late(a: wp.array(dtype=float)):
        i = wp.tid()
        a[i] = a[i] * 2.0

    return late


a = wp.zeros(4, dtype=float, device="cpu")
wp.launch(first, dim=4, inputs=[a], device="cpu")
kernel = make_late()  # MARK:make
wp.launch(kernel, dim=4, inputs=[a], device="cpu")  # MARK:launch
print("shared done", a.numpy().tolist())

"""--confirm test program: identity churn inside one process (CPU).

Each marked line is the target of a hand-built finding in tests/test_confirm.py; keep the markers.
"""

import sys

import warp as wp


@wp.kernel
def top(a: wp.array(dtype=float)):
    i = wp.tid()
    a[i] = a[i] + 1.0


@wp.kernel(module="opts_mod")
def scaled(a: wp.array(dtype=float)):
    i = wp.tid()
    a[i] = a[i] * 3.0


def make_same():
    @wp.kernel  # MARK:same
    def same(a: wp.array(dtype=float)):
        i = wp.tid()
        a[i] = a[i] - 1.0

    return same


def make_unique(c: float):
    @wp.kernel(module="unique")  # MARK:unique
    def uniq(a: wp.array(dtype=float)):
        i = wp.tid()
        a[i] = a[i] + c

    return uniq


def run_late(a):
    @wp.kernel  # MARK:late
    def late(a: wp.array(dtype=float)):
        i = wp.tid()
        a[i] = a[i] * 2.0

    wp.launch(late, dim=a.shape[0], inputs=[a], device="cpu")


def never(a):
    @wp.kernel  # MARK:never
    def unused(a: wp.array(dtype=float)):
        i = wp.tid()
        a[i] = 0.0

    wp.launch(unused, dim=a.shape[0], inputs=[a], device="cpu")


a = wp.zeros(4, dtype=float, device="cpu")
same1 = make_same()
wp.launch(top, dim=4, inputs=[a], device="cpu")  # MARK:launch_top
wp.launch(same1, dim=4, inputs=[a], device="cpu")
wp.launch(scaled, dim=4, inputs=[a], device="cpu")
same2 = make_same()  # identical content after the load: no new identity
wp.launch(same2, dim=4, inputs=[a], device="cpu")
wp.set_module_options({"max_unroll": 4}, module="opts_mod")  # MARK:opts_late
wp.launch(scaled, dim=4, inputs=[a], device="cpu")
wp.set_module_options({"max_unroll": 4}, module="opts_mod")  # MARK:opts_same
wp.launch(scaled, dim=4, inputs=[a], device="cpu")
run_late(a)
run_late(a)
for c in (1.0, 2.0, 1.0):
    wp.launch(make_unique(c), dim=4, inputs=[a], device="cpu")
if "--never" in sys.argv:
    never(a)
result = a.numpy().tolist()  # MARK:plain
print("churn done", result)

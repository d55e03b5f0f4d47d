"""CS-1: a kernel defined (with new content) after its module loaded: the module builds twice."""
import warp as wp


@wp.kernel
def top(a: wp.array(dtype=float)):
    i = wp.tid()
    a[i] = a[i] + 1.0


def run(a):
    @wp.kernel
    def late(a: wp.array(dtype=float)):
        i = wp.tid()
        a[i] = a[i] * 2.0

    wp.launch(late, dim=a.shape[0], inputs=[a], device="cpu")


a = wp.zeros(4, dtype=float, device="cpu")
wp.launch(top, dim=4, inputs=[a], device="cpu")
run(a)
run(a)
print("sum", a.numpy().sum())

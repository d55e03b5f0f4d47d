"""--confirm GPU demo program: one module launched at block_dims 128, 256 and 512, and three
independent modules built one after another at their first launches. Device: $WARPLINT_DEMO_DEVICE
(default cuda:0); on CPU `enable_cpu_blocks` keeps block_dim in the hash as on CUDA.
Markers: scripts/gpu_profile_demo.py.
"""

import os

import warp as wp

DEVICE = os.environ.get("WARPLINT_DEMO_DEVICE", "cuda:0")
if DEVICE.startswith("cpu"):
    wp.config.enable_cpu_blocks = True


@wp.kernel
def scale(a: wp.array(dtype=float), s: float):
    i = wp.tid()
    a[i] = a[i] * s


@wp.kernel
def shift(a: wp.array(dtype=float), s: float):
    i = wp.tid()
    a[i] = a[i] + s


@wp.kernel(module="stage_a")
def stage_a1(a: wp.array(dtype=float)):
    i = wp.tid()
    a[i] = wp.sin(a[i])


@wp.kernel(module="stage_a")
def stage_a2(a: wp.array(dtype=float)):
    i = wp.tid()
    a[i] = wp.cos(a[i])


@wp.kernel(module="stage_b")
def stage_b1(a: wp.array(dtype=float)):
    i = wp.tid()
    a[i] = wp.exp(-a[i] * a[i])


@wp.kernel(module="stage_b")
def stage_b2(a: wp.array(dtype=float)):
    i = wp.tid()
    a[i] = wp.sqrt(a[i] * a[i] + 1.0)


@wp.kernel(module="stage_c")
def stage_c1(a: wp.array(dtype=float)):
    i = wp.tid()
    a[i] = wp.abs(a[i]) + 0.5


@wp.kernel(module="stage_c")
def stage_c2(a: wp.array(dtype=float)):
    i = wp.tid()
    a[i] = wp.log(a[i] + 1.0)


a = wp.full(1024, 0.25, dtype=float, device=DEVICE)
for _ in range(4):
    wp.launch(scale, dim=1024, inputs=[a, 1.01], device=DEVICE, block_dim=256)  # MARK:bd256
wp.launch(shift, dim=1024, inputs=[a, 0.1], device=DEVICE, block_dim=128)  # MARK:bd128
wp.launch(scale, dim=1024, inputs=[a, 0.99], device=DEVICE, block_dim=512)  # MARK:bd512
for k1, k2 in ((stage_a1, stage_a2), (stage_b1, stage_b2), (stage_c1, stage_c2)):
    wp.launch(k1, dim=1024, inputs=[a], device=DEVICE, block_dim=256)  # MARK:stages
    wp.launch(k2, dim=1024, inputs=[a], device=DEVICE, block_dim=256)
print("block dims", round(float(a.numpy().sum()), 3))

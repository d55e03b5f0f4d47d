"""--confirm GPU demo program: two one-kernel tile-GEMM modules (16x16 float32 tiles) with
`wp.clear_lto_cache()` between their first launches, as in issue 13. On CUDA each module builds
MathDx GEMM LTOs (more with backward on); the second module needs the same LTOs the clear just
threw away. Device: $WARPLINT_DEMO_DEVICE (default cuda:0). Markers: scripts/gpu_profile_demo.py.
"""

import os

import numpy as np
import warp as wp

TILE = 16
THREADS = 64
DEVICE = os.environ.get("WARPLINT_DEMO_DEVICE", "cuda:0")


@wp.kernel(module="gemm_a")  # MARK:def_gemm_a
def gemm_a(A: wp.array2d(dtype=float), B: wp.array2d(dtype=float), C: wp.array2d(dtype=float)):
    i, j = wp.tid()
    acc = wp.tile_zeros(shape=(TILE, TILE), dtype=float)
    for k in range(A.shape[1] // TILE):
        a = wp.tile_load(A, shape=(TILE, TILE), offset=(i * TILE, k * TILE))
        b = wp.tile_load(B, shape=(TILE, TILE), offset=(k * TILE, j * TILE))
        wp.tile_matmul(a, b, acc)
    wp.tile_store(C, acc, offset=(i * TILE, j * TILE))


@wp.kernel(module="gemm_b")
def gemm_b(A: wp.array2d(dtype=float), B: wp.array2d(dtype=float), C: wp.array2d(dtype=float)):
    i, j = wp.tid()
    acc = wp.tile_zeros(shape=(TILE, TILE), dtype=float)
    for k in range(A.shape[1] // TILE):
        a = wp.tile_load(A, shape=(TILE, TILE), offset=(i * TILE, k * TILE))
        b = wp.tile_load(B, shape=(TILE, TILE), offset=(k * TILE, j * TILE))
        wp.tile_matmul(a, b, acc)
    wp.tile_store(C, acc * 0.5, offset=(i * TILE, j * TILE))


rng = np.random.default_rng(7)
A = wp.array(rng.random((4 * TILE, 2 * TILE), dtype=np.float32), device=DEVICE)
B = wp.array(rng.random((2 * TILE, 3 * TILE), dtype=np.float32), device=DEVICE)
C = wp.zeros((4 * TILE, 3 * TILE), dtype=float, device=DEVICE)
wp.launch_tiled(gemm_a, dim=(4, 3), inputs=[A, B, C], block_dim=THREADS, device=DEVICE)  # MARK:gemm_a
wp.synchronize()
first = float(C.numpy().sum())
wp.clear_lto_cache()  # MARK:clear
wp.launch_tiled(gemm_b, dim=(4, 3), inputs=[A, B, C], block_dim=THREADS, device=DEVICE)  # MARK:gemm_b
# 4 significant digits: the MathDx GEMM and Warp's own tile GEMM (enable_mathdx_gemm=False) sum in another order
print("tile gemm", f"{first:.4g}", f"{float(C.numpy().sum()):.4g}")

"""Warp 1.19 facts (see shared/warp-facts.md), kept as module constants for code that has no project.

The facts of the Warp a project runs against are ``project.warp`` (``warplint/warp_version.py``, tables per
release in ``warplint/warp_versions_data.py``); rules ask that, not these constants.
"""

from __future__ import annotations

from .warp_version import default_facts

WARP_FACTS_VERSION = "1.19.0"

# Copied from wp.config when a module is created, never read again (ctx:4255-4275).
SNAPSHOT_OPTIONS = frozenset(
    {"enable_backward", "max_unroll", "lineinfo", "deterministic", "deterministic_max_records", "compile_time_trace"}
)

# Valid keys of Module.options / @wp.kernel(module_options=...) (ctx:2171-2190).
MODULE_OPTIONS = frozenset(
    {
        "block_dim", "compile_time_trace", "cpu_compiler_flags", "cuda_output", "default_grid_stride",
        "deterministic", "deterministic_max_records", "enable_backward", "enable_mathdx_fft",
        "enable_mathdx_gemm", "enable_mathdx_solver", "extra_build_options", "fast_math", "fuse_fp",
        "lineinfo", "max_unroll", "mode", "optimization_level", "strip_hash",
    }
)

# Module option defaults that do not come from wp.config (a re-set to these changes nothing).
MODULE_OPTION_DEFAULTS = {"fast_math": False, "fuse_fp": True, "block_dim": 256, "strip_hash": False}

# Attributes of warp.config in 1.19.0 (cfg). Anything else assigned is a silent no-op.
CONFIG_NAMES = frozenset(
    {
        "launch_array_access_mode", "version", "verify_fp", "verify_cuda", "print_launches", "mode",
        "optimization_level", "verbose_warnings", "log_level", "verify_autograd_array_access",
        "enable_vector_component_overwrites", "legacy_scalar_return_types", "cache_kernels", "kernel_cache_dir",
        "cuda_output", "ptx_target_arch", "cuda_arch_suffix", "lineinfo", "line_directives", "compile_time_trace",
        "enable_backward", "enable_cpu_blocks", "default_grid_stride", "enable_mathdx_gemm", "enable_mathdx_solver",
        "enable_mathdx_fft", "cpu_compiler_flags", "llvm_cuda", "enable_graph_capture_module_load_by_default",
        "enable_mempools_at_init", "track_memory", "max_unroll", "enable_tiles_in_stack_memory",
        "use_precompiled_headers", "legacy_cpu_linker", "load_module_max_workers", "deterministic",
        "deterministic_max_records", "deterministic_debug", "_git_commit_hash",
    }
)

CONFIG_CACHE_NAMES = frozenset({"cache_kernels", "kernel_cache_dir"})

# Builtins that link MathDx LTOs on CUDA (bi:18375-20199).
MATHDX_TILE_OPS = frozenset(
    {
        "tile_matmul", "tile_fft", "tile_ifft", "tile_cholesky", "tile_cholesky_inplace",
        "tile_cholesky_solve", "tile_cholesky_solve_inplace", "tile_lower_solve", "tile_lower_solve_inplace",
        "tile_upper_solve", "tile_upper_solve_inplace",
    }
)

DEFAULT_CUDA_BLOCK_DIM = 256


def installed_config_names() -> tuple[frozenset[str], str]:
    """Config names of the warp installed with warplint (else the newest table), and where they come from.

    Kept for callers that have no project; rules ask ``project.warp.config_names`` (the project's Warp)."""
    facts = default_facts()
    return facts.config_names, facts.describe()


def installed_module_options() -> tuple[frozenset[str], str]:
    """Module option keys of the warp installed with warplint (else the newest table); see above."""
    facts = default_facts()
    return facts.module_options, facts.describe()

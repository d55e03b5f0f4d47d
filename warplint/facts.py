"""Warp 1.19 facts the rules depend on (see shared/warp-facts.md).

Pinned tables, used as they are unless the installed Warp can be *read* (never
imported) to confirm them: ``facts_source()`` says which, so messages can say it.
"""

from __future__ import annotations

import functools
import importlib.machinery
import os
import re

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


def _find_installed_warp_dir() -> str | None:
    # Locate without importing: PathFinder only searches sys.path for a top-level name.
    spec = importlib.machinery.PathFinder.find_spec("warp")
    if spec is None or not spec.submodule_search_locations:
        return None
    return next(iter(spec.submodule_search_locations))


@functools.lru_cache(maxsize=1)
def installed_config_names() -> tuple[frozenset[str], str]:
    """Config names read from the installed warp/config.py (text only), or the pinned table."""
    warp_dir = _find_installed_warp_dir()
    if warp_dir:
        path = os.path.join(warp_dir, "config.py")
        try:
            with open(path, encoding="utf-8") as fh:
                text = fh.read()
            names = set(re.findall(r"^([a-z_][a-z0-9_]*)\s*(?::[^=\n]+)?=", text, re.M))
            version = re.search(r'^version\s*(?::[^=\n]+)?=\s*"([^"]+)"', text, re.M)
            if names and "enable_backward" in names:
                return frozenset(names), f"installed warp {version.group(1) if version else '?'}"
        except OSError:
            pass
    return CONFIG_NAMES, f"pinned warp {WARP_FACTS_VERSION} table"


# `self.options = {` ... `}` in Module.__init__ of warp/_src/context.py: the keys are the valid options.
_MODULE_OPTIONS_BLOCK = re.compile(r"^\s+self\.options = \{\n(.*?)^\s+\}", re.M | re.S)
_OPTION_KEY = re.compile(r'^\s*"([a-z_][a-z0-9_]*)"\s*:', re.M)


@functools.lru_cache(maxsize=1)
def installed_module_options() -> tuple[frozenset[str], str]:
    """Module option keys read from the installed warp/_src/context.py (text only), or the pinned table."""
    warp_dir = _find_installed_warp_dir()
    if warp_dir:
        try:
            with open(os.path.join(warp_dir, "_src", "context.py"), encoding="utf-8") as fh:
                text = fh.read()
            with open(os.path.join(warp_dir, "config.py"), encoding="utf-8") as fh:
                version = re.search(r'^version\s*(?::[^=\n]+)?=\s*"([^"]+)"', fh.read(), re.M)
        except OSError:
            text, version = "", None
        for block in _MODULE_OPTIONS_BLOCK.finditer(text):
            names = set(_OPTION_KEY.findall(block.group(1)))
            # Sanity: the block must look like Module's option table, else trust the pinned one.
            if {"block_dim", "enable_backward", "max_unroll"} <= names and len(names) >= 10:
                return frozenset(names), f"installed warp {version.group(1) if version else '?'}"
    return MODULE_OPTIONS, f"pinned warp {WARP_FACTS_VERSION} option table"

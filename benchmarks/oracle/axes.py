"""The catalogues the generator composes: each axis is a list of Python / Warp *semantics*.

An axis value is a name the matrix in docs/accuracy.md reports; the first value of each axis is its trivial
value (a program's *depth* is how many axes are not at their trivial value).
"""

from __future__ import annotations

# the mechanism injected (variant "bug") or its harmless look-alike (any other variant); the generator's
# intent only: the label of a program comes from running it (truth.py)
MECHANISMS: dict[str, dict[str, bool]] = {
    # CS-1: a kernel created after its module loaded
    "CS-1": {"late_varying": True, "late_once": True, "before_load": False, "identical_redefined": False,
             "own_module": False},
    # CS-2: the compiled cache is thrown away
    "CS-2": {"clear_on_path": True, "cache_off": True, "temp_dir": True, "rmtree_at_exit": True,
             "clear_behind_flag": False, "maintenance_only": False, "cache_on": False, "stable_dir": False},
    # CS-3: module options after the first load
    "CS-3": {"after_load": True, "before_load": False, "same_value": False, "options_mutated_after_load": True},
    # CS-3b: options that land nowhere
    "CS-3b": {"helper_without_module": True, "helper_with_module": False, "unknown_config": True,
              "known_config": False, "snapshot_after_import": True, "snapshot_before_import": False},
    # CS-4: one-kernel modules
    "CS-4": {"fragmented": True, "shared_module": False, "distinct_options": False},
    # CS-5: one module at several block_dims (CPU blocks on)
    "CS-5": {"two_block_dims": True, "same_block_dim": False, "isolated_module": False},
    # CS-6: generic kernel instances added after the load
    "CS-6": {"late_instance": True, "registered_up_front": False, "one_dtype": False},
    # CS-9: module="unique" on stable kernels
    "CS-9": {"stable_unique": True, "specializations": False, "shared_module": False},
    # CS-10: enable_backward and differentiation
    "CS-10": {"backward_off_after_import": True, "backward_off_before_import": False,
              "differentiated": False, "not_differentiated": False},
    # CS-13: preloads
    "CS-13": {"force_load_all": True, "force_load_modules": False, "swallowed_typo": True,
              "load_correct_name": False},
}

# how the key kernel is created
CREATION = (
    "decorator", "wp_kernel_later", "kernel_opts_call", "project_decorator", "factory", "class_method",
    "closure", "property", "cached_property", "descriptor", "functools_cache", "lru_cache", "dict_cache",
    "self_none", "singleton",
)

# how the key value (kernel, module name, block_dim, dtype, option value) reaches its call
DELIVERY = (
    "direct", "module_constant", "param_positional", "param_keyword", "param_default", "param_varargs",
    "param_kwargs", "partial", "attr_self", "dataclass_field", "class_attr", "tuple_unpack", "list_item",
    "dict_literal", "dict_filled_later", "runtime_key_table", "return_1", "return_2", "wrapper_func_1",
    "wrapper_func_2", "wrapper_method", "runtime_computed",
)

# when the mechanism's steps run
TIMING = (
    "same_function", "caller_callee", "loop_tuple", "init_then_method", "import_time", "main_guard",
    "pytest_one_file", "pytest_files_conftest", "second_entry_point",
)

# single file or a package of 2-4 modules
LAYOUT = ("single", "package_2", "package_3", "package_4")

AXES: dict[str, tuple[str, ...]] = {
    "creation": CREATION,
    "delivery": DELIVERY,
    "timing": TIMING,
    "layout": LAYOUT,
}

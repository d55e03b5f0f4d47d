"""The catalogues the generator composes: each axis is a list of Python / Warp *semantics*.

An axis value is a name the matrix in docs/accuracy.md reports; the first value of each axis is its trivial
value (a program's *depth* is how many axes are not at their trivial value).

The catalogues are versioned: a value added to a tuple changes what every seed draws (a draw picks by
position), so each run records the generator version it drew with and old runs keep drawing their own
catalogue (``catalogue(version)``), while a new run draws the newest (``GENERATOR_VERSION``). Version 1 is
the catalogue every run before the version was recorded drew; version 2 adds idioms of code the team had not
written (issue 26's breadth: unittest / fixtures / parametrize / argparse entry points, kernels made by a
``functools.partial`` of ``wp.kernel``, a comprehension, a ``getattr`` lookup, a class attribute, a registry
decorator, values carried by an enum, a NamedTuple, a frozen dataclass, a ``SimpleNamespace``, a ``global``
setter, a ``**`` splat, and mechanism variants: untyped generic arrays, one-kernel modules over several files,
a forward-only entry point of a library another entry point differentiates); version 3 adds configuration and
step-running idioms (``dict.get`` defaults, ``None`` defaults, merged dicts, ``dataclasses.replace``, a callback
registry, a ``concurrent.futures`` executor).
"""

from __future__ import annotations

# the mechanism injected (variant "bug") or its harmless look-alike (any other variant); the generator's
# intent only: the label of a program comes from running it (truth.py)
MECHANISMS_V1: dict[str, dict[str, bool]] = {
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
    # CS-10: enable_backward and differentiation (a module built with backward code nothing differentiates is
    # a defect: the truth labels it ``adjoint-unused``)
    "CS-10": {"backward_off_after_import": True, "backward_off_before_import": False,
              "differentiated": False, "not_differentiated": True},
    # CS-13: preloads
    "CS-13": {"force_load_all": True, "force_load_modules": False, "swallowed_typo": True,
              "load_correct_name": False},
}

# how the key kernel is created
CREATION_V1 = (
    "decorator", "wp_kernel_later", "kernel_opts_call", "project_decorator", "factory", "class_method",
    "closure", "property", "cached_property", "descriptor", "functools_cache", "lru_cache", "dict_cache",
    "self_none", "singleton",
)

# how the key value (kernel, module name, block_dim, dtype, option value) reaches its call
DELIVERY_V1 = (
    "direct", "module_constant", "param_positional", "param_keyword", "param_default", "param_varargs",
    "param_kwargs", "partial", "attr_self", "dataclass_field", "class_attr", "tuple_unpack", "list_item",
    "dict_literal", "dict_filled_later", "runtime_key_table", "return_1", "return_2", "wrapper_func_1",
    "wrapper_func_2", "wrapper_method", "runtime_computed",
)

# when the mechanism's steps run
TIMING_V1 = (
    "same_function", "caller_callee", "loop_tuple", "init_then_method", "import_time", "main_guard",
    "pytest_one_file", "pytest_files_conftest", "second_entry_point",
)

# single file or a package of 2-4 modules
LAYOUT = ("single", "package_2", "package_3", "package_4")

# version 2: values appended to version 1's (version 1's order stays: its draws are by position)
MECHANISMS_ADDED_2: dict[str, dict[str, bool]] = {
    # CS-4: one one-kernel module per file of a package (each file's kernel in its file's own module)
    "CS-4": {"fragmented_files": True},
    # CS-6: a generic kernel by an array annotation with no dtype (``wp.array(ndim=1)``: generic in Warp)
    "CS-6": {"late_instance_untyped": True, "one_dtype_untyped": False},
    # CS-10: backward built for a library's kernels by a forward-only entry point, while another entry point
    # of the project differentiates them: no defect (both programs build, and share, one identity)
    "CS-10": {"forward_entry_of_differentiated_library": False},
}
CREATION_ADDED_2 = ("partial_decorator", "partial_call", "comprehension", "getattr_lookup", "class_attr_kernel",
                    "registry_decorator")
DELIVERY_ADDED_2 = ("enum_member", "namedtuple_field", "frozen_dataclass", "simple_namespace", "global_setter",
                    "kwargs_splat")
TIMING_ADDED_2 = ("pytest_unittest_class", "pytest_fixture", "pytest_parametrize", "argparse_main")


# version 3: idioms of configuration and of running steps common in real code that no earlier version wrote: a
# value read with ``dict.get``'s default, a ``None`` default replaced in the body, a merged dict (``{**base}``), a
# ``dataclasses.replace``d config; steps a decorator registers in a list that ``main`` runs, and steps handed to a
# ``concurrent.futures`` executor one after another
DELIVERY_ADDED_3 = ("dict_get_default", "none_default", "dict_merge", "dataclass_replace")
TIMING_ADDED_3 = ("callback_registry", "executor_submit")

GENERATOR_VERSION = 3  # what a new run draws


def catalogue(version: int) -> tuple[dict[str, dict[str, bool]], dict[str, tuple[str, ...]]]:
    """(mechanisms with their variants, axes with their values) that generator ``version`` draws from."""
    if version not in range(1, GENERATOR_VERSION + 1):
        raise ValueError(f"unknown oracle generator version {version} (1..{GENERATOR_VERSION})")
    mechanisms = {m: dict(vs) for m, vs in MECHANISMS_V1.items()}
    axes = {"creation": CREATION_V1, "delivery": DELIVERY_V1, "timing": TIMING_V1, "layout": LAYOUT}
    if version >= 2:
        for m, vs in MECHANISMS_ADDED_2.items():
            mechanisms[m].update(vs)
        axes = {"creation": CREATION_V1 + CREATION_ADDED_2, "delivery": DELIVERY_V1 + DELIVERY_ADDED_2,
                "timing": TIMING_V1 + TIMING_ADDED_2, "layout": LAYOUT}
    if version >= 3:
        axes = {**axes, "delivery": axes["delivery"] + DELIVERY_ADDED_3, "timing": axes["timing"] + TIMING_ADDED_3}
    return mechanisms, axes


# the newest catalogue: every value any version draws (the report's tables and the scorer read these)
MECHANISMS, AXES = catalogue(GENERATOR_VERSION)
CREATION, DELIVERY, TIMING = AXES["creation"], AXES["delivery"], AXES["timing"]

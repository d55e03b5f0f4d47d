"""Warp-version-aware facts: the extractor, the generated tables, version detection, and verdicts per version."""

import builtins
import importlib.util
import json
import os
import subprocess
import sys
import textwrap

import pytest

from warplint import facts, warp_version
from warplint import warp_version_extract as extract
from warplint.config import ConfigError, load_config
from warplint.registry import all_rules
from warplint.warp_versions_data import CPU_PARALLEL_LOAD_FIXED_IN, TABLES, WHEELS

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, "warplint", "warp_versions_data.py")


def _script():
    spec = importlib.util.spec_from_file_location("build_warp_facts", os.path.join(ROOT, "scripts",
                                                                                   "build_warp_facts.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# ---------------------------------------------------------------------------------------------- the extractor

CONFIG_1_10 = '''
from typing import Optional

version: str = "1.10.1"
"""Warp version string"""

verbose: bool = False
enable_backward: bool = True
kernel_cache_dir: Optional[str] = None
_git_commit_hash = None
'''

CONFIG_1_19 = '''
version: str = "1.19.0"
log_level: int = 30
enable_backward: bool = True
load_module_max_workers: int | None = 0
def _helper():
    inner = 1
'''


def test_config_names_and_version_of_both_shapes():
    assert extract.config_version(CONFIG_1_10) == "1.10.1"
    assert extract.config_names(CONFIG_1_10) == {"version", "verbose", "enable_backward", "kernel_cache_dir",
                                                 "_git_commit_hash"}
    names = extract.config_names(CONFIG_1_19)
    assert "load_module_max_workers" in names and "verbose" not in names
    assert "inner" not in names and "_helper" not in names  # only module-level bindings
    with pytest.raises(extract.ExtractError):
        extract.config_names("x = 1\n")  # not Warp's config module


def test_config_defaults_are_the_literal_values_only():
    config = CONFIG_1_19 + "max_unroll: int = 16\nmode = _os.environ.get('WARP_MODE', 'release')\n"
    defaults = extract.config_defaults(config)
    assert defaults["max_unroll"] == 16 and defaults["enable_backward"] is True and defaults["log_level"] == 30
    assert "mode" not in defaults  # computed at import: no one default
    assert extract.config_defaults(CONFIG_1_10)["kernel_cache_dir"] is None


TYPES_ARRAY = '''
class array(Array):
    """A fixed-size multi-dimensional array.

    Attributes:
        dtype (DType): The data type of the array.
        ndim (int): The number of array dimensions.
        shape (tuple[int]): Dimensions of the array.
        pinned (bool): Indicates whether the array was allocated in pinned host memory.

    Notes:
        size (int): not an attribute entry
    """
'''


def test_array_extents_are_the_documented_integer_attributes():
    assert extract.array_extents(TYPES_ARRAY) == {"ndim", "shape"}
    with pytest.raises(extract.ExtractError):
        extract.array_extents(TYPES_ARRAY.replace("Attributes:", "Fields:"))


TYPES_ARRAY_TYPES = '''
Any = object
Scalar = TypeVar("Scalar")

class array(Array):
    def __init__(self, data=None, dtype: Any = Any, shape=None):
        pass

class indexedarray(noncontiguous_array_base):
    def __init__(self, data=None, indices=None, dtype=None, ndim=None):
        pass

def array1d(*args, **kwargs):  # the 1.10 .. 1.11 shape of an alias
    kwargs["ndim"] = 1
    return array(*args, **kwargs)

class array2d(Array):  # the 1.12+ shape
    def __new__(cls, *args, **kwargs):
        kwargs["ndim"] = 2
        return array(*args, **kwargs)

def indexedarray1d(*args, **kwargs):
    kwargs["ndim"] = 1
    return indexedarray(*args, **kwargs)

def from_ptr(ptr, length, dtype=None):  # builds an array; not a type
    return array(ptr=ptr, shape=(length,), dtype=dtype)

from warp.fabric import fabricarray
array_types = (array, indexedarray, fabricarray)
generic_types = (Any, Scalar)
'''
FABRIC = '''
class fabricarray(noncontiguous_array_base):
    def __init__(self, data=None, attrib=None, dtype=Any, ndim=None):
        pass
'''


def test_array_types_are_warps_array_types_and_the_aliases_that_forward_to_one():
    found = extract.array_types(TYPES_ARRAY_TYPES, FABRIC)
    assert found.classes == {"array", "indexedarray", "fabricarray", "array1d", "array2d", "indexedarray1d"}
    assert found.dtype_any == {"array", "fabricarray", "array1d", "array2d"}
    assert extract.generic_types(TYPES_ARRAY_TYPES) == {"Any", "Scalar"}
    with pytest.raises(extract.ExtractError):  # fabricarray's class is in a source not given
        extract.array_types(TYPES_ARRAY_TYPES)
    with pytest.raises(extract.ExtractError):
        extract.array_types(TYPES_ARRAY_TYPES.replace("array_types =", "array_kinds ="), FABRIC)


def test_the_1_19_table_holds_the_array_and_generic_types_of_the_installed_warp():
    """Checked against the installed Warp 1.19 itself: each name of the table, called bare as Warp's API, makes
    an array (``is_array``) that is generic exactly when the table says its dtype defaults to Any."""
    import warp as wp
    import warp._src.types as warp_types

    assert wp.config.version == "1.19.0"
    table = TABLES["1.19.0"]
    assert {c.__name__ for c in warp_types.array_types} <= set(table["array_types"])
    subclasses = {name for name in dir(wp) if isinstance(getattr(wp, name), type)
                  and issubclass(getattr(wp, name), warp_types.array_types)}
    assert subclasses <= set(table["array_types"])
    assert {"fixedarray", "indexedarray1d", "indexedarray4d"} <= set(table["array_types"])  # a hand-written list missed
    for name in table["array_types"]:
        made = getattr(wp, name)()
        assert warp_types.is_array(made), name
        assert warp_types.type_is_generic(made) == (name in table["array_types_dtype_any"]), name
    assert {t.__name__ for t in warp_types.generic_types} == set(table["generic_types"])


TYPES_VALUE_TYPES = '''
import functools

class float_base: ...
class float32(float_base): ...
class float64(float_base): ...
class int32: ...
class bool: ...

int_types = (int32,)
float_types = (float32, float64)
scalar_types = int_types + float_types
scalar_and_bool_types = (*scalar_types, bool)

@functools.cache
def vector(length, dtype): ...

@functools.cache
def matrix(shape, dtype): ...

class vec3f(vector(length=3, dtype=float32)): ...
class vec2d(vector(2, float64)): ...
class mat22f(matrix(shape=(2, 2), dtype=float32)): ...

vec3 = vec3f
vector_types = (vec3f, vec2d, mat22f)
'''


def test_value_types_are_warps_scalars_and_built_in_composites_with_their_aliases():
    found = extract.value_types(TYPES_VALUE_TYPES)
    assert found.types["float32"] == ("float32", "", (), "float32")
    assert found.types["bool"] == ("bool", "", (), "bool")  # scalar_and_bool_types, through `+` and `*`
    assert found.types["vec3"] == found.types["vec3f"] == ("vec3f", "vector", (3,), "float32")  # the alias
    assert found.types["vec2d"] == ("vec2d", "vector", (2,), "float64")  # positional arguments bound by name
    assert found.types["mat22f"] == ("mat22f", "matrix", ((2, 2),), "float32")
    assert found.constructors == {"vector": ("length", "dtype"), "matrix": ("shape", "dtype")}
    assert "float_base" not in found.types and "int_types" not in found.types
    with pytest.raises(extract.ExtractError):  # a built-in type of a dtype that is no scalar
        extract.value_types(TYPES_VALUE_TYPES.replace("vector(2, float64)", "vector(2, float_base)"))


TYPES_PYTHON_SCALARS = '''
import builtins

class float32: ...
class int32: ...
class bool: ...

def vector(length, dtype):
    if dtype is int:
        dtype = int32
    elif dtype is float:
        dtype = float32
    elif dtype is builtins.bool:
        dtype = bool

def type_to_warp(dtype):
    if dtype == float:
        return float32
    elif dtype == int:
        return int32
    elif dtype == builtins.bool:
        return bool
    elif dtype == bool:
        return int32
    else:
        return dtype
'''


def test_python_scalar_types_are_what_type_to_warp_makes_of_python_s_types():
    # `bool` in types.py is Warp's own class (the module defines it): only `builtins.bool` is Python's
    assert extract.python_scalar_types(TYPES_PYTHON_SCALARS) == {"float": "float32", "int": "int32", "bool": "bool"}
    with pytest.raises(extract.ExtractError):  # a constructor that canonicalises another way than type_to_warp
        extract.python_scalar_types(TYPES_PYTHON_SCALARS.replace("dtype = int32\n    elif dtype is float",
                                                                 "dtype = float32\n    elif dtype is float"))
    with pytest.raises(extract.ExtractError):
        extract.python_scalar_types(TYPES_PYTHON_SCALARS.replace("def type_to_warp", "def to_warp"))
    for version, table in TABLES.items():  # the same in every release read (1.10 compared with `==`)
        assert table["python_scalar_types"] == {"bool": "bool", "float": "float32", "int": "int32"}, version


def test_public_type_names_are_warps_re_exports_under_another_name_and_deprecated_forwarding():
    names = {"float32", "vec3", "vector", "matrix"}
    package = "from warp._src.types import float32 as float32\nfrom warp._src.types import vector as vec\n"
    assert extract.public_type_names("warp", package, names) == {"warp.vec": "vector"}  # warp.float32 is its own
    forwarding = ("from warp._src.types import vector as vector\nfrom warp._src import types as _types\n"
                  "def __getattr__(name):\n    return get_deprecated_api(_types, 'wp', name)\n")
    assert extract.public_type_names("warp.types", forwarding, names) == {
        "warp.types.vector": "vector", "warp.types.float32": "float32", "warp.types.vec3": "vec3",
        "warp.types.matrix": "matrix"}
    assert extract.public_type_names("warp.types", forwarding.split("def ")[0], names) == {
        "warp.types.vector": "vector"}  # no forwarding: only what it re-exports


def test_the_1_19_table_holds_the_value_types_of_the_installed_warp():
    """Checked against the installed Warp 1.19: each name is Warp's class of that own name, two names are one
    entry exactly when they are one object, and the entry's shape and scalar are the class's own."""
    import warp as wp
    import warp._src.types as warp_types

    table = TABLES["1.19.0"]
    objects = {name: getattr(wp, name) for name in table["value_types"]}
    for name, (own, constructor, arguments, scalar) in table["value_types"].items():
        assert objects[name] is getattr(wp, own) and objects[name].__name__ == own, name
        for other, entry in table["value_types"].items():
            assert (objects[name] is objects[other]) == (entry == table["value_types"][name]), (name, other)
        if constructor == "vector":
            assert objects[name]._length_ == arguments[0] and objects[name]._wp_scalar_type_ is getattr(wp, scalar)
        elif constructor == "matrix":
            assert objects[name]._shape_ == arguments[0] and objects[name]._wp_scalar_type_ is getattr(wp, scalar)
        elif not constructor:
            assert objects[name] in warp_types.scalar_and_bool_types and name == scalar
    assert set(objects.values()) >= set(warp_types.scalar_and_bool_types) | set(warp_types.vector_types)
    for spelling, name in table["public_type_names"].items():
        assert getattr(wp.types, spelling.rpartition(".")[2]) is getattr(warp_types, name)
    assert set(table["value_type_constructors"]) == set(table["public_type_names"].values())
    for python, scalar in table["python_scalar_types"].items():
        python_type = getattr(builtins, python)
        assert warp_types.type_to_warp(python_type) is getattr(wp, scalar), python
        assert wp.array(dtype=python_type).dtype is getattr(wp, scalar), python
        assert wp.types.vector(3, python_type)._wp_scalar_type_ is getattr(wp, scalar), python
        assert wp.types.matrix((2, 2), python_type)._wp_scalar_type_ is getattr(wp, scalar), python


HASH_PROBE = '''
import builtins, json, sys
import warp as wp
import warp._src.types as warp_types

wp.config.log_level = wp.LOG_WARNING
wp.init()
table = json.loads(sys.argv[1])


def module_hash(dtype, name):
    @wp.kernel(module=name)
    def k(a: wp.array(dtype=dtype)):
        a[wp.tid()] = dtype()

    return k.module.hash_module().hex()


python_types = {scalar: getattr(builtins, python) for python, scalar in json.loads(sys.argv[2]).items()}
found = {}
for name, (own, constructor, arguments, scalar) in table.items():
    found[name] = module_hash(getattr(wp, name), f"named_{name}")
    if constructor:
        arguments = [tuple(a) if isinstance(a, list) else a for a in arguments]  # JSON made the shapes lists
        made = getattr(warp_types, constructor)(*arguments, dtype=getattr(wp, scalar))
        found[f"made_{name}"] = module_hash(made, f"made_{name}")
    if scalar in python_types:  # the Python type Warp maps to the scalar, where the scalar would be
        made = getattr(warp_types, constructor)(*arguments, dtype=python_types[scalar]) if constructor \
            else python_types[scalar]
        found[f"python_{name}"] = module_hash(made, f"python_{name}")
print(json.dumps(found))
'''


def test_a_value_type_s_identity_is_what_warp_hashes_into_a_kernel(tmp_path):
    """On the installed Warp 1.19 (CPU, hashing only, a private cache): a kernel reading a built-in type hashes
    like one reading the same constructor's type of the same shape (``vector(length=3, dtype=float32)``, another
    class object than ``vec3f``), and unlike one reading any type of another identity (``transformation`` is not
    ``vector(7)``); a Python scalar type where the scalar would be hashes like the Warp scalar Warp maps it to
    (``vector(3, float)`` like ``vec3f``)."""
    table = {k: v for k, v in TABLES["1.19.0"]["value_types"].items() if k in ("float32", "float64", "int32", "bool")
             or (v[1] in ("vector", "matrix", "quaternion", "transformation") and v[3] in ("float32", "float64"))}
    probe = tmp_path / "probe.py"  # Warp reads a kernel's source from its file
    probe.write_text(HASH_PROBE)
    python = TABLES["1.19.0"]["python_scalar_types"]
    result = subprocess.run([sys.executable, str(probe), json.dumps(table), json.dumps(python)], capture_output=True,
                            text=True,
                            env={**os.environ, "WARP_CACHE_PATH": str(tmp_path / "cache")}, timeout=300, check=False)
    assert result.returncode == 0, result.stderr
    hashes = json.loads(result.stdout.strip().splitlines()[-1])
    for name, entry in table.items():
        if entry[1]:
            assert hashes[f"made_{name}"] == hashes[name], name
        if entry[3] in python.values():  # `vector(3, float)` is `vec3f`, `float` is `float32` to a kernel
            assert hashes[f"python_{name}"] == hashes[name], name
        for other, other_entry in table.items():
            assert (hashes[name] == hashes[other]) == (tuple(entry[1:]) == tuple(other_entry[1:])), (name, other)


CONTEXT_1_10 = '''
class Kernel:
    def __init__(self, options=None):
        self.options = {} if options is None else options

class Module:
    def __init__(self, name, loader):
        self.name = name
        self.options = {
            "max_unroll": warp._src.config.max_unroll,
            "enable_backward": warp._src.config.enable_backward,
            "fast_math": False,
            "block_dim": 256,
            "mode": None,
        }

def launch(kernel, dim, inputs=(), device=None, block_dim: int = 256, max_blocks=0):
    pass
'''

CONTEXT_1_19 = '''
class Module:
    def __init__(self, name, loader):
        self.options = {
            "max_unroll": warp.config.max_unroll,
            "enable_backward": warp.config.enable_backward,
            "deterministic": warp.config.deterministic,
            "enable_mathdx_gemm": None,
            "fuse_fp": True,
            "block_dim": 256,
        }

def _resolve_launch_block_dim(device, block_dim):
    default = 1 if device.is_cpu else 256
    return default

def launch(kernel, dim, inputs=(), *, device=None, block_dim: int | None = None):
    pass

def kernel(f=None, *, module_options=None):
    raise ValueError(f"@wp.kernel for '{f}': unknown module_options: {module_options}")
'''


def test_module_option_table_of_both_shapes():
    old = extract.module_options(CONTEXT_1_10)
    assert old.keys == {"max_unroll", "enable_backward", "fast_math", "block_dim", "mode"}
    assert old.snapshot == {"max_unroll": "max_unroll", "enable_backward": "enable_backward"}
    assert old.constants == {"fast_math": False, "block_dim": 256, "mode": None}
    new = extract.module_options(CONTEXT_1_19)  # Kernel.options is skipped: only Module's table counts
    assert set(new.snapshot) == {"max_unroll", "enable_backward", "deterministic"}
    assert new.constants["enable_mathdx_gemm"] is None and new.constants["fuse_fp"] is True
    with pytest.raises(extract.ExtractError):
        extract.module_options("class Module:\n    def __init__(self):\n        self.options = dict()\n")


def test_launch_default_and_module_options_validation():
    assert extract.launch_block_dim_default(CONTEXT_1_10) == 256  # the signature's default
    assert extract.launch_block_dim_default(CONTEXT_1_19.replace("else 256", "else 128")) == 128  # the resolver's
    assert not extract.module_options_validated(CONTEXT_1_10)
    assert extract.module_options_validated(CONTEXT_1_19)
    assert extract.kernel_takes_module_options(CONTEXT_1_19)
    assert not extract.kernel_takes_module_options(CONTEXT_1_19.replace("*, module_options=None", "*, module=None"))
    with pytest.raises(extract.ExtractError):
        extract.kernel_takes_module_options(CONTEXT_1_10)  # no module-level def kernel to read


BUILTINS = '''
import functools

def tile_diag_add_lto_dispatch_func(arg_types, return_type, return_values, arg_values, options, builder):
    a = arg_values["a"]
    a.type.storage = "shared"
    return ((), [], [], 0)

def tile_matmul_lto_dispatch_func(arg_types, return_type, return_values, arg_values, options, builder):
    if options["output_arch"] is None or not options.get("enable_mathdx_gemm", True):
        return ((0, 0, 0), [], [], 0)
    fwd = warp._src.build.build_lto_dot(1, 2, 3)
    if options["enable_backward"]:
        da = warp._src.build.build_lto_dot(1, 2, 3)
    return ((fwd,), [], [], 0)

def tile_fft_generic_lto_dispatch_func(arg_types, return_type, return_values, arg_values, options, builder,
                                       direction=None):
    if direction == "forward":
        return ((0,), [], [], 0)
    lto = warp._src.build.build_lto_fft(direction)
    return ((lto,), [], [], 0)

def _cholesky(inplace, arg_types, return_type, return_values, arg_values, options, builder):
    arch = options["output_arch"]
    if arch is None or not options.get("enable_mathdx_solver", True):
        return ((0,), [], [], 0)
    else:
        lto = warp._src.build.build_lto_solver(1)
        if inplace:
            return ((lto,), [], [lto], 0)
        if options["enable_backward"]:
            bwd = warp._src.build.build_lto_solver(2)
        return ((lto,), [], [lto], 0)

def tile_cholesky_lto_dispatch_func(*args, **kwargs):
    return _cholesky(False, *args, **kwargs)

def tile_cholesky_inplace_lto_dispatch_func(*args, **kwargs):
    return _cholesky(True, *args, **kwargs)

add_builtin("tile_diag_add", input_types={}, lto_dispatch_func=tile_diag_add_lto_dispatch_func)
add_builtin("tile_matmul", input_types={"a": 1}, lto_dispatch_func=tile_matmul_lto_dispatch_func)
add_builtin("tile_matmul", input_types={"a": 2}, lto_dispatch_func=tile_matmul_lto_dispatch_func)
add_builtin("tile_fft", lto_dispatch_func=functools.partial(tile_fft_generic_lto_dispatch_func, direction="forward"))
add_builtin("tile_ifft", lto_dispatch_func=functools.partial(tile_fft_generic_lto_dispatch_func, direction="inverse"))
add_builtin("tile_cholesky", lto_dispatch_func=tile_cholesky_lto_dispatch_func)
add_builtin("tile_cholesky_inplace", lto_dispatch_func=tile_cholesky_inplace_lto_dispatch_func)
add_builtin("tile_load", input_types={})
'''


def test_mathdx_ops_follow_dispatch_paths():
    ops = extract.mathdx_ops(BUILTINS)
    assert set(ops) == {"tile_diag_add", "tile_matmul", "tile_fft", "tile_ifft", "tile_cholesky",
                        "tile_cholesky_inplace"}
    assert not ops["tile_diag_add"].builds_lto  # declares a dispatch but builds nothing
    assert ops["tile_matmul"].builds_lto and ops["tile_matmul"].backward_lto
    assert ops["tile_matmul"].option == "enable_mathdx_gemm"
    # functools.partial keywords are bound: the forward direction returns before any build here
    assert not ops["tile_fft"].builds_lto and ops["tile_ifft"].builds_lto
    # the wrapper's leading True binds `inplace`: that path returns before the backward build
    assert ops["tile_cholesky"].backward_lto and ops["tile_cholesky"].option == "enable_mathdx_solver"
    assert ops["tile_cholesky_inplace"].builds_lto and not ops["tile_cholesky_inplace"].backward_lto


def test_public_modules_of_a_wheel_listing():
    names = ["warp/__init__.py", "warp/context.py", "warp/_src/context.py", "warp/fem/__init__.py",
             "warp/fem/space.py", "warp/_src/__init__.py", "warp_lang-1.12.1.dist-info/METADATA"]
    assert extract.public_modules(names) == {"warp.context", "warp.fem"}


# ---------------------------------------------------------------------------------------------- the tables


def _minor(version):
    return tuple(int(p) for p in version.split(".")[:2])


def test_committed_table_covers_every_minor_and_is_the_generated_text():
    assert sorted({_minor(v) for v in TABLES}) == [(1, m) for m in range(10, 20)]
    assert set(WHEELS) == set(TABLES)
    # The committed module is exactly what the script renders from these tables (nobody edited it by hand).
    script = _script()
    tables = {}
    for version, table in TABLES.items():
        rebuilt = {"version": version, **{k: tuple(v) if isinstance(v, (list, tuple)) else v for k, v in table.items()}}
        rebuilt["cpu_parallel_load_race_test"] = _minor(version) >= _minor(CPU_PARALLEL_LOAD_FIXED_IN)
        tables[version] = rebuilt
    with open(DATA, encoding="utf-8") as fh:
        assert script.render(tables, WHEELS) == fh.read()


def test_known_differences_between_releases():
    def has(version, key, name):
        return name in TABLES[version][key]

    # config names: load_module_max_workers arrived in 1.11; verbose/quiet went in 1.18; log_level in 1.14
    assert not has("1.10.1", "config_names", "load_module_max_workers")
    assert has("1.11.1", "config_names", "load_module_max_workers")
    assert has("1.17.0", "config_names", "verbose") and not has("1.18.0", "config_names", "verbose")
    assert not has("1.13.0", "config_names", "log_level") and has("1.14.0", "config_names", "log_level")
    # the deterministic options exist, and are snapshots, from 1.15
    assert not has("1.14.0", "snapshot_options", "deterministic") and has("1.15.0", "snapshot_options", "deterministic")
    assert not has("1.16.0", "module_options", "extra_build_options") and has("1.17.0", "module_options",
                                                                             "extra_build_options")
    # MathDx: backward LTOs for tile_matmul only in 1.10; the in-place solvers never build one
    assert TABLES["1.10.1"]["mathdx_backward_lto_ops"] == ("tile_matmul",)
    assert not has("1.15.0", "mathdx_backward_lto_ops", "tile_lower_solve")
    assert has("1.16.0", "mathdx_backward_lto_ops", "tile_lower_solve")
    for version in TABLES:
        assert not has(version, "mathdx_backward_lto_ops", "tile_cholesky_inplace")
        assert not has(version, "mathdx_backward_lto_ops", "tile_lower_solve_inplace")
        assert not has(version, "mathdx_lto_ops", "tile_diag_add")
    assert has("1.19.0", "mathdx_lto_ops", "tile_cholesky_inplace")
    # unknown module_options= keys raise from 1.13; warp.context is a module until 1.12
    assert not TABLES["1.12.1"]["module_options_validated"] and TABLES["1.13.0"]["module_options_validated"]
    # @wp.kernel has no module_options parameter before 1.13 (the argument is a TypeError there)
    assert not TABLES["1.12.1"]["kernel_module_options"] and TABLES["1.13.0"]["kernel_module_options"]
    assert has("1.12.1", "public_modules", "warp.context") and not has("1.13.0", "public_modules", "warp.context")
    assert CPU_PARALLEL_LOAD_FIXED_IN == "1.17.0"
    # what a new module copies from wp.config: deterministic_max_records is a snapshot from 1.15 only
    assert TABLES["1.10.1"]["snapshot_option_defaults"] == {"compile_time_trace": False, "enable_backward": True,
                                                            "lineinfo": False, "max_unroll": 16}
    assert TABLES["1.19.0"]["snapshot_option_defaults"]["deterministic_max_records"] == 0
    assert "deterministic" not in TABLES["1.19.0"]["snapshot_option_defaults"]  # an enum member: no literal
    for version in TABLES:
        assert {"shape", "size", "ndim", "capacity"} <= set(TABLES[version]["array_extents"])
        assert "dtype" not in TABLES[version]["array_extents"]


def test_module_constants_are_the_1_19_table():
    table = TABLES["1.19.0"]
    assert frozenset(table["config_names"]) == facts.CONFIG_NAMES
    assert frozenset(table["module_options"]) == facts.MODULE_OPTIONS
    assert frozenset(table["snapshot_options"]) == facts.SNAPSHOT_OPTIONS
    assert frozenset(table["mathdx_lto_ops"]) == facts.MATHDX_TILE_OPS
    assert table["launch_block_dim"] == table["default_block_dim"] == facts.DEFAULT_CUDA_BLOCK_DIM


# ---------------------------------------------------------------------------------------------- detection


def fake_venv(root, version, name=".venv", metadata=True):
    site = root / name / "lib" / "python3.11" / "site-packages"
    if metadata:
        info = site / f"warp_lang-{version}.dist-info"
        info.mkdir(parents=True)
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: warp-lang\nVersion: {version}\n")
    else:
        (site / "warp").mkdir(parents=True)
        (site / "warp" / "config.py").write_text(f'version: str = "{version}"\nenable_backward = True\n')
    return root / name


def test_detection_from_a_project_venv_metadata_or_config(tmp_path):
    fake_venv(tmp_path, "1.15.0")
    facts_ = warp_version.environment(str(tmp_path), environ={}).facts()
    assert facts_.version == "1.15.0" and facts_.source == "the warp installed in .venv" and facts_.note is None
    other = tmp_path / "other"
    other.mkdir()
    fake_venv(other, "1.12.0", name="venv", metadata=False)  # no dist-info: warp/config.py's version
    facts_ = warp_version.environment(str(other), environ={}).facts()
    assert facts_.version == "1.12.1" and facts_.found == "1.12.0" and "venv" in facts_.source
    empty, elsewhere = tmp_path / "empty", tmp_path / "elsewhere"
    empty.mkdir()
    elsewhere.mkdir()
    active = fake_venv(elsewhere, "1.13.0")  # an activated venv outside the project
    facts_ = warp_version.environment(str(empty), environ={"VIRTUAL_ENV": str(active)}).facts()
    assert facts_.version == "1.13.0" and "$VIRTUAL_ENV" in facts_.source


def test_several_dist_infos_the_one_matching_the_code_else_the_newest(tmp_path):
    # an upgrade that left the old dist-info behind: the code there (warp/config.py) says which one is live
    site = fake_venv(tmp_path, "1.19.0") / "lib" / "python3.11" / "site-packages"
    old = site / "warp_lang-1.12.0.dist-info"
    old.mkdir()
    (old / "METADATA").write_text("Metadata-Version: 2.1\nName: warp-lang\nVersion: 1.12.0\n")
    assert warp_version.installed_in_site_packages(str(site)) == "1.19.0"  # no code: the newest
    (site / "warp").mkdir()
    (site / "warp" / "config.py").write_text('version: str = "1.12.0"\n')
    assert warp_version.installed_in_site_packages(str(site)) == "1.12.0"  # the code is 1.12's


def test_detection_order(tmp_path):
    fake_venv(tmp_path, "1.15.0")
    (tmp_path / "warp").mkdir()
    (tmp_path / "warp" / "config.py").write_text('version = "1.14.0"\nenable_backward = True\n')
    env = warp_version.environment(str(tmp_path), environ={})
    assert env.facts().version == "1.14.0" and "linted Warp tree" in env.facts().source  # the tree beats the venv
    asked = warp_version.environment(str(tmp_path), "1.11", "--warp-version", environ={})
    assert asked.facts().version == "1.11.1" and asked.facts().source == "--warp-version"
    nothing = tmp_path / "nothing"
    nothing.mkdir()
    own = warp_version.environment(str(nothing), environ={}).facts()
    assert own.source == "the warp installed with warplint" and own.version == "1.19.0"  # this checkout's .venv


def test_unknown_versions_fall_back_and_say_so():
    newer = warp_version.facts_of("1.20.1", "--warp-version", "1.20.1")
    assert newer.version == "1.19.0"
    assert newer.note == "the project's warp 1.20.1 is newer than any known table"
    assert newer.label == "Warp 1.19 (the project's warp 1.20.1 is newer than any known table)"
    older = warp_version.facts_of("1.9", "--warp-version", "1.9")
    assert older.version == "1.10.1" and "older than any known table" in older.note
    dev = warp_version.facts_of("1.16.0.dev20260301", "x", "1.16.0.dev20260301")
    assert dev.version == "1.16.0" and dev.note is None


def test_absurdly_long_version_is_not_a_version(tmp_path):
    huge = "1." + "9" * 5000  # past int()'s digit limit: a crash in detection before
    assert warp_version.parse_version(huge) is None
    (tmp_path / "warp").mkdir()
    (tmp_path / "warp" / "config.py").write_text(f'version = "{huge}"\n')
    assert warp_version.warp_tree_version(str(tmp_path)) is None


def test_pyproject_warp_version_is_read_and_validated(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.warplint]\nwarp-version = "1.16"\n')
    config = load_config(str(tmp_path), set(all_rules()))
    assert config.warp_version == "1.16" and config.warp_version_source == "warp-version in [tool.warplint]"
    (tmp_path / "pyproject.toml").write_text('[tool.warplint]\nwarp-version = "latest"\n')
    with pytest.raises(ConfigError, match="warp-version"):
        load_config(str(tmp_path), set(all_rules()))


# ---------------------------------------------------------------------------------------------- verdicts via the CLI


def cli(cwd, *args):
    env = {k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV"}
    proc = subprocess.run([sys.executable, "-m", "warplint", *args], cwd=cwd, capture_output=True, text=True,
                          env=env, timeout=120)
    return proc.returncode, proc.stdout, proc.stderr


def findings(cwd, *args):
    code, out, err = cli(cwd, *args, "--format", "json")
    assert code in (0, 1), err
    return json.loads(out)


def project(tmp_path, source, name="app.py"):
    (tmp_path / name).write_text(textwrap.dedent(source))
    return tmp_path


def test_wc105_verdict_follows_the_version(tmp_path):
    root = project(tmp_path, """\
        import warp as wp
        wp.config.verbose = True
        wp.config.load_module_max_workers = 0
    """)
    assert findings(root, "--select", "WC105", "--no-cache", "--warp-version", "1.17") == []
    found = findings(root, "--select", "WC105", "--no-cache", "--warp-version", "1.18.0")
    assert [f["message"].split(";")[0] for f in found] == ["`wp.config.verbose` does not exist in Warp 1.18"]
    assert found[0]["data"]["warp_version"] == "1.18.0"
    found = findings(root, "--select", "WC105", "--no-cache", "--warp-version", "1.10")
    assert [f["data"]["option"] for f in found] == ["load_module_max_workers"]


def test_pyproject_and_venv_decide_through_the_cli_and_the_cache_follows(tmp_path):
    root = project(tmp_path, "import warp as wp\nwp.config.verbose = True\n")
    venv = fake_venv(root, "1.17.0")
    assert findings(root, "--select", "WC105") == []  # cache on: the first run stores its results
    info = next(venv.glob("lib/python3.11/site-packages/*.dist-info"))
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: warp-lang\nVersion: 1.18.0\n")
    found = findings(root, "--select", "WC105")  # same files, other Warp: the cached results must not be reused
    assert len(found) == 1 and "Warp 1.18" in found[0]["message"]
    (root / "pyproject.toml").write_text('[tool.warplint]\nwarp-version = "1.16"\n')
    assert findings(root, "--select", "WC105") == []  # the setting beats the venv
    (root / "pyproject.toml").write_text('[tool.warplint]\nwarp-version = "one"\n')
    code, _, err = cli(root, "--select", "WC105")
    assert code == 2 and err.count("\n") == 1 and "warp-version" in err and "Traceback" not in err


def test_bad_warp_version_flag_is_a_usage_error(tmp_path):
    code, _, err = cli(project(tmp_path, "import warp\n"), "--warp-version", "1.x")
    assert code == 2 and "--warp-version" in err and err.count("\n") == 1


def test_warp_source_tree_is_its_own_version(tmp_path):
    (tmp_path / "warp").mkdir()
    (tmp_path / "warp" / "__init__.py").write_text("")
    (tmp_path / "warp" / "config.py").write_text('version: str = "1.11.1"\nenable_backward: bool = True\n')
    (tmp_path / "warp" / "app.py").write_text("import warp as wp\nwp.config.cuda_arch_suffix = 'a'\n")
    found = findings(tmp_path, "--select", "WC105", "--no-cache")  # cuda_arch_suffix is new in 1.12
    assert len(found) == 1 and "Warp 1.11" in found[0]["message"]
    (tmp_path / "warp" / "config.py").write_text('version: str = "1.12.0"\nenable_backward: bool = True\n')
    assert findings(tmp_path, "--select", "WC105", "--no-cache") == []


def test_unknown_version_message_through_the_cli(tmp_path):
    root = project(tmp_path, "import warp as wp\nwp.config.verbose = True\n")
    found = findings(root, "--select", "WC105", "--no-cache", "--warp-version", "1.20.1")
    assert "Warp 1.19 (the project's warp 1.20.1 is newer than any known table)" in found[0]["message"]


def test_wc503_is_not_reported_once_the_race_is_fixed(tmp_path):
    root = project(tmp_path, """\
        import warp as wp
        wp.config.load_module_max_workers = 4
        wp.force_load(device="cpu", max_workers=4)
    """)
    before = findings(root, "--select", "WC503", "--no-cache", "--warp-version", "1.16")
    assert len(before) == 2 and all("can lose kernels in Warp 1.16" in f["message"] for f in before)
    assert all("fixed in Warp 1.17, the project's is Warp 1.16" in f["related"][0]["message"] for f in before)
    assert findings(root, "--select", "WC503", "--no-cache", "--warp-version", "1.17") == []


def test_wc403_lists_only_ops_whose_backward_builds_ltos(tmp_path):
    root = project(tmp_path, """\
        import warp as wp

        @wp.kernel(enable_backward=False)
        def chol(a: wp.array2d(dtype=float), out: wp.array2d(dtype=float)):
            t = wp.tile_load(a, shape=(16, 16))
            wp.tile_cholesky_inplace(t)
            wp.tile_store(out, wp.tile_cholesky(t))
    """)
    assert findings(root, "--select", "WC403", "--no-cache", "--warp-version", "1.12") == []  # no Cholesky adjoint
    found = findings(root, "--select", "WC403", "--no-cache", "--warp-version", "1.13")
    notes = " ".join(r["message"] for r in found[0]["related"])
    assert len(found) == 1 and "of `tile_cholesky`;" in notes and "inplace" not in notes


def test_wc104_module_options_raise_only_from_1_13(tmp_path):
    root = project(tmp_path, """\
        import warp as wp

        @wp.kernel(module="unique", module_options={"fastmath": True})
        def k(a: wp.array(dtype=float)):
            a[0] = 1.0
    """)
    old = findings(root, "--select", "WC104", "--no-cache", "--warp-version", "1.12")
    new = findings(root, "--select", "WC104", "--no-cache", "--warp-version", "1.13")
    assert "ValueError" not in old[0]["message"] and "Warp 1.12" in old[0]["message"]
    assert "a ValueError at import" in new[0]["message"]


def test_rule_subcommand_says_which_facts_are_used(tmp_path):
    fake_venv(tmp_path, "1.15.0")
    code, out, _ = cli(tmp_path, "rule", "WC105")
    assert code == 0 and out.rstrip().endswith("Warp facts used here: facts of warp 1.15.0 (the warp installed in "
                                               ".venv)")


def test_wc302_verdict_follows_the_version(tmp_path):
    root = project(tmp_path, """\
        import warp as wp

        @wp.kernel(module="unique", module_options={"fast_math": True})
        def k(a: wp.array(dtype=float)):
            a[wp.tid()] = 1.0
    """)
    assert findings(root, "--select", "WC302", "--no-cache", "--warp-version", "1.13") == []
    found = findings(root, "--select", "WC302", "--no-cache", "--warp-version", "1.12")
    assert [(f["line"], f["data"]["warp_version"], f["fix"]) for f in found] == [(3, "1.12.1", None)]
    assert "raises TypeError at import in Warp 1.12" in found[0]["message"]


@pytest.mark.parametrize(("spec", "oldest"), [
    (">=1.15", (1, 15, 0)),
    (">1.15", (1, 15, 1)),
    (">=1.15,<2", (1, 15, 0)),
    ("~=1.16.2", (1, 16, 2)),
    ("==1.17.*", (1, 17, 0)),
    ("^1.14", (1, 14, 0)),  # Poetry: >=1.14,<2
    ("~1.13", (1, 13, 0)),
    ("<1.12", (1, 0, 0)),  # no lower bound: the oldest release there is
    ("!=1.0.0,>=1.0", (1, 0, 1)),
    (">=1.18,<1.16", None),  # nothing allowed
])
def test_oldest_release_a_requirement_allows(spec, oldest):
    from warplint.warp_requirement import Requirement, parse_specifier

    clauses = parse_specifier(spec)
    assert clauses is not None
    assert Requirement(clauses, spec).oldest_allowed() == oldest


def test_unreadable_specifier_is_left_out():
    from warplint.warp_requirement import parse_specifier

    assert parse_specifier(">=1.15rc1") is None and parse_specifier("") == ()


@pytest.mark.parametrize(("name", "text"), [
    ("pyproject.toml",
     '[project]\nname = "x"\ndependencies = ["numpy", "warp-lang[extras]>=1.15 ; python_version>\'3\'"]\n'),
    ("pyproject.toml", '[project]\nname = "x"\n[project.optional-dependencies]\ngpu = ["Warp_Lang>=1.15"]\n'),
    ("pyproject.toml", '[tool.poetry.dependencies]\npython = "^3.10"\nwarp-lang = {version = "^1.15"}\n'),
    ("setup.cfg", "[options]\ninstall_requires =\n    numpy\n    warp-lang >= 1.15, < 2\n"),
    ("requirements.txt", "numpy>=1\nwarp-lang>=1.15  # the kernels need tiles\n"),
])
def test_declared_requirement_decides_when_nothing_is_installed(tmp_path, name, text):
    (tmp_path / name).write_text(text)
    env = warp_version.environment(str(tmp_path), environ={})
    facts_ = warp_version.WarpEnvironment(requested=env.requested, tree=env.tree,
                                          project_install=env.project_install, declared=env.declared).facts()
    assert facts_.version == "1.15.0" and "allows" in facts_.source and name in facts_.source


def test_declared_requirement_order(tmp_path):
    (tmp_path / "requirements.txt").write_text("warp-lang>=1.14\n")
    env = warp_version.environment(str(tmp_path), environ={})
    assert env.own_install is not None and env.facts().version == "1.14.0"  # beats warplint's own 1.19
    fake_venv(tmp_path, "1.17.0")
    assert warp_version.environment(str(tmp_path), environ={}).facts().version == "1.17.0"  # the venv beats it
    assert warp_version.environment(str(tmp_path), "1.16", environ={}).facts().version == "1.16.0"


def test_declared_requirement_through_the_cli(tmp_path):
    root = project(tmp_path, "import warp as wp\nwp.config.verbose = True\n")
    found = findings(root, "--select", "WC105")  # warplint's own Warp (1.19) has no wp.config.verbose
    assert len(found) == 1 and found[0]["data"]["warp_version"] == "1.19.0"
    (root / "pyproject.toml").write_text('[project]\nname = "x"\ndependencies = ["warp-lang>=1.17,<2"]\n')
    assert findings(root, "--select", "WC105") == []  # 1.17 has it; the cache must follow the requirement

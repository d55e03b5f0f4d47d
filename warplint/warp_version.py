"""Which Warp the linted code runs against, found without importing it, and the facts of that version.

In order (the first that answers wins):

1. ``--warp-version X.Y[.Z]`` on the command line;
2. ``warp-version = "X.Y"`` in ``[tool.warplint]``;
3. the linted tree *is* Warp's source: ``warp/config.py`` with ``version = "..."`` at the project root
   (or among the linted files as module ``warp.config``);
4. the ``warp`` installed in the project's virtualenv (``.venv/`` or ``venv/`` at the project root, else
   ``$VIRTUAL_ENV``): ``warp_lang-*.dist-info/METADATA`` or ``warp/config.py``;
5. the project's declared requirement (``warp-lang>=1.15`` in pyproject.toml, setup.cfg or a requirements
   file, see ``warp_requirement.py``): the oldest release it allows, since the project promises to work there;
6. the ``warp`` installed in warplint's own interpreter (warplint's environment, not necessarily the project's:
   it comes after what the project says);
7. else the newest known table.

A version with no table of its own (1.20, 1.9) gets the nearest known table, and ``WarpFacts.note`` says so.
The tables are ``warplint/warp_versions_data.py``, generated from the released wheels.
"""

from __future__ import annotations

import functools
import glob
import importlib.machinery
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from .warp_requirement import declared_requirement
from .warp_versions_data import CPU_PARALLEL_LOAD_FIXED_IN, TABLES

_VERSION = re.compile(r"^(\d+)\.(\d+)(?:\.(\d+))?(?:[.+-]?[0-9A-Za-z.+-]*)?$")
_CONFIG_VERSION = re.compile(r'^version\s*(?::[^=\n]+)?=\s*["\']([^"\']+)["\']', re.M)
_METADATA_VERSION = re.compile(r"^Version:\s*(\S+)", re.M)


def parse_version(text: str) -> tuple[int, int, int] | None:
    """``"1.15"`` -> (1, 15, 0); ``"1.20.0.dev3"`` -> (1, 20, 0); anything else -> None."""
    match = _VERSION.match(text.strip()) if isinstance(text, str) else None
    if not match:
        return None
    try:
        return int(match.group(1)), int(match.group(2)), int(match.group(3) or 0)
    except ValueError:  # more digits than int() converts (sys.get_int_max_str_digits): not a version
        return None


def _key(version: str) -> tuple[int, int, int]:
    parsed = parse_version(version)
    assert parsed is not None, version  # the generated table's own keys
    return parsed


KNOWN_VERSIONS = tuple(sorted(TABLES, key=_key))
NEWEST, OLDEST = KNOWN_VERSIONS[-1], KNOWN_VERSIONS[0]


def _every_release(key: str) -> frozenset[str]:
    return frozenset(name for table in TABLES.values() for name in table[key])


# Warp's type names as the model extraction reads annotations: a file's model is extracted (and cached) once,
# whatever Warp the project runs against, so it takes a name any known release gives the type.
ARRAY_TYPES = _every_release("array_types")  # wp.array, wp.array2d, wp.indexedarray, wp.fixedarray, ...
ARRAY_TYPES_DTYPE_ANY = _every_release("array_types_dtype_any")  # their dtype is Any when not given
GENERIC_TYPES = _every_release("generic_types")  # type_is_generic's generic_types: Any, Scalar, Float, Int


@dataclass(frozen=True)
class Found:
    """A Warp version and where it was found (``source`` reads in a sentence: "found in .venv")."""

    version: str
    source: str


@dataclass(frozen=True)
class WarpFacts:
    """The facts of one Warp release that the rules consult, for the version the project runs against."""

    version: str  # the table's version (a released warp-lang, e.g. "1.15.0")
    source: str  # how the project's version was found, e.g. "the warp installed in .venv"
    found: str | None  # the version found (None: none found); may differ from ``version`` (see ``note``)
    note: str | None  # set when the table is not the found version's own (newer/older than any table)
    config_names: frozenset[str]
    module_options: frozenset[str]
    snapshot_options: frozenset[str]
    module_option_defaults: dict[str, object] = field(hash=False)
    # a snapshot option's value in a new module while the program leaves its `wp.config` name alone
    snapshot_option_defaults: dict[str, object] = field(hash=False)
    default_block_dim: int  # Module.options["block_dim"]
    launch_block_dim: int  # the CUDA block size of a wp.launch without block_dim
    module_options_validated: bool  # @wp.kernel(module_options=...) raises for an unknown key
    kernel_module_options: bool  # @wp.kernel takes module_options= at all (1.13+; before, a TypeError)
    mathdx_lto_ops: frozenset[str]  # builtins whose CUDA dispatch builds a MathDx LTO
    mathdx_backward_lto_ops: frozenset[str]  # ... and more LTOs when the module's enable_backward is on
    mathdx_options: dict[str, str] = field(hash=False)  # op -> the module option that turns its MathDx path off
    public_modules: frozenset[str] = frozenset()  # importable warp.X modules (warp.context went in 1.13)
    array_extents: frozenset[str] = frozenset()  # wp.array's integer attributes: counts of its run-time data
    cpu_parallel_load_fixed: bool = False  # concurrent first CPU loads no longer lose kernels
    # Warp's built-in value types by their name in warp._src.types (aliases included): (the class's own name,
    # its constructor, the constructor's arguments but dtype, the scalar dtype); a scalar has no constructor
    value_types: Mapping[str, tuple[str, str, tuple, str]] = field(default_factory=dict, hash=False)
    value_type_constructors: Mapping[str, tuple[str, ...]] = field(default_factory=dict, hash=False)  # -> params
    # public spellings other than warp.X of a name X of warp._src.types (warp.vec, warp.types.float32 before 1.13)
    public_type_names: Mapping[str, str] = field(default_factory=dict, hash=False)
    # the Warp scalar a Python scalar type is where Warp takes a dtype (types.py's type_to_warp): float -> float32
    python_scalar_types: Mapping[str, str] = field(default_factory=dict, hash=False)

    @property
    def minor(self) -> str:
        """``"1.15"``: how messages name the release whose facts decide."""
        major, minor, _ = _key(self.version)
        return f"{major}.{minor}"

    @property
    def label(self) -> str:
        """``"Warp 1.15"``, or ``"Warp 1.19 (the project's 1.20.1 is newer than any known table)"``."""
        return f"Warp {self.minor}" + (f" ({self.note})" if self.note else "")

    def describe(self) -> str:
        """One line for ``warplint rule`` and notes: which facts, found how."""
        found = f": {self.found}" if self.found and self.found != self.version else ""
        line = f"facts of warp {self.version} ({self.source}{found})"
        return line + (f"; {self.note}" if self.note else "")


CPU_PARALLEL_LOAD_FIXED_MINOR = ".".join(CPU_PARALLEL_LOAD_FIXED_IN.split(".")[:2]) if CPU_PARALLEL_LOAD_FIXED_IN \
    else None


def table_for(version: str) -> tuple[str, str | None]:
    """The known table for ``version`` (same minor: its latest patch), and a note when there is none."""
    parsed = parse_version(version)
    if parsed is None:
        return NEWEST, f"{version!r} is not a version; the newest known table is used"
    for known in KNOWN_VERSIONS:
        if _key(known)[:2] == parsed[:2]:
            return known, None
    if parsed > _key(NEWEST):
        return NEWEST, f"the project's warp {version} is newer than any known table"
    if parsed < _key(OLDEST):
        return OLDEST, f"the project's warp {version} is older than any known table"
    nearest = min(KNOWN_VERSIONS, key=lambda k: abs(_key(k)[1] - parsed[1]) + 100 * abs(_key(k)[0] - parsed[0]))
    return nearest, f"no table for warp {version}; the nearest, {nearest}, is used"


@functools.lru_cache(maxsize=64)
def facts_of(version: str, source: str, found: str | None) -> WarpFacts:
    table_version, note = table_for(version)
    table = TABLES[table_version]
    fixed = CPU_PARALLEL_LOAD_FIXED_IN is not None and _key(table_version) >= _key(CPU_PARALLEL_LOAD_FIXED_IN)
    return WarpFacts(
        version=table_version,
        source=source,
        found=found,
        note=note,
        config_names=frozenset(table["config_names"]),
        module_options=frozenset(table["module_options"]),
        snapshot_options=frozenset(table["snapshot_options"]),
        module_option_defaults=dict(table["module_option_defaults"]),
        snapshot_option_defaults=dict(table["snapshot_option_defaults"]),
        default_block_dim=table["default_block_dim"],
        launch_block_dim=table["launch_block_dim"],
        module_options_validated=table["module_options_validated"],
        kernel_module_options=table["kernel_module_options"],
        mathdx_lto_ops=frozenset(table["mathdx_lto_ops"]),
        mathdx_backward_lto_ops=frozenset(table["mathdx_backward_lto_ops"]),
        mathdx_options=dict(table["mathdx_options"]),
        public_modules=frozenset(table["public_modules"]),
        array_extents=frozenset(table["array_extents"]),
        cpu_parallel_load_fixed=fixed,
        value_types=dict(table["value_types"]),
        value_type_constructors=dict(table["value_type_constructors"]),
        public_type_names=dict(table["public_type_names"]),
        python_scalar_types=dict(table["python_scalar_types"]),
    )


def facts_for(found: Found | None) -> WarpFacts:
    if found is None:
        return facts_of(NEWEST, "no Warp found: the newest known table", None)
    return facts_of(found.version, found.source, found.version)


# ---------------------------------------------------------------------------------------------- detection


def version_in_config(path: str) -> str | None:
    """``version = "..."`` of a ``warp/config.py``, read as text."""
    try:
        with open(path, encoding="utf-8") as fh:
            match = _CONFIG_VERSION.search(fh.read())
    except (OSError, UnicodeDecodeError):
        return None
    return match.group(1) if match and parse_version(match.group(1)) else None


def warp_tree_version(root: str) -> Found | None:
    """``root`` is Warp's own source tree: its ``warp/config.py`` (``warp/_src/config.py`` in 1.10) says."""
    for relative in ("warp/config.py", "warp/_src/config.py"):
        version = version_in_config(os.path.join(root, relative))
        if version:
            return Found(version, f"the linted Warp tree ({relative})")
    return None


def installed_in_site_packages(site: str) -> str | None:
    """The warp-lang version installed in one ``site-packages`` directory, or None. Several
    ``warp_lang-*.dist-info`` (an upgrade that left the old one behind): the one that matches the code
    there (``warp/config.py``), else the newest."""
    found: list[str] = []
    for metadata in glob.glob(os.path.join(glob.escape(site), "warp_lang-*.dist-info", "METADATA")):
        try:
            with open(metadata, encoding="utf-8", errors="replace") as fh:
                match = _METADATA_VERSION.search(fh.read(4096))
        except OSError:
            continue
        if match and parse_version(match.group(1)):
            found.append(match.group(1))
    if len(found) == 1:
        return found[0]
    code = next((v for relative in ("warp/config.py", "warp/_src/config.py")
                 if (v := version_in_config(os.path.join(site, relative)))), None)
    if code is not None and (not found or code in found):
        return code
    return max(found, key=lambda v: parse_version(v) or (0,)) if found else None


def _site_packages(venv: str) -> list[str]:
    posix = sorted(glob.glob(os.path.join(glob.escape(venv), "lib", "python*", "site-packages")))
    return posix + [p for p in (os.path.join(venv, "Lib", "site-packages"),) if os.path.isdir(p)]


def project_venv_version(root: str, environ: Mapping[str, str] | None = None) -> Found | None:
    """The warp installed in the project's virtualenv: ``.venv``/``venv`` at ``root``, else ``$VIRTUAL_ENV``."""
    candidates = [(os.path.join(root, name), name) for name in (".venv", "venv")]
    active = (os.environ if environ is None else environ).get("VIRTUAL_ENV")
    if active:
        candidates.append((active, f"$VIRTUAL_ENV ({active})"))
    for venv, shown in candidates:
        if not os.path.isdir(venv):
            continue
        for site in _site_packages(venv):
            version = installed_in_site_packages(site)
            if version:
                return Found(version, f"the warp installed in {shown}")
    return None


@functools.lru_cache(maxsize=1)
def own_interpreter_version() -> Found | None:
    """The warp installed where warplint runs (located on sys.path, never imported)."""
    spec = importlib.machinery.PathFinder.find_spec("warp")
    if spec is None or not spec.submodule_search_locations:
        return None
    warp_dir = next(iter(spec.submodule_search_locations))
    site = os.path.dirname(warp_dir)
    version = installed_in_site_packages(site)
    return Found(version, "the warp installed with warplint") if version else None


@dataclass(frozen=True)
class WarpEnvironment:
    """What decides the project's Warp, before its files are read: a version asked for, Warp's own tree at
    the root, the project's virtualenv, warplint's interpreter. ``facts(tree)`` applies the order above."""

    requested: Found | None = None
    tree: Found | None = None
    project_install: Found | None = None
    declared: Found | None = None
    own_install: Found | None = None

    def facts(self, linted_tree: Found | None = None) -> WarpFacts:
        """The facts for this environment; ``linted_tree`` is Warp's version when the linted files are Warp's."""
        for found in (self.requested, self.tree, linted_tree, self.project_install, self.declared, self.own_install):
            if found is not None:
                return facts_for(found)
        return facts_for(None)

    def cache_key(self) -> str:
        """Everything besides the linted files that decides the facts (the results cache keys on it)."""
        return repr((self.requested, self.tree, self.project_install, self.declared, self.own_install))


def environment(root: str | None, requested: str | None = None, requested_source: str | None = None,
                environ: Mapping[str, str] | None = None) -> WarpEnvironment:
    """Detect everything but the linted files (``root``: the project root; None: nothing project-specific)."""
    asked = Found(requested, requested_source or "--warp-version") if requested else None
    if root is None:
        return WarpEnvironment(requested=asked, own_install=own_interpreter_version())
    return WarpEnvironment(
        requested=asked,
        tree=warp_tree_version(root),
        project_install=project_venv_version(root, environ),
        declared=declared_version(root),
        own_install=own_interpreter_version(),
    )


def declared_version(root: str) -> Found | None:
    """The oldest Warp the project's ``warp-lang`` requirement allows (None: none declared, or none allowed)."""
    requirement = declared_requirement(root)
    oldest = requirement.oldest_allowed() if requirement else None
    if requirement is None or oldest is None:
        return None
    return Found(".".join(map(str, oldest)), f"the oldest Warp that {requirement.text} allows")


def default_facts() -> WarpFacts:
    """The facts when nothing about the project is known: warplint's own warp, else the newest table."""
    return facts_for(own_interpreter_version())


def check_requested(text: str, where: str) -> str:
    """A requested version as given, or ValueError with a one-line reason (callers turn it into exit 2)."""
    if not isinstance(text, str) or parse_version(text) is None:
        raise ValueError(f"{where} must be a Warp version such as \"1.15\" or \"1.15.0\", got {text!r}")
    return text.strip()

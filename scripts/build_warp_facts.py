"""Build ``warplint/warp_versions_data.py``: the Warp facts warplint's rules use, per released warp-lang minor.

    python scripts/build_warp_facts.py              # the latest patch of each minor 1.10 .. 1.19
    python scripts/build_warp_facts.py --check      # rebuild in memory and fail if the committed module differs
    python scripts/build_warp_facts.py 1.15.0 ...   # only these versions (prints, does not write)

Each version's wheel is fetched with ``pip download --no-deps`` into the git-ignored ``.cache/warp-sources/``
(any platform's wheel carries the same Python sources; the macOS one is the smallest) and read as a zip, never
installed or imported. ``warplint/warp_version_extract.py`` reads the facts from ``warp/config.py``,
``warp/_src/context.py``, ``warp/_src/builtins.py``, ``warp/_src/types.py`` and ``warp/_src/fabric.py``; the
generated module holds names and defaults only.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import re
import subprocess
import sys
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)

from warplint import warp_version_extract as extract  # noqa: E402 - after the path set-up above

CACHE = os.path.join(ROOT, ".cache", "warp-sources")
OUTPUT = os.path.join(ROOT, "warplint", "warp_versions_data.py")
MINORS = [(1, minor) for minor in range(10, 20)]
PLATFORMS = ("macosx_11_0_arm64", "manylinux_2_28_x86_64", "manylinux2014_x86_64", "win_amd64")
# The first release whose tests carry the regression test for concurrent first CPU loads (the CPU JIT and
# LLVM target registry raced when several CPU modules were built and loaded at once on a fresh process):
# test_module_parallel_load.py's test_force_load_parallel_cpu_cold_start_kernel_lookup.
CPU_RACE_TEST = "_run_parallel_cpu_cold_start"


def pip(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pip", *args], capture_output=True, text=True, check=False)


def latest_patches() -> list[str]:
    """The newest release of each minor in MINORS, from ``pip index versions``."""
    result = pip("index", "versions", "warp-lang")
    match = re.search(r"Available versions:\s*(.+)", result.stdout)
    if not match:
        sys.exit(f"build_warp_facts: `pip index versions warp-lang` failed:\n{result.stderr.strip()}")
    released = [v.strip() for v in match.group(1).split(",")]
    chosen = []
    for major, minor in MINORS:
        patches = [v for v in released if re.fullmatch(rf"{major}\.{minor}\.\d+", v)]
        if not patches:
            sys.exit(f"build_warp_facts: no release of warp-lang {major}.{minor}")
        chosen.append(max(patches, key=lambda v: int(v.rsplit(".", 1)[1])))
    return chosen


def wheel_for(version: str) -> str:
    """A wheel of warp-lang ``version`` in CACHE, downloaded the first time."""
    found = sorted(glob.glob(os.path.join(CACHE, f"warp_lang-{version}-*.whl")))
    if found:
        return found[0]
    os.makedirs(CACHE, exist_ok=True)
    errors = []
    for platform in PLATFORMS:
        result = pip("download", "--no-deps", f"warp-lang=={version}", "--only-binary=:all:",
                     "--platform", platform, "-d", CACHE, "-q")
        found = sorted(glob.glob(os.path.join(CACHE, f"warp_lang-{version}-*.whl")))
        if found:
            return found[0]
        errors.append(f"{platform}: {result.stderr.strip().splitlines()[-1:] or '?'}")
    sys.exit(f"build_warp_facts: cannot download warp-lang {version}: {'; '.join(errors)}")


def _read(wheel: zipfile.ZipFile, *candidates: str) -> tuple[str, str]:
    names = set(wheel.namelist())
    for name in candidates:
        if name in names:
            return name, wheel.read(name).decode("utf-8")
    raise extract.ExtractError(f"none of {', '.join(candidates)} in the wheel")


def facts_of(path: str) -> dict:
    """The facts of one wheel, as plain data (sorted tuples, dicts) for the generated module."""
    with zipfile.ZipFile(path) as wheel:
        config_path, config = _read(wheel, "warp/config.py", "warp/_src/config.py")
        context_path, context = _read(wheel, "warp/_src/context.py", "warp/context.py")
        builtins_path, builtins = _read(wheel, "warp/_src/builtins.py", "warp/builtins.py")
        types_path, types = _read(wheel, "warp/_src/types.py", "warp/types.py")
        _, fabric = _read(wheel, "warp/_src/fabric.py", "warp/fabric.py")  # fabricarray's constructor
        try:
            _, parallel_tests = _read(wheel, "warp/tests/test_module_parallel_load.py")
        except extract.ExtractError:
            parallel_tests = ""
        _, package = _read(wheel, "warp/__init__.py")
        _, public_types = _read(wheel, "warp/types.py")
        modules = extract.public_modules(wheel.namelist())
    options = extract.module_options(context)
    config_defaults = extract.config_defaults(config)
    ops = extract.mathdx_ops(builtins)
    arrays = extract.array_types(types, fabric)
    value_types = extract.value_types(types)
    type_names = {*value_types.types, *value_types.constructors}
    public_names = {**extract.public_type_names("warp", package, type_names),
                    **extract.public_type_names("warp.types", public_types, type_names)}
    python_scalars = extract.python_scalar_types(types)
    if not set(python_scalars.values()) <= {k for k, v in value_types.types.items() if not v[1]}:
        raise extract.ExtractError(f"{path}: type_to_warp maps a Python type to no Warp scalar: {python_scalars}")
    if options.constants.get("block_dim") is None:
        raise extract.ExtractError(f"{path}: Module.options has no constant block_dim")
    return {
        "version": extract.config_version(config),
        "sources": (config_path, context_path, builtins_path, types_path),
        "config_names": tuple(sorted(extract.config_names(config))),
        "module_options": tuple(sorted(options.keys)),
        "snapshot_options": tuple(sorted(options.snapshot)),
        "module_option_defaults": {k: options.constants[k] for k in sorted(options.constants)},
        # what a new module copies into a snapshot option when the program never assigned the config name
        "snapshot_option_defaults": {k: config_defaults[options.snapshot[k]] for k in sorted(options.snapshot)
                                     if options.snapshot[k] in config_defaults},
        "default_block_dim": options.constants["block_dim"],
        "launch_block_dim": extract.launch_block_dim_default(context),
        "module_options_validated": extract.module_options_validated(context),
        "kernel_module_options": extract.kernel_takes_module_options(context),
        "mathdx_lto_ops": tuple(sorted(op.name for op in ops.values() if op.builds_lto)),
        "mathdx_backward_lto_ops": tuple(sorted(op.name for op in ops.values() if op.backward_lto)),
        "mathdx_options": {op.name: op.option for op in sorted(ops.values(), key=lambda o: o.name)
                           if op.builds_lto and op.option},
        "public_modules": tuple(sorted(modules)),
        "array_extents": tuple(sorted(extract.array_extents(types))),
        "array_types": tuple(sorted(arrays.classes)),
        "array_types_dtype_any": tuple(sorted(arrays.dtype_any)),
        "generic_types": tuple(sorted(extract.generic_types(types))),
        "value_types": {k: value_types.types[k] for k in sorted(value_types.types)},
        "value_type_constructors": {k: value_types.constructors[k] for k in sorted(value_types.constructors)},
        "public_type_names": {k: public_names[k] for k in sorted(public_names)},
        "python_scalar_types": {k: python_scalars[k] for k in sorted(python_scalars)},
        "cpu_parallel_load_race_test": CPU_RACE_TEST in parallel_tests,
    }


def _literal(value: object) -> str:
    """``repr``, with strings in double quotes (the house style)."""
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, tuple):
        return "(" + ", ".join(_literal(v) for v in value) + ("," if len(value) == 1 else "") + ")"
    return repr(value)


def _wrapped(items: tuple, indent: str) -> list[str]:
    """A tuple literal of short strings wrapped under 120 columns."""
    lines, line = [], indent
    for item in items:
        piece = _literal(item) + ", "
        if len(line) + len(piece) > 118:
            lines.append(line.rstrip())
            line = indent
        line += piece
    if line.strip():
        lines.append(line.rstrip())
    return lines


def render(tables: dict[str, dict], wheels: dict[str, str]) -> str:
    fixed = [v for v, t in tables.items() if t["cpu_parallel_load_race_test"]]
    out = [
        '"""Warp facts per released warp-lang version. GENERATED by scripts/build_warp_facts.py: do not edit.',
        "",
        "Read from each release's wheel (warp/config.py, warp/_src/context.py, builtins.py, types.py, fabric.py) by",
        "warplint/warp_version_extract.py; regenerate with `python scripts/build_warp_facts.py`, check with",
        "`--check`. Names and defaults only: no Warp source is copied.",
        '"""',
        "",
        "from __future__ import annotations",
        "",
        "# The wheel each table was read from.",
        "WHEELS: dict[str, str] = {",
        *[f"    {_literal(v)}: {_literal(wheels[v])}," for v in tables],
        "}",
        "",
        "# The first release carrying Warp's regression test for concurrent first CPU loads",
        "# (test_module_parallel_load.py: test_force_load_parallel_cpu_cold_start_kernel_lookup).",
        f"CPU_PARALLEL_LOAD_FIXED_IN = {_literal(fixed[0] if fixed else None)}",
        "",
        "TABLES: dict[str, dict] = {",
    ]
    for version, table in tables.items():
        out.append(f"    {_literal(version)}: {{")
        for key, value in table.items():
            if key in ("version", "cpu_parallel_load_race_test"):
                continue
            if isinstance(value, tuple) and key != "sources":
                out.append(f"        {_literal(key)}: (")
                out += _wrapped(value, " " * 12)
                out.append("        ),")
            elif isinstance(value, dict) and value:
                out.append(f"        {_literal(key)}: {{")
                out += _wrapped_dict(value, " " * 12)
                out.append("        },")
            else:
                out.append(f"        {_literal(key)}: {_literal(value)},")
        out.append("    },")
    out.append("}")
    return "\n".join(out) + "\n"


def _wrapped_dict(mapping: dict, indent: str) -> list[str]:
    lines, line = [], indent
    for key, value in mapping.items():
        piece = f"{_literal(key)}: {_literal(value)}, "
        if len(line) + len(piece) > 118:
            lines.append(line.rstrip())
            line = indent
        line += piece
    if line.strip():
        lines.append(line.rstrip())
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("versions", nargs="*", help="versions to read (default: the latest patch of 1.10 .. 1.19)")
    parser.add_argument("--check", action="store_true", help="fail if the committed module is not what this builds")
    args = parser.parse_args(argv)
    versions = args.versions or latest_patches()
    tables, wheels = {}, {}
    for version in versions:
        wheel = wheel_for(version)
        table = facts_of(wheel)
        if table["version"] != version:
            sys.exit(f"build_warp_facts: {os.path.basename(wheel)} says version {table['version']}")
        tables[version] = table
        wheels[version] = os.path.basename(wheel)
    text = render(tables, wheels)
    if args.versions:
        sys.stdout.write(text)
        return 0
    if args.check:
        with open(OUTPUT, encoding="utf-8") as fh:
            if fh.read() != text:
                print(f"build_warp_facts: {os.path.relpath(OUTPUT, ROOT)} is not what the wheels give; rebuild it")
                return 1
        print("build_warp_facts: up to date")
        return 0
    with open(OUTPUT, "w", encoding="utf-8") as fh:
        fh.write(text)
    print(f"wrote {os.path.relpath(OUTPUT, ROOT)}: {', '.join(tables)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""What a pass leaves to measure after it ends: the generated source of each module identity in the
isolated kernel cache (size, adjoint share, digest) and the program's own output (for "did the workload
change?"), read before the workspace is removed."""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import asdict, dataclass
from typing import Any

# a top-level C++/CUDA definition in Warp's generated source: `static void adj_sq_0(`,
# `WP_API void k_f0532327_cpu_backward(`, `extern "C" __global__ void k_..._cuda_kernel_backward(`
_DEFINITION = re.compile(r"^[A-Za-z_][\w:<>,\s\"*&]*?\b([A-Za-z_]\w*)\s*\(")
_NOT_DEFINITION = ("#", "//", "{", "}", " ", "\t", "namespace", "using", "struct", "template", "typedef")
SOURCE_SUFFIXES = (".cpp", ".cu")
MAX_SOURCE_BYTES = 64 << 20  # a generated file larger than this is not read


@dataclass(frozen=True)
class SourceStats:
    bytes: int
    adjoint_bytes: int
    functions: int
    adjoint_functions: int
    sha256: str

    @property
    def adjoint_share(self) -> float:
        return self.adjoint_bytes / self.bytes if self.bytes else 0.0

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        out["adjoint_share"] = round(self.adjoint_share, 4)
        return out


def is_adjoint(name: str) -> bool:
    """Warp names adjoint code `adj_<func>` (wp.func adjoints) and `<kernel>_..._backward` (kernel adjoints)."""
    return name.startswith("adj_") or "_backward" in name


def source_stats(text: str) -> SourceStats:
    """Split the source at top-level definitions and count the bytes of those that are adjoint code."""
    adjoint = 0
    functions = adjoint_functions = 0
    current_adjoint = False
    for line in text.splitlines(keepends=True):
        if line and not line.startswith(_NOT_DEFINITION):
            m = _DEFINITION.match(line)
            if m:
                functions += 1
                current_adjoint = is_adjoint(m.group(1))
                adjoint_functions += current_adjoint
        elif line.startswith("#"):
            current_adjoint = False  # a preprocessor line ends the previous definition's body
        if current_adjoint:
            adjoint += len(line.encode("utf-8"))
    data = text.encode("utf-8")
    return SourceStats(len(data), adjoint, functions, adjoint_functions, hashlib.sha256(data).hexdigest()[:16])


def scan_cache(cache_root: str) -> dict[str, dict[str, Any]]:
    """{module cache directory name (``wp_<name>_<hash7>``): stats of its generated source} under ``cache_root``."""
    out: dict[str, dict[str, Any]] = {}
    for dirpath, _dirs, files in os.walk(cache_root):
        base = os.path.basename(dirpath)
        if not base.startswith("wp_"):
            continue
        for name in files:
            if not name.endswith(SOURCE_SUFFIXES) or not name.startswith(base):
                continue
            path = os.path.join(dirpath, name)
            try:
                if os.path.getsize(path) > MAX_SOURCE_BYTES:
                    continue
                with open(path, encoding="utf-8", errors="replace") as fh:
                    out[base] = source_stats(fh.read()).to_json()
            except OSError:
                continue
    return out


# Warp's own output: the init banner (and its indented lines), module load lines, driver warnings.
_WARP_LINE = re.compile(
    r"^(Warp \d[\w.+-]* initialized:|Module \S+ [0-9a-f]+ load on device .* took [\d.]+ ms|Warp CUDA warning:"
    r"|Warp (UserWarning|DeprecationWarning|warning):)"
)


def program_output(text: str) -> list[str]:
    """The program's output lines without Warp's log lines (whose hashes and timings differ between runs)."""
    out = []
    in_banner = False
    for line in text.splitlines():
        if _WARP_LINE.match(line):
            in_banner = line.startswith("Warp ") and line.rstrip().endswith("initialized:")
            continue
        if in_banner and line.startswith(" "):
            continue
        in_banner = False
        out.append(line)
    return out


def output_digest(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            text = fh.read()
    except OSError:
        return None
    return hashlib.sha256("\n".join(program_output(text)).encode("utf-8")).hexdigest()[:16]

"""Harness shim for the oracle's runs (not part of the programs): share Clang's precompiled header and
Python's bytecode across programs.

Warp 1.19 gives every process (every thread) a fresh temporary directory for the CPU precompiled header,
so each program's first compile pays ~5 s building it. The header's file name carries its build flags
(``builtin_bd1_tis_o2_<hash>.pch``), so one directory per oracle worker can serve every program that
worker runs, one at a time. Only where the header lives changes: module hashes, build statuses and the
events the recorder sees are the same.

``warplint --confirm``'s recorder is injected as ``sitecustomize`` and chains to the next one on the path:
this file. It patches ``Runtime._get_or_create_pch_dir`` right after ``warp._src.context`` is imported.
"""

import os
import sys

_PCH = os.environ.get("WARPLINT_ORACLE_PCH")
_PYCACHE = os.environ.get("WARPLINT_ORACLE_PYCACHE")


class _PchFinder:
    def find_spec(self, name, path=None, target=None):
        if name != "warp._src.context":
            return None
        import importlib.machinery

        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None:
            return None
        orig = spec.loader.exec_module

        def exec_module(module):
            orig(module)
            try:
                sys.meta_path.remove(self)
            except ValueError:
                pass
            module.Runtime._get_or_create_pch_dir = lambda runtime: _PCH

        spec.loader.exec_module = exec_module
        return spec


if _PYCACHE:
    # --confirm points PYTHONPYCACHEPREFIX at a fresh directory per pass (nothing written into the project),
    # so Warp's own modules would be byte-compiled again in every pass (~4 s): keep their bytecode instead
    sys.pycache_prefix = _PYCACHE

if _PCH:
    os.makedirs(_PCH, exist_ok=True)
    sys.meta_path.insert(0, _PchFinder())

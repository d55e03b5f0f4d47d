"""Truth from the runtime: run a generated program on real Warp (CPU) under ``warplint --confirm``'s recorder
and label what happened.

Each program runs cold and warm on its own private caches (``run_confirm`` makes a temporary
``WARP_CACHE_PATH``/``CUDA_CACHE_PATH`` per program and removes it), from a temporary copy of its files.
The labels are read from the recorder's events (``warplint.confirm.events.RunData``), never from the
generator's intent:

- ``rebuild``: a module identity built again in the process, with the cause the recorder saw (a kernel
  that joined it: CS-1; an option change: CS-3; a new generic instance: CS-6); at the cause's line;
- ``cache-lost`` (CS-2): the warm run compiled a user module again; at the clear / config line the recorder
  saw, else at the marked line that ran (an ``atexit`` rmtree is not a Warp call);
- ``option-lost`` (CS-3b; CS-10 for ``enable_backward``): a snapshot option set after its module existed
  (the build did not get it), options set on a module no kernel ever joined, or a ``wp.config`` name that
  did not exist before the assignment;
- ``block-dims`` (CS-5): one module built at several block_dims (``wp.config.enable_cpu_blocks = True``);
- ``preload`` (CS-13): a load call that built modules nothing launched, or a marked preload line that ran
  and built nothing;
- ``fragmented`` (CS-4): three or more one-kernel modules (not unique) with the same options built;
- ``unique-stable`` (CS-9): a kernel with one content alone in a ``unique`` module (a module Warp renamed
  after the kernel joined it), where a module shared with another module the process built would have built
  once: each one's kernels existed before the other's first build (else sharing rebuilds: no build saved);
- ``adjoint-unused`` (CS-10): a module built with backward (adjoint) code that no run of the project
  differentiated (an adjoint launch, or a launch a ``wp.Tape`` recorded), neither the command's nor any other
  entry point's (each top-level script with a ``__main__`` block is run once more for that); at its kernels'
  definitions, a too-late ``enable_backward`` assignment and any option call that forces it;
- facts, not scored: per module whether backward code was built and whether the command's run differentiated.

Where a label needs a line the recorder cannot give (a ``try: load_module(..) except`` that built nothing,
an ``atexit`` rmtree), the generator's marked line is used *only if the probe saw it run* and the runtime
effect happened.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from typing import Any

from warplint.confirm.events import RunData, is_warp_module
from warplint.confirm.runner import Workspace, run_pass
from warplint.confirm.sources import scan_cache

from .generate import Program

HERE = os.path.dirname(os.path.abspath(__file__))
PCH_SHIM = os.path.join(HERE, "_pch")
TIMEOUT_S = 180.0
FRAGMENTED_MIN = 3


def warp_version() -> str:
    from importlib.metadata import version

    return version("warp-lang")


def _probe_lines(program: Program, root: str) -> dict[str, list[int]]:
    """The marked lines, for the recorder's line probes (did the line run?)."""
    out: dict[str, set[int]] = {}
    for where in program.marks.values():
        for path, line in where:
            out.setdefault(os.path.join(root, path), set()).add(line)
    return {p: sorted(v) for p, v in out.items()}


def other_entry_points(program: Program) -> list[str]:
    """The program's scripts other than its command's: a top-level file with a ``__main__`` block (a project's
    second program, e.g. a training script beside a forward-only one). Run for what they differentiate: a
    module another program of the project differentiates builds the same identity, backward included."""
    ran = program.command[0] if program.command and not program.command[0].startswith("-") else None
    return sorted(path for path, text in program.files.items()
                  if "/" not in path and path != ran and 'if __name__ == "__main__":' in text)


def needs_warm(cold: RunData, cache_root: str) -> str | None:
    """Whether a warm pass can show anything: the cold pass cleared or redirected the cache, turned it off,
    or left an identity it compiled missing from its private cache. Otherwise every identity is on disk and
    a warm pass would load them all (the generator never captures a value that changes between runs)."""
    if any(not c.get("internal") for c in cold.clears):
        return "cache cleared"
    for c in cold.configs:
        if not c.get("internal") and c.get("name") in ("cache_kernels", "kernel_cache_dir"):
            return f"wp.config.{c.get('name')} assigned"
    present: set[str] = set()
    for _dirpath, dirnames, _files in os.walk(cache_root):
        present.update(dirnames)
    for e in cold.compiled():
        if e.get("ident") and e["ident"] not in present:
            return f"{e['ident']} missing from the cache after the cold run"
    return None


def run_program(program: Program, pch_dir: str | None = None, timeout: float = TIMEOUT_S,
                pycache: str | None = None) -> dict[str, Any]:
    """Run ``program`` cold and warm under the recorder; return its truth record."""
    base = tempfile.mkdtemp(prefix="warplint-oracle-")
    try:
        root = os.path.join(base, "prog")
        tmp = os.path.join(base, "tmp")
        os.makedirs(tmp)
        for path, text in program.files.items():
            full = os.path.join(root, path)
            os.makedirs(os.path.dirname(full), exist_ok=True)
            with open(full, "w", encoding="utf-8") as fh:
                fh.write(text)
        env = {"PYTHONPATH": PCH_SHIM, "TMPDIR": tmp}
        if pch_dir:
            env["WARPLINT_ORACLE_PCH"] = pch_dir
        if pycache:
            env["WARPLINT_ORACLE_PYCACHE"] = pycache
        for k in list(os.environ):
            if k.startswith("ORACLE_"):
                env[k] = ""  # the programs read ORACLE_* at run time: never from the caller
        ws = Workspace(_probe_lines(program, root), probes="on")
        try:
            command = [sys.executable, *program.command]
            cold_p = run_pass(ws, "cold", command, cwd=root, timeout=timeout, env=env)
            cold = RunData.from_events("cold", cold_p.events, root)
            failed = cold_p.failure("cold")
            sources = scan_cache(ws.warp_cache)  # before a warm pass can build again
            warm_p = None
            why_warm = None if failed else needs_warm(cold, ws.warp_cache)
            if why_warm:
                warm_p = run_pass(ws, "warm", command, cwd=root, timeout=timeout, env=env)
                failed = warm_p.failure("warm")
            elsewhere: set[str] = set()
            for n, script in enumerate([] if failed else other_entry_points(program)):
                other_p = run_pass(ws, f"entry{n}", [sys.executable, script], cwd=root, timeout=timeout, env=env)
                failed = other_p.failure(f"entry point {script}")
                if failed:
                    break
                elsewhere |= differentiated(RunData.from_events(f"entry{n}", other_p.events, root))
            plain = None
            if not failed and _user_builds(cold):
                # The recorder's line probes (settrace before Python 3.12) shift when the cycle collector runs,
                # and with it which dropped kernel objects (a generic kernel and its overloads hold each other)
                # Warp's module hash still reads: the same command once more without probes, on the warm cache.
                ws.probes = "off"
                plain_p = run_pass(ws, "plain", command, cwd=root, timeout=timeout, env=env)
                ws.probes = "on"
                if not plain_p.failure("plain"):
                    plain = RunData.from_events("plain", plain_p.events, root)
        finally:
            ws.cleanup()
        warm = RunData.from_events("warm", warm_p.events, root) if warm_p is not None else None
        truth = derive(cold, warm, program, os.path.realpath(root), frozenset(elsewhere), sources)
        truth["failed"] = failed
        truth["warm_run"] = why_warm
        if plain is not None and _user_builds(plain) != _user_builds(cold):
            # which build labels hold depends on the collector: the rebuild labels are not scored (score.py)
            truth["probe_dependent"] = {"probes": _user_builds(cold), "plain": _user_builds(plain)}
        truth["recorder_ok"] = cold.recorder_started and cold.warp_hooked and not cold.recorder_errors
        truth["warp_version"] = (cold.warp or {}).get("version")
        truth["wall_s"] = round(cold_p.wall_s + (warm_p.wall_s if warm_p else 0.0), 3)
        if failed or not truth["recorder_ok"]:
            last = warm_p if warm_p is not None and failed and failed.startswith("warm") else cold_p
            truth["output_tail"] = [ln for ln in last.output_tail if "Warp CUDA warning" not in ln][-12:]
            truth["recorder_errors"] = cold.recorder_errors
        return truth
    finally:
        shutil.rmtree(base, ignore_errors=True)


def _user_builds(run: RunData) -> list:
    """The user modules' identities a run built (module, hash, device, block_dim) and how many rebuilds it made."""
    identities = sorted((str(m), str(h), str(d), str(b)) for m, h, d, b in run.identities() if not is_warp_module(m))
    return [identities, sum(1 for rb in run.rebuilds if not is_warp_module(rb.load.get("module")))]


# -------------------------------------------------------------------------------------------------
# labelling


class _Paths:
    def __init__(self, root: str):
        self.root = os.path.normcase(root)

    def rel(self, path: str | None) -> str | None:
        if not path or path.startswith("<"):
            return None
        p = os.path.normcase(os.path.realpath(path))
        if not p.startswith(self.root + os.sep):
            return None
        return os.path.relpath(p, self.root).replace(os.sep, "/")

    def site(self, ev: dict | None) -> list | None:
        return self._lines(ev, "_site", 1)

    def define(self, ev: dict | None) -> list | None:
        return self._lines(ev, "_define", 2)

    def _lines(self, ev: dict | None, key: str, last: int) -> list | None:
        """[path, first line, last line] of an event's ``key`` ([path, line, ...]; its last line at ``last``)."""
        found = (ev or {}).get(key)
        if not found:
            return None
        p = self.rel(found[0])
        return [p, int(found[1]), int(found[last])] if p else None


def _uniq(ranges: list) -> list:
    out: list = []
    for r in ranges:
        if r and r not in out:
            out.append(r)
    return out


def differentiated(run: RunData) -> set[str]:
    """The modules a run differentiated: an adjoint launch of one of their kernels, or a launch a ``wp.Tape``
    recorded (as ``--confirm``'s CS-10 cost reads it: erring towards used)."""
    return {shape.module for shape, count in run.topology().items() if shape.adjoint or (count.taped or 0) > 0}


def derive(cold: RunData, warm: RunData | None, program: Program, root: str,
           differentiated_elsewhere: frozenset[str] = frozenset(),
           sources: dict[str, dict[str, Any]] | None = None) -> dict[str, Any]:
    """The labels of one program's runs; ``differentiated_elsewhere``: the modules its other entry points
    differentiated (``other_entry_points``); ``sources``: the generated source of each identity the cold pass
    left in its cache (``scan_cache``)."""
    P = _Paths(root)
    items: list[dict[str, Any]] = []
    user_loads = [e for e in cold.builds() if not is_warp_module(e.get("module"))]
    kernel_by_key: dict[str, dict] = {}
    for k in cold.kernels:
        kernel_by_key.setdefault(str(k.get("key")), k)
    launched_modules = {e.get("module") for e in cold.topology_events} | {e.get("module") for e in cold.launches}

    def launch_sites(module: str | None) -> list:
        out = [P.site(e) for e in cold.topology_events + cold.launches if e.get("module") == module]
        out += [P.site(e) for e in cold.loads if e.get("module") == module]
        return _uniq(out)

    # rebuilds: CS-1 / CS-3 / CS-6 by the cause the recorder saw
    groups: dict[tuple, dict[str, Any]] = {}
    for rb in cold.rebuilds:
        module = rb.load.get("module")
        if is_warp_module(module):
            continue
        if rb.causes:
            causes = rb.causes
        else:
            causes = [{"ev": "latent", "_site": rb.load.get("_site"),
                       "changed": rb.load.get("changed_options"), "new": rb.load.get("new_kernels")}]
        for c in causes:
            kind = c.get("ev")
            if kind == "kernel":
                mech = "CS-1"
                lines = _uniq([P.define(c), P.site(c)])
            elif kind == "overload":
                mech = "CS-6"
                lines = _uniq([P.site(c), P.define(kernel_by_key.get(str(c.get("key"))))])
            elif kind == "set_options":
                mech = "CS-3"
                lines = _uniq([P.site(c)])
            else:  # a rebuild with no event in between: an option mutated in place, read at a later hash
                mech = "CS-3" if c.get("changed") else "CS-1"
                lines = _uniq([P.site(c)])
            if not lines:
                continue
            key = (mech, module, tuple(map(tuple, lines)))
            g = groups.setdefault(key, {"mech": mech, "kind": "rebuild", "module": module, "lines": lines,
                                        "related": [], "count": 0, "cause": kind})
            g["count"] += 1
            g["related"] = _uniq(g["related"] + [P.site(rb.load)])
    items += groups.values()

    # CS-2: the warm run compiled a user module again
    if warm is not None:
        again = [e for e in warm.compiled() if not is_warp_module(e.get("module"))]
        if again:
            lines = [P.site(c) for c in cold.clears if not c.get("internal")]
            for c in cold.configs:
                if c.get("internal"):
                    continue
                name = c.get("name")
                if (name == "cache_kernels" and c.get("value") == "False") or name == "kernel_cache_dir":
                    lines.append(P.site(c))
            lines = _uniq(lines)
            via = "event"
            if not lines:
                lines = _ran_marks(cold, program, root, "cache")
                via = "marked line that ran"
            if not lines:
                lines = _uniq([P.site(e) for e in again])
                via = "load site"
            items.append({"mech": "CS-2", "kind": "cache-lost", "lines": lines, "related": [],
                          "count": len(again), "via": via,
                          "modules": sorted({str(e.get("module")) for e in again})})

    # options that never arrive
    lost: dict[tuple, dict[str, Any]] = {}
    for x in cold.lost_options():
        site = P.site(x["assignment"])
        if not site:
            continue
        mech = "CS-10" if x["option"] == "enable_backward" else "CS-3b"
        g = lost.setdefault((mech, tuple(site)), {"mech": mech, "kind": "option-lost", "lines": [site],
                                                  "related": [], "count": 0, "option": x["option"],
                                                  "why": "snapshot option set after its module was created"})
        g["count"] += 1
    items += lost.values()
    kernel_modules = {k.get("module") for k in cold.kernels}
    for so in cold.set_options:
        site = P.site(so)
        m = so.get("module")
        if not site or is_warp_module(m) or m in kernel_modules:
            continue
        items.append({"mech": "CS-3b", "kind": "option-lost", "lines": [site], "related": [], "count": 1,
                      "module": m, "why": "options set on a module no kernel joined"})
    for c in cold.configs:
        site = P.site(c)
        if c.get("internal") or not site or c.get("existed"):
            continue
        items.append({"mech": "CS-3b", "kind": "option-lost", "lines": [site], "related": [], "count": 1,
                      "option": c.get("name"), "why": "wp.config name that did not exist"})

    # CS-5: one module at several block_dims
    for (_pid, module, _dev), by_bd in cold.block_dim_variants().items():
        if is_warp_module(module):
            continue
        items.append({"mech": "CS-5", "kind": "block-dims", "module": module, "lines": launch_sites(module),
                      "related": [], "count": len(by_bd) - 1, "block_dims": sorted(by_bd, key=str)})

    # CS-13: a load call that built what nothing launched; a marked preload that ran and built nothing
    built_unused: dict[tuple, dict[str, Any]] = {}
    for e in cold.builds():
        site = P.site(e)
        if not site or e.get("module") in launched_modules:
            continue
        g = built_unused.setdefault(tuple(site), {"mech": "CS-13", "kind": "preload", "lines": [site],
                                                  "related": [], "count": 0, "modules": [],
                                                  "why": "built modules that nothing launched"})
        g["count"] += 1
        g["modules"].append(e.get("module"))
    items += built_unused.values()
    load_sites = {tuple(s) for s in (P.site(e) for e in cold.loads) if s}
    for r in _ran_marks(cold, program, root, "preload"):
        if tuple(r) not in load_sites:
            items.append({"mech": "CS-13", "kind": "preload", "lines": [r], "related": [], "count": 1,
                          "why": "a preload that ran and built nothing"})

    # a module="unique" module is renamed after its kernel registered (to key + content hash): seen as a
    # module object whose name at the load differs from its name when the kernel joined it
    named_at_kernel = {(k.get("pid"), k.get("mid")): k.get("module") for k in cold.kernels}
    renamed = {(e.get("pid"), e.get("mid")) for e in user_loads
               if named_at_kernel.get((e.get("pid"), e.get("mid")), e.get("module")) != e.get("module")}

    def unique(e: dict) -> bool:
        return (e.get("pid"), e.get("mid")) in renamed

    # CS-4: one-kernel modules with the same options
    one_kernel: dict[str, list] = {}
    for e in user_loads:
        name = e.get("module")
        if unique(e) or len(e.get("kernels") or ()) != 1:
            continue
        sig = repr(sorted((e.get("options") or {}).items()))
        one_kernel.setdefault(sig, [])
        if name not in [x.get("module") for x in one_kernel[sig]]:
            one_kernel[sig].append(e)
    for loads in one_kernel.values():
        if len(loads) >= FRAGMENTED_MIN:
            lines = []
            for e in loads:
                path, line, key = e["kernels"][0][:3]  # (path, line, key, qualname, module) since the report
                lines.append(P.define(kernel_by_key.get(key)) or ([P.rel(path), line, line] if P.rel(path) else None))
            items.append({"mech": "CS-4", "kind": "fragmented", "lines": _uniq(lines), "related": [],
                          "count": len(loads), "modules": sorted(str(e.get("module")) for e in loads)})

    # CS-9: a stable kernel alone in a unique module, whose build a module shared with another would have
    # saved. Warp builds a module at its first load with every kernel it holds then, and again when a kernel
    # joins it after that (CS-1). So two modules could have been one build when each one's kernels all
    # existed before the other's first build; a kernel made after the other module built, or launched
    # before the other module's kernels existed, would have rebuilt the shared module: its unique module
    # then costs no extra build. Any module can be shared by name, so the other module is any user module
    # built in the same process with the same options, device and block_dim.
    first_builds: dict[tuple, dict] = {}
    for e in sorted(user_loads, key=lambda e: e.get("seq", 0)):
        first_builds.setdefault((e.get("pid"), e.get("mid")), e)
    made_in: dict[tuple, list[int]] = {}
    for k in cold.kernels:
        made_in.setdefault((k.get("pid"), k.get("mid")), []).append(k.get("seq", 0))

    def built_alike(a: dict, b: dict) -> bool:
        return all(a.get(f) == b.get(f) for f in ("options", "device", "block_dim"))

    def could_share(key: tuple, created: int) -> bool:
        """Whether the kernel made at ``created``, alone in module ``key``, and some other module's kernels
        all existed before the first build of either module (one shared module: one build, not two)."""
        own = first_builds[key]
        for other_key, other in first_builds.items():
            if other_key == key or other_key[0] != key[0] or not built_alike(own, other):
                continue
            before_other = [s for s in made_in.get(other_key, ()) if s < other.get("seq", 0)]
            if created < other.get("seq", 0) and all(s < own.get("seq", 0) for s in before_other):
                return True
        return False

    unique_by_def: dict[tuple, dict[tuple, dict]] = {}  # (file, line) -> {(pid, mid): its first build}
    for key, e in first_builds.items():
        if unique(e) and len(e.get("kernels") or ()) == 1:
            path, line = e["kernels"][0][:2]
            rel = P.rel(path)
            if rel:
                unique_by_def.setdefault((rel, int(line)), {})[key] = e
    for (rel, line), builds in unique_by_def.items():
        if len({e.get("module") for e in builds.values()}) != 1:
            continue  # one definition, several contents: run-time specializations
        made = [k for k in cold.kernels if (P.define(k) or [None, None])[:2] == [rel, line]]
        first_made: dict[Any, int] = {}  # pid -> when the definition first made a kernel there
        for k in made:
            first_made[k.get("pid")] = min(first_made.get(k.get("pid"), k.get("seq", 0)), k.get("seq", 0))
        if any(key[0] in first_made and could_share(key, first_made[key[0]]) for key in builds):
            items.append({"mech": "CS-9", "kind": "unique-stable",
                          "lines": _uniq([P.define(made[0]), *[P.site(k) for k in made]]),
                          "related": [], "count": 1, "module": next(iter(builds.values())).get("module")})

    # facts: backward built / used per user module (in the command's run)
    adjoint = {e.get("module") for e in cold.topology_events if e.get("adjoint")}
    backward: dict[str, dict[str, bool]] = {}
    for e in user_loads:
        backward[str(e.get("module"))] = {"built": e.get("enable_backward") == "True",
                                          "used": e.get("module") in adjoint}

    # CS-10: a module built with backward (adjoint) code that no run of the project differentiated: neither
    # the command's (an adjoint launch, or a launch a wp.Tape recorded) nor another entry point's
    used = differentiated(cold) | set(differentiated_elsewhere)
    lost_backward: dict[str, list] = {}
    for x in cold.lost_options():
        if x["option"] == "enable_backward":
            lost_backward.setdefault(str(x["load"].get("module")), []).append(P.site(x["assignment"]))
    forced: dict[str, list] = {}
    for so in cold.set_options:
        if (so.get("options") or {}).get("enable_backward") in (True, "True"):
            forced.setdefault(str(so.get("module")), []).append(P.site(so))
    def adjoint_built(load: dict) -> bool:
        """Whether the build generated adjoint code: read from its source when the cache still holds it, else
        Warp's rule: a kernel's own ``enable_backward`` overrides its module's option for its adjoint."""
        stats = (sources or {}).get(load.get("ident") or "")
        if stats:
            return bool(stats["adjoint_bytes"])
        module_on = load.get("enable_backward") == "True"
        made = kernels_of.get((load.get("pid"), load.get("mid")), [])
        return any((k.get("enable_backward") or str(module_on)) == "True" for k in made) if made else module_on

    kernels_of: dict[tuple, list[dict]] = {}
    for k in cold.kernels:
        kernels_of.setdefault((k.get("pid"), k.get("mid")), []).append(k)
    unused: dict[str, list] = {}
    for e in user_loads:
        name = str(e.get("module"))
        if name in used or not adjoint_built(e):
            continue
        lines = unused.setdefault(name, [])
        made = kernels_of.get((e.get("pid"), e.get("mid")), [])
        for k in made:  # where each kernel is defined and where it is made (``wp.kernel(f)`` in another file)
            lines += [P.define(k), P.site(k)]
        if not made:
            for path, line, key in (tuple(k[:3]) for k in e.get("kernels") or ()):
                lines.append(P.define(kernel_by_key.get(key)) or ([P.rel(path), line, line] if P.rel(path) else None))
    for name, kernel_lines in unused.items():
        lines = _uniq(kernel_lines + lost_backward.get(name, []) + forced.get(name, []))
        if lines:
            items.append({"mech": "CS-10", "kind": "adjoint-unused", "module": name, "lines": lines,
                          "related": [], "count": 1, "why": "backward code built, never differentiated"})
    facts = {"backward": backward, "identities": len(cold.identities()),
             "compiled": len(cold.compiled()), "warm_compiled": len(warm.compiled()) if warm else None,
             "rebuilds": len(cold.rebuilds)}
    return {"items": items, "facts": facts}


def _ran_marks(cold: RunData, program: Program, root: str, tag: str) -> list:
    out = []
    for path, line in program.marks.get(tag, []):
        full = os.path.normcase(os.path.realpath(os.path.join(root, path)))
        if (full, line) in cold.lines:
            out.append([path, line, line])
    return out


def agreement(program: Program, truth: dict[str, Any]) -> dict[str, Any]:
    """The generator's hypothesis against the runtime: None when they agree."""
    mech = program.mechanism
    same = {mech} | ({"CS-3b", "CS-10"} if mech in ("CS-3b", "CS-10") else set())
    found = [i for i in truth.get("items", ()) if i["mech"] in same]
    expected = bool(program.intent.get("defect"))
    others = sorted({i["mech"] for i in truth.get("items", ()) if i["mech"] not in same})
    return {"expected": expected, "observed": bool(found), "agree": expected == bool(found), "other": others}

"""Turn the recorder's JSON lines into facts: builds, rebuilds (with their causes), block_dim variants,
options that never arrived, lines that ran."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from warplint.facts import SNAPSHOT_OPTIONS
from warplint.warp_version import facts_of


def norm_path(path: str | None, cwd: str | None = None) -> str | None:
    if not path:
        return None
    if path.startswith("<"):
        return path
    if not os.path.isabs(path) and cwd:
        path = os.path.join(cwd, path)
    try:
        return os.path.normcase(os.path.realpath(path))
    except (OSError, ValueError):  # a NUL in a recorded file name, an unreadable link
        return os.path.normcase(os.path.abspath(path))


def short(h: str | None) -> str:
    return (h or "?")[:7]


def is_warp_module(name: str | None) -> bool:
    return name is not None and (name == "warp" or name.startswith("warp."))


@dataclass(frozen=True)
class LaunchShape:
    """One distinct launch: what the workload is, as far as compiling is concerned."""

    kernel: str
    module: str
    dim: tuple
    device: str
    block_dim: int | None
    adjoint: bool
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]

    @classmethod
    def of(cls, ev: dict) -> LaunchShape:
        dim = ev.get("dim")
        return cls(
            kernel=str(ev.get("kernel")),
            module=str(ev.get("module")),
            dim=tuple(dim) if isinstance(dim, list) else (dim,),
            device=str(ev.get("device")),
            block_dim=ev.get("block_dim"),
            adjoint=bool(ev.get("adjoint")),
            inputs=tuple(ev.get("inputs") or ()),
            outputs=tuple(ev.get("outputs") or ()),
        )

    def to_json(self) -> dict[str, Any]:
        return {"kernel": self.kernel, "module": self.module, "dim": list(self.dim), "device": self.device,
                "block_dim": self.block_dim, "adjoint": self.adjoint, "inputs": list(self.inputs),
                "outputs": list(self.outputs)}

    def describe(self) -> str:
        dim = "x".join(str(d) for d in self.dim)
        return (f"{self.module}.{self.kernel} dim {dim} on {self.device} block_dim {self.block_dim}"
                f"{' adjoint' if self.adjoint else ''} ({', '.join(self.inputs + self.outputs)})")


@dataclass(frozen=True)
class LaunchCount:
    launches: int | None
    taped: int | None
    site: tuple | None = None


@dataclass
class Rebuild:
    """A module loaded a new identity for a (device, block_dim) it had already loaded in this process."""

    load: dict
    previous: dict | None  # the earlier load event of the same (module object, device, block_dim)
    causes: list[dict] = field(default_factory=list)  # kernel/set_options/overload events in between

    @property
    def ms(self) -> float:
        return float(self.load.get("ms") or 0.0)


@dataclass
class RunData:
    label: str
    events: list[dict]
    cwd: str | None = None
    start: dict | None = None
    warp: dict | None = None
    ended: bool = False
    recorder_errors: list[str] = field(default_factory=list)
    loads: list[dict] = field(default_factory=list)
    kernels: list[dict] = field(default_factory=list)
    modules: list[dict] = field(default_factory=list)
    set_options: list[dict] = field(default_factory=list)
    configs: list[dict] = field(default_factory=list)
    clears: list[dict] = field(default_factory=list)
    launches: list[dict] = field(default_factory=list)
    overloads: list[dict] = field(default_factory=list)
    lines: set = field(default_factory=set)  # {(normpath, line)}
    rebuilds: list[Rebuild] = field(default_factory=list)
    reloads: list[dict] = field(default_factory=list)  # same identity loaded again after an unload
    module_files: dict = field(default_factory=dict)  # module name -> {normpath of kernel definitions}
    ltos: list[dict] = field(default_factory=list)  # each LTO Warp built or fetched from its LTO cache
    topology_events: list[dict] = field(default_factory=list)
    topology_counts: dict = field(default_factory=dict)  # (pid, index) -> [launches, taped launches]
    whatifs: list[dict] = field(default_factory=list)  # what the harness applied (module options, preload)

    # -- construction ----------------------------------------------------------------------
    @classmethod
    def from_events(cls, label: str, events: list[dict], cwd: str | None = None) -> RunData:
        rd = cls(label=label, events=events, cwd=cwd)
        for ev in events:
            kind = ev.get("ev")
            if kind == "start":
                if rd.start is None:
                    rd.start = ev
                    rd.cwd = ev.get("cwd") or cwd
            elif kind == "warp":
                if rd.warp is None:
                    rd.warp = ev
                for err in ev.get("errors") or ():
                    rd.recorder_errors.append(f"hook {err}")
            elif kind == "end":
                rd.ended = True
                if ev.get("ok") is False:
                    rd.recorder_errors.append("recorder reported an internal error")
            elif kind == "recorder_error":
                rd.recorder_errors.append(f"{ev.get('where')}: {ev.get('error')}")
            elif kind == "load":
                rd.loads.append(ev)
            elif kind == "kernel":
                rd.kernels.append(ev)
            elif kind == "module":
                rd.modules.append(ev)
            elif kind == "set_options":
                rd.set_options.append(ev)
            elif kind == "config":
                rd.configs.append(ev)
            elif kind == "clear_cache":
                rd.clears.append(ev)
            elif kind == "launch":
                rd.launches.append(ev)
            elif kind == "overload":
                rd.overloads.append(ev)
            elif kind == "lto":
                rd.ltos.append(ev)
            elif kind == "topology":
                rd.topology_events.append(ev)
            elif kind == "topology_counts":
                for index, launches, taped in ev.get("counts") or ():
                    rd.topology_counts[(ev.get("pid"), index)] = [launches, taped]
            elif kind == "whatif":
                rd.whatifs.append(ev)
            elif kind == "line":
                p = rd.norm(ev.get("file"))
                if p:
                    rd.lines.add((p, int(ev.get("line") or 0)))
        rd._normalise_sites()
        rd._find_rebuilds()
        return rd

    def norm(self, path: str | None) -> str | None:
        return norm_path(path, self.cwd)

    def _normalise_sites(self) -> None:
        for ev in self.events:
            site = ev.get("site")
            if site:
                ev["_site"] = (self.norm(site[0]), int(site[1]))
            call = ev.get("call")
            if call:
                ev["_call"] = (self.norm(call[0]), int(call[1]))
            d = ev.get("define")
            if d:
                ev["_define"] = (self.norm(d[0]), int(d[1]), int(d[2]))
            if ev.get("ev") == "load":
                files = set()
                for k in ev.get("kernels") or ():
                    p = self.norm(k[0])
                    if p:
                        files.add(p)
                ev["_files"] = files
                self.module_files.setdefault(ev.get("module"), set()).update(files)
        for k in self.kernels:
            if k.get("_define"):
                self.module_files.setdefault(k.get("module"), set()).add(k["_define"][0])

    def _find_rebuilds(self) -> None:
        last: dict[tuple, dict] = {}
        by_pid_seq = sorted(self.events, key=lambda e: (e.get("pid", 0), e.get("seq", 0)))
        pending: dict[tuple, list[dict]] = {}  # (pid, mid) -> cause events since the last load
        for ev in by_pid_seq:
            kind = ev.get("ev")
            pid = ev.get("pid")
            if kind in ("kernel", "overload", "set_options") and ev.get("module_loaded"):
                if kind == "set_options" and ev.get("changed") == {}:
                    continue  # re-set to the same values: no new identity
                pending.setdefault((pid, ev.get("mid")), []).append(ev)
            elif kind == "load" and ev.get("status") != "error":
                key = (pid, ev.get("mid"), ev.get("device"), ev.get("block_dim"))
                prev = last.get(key)
                causes = pending.pop((pid, ev.get("mid")), [])
                if prev is not None and prev.get("hash") != ev.get("hash"):
                    self.rebuilds.append(Rebuild(load=ev, previous=prev, causes=self._real_causes(ev, causes)))
                elif prev is not None:
                    self.reloads.append(ev)
                last[key] = ev

    def _real_causes(self, load: dict, candidates: list[dict]) -> list[dict]:
        """Keep the events that really changed the identity: kernels whose content is new in this build,
        overloads of those kernels, option changes that differ in the resolved options."""
        new = load.get("new_kernels")
        changed = load.get("changed_options")
        if new is None and changed is None:
            return candidates  # the recorder could not diff: keep everything between the two loads
        new_sites = {(self.norm(k[0]), k[1]) for k in new or () if k[0]}
        new_keys = {k[2] for k in new or ()}
        changed = set(changed or ())
        out = []
        for c in candidates:
            kind = c.get("ev")
            if kind == "kernel":
                d = c.get("_define")
                if d and (d[0], d[1]) in new_sites:
                    out.append(c)
            elif kind == "overload":
                if c.get("key") in new_keys:
                    out.append(c)
            elif kind == "set_options":  # noqa: SIM102 - one branch per event kind, as the two above
                if set((c.get("changed") or c.get("options") or {}).keys()) & changed:
                    out.append(c)
        seen_sites = {c["_define"][:2] for c in out if c.get("_define")} | {
            c.get("key") for c in out if c.get("ev") == "overload"
        }
        for k in new or ():
            p = self.norm(k[0])
            if p and (p, k[1]) not in seen_sites and k[2] not in seen_sites:
                # a kernel whose content is new but whose creation was not seen as a separate event
                # (e.g. a redefined @wp.func it calls): point at its definition
                out.append({"ev": "kernel", "key": k[2], "func": k[2], "_define": (p, k[1], k[1]),
                            "_site": (p, k[1]), "synthetic": True, "pid": load.get("pid")})
        return out

    # -- queries ---------------------------------------------------------------------------
    @property
    def recorder_started(self) -> bool:
        return self.start is not None

    @property
    def warp_hooked(self) -> bool:
        return self.warp is not None and not (self.warp.get("errors") or [])

    @property
    def snapshot_options(self) -> frozenset[str]:
        """The options copied from wp.config at module creation in the Warp the program ran with."""
        version = (self.warp or {}).get("version")
        return facts_of(version, "the program's warp", version).snapshot_options if version else SNAPSHOT_OPTIONS

    def builds(self) -> list[dict]:
        return [e for e in self.loads if e.get("status") in ("compiled", "cached")]

    def compiled(self) -> list[dict]:
        return [e for e in self.loads if e.get("status") == "compiled"]

    def module_ms(self) -> float:
        return round(sum(float(e.get("ms") or 0) for e in self.loads), 3)

    def identities(self) -> set[tuple]:
        return {(e.get("module"), e.get("hash"), e.get("device"), e.get("block_dim")) for e in self.builds()}

    def module_matches(self, runtime_name: str | None, wanted: str | None, path: str | None) -> bool:
        """Does runtime module ``runtime_name`` correspond to the static ``wanted`` name (or file)?"""
        if not runtime_name:
            return False
        if wanted:
            if runtime_name == wanted:
                return True
            # `python app.py` runs as __main__; `python -m pkg.app` as __main__ too
            if runtime_name == "__main__" or wanted == "__main__":
                return bool(path) and path in self.module_files.get(runtime_name, ())
            return False
        return bool(path) and path in self.module_files.get(runtime_name, ())

    def block_dim_variants(self) -> dict[tuple, dict[Any, list[dict]]]:
        """(pid, module, device) -> {block_dim: [loads]} for modules loaded at several block_dims."""
        out: dict[tuple, dict[Any, list[dict]]] = {}
        for e in self.builds():
            out.setdefault((e.get("pid"), e.get("module"), e.get("device")), {}).setdefault(
                e.get("block_dim"), []
            ).append(e)
        return {k: v for k, v in out.items() if len(v) > 1}

    def topology(self) -> dict[LaunchShape, LaunchCount]:
        """The launch topology: each distinct launch shape with how often it ran (None when the program
        ended before the recorder could count) and how often a ``wp.Tape`` recorded it."""
        out: dict[LaunchShape, LaunchCount] = {}
        for ev in self.topology_events:
            shape = LaunchShape.of(ev)
            count = self.topology_counts.get((ev.get("pid"), ev.get("index")))
            have = out.get(shape)
            launches = None if count is None else count[0]
            taped = None if count is None else count[1]
            if have is not None:
                launches = None if have.launches is None or launches is None else have.launches + launches
                taped = None if have.taped is None or taped is None else have.taped + taped
            site = have.site if have is not None else ev.get("_site")
            out[shape] = LaunchCount(launches, taped, site)
        return out

    def lost_options(self) -> list[dict]:
        """Loads whose snapshot options differ from the wp.config value the program had set.

        Each item: {"load", "option", "built", "config", "assignment" (the config event), "module_event"}.
        Counted only when the module kept the value it was created with (nobody set it on the module)
        and a user assignment to wp.config set the value the module missed after the module existed.
        """
        out = []
        set_keys: dict[tuple, set] = {}
        for so in self.set_options:
            set_keys.setdefault((so.get("pid"), so.get("mid")), set()).update((so.get("options") or {}).keys())
        created = {(m.get("pid"), m.get("mid")): m for m in self.modules}
        snapshot = self.snapshot_options
        user_cfg = [c for c in self.configs if not c.get("internal") and c.get("name") in snapshot]
        for ld in self.builds():
            if is_warp_module(ld.get("module")):
                continue
            opts, cfg = ld.get("options") or {}, ld.get("config") or {}
            mev = created.get((ld.get("pid"), ld.get("mid")))
            for key in snapshot:
                if key not in opts or key not in cfg or opts[key] == cfg[key]:
                    continue
                if key in set_keys.get((ld.get("pid"), ld.get("mid")), ()):
                    continue
                if mev is not None and (mev.get("options") or {}).get(key) != opts[key]:
                    continue  # changed on the module after creation (module_options=, .options[...])
                assign = None
                for c in user_cfg:
                    if (
                        c.get("pid") == ld.get("pid")
                        and c.get("name") == key
                        and c.get("value") == cfg[key]
                        and c.get("seq", 0) < ld.get("seq", 0)
                        and (mev is None or c.get("seq", 0) > mev.get("seq", 0))
                    ):
                        assign = c  # the last such assignment before the load
                if assign is None:
                    continue
                out.append(
                    {
                        "load": ld,
                        "option": key,
                        "built": opts[key],
                        "config": cfg[key],
                        "assignment": assign,
                        "module_event": mev,
                    }
                )
        return out

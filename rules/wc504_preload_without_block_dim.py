from __future__ import annotations

from collections.abc import Iterator

from warplint.diagnostic import Fix, Related
from warplint.edits import add_argument, replace
from warplint.index import Launch, Project
from warplint.model import Call, FileModel, Value
from warplint.rule import Report, Rule
from warplint.semantic.devices import Device
from warplint.semantic.values import WarpModule

_PRELOADS = ("force_load", "load_module")
_MAX_SITES = 3


class PreloadWithoutBlockDim(Rule):
    """A preload without `block_dim` builds a variant of the module that no launch uses.

    ## Why
    On CUDA a module compiles once per `block_dim`. `wp.force_load`/`wp.load_module`
    without `block_dim` builds the variant at the module's `"block_dim"` option (256
    unless `wp.set_module_options({"block_dim": N})` changed it) when nothing is loaded
    yet. If the module's launches use `block_dim=128`, the preload builds a variant no
    launch uses, and the first launch builds the real one anyway: two full builds where
    one was wanted, and the warm-up did not warm anything up.

    ## Fix
    Pass the block size the launches use: `wp.load_module("app.kernels",
    device="cuda:0", block_dim=128)` (one preload per block size if there are several).

    Automatic fix (safe): when the preload names one module and all its launches use
    one block size, `--fix` passes `block_dim=` with it (or replaces `block_dim=None`).
    With several block sizes, or several modules in one `force_load`, it is left to you.

    ## Limits
    Only modules the preload names statically are checked (`load_module("name")`,
    `load_module(pkg.mod)`, `load_module()` for the file's own module,
    `force_load(modules=[wp.get_module("name"), kernel.module])`; module names and
    modules in the list are followed through names and constants, and so is the
    `module=` of `set_module_options({"block_dim": N})`). Launches are those the
    project index resolves, with a `block_dim` that resolves to a literal; CPU-only
    preloads and launches are left out (CPU ignores `block_dim`): the devices are the
    semantic layer's (`device=` followed like any value, `wp.ScopedDevice`, `wp.set_device`,
    the callers' default device; a launch or `load_module` with no device may run on CUDA). Reported only when
    **no** launch of the module uses the preloaded variant: when some do, the preload
    saves their build and the others are WC303's concern.
    """

    code = "WC504"
    name = "preload-without-block-dim"
    mechanism = "CS-13"
    summary = "A preload without `block_dim` builds a variant the module's launches never use."
    confidence = "high"

    invalid = (
        "import warp as wp\n\n@wp.kernel\ndef k(x: wp.array(dtype=float)):\n    pass\n\n"
        "def run(x):\n    wp.load_module(device='cuda:0')\n    wp.launch(k, dim=8, inputs=[x], block_dim=128)\n",
    )
    valid = (
        "import warp as wp\n\n@wp.kernel\ndef k(x: wp.array(dtype=float)):\n    pass\n\n"
        "def run(x):\n    wp.load_module(device='cuda:0', block_dim=128)\n"
        "    wp.launch(k, dim=8, inputs=[x], block_dim=128)\n",
        "import warp as wp\n\n@wp.kernel\ndef k(x: wp.array(dtype=float)):\n    pass\n\n"
        "def run(x):\n    wp.load_module(device='cuda:0')\n    wp.launch(k, dim=8, inputs=[x])\n",
    )

    def _index(self, project: Project) -> tuple[dict[str, list[tuple[Launch, int]]], dict[str, int | None]]:
        """Launch block sizes per module (on any device: where a launch can run is asked only for the modules a
        preload builds), and modules whose "block_dim" option is set (None: not a literal); kept in the project's
        memo, so that it dies with the project (a rule outlives every index it checks)."""
        return project.cached((self.code, "block sizes and block_dim options"), lambda: self._computed_index(project))

    def _computed_index(self, project: Project
                        ) -> tuple[dict[str, list[tuple[Launch, int]]], dict[str, int | None]]:
        launches: dict[str, list[tuple[Launch, int]]] = {}
        options: dict[str, int | None] = {}
        for f in project.files:
            for launch in project.launches(f):
                resolved = project.launch_block_dim(launch)
                if resolved is None:
                    continue
                launches.setdefault(launch.module, []).append((launch, resolved))
            for call in project.warp_calls(f, "set_module_options"):
                opts = call.bound("options")
                if opts is None or opts.kind != "dict":
                    continue
                for key, value in opts.items:
                    if key.kind == "const" and key.const == "block_dim":
                        target = self._option_target(project, f, call.bound("module"), call.ctx.scope)
                        found, block_dim = project.constant(f, value, call.ctx.scope)
                        if target is not None:
                            first = target not in options
                            options[target] = block_dim if found and isinstance(block_dim, int) and first else None
        for entries in launches.values():
            entries.sort(key=lambda e: project.place(e[0].file, e[0].call.span))
        return launches, options

    @staticmethod
    def _option_target(project: Project, file: FileModel, value: Value | None, scope: str) -> str | None:
        """The one Warp module ``set_module_options(..., module=)`` changes (None/absent: the file's own)."""
        if value is None or project.constant(file, value, scope) == (True, None):
            return file.module
        names, complete = project.module_names(file, value, scope)
        return project.canonical_module(next(iter(names))) if complete and len(names) == 1 else None

    def _preloaded(self, project: Project, file: FileModel, call: Call, short: str) -> list[str]:
        if short == "load_module":
            return project.modules_loaded_by(file, call)
        modules = call.bound("modules")
        if modules is None or modules.kind != "seq":
            return []
        names = []
        for item in modules.items:
            if item.kind == "attr" and item.ref and item.ref.endswith(".module"):
                # `kernel.module`: the Warp module that kernel joined
                kernel_ref = Value("name", text=item.text.rpartition(".")[0], ref=item.ref[: -len(".module")])
                found = project.find_kernel(file, call.ctx.scope, kernel_ref)
                if found is not None:
                    module = project.kernel_module(*found)
                    if module and module != "unique":
                        names.append(module)
            else:  # wp.get_module("name"), or a name bound to one
                values = project.values(file, item, call.ctx.scope)
                if values.known and all(isinstance(v, WarpModule) for v in values):
                    names += [project.canonical_module(v.name) for v in values if isinstance(v, WarpModule)]
        return [n for n in names if isinstance(n, str)]

    @staticmethod
    def _fix(call: Call, given: Value | None, used: list[int]) -> Fix | None:
        """`block_dim=N` when every launch of the one module preloaded uses N (safe: the preload builds
        the variant those launches load, and nothing else changes)."""
        if len(used) != 1:
            return None
        edit = replace(given.span, str(used[0])) if given is not None else add_argument(call, f"block_dim={used[0]}")
        return Fix(f"Preload the launched variant: block_dim={used[0]}", (edit,)) if edit is not None else None

    def check(self, file: FileModel, project: Project) -> Iterator[Report]:
        for call in project.warp_calls(file, *_PRELOADS):
            if call.has_star_args:
                continue
            short = call.callee.rpartition(".")[2]
            block_dim = call.bound("block_dim")
            if block_dim is not None and not (block_dim.kind == "const" and block_dim.const is None):
                continue
            if Device.CUDA not in project.call_devices(file, call, absent_means_all=short == "force_load"):
                continue  # a CPU-only preload: the CPU ignores block_dim
            preloaded = self._preloaded(project, file, call, short)
            launches, options = self._index(project) if preloaded else ({}, {})
            for module in preloaded:
                missed = [(launch, v) for launch, v in launches.get(module, []) if project.can_run_on_cuda(launch)]
                if not missed:
                    continue
                if module in options and options[module] is None:
                    continue  # the module's block_dim option is not a literal: the preloaded variant is unknown
                variant = options.get(module, project.warp.default_block_dim)  # Module.options["block_dim"]
                # Only a preload whose variant no launch uses is waste; a partial preload still saves a build.
                if any(v == variant for _, v in missed):
                    continue
                values = sorted({v for _, v in missed})
                related = tuple(Related(launch.file.path, launch.call.span, f"launched at block_dim {v}")
                                for launch, v in missed[:_MAX_SITES])
                yield self.report(
                    call.span,
                    f"`{short}()` builds module `{module}` at block_dim {variant}, but it is launched at "
                    f"{', '.join(map(str, values))}; pass `block_dim=`",
                    related=(Related(file.path, call.span, f"it builds block_dim {variant}: on CUDA the first launch "
                                                           "at another block_dim builds the module again"), *related),
                    fix=self._fix(call, block_dim, values) if len(preloaded) == 1 else None,
                    module=module,
                    block_dims=[variant, *values],
                    function=call.ctx.scope,
                )

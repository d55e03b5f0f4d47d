from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

from warplint.diagnostic import Related
from warplint.index import Launch, Project
from warplint.model import FileModel
from warplint.rule import Report, Rule

_MAX_SITES = 4


class ModuleMultipleBlockDims(Rule):
    """Kernels of one Warp module are launched with different `block_dim` values.

    ## Why
    On CUDA, `block_dim` is part of a module's identity: every distinct value a
    module is launched with compiles the **whole** module again, every kernel in it,
    including those never launched at that size. A module of twenty kernels where one
    kernel runs at `block_dim=64` and the rest at the default 256 builds twenty kernels
    twice. A launch without `block_dim` uses 256 on CUDA (the module's `"block_dim"`
    option is never read by `wp.launch`).

    Block sizes are resolved across files: literals, module-level constants (also
    imported ones), locals assigned one literal, `wp.constant(...)`.

    ## Fix
    Give the kernels that need a different block size their own module
    (`@wp.kernel(module="unique")` or a named module holding only them), or launch the
    whole module at one `block_dim`.

    ## Limits
    One finding per module, at the first launch (by path and line) whose value differs
    from the most common one; the message lists every value and up to four launch
    sites. Launches whose `block_dim` cannot be resolved (a function parameter, a
    computed value) and launches on `device="cpu"` are left out. A module holding a
    single kernel is not reported: the extra build is that kernel's own cost, not
    the module's. `launch_tiled` requires `block_dim`, so it is never defaulted.
    """

    code = "WC303"
    name = "module-multiple-block-dims"
    mechanism = "CS-5"
    summary = "One Warp module is launched at several `block_dim`s: the whole module compiles once per value on CUDA."
    confidence = "high"

    invalid = (
        "import warp as wp\n\n@wp.kernel\ndef a(x: wp.array(dtype=float)):\n    pass\n\n"
        "@wp.kernel\ndef b(x: wp.array(dtype=float)):\n    pass\n\n"
        "def step(x):\n    wp.launch(a, dim=8, inputs=[x])\n    wp.launch(b, dim=8, inputs=[x], block_dim=64)\n",
        "# file: app/run.py\nimport warp as wp\nfrom app.kernels import a, b\nfrom app.sizes import SMALL\n"
        "def step(x):\n    wp.launch(a, dim=8, inputs=[x], block_dim=128)\n"
        "    wp.launch(b, dim=8, inputs=[x], block_dim=SMALL)\n"
        "# file: app/__init__.py\n\n"
        "# file: app/sizes.py\nSMALL = 32\n"
        "# file: app/kernels.py\nimport warp as wp\n@wp.kernel\ndef a(x: wp.array(dtype=float)):\n    pass\n"
        "@wp.kernel\ndef b(x: wp.array(dtype=float)):\n    pass\n",
    )
    valid = (
        "import warp as wp\n\n@wp.kernel\ndef a(x: wp.array(dtype=float)):\n    pass\n\n"
        '@wp.kernel(module="unique")\ndef b(x: wp.array(dtype=float)):\n    pass\n\n'
        "def step(x):\n    wp.launch(a, dim=8, inputs=[x])\n    wp.launch(b, dim=8, inputs=[x], block_dim=64)\n",
        "import warp as wp\nBLOCK = 256\n\n@wp.kernel\ndef a(x: wp.array(dtype=float)):\n    pass\n\n"
        "@wp.kernel\ndef b(x: wp.array(dtype=float)):\n    pass\n\n"
        "def step(x):\n    wp.launch(a, dim=8, inputs=[x])\n    wp.launch(b, dim=8, inputs=[x], block_dim=BLOCK)\n",
    )

    def _launches_by_module(self, project: Project) -> dict[str, list[tuple[Launch, int]]]:
        return project.cached((self.code, "launches"), lambda: self._build(project))

    @staticmethod
    def _build(project: Project) -> dict[str, list[tuple[Launch, int]]]:
        by_module: dict[str, list[tuple[Launch, int]]] = {}
        for f in project.files:
            for launch in project.launches(f):
                if launch.module.startswith("unique:") or launch.call.has_star_args:
                    continue
                if project.launch_on_cpu(launch):
                    continue
                if launch.block_dim is None and launch.call.callee.endswith("launch_tiled"):
                    continue  # launch_tiled picks its block size from the tiles
                value = project.launch_block_dim(launch)
                if value is None:
                    continue
                by_module.setdefault(launch.module, []).append((launch, value))
        for entries in by_module.values():
            entries.sort(key=lambda e: (e[0].file.path, e[0].call.span.line, e[0].call.span.col))
        return by_module

    def check(self, file: FileModel, project: Project) -> Iterator[Report]:
        for module, entries in sorted(self._launches_by_module(project).items()):
            values = Counter(v for _, v in entries)
            if len(values) < 2 or len(project.kernels_of_module(module)) < 2:
                continue
            # The majority value is "the module's" block size; ties go to the first launch's.
            first_value = entries[0][1]
            majority = max(values, key=lambda v: (values[v], v == first_value))
            site_launch = next(launch for launch, v in entries if v != majority)
            if site_launch.file is not file:
                continue
            shown = ", ".join(str(v) for v in sorted(values))
            # One site per value first, so every value shown has a place to look at.
            firsts = [next(e for e in entries if e[1] == v) for v in sorted(values)]
            shown_sites = (firsts + [e for e in entries if e not in firsts])[:_MAX_SITES]
            shown_sites.sort(key=entries.index)
            related = tuple(
                Related(launch.file.path, launch.call.span, f"{launch.kernel.name} launched at block_dim {v}")
                for launch, v in shown_sites
            )
            more = f" ({len(entries)} launches)" if len(entries) > _MAX_SITES else ""
            yield self.report(
                site_launch.call.span,
                f"Warp module '{module}' is launched at block_dim {shown}{more}: on CUDA the whole module "
                "compiles once per value; move the kernels that need another block size into their own module or "
                "launch the module at one block_dim.",
                related=related,
                module=module,
                kernel=site_launch.kernel.name,
                block_dims=sorted(values),
                function=site_launch.call.ctx.scope,
            )

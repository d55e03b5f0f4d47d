from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from warplint.diagnostic import Related
from warplint.index import Project
from warplint.model import FileModel
from warplint.rule import Report, Rule
from warplint.semantic.events import OptionChange, OptionForm

# Values that leave a fresh module's hash as it was (warp-facts §3).
_DEFAULTS: dict[str, Any] = {"fast_math": False, "fuse_fp": True, "block_dim": 256, "strip_hash": False,
                             "enable_backward": True, "lineinfo": False}


_HOW = {
    OptionForm.SET_MODULE_OPTIONS: "set_module_options()",
    OptionForm.ITEM: "an options[...] assignment",
    OptionForm.UPDATE: "options.update()",
}


class ModuleOptionsAfterLoad(Rule):
    """Module options change after the module was launched or loaded.

    ## Why
    A Warp module's options are part of its identity (hash). Once it has loaded,
    `wp.set_module_options(...)`, `wp.get_module(m).options[k] = v` or
    `.options.update(...)` with a different value makes the next launch of **any**
    kernel of that module build the whole module again (a second code generation
    and native compile, seconds per module; minutes with MathDx tile ops). Direct
    `options[...]` mutation is worse: the rebuild is deferred to some unrelated later
    event.

    The order is followed within a function, at module scope, and through helper
    calls in other files: `launch_all()` then `configure()` where `configure()`
    sets the options of the launched module is reported at the `configure()` call.

    ## Fix
    Set module options before the first launch or load of the module: at module
    scope next to the kernels, or at the start of setup. For per-variant options use
    `@wp.kernel(module="unique", module_options={...})`.

    ## Limits
    Re-setting the values set before (or the module defaults) is not reported: the
    hash does not move. Nor is restoring options in a `finally:` block (a deliberate
    set-launch-restore around one step, as Warp's own tests do). Options applied in a loop that also launches are not
    reported. The target module must be statically known (`module=` string, Python
    module object, `__name__`, or the file the call is written in).
    """

    code = "WC102"
    name = "module-options-after-load"
    mechanism = "CS-3"
    summary = "Module options change after the module was launched, so the whole module builds again."
    confidence = "high"

    invalid = (
        "import warp as wp\n"
        "@wp.kernel\n"
        "def k(a: wp.array(dtype=float)):\n"
        "    a[0] = 1.0\n"
        "def run(a):\n"
        "    wp.launch(k, dim=1, inputs=[a])\n"
        "    wp.set_module_options({'max_unroll': 4})\n"
        "    wp.launch(k, dim=1, inputs=[a])\n",
    )
    valid = (
        "import warp as wp\n"
        "wp.set_module_options({'max_unroll': 4})\n"
        "@wp.kernel\n"
        "def k(a: wp.array(dtype=float)):\n"
        "    a[0] = 1.0\n"
        "def run(a):\n"
        "    wp.launch(k, dim=1, inputs=[a])\n",
    )

    def check(self, file: FileModel, project: Project) -> Iterator[Report]:
        # a unique kernel's own module_options= is part of its creation, not a change of a loaded module
        direct = [c for c in project.option_changes(file) if c.form is not OptionForm.KERNEL]
        scopes = {""} | set(file.functions)
        for scope in sorted(scopes):
            # Option-changing statements of this scope: direct, or calls into helpers.
            changes: list[tuple[int, OptionChange, Any]] = [
                (c.ctx.order, c, None) for c in direct if c.ctx.scope == scope
            ]
            for call in project.calls_in(file, scope):
                if not project.is_warp_api(call.callee):
                    for c in project.option_changes_by(call.callee):
                        changes.append((call.ctx.order, c, call))
            if not changes:
                continue
            timeline = project.launch_timeline(file, scope)
            if not timeline:
                continue
            changes.sort(key=lambda item: item[0])
            yield from self._ordered(project, file, timeline, changes)

    def _ordered(self, project: Project, file: FileModel, timeline, changes) -> Iterator[Report]:
        seen_values: dict[str, dict[str, Any]] = {}
        reported: set[int] = set()
        for order, change, via in changes:
            if change.module is None or change.ctx.in_finally or (via is not None and via.ctx.in_finally):
                continue  # restoring options in `finally:` after a temporary change is deliberate
            module = project.canonical_module(change.module)
            earlier = [(o, m, call) for o, m, call in timeline if call.ctx.runs_before(order) and m in (module, "*")]
            previous = seen_values.setdefault(module, {})
            harmless = change.values is not None and all(
                previous.get(k, _DEFAULTS.get(k, object())) == v for k, v in change.values.items()
            )
            if change.values is not None:
                previous.update(change.values)
            if not earlier or harmless:
                continue
            _, _, launch_call = earlier[0]
            span = via.span if via is not None else change.span
            if id(span) in reported:
                continue
            reported.add(id(span))
            what = _HOW[change.form]
            related = [Related(file.path, launch_call.span, f"module {module} is launched or loaded here first")]
            if via is not None:
                what = f"{via.callee.rpartition('.')[2]}() ({_HOW[change.form]} inside)"
                related.append(Related(change.path, change.span, f"{_HOW[change.form]} changes the options here"))
            yield self.report(
                span,
                f"{what} changes the options of Warp module {module}, already launched or loaded: its next "
                "launch builds the whole module again. Set the options before the first launch.",
                related=tuple(related),
                module=module, option=",".join(sorted(change.values or {})),
            )


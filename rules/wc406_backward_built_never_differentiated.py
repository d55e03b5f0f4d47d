from __future__ import annotations

from collections.abc import Iterator

from warplint.diagnostic import Related
from warplint.index import Project
from warplint.model import FileModel
from warplint.rule import Report, Rule

_SHOWN_LAUNCHES = 3  # forward-only launches named as evidence (the first ones, in file order)
_SHOWN_KERNELS = 8  # the module's other kernels that build an adjoint, named as related locations


class BackwardBuiltNeverDifferentiated(Rule):
    """A module builds backward (adjoint) code for its kernels, and no differentiation in the project reaches them.

    ## Why
    Warp generates and compiles the adjoint of every kernel of a module whose `enable_backward`
    option is on: the default (`wp.config.enable_backward` is True when the module is created), or
    forced with `wp.set_module_options({"enable_backward": True})`, a unique kernel's
    `module_options=`, or `wp.config.enable_backward = True`. The adjoint is only run by a
    `wp.Tape` (`tape.backward()` replays the recorded launches' adjoints), a launch with
    `adjoint=True`, or `warp.autograd` (gradcheck, jacobian). When none of those reaches the
    module's kernels, the backward half of every cold build of the module is never used: for an
    ordinary kernel it is generated C++/CUDA that roughly doubles the kernel's code and adds to its
    compile time (no extra link); MathDx tile kernels, where it also links adjoint LTOs, are WC404.

    ## Fix
    In the file that defines the module's kernels (before its first launch):
    `wp.set_module_options({"enable_backward": False})`; for a `module="unique"` kernel,
    `module_options={"enable_backward": False}`; or drop the option that forces it on. In an
    application, `wp.config.enable_backward = False` right after `import warp` and **before**
    importing the libraries turns it off for every module created afterwards.

    ## Limits
    A module is reported when the project launches its kernels, some kernel of it gets adjoint code
    (it follows a module option that is on, or its own `enable_backward=True` overrides one that is
    off, as Warp does when it builds the kernel; its own False never does), and no differentiation
    reaches any kernel of the module. Reach is decided by the semantic layer, erring towards
    "reached": an adjoint launch reaches the kernels it can launch, and so does `wp.jax_kernel(k,
    enable_backward=True)` (JAX's autodiff launches `k`'s adjoint); a `wp.Tape()` (or a method of
    a tape) reaches every kernel launched from its file and from the callers of its function
    (unless the function keeps the tape: never returns, passes, stores or closes over it); a
    differentiation whose code calls something the layer cannot follow (a callback, a method of
    an object of unknown class, an adjoint launch of an unknown kernel) reaches every module its
    program imports and every file that defines a subclass of one of its program's classes (an
    application's objective handed to a library's optimizer). A launch whose arrays are made to
    carry gradients (`requires_grad=` anything but False, where the launching code or its object
    makes them, or wherever the launched array comes from) counts as differentiated too: a training
    library's layers are taped by their users. So a test file that differentiates a library
    silences the library's modules.
    Not reported: modules nothing in the project launches (a library linted without its users,
    who may differentiate), modules whose name cannot be told, modules whose options turn backward
    off, and modules of any program that runs a `wp.config.enable_backward = False` (every file
    imported, transitively, by a file that imports the assignment's file, a test file's program
    holding the `conftest.py` files pytest imports before it; in any scope, before or after the
    import: set too late, it is WC401's finding).

    A forward-only program that imports a library another program of the project differentiates
    is not reported: both programs build the same module identity (backward on) and share one
    kernel cache entry, while `enable_backward = False` in the forward-only program would make it
    build a second identity of each library module.

    Measured. The runtime oracle labels a module whose build generated adjoint code that no run of
    the project differentiated (`benchmarks/oracle/truth.py`, `adjoint-unused`). Development seed
    3972610892 (200 programs, CPU, 2026-12-06): 245 of 247 such modules found, 239 of 239 findings
    right. Held-out: fresh seed 3413449720 (drawn 2026-12-06 05:04 UTC and scored once at 475842b,
    after the last engine commit): 262 of 264 found, 247 of 247 findings right. Hand-labelled
    corpora (dev split: newton, mujoco-warp, warp-lang, physicsnemo; 365 findings when sampled, 357
    at 34d6d25; a random sample of 36 read one by one, 2026-12-06): 36 of 36 defects (kernels of
    tests, examples and library modules that no Tape, adjoint launch or autograd call reaches,
    among them mujoco-warp's
    `module="unique"` kernels in files whose `set_module_options({"enable_backward": False})` a
    unique module does not inherit); 34 of the 36 are still found once launches with arrays made
    to carry gradients count as differentiated (two whose `requires_grad` follows a model's flag
    are not). The blind split's two CS-10 labels are found; its training library (warp-nn) keeps
    one finding of eleven. On by default since 2026-12-06 (opt-in before, while the oracle scored
    a built-and-unused adjoint as a fact rather than a defect). Left out by design: a library
    linted without its users, whose users may differentiate it (lint it with its tests or
    examples). A second random sample, of 25 findings still unjudged (2026-12-06): 24 defects; the
    one harmless, Warp's JAX interop tests, whose kernels `wp.jax_kernel(k, enable_backward=True)`
    hands to `jax.grad`, is no longer reported (JAX's autodiff launches the adjoint of a kernel
    wrapped so, also through a name bound to `wp.jax_kernel`).
    """

    code = "WC406"
    name = "backward-built-never-differentiated"
    mechanism = "CS-10"
    summary = "A module builds backward code for its kernels, and no wp.Tape or adjoint launch in the project uses it."
    confidence = "medium"
    default_enabled = True

    invalid = (
        "import warp as wp\n\n@wp.kernel\ndef scale(a: wp.array(dtype=float)):\n    i = wp.tid()\n"
        "    a[i] = 2.0 * a[i]\n\ndef run(a):\n    wp.launch(scale, dim=a.shape, inputs=[a])\n",
        # forced on through a unique kernel's module_options
        "import warp as wp\n\n@wp.kernel(module='unique', module_options={'enable_backward': True})\n"
        "def scale(a: wp.array(dtype=float)):\n    a[wp.tid()] = 0.0\n\n"
        "def run(a):\n    wp.launch(scale, dim=a.shape, inputs=[a])\n",
    )
    valid = (
        # a Tape in the same program reaches the kernel
        "import warp as wp\n\n@wp.kernel\ndef scale(a: wp.array(dtype=float)):\n    i = wp.tid()\n"
        "    a[i] = 2.0 * a[i]\n\ndef step(a):\n    with wp.Tape() as tape:\n"
        "        wp.launch(scale, dim=a.shape, inputs=[a])\n    tape.backward()\n",
        # backward off for the module
        "import warp as wp\nwp.set_module_options({'enable_backward': False})\n\n@wp.kernel\n"
        "def scale(a: wp.array(dtype=float)):\n    a[wp.tid()] = 0.0\n\n"
        "def run(a):\n    wp.launch(scale, dim=a.shape, inputs=[a])\n",
        # nothing here launches it: its users may differentiate it
        "import warp as wp\n\n@wp.kernel\ndef scale(a: wp.array(dtype=float)):\n    a[wp.tid()] = 0.0\n",
    )

    def check_project(self, project: Project) -> Iterator[tuple[FileModel, Report]]:
        for unused in project.unused_backward():
            if unused.backward_lto_ops:
                continue  # MathDx tile kernels: WC404
            related = [Related(f.path, span, f"`enable_backward` set True here ({how})")
                       for f, span, how in unused.forced if span != unused.span]
            others = [(f, k) for f, k in unused.kernels if (f.path, k.span) != (unused.file.path, unused.span)]
            related += [Related(f.path, k.span, f"`{k.name}` builds its adjoint too")
                        for f, k in others[:_SHOWN_KERNELS]]
            related += [Related(f.path, call.span, "a forward-only launch") for f, call in
                        unused.launches[:_SHOWN_LAUNCHES]]
            names = sorted({k.name for _, k in unused.kernels})
            shown = ("this kernel's unique module" if unused.module == "unique" else "this file's module"
                     if unused.module == unused.file.module else f"module `{unused.module}`")
            kernels = ", ".join(f"`{n}`" for n in names[:4]) + (f" and {len(names) - 4} more" if len(names) > 4 else "")
            fix = ("the kernel's `enable_backward=` here to False" if unused.kernel_forces_it
                   else f"`enable_backward` to False in `{unused.forced_here}` here" if unused.forced_here
                   else '`module_options={"enable_backward": False}`' if unused.module == "unique"
                   else '`wp.set_module_options({"enable_backward": False})` in this file')
            subject = "it" if unused.module == "unique" else f"module `{unused.module}`"
            yield unused.file, self.report(
                unused.span,
                f"{shown} builds adjoint code that nothing differentiates; turn `enable_backward` off",
                related=(Related(unused.file.path, unused.span,
                                 f"{subject} builds backward (adjoint) code for {kernels}, but no `wp.Tape`, "
                                 "adjoint launch or `warp.autograd` call in the project reaches them: every cold "
                                 f"build generates and compiles adjoints nobody runs; set {fix}"
                                 + ("" if unused.forced_here else  # an explicit True overrides wp.config
                                    ", or `wp.config.enable_backward = False` at the entry point before importing "
                                    "the library")), *related),
                module=unused.module,
                kernels=names,
                function=unused.scope,
            )

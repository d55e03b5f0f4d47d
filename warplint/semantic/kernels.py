"""Kernels whose making the extractor cannot see alone: completed by data flow over the project.

A file is read alone, so it cannot know that ``@gpu_kernel()`` (a project decorator defined in another file)
makes a kernel, nor what ``wp.kernel(other.f)`` applies ``wp.kernel`` to. The project can: it evaluates the
decorator applied to the function it decorates (``gpu_kernel()(f)``, through helpers, closures and
``fn=None`` switches: the result is a kernel ``wp.kernel(<parameter>, ...)`` makes of what was passed in), and
it follows the argument of ``wp.kernel(f)`` to the function wherever that is defined, whose body, signature and
module (Warp's ``f.__module__``) the kernel takes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from warplint.model import FileModel, Function, Kernel, Value
from warplint.semantic.values import FunctionRef, KernelRef

if TYPE_CHECKING:
    from .bindings import Bindings
    from .evaluator import Evaluator


def add_decorated_kernels(bindings: Bindings, evaluator: Evaluator) -> None:
    """Add a ``derived`` Kernel to each file for every function a kernel-making project decorator
    decorates (replacing those of an earlier project over the same models: idempotent), and complete the
    kernels ``wp.kernel(f)`` makes of a function defined elsewhere. The first step after the tables: from here
    on the models' kernel lists are whole (``Evaluator.kernels_of``)."""
    for file in bindings.files:
        if any(k.derived for k in file.kernels):
            file.kernels = [k for k in file.kernels if not k.derived]
    makers: dict[tuple[int, int], dict[str, Value] | None] = {}
    for file in bindings.files:
        for fn in [*file.redefined, *file.functions.values()]:  # each `def` of a name defined twice decorates
            if fn.is_warp or not fn.decorator_values:
                continue
            for decorator in fn.decorator_values:
                if decorator.kind not in ("name", "attr", "call") or bindings.is_warp_api(decorator.ref):
                    continue
                key = (id(decorator), id(fn))
                if key not in makers:
                    makers[key] = _kernel_options(bindings, evaluator, file, fn, decorator)
                options = makers[key]
                if options is not None:
                    file.kernels.append(Kernel(
                        name=fn.name, function=fn.qualname, span=fn.span, ctx=fn.ctx, form="decorator",
                        options=options, generic=fn.generic, warp_calls=set(fn.warp_calls), derived=True,
                    ))
                    break
    for file in bindings.files:
        for kernel in file.kernels:
            if kernel.target is not None and not kernel.function:
                _complete(bindings, evaluator, file, kernel)
    evaluator.kernels_whole = True


def _complete(bindings: Bindings, evaluator: Evaluator, file: FileModel, kernel: Kernel) -> None:
    """A kernel ``wp.kernel(f)`` makes of a function its file does not define by that name (imported, an
    attribute of a module, a parameter of a helper): the functions ``f`` can be give it their body facts and
    genericity, and their module when they are all of one other file."""
    functions: list[tuple[FileModel, Function]] = []
    kernel.defined_in = None  # until the functions are known, so is the module Warp puts the kernel in
    for value in evaluator.values(file, kernel.target, kernel.ctx.scope):
        found = bindings.function(value.fqname) if isinstance(value, FunctionRef) else None
        if found is None or found[1].class_name is not None:
            return  # something not a project function can be made a kernel here: nothing is known of it
        functions.append(found)
    if not functions:
        return
    kernel.generic = any(fn.generic for _, fn in functions)
    kernel.warp_calls = set().union(*(fn.warp_calls for _, fn in functions))
    modules = {f.module for f, _ in functions}
    if len(modules) == 1:
        kernel.defined_in = "" if file.module in modules else next(iter(modules))
    if len(functions) == 1:
        kernel.name = functions[0][1].name  # Warp's key: the function's own name


def _kernel_options(bindings: Bindings, evaluator: Evaluator, file: FileModel, fn: Function, decorator: Value
                    ) -> dict[str, Value] | None:
    """The ``wp.kernel`` options the decorator applies, when applying it to ``fn`` makes a kernel of ``fn``: the
    decorator called with ``fn`` evaluates to a kernel that ``wp.kernel(<parameter>, ...)`` inside a project
    function makes of what it was passed. Options that are not literals are left unknown."""
    function = Value("name", text=fn.name, ref=fn.name if not fn.ctx.scope else None, local=bool(fn.ctx.scope))
    applied = (Value("call", text=f"{decorator.text}({fn.name})", ref=decorator.ref, args=(function,))
               if decorator.kind in ("name", "attr") else
               Value("call", text=f"{decorator.text}({fn.name})", base=decorator, args=(function,)))
    for value in evaluator.values(file, applied, fn.ctx.scope):
        if not isinstance(value, KernelRef):
            continue
        found = evaluator.kernel(value)
        if found is None:
            continue
        maker_file, made = found
        if made.derived or made.form == "Kernel" or made.target is None or made.function:
            continue  # a kernel of a function defined there, not of the one passed in
        options = dict(made.options)
        if decorator.kind == "call" and _forwards_keywords(bindings, maker_file, made):
            # `wp.kernel(f, **options)` in a decorator factory: the keywords its call passes beyond its own
            # parameters (`@project_kernel(module="sim")`) are the kernel's options
            named = _parameters(bindings, evaluator, file, fn, decorator)
            options.update({k: v for k, v in decorator.kwargs.items() if k not in named and k not in options})
        return {key: option if option.is_const else Value("other", text=option.text)
                for key, option in options.items()}
    return None


def _forwards_keywords(bindings: Bindings, file: FileModel, kernel: Kernel) -> bool:
    """The ``wp.kernel(...)`` call that made ``kernel`` passes ``*args`` / ``**kwargs`` on."""
    return any(call.has_star_args for call in bindings.calls_in(file, kernel.ctx.scope)
               if call.ctx.order == kernel.ctx.order and call.callee == "warp.kernel")


def _parameters(bindings: Bindings, evaluator: Evaluator, file: FileModel, fn: Function, decorator: Value
                ) -> set[str]:
    """The named parameters of the functions a decorator factory's call (``@make(...)``) can call."""
    found: set[str] = set()
    if decorator.base is not None or decorator.ref is None:
        return found
    callee = Value("attr" if "." in decorator.ref else "name", text=decorator.text.partition("(")[0],
                   ref=decorator.ref, local=bool(fn.ctx.scope) and "." not in decorator.ref)
    for value in evaluator.values(file, callee, fn.ctx.scope):
        target = bindings.function(value.fqname) if isinstance(value, FunctionRef) else None
        if target is not None:
            found |= {p.name for p in target[1].params}
    return found

"""Kernels made by project decorators that wrap ``wp.kernel``.

``def gpu_kernel(**kw): return lambda fn: wp.kernel(fn, module="unique", **kw)`` and
``def cuda_kernel(fn): return wp.kernel(fn, module="sim")`` turn every function they decorate
into a Warp kernel, with the options the decorator passes. The extractor sees one file at a
time and cannot know that ``@gpu_kernel()`` (defined in another file) makes a kernel; the
project does, by evaluating the decorator: its value is a function or lambda whose result is
``wp.kernel(<its parameter>, ...)``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from warplint.model import FileModel, Function, Kernel, Value
from warplint.names import is_warp
from warplint.semantic.values import FunctionRef, Lambda

if TYPE_CHECKING:
    from .bindings import Bindings
    from .evaluator import Evaluator


def add_decorated_kernels(bindings: Bindings, evaluator: Evaluator) -> None:
    """Add a ``derived`` Kernel to each file for every function a kernel-making project decorator
    decorates (replacing those of an earlier project over the same models: idempotent). The first step
    after the tables: from here on the models' kernel lists are whole (``Evaluator.kernels_of``)."""
    for file in bindings.files:
        if any(k.derived for k in file.kernels):
            file.kernels = [k for k in file.kernels if not k.derived]
    makers: dict[int, dict[str, Value] | None] = {}
    for file in bindings.files:
        for fn in list(file.functions.values()):
            if fn.is_warp or not fn.decorator_values:
                continue
            for decorator in fn.decorator_values:
                if decorator.kind not in ("name", "attr", "call") or bindings.is_warp_api(decorator.ref):
                    continue
                if id(decorator) not in makers:
                    makers[id(decorator)] = _kernel_options(bindings, evaluator, file, fn, decorator)
                options = makers[id(decorator)]
                if options is not None:
                    file.kernels.append(Kernel(
                        name=fn.name, function=fn.qualname, span=fn.span, ctx=fn.ctx, form="decorator",
                        options=options, derived=True,
                    ))
                    break
    evaluator.kernels_whole = True


def _kernel_options(bindings: Bindings, evaluator: Evaluator, file: FileModel, fn: Function, decorator: Value
                    ) -> dict[str, Value] | None:
    """The ``wp.kernel`` options the decorator applies, when it makes a kernel of what it decorates."""
    for value in evaluator.values(file, decorator, fn.ctx.scope):
        if isinstance(value, FunctionRef):
            found = bindings.function(value.fqname)
            if found is None:
                continue
            _, maker = found
            first = maker.params[0].name if maker.params else None
            for returned in maker.returns:
                options = _wraps_kernel(returned, first)
                if options is not None:
                    return options
        elif isinstance(value, Lambda):
            options = _wraps_kernel(value.body, None)
            if options is not None:
                return options
    return None


def _wraps_kernel(value: Value, parameter: str | None) -> dict[str, Value] | None:
    """``wp.kernel(<parameter>, **options)``: the literal options (others are left unknown)."""
    if value.kind != "call" or not is_warp(value.ref, "kernel") or not value.args:
        return None
    target = value.args[0]
    if target.kind != "name" or (parameter is not None and target.text != parameter):
        return None
    return {key: option if option.is_const else Value("other", text=option.text)
            for key, option in value.kwargs.items()}

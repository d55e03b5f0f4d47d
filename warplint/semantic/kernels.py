"""Kernels whose making the extractor cannot see alone: completed by data flow over the project.

A file is read alone, so it cannot know that ``@gpu_kernel()`` (a project decorator defined in another file)
makes a kernel, nor what ``wp.kernel(other.f)`` applies ``wp.kernel`` to. The project can: it evaluates the
decorator applied to the function it decorates (``gpu_kernel()(f)``, through helpers, closures and
``fn=None`` switches: the result is a kernel ``wp.kernel(<parameter>, ...)`` makes of what was passed in), and
it follows the argument of ``wp.kernel(f)`` to the function wherever that is defined, whose body, signature and
module (Warp's ``f.__module__``) the kernel takes.

A decorator makes a kernel only by returning one that ``wp.kernel(<not a function of its file>)`` made; where
each such kernel can flow is followed first (``_PassedInKernels``), and when none can reach a return no
decorator is evaluated at all.
"""

from __future__ import annotations

import bisect
import functools
import itertools
from collections.abc import Callable
from typing import TYPE_CHECKING

from warplint.model import Assignment, Call, FileModel, Function, Kernel, Value, enclosing_names, stored_without
from warplint.names import is_warp
from warplint.semantic import file_facts
from warplint.semantic.evaluator import FILLING_METHODS, Source, stored_parameter_kernel
from warplint.semantic.reads import ReadsCheck
from warplint.semantic.values import ClassRef, FunctionRef, KernelRef, ValueSet

if TYPE_CHECKING:
    from .bindings import Bindings
    from .evaluator import Evaluator, Site


def add_decorated_kernels(bindings: Bindings, evaluator: Evaluator) -> None:
    """Add a ``derived`` Kernel to each file for every function a kernel-making project decorator
    decorates (replacing those of an earlier project over the same models: idempotent), and complete the
    kernels ``wp.kernel(f)`` makes of a function defined elsewhere. The first step after the tables: from here
    on the models' kernel lists are whole (``Evaluator.kernels_of``)."""
    for file in bindings.files:
        if any(k.derived for k in file.kernels):
            file.kernels = [k for k in file.kernels if not k.derived]
    # a decorator makes a kernel only by returning one `wp.kernel` made of a function passed in: when no such
    # kernel can reach a return, none does, and no decorator needs evaluating (on Warp's tree, ~20 CPU s)
    _add_kernels_of_bound_decorators(bindings, evaluator)
    _add_kernels_stored_by_decorators(bindings, evaluator)
    if _PassedInKernels(bindings, evaluator).can_be_returned():
        _add_kernels_of_decorators(bindings, evaluator)
    for file in bindings.files:
        for kernel in file.kernels:
            if kernel.target is not None and not kernel.function:
                _complete(bindings, evaluator, file, kernel)
    evaluator.kernels_whole = True


def _add_kernels_of_bound_decorators(bindings: Bindings, evaluator: Evaluator) -> None:
    """A ``derived`` Kernel for every function decorated by a name bound to ``wp.kernel`` with options given
    beforehand (``fwd = functools.partial(wp.kernel, enable_backward=False)``, ``fwd = wp.kernel(module="m")``):
    applying it calls ``wp.kernel(f, **options)``. Each file's are a fact kept across an edit while what it read
    holds (reads.py): the project asks it of every decorated function after each edit."""
    _add_kept_decorated_kernels(bindings, evaluator, "kernels of bound decorators", _bound_decorator_options)


DecoratedOptions = tuple[tuple[Function, dict[str, Value]], ...]  # each decorated function with its kernel's options


def _add_kept_decorated_kernels(bindings: Bindings, evaluator: Evaluator, family: str,
                                options_of: Callable[[Evaluator, FileModel], DecoratedOptions]) -> None:
    """A ``derived`` Kernel for each function ``options_of`` finds a decorator makes a kernel of, each file's
    functions a fact kept across an edit (``family``) while what it read holds."""
    # each phase's own check: the kernel lists it reads are still being completed, so an entry found to hold in one
    # phase need not hold once they are whole
    check = ReadsCheck.over(bindings)
    for file in bindings.files:
        if not bindings.file_facts.cached(file, _decorates_outside_warp):
            continue
        made = evaluator.kept(family, file, functools.partial(options_of, evaluator, file), check)
        file.kernels.extend(_decorated_kernel(file, fn, dict(options)) for fn, options in made)


def _decorates_outside_warp(file: FileModel) -> bool:
    """Some function of ``file`` that is not Warp's (``@wp.kernel``, ``@wp.func``) has a decorator."""
    return any(fn.decorator_values and not fn.is_warp for fn in [*file.redefined, *file.functions.values()])


def _bound_decorator_options(evaluator: Evaluator, file: FileModel) -> DecoratedOptions:
    """Each function of ``file`` a name bound to ``wp.kernel`` with options decorates, with those options."""
    bindings = evaluator.bindings
    found: list[tuple[Function, dict[str, Value]]] = []
    for fn in [*file.redefined, *file.functions.values()]:
        if fn.is_warp:
            continue
        for decorator in fn.decorator_values:
            if bindings.is_warp_api(decorator.ref) or _named_outside(bindings, decorator, fn):
                continue
            if decorator.kind in ("name", "attr"):
                options = kernel_decorator_options(evaluator, file, decorator, fn.ctx.scope)
            elif decorator.kind == "call" and decorator.ref and not decorator.args and "**" not in decorator.kwargs:
                # `@fwd_kernel(module="m")`: the bound options, with the call's keywords laid over them
                callee = Value("attr" if "." in decorator.text.partition("(")[0] else "name",
                               text=decorator.text.partition("(")[0], ref=decorator.ref,
                               local=bool(fn.ctx.scope) and "." not in decorator.ref)
                evaluator.keep(callee)  # (its answers are keyed by its id)
                bound = kernel_decorator_options(evaluator, file, callee, fn.ctx.scope)
                # the call's own keywords are written where the def is: evaluated there, as written
                options = None if bound is None else {**bound, **_written_here(decorator.kwargs)}
            else:
                continue
            if options is not None:
                found.append((fn, options))
                break
    return tuple(found)


def _named_outside(bindings: Bindings, decorator: Value, fn: Function) -> bool:
    """``decorator`` (or the callee of a decorator call) is a name of no project module and no local of the
    function it is written in (``staticmethod``, ``pytest.fixture``, ``functools.cache``): no project code binds
    it, so evaluating it finds no ``wp.kernel`` it applies."""
    ref = decorator.ref
    if ref is None or (decorator.local if decorator.kind != "call" else bool(fn.ctx.scope) and "." not in ref):
        return False
    return bindings.owner_of(ref) is None and bindings.owner_of(bindings.definition(ref)) is None


def _add_kernels_stored_by_decorators(bindings: Bindings, evaluator: Evaluator) -> None:
    """A ``derived`` Kernel for every function a decorator stores a kernel of into a module-level container
    (``KERNELS[name] = wp.kernel(f, **options)`` in the function a decorator factory returns, which returns ``f``
    itself): Python applies a decorator when the ``def`` runs (at import for a module-level one), so from then
    on the container's item under that call's key is a kernel of the decorated function, in its module, with the
    options the call passed. The decorated name stays the function."""
    stores: dict[str, list[tuple[FileModel, Function, Assignment, str]]] = {}
    for file in bindings.files:
        if not any(k.target is not None and k.ctx.scope for k in file.kernels):
            continue  # no `wp.kernel(f)` in a function: reading every file's item writes unpickles their values
        for written, assignment in bindings.file_facts.cached(file, file_facts.assignment_tables).items:
            if stored_parameter_kernel(file, assignment) is not None:
                maker = bindings.fqname(file, assignment.ctx.scope)
                stores.setdefault(maker, []).append((file, file.functions[assignment.ctx.scope], assignment,
                                                     bindings.canonical_ref(written)))
    if not stores:
        return
    for file in bindings.files:
        for fn in [*file.redefined, *file.functions.values()]:
            if fn.is_warp or not fn.decorator_values:
                continue
            for decorator in fn.decorator_values:
                if decorator.kind not in ("name", "attr", "call") or bindings.is_warp_api(decorator.ref):
                    continue
                for maker, site, closure in _applications(bindings, evaluator, file, fn, decorator, stores):
                    for store in stores[maker]:
                        kernel = _stored_kernel(bindings, evaluator, file, fn, store, site, closure)
                        if kernel is not None:
                            file.kernels.append(kernel)


def _applications(bindings: Bindings, evaluator: Evaluator, file: FileModel, fn: Function, decorator: Value,
                  stores: dict[str, list[tuple[FileModel, Function, Assignment, str]]]
                  ) -> list[tuple[str, Site, Site | None]]:
    """The functions in ``stores`` that applying ``decorator`` to ``fn`` calls, each with the site of that call
    (its parameter bound to ``fn``) and, when the decorator is a call of the function that defines it (a
    decorator factory's inner function), the site of that call: the inner function reads its parameters."""
    function = Value("name", text=fn.name, ref=fn.name if not fn.ctx.scope else None, local=bool(fn.ctx.scope))
    applied = (Value("call", text=f"{decorator.text}({fn.name})", ref=decorator.ref, args=(function,))
               if decorator.kind in ("name", "attr") else
               Value("call", text=f"{decorator.text}({fn.name})", base=decorator, args=(function,)))
    evaluator.keep(applied)
    found: list[tuple[str, Site, Site | None]] = []
    for callee in evaluator.values(file, decorator, fn.ctx.scope):
        maker = bindings.canonical_function(callee.fqname) if isinstance(callee, FunctionRef) else ""
        if maker not in stores:
            continue
        site = evaluator.site(file, fn.ctx.scope, applied, maker, None)
        if evaluator.bind(stores[maker][0][1], _first_parameter(stores[maker][0][1]), site) is not function:
            continue  # the decorated function is not what the call passes first
        closure = None
        factory = _factory_called(decorator)
        if factory is not None:
            for outer in evaluator.values(file, factory, fn.ctx.scope):
                outer_fq = bindings.canonical_function(outer.fqname) if isinstance(outer, FunctionRef) else ""
                if outer_fq and maker.startswith(outer_fq + ".") and "." not in maker[len(outer_fq) + 1:]:
                    closure = evaluator.site(file, fn.ctx.scope, decorator, outer_fq, None)
        found.append((maker, site, closure))
    return found


def _first_parameter(fn: Function) -> str:
    return next((p.name for p in fn.params if not p.star), "")


def _factory_called(decorator: Value) -> Value | None:
    """``make`` of a decorator written as the call ``@make(...)``: what Python calls first, whose result it
    applies."""
    if decorator.kind != "call":
        return None
    if decorator.ref:
        return Value("attr" if "." in decorator.ref else "name", text=decorator.text.partition("(")[0],
                     ref=decorator.ref)
    return decorator.base


def _stored_kernel(bindings: Bindings, evaluator: Evaluator, file: FileModel, fn: Function,
                   store: tuple[FileModel, Function, Assignment, str], site: Site, closure: Site | None
                   ) -> Kernel | None:
    """The kernel one decorated ``def`` stores through ``store``: of ``fn`` when the parameter the store makes
    the kernel of is the one the decorator's call binds to ``fn``; its key and options as that call (and the
    decorator factory's call around it) gives them."""
    maker_file, maker, assignment, container = store
    parameter = stored_parameter_kernel(maker_file, assignment)
    if parameter != _first_parameter(maker):
        return None
    key = _closure_value(evaluator, maker_file, maker, assignment.target.key, site, closure)
    known, literal = key.single_constant() if key is not None else (False, None)
    made = assignment.value if assignment.value.ref else assignment.value.base
    assert made is not None
    options = _literal_options(made.kwargs)
    if any(call.has_star_args for call in bindings.calls_in(maker_file, maker.qualname)
           if call.ctx.order == assignment.ctx.order and is_warp(call.callee, "kernel", "Kernel")):
        forwarded = _forwarded_keywords(evaluator, maker_file, maker, closure)
        if forwarded is None:
            options.setdefault("module", Value("other", text="**"))  # options not known: nor the module
        else:
            options.update({k: v for k, v in _literal_options(forwarded).items() if k not in options})
    kernel = _decorated_kernel(file, fn, options)
    kernel.form = "call"  # `wp.kernel(f)` of the function: its name stays the function
    kernel.stored_in = container
    kernel.stored_key = (Value("const", text=repr(literal), const=literal) if known
                         else Value("other", text=assignment.target.key.text if assignment.target.key else "?"))
    return kernel


def _forwarded_keywords(evaluator: Evaluator, file: FileModel, maker: Function, closure: Site | None
                        ) -> dict[str, Value] | None:
    """The keywords ``wp.kernel(f, *args, **kwargs)`` in ``maker`` passes on: those the decorator factory's call
    (``closure``) gives its ``**`` parameter (``@register("k", module="m")``); none when neither function has
    one and it is applied with the function alone; None when that cannot be told."""
    outer = file.functions.get(maker.ctx.scope)
    star = next((p for p in outer.params if p.star == "**"), None) if outer is not None else None
    if star is not None and outer is not None:
        passed = evaluator.star_arguments(outer, star, closure) if closure is not None else None
        return None if passed is None else {str(k): v for k, v in passed}
    if any(p.star == "**" for p in maker.params):
        return {}  # the decorator is applied with the function alone
    return None  # `**CONFIG` of something else


def _closure_value(evaluator: Evaluator, file: FileModel, maker: Function, value: Value | None, site: Site,
                   closure: Site | None) -> ValueSet | None:
    """``value`` written in ``maker`` as the call at ``site`` computes it: from its own parameters there, or,
    when it reads only the parameters of the function around ``maker`` (a decorator factory's), from the call
    of that function that made ``maker`` (``closure``). None when neither tells."""
    if value is None:
        return None
    params, complete = evaluator.parameters_reaching(file, value, maker.qualname)
    if not complete:
        return None
    if all(owner == maker.qualname for owner, _ in params):
        return evaluator.values(file, value, maker.qualname, site)
    own = maker.locals | {p.name for p in maker.params}
    if closure is not None and all(owner == maker.ctx.scope for owner, _ in params) and not (value.names() & own):
        return evaluator.values(file, value, maker.ctx.scope, closure)
    return None


def kernel_decorator_options(evaluator: Evaluator, file: FileModel, decorator: Value, scope: str
                             ) -> dict[str, Value] | None:
    """The ``wp.kernel`` options a decorator expression applies when it is ``wp.kernel`` with its keywords bound
    beforehand: every expression it comes from (``Evaluator.sources``) is ``functools.partial(wp.kernel, **kw)``
    or ``wp.kernel(**kw)`` (no function: the decorator factory's result), all with the same keywords. Options
    that are not literals are left unknown. None for anything else."""
    found: dict[str, Value] | None = None
    sources = evaluator.sources(file, decorator, scope, accept=_binds_kernel_options)
    if not all(_binds_kernel_options(source) for source in sources):
        return None
    for source in sources:
        normal = _literal_options(source.value.kwargs)
        if found is not None and found != normal:
            return None
        found = normal
    return found


def _binds_kernel_options(source: Source) -> bool:
    """``source`` is ``functools.partial(wp.kernel, **kw)`` or ``wp.kernel(**kw)`` (no function), followed whole."""
    value = source.value
    if source.attrs or value.kind != "call" or not source.complete or "**" in value.kwargs:
        return False
    return (value.ref == "functools.partial" and len(value.args) == 1 and is_warp(value.args[0].ref, "kernel")) or (
        is_warp(value.ref, "kernel") and not value.args)


def _add_kernels_of_decorators(bindings: Bindings, evaluator: Evaluator) -> None:
    """A ``derived`` Kernel for every function a project decorator that makes kernels decorates. Each file's are a
    fact kept across an edit while what it read holds (reads.py), checked as the bound decorators' are: every
    decorator of every function is evaluated otherwise, after each edit."""
    _add_kept_decorated_kernels(bindings, evaluator, "kernels of project decorators", _project_decorator_options)


def _project_decorator_options(evaluator: Evaluator, file: FileModel) -> DecoratedOptions:
    """Each function of ``file`` a project decorator makes a kernel of, with the options it applies."""
    bindings = evaluator.bindings
    found: list[tuple[Function, dict[str, Value]]] = []
    for fn in [*file.redefined, *file.functions.values()]:  # each `def` of a name defined twice decorates
        if fn.is_warp:
            continue
        for decorator in fn.decorator_values:
            if (decorator.kind not in ("name", "attr", "call") or bindings.is_warp_api(decorator.ref)
                    or _named_outside(bindings, decorator, fn)):
                continue
            options = _kernel_options(bindings, evaluator, file, fn, decorator)
            if options is not None:
                found.append((fn, options))
                break
    return tuple(found)


def _literal_options(options: dict[str, Value]) -> dict[str, Value]:
    """Options written away from the kernel's ``def`` (a factory's ``wp.kernel(f, ...)``, a partial's bound
    keywords) as the layer keeps them: each literal as written, any other expression unknown (it would read names
    of another scope)."""
    return {key: option if option.is_const else Value("other", text=option.text) for key, option in options.items()}


def _written_here(options: dict[str, Value]) -> dict[str, Value]:
    """The keywords of a decorator call, written in the scope around the ``def`` (Python evaluates a decorator
    there): the layer evaluates them where the kernel is, as a ``@wp.kernel(module=...)``'s; a ``**mapping``
    entry is left unknown."""
    return {key: Value("other", text=option.text) if key == "**" else option for key, option in options.items()}


def _decorated_kernel(file: FileModel, fn: Function, options: dict[str, Value]) -> Kernel:
    """The ``derived`` kernel a decorator makes of ``fn``, with the names its body reads from the functions
    around it (the values a kernel made in a factory captures, as the extractor finds them for ``@wp.kernel``)."""
    enclosing = enclosing_names(file.functions, fn.ctx.scope)
    own = fn.locals | {p.name for p in fn.params}
    return Kernel(name=fn.name, function=fn.qualname, span=fn.span, ctx=fn.ctx, form="decorator", options=options,
                  generic=fn.generic, warp_calls=set(fn.warp_calls), derived=True, source_digest=fn.source_digest,
                  captured=(set(fn.loaded) & enclosing) - own, static_captured=(fn.static_loaded & enclosing) - own)


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
        options = _literal_options(made.options)  # written in the factory: only its literals are known here
        if decorator.kind == "call" and _forwards_keywords(bindings, maker_file, made):
            # `wp.kernel(f, **options)` in a decorator factory: the keywords its call passes beyond its own
            # parameters (`@project_kernel(module="sim")`) are the kernel's options, written where the def is
            named = _parameters(bindings, evaluator, file, fn, decorator)
            options.update({k: v for k, v in _written_here(decorator.kwargs).items()
                            if k not in named and k not in options})
        return options
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


# ---------------------------------------------------------------------------------------------------------------
# Where a kernel made of a function passed in can flow: whether any project decorator can return one.

_SPECIAL_CALLS = frozenset({"int", "float", "min", "max", "len", "range", "round", "abs"})


def _passed_in(kernel: Kernel) -> bool:
    """A kernel ``_kernel_options`` accepts as a decorator's: ``wp.kernel(<not a function of its file>)``."""
    return not kernel.derived and kernel.form != "Kernel" and kernel.target is not None and not kernel.function


class _Escapes(Exception):
    """The flow reached a place this analysis does not follow (a return, an attribute, a call whose callee
    depends on the call site...): a decorator may return the kernel."""


class _PassedInKernels:
    """The names that can hold a kernel ``wp.kernel(<not a function of its file>)`` makes (a "passed-in kernel"),
    followed forward through the evaluator's own steps, and whether one can reach a place where applying a
    project decorator could read it.

    The evaluator makes a kernel's ``KernelRef`` only where the kernel is made: reading a name the statement
    that makes it binds, or evaluating a ``wp.kernel``/``wp.Kernel`` call of that scope. From there a value
    reaches another expression only through a step the evaluator takes: an assignment's target, a call's
    explicit argument (the parameter it binds; ``*x``/``**x`` pass nothing the evaluator follows), a name read
    in the scope that binds it or a nested one, a module-level name read from anywhere (a ``ref``, a re-export),
    an item written into a container, and the value of an enclosing expression. A holder read only as ``k.attr``
    gives an attribute, which the evaluator does not follow on a kernel. Applying a decorator evaluates its
    callee's returns (or reads the decorator expression, or the decorated function's name): if no holder reaches
    a return, a lambda, a decorator, a decorated name, an attribute or class store, a class's construction or a
    call whose callee depends on its site, no application of a decorator can give such a kernel."""

    def __init__(self, bindings: Bindings, evaluator: Evaluator) -> None:
        self.bindings = bindings
        self.evaluator = evaluator
        # (path, scope, name) of each name that can hold one -> whether it holds it inside a container (else
        # the kernel itself, whose attributes the evaluator does not follow)
        self.holders: dict[tuple[str, str, str], bool] = {}
        self.pending: list[tuple[str, str, str]] = []
        self._found: dict[tuple[str, ...], list[tuple[str, tuple, tuple[Value, ...]]]] = {}
        self._objects: set[str] = set()
        self._records: dict[tuple[str, str], list[Assignment | Call]] = {}
        # path -> its records' stored bytes, searched once per word; None when some record has none
        self._texts: dict[str, _StoredText | None] = {}

    # -- the model's expressions, each with where it sits
    def _stored_roots(self, file: FileModel, words: tuple[str, ...]):
        """(scope, position, expression) for the calls' arguments and the assignments' values of ``file`` (kept
        pickled from the cache until read) that can name every one of ``words``."""
        records = self._naming(file, words[0])
        return _roots_of([r for r in records if not any(stored_without(r, w) for w in words[1:])])

    def _naming(self, file: FileModel, word: str) -> list[Assignment | Call]:
        """The assignments and calls of ``file`` whose stored fields can name ``word``, in the file's order."""
        key = (file.path, word)
        found = self._records.get(key)
        if found is None:
            text = self._text(file)
            assert text is not None  # asked only of a searchable file
            found = self._records[key] = text.naming(word)
        return found

    def _reads(self, file: FileModel, word: str, *also: str) -> list[tuple[str, tuple, tuple[Value, ...]]]:
        """The names of ``file`` read with ``word`` as a part (of a local's dotted text, of a ``ref``), in
        expressions that also name each of ``also``; for "" its ``wp.kernel``/``wp.Kernel`` calls. Each with
        its root's scope and position and the path to it from the root."""
        key = (file.path, word, *also)
        found = self._found.get(key)
        if found is None:
            kept = self.bindings.file_facts.cached(file, _kept_words)
            if word and self._searchable(file):
                stored = _by_word(self._stored_roots(file, (*also, word))).get(word, ())
            else:  # every expression read once, for all words
                stored = self.bindings.file_facts.cached(file, _stored_words).get(word, ())
            found = self._found[key] = [*kept.get(word, ()), *stored]
        return found

    def _searchable(self, file: FileModel) -> bool:
        """Whether ``file``'s records were read back from the cache, their stored fields searchable by word
        without unpickling them (``stored_without``); a file modelled in this process is read whole instead."""
        return self._text(file) is not None

    def _text(self, file: FileModel) -> _StoredText | None:
        """The stored bytes of ``file``'s records, when every record has them (else None)."""
        if file.path in self._texts:
            return self._texts[file.path]
        records = _records(file)
        packed: list[bytes | None] = [r.__dict__.get("_packed") for r in records]
        text = self._texts[file.path] = _StoredText(records, packed) if None not in packed else None
        return text

    # -- the fixpoint
    def can_be_returned(self) -> bool:
        try:
            for file in self.bindings.files:
                for kernel in file.kernels:
                    if _passed_in(kernel):
                        self._made(file, kernel)
            while self.pending:
                self._follow(self.pending.pop())
            self._decorated_names()
        except _Escapes:
            return True
        return False

    def _made(self, file: FileModel, kernel: Kernel) -> None:
        scope = kernel.ctx.scope
        if scope and scope not in file.functions:
            raise _Escapes  # made in a class body: a class attribute
        for name in kernel.assigned_to:
            if "." in name:
                raise _Escapes  # stored on an attribute
            self._hold((file.path, scope, name), container=False)
        for at, position, path in self._reads(file, ""):
            if at == scope:
                self._flow(file, at, position, path, False, "whole")

    def _hold(self, key: tuple[str, str, str], container: bool) -> None:
        known = self.holders.get(key)
        if known is None or (container and not known):
            self.holders[key] = container
            self.pending.append(key)

    def _follow(self, key: tuple[str, str, str]) -> None:
        path, scope, name = key
        file = self.bindings.file_at(path)
        assert file is not None
        container = self.holders[key]
        for at, position, nodes in self._reads(file, name):
            read = self._read_of(file, at, nodes[-1], key)
            if read is not None:
                self._flow(file, at, position, nodes, container, read)
        if scope:
            return  # a function's local is read by no other file: Python binds no name to it there
        # read from another file: a ref names the holder's module (`pkg.mod.NAME`), or the module itself as an
        # object, whose attributes are read wherever it goes; either way the module's own name is written there
        dotted = f"{file.module}.{name}"
        for other in self.bindings.files:
            if other is not file:
                for at, position, nodes in self._reads(other, name, file.module.rpartition(".")[2]):
                    read = self._ref_read(nodes[-1], dotted)
                    if read is not None:
                        self._flow(other, at, position, nodes, container, read)
            for imp in other.imports:
                if self.bindings.canonical_ref(imp.module) == file.module and not imp.ctx.scope:
                    for imported, alias in imp.names:  # a re-export
                        if imported == "*":
                            raise _Escapes
                        if imported == name:
                            self._hold((other.path, "", alias), container)
        self._module_objects(file)

    def _module_objects(self, file: FileModel) -> None:
        """A module-level holder is read too through the module as an object (``m.NAME`` for a local or a
        parameter ``m``), which only a ref to the module itself (or an attribute of a package naming it) gives."""
        if file.path in self._objects:
            return
        self._objects.add(file.path)
        last = file.module.rpartition(".")[2]
        for other in self.bindings.files:
            for _, _, nodes in self._reads(other, last):
                node = nodes[-1]
                if node.local or node.base is not None:
                    if last in node.text.split(".")[1:]:
                        raise _Escapes  # an attribute of a module object a local holds
                elif self.bindings.canonical_ref(node.ref or "") == file.module:
                    raise _Escapes  # the module as an object

    def _ref_read(self, node: Value, dotted: str) -> str | None:
        """How the dotted name ``node`` reads the holder named ``dotted``: "whole", "attribute" (``k.adj``,
        not ``k.get``) or None."""
        if node.local or not node.ref:
            return None
        canonical = self.bindings.canonical_ref(node.ref)
        if canonical == dotted:
            return "whole"
        if not canonical.startswith(dotted + "."):
            return None
        return "whole" if "get" in canonical[len(dotted) + 1:].split(".") else "attribute"

    def _read_of(self, file: FileModel, scope: str, node: Value, key: tuple[str, str, str]) -> str | None:
        """How the name ``node`` read in ``scope`` of ``file`` reads the holder ``key`` of that file, found as
        ``Evaluator._name`` finds a name (a local through the enclosing functions to the module, a module-level
        ref): "whole", "attribute" (``k.adj``) or None when it reads something else."""
        _, holder_scope, name = key
        if not node.local:
            ref = node.ref or ""
            if "." not in ref and ref == node.text:
                return "whole" if not holder_scope and ref == name else None
            if holder_scope:
                return self._ref_read(node, f"{file.module}.{holder_scope}.{name}")
            return self._ref_read(node, f"{file.module}.{name}")
        head, _, rest = node.text.partition(".")
        if head != name:
            return None
        read = "attribute" if rest and "get" not in rest.split(".") else "whole"
        current = scope
        while current:
            fn = file.functions.get(current)
            if fn is None:
                break
            if current == holder_scope:
                return read
            if any(p.name == head for p in fn.params) or self.bindings.name_assignments(file, current, head):
                return None
            current = fn.ctx.scope
        return read if not holder_scope else None

    def _flow(self, file: FileModel, scope: str, position: tuple, path: tuple[Value, ...], container: bool,
              read: str) -> None:
        """A holder read (or the kernel made) at ``path[-1]`` of an expression at ``position``: where its value
        goes, up through the enclosing expressions to the root's place."""
        if not container and read == "attribute":
            return  # `k.adj`: an attribute of a kernel, which the evaluator does not follow
        for parent, child in zip(reversed(path[:-1]), reversed(path[1:]), strict=True):
            if parent.kind == "lambda":
                raise _Escapes  # its body is evaluated wherever the lambda is called
            if parent.kind == "call" and parent.base is not child:
                self._call(file, scope, parent, child)
        kind = position[0]
        if kind in ("target", "other"):
            return
        if kind in ("return", "decorator"):
            raise _Escapes
        whole = len(path) == 1
        if kind == "argument":
            _, call, key = position
            if self.bindings.is_warp_api(call.callee):
                return
            callee = self.bindings.canonical_function(self.bindings.callee_of(file, call))
            found = self.bindings.function(callee)
            if found is not None:
                self._bind(found, key)
            elif self.bindings.is_class(callee):
                raise _Escapes  # the construction's arguments become the instance's attributes
            elif any(made.span is call.span and made is not call for made in self.bindings.calls_made(file)):
                raise _Escapes  # called through a name bound to functions (`Bindings.calls_made`)
            else:
                self._fills(file, scope, call.callee, local=False)
        elif kind == "default":
            _, fn, param = position
            self._hold((file.path, fn.qualname, param.name), True)
        elif kind == "value":
            assignment = position[1]
            self._assigned(file, assignment.ctx.scope, assignment.target, container or not whole)

    def _assigned(self, file: FileModel, scope: str, target: Value, container: bool) -> None:
        """A holder's value assigned to ``target`` in ``scope``: a name, or an item of a container."""
        if scope and scope not in file.functions:
            raise _Escapes  # a class attribute
        if target.kind == "name" and "." not in target.text:
            self._hold((file.path, scope, target.text), container)
            return
        base = target.base
        if target.kind != "subscript" or base is None:
            raise _Escapes  # an attribute
        self._filled(file, scope, base)

    def _fills(self, file: FileModel, scope: str, callee: str, local: bool) -> None:
        """``out.append(k)`` (a method that puts its argument into its container): what reads ``out`` may read
        ``k``."""
        receiver, _, method = callee.rpartition(".")
        if not receiver or method not in FILLING_METHODS:
            return
        owned = not local and self.bindings.owner_of(receiver) is not None
        if owned and self.bindings.module(self.bindings.canonical_ref(receiver)) is not None:
            return  # `pkg.mod.add(...)`: a function of a module, not a container's method
        self._filled(file, scope, Value("name", text=receiver, ref=receiver if owned else None, local=not owned))

    def _filled(self, file: FileModel, scope: str, base: Value) -> None:
        """Something holding a holder's value put into the container ``base`` names."""
        if base.kind not in ("name", "attr") or base.base is not None:
            raise _Escapes
        if base.local:
            if "." in base.text:
                raise _Escapes  # an item of an attribute
            self._hold((file.path, scope, base.text), True)
            return
        canonical = self.bindings.canonical_ref(base.ref or base.text)
        owner = self.bindings.owner_of(canonical)
        if owner is None or canonical == owner.module or "." in canonical[len(owner.module) + 1:]:
            raise _Escapes
        self._hold((owner.path, "", canonical[len(owner.module) + 1:]), True)

    def _call(self, file: FileModel, scope: str, call: Value, argument: Value) -> None:
        """A value passed explicitly to the call ``call`` (an expression the evaluator evaluates): the
        parameters of the functions it can call there."""
        ref = call.ref
        if ref is None:
            if call.base is not None and call.base.kind == "call" and is_warp(call.base.ref, "kernel"):
                return
            raise _Escapes  # the callee is computed from an expression
        if self.bindings.is_warp_api(ref) or ref in _SPECIAL_CALLS or ref in ("os.environ.get", "os.getenv"):
            return
        if ref == "functools.partial":
            raise _Escapes  # its arguments are bound wherever the partial object is called
        self._fills(file, scope, ref, call.local)
        callees = self.evaluator.callees_anywhere(file, call)
        if callees is None:
            raise _Escapes
        key: int | str | None = next((i for i, a in enumerate(call.args) if a is argument), None)
        unpack = next((u for u in call.unpacked if u.base is argument), None)
        if key is None and unpack is None:
            key = next(k for k, v in call.kwargs.items() if v is argument)
        for callee in callees:
            if isinstance(callee, FunctionRef):
                found = self.bindings.function(callee.fqname)
                if found is not None and unpack is not None:
                    shift = int(self.bindings.fills_first_parameter(file, scope, call, callee.fqname))
                    self._bind_unpacked(found, unpack, call, shift)
                elif found is not None and key is not None:
                    self._bind(found, key)
            elif isinstance(callee, ClassRef):
                raise _Escapes

    def _bind(self, found: tuple[FileModel, Function], key: int | str) -> None:
        """The parameters of ``fn`` an argument (by position or keyword) can bind, as ``Evaluator.bind`` and
        ``star_arguments`` bind it (the position shifted by one when Python fills the first parameter)."""
        file, fn = found
        named = [p for p in fn.params if not p.star]
        stars = {p.star: p for p in fn.params if p.star}
        if isinstance(key, str):
            params = [p for p in named if p.name == key] or ([stars["**"]] if "**" in stars else [])
        else:
            params = [*named[key:key + 2], *([stars["*"]] if "*" in stars else [])]
        for p in params:
            self._hold((file.path, fn.qualname, p.name), True)

    def _bind_unpacked(self, found: tuple[FileModel, Function], unpack: Value, call: Value, shift: int) -> None:
        """The parameters of ``fn`` what a ``*x`` / ``**x`` argument of ``call`` holds can bind: each from the
        ``*x``'s position on (by position), each named one the call does not bind itself (by keyword; Python
        refuses a parameter given twice), and the star parameter that collects the rest. ``shift``: Python fills
        the first parameter (a method read off an instance)."""
        file, fn = found
        named = [p for p in fn.params if not p.star]
        stars = {p.star: p for p in fn.params if p.star}
        if unpack.text == "*":
            params = named[unpack.const:]
        else:
            first_star = min((u.const for u in call.unpacked if u.text == "*"), default=len(call.args))
            placed = {p.name for p in named[shift:shift + min(len(call.args), first_star)]}
            params = [p for p in named if p.name not in placed and p.name not in call.kwargs]
        for p in [*params, *([stars[unpack.text]] if unpack.text in stars else [])]:
            self._hold((file.path, fn.qualname, p.name), True)

    def _decorated_names(self) -> None:
        """Applying a decorator reads the decorated function's name where the ``def`` is: not a holder."""
        for file in self.bindings.files:
            for fn in [*file.redefined, *file.functions.values()]:
                if not fn.decorator_values:
                    continue
                read = Value("name", text=fn.name, ref=fn.name if not fn.ctx.scope else None,
                             local=bool(fn.ctx.scope))
                for key in self.holders:
                    if key[0] == file.path and key[2] == fn.name and self._read_of(file, fn.ctx.scope, read, key):
                        raise _Escapes


class _StoredText:
    """The stored bytes of a file's records (``stored_without``) joined into one text: which records can name a
    word is one search of the file, not a search of each record. A record's bytes are what its stored fields
    hold (the layer sets no stored field), so they answer for it after it is read too."""

    def __init__(self, records: list[Assignment | Call], packed: list[bytes | None]) -> None:
        """``packed``: each record's stored bytes (none missing)."""
        self.records = records
        chunks = [b for b in packed if b is not None]
        # where each record's bytes begin in the text
        self.starts = list(itertools.accumulate((len(b) + 1 for b in chunks[:-1]), initial=0))
        self.text = b"\0".join(chunks)  # a word (a Python name) holds no NUL: no match spans two records

    def naming(self, word: str) -> list[Assignment | Call]:
        """The records whose stored bytes contain ``word`` (a pickle keeps each string whole), in their order."""
        needle = word.encode()
        if b"\0" in needle:
            return [r for r in self.records if not stored_without(r, word)]
        found: list[Assignment | Call] = []
        text, starts = self.text, self.starts
        at = text.find(needle)
        while at != -1:
            k = bisect.bisect_right(starts, at) - 1
            found.append(self.records[k])
            at = text.find(needle, starts[k + 1]) if k + 1 < len(starts) else -1  # on to the next record
        return found


def _makes_kernel(call: Value) -> bool:
    """``wp.kernel(f, ...)`` / ``wp.Kernel(f, ...)`` / ``wp.kernel(...)(f)``: where the evaluator makes a kernel's
    value (``Evaluator._kernel_made``)."""
    if is_warp(call.ref, "kernel", "Kernel") and call.args:
        return True
    base = call.base
    return call.ref is None and base is not None and base.kind == "call" and is_warp(base.ref, "kernel")


def _kept_words(file: FileModel) -> dict[str, list[tuple[str, tuple, tuple[Value, ...]]]]:
    """``_by_word`` of every expression of ``file`` the evaluator can read beside the stored ones: assignment
    targets, returns, decorators, parameter defaults, the targets and options of the kernels the extractor made
    (not those a project adds: ``derived``), ``with`` items."""
    return _by_word(_kept_roots(file))


def _stored_words(file: FileModel) -> dict[str, list[tuple[str, tuple, tuple[Value, ...]]]]:
    """``_by_word`` of the calls' arguments and receivers and the assignments' values of ``file``."""
    return _by_word(_roots_of(_records(file)))


def _roots_of(records: list[Assignment | Call]):
    """(scope, position, expression) for the arguments and receivers of the calls and the values of the
    assignments among ``records``."""
    for record in records:
        if isinstance(record, Assignment):
            yield record.ctx.scope, ("value", record), record.value
            continue
        for index, arg in enumerate(record.args):
            yield record.ctx.scope, ("argument", record, index), arg
        for key, arg in record.kwargs.items():
            yield record.ctx.scope, ("argument", record, key), arg
        if record.receiver is not None:
            yield record.ctx.scope, ("other",), record.receiver


def _kept_roots(file: FileModel):
    """(scope, position, expression) for every other expression the evaluator can read in ``file``."""
    for a in file.assignments:
        yield a.ctx.scope, ("target", a), a.target
    for fn in [*file.redefined, *file.functions.values()]:
        for r in fn.returns:
            yield fn.qualname, ("return",), r
        for d in fn.decorator_values:
            yield fn.ctx.scope, ("decorator",), d
        for p in fn.params:
            if p.default is not None:
                yield fn.ctx.scope, ("default", fn, p), p.default
    for kernel in file.kernels:
        if kernel.derived:  # a project's, not the file's: none when the fact asks (add_decorated_kernels)
            continue
        for v in (kernel.target, *kernel.options.values()):
            if v is not None:
                yield kernel.ctx.scope, ("other",), v
    for block in file.with_blocks:
        for v in block.items:
            yield block.ctx.scope, ("other",), v


def _records(file: FileModel) -> list[Assignment | Call]:
    """The records of ``file`` whose expressions are kept pickled from the cache until read."""
    found: list[Assignment | Call] = list(file.assignments)
    found.extend(file.calls)
    return found


def _by_word(roots) -> dict[str, list[tuple[str, tuple, tuple[Value, ...]]]]:
    """The name reads of expressions (scope, position, root) under each part of the name (a local's dotted
    text, a ``ref``), and the ``wp.kernel``/``wp.Kernel`` calls under "": (scope, position, path from the root)."""
    found: dict[str, list[tuple[str, tuple, tuple[Value, ...]]]] = {}
    for scope, position, root in roots:
        stack: list[tuple[Value, tuple[Value, ...]]] = [(root, ())]
        while stack:
            node, above = stack.pop()
            path = (*above, node)
            kind = node.kind
            if kind == "name" or kind == "attr":
                text = node.text if node.local or node.base is not None else node.ref or ""
                for part in set(text.split(".")) if "." in text else (text,):
                    found.setdefault(part, []).append((scope, position, path))
            elif kind == "call" and _makes_kernel(node):
                found.setdefault("", []).append((scope, position, path))
            if node.args or node.kwargs or node.items or node.base is not None or node.key is not None:
                stack.extend([(child, path) for child in node.parts()])  # (most nodes are leaves: none)
    return found

"""The one evaluator: the finite set of abstract values an expression can have at a point.

It follows locals (every binding in the scope: assignments, tuple unpacking, ``for`` targets
over literal sequences, walrus, ``with ... as``), enclosing functions' locals, parameters
(bound from one call site when the question is asked *at* that site, else from every call
site in the project), return values, module-level names across files (re-exports included),
class attributes and ``self.x``, instances promised by annotations (dataclass defaults),
``__name__``, ``wp.constant``, ``wp.get_module``, ``functools.partial``/``cache`` and lambdas.

Python's descriptors are run (``property``, ``functools.cached_property``, ``__get__``), tables indexed by a
key only the run knows are any of their items, and memoisation is recognised by behaviour. Every answer is
memoised per project and bounded by one set of limits (a budget per question, values per set, call sites per
parameter), so all rules see the same answer for the same question.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, TypeVar, cast

from warplint.model import Assignment, Call, Context, FileModel, Function, Kernel, Param, Value
from warplint.names import is_warp

from . import file_facts
from .bindings import GETTER_DESCRIPTORS, is_getter, read_off_parameter
from .budget import Budget
from .context import asv_parameter, is_test_file
from .reads import LastingCheck, Reads, ReadsCheck, RecordedBindings
from .statement_order import always_before, binds_whenever_run, constructor_before, may_run_between, runs_whenever
from .values import (
    FIELD_REPLACERS,
    NAMESPACE_CONSTRUCTOR,
    AbstractValue,
    ClassRef,
    Const,
    EnumMember,
    FunctionRef,
    Instance,
    KernelRef,
    Lambda,
    Mapping,
    Namespace,
    PerProcess,
    PythonModule,
    Replacement,
    Sequence,
    Unknown,
    ValueSet,
    Varies,
    WarpModule,
    WarpType,
)

T = TypeVar("T")

if TYPE_CHECKING:
    from .bindings import Bindings

MAX_VALUES = 16  # values per set; more collapse to Unknown
MAX_SITES = 16  # call sites followed per parameter
MAX_SITE_CHAIN = 4  # wrappers followed inward from one launch

# The standard library's memoising decorators (their behaviour is in C, not in code the evaluator reads).
MEMOIZING_DECORATORS = frozenset({"functools.cache", "functools.lru_cache"})
ENVIRONMENT_READS = frozenset({"os.environ.get", "os.getenv"})  # (name[, default]): a run-time string or the default
# Builtins whose result depends only on their arguments (a cache key computed with them repeats).
_PURE_BUILTINS = frozenset({"tuple", "str", "repr", "int", "float", "bool", "frozenset", "sorted", "type", "hash",
                            "abs", "min", "max", "round"})
# The standard library's random choosers: what a call gives, in terms of its sequence argument's items (each
# item is possible, and the pick differs between calls). "item": one of them; "items": a list of them.
RANDOM_CHOOSERS = {"random.choice": "item", "secrets.choice": "item", "random.sample": "items",
                   "random.choices": "items"}
_BINOPS: dict[str, Callable[[object, object], object]] = {
    "Add": operator.add, "Subtract": operator.sub, "Multiply": operator.mul, "FloorDivide": operator.floordiv,
    "Divide": operator.truediv, "Modulo": operator.mod, "Power": operator.pow, "LeftShift": operator.lshift,
    "RightShift": operator.rshift, "BitOr": operator.or_, "BitAnd": operator.and_, "BitXor": operator.xor,
}
_UNKNOWN = ValueSet.of(Unknown())
# Python's enum classes whose members are objects of their own (``.value`` is what the class body wrote), and
# those whose members are ints or strs equal to their values (their own ``int``/``str`` base)
_PURE_ENUM_BASES = frozenset({"enum.Enum", "enum.Flag"})
_MIXED_ENUM_BASES = frozenset({"enum.IntEnum", "enum.IntFlag", "enum.StrEnum", "int", "str", "float", "bytes"})
PARAMETER_SLOT = "\x00%s\x00"  # a parameter in Evaluator.shape_of's texts


@dataclass(frozen=True, eq=False)
class Site:
    """A call through which a function runs: its parameters are bound from this call's arguments.

    ``parent`` is the site the *caller* runs at (wrappers of wrappers). Sites are interned by
    ``Evaluator.site``, so identity is equality."""

    file: FileModel
    scope: str  # the caller's scope
    args: tuple[Value, ...]
    kwargs: dict[str, Value]
    star: bool  # *args / **kwargs at the call: positions are not known
    function: str  # canonical fqname of the function called
    parent: Site | None
    call: Call | None = None  # the recorded call, when the site is a statement-level call
    origin: Call | Value | None = None  # the call expression itself (to re-intern the site under another parent)
    fills_first: bool = False  # the call fills the function's first parameter itself (a method read off an instance)
    unpacked: tuple[Value, ...] = ()  # the call's `*x` / `**x` arguments (``Value.unpacked``)

    @property
    def depth(self) -> int:
        return 1 + (self.parent.depth if self.parent is not None else 0)

    def outermost(self) -> Site:
        return self.parent.outermost() if self.parent is not None else self


_DEFAULT = object()  # "the parameter's default" from _bind


# Methods that put values into the container they are called on (`parts.append(x)`): what a local built so
# reads includes what was put in.
FILLING_METHODS = frozenset({"append", "extend", "insert", "add", "update", "setdefault", "appendleft"})


class Evaluator:
    def __init__(self, bindings: Bindings) -> None:
        # In a session that records reads (reads.py), each memo entry carries the reads of its computation and
        # a hit adds them to the computation that hit it; the binder's hand-outs are recorded as they are made.
        self.recorder = bindings.reads
        self.bindings = cast("Bindings", RecordedBindings(bindings, self.recorder)) if self.recorder.enabled \
            else bindings
        self._memo: dict[tuple, ValueSet] = {}
        self._memo_reads: dict[tuple, Reads] = {}  # the reads of each entry of ``_memo``
        self._sites_reads: dict[tuple, Reads] = {}
        self._chosen_reads: dict[tuple, Reads] = {}
        self._active: set[tuple] = set()
        self._cycles = 0
        self._sites: dict[tuple, Site] = {}
        self._keep: list[Value] = []
        self._reaching: dict[tuple, tuple[frozenset[tuple[str, str]], bool]] = {}
        self._chosen: dict[tuple, bool] = {}
        self._chosen_sets: dict[tuple, frozenset[str]] = {}
        # Until ``kernels.add_decorated_kernels`` has completed the models' kernel lists, an answer that read one
        # may miss a kernel a project decorator makes: such answers are not memoised (``kernels_of``).
        self.kernels_whole = False
        self._partial_reads = 0
        self.budget = Budget(self.recorder)  # of the question being answered: every walk of the layer draws on it
        self._applied: dict[tuple, Value] = {}  # `partial(f, ...)(...)` as the call of `f` it makes
        self._star_literals: dict[tuple, Value | None] = {}  # `*args` / `**kwargs` at a site (_star_literal)
        self._keyword_dicts: set[int] = set()  # ids of the `**kwargs` dicts _star_literal made (never mutated)

    # ------------------------------------------------------------------ entry points
    def kept(self, family: str, file: FileModel, compute: Callable[[], T], check: ReadsCheck | LastingCheck,
             part: tuple = ()) -> T:
        """``compute()``, a fact of ``file``, with what it reads recorded: a later project over the same model takes
        it over while those reads hold in it (``check``, reads.py) instead of computing it again. Computed apart
        from the question that asks it (a fact is the same whoever asks). In a session that records nothing,
        simply computed."""
        recorder = self.recorder
        if not recorder.enabled:
            return self.budget.apart(compute)
        kept_facts = cast("RecordedBindings", self.bindings).unrecorded.kept_facts
        found = kept_facts.get(family, file, check, part)
        if found is not None:
            recorder.add(found[1])  # taken over inside another recorded computation: it read all this did
            return found[0]
        reads = recorder.open()
        assert reads is not None  # (the recorder is enabled)
        try:
            recorder.model(file)
            value = self.budget.apart(compute)
        finally:
            recorder.close(reads)
        kept_facts.put(family, file, value, reads, part)
        return value

    def values(self, file: FileModel, value: Value | None, scope: str = "", site: Site | None = None) -> ValueSet:
        """The values ``value`` (an expression written in ``scope`` of ``file``) can have."""
        if value is None:
            return ValueSet.of(Unknown("absent"))
        key = (id(file), scope, id(value), id(site))
        found = self._memo.get(key)
        if found is not None:
            self.recorder.hit(self._memo_reads, key)
            return found
        # One step of the question's budget (budget.py): each memoised answer, a function's return values at a
        # call site among them, is a summary every later question reuses for free.
        budget = self.budget
        opened = budget.enter()
        if opened is None:
            return ValueSet.of(Unknown("too long a chain to follow"))
        if key in self._active:
            budget.leave(opened)
            self._cycles += 1
            return ValueSet(frozenset())  # a cycle adds no value of its own
        self._active.add(key)
        cycles, partial, cuts = self._cycles, self._partial_reads, budget.cuts
        reads = self.recorder.open()
        try:
            result = self._values(file, value, scope, site)
        finally:
            self.recorder.close(reads)
            self._active.discard(key)
            budget.leave(opened)
        if len(result) > MAX_VALUES:
            result = _coarser(result)
        # an answer cut short by a cycle, or that read a kernel list still incomplete, is not final: not memoised;
        # nor is one the budget cut inside a question (asked first, on its own, it may resolve), unless it is the
        # question itself (asked again, it would be cut again)
        if self._cycles == cycles and self._partial_reads == partial and (budget.cuts == cuts or opened):
            self._memo[key] = result
            if reads is not None:
                self._memo_reads[key] = reads
            self._keep.append(value)  # the key holds id(value): keep the value alive while the memo is
        return result

    def keep(self, value: Value) -> None:
        """Keep ``value`` alive as long as the answers: a value made to ask a question (a call the layer
        composes) is keyed by its id in the memo and the sites."""
        self._keep.append(value)

    def constant(self, file: FileModel, value: Value | None, scope: str = "", site: Site | None = None
                 ) -> tuple[bool, object]:
        """(True, literal) when ``value`` can only be one literal, else (False, None)."""
        if value is None:
            return False, None
        return self.values(file, value, scope, site).single_constant()

    def site(self, file: FileModel, scope: str, call: Call | Value, function: str, parent: Site | None) -> Site:
        key = (id(call), function, id(parent))
        found = self._sites.get(key)
        if found is None:
            # a recorded call's arguments stay stored until read (model.Call.Stored): read them only when it has some
            unpacked = (call.unpacked if call.has_star_args else ()) if isinstance(call, Call) else call.unpacked
            reads = self.recorder.open()
            try:
                fills = self.bindings.fills_first_parameter(file, scope, call, function)
            finally:
                self.recorder.close(reads)
            found = self._sites[key] = Site(file, scope, call.args, call.kwargs, bool(unpacked), function, parent,
                                            call if isinstance(call, Call) else None, call, fills, unpacked)
            if reads is not None:
                self._sites_reads[key] = reads
        else:
            self.recorder.hit(self._sites_reads, key)
        return found

    def enter(self, file: FileModel, scope: str, call: Call | Value, function: str, parent: Site | None) -> Site:
        """The site of ``call`` (to ``function``) made while ``parent`` runs. Only the MAX_SITE_CHAIN innermost
        calls are kept: past them the *outermost* caller is forgotten (its parameters are then read at every
        call site), never the call being entered, whose arguments decide what a pass-through helper returns."""
        if parent is not None and parent.depth >= MAX_SITE_CHAIN:
            parent = self._without_outermost(parent)
        return self.site(file, scope, call, function, parent)

    def deciding_sites(self, file: FileModel, fn: Function, values: list[Value], product: bool = False
                       ) -> list[Site]:
        """The calls that decide ``values`` (expressions written in ``fn``), each as a site to evaluate them at:
        none when no value reads a parameter of ``fn``; else each call of ``fn``, and where the arguments that
        call passes for those parameters read its caller's own parameters, that call under each call of its
        caller, and so on outwards (MAX_SITE_CHAIN calls in all). Empty when ``fn`` has no calls in the project
        or more than MAX_SITES.

        ``product``: the values the product itself gives them (the variants it builds): ``fn`` of a product file is
        judged by the product's calls, not by its tests' direct calls (which pick arguments of their own), and a
        call inside a library's public function is also kept with that function's parameters unbound (its users
        call it with arguments of their own, whatever the project's calls pass)."""
        names = _parameters_read(fn, values)
        fq = self.bindings.fqname(file, fn.qualname)
        sites = self.bindings.call_sites(fq) if names else []
        if product and not is_test_file(file):
            sites = [(f, c) for f, c in sites if not is_test_file(f)]
        if len(sites) > MAX_SITES:
            return []
        return [chain for cf, call in sites for chain in self._deciding_outwards(
            self.site(cf, call.ctx.scope, call, fq, None), fn, names, product)]

    def _deciding_outwards(self, site: Site, fn: Function, names: set[str], product: bool, level: int = 1
                           ) -> list[Site]:
        """``site`` (a call of ``fn`` whose caller is unbound), or that call under each call of its caller when
        the arguments it passes for ``names`` read the caller's parameters (for the ``product``, unbound too when
        the caller is a library's public function)."""
        caller = site.file.functions.get(site.scope)
        if level >= MAX_SITE_CHAIN or caller is None or site.call is None:
            return [site]
        passed: list[Value] = []
        for param in (p for p in fn.params if p.name in names):
            if param.star:
                passed += [v for _, v in self.star_arguments(fn, param, site) or ()]
            elif isinstance(argument := self.bind(fn, param.name, site), Value):
                passed.append(argument)
        # what the call unpacks (`f(**options)`) can bind any of them
        passed += [u.base for u in site.unpacked if u.base is not None]
        read = _parameters_read(caller, passed)
        fq = self.bindings.fqname(site.file, caller.qualname)
        sites = self.bindings.call_sites(fq) if read else []
        if not sites or len(sites) > MAX_SITES:
            return [site]
        outer = [self.site(site.file, site.scope, site.call, site.function, outer)
                 for cf, call in sites
                 for outer in self._deciding_outwards(self.site(cf, call.ctx.scope, call, fq, None), caller, read,
                                                      product, level + 1)]
        users_call = product and self.bindings.is_library_api(site.file, caller.qualname)
        return [*outer, site] if users_call else outer

    def _without_outermost(self, site: Site) -> Site | None:
        if site.parent is None or site.origin is None:
            return None
        return self.site(site.file, site.scope, site.origin, site.function, self._without_outermost(site.parent))

    def kernels_of(self, file: FileModel) -> list[Kernel]:
        """The kernels ``file`` creates (a read before the decorated kernels are added makes the answer
        reading it provisional)."""
        if not self.kernels_whole:
            self._partial_reads += 1
        self.recorder.kernel_list(file)
        return file.kernels

    def remade_kernel(self, file: FileModel, kernel: Kernel) -> Kernel | None:
        """An earlier kernel ``wp.kernel`` made of the same module-level function with the same options, made
        before ``kernel`` wherever ``kernel`` is made (earlier in its scope outside loops and branches, or at
        import): ``kernel`` is identical content again, which Warp's module hash absorbs. None otherwise.
        Likewise a decorated kernel defined again in its scope (a function's body, or the file's module-level
        code, ``__main__`` block included) with the same name and text, decorators included, reading no local
        that has more than one value: Warp hashes a kernel by its key and source (warp-facts §4, "identical
        re-definitions"), so the module's hash, and its build, stay as they were."""
        if kernel.form == "decorator" or kernel.derived:
            return self._redefined_identically(file, kernel)
        if self._made_of(file, kernel) is None:
            return None
        self.recorder.kernel_list(file)
        for earlier in file.kernels:
            if earlier is kernel or earlier.derived or not self.made_alike(file, earlier, file, kernel):
                continue
            if earlier.ctx.conditions or earlier.ctx.in_loop or earlier.ctx.try_index is not None:
                continue
            at_import = not earlier.ctx.scope and not earlier.ctx.in_main_guard and kernel.ctx.scope != ""
            if at_import or (earlier.ctx.scope == kernel.ctx.scope and earlier.ctx.precedes(kernel.ctx)) \
                    or self._constructed_before(file, earlier.ctx, kernel.ctx.scope):
                return earlier
        return None

    def _constructed_before(self, file: FileModel, statement: Context, method: str) -> bool:
        """``statement`` is one of the ``__init__`` that runs before the instance method ``method`` (of ``file``)
        can be called (``statement_order.constructor_before``), and it runs whenever that ``__init__`` returns;
        no class derived from it defines an ``__init__`` of its own (which need not call it)."""
        init = constructor_before(file, method)
        if init is None or statement.scope != init.qualname or not binds_whenever_run(statement, init):
            return False
        init_fq = self.bindings.fqname(file, init.qualname)
        cls = init_fq.rpartition(".")[0]
        return all(self._method_of(sub, "__init__") == init_fq for sub in self.bindings.subclasses(cls))

    def _redefined_identically(self, file: FileModel, kernel: Kernel) -> Kernel | None:
        """The earlier definition, in ``kernel``'s scope, of the same decorated text, if it runs whenever
        ``kernel``'s does and what the text reads of its function has one literal value on every call."""
        scope = kernel.ctx.scope
        if not kernel.source_digest or any(
                not self.values(file, Value("name", text=name, ref=name, local=True), scope).single_constant()[0]
                for name in kernel.captured):
            return None
        self.recorder.kernel_list(file)
        for earlier in file.kernels:
            if (earlier is not kernel and earlier.form == kernel.form and earlier.derived == kernel.derived
                    and earlier.ctx.scope == scope
                    and earlier.name == kernel.name and earlier.source_digest == kernel.source_digest
                    and earlier.ctx.precedes(kernel.ctx) and runs_whenever(earlier.ctx, kernel.ctx)):
                return earlier
        return None

    def same_content(self, file: FileModel, kernel: Kernel, other_file: FileModel, other: Kernel) -> bool:
        """``wp.kernel(f, ...)`` made twice of one module-level, non-generic function with the same options: the
        same key and the same content hash (source, closure constants and options are those of ``f``, which
        captures nothing of a call), so Warp's module hash, a set of unique kernel hashes, does not change when
        the second joins a module holding the first (warp-facts §4, "identical re-definitions"). A generic
        kernel's content is the overloads instantiated on that kernel object, so two are not the same."""
        if kernel is other:
            return True
        return self.made_alike(file, kernel, other_file, other) and not kernel.generic and not other.generic

    def same_key(self, file: FileModel, kernel: Kernel, other_file: FileModel, other: Kernel) -> bool:
        """``wp.kernel(f, ...)`` made twice of one module-level function, whatever the options: one key, so the
        later replaces the earlier as the module's kernel of that key (``Module.kernels``, held strongly)."""
        made = self._made_of(file, kernel)
        return made is not None and made == self._made_of(other_file, other)

    def made_alike(self, file: FileModel, kernel: Kernel, other_file: FileModel, other: Kernel) -> bool:
        """``wp.kernel(f, ...)`` made twice of one module-level function with the same options: one source and
        key (for a generic ``f``, the same instance for the same argument types)."""
        made, other_made = self._made_of(file, kernel), self._made_of(other_file, other)
        if made is None or made != other_made:
            return False
        return (sorted((k, v.text) for k, v in kernel.options.items())
                == sorted((k, v.text) for k, v in other.options.items()))

    def _made_of(self, file: FileModel, kernel: Kernel) -> str | None:
        """The canonical fqname of ``made_of_function``."""
        found = self.made_of_function(file, kernel)
        return self.bindings.fqname(found[0], found[1].qualname) if found is not None else None

    def made_of_function(self, file: FileModel, kernel: Kernel) -> tuple[FileModel, Function] | None:
        """The module-level function ``wp.kernel(f, ...)`` makes ``kernel`` of, with its file; None for a
        decorated ``def``, a closure (it captures its surroundings: the same function can be other content), a
        method, or a function not known."""
        if kernel.target is None or kernel.form != "call" or kernel.derived:
            return None
        functions = list(self.values(file, kernel.target, kernel.ctx.scope))
        if len(functions) != 1 or not isinstance(functions[0], FunctionRef):
            return None
        found = self.bindings.function(functions[0].fqname)
        if found is None or found[1].ctx.scope or found[1].class_name is not None:
            return None
        return found

    def kernel(self, ref: KernelRef) -> tuple[FileModel, Kernel] | None:
        file = self.bindings.file_at(ref.path)
        if file is not None:
            self.recorder.kernel_list(file)
        if file is None or ref.index >= len(file.kernels):
            return None
        return file, file.kernels[ref.index]

    def kernel_ref(self, file: FileModel, kernel: Kernel, reason: str = "") -> KernelRef:
        return KernelRef(file.path, self.bindings.kernel_index(file, kernel), reason)

    def module_names(self, file: FileModel, value: Value | None, scope: str = "", site: Site | None = None
                     ) -> tuple[set[str], bool]:
        """The Warp module names an expression designates (a string, a Python module object,
        ``__name__``, ``wp.get_module(...)``): (names, complete). ``complete`` is False when some
        value is not known."""
        names: set[str] = set()
        complete = True
        for v in self.values(file, value, scope, site):
            if isinstance(v, Const) and isinstance(v.value, str):
                names.add(v.value)
            elif isinstance(v, (PythonModule, WarpModule)):
                names.add(v.name)
            else:
                complete = False
        return names, complete

    def kernel_modules(self, file: FileModel, kernel: Kernel) -> tuple[set[str], bool]:
        """The Warp modules a kernel can join (``"unique"`` for module="unique"): (names, complete). A name the
        program gives one literal and otherwise leaves to its run (``ValueSet.own_constant``) is that literal."""
        value = kernel.module_value
        if value is None or (value.kind == "const" and value.const is None):
            if kernel.defined_in is None:
                return set(), False
            return {kernel.defined_in or file.module}, True  # Warp's default: the function's `__module__`
        scope = kernel.ctx.scope
        names, complete = self.module_names(file, value, scope)
        if not complete and len(names) == 1 and self.values(file, value, scope).own_constant()[0]:
            # the program's own literal, left to the run to override (`os.environ.get("M", "unique")`): the
            # module the program builds unless its run says otherwise, as an option's value counts
            return names, True
        return names, complete

    def block_dims(self, file: FileModel, value: Value | None, scope: str, site: Site | None = None
                   ) -> ValueSet:
        """The CUDA block sizes a launch's ``block_dim`` argument gives (absent or None or <= 0: 256)."""
        launch_default = self.bindings.warp.launch_block_dim  # 256 in every release 1.10-1.19
        if value is None:
            return ValueSet.of(Const(launch_default, "the launch default"))
        result: set[AbstractValue] = set()
        for v in self.values(file, value, scope, site):
            if isinstance(v, Const) and (v.value is None or (isinstance(v.value, int) and v.value <= 0)):
                result.add(Const(launch_default, "the launch default"))
            elif isinstance(v, Const) and (not isinstance(v.value, int) or isinstance(v.value, bool)):
                result.add(Unknown("not an integer"))
            else:
                result.add(v)
        return ValueSet(frozenset(result))

    # ------------------------------------------------------------------ expressions
    def _values(self, file: FileModel, value: Value, scope: str, site: Site | None) -> ValueSet:
        kind = value.kind
        if kind == "const":
            return ValueSet.of(Const(value.const))
        if kind == "seq":
            if value.unpacked:  # `(*a, b)`: items of `a` before `b`, as many as `a` holds
                return ValueSet.of(Unknown("a sequence display that unpacks another"))
            if value.const is not None:
                return ValueSet.of(Const(value.const))
            items = tuple(self.values(file, item, scope, site) for item in value.items
                          if isinstance(item, Value))
            return ValueSet.of(Sequence(items))
        if kind == "dict":
            if value.const is not None:
                return ValueSet.of(Const(value.const))
            pairs = tuple((self.values(file, k, scope, site), self.values(file, v, scope, site))
                          for k, v in value.items)
            if value.unpacked:  # `{**base, "k": v}`: the items of `base` are the dict's too, where `**` stands
                pairs = self._display_pairs(file, value, pairs, scope, site)
            return ValueSet.of(Mapping(pairs)) if pairs else ValueSet.of(Unknown("a dict"))
        if kind == "unset":
            return ValueSet(frozenset())
        if kind in ("name", "attr"):
            return self._name(file, value, scope, site)
        if kind == "call":
            return self._call(file, value, scope, site)
        if kind == "ifexp":
            return ValueSet.union(self.values(file, item, scope, site) for item in value.items)
        if kind == "binop":
            return self._binop(file, value, scope, site)
        if kind == "subscript" and value.base is not None:
            return self._subscript(file, value, scope, site)
        if kind == "element" and value.base is not None:
            return self._elements(self.values(file, value.base, scope, site), file, value.base, scope, site)
        if kind == "lambda" and value.base is not None:
            return ValueSet.of(Lambda(value.base, file.path, scope))
        if kind == "fstring":
            parts = [self.values(file, item, scope, site) for item in value.items if isinstance(item, Value)]
            if any(p.varies for p in parts):
                return ValueSet.of(Varies("an f-string of a run-time value"))
        return ValueSet.of(Unknown(f"{kind} expression"))

    def _name(self, file: FileModel, value: Value, scope: str, site: Site | None) -> ValueSet:
        if value.text == "__name__":
            return ValueSet.of(Const(file.module, "__name__ of the module the code is written in"))
        if value.base is not None and not value.ref:
            # an attribute of a call result / subscript: `make().kernel`
            base = self.values(file, value.base, scope, site)
            return self._attribute(base, value.text.rpartition(".")[2])
        if value.local:
            head, _, rest = value.text.partition(".")
            found = self._local(file, head, scope, site)
            for attr in rest.split(".") if rest else ():
                found = self._attribute(found, attr)
            return found
        if not value.ref:
            return ValueSet.of(Unknown("unresolved name"))
        if file.read_contexts and (in_order := self._read_in_order(file, value, scope, site)) is not None:
            return in_order
        if "." not in value.ref and value.ref == value.text:
            # bound at module level outside the top-level statements (`for k in ...:` / `if ...:`)
            return self._module_level(file, value.ref)
        instance = self._instance_read(file, value, scope)
        if instance is not None:
            # `self.attr` in a method: a read on an instance, where a descriptor runs its getter
            cls, attrs = instance
            got = self._descriptor_get(cls, attrs[0])
            if got is not None:
                for attr in attrs[1:]:
                    got = self._attribute(got, attr)
                return got
        return self._global(value.ref)

    @staticmethod
    def _instance_read(file: FileModel, value: Value, scope: str) -> tuple[str, list[str]] | None:
        """(class, attributes) when ``value`` reads attributes off the instance a method runs on (``self.a.b``,
        the binder's ``pkg.mod.Cls.a.b``), else None."""
        rest = value.text.partition(".")[2]
        ref = value.ref or ""
        if not rest or not ref.endswith(f".{rest}") or read_off_parameter(file, scope, value.text) != "instance":
            return None
        return ref[: -len(rest) - 1], rest.split(".")

    def _local(self, file: FileModel, name: str, scope: str, site: Site | None) -> ValueSet:
        """A name read in ``scope``: its bindings there, else in the enclosing functions, else the module."""
        current = scope
        while current:
            fn = file.functions.get(current)
            if fn is None:
                break
            found = self._binding_in(file, fn, name, site)
            if found is not None:
                return found
            current = fn.ctx.scope
        return self._global(f"{file.module}.{name}")

    def _binding_in(self, file: FileModel, fn: Function, name: str, site: Site | None
                    ) -> ValueSet | None:
        scope = fn.qualname
        fq = self.bindings.fqname(file, scope)
        bindings = self.bindings.name_assignments(file, scope, name)
        results: list[ValueSet] = []
        for assignment in bindings:
            if assignment.augmented:
                results.append(ValueSet.of(Varies(f"`{name}` is updated in place")))
            elif (made := self._kernel_made_by(file, scope, name, assignment)) is not None:
                results.append(made)
            else:
                results.append(self.values(file, assignment.value, scope, site))
        filled = self._filled_dict(file, scope, name, results, site)
        if filled is not None:
            results.append(filled)
        param = next((p for p in fn.params if p.name == name), None)
        if param is not None:
            passed = self.parameter(file, fn, name, site if site is not None and site.function == fq else None)
            if any(_replaces_none(assignment, name) for assignment in bindings):
                # `if p is None: p = default` in the body: the reads after it never see the parameter's None
                passed = ValueSet(frozenset(v for v in passed if not (isinstance(v, Const) and v.value is None)))
            results.append(passed)
        if results:
            return ValueSet.union(results)
        for index, kernel in enumerate(self.kernels_of(file)):
            if kernel.ctx.scope == scope and ((kernel.name == name and kernel.form == "decorator")
                                              or name in kernel.assigned_to):
                return ValueSet.of(KernelRef(file.path, index, f"kernel `{kernel.name}` defined in {scope}()"))
        nested = file.functions.get(f"{scope}.{name}")
        if nested is not None:
            return ValueSet.of(self._function_ref(file, nested))
        if f"{scope}.{name}" in file.classes:
            return ValueSet.of(ClassRef(f"{file.module}.{scope}.{name}"))
        if name in fn.locals:
            return ValueSet.of(Unknown(f"`{name}` is bound in a way not followed"))
        return None

    def is_memoized(self, fn: Function) -> bool:
        """Calls of ``fn`` with arguments it saw before return what it returned then, recognised by behaviour:
        a memoising decorator (``functools.cache`` / ``lru_cache``, or a project decorator whose wrapper so
        behaves), or a body that stores its result where it outlives the call and returns the stored one (a
        dict cache under a key computed from the arguments, an ``if self._k is None:`` / module singleton guard).
        A cache under a key that never repeats (``object()``, a counter) keeps nothing for a later call."""
        key = ("memoized", id(fn))
        if key in self._chosen:
            self.recorder.hit(self._chosen_reads, key)
            return self._chosen[key]
        self._chosen[key] = False  # cycle guard
        reads = self.recorder.open()
        try:
            file = self._file_of(fn)
            found = any(d in MEMOIZING_DECORATORS for d in fn.decorators)
            if not found and file is not None:
                found = self._stores_result(file, fn) or any(
                    self._memoizing_decorator(file, fn, d) for d in fn.decorator_values)
        finally:
            self.recorder.close(reads)
        self._chosen[key] = found
        if reads is not None:
            self._chosen_reads[key] = reads
        return found

    def memoized_per_instance(self, fn: Function) -> bool:
        """``fn`` is a memoised method whose memory belongs to the instance: it stores on ``self`` (``if
        self._k is None: self._k = ...``, ``self._cache[key] = ...``), or a memoising decorator keys its calls
        by ``self`` among the arguments. A new instance remembers nothing, so its first call makes anew."""
        if fn.class_name is None or not fn.params or not self.is_memoized(fn):
            return False
        me = fn.bound_parameter
        if fn.binds != "instance" or me is None:
            return False
        if any(d in MEMOIZING_DECORATORS for d in fn.decorators):
            return True
        file = self._file_of(fn)
        return file is not None and any(
            a.ctx.scope == fn.qualname and a.target.text.startswith(f"{me}.") for a in file.assignments)

    def _file_of(self, fn: Function) -> FileModel | None:
        return self.bindings.file_of_function(fn)

    def _memoizing_decorator(self, file: FileModel, fn: Function, decorator: Value) -> bool:
        """A project decorator returning a wrapper that memoises (``def memo(f): ... return wrapper``)."""
        if decorator.kind not in ("name", "attr") or self.bindings.is_warp_api(decorator.ref):
            return False
        for value in self.values(file, decorator, fn.ctx.scope):
            target = self.bindings.function(value.fqname) if isinstance(value, FunctionRef) else None
            if target is None:
                continue
            owner, maker = target
            for returned in maker.returns:
                wrapper = owner.functions.get(f"{maker.qualname}.{returned.text}") if returned.kind == "name" else None
                if wrapper is not None and self._stores_result(owner, wrapper):
                    return True
        return False

    def _stores_result(self, file: FileModel, fn: Function) -> bool:
        """``fn`` returns what it stored where it outlives the call: ``CACHE[key] = ...; return CACHE[key]``
        (``CACHE`` module-level or an attribute, ``key`` computed from the arguments), or ``if X is None: X =
        ...; return X`` (``X`` an attribute or a module-level name)."""
        scope = fn.qualname
        params = {p.name for p in fn.params}
        assignments = self.bindings.file_facts.cached(file, file_facts.assignment_tables).by_scope.get(scope, [])

        def lasting(value: Value | None) -> bool:  # a container or name that outlives the call
            if value is None or value.kind not in ("attr", "name"):
                return False
            if value.kind == "attr" or value.text in file.toplevel:
                return value.text not in params
            # a closure's: bound by a function around this one, which outlives each call of this one
            return (value.text not in params and not self.bindings.name_assignments(file, scope, value.text)
                    and self._is_local_name(file, value.text, fn.ctx.scope))

        def local_bindings(value: Value) -> list[Value]:  # a local read: what was bound to it (`v = CACHE[k]`)
            if value.kind == "name" and value.local and value.text not in params and value.text not in file.toplevel:
                return [a.value for a in self.bindings.name_assignments(file, scope, value.text)]
            return [value]

        for returned in fn.returns:
            for r in local_bindings(returned):
                if r.kind == "subscript" and lasting(r.base):
                    assert r.base is not None
                    if any(a.target.kind == "subscript" and a.target.base is not None
                           and a.target.base.text == r.base.text
                           and self._repeatable(file, a.target.key, scope, params) for a in assignments):
                        return True
                names = {r.text, r.ref or r.text, f"{file.module}.{r.text}"}
                if lasting(r) and any(a.target.text == r.text and any(names & t.names() for t in a.ctx.tests)
                                      for a in assignments):
                    return True
        return False

    def _repeatable(self, file: FileModel, key: Value | None, scope: str, params: set[str]) -> bool:
        """A dict key that the same arguments compute again: made of the arguments, constants, module-level
        names, attributes of those and pure builtins of them (not ``object()``, a clock, a counter)."""
        if key is None:
            return False
        return self.budget.step(lambda: self._repeatable_parts(file, key, scope, params), False)

    def _repeatable_parts(self, file: FileModel, key: Value, scope: str, params: set[str]) -> bool:
        if key.kind == "const":
            return True
        if key.kind in ("name", "attr"):
            head = key.text.partition(".")[0]
            if head in params or not key.local:
                return True
            bindings = self.bindings.name_assignments(file, scope, head)
            return len(bindings) == 1 and not bindings[0].augmented and self._repeatable(
                file, bindings[0].value, scope, params)
        if key.kind == "call" and key.ref not in _PURE_BUILTINS:
            return False
        parts = [*key.args, *key.kwargs.values(), key.base, key.key]
        for item in key.items:
            parts.extend(item if isinstance(item, tuple) else (item,))
        if key.kind not in ("call", "seq", "fstring", "binop", "subscript"):
            return False
        return all(self._repeatable(file, p, scope, params) for p in parts if isinstance(p, Value))

    def _function_ref(self, file: FileModel, fn: Function) -> FunctionRef:
        return FunctionRef(self.bindings.fqname(file, fn.qualname), self.is_memoized(fn), f"function {fn.qualname}")

    def _global(self, ref: str) -> ValueSet:
        """A dotted name outside any function: a module, or a name in one (across files)."""
        key = ("global", ref)
        found = self._memo.get(key)
        if found is not None:
            self.recorder.hit(self._memo_reads, key)
            return found
        if key in self._active:
            self._cycles += 1
            return ValueSet(frozenset())
        self._active.add(key)
        cycles, partial = self._cycles, self._partial_reads
        reads = self.recorder.open()
        try:
            result = self._global_uncached(ref)
        finally:
            self.recorder.close(reads)
            self._active.discard(key)
        if self._cycles == cycles and self._partial_reads == partial:
            self._memo[key] = result
            if reads is not None:
                self._memo_reads[key] = reads
        return result

    def _global_uncached(self, ref: str) -> ValueSet:
        if self.bindings.is_warp_api(ref):
            warp_type = self.warp_type(ref)
            return ValueSet.of(warp_type if warp_type is not None else Unknown(f"the Warp object {ref}"))
        ref = self.bindings.canonical_ref(ref)
        owner = self.bindings.owner_of(ref)
        if owner is None:
            return ValueSet.of(Unknown(f"{ref} is not in the project"))
        if ref == owner.module:
            return ValueSet.of(PythonModule(owner.module, "an imported module"))
        parts = ref[len(owner.module) + 1:].split(".")
        for end in range(len(parts) - 1, 0, -1):
            # a name defined inside a function (`def run(): @wp.kernel def k...` resolves to mod.run.k)
            fn = owner.functions.get(".".join(parts[:end]))
            if fn is not None:
                found = self._binding_in(owner, fn, parts[end], None)
                if found is not None:
                    for attr in parts[end + 1:]:
                        found = self._attribute(found, attr)
                    return found
                break
        found = self._module_level(owner, parts[0])
        for attr in parts[1:]:
            found = self._attribute(found, attr)
        return found

    def _warp_types_name(self, ref: str) -> str | None:
        """The name in ``warp._src.types`` of what the Warp API name ``ref`` is bound to: a public spelling of
        its own (``warp.vec`` in 1.10, ``warp.types.float32`` before 1.13), else ``warp.X`` for ``X`` itself (the
        binder writes ``warp._src.types.X`` so; the package re-exports each type under its own name)."""
        warp = self.bindings.warp
        name = warp.public_type_names.get(ref)
        if name is None and ref.count(".") == 1 and ref.startswith("warp."):
            name = ref[5:]
        return name

    def warp_type(self, ref: str) -> WarpType | None:
        """The Warp value type the Warp API name ``ref`` reads (``warp.vec3`` is ``vec3f``), None for another
        name. Aliases resolve as Warp binds them (``vec3 = vec3f`` in its types module, re-exports)."""
        name = self._warp_types_name(ref)
        entry = self.bindings.warp.value_types.get(name) if name is not None else None
        if entry is None:
            return None
        own, constructor, arguments, scalar = entry
        return WarpType(constructor, tuple(arguments), scalar, own, f"the Warp type {own}")

    def warp_scalar_of_python_type(self, name: str) -> WarpType | None:
        """The Warp scalar Warp makes of the Python type ``name`` (``float``, ``int``, ``bool``) where it takes a
        ``dtype`` or infers an argument's type, as its ``type_to_warp`` maps it (the version's tables: ``float`` is
        ``float32``); None for another name."""
        scalar = self.bindings.warp.python_scalar_types.get(name)
        return self.warp_type(f"warp.{scalar}") if scalar is not None else None

    def python_scalar(self, source: Source) -> WarpType | None:
        """The Warp scalar of the Python scalar type ``source`` names (``float``, ``builtins.float``) where Warp
        takes it as a ``dtype`` (``warp_scalar_of_python_type``); None for any other expression, or a name the module
        binds itself (a module-level ``float = ...``, ``def float``, a ``for`` target: not Python's)."""
        value = source.value
        if source.attrs or not source.complete or value.kind not in ("name", "attr") or value.local or not value.ref:
            return None
        ref = value.ref
        if ref.startswith("builtins.") and ref.count(".") == 1:
            name = ref.partition(".")[2]
        elif "." not in ref and ref == value.text and ref not in source.file.toplevel:
            name = ref  # a name the module does not bind (any statement of it): Python's builtin
        else:
            return None
        return self.warp_scalar_of_python_type(name)

    def dtype_values(self, file: FileModel, value: Value | None, scope: str = "", site: Site | None = None
                     ) -> ValueSet:
        """The values a ``dtype`` Warp takes (a type constructor's, an array's) can be as Warp reads it: a Python
        scalar type is the Warp scalar Warp canonicalises it to (``vector(3, float)`` is ``vec3f``,
        ``python_scalar``), wherever the expression takes it from (``sources``: names, parameters at their call
        sites, returns); every other source is its values."""
        sources = self.sources(file, value, scope, site)
        scalars = [self.python_scalar(s) for s in sources]
        if all(scalar is None for scalar in scalars):
            return self.values(file, value, scope, site)
        parts: list[ValueSet] = []
        for source, scalar in zip(sources, scalars, strict=True):
            if scalar is not None:
                parts.append(ValueSet.of(scalar))
                continue
            found = self.values(source.file, source.value, source.scope, source.site)
            for attr in source.attrs:
                found = self._attribute(found, attr)
            if not source.complete:
                found = ValueSet.union([found, ValueSet.of(Unknown("a dtype followed past the bounds"))])
            parts.append(found)
        return ValueSet.union(parts)

    def _warp_type_made(self, file: FileModel, value: Value, scope: str, site: Site | None) -> ValueSet | None:
        """``wp.types.vector(length=3, dtype=wp.float32)`` (and ``matrix``, ``quaternion``, ``transformation``):
        the type it makes, one per scalar its ``dtype`` can be, when every other argument is one literal and
        ``dtype`` a known Warp scalar type or a Python one Warp maps to one (``dtype_values``). None when the call
        is no such constructor; unknown when an argument is not known."""
        warp = self.bindings.warp
        constructor = self._warp_types_name(value.ref or "")
        params = warp.value_type_constructors.get(constructor or "")
        if constructor is None or params is None:
            return None
        # a `*x` / `**x` argument is left out of the call's arguments: a parameter it fills stays unbound here
        if len(value.args) > len(params) or not set(value.kwargs) <= set(params):
            return ValueSet.of(Unknown(f"{value.text}: arguments not followed"))
        bound = dict(zip(params, value.args, strict=False)) | dict(value.kwargs)
        if "dtype" not in bound or len(bound) != len(params):
            return ValueSet.of(Unknown(f"{value.text}: a generic or incomplete type"))
        arguments = []
        for param in params:
            if param == "dtype":
                continue
            one, literal = self.values(file, bound[param], scope, site).single_constant()
            if not one:
                return ValueSet.of(Unknown(f"{value.text}: `{param}` is not one literal"))
            arguments.append(literal)
        scalars = self.dtype_values(file, bound["dtype"], scope, site)
        made: set[AbstractValue] = set()
        for scalar in scalars:
            if not (isinstance(scalar, WarpType) and not scalar.constructor):
                made.add(Unknown(f"{value.text}: a dtype that is not a known Warp scalar type"))
                continue
            identity = (constructor, tuple(arguments), scalar.scalar)
            own = next((entry[0] for entry in warp.value_types.values() if tuple(entry[1:]) == identity), "")
            made.add(WarpType(*identity, own, f"{value.text}: the Warp type {own or constructor}"))
        return ValueSet(frozenset(made))

    def _read_in_order(self, file: FileModel, value: Value, scope: str, site: Site | None) -> ValueSet | None:
        """A read of a module-level name of ``file`` whose value depends on where it is read, as Python reads it
        (``bound_when_read``); None where no binding certainly ran first (then it is any of its bindings)."""
        bound = self.bound_when_read(file, value, scope, site)
        if bound is None:
            return None
        return ValueSet.union(self._assigned(file, at_scope, value.text, a, at) for at_scope, a, at in bound)

    def bound_when_read(self, file: FileModel, value: Value, scope: str, site: Site | None
                        ) -> list[tuple[str, Assignment, Site | None]] | None:
        """The assignments (each with its scope and the site to evaluate it at) one of which a read of a
        module-level name of ``file`` sees, where the module binds the name more than once or a function rebinds
        it through ``global`` (``FileModel.read_contexts``): what the statements of ``scope`` that ran before
        the read bound it to (``_bound_when``). None where that is not known: the read is any binding."""
        read = file.read_contexts.get(value.span) if value.kind == "name" else None
        if read is None or read.scope != scope or value.ref != f"{file.module}.{value.text}":
            return None
        return self._bound_when(file, value.text, file, scope, read, site, 0)

    def _bound_when(self, owner: FileModel, name: str, file: FileModel, scope: str, read: Context,
                    site: Site | None, callers: int) -> list[tuple[str, Assignment, Site | None]] | None:
        """What binds the module-level ``name`` of ``owner`` when the statement ``read`` of ``scope`` (in
        ``file``, run at ``site``) runs: the last of the scope's statements that binds it and certainly ran
        before (``statement_order.always_before``), with every binding that may run between them; with none in
        the scope, what bound it when the call at ``site`` ran, read the same way in the caller. None when
        neither tells."""
        rebindings = self._rebindings(owner, name, file, scope, site)
        last: Context | None = None
        for statement, _, certain in rebindings:
            if certain and always_before(statement, read) and (last is None or statement.order > last.order):
                last = statement
        found = [binding for statement, bound, _ in rebindings
                 if (last is not None and statement.order == last.order) or may_run_between(statement, last, read)
                 for binding in bound]
        if last is None:
            call = site.call if site is not None else None
            if (not scope or site is None or call is None or callers >= MAX_SITE_CHAIN
                    or site.function != self.bindings.fqname(file, scope)):
                return None
            on_entry = self._bound_when(owner, name, site.file, site.scope, call.ctx, site.parent, callers + 1)
            if on_entry is None:
                return None
            found += on_entry
        return found

    def _rebindings(self, owner: FileModel, name: str, file: FileModel, scope: str, site: Site | None
                    ) -> list[tuple[Context, list[tuple[str, Assignment, Site | None]], bool]]:
        """The statements of ``scope`` (in ``file``) that may bind the module-level ``name`` of ``owner``, each
        with the assignments it runs and whether it binds the name whenever it runs: an assignment (at module
        level, or in a function that declares the name ``global``), a call of a function that rebinds it
        through ``global`` (at this call: the setter's parameters bound from its arguments), a call of a
        function from which such a setter may be called (any of the setters' bindings, not certainly)."""
        found: list[tuple[Context, list[tuple[str, Assignment, Site | None]], bool]] = []
        fn = file.functions.get(scope) if scope else None
        if file is owner and (not scope or (fn is not None and name in fn.declared_global)):
            found += [(a.ctx, [(scope, a, site)], True) for a in self.bindings.name_assignments(file, scope, name)]
        setters: dict[str, list[tuple[str, Assignment]]] = {}
        for setter_scope, assignment in self.bindings.global_assignments(owner, name):
            setters.setdefault(self.bindings.fqname(owner, setter_scope), []).append((setter_scope, assignment))
        if not setters:
            return found
        reaching: frozenset[str] | None = None  # walked up from the setters only when a call is not one
        for call in self.bindings.calls_in(file, scope):
            callee = self.bindings.canonical_function(self.bindings.callee_of(file, call))
            if callee in setters:
                at = self.enter(file, scope, call, callee, site)
                setter = self.bindings.function(callee)
                certain = setter is not None and any(binds_whenever_run(a.ctx, setter[1]) for _, a in setters[callee])
                found.append((call.ctx, [(setter_scope, a, at) for setter_scope, a in setters[callee]], certain))
                continue
            if reaching is None:
                reaching = self._calling_setters(owner, name, frozenset(setters))
            if callee in reaching:
                found.append((call.ctx, [(setter_scope, a, None) for bound in setters.values()
                                         for setter_scope, a in bound], False))
        return found

    def _calling_setters(self, owner: FileModel, name: str, setters: frozenset[str]) -> frozenset[str]:
        """The project's functions from which one of ``setters`` may be called, however far down."""
        key = ("calling setters", owner.path, name)
        if key in self._chosen_sets:
            self.recorder.hit(self._chosen_reads, key)
            return self._chosen_sets[key]
        reads = self.recorder.open()
        try:
            found: set[str] = set()
            pending = list(setters)
            while pending:
                for caller_file, call in self.bindings.callers(pending.pop()):
                    caller_scope = call.ctx.scope
                    if caller_scope:
                        caller = self.bindings.canonical_function(self.bindings.fqname(caller_file, caller_scope))
                        if caller not in found:
                            found.add(caller)
                            pending.append(caller)
        finally:
            self.recorder.close(reads)
        result = self._chosen_sets[key] = frozenset(found)
        if reads is not None:
            self._chosen_reads[key] = reads
        return result

    def _assigned(self, file: FileModel, scope: str, name: str, assignment: Assignment, site: Site | None
                  ) -> ValueSet:
        """What ``name = ...`` (``assignment``, written in ``scope``) binds the name to, at ``site``."""
        if assignment.augmented:
            return ValueSet.of(Varies(f"`{name}` is updated in place"))
        made = self._kernel_made_by(file, scope, name, assignment)
        return made if made is not None else self.values(file, assignment.value, scope, site)

    def _module_level(self, owner: FileModel, name: str) -> ValueSet:
        # its module-level bindings, and those of functions that declare it `global` (a setter), which bind it
        # whenever they run
        bound = [("", a) for a in self.bindings.name_assignments(owner, "", name)]
        results = [self._assigned(owner, scope, name, assignment, None)
                   for scope, assignment in bound + self.bindings.global_assignments(owner, name)]
        if results:
            return ValueSet.union(results)
        if name == "__name__":  # `pkg.kernels.__name__` read through an import: that module's name
            return ValueSet.of(Const(owner.module, f"__name__ of module {owner.module}"))
        for index, kernel in enumerate(self.kernels_of(owner)):
            if kernel.ctx.scope == "" and ((kernel.name == name and kernel.form == "decorator")
                                           or name in kernel.assigned_to):
                return ValueSet.of(KernelRef(owner.path, index, f"kernel `{kernel.name}` of {owner.module}"))
        fn = owner.functions.get(name)
        if fn is not None:
            return ValueSet.of(self._function_ref(owner, fn))
        if name in owner.classes:
            return ValueSet.of(ClassRef(f"{owner.module}.{name}", f"class {name}"))
        for imp in owner.imports:  # a re-export: `from .kernels import step` in a package __init__
            if imp.ctx.scope:
                continue
            for imported, alias in imp.names:
                if alias == name:
                    return self._global(f"{imp.module}.{imported}" if imp.module else imported)
            if imp.alias == name and not imp.names:
                return self._global(imp.module if "." not in imp.module or imp.alias != imp.module.partition(".")[0]
                                    else imp.alias)
        if name == "__name__":  # `kernels.__name__` read through an imported module
            return ValueSet.of(Const(owner.module, f"__name__ of {owner.module}"))
        submodule = self.bindings.module(f"{owner.module}.{name}")
        if submodule is not None:
            return ValueSet.of(PythonModule(submodule.module, "a submodule"))
        return ValueSet.of(Unknown(f"{owner.module}.{name} is not bound at module level"))

    def _attribute(self, base: ValueSet, attr: str) -> ValueSet:
        results: list[ValueSet] = []
        for v in base:
            got = self._descriptor_get(v.cls, attr) if isinstance(v, Instance) else None
            constructed = self._constructed_attribute(v, attr) if isinstance(v, Instance) else None
            if got is not None:
                results.append(got)
            elif constructed is not None:
                results.append(constructed)
            elif isinstance(v, ClassRef) and self._enum_member(v.fqname, attr):
                results.append(ValueSet.of(EnumMember(v.fqname, attr, f"member {attr} of enum {v.fqname}")))
            elif isinstance(v, EnumMember):
                results.append(self._enum_member_attribute(v, attr))
            elif isinstance(v, Namespace):
                given = dict(v.attrs).get(attr)
                if given is None or attr in self.bindings.attribute_names_assigned():
                    # not made with it, or the project writes an attribute of that name on some object
                    results.append(ValueSet.of(Unknown(f"attribute `{attr}` of a namespace")))
                else:
                    results.append(given)
            elif isinstance(v, (Instance, ClassRef)):
                results.append(self._class_attribute(v.cls if isinstance(v, Instance) else v.fqname, attr))
            elif isinstance(v, PythonModule) and attr == "__name__":
                results.append(ValueSet.of(Const(v.name, f"__name__ of module {v.name}")))
            elif isinstance(v, PythonModule):
                results.append(self._global(f"{v.name}.{attr}"))
            elif isinstance(v, Varies):
                results.append(ValueSet.of(v))
            elif attr in self.bindings.warp.array_extents:
                # a count of the data an array holds (Warp's array documents these as integers): a different
                # number per array, so per call of the code that reads it
                results.append(ValueSet.of(Varies(f"`.{attr}` of an array: known at run time")))
            else:
                results.append(ValueSet.of(Unknown(f"attribute `{attr}` not followed")))
        return ValueSet.union(results) if results else ValueSet.of(Unknown(f"attribute `{attr}`"))

    def _enum_member(self, cls: str, attr: str) -> bool:
        """``cls.attr`` is a member of an ``enum.Enum`` class: a name its class body assigns, in a class whose bases
        lead to ``enum.Enum`` or ``enum.Flag`` with no ``int``/``str`` mixed in (an ``IntEnum``'s or ``StrEnum``'s
        member is an int or str equal to its value, as read now)."""
        cls = self.bindings.canonical_ref(cls)
        owner = self.bindings.owner_of(cls)
        if owner is None or not self._pure_enum(cls):
            return False
        qual = cls[len(owner.module) + 1:]
        return not attr.startswith("_") and f"{qual}.{attr}" not in owner.functions and bool(
            self._class_body_bindings(owner, qual, attr))

    def _class_body_bindings(self, owner: FileModel, qual: str, attr: str) -> list[tuple[FileModel, Assignment]]:
        """The plain ``attr = ...`` statements of the class ``qual``'s own body (``owner``'s)."""
        scope = qual.rpartition(".")[0]  # the class body's statements sit in the scope around the class
        return [(f, a) for f, a in self.bindings.attribute_assignments(f"{owner.module}.{qual}.{attr}")
                if a.ctx.scope == scope and not a.augmented]

    def _pure_enum(self, cls: str, _seen: frozenset[str] = frozenset()) -> bool:
        """``cls`` derives from ``enum.Enum`` (or ``enum.Flag``) through its bases, none of them ``int``, ``str``
        or an enum of those."""
        owner = self.bindings.owner_of(cls)
        if owner is None or cls in _seen:
            return False
        bases = owner.classes.get(cls[len(owner.module) + 1:], ())
        if any(b in _MIXED_ENUM_BASES for b in bases):
            return False
        return any(b in _PURE_ENUM_BASES or (self.bindings.is_class(b) and self._pure_enum(
            self.bindings.canonical_ref(b), _seen | {cls})) for b in bases)

    def _enum_member_attribute(self, member: EnumMember, attr: str) -> ValueSet:
        """What ``member.attr`` reads: the value its class body gives it (``.value``), its name (``.name``)."""
        if attr == "value":
            return self._class_attribute(member.cls, member.name)
        if attr == "name":
            return ValueSet.of(Const(member.name, f"the name of member {member.name}"))
        return ValueSet.of(Unknown(f"attribute `{attr}` of an enum member not followed"))

    def _descriptor_get(self, cls: str, attr: str, _seen: frozenset[str] = frozenset()) -> ValueSet | None:
        """``obj.attr`` read on an instance of ``cls`` when the class attribute is a descriptor: Python runs its
        getter and the read is what the getter returns. A method decorated with a getter descriptor
        (``@property``, ``@functools.cached_property``), a class attribute ``property(getter)``, or an instance of
        a project class defining ``__get__``. None when the attribute is no descriptor (a plain attribute, a
        method: then the read is the attribute itself)."""
        key = ("descriptor", cls, attr)
        if key in self._memo:
            self.recorder.hit(self._memo_reads, key)
            return self._memo[key] if self._memo[key].items else None
        reads = self.recorder.open()
        try:
            return self._descriptor_get_uncached(key, cls, attr, _seen, reads)
        finally:
            self.recorder.close(reads)

    def _descriptor_get_uncached(self, key: tuple, cls: str, attr: str, _seen: frozenset[str], reads: Reads | None
                                 ) -> ValueSet | None:
        cls = self.bindings.canonical_ref(cls)
        owner = self.bindings.owner_of(cls)
        if owner is None or cls in _seen:
            return None
        qual = cls[len(owner.module) + 1:]
        partial, cycles, cut = self._partial_reads, self._cycles, self.budget.cuts
        found: ValueSet | None = None
        method = owner.functions.get(f"{qual}.{attr}")
        if method is not None:
            if is_getter(method):
                found = self.returns(self.bindings.fqname(owner, qual + "." + attr), None)
        else:
            getters: list[ValueSet] = []
            body = [(f, a) for f, a in self.bindings.attribute_assignments(f"{owner.module}.{qual}.{attr}")
                    if not a.ctx.scope.startswith(f"{qual}.") and not a.augmented]
            for f, a in body:  # the class body's own statements: a method's `self.attr = ...` is no descriptor
                if a.value.kind == "call" and a.value.ref in GETTER_DESCRIPTORS and a.value.args:
                    argument = a.value.args[0]
                    in_body = owner.functions.get(f"{qual}.{argument.text}")  # a name the class body bound
                    for getter in (ValueSet.of(self._function_ref(owner, in_body)) if in_body is not None
                                   else self.values(f, argument, a.ctx.scope, None)):
                        if isinstance(getter, FunctionRef):
                            getters.append(self.returns(getter.fqname, None))
                        elif isinstance(getter, Lambda):
                            lambda_file = self.bindings.file_at(getter.path)
                            if lambda_file is not None:
                                getters.append(self.values(lambda_file, getter.body, getter.scope, None))
                    continue
                for v in self.values(f, a.value, a.ctx.scope, None):
                    get = self._method_of(v.cls, "__get__") if isinstance(v, Instance) else None
                    if get is not None:
                        getters.append(self.returns(get, None))
            if getters:
                found = ValueSet.union(getters)
            elif not body:
                for base in owner.classes.get(qual, ()):
                    if self.bindings.owner_of(base) is not None:
                        found = self._descriptor_get(base, attr, _seen | {cls})
                        if found is not None:
                            break
        if (self._partial_reads, self._cycles, self.budget.cuts) == (partial, cycles, cut):
            self._memo[key] = found if found is not None else ValueSet(frozenset())
            if reads is not None:
                self._memo_reads[key] = reads
        return found

    def _method_of(self, cls: str, name: str, _seen: frozenset[str] = frozenset()) -> str | None:
        """The fqname of method ``name`` a project class defines or inherits from a project base."""
        cls = self.bindings.canonical_ref(cls)
        owner = self.bindings.owner_of(cls)
        if owner is None or cls in _seen:
            return None
        qual = cls[len(owner.module) + 1:]
        if f"{qual}.{name}" in owner.functions:
            return self.bindings.fqname(owner, f"{qual}.{name}")
        for base in owner.classes.get(qual, ()):
            found = self._method_of(base, name, _seen | {cls})
            if found is not None:
                return found
        return None

    def _class_attribute(self, cls: str, attr: str, _seen: frozenset[str] = frozenset()) -> ValueSet:
        """Everything ``cls.attr`` / ``self.attr`` can be: class body, methods, constructor keywords, bases."""
        key = ("class attribute", cls, attr)
        found = self._memo.get(key)
        if found is not None:
            self.recorder.hit(self._memo_reads, key)
            return found
        reads = self.recorder.open()
        try:
            return self._class_attribute_uncached(key, cls, attr, _seen, reads)
        finally:
            self.recorder.close(reads)

    def _class_attribute_uncached(self, key: tuple, cls: str, attr: str, _seen: frozenset[str], reads: Reads | None
                                  ) -> ValueSet:
        cls = self.bindings.canonical_ref(cls)
        owner = self.bindings.owner_of(cls)
        if owner is None or cls in _seen:
            return ValueSet.of(Unknown(f"class {cls} is not in the project"))
        qual = cls[len(owner.module) + 1:]
        target = f"{owner.module}.{qual}.{attr}"
        partial = self._partial_reads
        results: list[ValueSet] = []
        annotation: str | None = None
        for assignment in self.bindings.attribute_assignments(target):
            file, a = assignment
            annotation = annotation or a.annotation
            if a.augmented:
                results.append(ValueSet.of(Varies(f"`{attr}` is updated in place")))
            else:
                results.append(self.values(file, a.value, a.ctx.scope, None))
        # dataclass-style `Settings(threads=64)`: only a class without its own __init__ takes fields as keywords
        constructions = [] if f"{qual}.__init__" in owner.functions else self.bindings.constructions(cls)
        for file, call in constructions:
            if attr in call.kwargs:
                results.append(self.values(file, call.kwargs[attr], call.ctx.scope, None))
            elif call.args or call.has_star_args:
                results.append(ValueSet.of(Unknown(f"{qual}(...) passes arguments by position")))
        if annotation and not any(r.items for r in results):
            results.append(self._instance_of(annotation, f"`{attr}: {annotation.rpartition('.')[2]}`"))
        method = owner.functions.get(f"{qual}.{attr}")
        if method is not None:
            results.append(ValueSet.of(self._function_ref(owner, method)))
        if not results:
            for base in owner.classes.get(qual, ()):
                if self.bindings.owner_of(base) is not None:
                    results.append(self._class_attribute(base, attr, _seen | {cls}))
        result = ValueSet.union(results) if results else ValueSet.of(Unknown(f"{qual}.{attr} is not bound"))
        if annotation and result.items and all(isinstance(v, Unknown) for v in result):
            result = self._instance_of(annotation, f"`{attr}: {annotation.rpartition('.')[2]}`")
        if self._partial_reads == partial:
            self._memo[key] = result
            if reads is not None:
                self._memo_reads[key] = reads
        return result

    def _constructed_attribute(self, instance: Instance, attr: str) -> ValueSet | None:
        """``obj.attr`` of an instance whose construction is known: what that construction's own arguments give
        it (``FAMILY = Family(single=k)``: ``FAMILY.single`` is ``k``, not the ``single`` of every ``Family``
        the project makes), as ``_construction_stores`` finds it. None when the construction does not decide it:
        then every binding of the attribute counts (``_class_attribute``)."""
        site = instance.made
        if isinstance(site, Replacement):
            changed = dict(site.changes).get(attr)
            return changed if changed is not None else self._constructed_attribute(site.original, attr)
        stores = self._construction_stores(instance.cls, site, attr) if isinstance(site, Site) else None
        if stores is None:
            return None
        return ValueSet.union([self.values(f, value, scope, at) for f, value, scope, at in stores])

    def _construction_stores(self, cls: str, site: Site, attr: str
                             ) -> list[tuple[FileModel, Value, str, Site | None]] | None:
        """The expressions (file, value, scope, site) that decide ``obj.attr`` of an instance of ``cls`` made at
        ``site``: a keyword field of a class without its own ``__init__`` (a dataclass), else its class-body
        default; with an ``__init__``, what it stores in ``self.attr`` from this call's arguments (and the
        class-body default where ``__init__`` may leave it unset). None when the construction does not decide it
        (set in another method too, positional fields, bases)."""
        cls = self.bindings.canonical_ref(cls)
        owner = self.bindings.owner_of(cls)
        if owner is None:
            return None
        qual = cls[len(owner.module) + 1:]
        if any(self.bindings.owner_of(b) is not None for b in owner.classes.get(qual, ())):
            return None  # a project base may bind it too
        bindings = self.bindings.attribute_assignments(f"{owner.module}.{qual}.{attr}")
        # the class body's own statements are in the scope around it; a method's are in `Cls.method`
        in_method = [a.ctx.scope for _, a in bindings if a.ctx.scope.startswith(f"{qual}.")]
        init = f"{qual}.__init__"
        if init not in owner.functions:
            if attr in site.kwargs:
                return [(site.file, site.kwargs[attr], site.scope, site.parent)]
            if site.args or site.star or in_method:
                return None
            return [(f, a.value, a.ctx.scope, None) for f, a in bindings] or None
        if any(scope != init for scope in in_method) or any(a.augmented for _, a in bindings):
            return None
        stored = [(f, a) for f, a in bindings if a.ctx.scope == init]
        if not stored:
            return None
        found: list[tuple[FileModel, Value, str, Site | None]] = [(f, a.value, a.ctx.scope, site) for f, a in stored]
        if all(a.ctx.conditions or a.ctx.try_index is not None or a.ctx.exit_branch is not None for _, a in stored):
            # __init__ may leave it unset: the class-body default stays then
            found += [(f, a.value, a.ctx.scope, None) for f, a in bindings if a.ctx.scope != init]
        return found

    def _instance_of(self, cls: str, reason: str) -> ValueSet:
        if self.bindings.owner_of(cls) is not None and self.bindings.is_class(cls):
            return ValueSet.of(Instance(cls, reason))
        return ValueSet.of(Unknown(reason))

    # ------------------------------------------------------------------ parameters and calls
    def parameter(self, file: FileModel, fn: Function, name: str, site: Site | None) -> ValueSet:
        """The values parameter ``name`` of ``fn`` has: at ``site``, or at every call site."""
        param = next((p for p in fn.params if p.name == name), None)
        if param is None:
            return ValueSet.of(Unknown(f"`{name}` is not a parameter"))
        if site is not None:
            return self._bound_at(file, fn, param.name, site)
        fq = self.bindings.fqname(file, fn.qualname)
        sites = self.bindings.call_sites(fq)
        results: list[ValueSet] = []
        for caller_file, call in sites[:MAX_SITES]:
            at = self.site(caller_file, call.ctx.scope, call, fq, None)
            results.append(self._bound_at(file, fn, param.name, at))
        if len(sites) > MAX_SITES:
            results.append(ValueSet.of(Unknown(f"more than {MAX_SITES} call sites")))
        if not sites and (per_process := self._per_process(file, fn, name)) is not None:
            results.append(per_process)
        elif not sites:
            if param.default is not None:
                results.append(self.values(file, param.default, fn.ctx.scope, None))
            else:
                results.append(ValueSet.of(Unknown(f"no call in the project passes `{name}`", external=True)))
        result = ValueSet.union(results)
        if param.annotation_ref and all(isinstance(v, Unknown) for v in result):
            instance = self._instance_of(param.annotation_ref, f"`{name}: {param.annotation_ref.rpartition('.')[2]}`")
            if instance.known:
                return instance
        return result

    def _per_process(self, file: FileModel, fn: Function, name: str) -> ValueSet | None:
        """A parameter asv passes, one combination of the class's ``params`` per process (``asv_parameter``):
        one ``PerProcess`` value whose choices are its axis's items."""
        found = asv_parameter(file, fn, name)
        if found is None:
            return None
        source, assignment, axis = found
        choices: list[ValueSet] = []
        for v in self.values(file, assignment.value, assignment.ctx.scope, None):
            axes = _asv_axes(v)
            choices.append(axes[axis] if axes is not None and axis < len(axes)
                           else ValueSet.of(Unknown(f"asv's `params` axis {axis} is not known statically")))
        return ValueSet.of(PerProcess(source, ValueSet.union(choices),
                                      f"`{name}`: one of asv's `params` per process"))

    def _bound_at(self, file: FileModel, fn: Function, name: str, site: Site) -> ValueSet:
        param = next((p for p in fn.params if p.name == name), None)
        if param is not None and param.star:
            return self._star_bound_at(fn, param, site)
        argument = self.bind(fn, name, site)
        if argument is _DEFAULT:
            param = next(p for p in fn.params if p.name == name)
            assert param.default is not None
            return self.values(file, param.default, fn.ctx.scope, None)
        if argument is None and site.unpacked:
            return self._unpacked_bound(file, fn, name, site)
        if argument is None:
            return ValueSet.of(Unknown(f"`{name}` is passed through *args/**kwargs or not at all"))
        assert isinstance(argument, Value)
        return self.values(site.file, argument, site.scope, site.parent)

    def _unpacked_bound(self, file: FileModel, fn: Function, name: str, site: Site) -> ValueSet:
        """Parameter ``name`` of ``fn``, passed by no plain argument at ``site``, a call that unpacks ``*x`` /
        ``**x``: as Python binds it, the item of a ``*x`` at its position (``f(*(a, b))``), else the item a
        ``**x`` dict holds under its name (``f(**{"k": v})``, ``f(**opts)``), else its default. Unknown, and never
        the default, where what is unpacked is not known to the last item (a sequence of a length not known, a
        dict whose keys are not all known or that is filled after it was made)."""
        index = next(i for i, p in enumerate(fn.params) if p.name == name)
        position = index - 1 if site.fills_first else index
        results: list[ValueSet] = []
        # a parameter after `*args` takes keywords only, and `self` is the instance (never an argument)
        unfilled = any(p.star for p in fn.params[:index]) or position < 0
        # a `*x` of a length not known: which argument the position gets, if any, is not known (nor the default)
        unplaced = False
        if not unfilled:
            for items, open_ended in self._positional_expansions(site):
                if position < len(items):
                    item = items[position]
                    results.append(self.values(site.file, item, site.scope, site.parent) if isinstance(item, Value)
                                   else item)
                elif open_ended:
                    unplaced = True
                else:
                    unfilled = True
        if unplaced:
            results.append(ValueSet.of(Unknown(f"`{name}` may be filled by an unpacked sequence")))
        if unfilled or unplaced:
            found, missing = self._unpacked_keyword(name, site)
            results += found
            if missing and not unplaced:
                param = fn.params[index]
                results.append(self.values(file, param.default, fn.ctx.scope, None) if param.default is not None
                               else ValueSet.of(Unknown(f"`{name}` is not passed")))
        return ValueSet.union(results) if results else ValueSet.of(Unknown(f"`{name}` is not passed"))

    def _positional_expansions(self, site: Site) -> list[tuple[list[Value | ValueSet], bool]]:
        """The positional arguments ``site`` passes, its ``*x`` unpacked in place: one list per combination of
        the sequences each ``*x`` can be (a plain argument as written, an unpacked item as its value set), and
        whether the list may go on with items not known (a ``*x`` that is not a sequence of known length, and
        everything after it)."""
        stars = [u for u in site.unpacked if u.text == "*"]
        expansions: list[tuple[list[Value | ValueSet], bool]] = [([], False)]
        for position in range(len(site.args) + 1):
            for unpack in (u for u in stars if u.const == position):
                sequences = self._unpacked_sequences(site, unpack)
                grown: list[tuple[list[Value | ValueSet], bool]] = []
                for items, open_ended in expansions:
                    if open_ended or sequences is None:
                        grown.append((items, True))
                    else:
                        grown += [([*items, *sequence], False) for sequence in sequences]
                expansions = grown if len(grown) <= MAX_VALUES else [([], True)]
            if position < len(site.args):
                expansions = [(items if open_ended else [*items, site.args[position]], open_ended)
                              for items, open_ended in expansions]
        return expansions

    def _unpacked_sequences(self, site: Site, unpack: Value) -> list[list[ValueSet]] | None:
        """The items of each sequence a ``*x`` argument can unpack (a tuple or list literal, or a name bound to
        one); None when one of them is not such a sequence, or is written into after it was made (``append``)."""
        if unpack.base is None or any(self._written_after(source) for source in self.sources(
                site.file, unpack.base, site.scope, site.parent)):
            return None
        sequences: list[list[ValueSet]] = []
        for v in self.values(site.file, unpack.base, site.scope, site.parent):
            if isinstance(v, Const) and isinstance(v.value, (tuple, list)):
                sequences.append([ValueSet.of(Const(item)) for item in v.value])
            elif isinstance(v, Sequence):
                sequences.append(list(v.items))
            else:
                return None
        return sequences or None

    def _unpacked_keyword(self, name: str, site: Site) -> tuple[list[ValueSet], bool]:
        """What the ``**x`` arguments of ``site`` pass for the keyword ``name``: the items any of them can hold
        under it (``Unknown`` where a dict is not known to its last key), and whether every one of them is known
        and can lack it (then the parameter takes its default)."""
        found: list[ValueSet] = []
        missing = True
        for unpack in (u for u in site.unpacked if u.text == "**"):
            dicts = self.values(site.file, unpack.base, site.scope, site.parent) if unpack.base is not None \
                else _UNKNOWN
            # a dict written into after it was made holds more than its literal: what it lacks is not known
            filled = any(isinstance(d, Mapping) and d.filled for d in dicts) or (
                unpack.base is not None and any(self._written_after(source) for source in self.sources(
                    site.file, unpack.base, site.scope, site.parent)))
            lacks = False
            for d in dicts:
                items = _keyword_items(d)
                if items is None or filled:
                    found.append(ValueSet.of(Unknown(f"`{name}` may be an item of an unpacked dict not known")))
                    missing = False
                if items is not None:
                    held = [v for k, v in items if k == name]
                    found += held
                    lacks = lacks or not held
            missing = missing and lacks
        return found, missing

    def _star_bound_at(self, fn: Function, param: Param, site: Site) -> ValueSet:
        """``*args`` is the tuple of the positional arguments no named parameter takes, ``**kwargs`` the dict of
        the keywords none takes (Python's binding), with what the call's own ``*x`` / ``**x`` unpack; unknown
        when that is not known to the last item."""
        if site.unpacked:
            return self._star_unpacked(fn, param, site)
        extra = self.star_arguments(fn, param, site)
        if extra is None:
            return ValueSet.of(Unknown(f"`{param.star}{param.name}` of a call that unpacks its arguments"))
        if param.star == "**":
            return ValueSet.of(Mapping(tuple((ValueSet.of(Const(k)), self.values(site.file, v, site.scope,
                                                                                       site.parent))
                                             for k, v in extra)))
        return ValueSet.of(Sequence(tuple(self.values(site.file, a, site.scope, site.parent)
                                          for _, a in extra)))

    def _star_unpacked(self, fn: Function, param: Param, site: Site) -> ValueSet:
        """``*args`` / ``**kwargs`` of ``fn`` at ``site``, a call that unpacks ``*x`` / ``**x``: the items no named
        parameter takes, when every unpacked value is one sequence or dict known to its last item."""
        named = [p for p in fn.params if not p.star]
        unknown = ValueSet.of(Unknown(f"`{param.star}{param.name}` of a call that unpacks what is not known"))
        if param.star == "*":
            expansions = self._positional_expansions(site)
            if len(expansions) != 1 or expansions[0][1]:
                return unknown
            taken = len([p for p in fn.params[:fn.params.index(param)] if not p.star]) - site.fills_first
            return ValueSet.of(Sequence(tuple(
                self.values(site.file, item, site.scope, site.parent) if isinstance(item, Value) else item
                for item in expansions[0][0][max(taken, 0):])))
        names = {p.name for p in named}
        pairs = [(ValueSet.of(Const(k)), self.values(site.file, v, site.scope, site.parent))
                 for k, v in site.kwargs.items() if k not in names]
        for unpack in (u for u in site.unpacked if u.text == "**"):
            dicts = self.values(site.file, unpack.base, site.scope, site.parent) if unpack.base is not None \
                else _UNKNOWN
            items = _keyword_items(next(iter(dicts))) if len(dicts) == 1 else None
            if items is None or any(isinstance(d, Mapping) and d.filled for d in dicts):
                return unknown
            pairs += [(ValueSet.of(Const(k)), v) for k, v in items if k not in names]
        return ValueSet.of(Mapping(tuple(pairs), f"`**{param.name}`"))

    @staticmethod
    def star_arguments(fn: Function, param: Param, site: Site) -> list[tuple[int | str, Value]] | None:
        """What the star parameter ``param`` of ``fn`` collects at ``site``, as (position, argument) for
        ``*args`` (the positional arguments no named parameter takes) and (name, argument) for ``**kwargs``
        (the keywords none takes), as Python binds them; None when the call unpacks ``*x`` / ``**x`` itself."""
        if site.star:
            return None
        named = [p for p in fn.params if not p.star]
        if param.star == "**":
            return [(k, v) for k, v in site.kwargs.items() if k not in {p.name for p in named}]
        taken = len([p for p in fn.params[:fn.params.index(param)] if not p.star]) - site.fills_first
        return list(enumerate(site.args[max(taken, 0):]))

    def _star_literal(self, fn: Function, param: Param, site: Site) -> Value | None:
        """``*args`` / ``**kwargs`` of ``fn`` at ``site`` as the literal Python makes of the call's extra
        arguments (a tuple, a dict: written where the call is), made once per site; None when the call
        unpacks its own."""
        key = (id(site), id(fn), param.name)
        if key not in self._star_literals:
            extra = self.star_arguments(fn, param, site)
            made = None
            if extra is not None and param.star == "**":
                made = Value("dict", text=f"**{param.name}",
                             items=tuple((Value("const", text=repr(k), const=k), v) for k, v in extra))
                self._keyword_dicts.add(id(made))
            elif extra is not None:
                made = Value("seq", text=f"*{param.name}", items=tuple(v for _, v in extra))
            self._star_literals[key] = made
        return self._star_literals[key]

    @staticmethod
    def bind(fn: Function, name: str, site: Site) -> Value | object | None:
        """The argument ``site`` passes for parameter ``name`` of ``fn``; ``_DEFAULT`` when it is
        left to the default; None when it cannot be told (``*args``, not passed, no default)."""
        if name in site.kwargs:
            return site.kwargs[name]
        params = list(fn.params)
        index = next(i for i, p in enumerate(params) if p.name == name)
        position = index - 1 if site.fills_first else index
        if position < 0:
            return None  # `self` itself
        # the plain positional arguments written before a `*x` are at their own positions; those after it are not
        before = next((u.const for u in site.unpacked if u.text == "*"), len(site.args))
        if position < min(before, len(site.args)):
            return site.args[position]
        if site.star:
            return None
        param = params[index]
        return _DEFAULT if param.default is not None else None

    def returns(self, fqname: str, site: Site | None) -> ValueSet:
        found = self.bindings.function(fqname)
        if found is None:
            return ValueSet.of(Unknown(f"{fqname} is not a project function"))
        file, fn = found
        if not fn.returns:
            return ValueSet.of(Const(None, f"{fn.qualname}() returns nothing"))
        return ValueSet.union(self.values(file, r, fn.qualname, site) for r in fn.returns)

    def _call(self, file: FileModel, value: Value, scope: str, site: Site | None) -> ValueSet:
        ref = value.ref
        if self.bindings.is_warp_api(ref):
            return self._warp_call(file, value, scope, site)
        if ref == "functools.partial" and value.args:
            return self.values(file, value.args[0], scope, site)
        if ref == NAMESPACE_CONSTRUCTOR and not value.args and not value.unpacked:
            return ValueSet.of(Namespace(tuple((name, self.values(file, v, scope, site))
                                               for name, v in value.kwargs.items())))
        if ref in FIELD_REPLACERS and len(value.args) == 1 and not value.unpacked:
            return self._replaced(file, value, scope, site)
        if ref == "dict" and not value.args and not value.unpacked and not self._is_local_name(file, ref, scope):
            # `dict(k=v)`: the dict of its keywords
            if not value.kwargs:
                return ValueSet.of(Const({}))
            return ValueSet.of(Mapping(tuple((ValueSet.of(Const(name)), self.values(file, v, scope, site))
                                             for name, v in value.kwargs.items()), "dict(...) of keywords"))
        applied = self._partial_applied(value)
        if applied is not None:
            return self.values(file, applied, scope, site)
        if ref == "getattr" and len(value.args) in (2, 3) and not value.kwargs and not value.unpacked \
                and not self._is_local_name(file, ref, scope):
            return self._getattr(file, value, scope, site)
        if ref == "importlib.import_module" and len(value.args) == 1 and not value.kwargs and not value.unpacked:
            # the module of that absolute name, as an import statement of it binds (a relative name needs the
            # `package` argument: not followed)
            return self._modules_named(self.values(file, value.args[0], scope, site))
        if ref in ("int", "float", "min", "max", "len", "range", "round", "abs"):
            return self._builtin(file, value, scope, site)
        if ref in RANDOM_CHOOSERS and value.args:
            return self._random_choice(file, value, scope, site)
        if ref in ENVIRONMENT_READS and 1 <= len(value.args) <= 2:
            # the environment's string when the variable is set, else the default (None without one); the
            # string is one value for the whole process, not a new one per call: unknown, not varying
            default = (self.values(file, value.args[1], scope, site) if len(value.args) == 2
                       else ValueSet.of(Const(None, "an environment variable not set")))
            return ValueSet.union([ValueSet.of(Unknown("read from the environment")), default])
        if ref is not None and ref.endswith(".get") and 1 <= len(value.args) <= 2 and not value.kwargs:
            got = self._mapping_get(file, value, scope, site)
            if got is not None:
                return got
        if ref is None and value.base is not None and value.base.kind == "call" and is_warp(value.base.ref, "kernel") \
                and not value.base.args and len(value.args) == 1:
            # `wp.kernel(module=..., enable_backward=...)(f)`: the decorator applied later, a kernel of `f`
            kernel = self._kernel_made(file, value.args[0], scope)
            if kernel is not None:
                return kernel
        if ref is not None:
            callees = self._callees_named(file, value, scope, site)
        elif value.base is not None:
            callees = self.values(file, value.base, scope, site)
        else:
            return _UNKNOWN
        results: list[ValueSet] = []
        for callee in callees:
            if isinstance(callee, FunctionRef):
                at = self.enter(file, scope, value, self.bindings.canonical_function(callee.fqname), site)
                results.append(self.returns(callee.fqname, at))
            elif isinstance(callee, ClassRef):
                made = self.enter(file, scope, value, self.bindings.canonical_function(f"{callee.fqname}.__init__"),
                                  site)
                results.append(ValueSet.of(Instance(callee.fqname, f"a {callee.fqname.rpartition('.')[2]}(...)",
                                                    made)))
            elif isinstance(callee, Lambda):
                owner = self.bindings.file_at(callee.path)
                results.append(self.values(owner, callee.body, callee.scope, None) if owner else _UNKNOWN)
            else:
                results.append(ValueSet.of(Unknown(f"the result of {value.text}")))
        return ValueSet.union(results) if results else ValueSet.of(Unknown(f"the result of {value.text}"))

    def _replaced(self, file: FileModel, value: Value, scope: str, site: Site | None) -> ValueSet:
        """``dataclasses.replace(obj, f=v)``: a new instance of the class of each instance ``obj`` can be, whose
        field ``f`` is ``v`` and whose other fields are ``obj``'s (Python makes it by calling that class with
        both); the copy of anything else is not followed."""
        changes = tuple((name, self.values(file, v, scope, site)) for name, v in value.kwargs.items())
        named = ", ".join(name for name, _ in changes) or "nothing"
        return ValueSet.union([
            ValueSet.of(Instance(original.cls, f"a copy of {original.reason or original.cls} with {named} replaced",
                                 Replacement(original, changes)))
            if isinstance(original, Instance) else ValueSet.of(Unknown(f"the result of {value.text}"))
            for original in self.values(file, value.args[0], scope, site)])

    def _modules_named(self, names: ValueSet) -> ValueSet:
        """The modules ``names`` (absolute dotted names) are, as an import of each binds it."""
        return ValueSet.union([self._global(n.value) if isinstance(n, Const) and isinstance(n.value, str) and n.value
                               and not n.value.startswith(".") else ValueSet.of(Unknown("a module named at run time"))
                               for n in names])

    def _getattr(self, file: FileModel, value: Value, scope: str, site: Site | None) -> ValueSet:
        """``getattr(obj, "name")`` reads the attribute as ``obj.name`` does; with a default, what it gives when
        the object has no such attribute may be either (whether it has one is not asked)."""
        names = self.values(file, value.args[1], scope, site)
        base = self.values(file, value.args[0], scope, site)
        results = [self._attribute(base, n.value) if isinstance(n, Const) and isinstance(n.value, str)
                   else ValueSet.of(Unknown("an attribute read by a name not known")) for n in names]
        if len(value.args) == 3:
            results.append(self.values(file, value.args[2], scope, site))
        return ValueSet.union(results)

    def _partial_applied(self, value: Value) -> Value | None:
        """``functools.partial(f, *a, **k)(*b, **kw)`` is the call ``f(*a, *b, **{**k, **kw})``: Python binds a
        partial object's arguments first and lets the call's keywords override its own. None for another call."""
        inner = value.base
        if value.ref is not None or inner is None or inner.kind != "call" or inner.ref != "functools.partial" \
                or not inner.args:
            return None
        key = ("partial applied", id(value))
        found = self._applied.get(key)
        if found is None:
            function, *bound = inner.args
            # the partial's own `*x` come after its function (one position earlier), the call's after its arguments
            unpacked = (*(replace(u, const=u.const - 1) if u.text == "*" else u for u in inner.unpacked),
                        *(replace(u, const=u.const + len(bound)) if u.text == "*" else u for u in value.unpacked))
            found = Value("call", text=value.text, ref=function.ref, local=function.local,
                          args=(*bound, *value.args), kwargs={**inner.kwargs, **value.kwargs},
                          base=None if function.ref else function, span=value.span, unpacked=unpacked)
            self._applied[key] = found
            self._keep.append(value)  # the key holds id(value)
        return found

    def _callees_named(self, file: FileModel, value: Value, scope: str, site: Site | None) -> ValueSet:
        """What the name a call is made through (``value.ref``) can be: a local binding for a bare name that is
        not module-level, else the dotted global."""
        ref = value.ref or ""
        if "." not in ref and ref not in file.toplevel and not value.base:
            return self._local(file, ref, scope, site)
        return self._global(ref)

    def callees_anywhere(self, file: FileModel, call: Value) -> ValueSet | None:
        """What the callee of the call ``call`` can be wherever the call is evaluated, as ``_call`` finds it: a
        dotted or module-level name reads no parameter, so every site gives the same. None when it depends on
        the site (a local name, a callee computed from an expression) or when the answer was cut short."""
        ref = call.ref
        if ref is None or ("." not in ref and ref not in file.toplevel and not call.base):
            return None
        cut = self.budget.cuts
        found = self._global(ref)
        return found if self.budget.cuts == cut else None

    def _warp_call(self, file: FileModel, value: Value, scope: str, site: Site | None) -> ValueSet:
        made_type = self._warp_type_made(file, value, scope, site)
        if made_type is not None:
            return made_type
        if is_warp(value.ref, "constant") and len(value.args) == 1:
            return self.values(file, value.args[0], scope, site)
        if is_warp(value.ref, "get_module"):
            # Warp looks the module up by the name string itself: a Python module or a wp.Module passed here is
            # a new key, a new empty module (warp-facts §3), not the module of that name
            argument = value.args[0] if value.args else value.kwargs.get("name")
            names = {v.value for v in self.values(file, argument, scope, site)
                     if isinstance(v, Const) and isinstance(v.value, str)}
            if names:
                return ValueSet(frozenset(WarpModule(n, "wp.get_module(...)") for n in names))
            return ValueSet.of(Unknown("wp.get_module of something other than a name"))
        if is_warp(value.ref, "overload"):
            # wp.overload(k, types) returns k's concrete instance: a Kernel of k's module (warp-facts §6)
            generic = value.kwargs.get("kernel") or (value.args[0] if value.args else None)
            if generic is not None:
                found = self.values(file, generic, scope, site)
                kernels = [v for v in found if isinstance(v, KernelRef)]
                if kernels and len(kernels) == len(found.items):
                    return ValueSet(frozenset(KernelRef(k.path, k.index, f"wp.overload(...) of {generic.text}")
                                              for k in kernels))
            return ValueSet.of(Unknown("wp.overload of a kernel not followed"))
        if is_warp(value.ref, "kernel", "Kernel") and value.args:
            made = self._kernel_made(file, value.args[0], scope)
            if made is not None:
                return made
        return ValueSet.of(Unknown(f"the result of {value.ref}()"))

    def _kernel_made_by(self, file: FileModel, scope: str, name: str, assignment: Assignment) -> ValueSet | None:
        """``name = wp.kernel(f, ...)``: the kernel object that statement makes. Each call makes its own (two
        calls of one function are two objects, and a generic kernel's instances live on its object)."""
        if assignment.value.kind != "call":
            return None
        for index, kernel in enumerate(self.kernels_of(file)):
            if (kernel.ctx.scope == scope and kernel.form != "decorator" and kernel.target is not None
                    and kernel.ctx.order == assignment.ctx.order and name in kernel.assigned_to):
                return ValueSet.of(KernelRef(file.path, index, f"wp.kernel({kernel.target.text})"))
        return None

    def _kernel_made(self, file: FileModel, function: Value, scope: str) -> ValueSet | None:
        """The kernel ``wp.kernel(function, ...)`` (or ``wp.kernel(...)(function)``) written in ``scope`` makes."""
        for index, kernel in enumerate(self.kernels_of(file)):
            if kernel.ctx.scope == scope and kernel.form != "decorator" and kernel.target is not None and (
                    kernel.target is function or kernel.target.text == function.text):
                return ValueSet.of(KernelRef(file.path, index, f"wp.kernel({function.text})"))
        return None

    def _builtin(self, file: FileModel, value: Value, scope: str, site: Site | None) -> ValueSet:
        ref = value.ref
        args = [self.values(file, a, scope, site) for a in value.args]
        if ref == "len" and args:
            lengths = {len(v.value) for s in args for v in s if isinstance(v, Const) and isinstance(v.value, tuple)}
            if len(lengths) == 1 and all(isinstance(v, Const) for v in args[0]):
                return ValueSet.of(Const(lengths.pop()))
            return ValueSet.of(Varies("len() of a run-time object"))
        if ref == "range":
            return ValueSet.of(Unknown("a range"))
        if not args:
            return ValueSet.of(Unknown(f"{ref}() of an unknown value"))
        functions: dict[str, Callable] = {"int": int, "float": float, "min": min, "max": max, "round": round,
                                          "abs": abs}
        function = functions[ref or ""]
        results: set[AbstractValue] = set()
        # member by member: the literals an argument can be still give their results beside what is not known
        # (`int(os.environ.get("N", "16"))` is 16 or a run-time number), so partial knowledge stays evidence
        if any(s.varies for s in args):
            results.add(Varies(f"{ref}() of a run-time value"))
        elif any(not s.known or any(isinstance(v, WarpType) for v in s) for s in args):
            results.add(Unknown(f"{ref}() of an unknown value"))
        for combination in _product(args):
            try:
                results.add(Const(function(*combination)))
            except Exception:  # noqa: BLE001 - int("x"), min() of mixed types: not a value
                results.add(Unknown(f"{ref}() fails on these values"))
        return ValueSet(frozenset(results))

    def _random_choice(self, file: FileModel, value: Value, scope: str, site: Site | None) -> ValueSet:
        """``random.choice(seq)``: any item of ``seq`` (one per call, chosen at run time); ``random.sample(seq,
        k)``: a list of such items."""
        sequences = self.values(file, value.args[0], scope, site)
        items = ValueSet.union(_all_items(s) or ValueSet.of(Varies("an item chosen at random at run time"))
                               for s in sequences)
        if RANDOM_CHOOSERS[value.ref or ""] == "item":
            return items
        return ValueSet.of(Varies("a list of items chosen at random at run time"))

    def _binop(self, file: FileModel, value: Value, scope: str, site: Site | None) -> ValueSet:
        left, right = (self.values(file, item, scope, site) for item in value.items)
        if left.varies or right.varies:
            return ValueSet.of(Varies("arithmetic on a run-time value"))
        op = _BINOPS.get(value.text)
        if op is None:
            return ValueSet.of(Unknown("an operator not followed"))
        if not left.known or not right.known:
            # `1 << (n - 1).bit_length()`, `n // 32 * 32`: computed from a value only the run knows
            return ValueSet.of(Varies("arithmetic on a value known only at run time"))
        if any(isinstance(v, WarpType) for v in (*left, *right)):
            return ValueSet.of(Unknown("arithmetic on a Warp type"))
        results: set[AbstractValue] = set()
        for a, b in _product([left, right]):
            try:
                results.add(Const(op(a, b)))
            except Exception:  # noqa: BLE001 - "a" - 1, 1 << -1: not a value
                results.add(Unknown("arithmetic that fails"))
        return ValueSet(frozenset(results))

    def _mapping_get(self, file: FileModel, value: Value, scope: str, site: Site | None) -> ValueSet | None:
        """``TABLE.get(key[, default])`` of a dict: ``TABLE[key]``, and the default (None) where no key can
        match; None when the receiver is not a dict the evaluator knows (another object's ``get``)."""
        ref = (value.ref or "").removesuffix(".get")
        local = "." not in ref and ref not in file.toplevel  # as a call's own name is resolved
        owner = Value("name" if "." not in ref else "attr", text=value.text.rpartition(".get(")[0], ref=ref,
                      local=local)
        tables = self.values(file, owner, scope, site)
        if not any(_is_dict(t) for t in tables):
            return None
        default = (self.values(file, value.args[1], scope, site) if len(value.args) == 2
                   else ValueSet.of(Const(None, f"{owner.text}.get() of a missing key")))
        lookup = Value("subscript", text=f"{owner.text}[...]", base=owner, key=value.args[0])
        return self._subscript(file, lookup, scope, site, missing=default)

    def _display_pairs(self, file: FileModel, value: Value, written: tuple[tuple[ValueSet, ValueSet], ...],
                       scope: str, site: Site | None) -> tuple[tuple[ValueSet, ValueSet], ...]:
        """The items of a dict display with ``**`` in it, as Python builds it: each written pair and each unpacked
        mapping's items in the display's order, a later key replacing an earlier equal one. A mapping that is not
        one known dict (several, a parameter, one filled later) holds items not known here."""
        merged: list[tuple[ValueSet, ValueSet]] = []

        def put(pair: tuple[ValueSet, ValueSet]) -> None:
            key = pair[0]
            if len(key) == 1 and isinstance(only := next(iter(key)), Const):
                merged[:] = [p for p in merged if not (len(p[0]) == 1 and next(iter(p[0])) == only)]
            merged.append(pair)

        for entry in _in_written_order(value):
            if isinstance(entry, int):
                put(written[entry])
            else:
                for pair in self._unpacked_items(file, entry.base, scope, site):
                    put(pair)
        return tuple(merged)

    def _unpacked_items(self, file: FileModel, base: Value | None, scope: str, site: Site | None
                        ) -> list[tuple[ValueSet, ValueSet]]:
        """The (key, value) pairs of the mapping ``**base`` unpacks: one known dict's, else one unknown pair."""
        found = self.values(file, base, scope, site) if base is not None else _UNKNOWN
        only = next(iter(found)) if len(found) == 1 else None
        if isinstance(only, Const) and isinstance(only.value, dict):
            return [(ValueSet.of(Const(k)), ValueSet.of(Const(v))) for k, v in only.value.items()]
        if isinstance(only, Mapping) and not only.filled:
            return list(only.items)
        return [(_UNKNOWN, _UNKNOWN)]

    def _subscript(self, file: FileModel, value: Value, scope: str, site: Site | None,
                   missing: ValueSet | None = None) -> ValueSet:
        """``base[key]``; ``missing`` is what a key no item has gives (``dict.get``'s default), else Unknown."""
        assert value.base is not None
        if value.base.ref == "os.environ":  # one string for the whole process (as `os.environ.get`): unknown
            return ValueSet.of(Unknown("read from the environment"))
        keys = self.values(file, value.key, scope, site) if value.key is not None else _UNKNOWN
        if value.base.ref == "sys.modules":  # the modules imported so far, by name: a project module is itself
            return self._modules_named(keys)
        base = self.values(file, value.base, scope, site)
        results: list[ValueSet] = []
        if site is None and self._key_chosen_by_users(file, value.key, scope):
            # `TABLE[mode]` in a public function whose `mode` its users pass: any item can be chosen
            keys = ValueSet.union([keys, *(k for b in base if isinstance(b, Mapping) for k, _ in b.items),
                                   *(ValueSet.of(*(Const(k) for k in b.value)) for b in base
                                     if isinstance(b, Const) and isinstance(b.value, dict))])
        for b in base:
            for k in keys:
                results.append(_item(b, k, missing))
        stored = self._stored_items(file, value.base, scope, site, keys)
        if stored is not None:
            # a dict filled by `CACHE[key] = make(...)` (a memoizing factory): what was stored, plus the
            # literal's own items when the key names one
            known = [r for r in results if r.known]
            return ValueSet.union([stored, *known])
        return ValueSet.union(results) if results else _UNKNOWN

    def _key_chosen_by_users(self, file: FileModel, key: Value | None, scope: str) -> bool:
        fn = file.functions.get(scope)
        return key is not None and fn is not None and _is_parameter(key, fn) and self.chosen_by_users(
            file, fn, key.text)

    def chosen_by_users(self, file: FileModel, fn: Function, name: str) -> bool:
        """Parameter ``name`` of ``fn`` comes (through parameters passed on, however many calls deep) from a
        parameter with a default of a public library function: its callers outside the project, the library's
        users, pick it (whatever the project's own calls pass). One summary per parameter."""
        return self.budget.summary(self._chosen, (file.path, fn.qualname, name),
                                   lambda: self._chosen_by_users(file, fn, name), False)

    def _chosen_by_users(self, file: FileModel, fn: Function, name: str) -> bool:
        fq = self.bindings.fqname(file, fn.qualname)
        found = self.bindings.is_library_api(file, fn.qualname) and next(
            (p.default for p in fn.params if p.name == name), None) is not None
        if not found:
            for caller_file, call in self.bindings.call_sites(fq):
                argument = self.bind(fn, name, self.site(caller_file, call.ctx.scope, call, fq, None))
                caller = caller_file.functions.get(call.ctx.scope)
                if (isinstance(argument, Value) and caller is not None and _is_parameter(argument, caller)
                        and self.chosen_by_users(caller_file, caller, argument.text)):
                    found = True
                    break
        return found

    def item_writes(self, file: FileModel, base: Value, scope: str) -> list[tuple[FileModel, Assignment]]:
        """The ``base[key] = value`` statements that write into the container ``base`` names: in its scope for a
        local, anywhere in the project for a module-level name (read as ``NAME`` or through its module,
        ``mod.NAME``); none for any other expression."""
        if base.kind not in ("name", "attr") or not base.ref or base.base is not None:
            return []
        if base.local:
            if base.kind != "name":
                return []
            return [(file, a) for a in self.bindings.subscript_assignments(file, scope, base.text)]
        return list(self.bindings.item_assignments(self.bindings.canonical_ref(base.ref)))

    def _filled_dict(self, file: FileModel, scope: str, name: str, bound: list[ValueSet], site: Site | None
                     ) -> ValueSet | None:
        """A local dict its function fills (``out = {}`` then ``out[key] = value``, in a loop, say): a
        ``Mapping`` of what was stored, so the dict a helper returns holds its items wherever it goes. None
        when the local is not bound to a dict or nothing is stored into it."""
        if not any(_is_dict(v) for values in bound for v in values):
            return None
        writes = self.bindings.subscript_assignments(file, scope, name)
        if not writes:
            return None
        return ValueSet.of(Mapping(tuple(
            (self.values(file, a.target.key, scope, site) if a.target.key is not None else _UNKNOWN,
             self.values(file, a.value, scope, site)) for a in writes), f"`{name}` filled item by item", filled=True))

    def _stored_items(self, file: FileModel, base: Value, scope: str, site: Site | None,
                      keys: ValueSet = _UNKNOWN) -> ValueSet | None:
        """The values written into the container ``base`` names by ``base[key] = value`` under a key that can
        equal one of ``keys`` (``_CACHE["a"]`` is not what ``_CACHE["b"] = ...`` stored); None when none are."""
        writes = self.item_writes(file, base, scope)
        here = [(f, a, site if f is file and a.ctx.scope == scope else None) for f, a in writes]
        if keys.known:
            here = [(f, a, at) for f, a, at in here if a.target.key is None or _may_match(
                keys, self.values(f, a.target.key, a.ctx.scope, at))]
        found: list[ValueSet] = []
        applied = {id(a) for f, a in writes if stored_parameter_kernel(f, a) is not None}
        if applied:
            # `REGISTRY[name] = wp.kernel(f)` in a function a decorator applies: each decorated `def` put its own
            # kernel there (kernels.py); the store's own value stands for the calls the project makes of it
            found.append(self._decorated_items(base, keys))
            here = [(f, a, at) for f, a, at in here
                    if id(a) not in applied or self.bindings.call_sites(self.bindings.fqname(f, a.ctx.scope))]
        if not here and not found:
            return None
        return ValueSet.union([*found, *(self.values(f, a.value, a.ctx.scope, at) for f, a, at in here)])

    def _decorated_items(self, base: Value, keys: ValueSet) -> ValueSet:
        """The kernels decorated ``def``s stored into the module-level container ``base`` names (``Kernel.
        stored_in``) under a key that can equal one of ``keys``. A kernel stored under a key not known is not
        taken for a known key (it may be stored under another): the item is then unknown."""
        container = self.bindings.canonical_ref(base.ref or "")
        results: set[AbstractValue] = set()
        for f in self.bindings.files:
            for index, kernel in enumerate(self.kernels_of(f)):
                if kernel.stored_in != container:
                    continue
                stored = kernel.stored_key
                if stored is not None and stored.kind == "const":
                    if keys.known and not _may_match(keys, ValueSet.of(Const(stored.const))):
                        continue
                elif keys.known and all(isinstance(k, Const) for k in keys):
                    results.add(Unknown(f"an item of {base.text} stored under a key not known"))
                    continue
                results.add(KernelRef(f.path, index, f"kernel `{kernel.name}` stored into {base.text}"))
        return ValueSet(frozenset(results)) if results else ValueSet.of(Unknown(f"no item of {base.text} "
                                                                                "stored under this key"))

    def _elements(self, iterable: ValueSet, file: FileModel, source: Value, scope: str, site: Site | None) -> ValueSet:
        """The values one item of ``iterable`` can have (a ``for`` target)."""
        if source.kind == "call" and source.ref in ("zip", "enumerate"):
            parts = [self._elements(self.values(file, a, scope, site), file, a, scope, site)
                     for a in source.args]
            if source.ref == "enumerate":
                parts = [ValueSet.of(Varies("an enumerate() index")), *parts[:1]]
            return ValueSet.of(Sequence(tuple(parts)))
        if source.kind == "call" and source.ref == "range":
            return ValueSet.of(Varies("a loop index"))
        results: list[ValueSet] = []
        for v in iterable:
            if isinstance(v, Const) and isinstance(v.value, (tuple, list, dict)):
                results.append(ValueSet(frozenset(Const(item) for item in v.value)))
            elif isinstance(v, Sequence):
                results.append(ValueSet.union(v.items))
            elif isinstance(v, Mapping):  # iterating a dict gives its keys
                results.append(ValueSet.union(k for k, _ in v.items))
            elif isinstance(v, Varies):
                results.append(ValueSet.of(v))
            else:
                results.append(ValueSet.of(Unknown("an item of an iterable not followed")))
        return ValueSet.union(results) if results else _UNKNOWN

    # ------------------------------------------------------------------ which parameters a value reads
    def parameters_reaching(self, file: FileModel, value: Value | None, scope: str) -> tuple[frozenset[tuple[str, str]],
                                                                                           bool]:
        """The parameters of ``scope`` (and of the functions around it) that ``value`` is computed from, as
        ``(function qualname, parameter)`` pairs, and whether that is all of them.

        A question about *which call's arguments* decide a value, not about the value: a kernel factory's
        ``module=_module_name(dtype, batched)`` reads ``dtype`` and ``batched`` whatever they are at run
        time. Locals are followed to their bindings (enclosing functions' too), a call of a project function
        to what reaches its return values through the arguments bound to its parameters; literals and
        module-level names read none (one value per process); any other call, operator, f-string, container,
        subscript or attribute reads what its parts read. Not complete when an expression is not followed
        (``not x``, a comparison, a comprehension: the binder keeps no parts) or the bounds cut it short."""
        if value is None:
            return frozenset(), True
        key = ("parameters", id(file), scope, id(value))
        if key not in self._reaching:
            self._keep.append(value)  # the key holds id(value)

        def compute() -> tuple[frozenset[tuple[str, str]], bool]:
            params: set[tuple[str, str]] = set()
            complete = self._reaching_into(file, value, scope, params, set())
            return frozenset(params), complete

        no_parameters: frozenset[tuple[str, str]] = frozenset()
        return self.budget.summary(self._reaching, key, compute, (no_parameters, False))

    def _reaching_into(self, file: FileModel, value: Value, scope: str, found: set[tuple[str, str]],
                       seen: set[tuple]) -> bool:
        key = (id(file), scope, id(value))
        if key in seen:
            return True  # a cycle reads nothing new
        seen.add(key)
        return self.budget.step(lambda: self._reaching_parts(file, value, scope, found, seen), False)

    def _reaching_parts(self, file: FileModel, value: Value, scope: str, found: set[tuple[str, str]],
                        seen: set[tuple]) -> bool:
        kind = value.kind
        if kind in ("const", "unset", "lambda"):
            return True
        if kind == "other":
            return False
        if kind in ("name", "attr") and not (value.base is not None and not value.ref):
            if value.text == "__name__" or not value.local:
                return True
            return self._reaching_local(file, value.text.partition(".")[0], scope, found, seen)
        if kind == "call" and value.ref is not None and not self.bindings.is_warp_api(value.ref):
            callees = self._callees_named(file, value, scope, None)
            functions = [c for c in callees if isinstance(c, FunctionRef)]
            if functions and len(functions) == len(callees):
                return all(self._reaching_through(file, value, scope, callee.fqname, found, seen)
                           for callee in functions)
        complete = True
        parts = [*value.args, *value.kwargs.values(), value.base, value.key]
        for item in value.items:
            parts.extend(item if isinstance(item, tuple) else (item,))
        for part in parts:
            if isinstance(part, Value):
                complete = self._reaching_into(file, part, scope, found, seen) and complete
        return complete

    def _reaching_tests(self, file: FileModel, tests: tuple[Value, ...], scope: str,
                        found: set[tuple[str, str]], seen: set[tuple]) -> bool:
        complete = True
        for test in tests:
            complete = self._reaching_into(file, test, scope, found, seen) and complete
        return complete

    def _reaching_local(self, file: FileModel, name: str, scope: str, found: set[tuple[str, str]],
                        seen: set[tuple]) -> bool:
        current = scope
        while current:
            fn = file.functions.get(current)
            if fn is None:
                return True
            bindings = self.bindings.name_assignments(file, current, name)
            is_param = any(p.name == name for p in fn.params)
            if is_param:
                found.add((current, name))
            if bindings or is_param:
                complete = True
                for a in bindings:
                    complete = self._reaching_into(file, a.value, current, found, seen) and complete
                    # `if flag: name = ...`: which binding holds depends on the test too
                    complete = self._reaching_tests(file, a.ctx.tests, current, found, seen) and complete
                # a container filled in place (`parts.append("pos")` under `if pos:`): what goes in, and when
                for call in self.bindings.calls_in(file, current):
                    head, _, method = call.callee.rpartition(".")
                    if head == name and method in FILLING_METHODS:
                        for part in (*call.args, *call.kwargs.values()):
                            complete = self._reaching_into(file, part, current, found, seen) and complete
                        complete = self._reaching_tests(file, call.ctx.tests, current, found, seen) and complete
                return complete
            if name in fn.locals:
                return True  # a nested def / class / kernel: its own content, no argument of this call
            current = fn.ctx.scope
        return True  # a module-level name

    def _reaching_through(self, file: FileModel, call: Value, scope: str, fqname: str,
                          found: set[tuple[str, str]], seen: set[tuple]) -> bool:
        """What a call of the project function ``fqname`` reads: the arguments whose parameters reach its
        return values."""
        target = self.bindings.function(fqname)
        if target is None:
            return False
        owner, fn = target
        inner: set[tuple[str, str]] = set()
        complete = True
        for returned in fn.returns:
            complete = self._reaching_into(owner, returned, fn.qualname, inner, seen) and complete
        site = self.site(file, scope, call, self.bindings.canonical_function(fqname), None)
        for qual, name in sorted(inner):
            if qual != fn.qualname:
                continue  # a parameter of a function around the callee: not this call's argument
            argument = self.bind(fn, name, site)
            if isinstance(argument, Value):
                complete = self._reaching_into(file, argument, scope, found, seen) and complete
            elif argument is _DEFAULT:
                default = next(p.default for p in fn.params if p.name == name)
                if default is not None:
                    complete = self._reaching_into(owner, default, fn.ctx.scope, found, seen) and complete
            else:
                complete = False  # through *args / **kwargs: not known which argument
        return complete

    def shape_of(self, file: FileModel, value: Value | None, scope: str) -> str | None:
        """A canonical text of how ``value`` is computed, with the parameters of ``scope`` (and of the
        functions around it) as ``PARAMETER_SLOT % name`` slots: two expressions with the same shape give the
        same value when their slots are bound to the same values. Locals with one binding are followed; a call
        is its callee and its arguments' shapes (the same helper with the same arguments gives the same
        result); module-level names are themselves (one value per process); an f-string is its literal text
        and its expressions. None when a part cannot be told apart from others (several bindings, an
        expression the binder keeps no parts of)."""
        if value is None:
            return None
        return self.budget.step(lambda: self._shape(file, value, scope), None)

    def _shape(self, file: FileModel, value: Value, scope: str) -> str | None:
        kind = value.kind
        if kind == "const":
            return repr(value.const)
        if kind in ("name", "attr") and not (value.base is not None and not value.ref):
            head, _, rest = value.text.partition(".")
            tail = f".{rest}" if rest else ""
            if not value.local:
                return f"<{self.bindings.canonical_ref(value.ref)}>" if value.ref else None
            current = scope
            while current:
                fn = file.functions.get(current)
                if fn is None:
                    return None
                bindings = self.bindings.name_assignments(file, current, head)
                if any(p.name == head for p in fn.params):
                    return None if bindings else PARAMETER_SLOT % head + tail
                if bindings:
                    if len(bindings) > 1 or bindings[0].augmented:
                        return None
                    inner = self.shape_of(file, bindings[0].value, current)
                    return None if inner is None else inner + tail
                if head in fn.locals:
                    return None
                current = fn.ctx.scope
            return f"<{file.module}.{head}>{tail}"
        if kind == "call":
            if value.ref is not None:
                ref = value.ref
                callees = self._callees_named(file, value, scope, None)
                functions = [c.fqname for c in callees if isinstance(c, FunctionRef)]
                callee: str | None = ref  # a builtin or a name outside the project: itself
                if len(functions) == 1 == len(callees):
                    callee = self.bindings.canonical_function(functions[0])
                elif self._is_local_name(file, ref.partition(".")[0], scope):
                    callee = None  # a local callable: which one is not told by its name
            else:
                callee = self.shape_of(file, value.base, scope)
            positional = [self.shape_of(file, a, scope) for a in value.args]
            keywords = {k: self.shape_of(file, v, scope) for k, v in sorted(value.kwargs.items())}
            if callee is None or None in positional or None in keywords.values():
                return None
            parts = [*map(str, positional), *(f"{k}={v}" for k, v in keywords.items())]
            return f"{callee}({', '.join(parts)})"
        if kind in ("seq", "binop", "subscript"):
            items = [*value.items] if kind != "subscript" else [value.base, value.key]
            shapes = [self.shape_of(file, item, scope) if isinstance(item, Value) else None
                      for item in items]
            if None in shapes:
                return None
            operator_name = value.text if kind == "binop" else ""
            return f"{kind}{operator_name}({', '.join(map(str, shapes))})"
        if kind == "fstring":  # its literal text with {} for the expressions, and the expressions' shapes
            shapes = [self.shape_of(file, item, scope) for item in value.items]
            return None if None in shapes else f"fstring:{value.text}({', '.join(map(str, shapes))})"
        return None

    @staticmethod
    def _is_local_name(file: FileModel, name: str, scope: str) -> bool:
        while scope:
            fn = file.functions.get(scope)
            if fn is None:
                return False
            if name in fn.locals or any(p.name == name for p in fn.params):
                return True
            scope = fn.ctx.scope
        return False

    # ------------------------------------------------------------------ where a value comes from
    def sources(self, file: FileModel, value: Value | None, scope: str = "", site: Site | None = None,
                accept: Callable[[Source], bool] | None = None) -> list[Source]:
        """The expressions ``value`` takes its value from, for questions about an expression's *shape*
        that no abstract value carries (which call made an array and with which ``dtype=``; that a path
        is ``wp.config.kernel_cache_dir``; that it was made by ``tempfile.mkdtemp()``).

        Names are followed through the bindings ``values`` follows: locals (and enclosing functions'
        locals), parameters (at ``site``, else at every call site, else the default), module-level names
        across files and re-exports; ``a if c else b`` gives both branches; a call of a project
        function gives what it returns (bound at that call); an item of an unpacked tuple (``d, n =
        make()``, ``rhs[1]``) gives that item of each tuple or list literal ``rhs`` comes from (``*args`` is the
        tuple of a call's extra arguments); an item read by its key off a dict display never written into
        (``cfg["dir"]`` of ``cfg = {**base, "dir": d}``, ``dict(dir=d)``; ``**kwargs`` is the dict of a call's
        extra keywords) gives what the last entry supplying that key holds, through each dict a ``**base``
        can be; an attribute read off a project class's construction gives what that construction sets it to
        (``h.dtype`` of ``h = Holder(wp.float64)``, a dataclass field). Every other expression is its own
        source: a literal, a call or a name outside the project or of Warp's API (also when Warp itself is the
        project: ``wp.zeros(...)`` and ``wp.float32`` are the shapes asked about), an f-string, arithmetic. A
        name that cannot be followed is its own source too; ``Source.attrs`` are the attributes read off a
        source (``d.name`` of ``d = TemporaryDirectory()``). Bounded like ``values``. ``accept``: a question
        that needs every source to pass a test stops at the first that fails it (the last in the list): a name
        passed through many callers has many."""
        found: list[Source] = [] if accept is None else _AcceptedSources(accept)
        if value is not None:
            try:
                self._sources(file, value, scope, site, (), found, set())
            except _SourceRejected:
                pass
        return list(found)

    def _item_sources(self, file: FileModel, sequence: Value, scope: str, site: Site | None, attrs: tuple[str, ...],
                      found: list[Source], seen: set[tuple]) -> bool:
        """The sources of an item of ``sequence`` when every source of it is a sequence literal (its items'
        sources, added to ``found``); False, adding nothing, for any other sequence."""
        sequences: list[Source] = []
        self._sources(file, sequence, scope, site, (), sequences, seen)
        if not sequences or not all(s.complete and not s.attrs and s.value.kind == "seq" and not s.value.unpacked
                                    for s in sequences):
            return False
        for s in sequences:
            for item in s.value.items:
                if isinstance(item, Value):
                    self._sources(s.file, item, s.scope, s.site, attrs, found, seen)
        return True

    def _sources(self, file: FileModel, value: Value, scope: str, site: Site | None, attrs: tuple[str, ...],
                 found: list[Source], seen: set[tuple]) -> None:
        key = (id(file), id(value), scope, id(site), attrs)
        if key in seen:
            return
        seen.add(key)
        if len(found) > MAX_VALUES or (opened := self.budget.enter()) is None:
            found.append(Source(file, value, scope, site, attrs, complete=False))
            return
        try:
            self._sources_of(file, value, scope, site, attrs, found, seen)
        finally:
            self.budget.leave(opened)

    def _sources_of(self, file: FileModel, value: Value, scope: str, site: Site | None, attrs: tuple[str, ...],
                    found: list[Source], seen: set[tuple]) -> None:
        kind = value.kind
        if kind == "ifexp":
            for item in value.items:
                if isinstance(item, Value):
                    self._sources(file, item, scope, site, attrs, found, seen)
            return
        if kind in ("name", "attr") and value.text != "__name__" and not (value.base is not None and not value.ref):
            if value.local:
                head, _, rest = value.text.partition(".")
                more = (*rest.split("."), *attrs) if rest else attrs
                if self._source_local(file, head, scope, site, more, found, seen):
                    return
            elif value.ref and not self.bindings.is_warp_api(value.ref):
                ref = f"{file.module}.{value.ref}" if "." not in value.ref and value.ref == value.text else value.ref
                # `self.x` / `cls.x` read off what a method runs on: an instance or class of a subclass, maybe,
                # whose own `x` Python finds first; a class named in the read is that class
                named_class = not read_off_parameter(file, scope, value.text)
                bound = self.bound_when_read(file, value, scope, site) if file.read_contexts else None
                if bound is not None:
                    for at_scope, a, at in bound:
                        self._sources(file, a.value, at_scope, at, attrs, found, seen)
                    return
                if self._source_global(ref, attrs, found, seen, named_class):
                    return
        elif kind == "attr" and value.base is not None and value.base.kind == "call" and value.base.ref \
                and not self.bindings.is_warp_api(value.base.ref):
            # `Cls(...).attr`: what that construction stores there
            callees = self._callees_named(file, value.base, scope, site)
            if callees and self._source_constructed(file, value.base, scope, site, callees,
                                                    (value.text.rpartition(".")[2], *attrs), found, seen):
                return
        elif kind == "element" and value.base is not None:
            # a `for` target: each item of the literal sequences the loop can run over (`for t in (wp.float32,
            # wp.float64)`, or a name bound to such a tuple); anything else iterated is the element itself
            if self._item_sources(file, value.base, scope, site, attrs, found, seen):
                return
        elif kind == "call" and RANDOM_CHOOSERS.get(value.ref or "") == "item" and value.args:
            # `random.choice(seq)`: each item of the literal sequences `seq` can be
            if self._item_sources(file, value.args[0], scope, site, attrs, found, seen):
                return
        elif kind == "subscript" and value.base is not None and value.key is not None and value.key.kind == "const" \
                and type(value.key.const) in (int, str) and (writes := self.item_writes(file, value.base, scope)):
            # `TABLE["k"]` of a container the project writes into (`TABLE[key] = v`, `item_writes`): each value
            # written under a key that can be "k"; what the container held before is the read itself
            for f, a in writes:
                written = a.target.key
                if written is not None and written.kind == "const" and written.const != value.key.const:
                    continue
                at = site if f is file and a.ctx.scope == scope else None
                self._sources(f, a.value, a.ctx.scope, at, attrs, found, seen)
        elif kind == "subscript" and value.base is not None and value.key is not None and value.key.kind == "const" \
                and (type(value.key.const) is int or (
                    type(value.key.const) is str and value.base.kind == "name"
                    and not self.bindings.subscript_assignments(file, scope, value.base.text))):
            # `a, b = rhs` (bound as `rhs[0]`, `rhs[1]`) or `rhs[1]`: the item at that position of each tuple or list
            # literal `rhs` can be (`return tempfile.mkdtemp(), 3`); `cfg["dir"]` of a dict display (`{**base, "dir":
            # d}`, `dict(dir=d)`, the keywords a `**kwargs` parameter collects) the function never writes into: what
            # the entry supplying "dir" holds. An item of anything else is its own source
            containers: list[Source] = []
            self._sources(file, value.base, scope, site, (), containers, seen)
            items = [self._literal_items(c, value.key.const, seen) for c in containers]
            for held in items:
                for item in held or ():
                    self._sources(item.file, item.value, item.scope, item.site, attrs, found, seen)
            if containers and None not in items:
                return
        elif kind == "call" and value.ref in FIELD_REPLACERS and attrs and len(value.args) == 1 and not value.unpacked:
            # `dataclasses.replace(obj, f=v).f` is `v`; any other field is what `obj` holds
            changed = value.kwargs.get(attrs[0])
            if changed is not None:
                self._sources(file, changed, scope, site, attrs[1:], found, seen)
            else:
                self._sources(file, value.args[0], scope, site, attrs, found, seen)
            return
        elif kind == "call" and value.ref == NAMESPACE_CONSTRUCTOR and attrs and not value.args \
                and not value.unpacked and attrs[0] in value.kwargs \
                and attrs[0] not in self.bindings.attribute_names_assigned():
            # `types.SimpleNamespace(k=v).k` is `v` (unless the project writes an attribute `k` on some object)
            self._sources(file, value.kwargs[attrs[0]], scope, site, attrs[1:], found, seen)
            return
        elif kind == "call" and value.ref is not None and not self.bindings.is_warp_api(value.ref):
            callees = self._callees_named(file, value, scope, site)
            functions = [c for c in callees if isinstance(c, FunctionRef)]
            if functions and len(functions) == len(callees):
                for callee in functions:
                    target = self.bindings.function(callee.fqname)
                    if target is None or not target[1].returns:
                        continue
                    at = self.enter(file, scope, value, self.bindings.canonical_function(callee.fqname), site)
                    for returned in target[1].returns:
                        self._sources(target[0], returned, target[1].qualname, at, attrs, found, seen)
                return
            if attrs and callees and self._source_constructed(file, value, scope, site, callees, attrs, found,
                                                              seen):
                return
        found.append(Source(file, value, scope, site, attrs))

    def _literal_items(self, container: Source, key: object, seen: set[tuple]) -> list[Source] | None:
        """The expressions a constant key picks from what ``container`` is: a position of a tuple or list literal,
        a key of a dict display (``_keyed_item_sources``); None for anything else, and for a key no entry of the
        dict supplies (the read raises KeyError there)."""
        if type(key) is str:
            return self._keyed_item_sources(container, key, seen) or None
        if type(key) is not int or not container.complete or container.attrs or container.value.unpacked:
            return None
        items = container.value.items
        found = items[key] if container.value.kind == "seq" and -len(items) <= key < len(items) else None
        return [Source(container.file, found, container.scope, container.site)] if isinstance(found, Value) else None

    def _keyed_item_sources(self, display: Source, key: str, seen: set[tuple]) -> list[Source] | None:
        """The expressions ``display[key]`` is, for a dict display (``_display_entries``) as Python builds it: what
        the last entry in written order that supplies ``key`` holds, a pair written with that key or that item of
        each dict a ``**x`` there can be (where one lacks it, the entries before it decide). [] when no entry
        supplies ``key``; None when that cannot be told (``display`` or a dict a ``**x`` can be is not such a
        display)."""
        entries = self._display_entries(display)
        if entries is None:
            return None
        held: list[Source] = []
        for entry in reversed(entries):
            if isinstance(entry, tuple):
                if entry[0] == key:
                    return [*held, Source(display.file, entry[1], display.scope, display.site)]
                continue
            unpacked: list[Source] = []
            if entry.base is not None:
                self._sources(display.file, entry.base, display.scope, display.site, (), unpacked, seen)
            if not unpacked:
                return None
            lacking = False
            for d in unpacked:
                items = self._keyed_item_sources(d, key, seen)
                if items is None:
                    return None
                held += items
                lacking = lacking or not items
            if not lacking:
                return held
        return held

    def _source_constructed(self, file: FileModel, value: Value, scope: str, site: Site | None, callees: ValueSet,
                            attrs: tuple[str, ...], found: list[Source], seen: set[tuple]) -> bool:
        """``Cls(...).attr`` (or a name bound to ``Cls(...)``, read ``.attr``): what that construction stores there
        (``_construction_stores``: a dataclass keyword field, what ``__init__`` stores from its arguments); False
        when a class is not the project's, reads ``attr`` through a method or a descriptor, or the construction
        does not decide it."""
        stores: list[tuple[FileModel, Value, str, Site | None]] = []
        for callee in callees:
            if not isinstance(callee, ClassRef) or self._method_of(callee.fqname, attrs[0]) is not None \
                    or self._descriptor_get(callee.fqname, attrs[0]) is not None:
                return False
            at = self.enter(file, scope, value, self.bindings.canonical_function(f"{callee.fqname}.__init__"), site)
            made = self._construction_stores(callee.fqname, at, attrs[0])
            if made is None:
                return False
            stores += made
        for f, stored, where, stored_at in stores:
            self._sources(f, stored, where, stored_at, attrs[1:], found, seen)
        return True

    def _source_local(self, file: FileModel, name: str, scope: str, site: Site | None, attrs: tuple[str, ...],
                      found: list[Source], seen: set[tuple]) -> bool:
        """Follow a name read in ``scope`` to its bindings; False when it has none that can be followed."""
        current = scope
        while current:
            fn = file.functions.get(current)
            if fn is None:
                break
            bindings = self.bindings.name_assignments(file, current, name)
            param = next((p for p in fn.params if p.name == name), None)
            if bindings or param is not None:
                for a in bindings:
                    self._sources(file, a.value, current, site, attrs, found, seen)
                if param is not None and any(_replaces_none(a, name) for a in bindings):
                    # `if p is None: p = default` in the body: the reads after it never see the parameter's None
                    # (as ``_binding_in`` reads it)
                    passed: list[Source] = []
                    self._source_parameter(file, fn, name, site, attrs, passed, seen)
                    for source in passed:
                        if not (source.value.kind == "const" and source.value.const is None):
                            found.append(source)
                elif param is not None:
                    self._source_parameter(file, fn, name, site, attrs, found, seen)
                return True
            if name in fn.locals:
                return False
            current = fn.ctx.scope
        return self._source_global(f"{file.module}.{name}", attrs, found, seen)

    def _source_parameter(self, file: FileModel, fn: Function, name: str, site: Site | None,
                          attrs: tuple[str, ...], found: list[Source], seen: set[tuple]) -> None:
        fq = self.bindings.fqname(file, fn.qualname)
        if site is not None and site.function == fq:
            sites = [site]
        else:
            sites = [self.site(cf, call.ctx.scope, call, fq, None) for cf, call in self.bindings.call_sites(fq)]
        param = next(p for p in fn.params if p.name == name)
        if not sites and param.default is not None:
            self._sources(file, param.default, fn.ctx.scope, None, attrs, found, seen)
        for at in sites[:MAX_SITES]:
            if param.star:  # the tuple / dict of the call's extra arguments
                collected = self._star_literal(fn, param, at)
                if collected is None:  # the call unpacks its own `*x`: what the tuple holds is not written there
                    found.append(Source(at.file, Value("seq", text=f"*{name}"), at.scope, at.parent,
                                        attrs, complete=False))
                else:
                    self._sources(at.file, collected, at.scope, at.parent, attrs, found, seen)
                continue
            argument = self.bind(fn, name, at)
            if argument is _DEFAULT and param.default is not None:
                self._sources(file, param.default, fn.ctx.scope, None, attrs, found, seen)
            elif isinstance(argument, Value):
                self._sources(at.file, argument, at.scope, at.parent, attrs, found, seen)
            elif at.unpacked:
                self._unpacked_sources(file, fn, param, at, attrs, found, seen)

    def _unpacked_sources(self, file: FileModel, fn: Function, param: Param, site: Site, attrs: tuple[str, ...],
                          found: list[Source], seen: set[tuple]) -> None:
        """The sources of parameter ``param`` of ``fn`` passed by no plain argument at ``site``, a call that unpacks
        ``**x``: the item each dict display ``x`` comes from holds under its name (``f(**{"k": v})``, ``opts =
        dict(k=v); f(**opts)``, a ``**kwargs`` passed on), else its default when every dict is such a display
        and can lack it. A source not complete where a dict is not known to its last key, is written into after
        it was made, or where a ``*x`` may fill the parameter by position."""
        index = fn.params.index(param)
        position = index - site.fills_first
        unplaced = False  # a `*x` of a length not known may fill it or not: the default is not known to hold
        if not any(p.star for p in fn.params[:index]) and position >= 0 and any(u.text == "*" for u in site.unpacked):
            unfilled = False
            for items, open_ended in self._positional_sources(site, seen):
                if position < len(items):
                    item = items[position]
                    self._sources(item.file, item.value, item.scope, item.site, attrs, found, seen)
                elif open_ended:
                    unplaced = True
                else:
                    unfilled = True
            if unplaced:
                found.append(Source(site.file, Value("other", text=f"*{param.name}"), site.scope, site.parent,
                                    attrs, complete=False))
            if not (unfilled or unplaced):
                return
        missing = not unplaced
        for unpack in (u for u in site.unpacked if u.text == "**" and u.base is not None):
            assert unpack.base is not None
            dicts: list[Source] = []
            self._sources(site.file, unpack.base, site.scope, site.parent, (), dicts, seen)
            lacks = False
            for d in dicts:
                keywords = self._display_keywords(d)
                if keywords is None:
                    found.append(Source(d.file, d.value, d.scope, d.site, attrs, complete=False))
                    missing = False
                    continue
                held = [v for k, v in keywords if k == param.name]
                for v in held:
                    self._sources(d.file, v, d.scope, d.site, attrs, found, seen)
                lacks = lacks or not held
            missing = missing and lacks and bool(dicts)
        if missing and param.default is not None:
            self._sources(file, param.default, fn.ctx.scope, None, attrs, found, seen)

    def _positional_sources(self, site: Site, seen: set[tuple]) -> list[tuple[list[Source], bool]]:
        """The positional arguments ``site`` passes as expressions, its ``*x`` unpacked in place: one list per
        combination of the sequence displays each ``*x`` comes from (``Evaluator.sources``), and whether the list
        may go on with items not known (a ``*x`` that is not such a display, and everything after it)."""
        expansions: list[tuple[list[Source], bool]] = [([], False)]
        for position in range(len(site.args) + 1):
            for unpack in (u for u in site.unpacked if u.text == "*" and u.const == position):
                displays: list[Source] = []
                if unpack.base is not None:
                    self._sources(site.file, unpack.base, site.scope, site.parent, (), displays, seen)
                known = bool(displays) and all(d.complete and not d.attrs and d.value.kind == "seq"
                                               and not d.value.unpacked and not self._written_after(d)
                                               for d in displays)
                grown: list[tuple[list[Source], bool]] = []
                for items, open_ended in expansions:
                    if open_ended or not known:
                        grown.append((items, True))
                    else:
                        grown += [([*items, *(Source(d.file, v, d.scope, d.site) for v in d.value.items
                                              if isinstance(v, Value))], False) for d in displays]
                expansions = grown if len(grown) <= MAX_VALUES else [([], True)]
            if position < len(site.args):
                plain = Source(site.file, site.args[position], site.scope, site.parent)
                expansions = [(items if open_ended else [*items, plain], open_ended)
                              for items, open_ended in expansions]
        return expansions

    def _display_keywords(self, source: Source) -> list[tuple[str, Value]] | None:
        """The (keyword, expression) items of the dict ``source`` is, when it is a display that unpacks no other
        (``_display_entries`` holds no ``**x``); None for anything else."""
        entries = self._display_entries(source)
        if entries is None or any(isinstance(e, Value) for e in entries):
            return None
        return cast(list[tuple[str, Value]], entries)

    def _display_entries(self, source: Source) -> list[tuple[str, Value] | Value] | None:
        """The entries of the dict ``source`` is, in written order: its (keyword, expression) pairs and each
        ``**x`` it unpacks (a ``Value`` of kind "unpack"), when it is a display whose written keys are all known
        strings (``{"k": v, **x}``, ``dict(k=v)``, the dict Python makes of a call's extra keywords) and nothing
        writes into it after it was made; None for anything else."""
        value = source.value
        if not source.complete or source.attrs:
            return None
        entries: list[tuple[str, Value] | Value] = []
        if value.kind == "call" and value.ref == "dict" and not value.args and not value.unpacked \
                and not self._is_local_name(source.file, "dict", source.scope):
            entries += value.kwargs.items()
        elif value.kind == "dict":
            for entry in _in_written_order(value):
                if isinstance(entry, Value):
                    entries.append(entry)
                    continue
                item = value.items[entry]
                if not (isinstance(item, tuple) and isinstance(item[0], Value) and item[0].kind == "const"
                        and isinstance(item[0].const, str) and isinstance(item[1], Value)):
                    return None
                entries.append((item[0].const, item[1]))
        else:
            return None
        if id(value) not in self._keyword_dicts and self._written_after(source):
            return None
        return entries

    def _written_after(self, source: Source) -> bool:
        """Whether the container ``source`` may be written into after it was made: it is bound to a name that
        ``name[k] = v`` writes, that an augmented assignment updates in place (``name |= other``, ``name +=
        other``), or that a method filling a container is called on (``name.update(...)``, ``name.append(...)``)."""
        file, scope = source.file, source.scope
        tables = self.bindings.file_facts.cached(file, file_facts.assignment_tables)
        for a in tables.by_scope.get(scope, []):
            if a.value is not source.value or a.target.kind != "name":
                continue
            name = a.target.text
            target = Value("name", text=name, ref=name if scope else f"{file.module}.{name}", local=bool(scope))
            if self.item_writes(file, target, scope):
                return True
            rebound = [*self.bindings.name_assignments(file, scope, name)]
            if not scope:  # a function that declares it `global` updates the module's dict too
                rebound += [b for _, b in self.bindings.global_assignments(file, name)]
            if any(b.augmented for b in rebound):
                return True
            fills = {f"{head}.{method}" for head in (name, f"{file.module}.{name}") for method in FILLING_METHODS}
            calls = self.bindings.calls_in(file, scope) if scope else [
                c for f in self.bindings.files for c in self.bindings.calls_to(f, *fills)]
            if any(c.callee in fills for c in calls):
                return True
        return False

    def _source_global(self, ref: str, attrs: tuple[str, ...], found: list[Source],
                       seen: set[tuple], named_class: bool = True) -> bool:
        """Follow a module-level name (``pkg.mod.NAME.attr``) to its bindings; False when not in the project."""
        ref = self.bindings.canonical_ref(ref)
        owner = self.bindings.owner_of(ref)
        if owner is None or ref == owner.module:
            return False
        name, *rest = ref[len(owner.module) + 1:].split(".")
        more = (*rest, *attrs)
        bindings = [("", a) for a in self.bindings.name_assignments(owner, "", name)]
        bindings += self.bindings.global_assignments(owner, name)  # a setter's `global` binds it too
        if bindings:
            for scope, a in bindings:
                self._sources(owner, a.value, scope, None, more, found, seen)
            return True
        if rest and name in owner.classes and named_class:
            return self._source_class_attribute(owner, name, more, found, seen)
        for imp in owner.imports:  # a re-export: `from .config import CACHE` in a package __init__
            if imp.ctx.scope:
                continue
            for imported, alias in imp.names:
                if alias == name:
                    target = ".".join((f"{imp.module}.{imported}" if imp.module else imported, *rest))
                    return self._source_reexport(target, attrs, found, seen)
        return False

    def _source_class_attribute(self, owner: FileModel, qual: str, attrs: tuple[str, ...], found: list[Source],
                                seen: set[tuple]) -> bool:
        """``Cls.attr`` read off the class ``qual`` of ``owner`` (``Defaults.dtype``): what the class body, or a
        ``Cls.attr = v`` anywhere, binds to the plain class attribute ``attrs[0]``. False (the read is its own
        source) where Python runs something else or another object answers: a nested class, a method, a
        descriptor, an enum member, an attribute a method sets, an augmented assignment, an attribute the class
        does not bind itself (its bases' are not followed here)."""
        attr, more = attrs[0], attrs[1:]
        if f"{qual}.{attr}" in owner.classes:
            return False
        cls = f"{owner.module}.{qual}"
        if self._enum_member(cls, attr):
            return self._source_enum_value(owner, qual, attr, more, found, seen)
        if f"{qual}.{attr}" in owner.functions or self._descriptor_get(cls, attr) is not None:
            return False
        bindings = self.bindings.attribute_assignments(f"{cls}.{attr}")
        # a method's `self.attr = ...` sets an instance's attribute, which a read off an instance would see
        if not bindings or any(a.augmented or a.ctx.scope.startswith(f"{qual}.") for _, a in bindings):
            return False
        for f, a in bindings:
            self._sources(f, a.value, a.ctx.scope, None, more, found, seen)
        return True

    def _source_enum_value(self, owner: FileModel, qual: str, member: str, attrs: tuple[str, ...],
                           found: list[Source], seen: set[tuple]) -> bool:
        """``Cls.MEMBER.value`` of an ``enum.Enum`` (``_enum_member``): the expression its class body binds
        ``MEMBER`` to (``HIGH = wp.float64``). False for anything else read off a member (its ``.name``, itself)."""
        if not attrs or attrs[0] != "value":
            return False
        body = self._class_body_bindings(owner, qual, member)
        if len(body) != 1:
            return False
        f, a = body[0]
        self._sources(f, a.value, a.ctx.scope, None, attrs[1:], found, seen)
        return True

    def _source_reexport(self, ref: str, attrs: tuple[str, ...], found: list[Source], seen: set[tuple]) -> bool:
        return self.budget.step(lambda: self._source_global(ref, attrs, found, seen), False)


def stored_parameter_kernel(file: FileModel, assignment: Assignment) -> str | None:
    """The parameter ``f`` when ``assignment`` is ``CONTAINER[key] = wp.kernel(f, ...)`` (or ``wp.kernel(...)(f)``)
    written in a function of ``file`` whose parameter ``f`` is: a kernel of whatever function each call passes,
    stored under the call's key. None for any other assignment."""
    fn = file.functions.get(assignment.ctx.scope)
    value = assignment.value
    if fn is None or fn.class_name is not None or value.kind != "call" or len(value.args) != 1:
        return None
    made = is_warp(value.ref, "kernel", "Kernel") or (
        value.ref is None and value.base is not None and value.base.kind == "call" and is_warp(value.base.ref, "kernel")
        and not value.base.args)
    target = value.args[0]
    if not made or target.kind != "name" or not target.local:
        return None
    return target.text if any(p.name == target.text and not p.star for p in fn.params) else None


def _parameters_read(fn: Function, values: list[Value]) -> set[str]:
    """The parameters of ``fn`` that ``values`` (written in ``fn``) read, other than the instance or class a method
    runs on (what it holds is read off the instance, not decided per call)."""
    params = {p.name for p in fn.params} - {fn.bound_parameter}
    return {head for v in values for n in v.names() if (head := n.partition(".")[0]) in params}


def _is_parameter(value: Value, fn: Function) -> bool:
    """``value`` is a bare read of one of ``fn``'s parameters."""
    return value.kind == "name" and value.local and any(p.name == value.text for p in fn.params)


def _coarser(result: ValueSet) -> ValueSet:
    """A set over the bound: instances of one class made at different calls count as one (their class is
    still known); past the bound even so, unknown."""
    merged = ValueSet(frozenset(Instance(v.cls, v.reason) if isinstance(v, Instance) else v for v in result))
    return merged if len(merged) <= MAX_VALUES else ValueSet.of(Unknown(f"more than {MAX_VALUES} values"))


def _keyword_items(value: AbstractValue) -> list[tuple[str, ValueSet]] | None:
    """The (keyword, value set) items a dict passes when a call unpacks it (``**value``), when every key is a
    known string; None for anything else."""
    if isinstance(value, Const) and isinstance(value.value, dict) and all(isinstance(k, str) for k in value.value):
        return [(k, ValueSet.of(Const(v))) for k, v in value.value.items()]
    if not isinstance(value, Mapping):
        return None
    items: list[tuple[str, ValueSet]] = []
    for keys, v in value.items:
        known, key = keys.single_constant()
        if not (known and isinstance(key, str)):
            return None
        items.append((key, v))
    return items


def _in_written_order(display: Value) -> list[int | Value]:
    """The entries of the dict display ``display`` in written order: the index in ``items`` of each pair, and each
    ``**x`` of ``unpacked`` where it stands (its ``const``: how many pairs are written before it)."""
    order: list[int | Value] = []
    placed = 0
    for unpack in sorted(display.unpacked,
                         key=lambda u: u.const if isinstance(u.const, int) else len(display.items)):
        at = unpack.const if isinstance(unpack.const, int) else len(display.items)
        order += range(placed, at)
        placed = max(placed, at)
        order.append(unpack)
    order += range(placed, len(display.items))
    return order


def _is_dict(value: AbstractValue) -> bool:
    """A dict the evaluator knows: a literal one, or one filled item by item (a ``Mapping``)."""
    return isinstance(value, Mapping) or (isinstance(value, Const) and isinstance(value.value, dict))


def _item(base: AbstractValue, key: AbstractValue, missing: ValueSet | None = None) -> ValueSet:
    if isinstance(base, Mapping):  # the values stored under a key that can equal this one
        found = [v for k, v in base.items if any(_may_equal(key, candidate) for candidate in k)]
        if missing is not None and (not found or not isinstance(key, Const)):
            found.append(missing)  # a key not known may be one no item has
        return ValueSet.union(found) if found else ValueSet.of(Unknown("no such key"))
    if isinstance(key, (Unknown, Varies)):
        # a key only the run knows: the item is one of the table's (a missing key raises), or the default
        items = _all_items(base)
        if items is not None:
            return ValueSet.union([items, *([missing] if missing is not None else [])])
    if isinstance(base, Varies) or isinstance(key, Varies):
        return ValueSet.of(Varies("indexed by or into a run-time value"))
    if isinstance(key, Const):
        if isinstance(base, Const) and isinstance(base.value, (tuple, list, dict, str)):
            try:
                container: Any = base.value
                return ValueSet.of(Const(container[key.value]))
            except (KeyError, IndexError, TypeError):
                return missing or ValueSet.of(Unknown("no such item"))
        if isinstance(base, Sequence) and isinstance(key.value, int) and -len(base.items) <= key.value < len(
                base.items):
            return base.items[key.value]
    return ValueSet.of(Unknown("an item not followed"))


def _all_items(base: AbstractValue) -> ValueSet | None:
    """Every item a literal table holds (a dict's values, a tuple's or list's items); None for another value."""
    if isinstance(base, Const) and isinstance(base.value, dict) and base.value:
        return ValueSet(frozenset(Const(v, "an item of a table, chosen at run time") for v in base.value.values()))
    if isinstance(base, Const) and isinstance(base.value, (tuple, list)) and base.value:
        return ValueSet(frozenset(Const(v, "an item of a sequence, chosen at run time") for v in base.value))
    if isinstance(base, Sequence) and base.items:
        return ValueSet.union(base.items)
    return None


def _may_match(keys: ValueSet, others: ValueSet) -> bool:
    """Some key of ``keys`` can equal some key of ``others`` (dict keys: constants, tuples of them)."""
    return any(_may_equal(a, b) for a in keys for b in others)


def _may_equal(a: AbstractValue, b: AbstractValue) -> bool:
    if isinstance(a, Const) and isinstance(b, Const):
        return bool(a.value == b.value)
    if isinstance(a, WarpType) or isinstance(b, WarpType):
        # one class object is one value: a Warp type is no literal, and two different types never the same key
        if isinstance(a, (WarpType, Const)) and isinstance(b, (WarpType, Const)):
            return a == b
        return True
    if isinstance(a, Const) and isinstance(b, Sequence):
        a, b = b, a
    if isinstance(a, Sequence) and isinstance(b, Const):
        if not isinstance(b.value, tuple):
            return False
        return len(a.items) == len(b.value) and all(
            any(_may_equal(x, Const(y)) for x in item) for item, y in zip(a.items, b.value, strict=True))
    if isinstance(a, Sequence) and isinstance(b, Sequence):
        return len(a.items) == len(b.items) and all(_may_match(x, y) for x, y in zip(a.items, b.items, strict=True))
    return True  # a value not known: it may be any key


def _product(sets: list[ValueSet]) -> list[tuple[object, ...]]:
    combos: list[tuple[object, ...]] = [()]
    for s in sets:
        combos = [(*c, v.value) for c in combos for v in s if isinstance(v, Const)][:MAX_VALUES + 1]
    return combos


class _SourceRejected(Exception):
    """A source ``Evaluator.sources``' ``accept`` rejected: the rest need not be found."""


class _AcceptedSources(list):
    """The sources found so far, each tested by ``accept`` as it is added (``Evaluator.sources``)."""

    def __init__(self, accept: Callable[[Source], bool]) -> None:
        super().__init__()
        self._accept = accept

    def append(self, source: Source) -> None:
        super().append(source)
        if not self._accept(source):
            raise _SourceRejected


@dataclass(frozen=True, eq=False)
class Source:
    """An expression a value comes from (``Evaluator.sources``): ``value``, written in ``scope`` of
    ``file``, its parameters bound at ``site``; ``attrs`` the attributes read off it; ``complete`` False
    when the bounds cut the following short here (the expression may come from further back)."""

    file: FileModel
    value: Value
    scope: str
    site: Site | None = None
    attrs: tuple[str, ...] = ()
    complete: bool = True



def _asv_axes(params: AbstractValue) -> list[ValueSet] | None:
    """The value sets of each axis of an asv ``params`` value, as asv reads it: a list of lists is one list per
    parameter, any other list is the one parameter's values. None when it is not a literal list."""
    if isinstance(params, Const) and isinstance(params.value, (list, tuple)):
        items = list(params.value)
        if items and isinstance(items[0], (list, tuple)):
            return [ValueSet(frozenset(Const(c) for c in entry)) if isinstance(entry, (list, tuple))
                    else ValueSet.of(Unknown("not a list")) for entry in items]
        return [ValueSet(frozenset(Const(c) for c in items))]
    if isinstance(params, Sequence):
        heads = [next(iter(s)) if len(s) == 1 else None for s in params.items]
        if heads and all(h is not None and _is_list(h) for h in heads):
            return [_flat(h) for h in heads if h is not None]
        return [ValueSet.union(params.items)]
    return None


def _is_list(value: AbstractValue) -> bool:
    return isinstance(value, Sequence) or (isinstance(value, Const) and isinstance(value.value, (list, tuple)))


def _flat(value: AbstractValue) -> ValueSet:
    """The items of one axis (a list literal, constant or not)."""
    if isinstance(value, Sequence):
        return ValueSet.union(value.items)
    assert isinstance(value, Const) and isinstance(value.value, (list, tuple))
    return ValueSet(frozenset(Const(c) for c in value.value))


def _replaces_none(assignment: Assignment, name: str) -> bool:
    """``assignment`` rebinds the local ``name`` under ``if name is None:`` and nothing else (not in a loop, a
    ``try`` or a further branch): every read after that statement sees the new value where the old one was None.
    A read before the guard is taken as one after it: these reads are not ordered (the guard is written first)."""
    ctx = assignment.ctx
    if assignment.augmented or len(ctx.tests) != 1 or ctx.in_loop or ctx.try_index is not None or ctx.in_handler:
        return False
    test = ctx.tests[0]
    if test.kind != "compare" or test.text != "is" or len(test.items) != 2:
        return False
    left, right = test.items
    return (isinstance(left, Value) and isinstance(right, Value) and left.kind == "name" and left.local
            and left.text == name and right.kind == "const" and right.text == "None")

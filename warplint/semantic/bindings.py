"""The binder's tables: what the project's files define, name and call, answered across files.

Which file a dotted name belongs to (tolerant of the import root), the functions, classes and
constructions, call sites and callers (methods of locally constructed instances included), the
assignments to names, subscripts, items and attributes, the calls per callee and per scope, a
library file's public API, what kind of code a file is, whether importing a module defines
kernels, and the facts of the Warp version the project runs against.

Pure over the file models: it knows no evaluator and no identity fact (``warplint.semantic``'s
package docstring gives the layer's order). Installed third-party packages are located on
``sys.path`` without importing them and read from disk on demand.
"""

from __future__ import annotations

import builtins
import concurrent.futures
import functools
import os
from array import array
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from typing import Literal

from warplint.model import Assignment, Call, FileModel, Function, Kernel, Value, glimpse, stored_without
from warplint.names import is_warp_api
from warplint.warp_version import Found, WarpEnvironment, WarpFacts, own_interpreter_version, version_in_config

from . import file_facts
from .context import (
    PARAMETRIZE_MARK,
    CodeContext,
    called_by_runner,
    collected_by_pytest,
    context_of,
    is_test,
    parametrized,
)
from .file_facts import FileFacts
from .reads import KeptFacts, ReadRecorder
from .resolution import CallResolution, Imports
from .values import EXECUTORS_MODULE, NAMESPACE_CONSTRUCTOR


class _ModuleTable(dict):
    """Module name -> file, tolerant of the import root.

    A file's name is the one the project's evidence gives it (``warplint/module_names.py``:
    ``examples.particles.kernels`` when the project imports it so); a file may still be imported
    through another root (``particles.kernels``). A lookup that misses retries without leading components,
    but never past a leading part that is itself a plain module (no package): nothing is beneath it.
    """

    def __init__(self) -> None:
        super().__init__()
        self._retried: dict[str, object] = {}  # name -> what the tolerant retry found (None: nothing)

    def __setitem__(self, name, value) -> None:
        self._retried.clear()
        super().__setitem__(name, value)

    def setdefault(self, name, value=None):
        self._retried.clear()
        return super().setdefault(name, value)

    def get(self, name, default=None):
        found = dict.get(self, name)
        if found is not None or not isinstance(name, str):
            return found if found is not None else default
        # Most lookups that miss are names outside the project (``numpy.zeros`` and each of its prefixes,
        # for every call of every file): the retry is memoised.
        if name in self._retried:
            retried = self._retried[name]
            return retried if retried is not None else default
        parts = name.split(".")
        retried = None
        for i in range(1, min(len(parts) - 1, 3) + 1):
            dropped = dict.get(self, ".".join(parts[:i]))
            if dropped is not None and not dropped.is_package:
                break  # a module that is no package has nothing beneath it: `mod.run.k` is a name in `mod`
            retried = dict.get(self, ".".join(parts[i:]))
            if retried is not None:
                break
        self._retried[name] = retried
        return retried if retried is not None else default

    def __contains__(self, name) -> bool:
        return self.get(name) is not None



# a function a call reaches with the arguments bound before it (``functools.partial``): its fqname, positional
# arguments, keywords, what it is read off (``Call.read_off``) and its ``*x`` / ``**x`` (``Value.unpacked``)
_Bound = tuple[str, tuple[Value, ...], dict[str, Value], str, tuple[Value, ...]]
_NO_NAMES: dict[str, tuple[Assignment, ...]] = {}  # the names bound in a scope that binds none (never written)


class Bindings:
    """The per-file and project tables over the models of the linted files (files that failed to parse
    left out)."""

    def __init__(
        self,
        files: Iterable[FileModel],
        load_external: Callable[[str], FileModel | None] | None = None,
        warp_environment: WarpEnvironment | None = None,
        runs_as_main: Callable[[str, bool], bool] | None = None,
        file_facts: FileFacts | None = None,
        kept_facts: KeptFacts | None = None,
        call_resolution: CallResolution | None = None,
    ) -> None:
        self.files = [f for f in files if f.error is None]
        # each file's own tables, kept by a session across the layers it builds (file_facts.py)
        self.file_facts = file_facts if file_facts is not None else FileFacts()
        # facts of a file recorded with what they read, kept by the session likewise (reads.py, ``Layer.kept``):
        # given one, the layer records what its facts read
        self.kept_facts = kept_facts if kept_facts is not None else KeptFacts()
        self._runs_as_main = runs_as_main  # (path, has a __main__ block) -> runs as __main__ (module_names.py)
        self._warp_environment = warp_environment or WarpEnvironment(own_install=own_interpreter_version())
        self._warp: WarpFacts | None = None
        self.by_module: dict[str, FileModel] = _ModuleTable()
        for f in self.files:
            self.by_module.setdefault(f.module, f)
        self.by_path = {f.path: f for f in self.files}
        self._load_external = load_external
        self._external: dict[str, FileModel | None] = {}
        self._callers: dict[str, list[tuple[FileModel, Call]]] = {}  # filled name by name (``callers``)
        # the last part of a callee's name -> (file, its calls of that name), until the name is asked (``callers``)
        self._calls_by_last_name: dict[str, list[tuple[FileModel, Sequence[Call]]]] | None = None
        self._defines_cache: dict[str, str | None] = {}
        self._functions: dict[str, tuple[FileModel, Function] | None] = {}  # ``function``'s answers
        self.memo: dict = {}  # the tables, built on first use
        # each call's callee (``callee_of``), kept by a session for the files an edit leaves alone (resolution.py)
        resolution = self._resolution = call_resolution if call_resolution is not None else CallResolution()
        resolution.begin(self.files, _names_bound)
        # (file, call) ids -> (call, callee_of); and -> (call, the canonical callee it is listed under in ``callers``;
        # None: Warp's API). Each as asked in this layer, and as carried from the one before
        self._callees, self._earlier_callees = resolution.callees, resolution.earlier_callees
        self._resolved, self._earlier_resolved = resolution.resolved, resolution.earlier_resolved
        # every (file, module-level name) a resolution looks up: noted only where a later layer may carry it
        self._note = resolution.note if call_resolution is not None else _not_noted
        self.memo.update(resolution.tables)  # (the same tables: what this layer adds is carried on)
        self.reads = ReadRecorder(enabled=kept_facts is not None)  # what each fact and memo entry read (reads.py)

    @property
    def warp(self) -> WarpFacts:
        """The facts of the Warp this project runs against (warplint/warp_version.py says how it is found):
        ``warp.config_names``, ``warp.module_options`` (the valid names), ``warp.label`` for messages."""
        if self._warp is None:
            self._warp = self._warp_environment.facts(self._linted_warp_tree())
        return self._warp

    def _linted_warp_tree(self) -> Found | None:
        """The linted files are Warp's own: the version in their ``warp/config.py``."""
        for module in ("warp.config", "warp._src.config"):
            owner = dict.get(self.by_module, module)  # exactly Warp's module, not a tolerant import-root match
            if owner is not None:
                version = version_in_config(owner.path)
                if version:
                    return Found(version, f"the linted Warp tree ({module.replace('.', '/')}.py)")
        return None

    # ------------------------------------------------------------------ lookup
    def module(self, name: str, external: bool = False) -> FileModel | None:
        found = self.by_module.get(name)
        if found is not None or not external or self._load_external is None:
            return found
        if name not in self._external:
            self._external[name] = self._load_external(name)
        return self._external[name]

    def run_name(self, file: FileModel) -> str:
        """The name Warp gives the module of ``file``'s own kernels when the program runs: ``__main__`` for the
        file the program runs (``ModuleNames.runs_as_main``), else its module name."""
        # a test file's __main__ block is not how it runs: a test runner imports it by its module name
        script = file.has_main_guard and self.context_of(file) is not CodeContext.TEST
        if self._runs_as_main is not None and self._runs_as_main(file.path, script):
            return "__main__"
        return file.module

    def file_at(self, path: str) -> FileModel | None:
        found = self.by_path.get(path)
        if found is None:
            found = next((f for f in self._external.values() if f is not None and f.path == path), None)
        return found

    def _owner_prefix(self, ref: str) -> tuple[FileModel, str] | None:
        """The project file owning the dotted name ``ref``, and the prefix of ``ref`` that names it (a
        namespace-package spelling ``newton._src.x`` of the file named ``x`` included)."""
        table: dict[str, tuple[FileModel, str] | None] = self.cached("owner_prefix", dict)
        if ref in table:  # asked for every callee of every call, again by most rules: memoised per name
            return table[ref]
        module = ref
        found_at: tuple[FileModel, str] | None = None
        while module:
            found = self.by_module.get(module)
            if found is not None:
                # `main.main.k` of the file `main`: its own module spelled in full (the function `main` of
                # module `main`), not the module under an import root dropped
                exact = ref == found.module or ref.startswith(found.module + ".")
                found_at = found, found.module if exact else module
                break
            module = module.rpartition(".")[0]
        table[ref] = found_at
        return found_at

    def context_of(self, file: FileModel, scope: str = "") -> CodeContext:
        """What kind of code ``scope`` of ``file`` is: library, application, test, benchmark or example
        (``warplint.semantic.context``)."""
        return context_of(self, self.file_facts, file, scope)

    def is_warp_api(self, ref: str | None) -> bool:
        """A name of Warp's API. Linting Warp's own tree, only what the ``warp`` package itself exports
        is API; ``warp._src.optim.linear.X`` is then code of the project (names.is_warp_api: tests and
        examples are project code always)."""
        if not is_warp_api(ref):
            return False
        owner = self.owner_of(ref or "")
        return owner is None or owner.module == "warp"

    def owner_of(self, ref: str) -> FileModel | None:
        """The project file whose module is the longest prefix of the dotted name ``ref``."""
        found = self._owner_prefix(ref)
        return found[0] if found is not None else None

    def canonical_ref(self, ref: str) -> str:
        """``ref`` with its module part spelled as the owning file's module name: a namespace-package
        import ``newton._src.solvers.x.k`` of the file named ``solvers.x`` becomes ``solvers.x.k``."""
        found = self._owner_prefix(ref)
        return found[0].module + ref[len(found[1]):] if found is not None else ref

    def definition(self, ref: str) -> str:
        """``ref`` spelled where Python finds its object: a name a project module imports at module level and does
        not bind itself (``from ._src.sim.ik import IKObjective`` in ``newton/ik.py``) is the imported name,
        followed to the module that defines it, and the rest of ``ref`` read off that; anything else as it is
        (in its canonical spelling)."""
        table: dict[str, str] = self.cached("definitions", dict)
        found = table.get(ref)
        if found is None:
            found = table[ref] = self._definition(self.canonical_ref(ref), set())
        return found

    def _definition(self, ref: str, seen: set[tuple[str, str]]) -> str:
        located = self._owner_prefix(ref)
        if located is None or located[1] == ref:
            return ref
        owner, prefix = located
        head, _, tail = ref[len(prefix) + 1:].partition(".")
        self._note(owner, head)
        if (head in owner.functions or head in owner.classes or (owner.path, head) in seen
                or self.name_assignments(owner, "", head)):
            return ref
        for imp in owner.imports:
            if imp.ctx.scope:
                continue
            for imported, alias in imp.names:
                if alias == head and imported != "*":
                    seen.add((owner.path, head))
                    target = self._definition(self.canonical_ref(f"{imp.module}.{imported}" if imp.module
                                                                  else imported), seen)
                    return f"{target}.{tail}" if tail else target
        return ref

    def is_class(self, fqname: str) -> bool:
        table: dict[str, bool] = self.cached("is class", dict)  # (carried: resolution.py)
        found = table.get(fqname)
        if found is None:
            found = table[fqname] = self._is_class(fqname)
        return found

    def _is_class(self, fqname: str) -> bool:
        fqname = self.definition(fqname)
        owner = self.owner_of(fqname)
        if owner is None:
            return False
        qual = fqname[len(owner.module) + 1:]
        self._note(owner, qual.partition(".")[0])
        return qual in owner.classes

    def subclasses(self, fqname: str) -> list[str]:
        """The project's classes derived from the class ``fqname``, directly or through others (fqnames)."""
        def by_base() -> dict[str, list[str]]:
            table: dict[str, list[str]] = {}
            for f in self.files:
                for qual, bases in f.classes.items():
                    for base in bases:
                        table.setdefault(self.definition(base), []).append(self.fqname(f, qual))
            return table

        derived = self.cached("subclasses by base", by_base)
        found: list[str] = []
        pending = [self.definition(fqname)]
        while pending:
            for sub in derived.get(pending.pop(), ()):
                if sub not in found:
                    found.append(sub)
                    pending.append(sub)
        return found

    def kernel_index(self, file: FileModel, kernel: Kernel) -> int:
        # keyed by the list's length too: the decorated kernels are added to the models after the tables are made
        table = self.cached(("kernel_index", id(file), len(file.kernels)),
                            lambda: {id(k): i for i, k in enumerate(file.kernels)})
        return table[id(kernel)]

    def attribute_assignments(self, ref: str) -> list[tuple[FileModel, Assignment]]:
        """Assignments to the attribute ``ref`` (``pkg.mod.Class.attr``): class body and ``self.attr = ...``."""
        return [(f, a) for f, assignments in self._attribute_groups().get(ref, ()) for a in assignments]

    def _attribute_groups(self) -> dict[str, list[tuple[FileModel, Sequence[Assignment]]]]:
        """``pkg.mod.Class.attr`` -> (file, its assignments of it), in file order (kept across a session's layers:
        ``NameGroups``)."""
        return self.cached("attribute groups", lambda: self._resolution.attribute_groups.over(
            self.files, lambda f: self.file_facts.cached(f, file_facts.assignment_tables).attributes)[0])

    def attribute_names_assigned(self) -> frozenset[str]:
        """The last part of every attribute the project assigns on an object that may be a ``types.SimpleNamespace``
        (``obj.name = ...``): an object's attribute by another name is never written after it is made. Not those
        recorded under a project class (a class body's ``name = ...``, ``self.name = ...`` in its methods): they are
        attributes of that class and its objects, and a namespace is none of them."""
        def compute(groups: dict[str, list[tuple[FileModel, Sequence[Assignment]]]]) -> frozenset[str]:
            names: set[str] = set()
            classes: dict[str, bool] = {}  # a class's attributes are many: each owner asked once
            for ref in groups:
                owner, _, name = ref.rpartition(".")
                if name not in names:
                    found = classes.get(owner)
                    if found is None:
                        found = classes[owner] = self.is_class(owner)
                    if not found:
                        names.add(name)
            return frozenset(names)

        groups = self._attribute_groups()  # (first: it counts the changes of the attributes assigned)
        table: dict[int, frozenset[str]] = self.cached("attribute names assigned", dict)  # (carried: resolution.py)
        made = self._resolution.attribute_groups.names_made
        found = table.get(made)
        if found is None:
            table.clear()
            found = table[made] = compute(groups)
        return found

    def names_bound_to_calls(self, test: Callable[[str], bool]) -> frozenset[str]:
        """The last part of every name or attribute the project binds the result of a call to, of the calls whose
        callee ``test`` accepts (``tape`` and ``self.tape``, for ``wp.Tape()``): the receivers a method of what
        such a call returns can be called on."""
        table = _names_bound_to_calls_table(test)
        return self.cached(("names bound to calls", test), lambda: frozenset().union(
            *(self.file_facts.cached(f, table) for f in self.files)))

    def constructions(self, cls: str) -> list[tuple[FileModel, Call]]:
        """Calls that construct the project class ``cls``."""
        return self.callers(cls)

    def call_sites(self, fqname: str) -> list[tuple[FileModel, Call]]:
        """Calls of a project function (``Class(...)`` counts as a call of ``Class.__init__``; reading a
        property counts as a call of its getter, ``getter_reads``)."""
        sites = list(self.callers(fqname))
        head, _, name = fqname.rpartition(".")
        if name == "__init__":
            sites += self.callers(head)
        return sites + self.getter_reads(fqname) + self.descriptor_reads(fqname)

    def getter_reads(self, fqname: str) -> list[tuple[FileModel, Call]]:
        """The reads of a ``@property`` / ``@functools.cached_property`` attribute that run the getter
        ``fqname``, each as a call of the getter without arguments made by the statement that reads it
        (``wp.launch(Model(1).kernel, ...)``: the getter runs there, before the launch). A read is one off an
        instance the class makes (``Model(1).kernel``), off ``self`` in its methods, or off a local when no
        other project class has a getter of that name and the local may hold an instance of this one
        (``_local_read_off``)."""
        found = self.function(fqname)
        if found is None or not is_getter(found[1]):
            return []
        cls = self.canonical_ref(fqname.rpartition(".")[0])
        name = found[1].name
        reads = self.cached("getter reads", self._getter_reads).get(name, [])
        ambiguous = len(self.cached("getters by name", self._getters_by_name).get(name, ())) > 1
        sites: list[tuple[FileModel, Call]] = []
        for file, statement, value in reads:
            base = value.base
            if (value.ref and self.canonical_ref(value.ref) == f"{cls}.{name}") or (
                    base is not None and base.kind == "call" and base.ref and self.canonical_ref(base.ref) == cls) or (
                    value.local and not ambiguous
                    and self._local_read_off(file, statement.ctx.scope, value.text, cls) is not False):
                sites.append((file, Call(fqname, statement.span, (), {}, statement.ctx, read_off="instance")))
        return sites

    def descriptor_reads(self, fqname: str) -> list[tuple[FileModel, Call]]:
        """The reads that run ``fqname`` when it is the ``__get__`` of a project descriptor class ``D``: a class
        body binds ``attr = D(...)``, and reading ``attr`` off an instance runs ``D.__get__(d, obj, owner)``.
        Each read is a call of ``__get__`` made by the statement that reads it, passing ``obj`` the instance read
        (``Holder(c).attr``, a read the binder resolves to ``Holder.attr``); a read off a local the binder does
        not resolve passes nothing known (the instance may be any)."""
        head, _, name = fqname.rpartition(".")
        found = self.function(fqname)
        if name != "__get__" or found is None or len(found[1].params) < 2:
            return []
        return list(self.cached(("descriptor reads", fqname), lambda: self._descriptor_reads(
            self.canonical_ref(head), fqname, found[1].params[1].name)))

    def _descriptor_reads(self, descriptor: str, fqname: str, obj: str) -> list[tuple[FileModel, Call]]:
        holders: dict[str, str] = {}  # attribute name -> the class whose body binds it to a descriptor
        for f in self.files:
            for a in f.assignments:
                holder = self._descriptor_holder(a, descriptor)
                if holder is not None:
                    holders[a.target.text.rpartition(".")[2]] = holder
        sites: list[tuple[FileModel, Call]] = []
        reads = self.cached("attribute reads by name", self._attribute_reads_by_name) if holders else {}
        for name, holder in holders.items():
            for f, statement, read in reads.get(name, ()):
                base = read.base
                if base is not None and base.kind == "call" and base.ref and self.canonical_ref(base.ref) == holder:
                    sites.append((f, Call(fqname, statement.span, (), {obj: base}, statement.ctx, read_off="instance")))
                elif read.local:
                    instance = self._local_read_off(f, statement.ctx.scope, read.text, holder)
                    if instance is not False:
                        sites.append((f, Call(fqname, statement.span, (), {obj: instance} if instance else {},
                                              statement.ctx, read_off="instance")))
                elif read.ref and self.canonical_ref(read.ref.rpartition(".")[0]) == holder:
                    sites.append((f, Call(fqname, statement.span, (), {}, statement.ctx, read_off="instance")))
        return sites

    def _local_read_off(self, file: FileModel, scope: str, read: str, holder: str) -> Value | Literal[False] | None:
        """What ``read`` (``local.attr``, in ``scope``) is read off: False when the local holds, wherever ``scope``
        binds it, an object made by calling a class other than ``holder`` and the classes derived from it (another
        project class, a builtin class, a ``types.SimpleNamespace``): reading an attribute off an instance looks
        in its own class's MRO only, so no descriptor of ``holder`` runs there. Else the local itself, for the
        evaluator to follow at the read, when ``read`` is an attribute of it; None when it is deeper."""
        local, _, attr = read.partition(".")
        if not attr or "." in attr:
            return None
        fn = file.functions.get(scope)
        bound = self.file_facts.cached(file, file_facts.assignment_tables).names.get(scope, {}).get(local, ())
        if bound and not (fn is not None and any(p.name == local for p in fn.params)):
            derived = {holder, *self.subclasses(holder)}
            if all(a.value.kind == "call" and a.value.ref is not None and not a.value.local
                   and self._makes_instance_outside(self.canonical_ref(a.value.ref), derived) for a in bound):
                return False
        return Value("name", local, ref=local, local=True)

    def _makes_instance_outside(self, ref: str, classes: set[str]) -> bool:
        """Whether calling ``ref`` makes an instance of a class outside ``classes``: a project class not among
        them, a builtin class (not a metaclass, whose call may return a class, nor ``super``, a proxy that reads
        the class's MRO), or a ``types.SimpleNamespace``."""
        if self.is_class(ref):
            return ref not in classes
        if ref == NAMESPACE_CONSTRUCTOR:
            return True
        found = getattr(builtins, ref, None) if "." not in ref else None
        return isinstance(found, type) and not issubclass(found, type) and found is not super

    def _descriptor_holder(self, assignment: Assignment, descriptor: str) -> str | None:
        """The class whose body binds ``attr = D(...)`` (``D`` the class ``descriptor``) in ``assignment``; None
        for another statement (a method's ``self.attr = D()`` puts it on the instance, where no ``__get__`` runs)."""
        target, value = assignment.target, assignment.value
        if target.kind != "attr" or not target.ref or value.kind != "call" or not value.ref:
            return None
        holder = self.canonical_ref(target.ref.rpartition(".")[0])
        owner = self.owner_of(holder)
        if self.canonical_ref(value.ref) != descriptor or owner is None or not self.is_class(holder):
            return None
        return None if assignment.ctx.scope.startswith(f"{holder[len(owner.module) + 1:]}.") else holder

    def _getters_by_name(self) -> dict[str, list[str]]:
        table: dict[str, list[str]] = {}
        for f in self.files:
            for fn in f.functions.values():
                if fn.class_name is not None and is_getter(fn):
                    table.setdefault(fn.name, []).append(self.fqname(f, fn.qualname))
        return table

    def _getter_reads(self) -> dict[str, list[tuple[FileModel, Call | Assignment, Value]]]:
        names = self.cached("getters by name", self._getters_by_name)
        if not names:
            return {}
        reads = self.cached("attribute reads by name", self._attribute_reads_by_name)
        return {name: reads[name] for name in names if name in reads}

    def _attribute_reads_by_name(self) -> dict[str, list[tuple[FileModel, Call | Assignment, Value]]]:
        """Every attribute read in a call's arguments or receiver or an assignment's value, by attribute name,
        with the statement that reads it (what a property getter or a descriptor's ``__get__`` is called by)."""
        table: dict[str, list[tuple[FileModel, Call | Assignment, Value]]] = {}
        for f in self.files:
            for name, reads in self.file_facts.cached(f, file_facts.attribute_reads).items():
                table.setdefault(name, []).extend((f, statement, read) for statement, read in reads)
        return table

    def file_of_module(self, name: str) -> FileModel | None:
        """The project file whose module is ``name`` (spelled as its own module name)."""
        return self.by_module.get(name)

    def canonical_module(self, name: str) -> str:
        """A project module's own name for any spelling the import root allows."""
        found = self.by_module.get(name)
        return found.module if found is not None else name

    def function(self, fqname: str) -> tuple[FileModel, Function] | None:
        """``pkg.mod.Class.method`` -> (file, Function), for project files."""
        table = self._functions
        if fqname in table:  # (asked of nearly every callee a fact follows, again and again)
            return table[fqname]
        found = table[fqname] = self._function(fqname)
        return found

    def _function(self, fqname: str) -> tuple[FileModel, Function] | None:
        module = fqname.rpartition(".")[0]
        while module:
            f = self.by_module.get(module)
            if f is not None:
                qual = fqname[len(module) + 1 :]
                self._note(f, qual.partition(".")[0])
                fn = f.functions.get(qual)
                return (f, fn) if fn is not None else None
            module = module.rpartition(".")[0]
        return None

    def file_of_function(self, fn: Function) -> FileModel | None:
        """The file that defines ``fn`` (a Function object of one of the models)."""
        table = self.cached("file of function", lambda: self._resolution.function_files.over(self.files))
        return table.get(id(fn))

    @staticmethod
    def fqname(file: FileModel, qualname: str) -> str:
        return f"{file.module}.{qualname}" if qualname else file.module

    def cached(self, key, compute):
        """``compute()`` once per project: a table built on first use."""
        if key not in self.memo:
            self.memo[key] = compute()
        return self.memo[key]

    # ------------------------------------------------------------------ per-file tables
    @staticmethod
    def kernels_in(file: FileModel) -> list[Kernel]:
        """Every kernel of ``file``: its own and the ``derived`` ones the project adds (``add_decorated_kernels``)."""
        return file.kernels

    def calls_to(self, file: FileModel, *callees: str) -> list[Call]:
        """The calls in ``file`` of any of ``callees`` (dotted, as resolved: ``"warp.force_load"``), in source
        order. One table per file: most rules look for a few Warp calls, and sweeping every call of every
        file once per rule was a large part of a re-check."""
        table, calls = self._calls_by_callee(file), file.calls
        if len(callees) == 1:
            return [calls[i] for i in table.get(callees[0], ())]
        return [calls[i] for i in sorted(i for c in set(callees) for i in table.get(c, ()))]

    def calls_where(self, file: FileModel, test: Callable[[str], bool]) -> list[Call]:
        """The calls in ``file`` whose callee ``test`` accepts, in source order (tested once per callee)."""
        table, calls = self._calls_by_callee(file), file.calls
        return [calls[i] for i in sorted(i for c in table if test(c) for i in table[c])]

    def warp_aliases(self, file: FileModel, ref: str) -> frozenset[tuple[str, str]]:
        """(scope, name) of each plain name ``file`` binds to the Warp API object ``ref`` and to nothing else in that
        scope (``jax_kernel = wp.jax_kernel``): a call of that name in that scope (of a module-level one, anywhere in
        the file that does not bind the name again) calls ``ref``. Only names the file calls are read, and an
        assignment whose stored value does not mention ``ref``'s last part is not unpickled."""
        word = ref.rpartition(".")[2]

        def compute() -> frozenset[tuple[str, str]]:
            found: set[tuple[str, str]] = set()
            called = self._calls_by_last_name_of(file)  # a plain name's call is listed under the name itself
            for a in file.assignments:
                target = a.target
                if target.kind != "name" or target.text not in called or stored_without(a, word) or a.value.ref != ref:
                    continue
                bound = self.name_assignments(file, a.ctx.scope, a.target.text)
                if all(b.value.ref == ref for b in bound):
                    found.add((a.ctx.scope, a.target.text))
            return frozenset(found)

        return self.cached(("warp aliases", id(file), ref), compute)

    def _calls_by_callee(self, file: FileModel) -> dict[str, array[int]]:
        return self.file_facts.cached(file, file_facts.call_tables).by_callee

    def warp_calls(self, file: FileModel, *names: str) -> list[Call]:
        """``calls_to`` for Warp's API by short name: ``warp_calls(f, "load_module", "force_load")``."""
        return self.calls_to(file, *(f"warp.{name}" for name in names))

    def calls_in(self, file: FileModel, scope: str) -> list[Call]:
        """The calls written directly in ``scope`` of ``file``, in source order; a call through a name bound to
        project functions is the calls of those functions it makes (``calls_made``)."""
        if not self._dispatches(file):  # the file's own calls (nearly every file): its own table
            own = self.file_facts.cached(file, file_facts.call_tables).by_scope
            return own.get(scope, [])
        made = self.cached(("calls_by_scope", id(file)), lambda: file_facts.by_scope(self.calls_made(file)))
        return made.get(scope, [])

    def calls_made(self, file: FileModel) -> list[Call]:
        """The calls of ``file`` in source order, where a call of a name bound to project functions is one call
        of each function it calls (the same statement and arguments): the target of a ``for`` over a literal
        sequence of functions (``for step in (setup, run): step()`` calls ``setup``, then ``run``: each call's
        ``ctx.item`` is the function's place in the sequence; when that ``for`` is the one loop around the call, a
        function listed once is called once per walk, not in a loop), or a name bound to ``functools.partial(f, *a,
        **k)`` (``f`` with those arguments first, as Python binds a partial object's). The same objects every
        time: facts are memoised by call."""
        def compute() -> list[Call]:
            dispatches = self._dispatches(file)
            if not dispatches:
                return list(file.calls)
            made: list[Call] = []
            for call in file.calls:
                made.extend(dispatches.get(id(call), (call,)))
            return made

        return self.cached(("calls made", id(file)), compute)

    def _dispatches(self, file: FileModel) -> dict[int, list[Call]]:
        """id of each call of ``file`` made through a bound name -> the calls of project functions it makes
        (``calls_made``). A call's name is looked up only when some bound name has its last part: nearly every
        call of a project calls no such name."""
        def compute() -> dict[int, list[Call]]:
            found = self._parametrized_dispatches(file)
            for call in self._calls_by_last_name_of(file).get("submit", ()):
                submitted = self._submitted(file, call)
                if submitted is not None:
                    found[id(call)] = [submitted]
            # a call can name a bound name only by its last part: a plain name bound in its own file, or an attribute
            # named as a module-level name bound in another (``_bound_name_of``)
            own = {name for _, name in self._dispatching(file)}
            module_level = self.cached("module-level names bound to functions", lambda: frozenset().union(
                *(self.file_facts.cached(f, _module_level_dispatching) for f in self.files)))
            if not (own or module_level):
                return found
            by_last_name = self._calls_by_last_name_of(file)
            # (the smaller side walked: a file calls a hundred names, a project binds a few to functions)
            common = {n for n in own if n in by_last_name} | (
                {n for n in module_level if n in by_last_name} if len(module_level) < len(by_last_name)
                else {n for n in by_last_name if n in module_level})
            if not common:
                return found
            calls = file.calls
            by_last_part = self.file_facts.cached(file, file_facts.positions_by_last_name)
            for position in sorted(i for name in common for i in by_last_part[name]):  # in source order
                call = calls[position]
                if id(call) in found:
                    continue
                key = self._bound_name_of(file, call)
                bindings = self._bound_to_function(*key) if key is not None else None
                dispatched = self._dispatched(file, call, bindings) if bindings else None
                if dispatched:
                    found[id(call)] = dispatched
            return found

        return self.cached(("dispatched calls", id(file)), compute)

    def _submitted(self, file: FileModel, call: Call) -> Call | None:
        """``executor.submit(fn, *args, **kwargs)`` on an executor of the standard library (the name it is read off
        bound, last before the call, to a construction of a ``concurrent.futures.Executor`` subclass, as ``with
        ThreadPoolExecutor() as pool`` binds it): the call of the project function ``fn`` with those arguments, made
        where the work is submitted. None for any other ``submit``."""
        receiver, _, _ = call.callee.rpartition(".")
        if not call.args or call.has_star_args or not receiver or "." in receiver:
            return None
        scope = call.ctx.scope
        bindings = [a for a in self.name_assignments(file, scope, receiver)
                    if a.ctx.scope != scope or a.ctx.order < call.ctx.order]
        if not bindings:
            return None
        value = max(bindings, key=lambda a: a.ctx.order).value
        if not (value.kind == "call" and value.ref and _is_executor_class(value.ref)):
            return None
        target = self._function_of(file, scope, call.args[0])
        return None if target is None else self._call_of(replace(call, args=call.args[1:]), target, call.ctx.item)

    def _parametrized_dispatches(self, file: FileModel) -> dict[int, list[Call]]:
        """The calls of project functions a test makes through a parameter ``@pytest.mark.parametrize`` binds to
        a literal list of them (``calls_made``): pytest runs the test once per value, in the listed order, so
        ``phase()`` calls the first function, then the next (``ctx.item``: the value's place, from 1), as a
        ``for`` over the list would; more than one parametrize mark repeats each (``ctx.in_loop``)."""
        found: dict[int, list[Call]] = {}
        if not collected_by_pytest(file):
            return found
        for fn in self.file_facts.cached(file, file_facts.functions_by_decorator).get(PARAMETRIZE_MARK, ()):
            if not is_test(file, fn):
                continue
            marks = sum(1 for d in fn.decorator_values if d.kind == "call" and d.ref == PARAMETRIZE_MARK)
            for name, values in parametrized(fn).items():
                if values is None or self.name_assignments(file, fn.qualname, name):
                    continue  # values not listed here, or the body binds the name again
                targets = [self._function_of(file, fn.ctx.scope, value) for value in values]
                for call in self.file_facts.cached(file, file_facts.call_tables).by_scope.get(fn.qualname, ()):
                    if call.callee != name or id(call) in found:
                        continue
                    made = [self._call_of(call, target, position, in_loop=True if marks > 1 else None)
                            for position, target in enumerate(targets, 1) if target is not None]
                    if made:
                        found[id(call)] = made
        return found

    def _calls_through_names(self) -> list[tuple[FileModel, Call]]:
        """The calls of functions that calls through bound names make (``calls_made``), beside the files' own."""
        return [(f, call) for f in self.files for made in self._dispatches(f).values() for call in made]

    def _bound_name_of(self, file: FileModel, call: Call) -> tuple[str, str, str] | None:
        """(path, scope, name) of the name a call calls when that is a local or a module-level name of a project
        file; None for a dotted callee that names no such module-level name."""
        if "." not in call.callee:
            return (file.path, call.ctx.scope, call.callee)
        owner, _, name = call.callee.rpartition(".")
        found = self.by_module.get(owner)
        return (found.path, "", name) if found is not None else None

    def _dispatching(self, file: FileModel) -> frozenset[tuple[str, str]]:
        """(scope, name) of the names ``file`` binds in a way ``_dispatched`` reads: a ``for`` target, or
        ``functools.partial(...)`` (its own table, ``assignment_tables``: an edit reads only the edited file's)."""
        return self.file_facts.cached(file, file_facts.assignment_tables).dispatching

    def _bound_to_function(self, path: str, scope: str, name: str) -> tuple[Assignment, ...] | None:
        """The assignments of the name ``name`` of ``scope`` of the file at ``path`` when it is bound in a way
        ``_dispatched`` reads (``_dispatching``); None for any other name."""
        file = self.by_path.get(path)
        if file is None or (scope, name) not in self._dispatching(file):
            return None
        return self.name_assignments(file, scope, name)

    def _calls_by_last_name_of(self, file: FileModel) -> dict[str, tuple[Call, ...]]:
        return self.file_facts.cached(file, file_facts.call_tables).by_last_name

    def _dispatched(self, file: FileModel, call: Call, bindings: tuple[Assignment, ...]) -> list[Call] | None:
        """The calls of project functions that ``call`` (in ``file``) makes through a bound name (``calls_made``);
        None when the binding it calls through (the last one before it) is not a partial object of a function
        or a ``for`` over a literal sequence, or when no item of the sequence is a project function."""
        before = [a for a in bindings if a.ctx.scope != call.ctx.scope or a.ctx.order < call.ctx.order]
        if not before:
            return None
        binding = max(before, key=lambda a: a.ctx.order)
        value = binding.value
        if value.kind != "element":
            target = self._function_of(file, binding.ctx.scope, value)
            return None if target is None else [self._call_of(call, target, call.ctx.item)]
        if not call.ctx.in_loop or value.base is None:
            return None
        items = self._sequence_items(file, call.ctx.scope, value.base)
        targets = [(position, target) for position, item in enumerate(items or (), 1)
                   if (target := self._function_of(file, call.ctx.scope, item)) is not None]
        # when the `for` is the one loop around the call, each walk of the sequence calls a function listed once
        # once: its call repeats only as often as the walk does (its function's callers say when)
        walked_once = (binding.ctx.scope == call.ctx.scope and binding.ctx.loop_depth == 0
                       and call.ctx.loop_depth == 1)
        listed = Counter(target[0] for _, target in targets)
        made = [self._call_of(call, target, position, in_loop=False if walked_once and listed[target[0]] == 1 else None)
                for position, target in targets]
        return made or None

    def _sequence_items(self, file: FileModel, scope: str, value: Value) -> tuple[Value, ...] | None:
        """The items of a literal list or tuple, written there or bound once to the name ``value`` reads (in
        ``scope`` or at module level of its file); a module-level list's items are followed by those its module
        appends while it is imported (``_appended_at_import``)."""
        appended: tuple[Value, ...] = ()
        if value.kind == "name":
            owner, name = (file, value.text) if value.local else (self.owner_of(value.ref or ""), None)
            if owner is None:
                return None
            if name is None:
                name = (value.ref or "")[len(owner.module) + 1:]
            bound = self.name_assignments(owner, scope if value.local else "", name)
            if len(bound) != 1:
                return None
            value = bound[0].value
            if not bound[0].ctx.scope and value.kind == "seq":  # (a tuple has no append: nothing is found)
                appended = self.cached(("appended at import", owner.path, name),
                                       lambda: self._appended_at_import(owner, name))
        if value.kind != "seq":
            return None
        return tuple(item for item in value.items if isinstance(item, Value)) + appended

    def _appended_at_import(self, file: FileModel, name: str) -> tuple[Value, ...]:
        """What ``file``'s module-level list ``name`` has appended while the module is imported, in that order:
        ``name.append(x)`` at module level, and the function each module-level call of a registering function
        passes it, or each module-level ``def`` it decorates (a module-level function whose body appends its first
        parameter to the list, unconditionally: ``@step`` runs ``step(f)`` when the ``def`` runs, and ``f`` is
        appended, whatever the decorator returns)."""
        append = f"{file.module}.{name}.append"
        own = self.file_facts.cached(file, file_facts.call_tables).by_scope
        registering: set[str] = set()
        for scope, calls in own.items():
            fn = file.functions.get(scope)
            if fn is None or fn.ctx.scope or not fn.params or fn.params[0].star:
                continue
            if any(call.callee == append and len(call.args) == 1 and call.args[0].kind == "name"
                   and call.args[0].local and call.args[0].text == fn.params[0].name
                   and not (call.ctx.conditions or call.ctx.in_loop or call.ctx.try_index is not None)
                   for call in calls):
                registering.add(self.fqname(file, scope))
        found = [(call.ctx.order, call.args[0]) for call in own.get("", ())
                 if len(call.args) == 1 and (call.callee == append or call.callee in registering)]
        found += [(fn.ctx.order, Value("name", fn.name, ref=self.fqname(file, fn.qualname)))
                  for fn in file.functions.values()
                  if not fn.ctx.scope and not fn.class_name and registering.intersection(fn.decorators)]
        return tuple(item for _, item in sorted(found, key=lambda pair: pair[0]))

    def _function_of(self, file: FileModel, scope: str, value: Value) -> _Bound | None:
        """The project function calling ``value`` (written in ``scope``) calls, with the arguments it passes
        first and what it is read off (``Call.read_off``): a name of the function, or ``functools.partial(f, *a,
        **k)`` of one (its ``a`` and ``k``, its ``*x`` and ``**x``)."""
        if value.kind == "call" and value.ref == "functools.partial" and value.args:
            bound = self._function_of(file, scope, value.args[0])
            if bound is None:
                return None
            fqname, args, kwargs, read_off, unpacked = bound
            # the partial's own `*x` come after its function: one position earlier, after the arguments bound before
            return (fqname, (*args, *value.args[1:]), {**kwargs, **value.kwargs}, read_off,
                    (*unpacked, *(replace(u, const=u.const - 1 + len(args)) if u.text == "*" else u
                                  for u in value.unpacked)))
        if value.kind not in ("name", "attr") or not value.ref or self.is_warp_api(value.ref):
            return None
        found = self.function(value.ref)
        return None if found is None else (self.fqname(found[0], found[1].qualname), (), {},
                                           read_off_parameter(file, scope, value.text), ())

    @staticmethod
    def _call_of(call: Call, target: _Bound, item: int, in_loop: bool | None = None) -> Call:
        """``call`` as the call of the function ``target`` names, its arguments after those ``target`` binds
        (``in_loop``: whether it is made again after the sequence's other items, as in a loop, when the call's own
        context does not tell)."""
        fqname, args, kwargs, read_off, unpacked = target
        ctx = call.ctx if item == call.ctx.item else replace(call.ctx, item=item)
        if in_loop is not None and in_loop != ctx.in_loop:
            ctx = replace(ctx, in_loop=in_loop)
        own = call.unpacked if call.has_star_args else ()
        unpacked = (*unpacked, *(replace(u, const=u.const + len(args)) if u.text == "*" else u for u in own))
        return Call(fqname, call.span, (*args, *call.args), {**kwargs, **call.kwargs}, ctx,
                    call.assigned_to, bool(unpacked), read_off=read_off, unpacked=unpacked)

    def assignments_in(self, file: FileModel, scope: str) -> list[Assignment]:
        """The assignments written in ``scope`` of ``file``, in source order."""
        return self.file_facts.cached(file, file_facts.assignment_tables).by_scope.get(scope, [])

    def name_assignments(self, file: FileModel, scope: str, name: str) -> tuple[Assignment, ...]:
        """Assignments ``name = ...`` written directly in ``scope``, in source order."""
        return self.file_facts.cached(file, file_facts.assignment_tables).names.get(scope, _NO_NAMES).get(name, ())

    def global_assignments(self, file: FileModel, name: str) -> list[tuple[str, Assignment]]:
        """(scope, assignment) for each assignment of the module-level ``name`` of ``file`` made inside a function
        that declares it ``global``: when that function runs, the module's name is bound to what it assigns."""
        return self.file_facts.cached(file, file_facts.global_assignments).get(name, [])

    def subscript_assignments(self, file: FileModel, scope: str, name: str) -> list:
        """Assignments ``name[key] = ...`` written directly in ``scope``."""
        return self.file_facts.cached(file, file_facts.assignment_tables).subscripts.get((scope, name), [])

    def item_assignments(self, ref: str) -> list[tuple[FileModel, Assignment]]:
        """``NAME[key] = value`` anywhere in the project, where ``NAME`` is the module-level ``ref``."""
        def by_ref() -> dict[str, list[tuple[FileModel, Assignment]]]:
            table: dict[str, list[tuple[FileModel, Assignment]]] = {}
            for f in self.files:
                for written, a in self.file_facts.cached(f, file_facts.assignment_tables).items:
                    table.setdefault(self.canonical_ref(written), []).append((f, a))
            return table

        return self.cached("item_assignments", by_ref).get(ref, [])

    # ------------------------------------------------------------------ call graph
    def callers(self, fqname: str) -> list[tuple[FileModel, Call]]:
        """The project's calls of the function (or class) ``fqname``, in file and source order."""
        self._resolve_calls_named(fqname.rpartition(".")[2])
        return self._callers.get(self.canonical_function(fqname), [])

    def calls_of(self, file: FileModel, function: Function) -> list[tuple[FileModel, Call]]:
        """The project's calls whose callee resolves to exactly ``function`` of ``file`` (``callers`` spells
        the name it is given canonically first, and a canonical name need not stay one when asked again)."""
        self._resolve_calls_named(function.name)
        return self._callers.get(self.fqname(file, function.qualname), [])

    def _resolve_calls_named(self, last_name: str) -> None:
        # Resolving a call (instance methods, canonical spellings) keeps the last part of its callee's name,
        # so calls are grouped by that part and a group is resolved the first time a name in it is asked
        # for: an edit re-checks the project asking about a few thousand names of 200 000 calls.
        if self._calls_by_last_name is None:
            self._calls_by_last_name = self._calls_grouped()
        pending = self._calls_by_last_name.pop(last_name, None)
        if pending is None:
            return
        callers = self._callers
        before = self._earlier_resolved.pop(last_name, None)
        if before is not None and before[0] is pending:  # a group the edit left as it was, resolved as it was
            record = before
            for name, listed in record[2]:
                callers.setdefault(name, []).append(listed)
        else:
            earlier = before[1] if before is not None else {}
            entries: dict[tuple[int, int], tuple[Call, str | None]] = {}
            named: list[tuple[str, tuple[FileModel, Call]]] = []
            for f, group in pending:
                for call in group:
                    key = (id(f), id(call))
                    found = earlier.get(key)
                    if found is None:  # (Warp's tests and examples are project code)
                        found = (call, None if self.is_warp_api(call.callee)
                                 else self.canonical_function(self.callee_of(f, call)))
                    entries[key] = found
                    if found[1] is not None:
                        callers.setdefault(found[1], []).append((f, call))
                        named.append((found[1], (f, call)))
            record = (pending, entries, named)
        self._resolved[last_name] = record

    def _calls_grouped(self) -> dict[str, list[tuple[FileModel, Sequence[Call]]]]:
        """The last part of a callee's name -> (file, its calls of that name): the calls through bound names first,
        then each file's in file order (a session keeps the files' groups across its layers: ``NameGroups``)."""
        own, left = self._resolution.groups.over(self.files, self._calls_by_last_name_of)
        grouped: dict[str, list[tuple[FileModel, Sequence[Call]]]] = dict(own)  # (their lists are shared: not added to)
        through: dict[str, list[tuple[FileModel, Call]]] = {}
        for f, call in self._calls_through_names():
            through.setdefault(call.callee.rpartition(".")[2], []).append((f, call))
        # `make(c)()` is spelled `pkg.make()`: its last part ends in "()"; its file's calls are grouped here, each
        # under the name of the function `make` returns (resolving it changes the name)
        made: dict[str, list[tuple[FileModel, Call]]] = {}
        for f in left:
            for call in f.calls:
                callee = self.returned_function(call.callee) or call.callee
                made.setdefault(callee.rpartition(".")[2], []).append((f, call))
        if made or through:
            position = {id(f): i for i, f in enumerate(self.files)}
            merge = self._resolution.binder_groups.merged
            for name in {*made, *through}:
                grouped[name] = merge(name, own.get(name), made.get(name, ()), through.get(name, ()), position)
        return grouped

    def callee_of(self, file: FileModel, call: Call) -> str:
        """The function a call calls, methods of locally constructed instances and functions returned by a
        call (``make(c)()``) included. Memoised per call: the timelines, the callers and the option changes ask
        about the same calls again and again."""
        key = (id(file), id(call))
        found = self._callees.get(key)
        if found is None:  # (the call is kept with its answer: the key holds its id)
            found = self._earlier_callees.pop(key, None) or (
                call, self._method_of_instance(file, call) or self.returned_function(call.callee) or call.callee)
            self._callees[key] = found
        return found[1]

    def fills_first_parameter(self, file: FileModel, scope: str, call: Call | Value, function: str) -> bool:
        """Whether ``call`` (written in ``scope`` of ``file``) fills the first parameter of the function
        ``function`` itself, as Python binds a function defined in a class body (``Function.binds``): a
        classmethod read off its class or an instance, an ordinary method read off an instance (``obj.m(x)``,
        ``self.m(x)``, ``Cls(...).m(x)``, a construction's ``__init__``); not a staticmethod, nor an ordinary method
        read off the class (``Cls.m(obj, x)`` passes the instance itself). A method reached through a name it is
        bound to (``m = obj.m``) counts as read off an instance."""
        found = self.function(function)
        binds = found[1].binds if found is not None else ""
        return binds == "class" or (binds == "instance" and not self._read_off_class(file, scope, call))

    def _read_off_class(self, file: FileModel, scope: str, call: Call | Value) -> bool:
        """The callee of ``call`` (or the function the name / attribute ``call`` reads) is an attribute of a class:
        ``Cls.m``, or ``cls.m`` in a classmethod."""
        if isinstance(call, Call):
            if call.read_off:
                return call.read_off == "class"
            ref: str | None = call.callee
        else:
            if call.base is not None:
                return False  # an attribute of what an expression makes (`Cls(...).m`): an instance's
            read = read_off_parameter(file, scope, call.text.removesuffix("(...)"))
            if read:
                return read == "class"
            ref = call.ref
        if not ref or self.is_class(ref):
            return False  # a plain name; a construction (its __init__ receives the new instance)
        holder = ref.rpartition(".")[0]
        return bool(holder) and self.is_class(holder)

    def returned_function(self, callee: str) -> str | None:
        """For the callee ``pkg.make()`` of ``make(c)()`` (the binder's spelling of calling what a call returns):
        the function ``make`` returns when every ``return`` of it returns one undecorated function it defines
        itself and never rebinds (a builder handed out by a factory), as ``pkg.make.build``; else None."""
        if not callee.endswith("()"):
            return None
        table: dict[str, str | None] = self.memo.setdefault("returned functions", {})
        if callee not in table:
            table[callee] = self._returned_function(callee[:-2])
        return table[callee]

    def _returned_function(self, maker: str) -> str | None:
        found = self.function(self.canonical_ref(maker))
        if found is None:
            return None
        file, fn = found
        names = {r.text if r.kind == "name" else None for r in fn.returns}  # the binder's ref of a def's name
        name = next(iter(names)) if len(names) == 1 else None
        inner = file.functions.get(f"{fn.qualname}.{name}") if name else None
        if (inner is None or inner.decorators or inner.ctx.scope != fn.qualname
                or self.name_assignments(file, fn.qualname, inner.name)):
            return None
        return self.fqname(file, inner.qualname)

    def _method_of_instance(self, file: FileModel, call: Call) -> str | None:
        """``s.step()`` where the local ``s`` is bound to ``Solver(...)``, or ``Solver(...).step()`` on the
        instance the call makes: ``pkg.mod.Solver.step``; also where ``s`` is a module-level name of a project
        module (``pkg.mod.REGISTRY.register(k)``, written in that module or imported from it): the instance is
        made once at import and its class's method runs."""
        receiver = glimpse(call, "receiver") if call.on_call_result else None
        if receiver is not None and receiver.kind == "call" and receiver.ref and self.is_class(receiver.ref):
            # `Solver(c)()` calls the instance: its class's __call__
            method = "__call__" if call.callee.endswith("()") else call.callee.rpartition(".")[2]
            return f"{receiver.ref}.{method}"
        head, _, rest = call.callee.partition(".")
        if not rest:
            return None
        if "." in rest:
            holder, _, method = call.callee.rpartition(".")
            owner_module, _, name = holder.rpartition(".")
            owner = self.module(owner_module) if owner_module else None
            if owner is None or "." in method:
                return None
            return self._instance_method(owner, "", name, method)
        return self._instance_method(file, call.ctx.scope, head, rest)

    def _instance_method(self, file: FileModel, scope: str, name: str, method: str) -> str | None:
        """``method`` of the class ``name`` (a local of the function ``scope`` of ``file``, or a module-level name)
        is bound to an instance of."""
        table: dict[tuple[int, str, str], str | None] = self.cached("instance_classes", dict)
        key = (id(file), scope, name)
        if key not in table:  # asked for every dotted call of every file: once per (file, scope, name)
            # a name the function does not bind has no assignment in it: what a `global` statement declares is
            # the module's. The values are read without keeping them unpacked (``glimpse``): asked for every name
            # a method is called on, the values kept would be a tenth of a project's memory
            fn = file.functions.get(scope)
            if not scope:
                self._note(file, name)
            if scope and (fn is None or name in fn.declared_global):
                table[key] = None
            else:
                values = (glimpse(a, "value") for a in self.name_assignments(file, scope, name))
                table[key] = next((v.ref for v in values if v.kind == "call" and v.ref and self.is_class(v.ref)),
                                  None)
        found = table[key]
        return f"{found}.{method}" if found is not None else None

    def canonical_function(self, fqname: str) -> str:
        table = self.memo.setdefault("canonical_function", {})
        canonical = table.get(fqname)
        if canonical is None:
            found = self.function(fqname)
            canonical = self.fqname(found[0], found[1].qualname) if found is not None else fqname
            table[fqname] = canonical
        return canonical

    # ------------------------------------------------------------------ imports
    def defines_kernels_at_import(self, module: str, _seen: set[str] | None = None) -> str | None:
        """If importing ``module`` creates kernels, the module that defines them; else None.

        Follows module-level imports transitively (project files first, then installed
        packages read from disk). Warp itself does not count.
        """
        if module == "warp" or module.startswith("warp."):
            return None
        if module in self._defines_cache:
            return self._defines_cache[module]
        seen = _seen if _seen is not None else set()
        if module in seen or len(seen) > 400:
            return None  # a cycle or a huge import graph: not known (yet)
        seen.add(module)
        result: str | None = None
        f = self.module(module, external=True)
        if f is not None:
            if f.module_kernels():
                result = f.module
            else:
                result = self._first_kernel_import(f, module, seen)
        if _seen is None or result is not None:
            # Only complete answers are memoised: a None found inside a cycle may be partial.
            self._defines_cache[module] = result
        return result

    def _first_kernel_import(self, f: FileModel, module: str, seen: set[str]) -> str | None:
        for imp in f.imports:
            if imp.ctx.scope != "" or imp.ctx.conditions or imp.ctx.try_index is not None:
                continue
            candidates = [imp.module] + [f"{imp.module}.{name}" for name, _ in imp.names]
            for cand in candidates:
                if not cand or cand == module:
                    continue
                hit = self.defines_kernels_at_import(cand, seen)
                if hit:
                    return hit
        return None

    def is_library_api(self, file: FileModel, qualname: str) -> bool:
        """``qualname`` is public API of a library file, which the library's users call: a public top-level
        function, or a public method (``__init__``/``__call__`` included) of a public top-level class."""
        return qualname in self._library_api_of(file)

    def _library_api_of(self, file: FileModel) -> tuple[str, ...]:
        """The qualnames of a library file's public API (``is_library_api``), in source order."""
        def compute() -> tuple[str, ...]:
            if self.context_of(file) is not CodeContext.LIBRARY:
                return ()
            public_classes = {name for name in file.classes if "." not in name and not name.startswith("_")}

            def public(fn: Function) -> bool:
                named = not fn.name.startswith("_") or fn.name in ("__init__", "__call__")
                return (named and not fn.ctx.scope and not fn.is_warp
                        and (fn.class_name is None or fn.class_name in public_classes))

            return tuple(fn.qualname for fn in sorted(file.functions.values(), key=lambda f: f.ctx.order)
                         if public(fn))

        return self.cached(("library api", id(file)), compute)

    def may_run(self, file: FileModel, scope: str) -> bool:
        """Code in ``scope`` (a function's qualname, "" for module level) of ``file`` can run at all. False only
        for the body of a top-level function that nothing can call: defined in a test file (code the runner
        imports and no user does), not decorated (a decorator may register it: a fixture, a hook), not one
        the test runner calls itself (``called_by_runner``), named nowhere else in its file (another
        function's body, module level, a class body), and its module imported by no other file of the project.
        A function nested in one such is as dead as it. Python can still reach a function by a name built at
        run time (``globals()[name]``); that is left out, as by every static linter."""
        fn = _plain_top_level_function(file, scope)
        if fn is None:
            return True
        return self.cached(("may run", id(file), fn.qualname), functools.partial(self._may_run, file, fn))

    def _may_run(self, file: FileModel, fn: Function) -> bool:
        if self._named_in_test_file(file, fn) is not False:
            return True
        return file.module.rpartition(".")[2] in self._imported_module_names()

    def runs_in_test_process(self, file: FileModel, scope: str) -> bool:
        """Code in ``scope`` of ``file`` can run in the process of the test runner: ``may_run``, less the body
        of a top-level function of a test file that no call of the project reaches and its file names nowhere
        but in a string literal, though another file may import its module: a child process's entry, which a
        test starts by the function's name in a command (``python -c "import tests.t; tests.t.f()"``)."""
        fn = _plain_top_level_function(file, scope)
        if fn is None:
            return True
        if self._named_in_test_file(file, fn, in_strings=False) is not False:
            return True
        return bool(self.calls_of(file, fn))

    def _named_in_test_file(self, file: FileModel, fn: Function, in_strings: bool = True) -> bool | None:
        """None outside test files; else whether the runner calls ``fn`` or its file names it (at module level,
        in a class body or in another function's body; ``in_strings``: also in a string literal)."""
        if self.context_of(file) is not CodeContext.TEST:
            return None  # a script's or library's function may be imported and called by code outside the project
        if called_by_runner(self.file_facts, file, fn) or (fn.name in file.functions_named_outside_bodies and (
                in_strings or fn.name not in file.functions_named_only_in_strings)):
            return True
        return self.file_facts.answered(file, _named_in_another_body, fn.qualname)

    # ------------------------------------------------------------------ imports
    def conftest_files_before(self, file: FileModel) -> tuple[FileModel, ...]:
        """The ``conftest.py`` files pytest imports before ``file`` (a test file it collects, or a conftest): those
        of the file's folder and of every folder above it in the project, outermost first. pytest loads them while
        collecting, before it imports the test modules below them, so what they import at module level exists
        before any statement of ``file`` runs."""
        if not (collected_by_pytest(file) or os.path.basename(file.path) == "conftest.py"):
            return ()

        def conftest_files() -> list[tuple[str, FileModel]]:  # (folder, conftest.py), once per layer
            return [(os.path.dirname(os.path.abspath(f.path)), f) for f in self.files
                    if os.path.basename(f.path) == "conftest.py"]

        def compute() -> tuple[FileModel, ...]:
            path = os.path.abspath(file.path)
            found = [(folder, f) for folder, f in self.cached("conftest files", conftest_files)
                     if f is not file and path.startswith(folder + os.sep)]
            return tuple(f for _, f in sorted(found, key=lambda item: len(item[0])))

        return self.cached(("conftest files before", file.path), compute)

    def _imports(self) -> Imports:
        """The import graph (``resolution.ImportGraph``: kept across a session's layers while no edit changes what
        a file imports)."""
        def row(file: FileModel, names: tuple[str, ...]) -> tuple[str, ...]:
            found = dict.fromkeys(c.path for c in self.conftest_files_before(file))
            for name in names:
                module = self.by_module.get(name)
                if module is not None:
                    found.setdefault(module.path)
            found.pop(file.path, None)
            return tuple(found)

        return self.cached("imports", lambda: self._resolution.imports.over(
            self.files, lambda f: self.file_facts.cached(f, file_facts.imported_names), row))

    def imported_files(self, file: FileModel) -> tuple[FileModel, ...]:
        """The project files ``file`` imports, transitively, itself first: what its program can run. A test file's
        program holds the ``conftest.py`` files pytest imports before it (and what they import)."""
        by_path = self.by_path
        return self.cached(("imported files", file.path),
                           lambda: tuple(by_path[p] for p in self._imports().walk((file.path,))))

    def run_together(self, paths: frozenset[str]) -> frozenset[str]:
        """The files some program runs together with one of ``paths``: the import closure of every file that
        imports (transitively) one of them, itself included."""
        imports = self._imports()
        return frozenset(imports.walk(imports.walk(tuple(sorted(p for p in paths if p in self.by_path)),
                                                   importers=True)))

    def _imported_module_names(self) -> frozenset[str]:
        """The last part of every module an import statement of the project may name (``import a.b`` names ``b``,
        ``from a import b`` names ``a`` and ``b``, since ``b`` may be a submodule). By the last part only: a file
        is imported under whatever name the program's path gives it (``pkg.tests.util`` or ``tests.util``),
        and a name the layer does not resolve must still count."""
        return self.cached("imported module names", lambda: frozenset().union(
            *(self.file_facts.cached(f, _imported_module_names) for f in self.files)))


# Python's descriptors whose read on an instance runs the function they wrap (the getter) and gives its result.
GETTER_DESCRIPTORS = frozenset({"property", "functools.cached_property", "abc.abstractproperty"})


def _names_bound(file: FileModel) -> dict[str, dict[str, tuple[Assignment, ...]]]:
    """A model's own ``name = ...`` assignments, scope -> name (an edited file's old model too: not kept)."""
    return file_facts.own_table(file, file_facts.assignment_tables).names


def _not_noted(file: FileModel, head: str) -> None:
    """A lookup in a binder whose resolution no later layer carries."""


def _named_in_another_body(file: FileModel, qualname: str) -> bool:
    """The body of another function of ``file`` (not one nested in the function ``qualname``) reads its name (told
    from the others' stored names, most of them left packed)."""
    fn = file.functions[qualname]
    return any(other is not fn and not other.qualname.startswith(f"{qualname}.")
               and not stored_without(other, fn.name) and fn.name in glimpse(other, "loaded")
               for other in file.functions.values())


def _imported_module_names(file: FileModel) -> frozenset[str]:
    """A file's own table: the last part of every module its import statements may name (``Bindings.may_run``)."""
    found: set[str] = set()
    for imp in file.imports:
        found.add(imp.module.rpartition(".")[2])
        found.update(name for name, _ in imp.names)
    return frozenset(found)


_BOUND_TO_CALLS: dict[Callable[[str], bool], Callable[[FileModel], frozenset[str]]] = {}


def _names_bound_to_calls_table(test: Callable[[str], bool]) -> Callable[[FileModel], frozenset[str]]:
    """The file's own table of ``Bindings.names_bound_to_calls`` for the callee ``test`` (a function of the callee's
    name alone): one table function per test, so each model's table is made once and kept with it."""
    table = _BOUND_TO_CALLS.get(test)
    if table is None:
        def table(file: FileModel) -> frozenset[str]:
            return frozenset(target.rpartition(".")[2] for call in file.calls if test(call.callee)
                             for target in call.assigned_to)

        _BOUND_TO_CALLS[test] = table
    return table


def _module_level_dispatching(file: FileModel) -> frozenset[str]:
    """The module-level names ``file`` binds in a way ``Bindings._dispatched`` reads (an attribute of its module named
    in another file can call them)."""
    return frozenset(name for scope, name in file_facts.own_table(file, file_facts.assignment_tables).dispatching
                     if not scope)


def is_getter(fn: Function) -> bool:
    """A method a getter descriptor wraps: reading the attribute on an instance calls it."""
    return fn.class_name is not None and any(d in GETTER_DESCRIPTORS for d in fn.decorators)


def read_off_parameter(file: FileModel, scope: str, dotted: str) -> str:
    """What the dotted name ``dotted`` (read in ``scope`` of ``file``) is an attribute of when its head is the
    instance or class a method runs on: ``Function.binds`` of the method whose bound parameter it is
    (``self.a`` in an ordinary method, ``cls.a`` in a classmethod, whatever they are named); "" otherwise."""
    head, _, rest = dotted.partition(".")
    fn = file.functions.get(scope) if rest else None
    while fn is not None:
        if head == fn.bound_parameter:
            return fn.binds
        if head in fn.locals or any(p.name == head for p in fn.params) or not fn.ctx.scope:
            return ""
        fn = file.functions.get(fn.ctx.scope)
    return ""


def _is_executor_class(ref: str) -> bool:
    """``ref`` names a class of the standard library's ``concurrent.futures`` that is an ``Executor`` (looked up in
    the installed module, not by name)."""
    module, _, name = ref.rpartition(".")
    if module != EXECUTORS_MODULE:
        return False
    found = getattr(concurrent.futures, name, None)
    return isinstance(found, type) and issubclass(found, concurrent.futures.Executor)


def _plain_top_level_function(file: FileModel, scope: str) -> Function | None:
    """The top-level function whose body holds ``scope`` (the function its def sits in runs a nested one, or
    nothing does), when it is neither a method nor decorated (a decorator may register it: a fixture, a hook);
    None for module level, a method, a decorated function."""
    fn = file.functions.get(scope) if scope else None
    while fn is not None and fn.ctx.scope:
        fn = file.functions.get(fn.ctx.scope)
    if fn is None or fn.class_name is not None or fn.decorators:
        return None
    return fn

"""What kind of code a file (or a function in it) is: library, application, test, benchmark or example.

Rules ask ``Project.context_of(file, scope)``. Test code and benchmark code clear caches and build
cold on purpose (a test checks that a rebuild happens, a benchmark measures the cold compile), so the
cache rules mark their findings there *deliberate* (reported only with ``report-deliberate``).

- **test**: pytest's and unittest's conventions: ``test_*.py``, ``*_test.py``, ``conftest.py``, or
  a module inside a ``tests``/``test``/``testing`` package (judged by the dotted module name, so a
  loose fixture folder is not test code).
- **benchmark**: a file under a ``benchmarks``/``benchmark``/``asv``/``bench*`` folder (a package
  of that name, or the folder a loose script sits in), and the methods of an asv benchmark class
  anywhere: a class with a ``time_``/``timeraw_``/``mem_``/``peakmem_``/``track_`` method and asv's
  ``setup``/``setup_cache`` or one of its benchmark attributes (``params``, ``number``, ...).
- **values asv chooses per process**: asv runs each combination of a benchmark class's ``params`` in a
  process of its own (its runner spawns one per parameter index, and ``set_param_idx`` picks one
  combination of ``itertools.product(*params)`` there), passing it to ``setup``, ``teardown`` and the
  benchmark method (after ``setup_cache``'s result, when the class has one). A parameter of those
  methods is one of its axis's values per process, never two
  (``asv_parameter``; the evaluator makes it a ``PerProcess`` value). ``processes`` repeats that whole
  run in more fresh processes; ``timeraw_`` benchmarks run the code they return in yet another one.
  Each benchmark method runs in a process of its own too, after its class's ``setup``
  (``asv_processes``): code reached only from two benchmark methods never shares a process.
- **example**: a file under an ``examples``/``example`` folder, or named ``example_*.py``.
- **application**: an entry point: ``__main__.py``, or a script outside any package that has an
  ``if __name__ == "__main__":`` block.
- **library**: everything else.

What a test runner calls without a caller in the project (``called_by_runner``): the functions pytest and
unittest run by their conventions (tests, module-level setup and teardown, hooks), and those registered as test
methods by a call.
"""

from __future__ import annotations

import enum
import os
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Protocol, TypeVar

from warplint.model import Assignment, FileModel, Function, Value, glimpse
from warplint.names import module_name_for_path

T = TypeVar("T")


class Memo(Protocol):
    """Where a project keeps what it derived (``Bindings.cached``)."""

    def cached(self, key: Hashable, compute: Callable[[], T]) -> T: ...


class FileTables(Protocol):
    """Where a session keeps each model's own tables (``FileFacts``)."""

    def cached(self, file: FileModel, table: Callable[[FileModel], T]) -> T: ...


class CodeContext(enum.Enum):
    LIBRARY = "library"
    APPLICATION = "application"
    TEST = "test"
    BENCHMARK = "benchmark"
    EXAMPLE = "example"

    @property
    def builds_cold_on_purpose(self) -> bool:
        """Tests and benchmarks clear caches and compile cold deliberately."""
        return self in (CodeContext.TEST, CodeContext.BENCHMARK)

    @property
    def phrase(self) -> str:
        return f"{self.value} code"


_TEST_PACKAGES = frozenset({"tests", "test", "testing"})
_BENCHMARK_FOLDERS = frozenset({"benchmarks", "benchmark", "asv"})
_EXAMPLE_FOLDERS = frozenset({"examples", "example"})
# asv's benchmark kinds (by name prefix) and the class attributes asv reads from a benchmark class.
ASV_PREFIXES = ("time_", "timeraw_", "mem_", "peakmem_", "track_")
ASV_SETUP = frozenset({"setup", "setup_cache", "teardown"})
ASV_ATTRIBUTES = frozenset({"params", "param_names", "number", "repeat", "rounds", "timeout", "warmup_time",
                            "sample_time", "min_run_count", "processes", "pretty_name", "unit"})


def is_test_file(file: FileModel) -> bool:
    """Test code by pytest's and unittest's conventions (see the module docstring)."""
    name = os.path.basename(file.path)
    if name == "conftest.py" or name.startswith("test_") or name.endswith("_test.py"):
        return True
    return any(p in _TEST_PACKAGES for p in file.module.split(".")[:-1])


def _folders(file: FileModel) -> list[str]:
    """The packages a file is in, outermost first, after the folder its top-level package (or the
    file itself, for a loose script) sits in."""
    parts = file.module.split(".")
    inner = parts if file.is_package else parts[:-1]
    directory = os.path.dirname(os.path.abspath(file.path))
    for _ in range(len(inner)):
        directory = os.path.dirname(directory)
    return [os.path.basename(directory), *inner]


def file_context(file: FileModel) -> CodeContext:
    if is_test_file(file):
        return CodeContext.TEST
    folders = [f.lower() for f in _folders(file)]
    if any(f in _BENCHMARK_FOLDERS or f.startswith("bench") for f in folders):
        return CodeContext.BENCHMARK
    name = os.path.basename(file.path)
    if any(f in _EXAMPLE_FOLDERS for f in folders) or name.startswith("example_"):
        return CodeContext.EXAMPLE
    # a script outside any regular package (its module name may still be dotted: a namespace folder run with -m)
    if name == "__main__.py" or (file.has_main_guard and "." not in module_name_for_path(file.path)[0]):
        return CodeContext.APPLICATION
    return CodeContext.LIBRARY


def is_asv_class(file: FileModel, qualname: str) -> bool:
    """An asv benchmark class: a benchmark method, and asv's setup or one of its benchmark attributes."""
    methods = {f.name for f in file.functions.values() if f.class_name == qualname and f.ctx.scope == ""}
    if not any(m.startswith(ASV_PREFIXES) for m in methods):
        return False
    if methods & ASV_SETUP:
        return True
    prefix = f"{file.module}.{qualname}."
    return any(a.target.kind == "attr" and (a.target.ref or "").startswith(prefix)
               and (a.target.ref or "")[len(prefix):] in ASV_ATTRIBUTES for a in file.assignments)


def context_of(memo: Memo, tables: FileTables, file: FileModel, scope: str = "") -> CodeContext:
    """The kind of code ``scope`` (a function's qualname, "" for module level) of ``file`` is."""
    # of the model alone (its path, module name and main guard), but for a script's: that one asks the disk where its
    # packages are, once per layer
    found = (memo.cached(("file context", id(file)), lambda: file_context(file)) if file.has_main_guard
             else tables.cached(file, file_context))
    if found.builds_cold_on_purpose or not scope:
        return found
    fn = file.functions.get(scope)
    while fn is not None and fn.class_name is None and fn.ctx.scope:
        fn = file.functions.get(fn.ctx.scope)  # a function nested in a method is that method's code
    if fn is not None and fn.class_name is not None and memo.cached(
            ("asv class", id(file), fn.class_name), lambda: is_asv_class(file, fn.class_name or "")):
        return CodeContext.BENCHMARK
    return found


# the methods asv calls with one combination of the class's `params` (setup_cache takes none)
_ASV_PARAMETRISED = frozenset({"setup", "teardown"})


def asv_parameter(file: FileModel, fn: Function, name: str) -> tuple[str, Assignment, int] | None:
    """Where asv takes parameter ``name`` of ``fn`` from, when ``fn`` is a method asv calls with one
    combination of its class's ``params`` per process (a benchmark method or ``setup``/``teardown`` of an asv
    class): (the source's name, the ``params`` assignment in the class body, the parameter's axis in it).
    None otherwise, and for ``*args``."""
    cls = fn.class_name
    if cls is None or fn.ctx.scope or not (fn.name.startswith(ASV_PREFIXES) or fn.name in _ASV_PARAMETRISED):
        return None
    if not is_asv_class(file, cls):
        return None
    # after `self`; with a `setup_cache`, asv passes its result first, then the parameters
    cached = any(f.class_name == cls and not f.ctx.scope and f.name == "setup_cache" for f in file.functions.values())
    positional = fn.params[2:] if cached else fn.params[1:]
    axis = next((i for i, p in enumerate(positional) if p.name == name), None)
    if axis is None or positional[axis].star:
        return None
    ref = f"{file.module}.{cls}.params"
    # the class body's statements are in the scope around the class, as its methods are
    found = [a for a in file.assignments
             if a.target.kind == "attr" and a.target.ref == ref and a.ctx.scope == fn.ctx.scope]
    if len(found) != 1:
        return None  # none (a base class's), or rebound: not one list asv reads
    return f"{ref}[{axis}]", found[0], axis


def asv_processes(memo: Memo, file: FileModel, scope: str) -> frozenset[str] | None:
    """The asv processes code in ``scope`` runs in, when it is a method asv calls: a benchmark method runs in
    its own (``Class.time_x``); ``setup``/``teardown`` run in each of their class's benchmark methods'. None
    for any other code (it may run in any process, with anything)."""
    fn = file.functions.get(scope)
    if fn is None or fn.class_name is None or fn.ctx.scope:
        return None
    cls = fn.class_name
    if not memo.cached(("asv class", id(file), cls), lambda: is_asv_class(file, cls)):
        return None
    if fn.name.startswith(ASV_PREFIXES):
        return frozenset({fn.qualname})
    if fn.name in ASV_SETUP:
        return frozenset(f.qualname for f in file.functions.values()
                         if f.class_name == cls and not f.ctx.scope and f.name.startswith(ASV_PREFIXES))
    return None


# ------------------------------------------------------------------ what a test runner calls itself
# Module-level functions a runner calls by name in a test module: pytest's xunit-style setup and teardown
# (``setup``/``teardown`` are the nose-style pair pytest ran before 8.0), unittest's module fixtures and its
# ``load_tests`` protocol. Hooks (``pytest_*``: ``pytest_generate_tests`` in a test module, any hook in a
# conftest.py) are called by their prefix.
RUNNER_MODULE_FUNCTIONS = frozenset({"setup_module", "teardown_module", "setup_function", "teardown_function",
                                     "setup", "teardown", "setUpModule", "tearDownModule", "load_tests"})
HOOK_PREFIX = "pytest_"


def collected_by_pytest(file: FileModel) -> bool:
    """A file pytest collects tests from by default (``python_files = test_*.py *_test.py``)."""
    name = os.path.basename(file.path)
    return name.startswith("test_") or name.endswith("_test.py")


def is_test(file: FileModel, fn: Function) -> bool:
    """A function pytest runs as a test: ``test*`` at module level of a test file, or a ``test*`` method of
    a ``Test*`` class or a ``TestCase`` subclass."""
    if not fn.name.startswith("test") or not collected_by_pytest(file):
        return False
    if fn.class_name is None:
        return not fn.ctx.scope
    bases = file.classes.get(fn.class_name, ())
    return "." not in fn.class_name and fn.qualname == f"{fn.class_name}.{fn.name}" and (
        fn.class_name.startswith("Test") or any(b.rpartition(".")[2].endswith("TestCase") for b in bases))


def registered_tests(file: FileModel) -> dict[str, tuple[str, str]]:
    """Functions registered as test methods by a call that passes a class, a "test..." name and the
    function (Warp's ``add_function_test`` and similar helpers): qualname -> (class, test name). A table of the
    file's own records (``FileFacts``: kept while its model is)."""
    found: dict[str, tuple[str, str]] = {}
    for call in file.calls:
        # every module-level call is asked: its arguments are read without keeping them unpacked
        args: tuple[Value, ...] = () if call.ctx.scope else glimpse(call, "args")
        if len(args) < 3:
            continue
        cls, name, function = args[:3]
        if (cls.kind in ("name", "attr") and name.kind == "const" and isinstance(name.const, str)
                and name.const.startswith("test") and function.kind == "name"
                and function.text in file.functions and not file.functions[function.text].ctx.scope):
            found.setdefault(function.text, (cls.ref or cls.text, name.const))
    return found


def called_by_runner(tables: FileTables, file: FileModel, fn: Function) -> bool:
    """The runner calls ``fn`` itself: a test, a registered test, or a module-level function a runner calls by
    its name in a test file or conftest.py (setup and teardown, ``load_tests``, a ``pytest_*`` hook)."""
    if is_test(file, fn) or fn.qualname in tables.cached(file, registered_tests):
        return True
    name = os.path.basename(file.path)
    runner_module = collected_by_pytest(file) or name == "conftest.py"
    return (runner_module and fn.class_name is None and not fn.ctx.scope
            and (fn.name in RUNNER_MODULE_FUNCTIONS or fn.name.startswith(HOOK_PREFIX)))


# ------------------------------------------------------------------ what a test runner runs before a test's body
# pytest's fixture protocol and its marks, as the binder resolves their names (``from pytest import fixture`` too).
FIXTURE_DECORATOR = "pytest.fixture"
PARAMETRIZE_MARK = "pytest.mark.parametrize"
USEFIXTURES_MARK = "pytest.mark.usefixtures"
# pytest's `param(...)` wrapper of one parameter set (its values are its positional arguments)
PARAM_WRAPPER = "pytest.param"
# Class-level setup the runners call before each test method (once per class for the class methods): unittest
# runs `setUpClass` once, then `setUp` before each method; pytest runs a `Test*` class's xunit pair
# `setup_class` / `setup_method` the same way, and a TestCase's `setup_method` too.
UNITTEST_CLASS_SETUP = (("setUpClass",), ("setup_method", "setUp"))
PYTEST_CLASS_SETUP = (("setup_class",), ("setup_method",))
# The teardown counterparts the runners call after a test method (after each: `tearDown`, `teardown_method`; after
# the class's last: `tearDownClass`, `teardown_class`) and after a module's tests or each module-level test.
UNITTEST_CLASS_TEARDOWN = ("tearDown", "tearDownClass")
PYTEST_CLASS_TEARDOWN = ("teardown_method", "teardown_class")
MODULE_TEARDOWN = ("teardown_function", "teardown_module", "tearDownModule")
# Module-level setup pytest and unittest call in a test module: before its first test, and (pytest) before each
# module-level test function.
MODULE_SETUP = ("setup_module", "setUpModule")
FUNCTION_SETUP = ("setup_function",)
# every name a runner calls as setup by its name alone (a fixture is one by its decorator)
SETUP_NAMES = frozenset({*MODULE_SETUP, *FUNCTION_SETUP,
                         *(name for names in (*UNITTEST_CLASS_SETUP, *PYTEST_CLASS_SETUP) for name in names)})


@dataclass(frozen=True)
class Fixture:
    """A pytest fixture: a function decorated ``@pytest.fixture``. Tests request it by ``name`` (its ``name=``,
    else the function's name); pytest runs its body up to its first ``yield`` (all of it when it returns) before
    the test's body, once per ``scope`` ("function" unless a literal says otherwise; "" when not literal);
    ``autouse`` ones run before every test that can see them without being requested."""

    name: str
    qualname: str
    scope: str
    autouse: bool


def fixture_of(fn: Function) -> Fixture | None:
    """The fixture ``fn`` defines, or None when it is no ``@pytest.fixture``."""
    if FIXTURE_DECORATOR not in fn.decorators:
        return None
    decorator = next((d for d in fn.decorator_values if d.ref == FIXTURE_DECORATOR), None)
    options = decorator.kwargs if decorator is not None and decorator.kind == "call" else {}

    def literal(key: str, default: object) -> object:
        value = options.get(key)
        if value is None:
            return default
        return value.const if value.kind == "const" else None

    name, scope, autouse = literal("name", fn.name), literal("scope", "function"), literal("autouse", False)
    return Fixture(name if isinstance(name, str) else fn.name, fn.qualname,
                   scope if isinstance(scope, str) else "", autouse is True)


def runs_per_parameter(fn: Function) -> bool:
    """pytest runs ``fn`` once per parameter: a test with a ``@pytest.mark.parametrize`` mark, a fixture given
    ``params=`` (once per requesting test and parameter)."""
    return PARAMETRIZE_MARK in fn.decorators or any(
        d.kind == "call" and d.ref == FIXTURE_DECORATOR and "params" in d.kwargs for d in fn.decorator_values)


def _mark_calls(fn: Function, mark: str) -> list[Value]:
    return [d for d in fn.decorator_values if d.kind == "call" and d.ref == mark]


def parametrized(fn: Function) -> dict[str, tuple[Value, ...] | None]:
    """The parameters ``@pytest.mark.parametrize`` passes ``fn`` directly (not through a fixture: ``indirect``),
    each with the values it takes, in the listed order (pytest runs the test once per value); None for a
    parameter whose values are not a literal list here (a name, a generator, ``indirect`` given a list)."""
    found: dict[str, tuple[Value, ...] | None] = {}
    for mark in _mark_calls(fn, PARAMETRIZE_MARK):
        names_value = mark.args[0] if mark.args else mark.kwargs.get("argnames")
        values_value = mark.args[1] if len(mark.args) > 1 else mark.kwargs.get("argvalues")
        if names_value is None:
            continue
        names: list[str]
        if names_value.kind == "const" and isinstance(names_value.const, str):
            names = [n.strip() for n in names_value.const.split(",") if n.strip()]
        elif names_value.kind == "seq" and all(isinstance(i, Value) and i.kind == "const"
                                               and isinstance(i.const, str) for i in names_value.items):
            names = [i.const for i in names_value.items]
        else:
            continue
        indirect = mark.kwargs.get("indirect")
        if indirect is not None and not (indirect.kind == "const" and indirect.const is False):
            continue  # the values go to fixtures of those names (`request.param`), which still run
        rows = _parameter_sets(values_value, len(names))
        for position, name in enumerate(names):
            found[name] = None if rows is None else tuple(row[position] for row in rows)
    return found


def _parameter_sets(value: Value | None, width: int) -> list[tuple[Value, ...]] | None:
    """The parameter sets of a literal ``argvalues`` list, each as ``width`` values (a set is a tuple when the
    mark names several parameters; ``pytest.param(*values, ...)`` wraps one)."""
    if value is None or value.kind != "seq":
        return None
    rows: list[tuple[Value, ...]] = []
    for item in value.items:
        if not isinstance(item, Value):
            return None
        if item.kind == "call" and item.ref == PARAM_WRAPPER:
            parts: tuple[Value, ...] = item.args
        elif width == 1:
            parts = (item,)
        elif item.kind == "seq":
            parts = tuple(i for i in item.items if isinstance(i, Value))
        else:
            return None
        if len(parts) != width:
            return None
        rows.append(parts)
    return rows


def requested_fixtures(fn: Function) -> list[str]:
    """The fixture names ``fn`` (a test or a fixture) requests, in its order: ``@pytest.mark.usefixtures``
    names, then its parameters without a default, less the instance or class Python binds and those
    ``parametrize`` passes directly."""
    found: list[str] = []
    for mark in _mark_calls(fn, USEFIXTURES_MARK):
        found.extend(a.const for a in mark.args if a.kind == "const" and isinstance(a.const, str))
    direct = parametrized(fn)
    bound = fn.bound_parameter
    found.extend(p.name for p in fn.params
                 if not p.star and p.default is None and p.name != bound and p.name not in direct)
    return found


def class_setup(file: FileModel, class_name: str) -> tuple[list[str], list[str]]:
    """The qualnames of the setup methods a runner calls for the test methods of the class ``class_name``: (those
    it calls once, before the first: ``setUpClass``/``setup_class``; those it calls before each:
    ``setup_method``/``setUp``), each in the order it calls them; looked up in the class, then in the classes of
    the file it derives from, as Python looks a method up."""
    once, each = UNITTEST_CLASS_SETUP if _unittest_style(file, class_name) else PYTEST_CLASS_SETUP
    return ([q for name in once if (q := _method_lookup(file, class_name, name)) is not None],
            [q for name in each if (q := _method_lookup(file, class_name, name)) is not None])


def teardown_after(file: FileModel, fn: Function) -> list[str]:
    """The qualnames of the teardown a test runner calls after ``fn`` runs as a test or as its class's setup:
    the teardown methods of its class (looked up as ``class_setup`` looks setup up) and the module's teardown
    functions, in a file the runner collects. Empty for code no runner calls."""
    if not collected_by_pytest(file) or fn.qualname not in (fn.name, f"{fn.class_name}.{fn.name}"):
        return []
    found = [name for name in MODULE_TEARDOWN if name in file.functions]
    if fn.class_name is not None:
        names = UNITTEST_CLASS_TEARDOWN if _unittest_style(file, fn.class_name) else PYTEST_CLASS_TEARDOWN
        found += [q for name in names if (q := _method_lookup(file, fn.class_name, name)) is not None]
    return found


def _unittest_style(file: FileModel, class_name: str) -> bool:
    return any(b.rpartition(".")[2].endswith("TestCase") for b in file.classes.get(class_name, ()))


def _method_lookup(file: FileModel, class_name: str, name: str) -> str | None:
    """The qualname of the method ``name`` of ``class_name`` or of the first class of the file it derives from
    that defines it, as Python looks a method up; None when none does."""
    owner: str | None = class_name
    seen: set[str] = set()
    while owner is not None and owner not in seen:
        seen.add(owner)
        if f"{owner}.{name}" in file.functions:
            return f"{owner}.{name}"
        owner = next((b.rpartition(".")[2] for b in file.classes.get(owner, ())
                      if b.startswith(f"{file.module}.") and b.rpartition(".")[2] in file.classes), None)
    return None

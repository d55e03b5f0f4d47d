"""The semantic layer: the issue's shapes end to end, their look-alikes, and the evaluator's answers.

Each directory of tests/fixtures/semantic/ is linted as one project with every default rule;
the expected findings are the inline `# WCnnn:COLUMN "message fragment"` comments (see
tests/test_rules.py), and every other line must stay clean for every rule (so a look-alike
that starts firing fails here).
"""

import os
import re

import pytest

from warplint.config import Config
from warplint.engine import Session
from warplint.registry import all_rules
from warplint.semantic.devices import Device
from warplint.semantic.values import Const, KernelRef, Unknown, ValueSet, Varies, WarpType
from warplint.semantic.variants import CallContents
from warplint.testing import fixture_results, project_of

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures", "semantic")
# CS-10's backward code built and never differentiated: nearly every program here builds it and none differentiates.
# Its own fixtures (tests/fixtures/WC404*, WC406*) and the tests of differentiation reach below cover it; left out
# here, the other mechanisms' shapes read as they are.
UNUSED_BACKWARD = ("WC404", "WC406")
DEFAULT_CODES = tuple(code for code, rule in all_rules().items()
                      if rule.default_enabled and not rule.runtime_only and code not in ("WC000", *UNUSED_BACKWARD))


@pytest.mark.parametrize("name", sorted(os.listdir(FIXTURES)))
def test_shape(name):
    expected, actual = fixture_results(os.path.join(FIXTURES, name), DEFAULT_CODES)
    assert expected or name == "look_alikes", f"{name}: a shape fixture needs expectations"
    assert sorted(expected - actual) == [], "missing"
    assert sorted(actual - expected) == [], "unexpected"




def _file(project, suffix):
    return next(f for f in project.files if f.path.endswith(suffix))


def _values_of_locals(project, file, scope="use"):
    """What the evaluator gives each name ``scope`` assigns, by name."""
    evaluator = project.layer.evaluator
    return {a.target.text: evaluator.values(file, a.value, scope) for a in file.assignments if a.ctx.scope == scope}


def test_one_answer_for_a_module_name_in_a_variable(tmp_path):
    # The drift the layer removes: three evaluators used to give three answers here.
    project = project_of(tmp_path, {
        "app/__init__.py": "",
        "app/solver.py": (
            "import warp as wp\nname = 'app.solver'\nwp.set_module_options({'fast_math': True}, module=name)\n"
            "@wp.kernel(module=name)\ndef k(a: wp.array(dtype=float)):\n    a[0] = 1.0\n"
        ),
    })

    file = _file(project, "solver.py")
    kernel = file.kernels[0]
    (change,) = project.option_changes(file)
    assert change.module == "app.solver"
    assert project.kernel_module(file, kernel) == "app.solver"
    assert project.module_of(file, kernel.module_value) == "app.solver"
    assert project.constant(file, kernel.module_value) == (True, "app.solver")


def test_a_name_defined_in_a_function_is_not_a_module_of_the_same_name(tmp_path):
    # `run.k` spelled in full is `app_main.run.k`: the file `app_main.py` is a plain module (no package), so
    # nothing beneath it is another module, though the project has a top-level module `k` (its import root
    # dropped is how a module imported through another root is found)
    project = project_of(tmp_path, {
        "k.py": "X = 1\n",
        "app_main.py": (
            "import warp as wp\n\ndef run():\n    @wp.kernel\n    def k(a: wp.array(dtype=float)):\n"
            "        a[0] = 1.0\n\n    wp.launch(k, dim=1, inputs=[wp.zeros(1, dtype=float)])\n"
        ),
    })
    file = _file(project, "app_main.py")
    (launch,) = project.launches(file)
    assert launch.kernel is file.kernels[0]


def test_a_fixture_runs_as_setup_of_the_tests_that_request_it_and_no_other(tmp_path):
    # pytest runs a fixture before the body of each test that requests it (directly, through another fixture, or
    # autouse where the test is); nothing else calls it
    project = project_of(tmp_path, {
        "tests/test_app.py": (
            "import pytest\nimport warp as wp\n\n@pytest.fixture\ndef base():\n    yield 1\n\n"
            "@pytest.fixture\ndef derived(base):\n    return base\n\n"
            "@pytest.fixture\ndef unused():\n    return 0\n\n"
            "def test_one(base):\n    pass\n\ndef test_two(derived):\n    pass\n\ndef test_three(shared):\n    pass\n"
        ),
        # a conftest.py's fixture is seen by the test files below its folder, not by one beside that folder
        "tests/conftest.py": "import pytest\nimport warp as wp\n\n@pytest.fixture\ndef shared():\n    return 1\n",
        "tests/unit/test_deep.py": "import warp as wp\n\ndef test_deep(shared):\n    pass\n",
        "other/test_beside.py": "import warp as wp\n\ndef test_beside(shared):\n    pass\n",
    })
    file = _file(project, "test_app.py")
    def tests(fixture, where=file):
        return sorted(test for _, test, _ in project.layer.tests_set_up_by(where, fixture))
    assert tests("base") == ["test_one", "test_two"]
    assert tests("derived") == ["test_two"]
    assert tests("unused") == []
    assert tests("shared", _file(project, "conftest.py")) == ["test_deep", "test_three"]


def test_a_fixture_launch_runs_before_a_kernel_its_only_test_makes(tmp_path):
    # The fixture's launch at 256 runs before the body of the one test that requests it, which makes a kernel
    # (reading a descriptor) and launches it at 64: the kernel lands in the 64 variant's first build; no variant
    # built before it is loaded again after it (Warp 1.19 CPU: two builds, 256 and 64)
    kernels = (
        "import warp as wp\n\n@wp.kernel\ndef base(a: wp.array(dtype=float)):\n    a[0] = 1.0\n\n"
        "class MadeOnRead:\n    def __get__(self, obj, owner=None):\n        c = obj.c\n\n"
        "        @wp.kernel\n        def late(a: wp.array(dtype=float)):\n            a[0] = c\n\n"
        "        return late\n\nclass Holder:\n    kernel = MadeOnRead()\n\n"
        "    def __init__(self, c):\n        self.c = c\n"
    )
    test = (
        "import pytest\nimport warp as wp\nfrom pkg import kernels\n\nwp.config.enable_cpu_blocks = True\n\n"
        "@pytest.fixture\ndef launched():\n    wp.launch(kernels.base, dim=4, inputs=[wp.zeros(4, dtype=float)], "
        "block_dim=256)\n    yield\n\n"
        "def test_step(launched):\n    wp.launch(kernels.Holder(2.0).kernel, dim=4, inputs=[wp.zeros(4, dtype=float)], "
        "block_dim=64)\n"
    )
    project = project_of(tmp_path, {"pkg/__init__.py": "", "pkg/kernels.py": kernels, "test_app.py": test})
    file = _file(project, "kernels.py")
    late = next(k for k in file.kernels if k.name == "late")
    assert not project.joins_built_variant(file, late, "pkg.kernels")
    # a later test requests the fixture too: its launch loads the 256 variant again after the kernel joined the
    # module, which builds it again (Warp 1.19 CPU: three builds)
    later = test + "\ndef test_later(launched):\n    pass\n"
    again = project_of(tmp_path / "again", {"pkg/__init__.py": "", "pkg/kernels.py": kernels, "test_app.py": later})
    file = _file(again, "kernels.py")
    late = next(k for k in file.kernels if k.name == "late")
    assert again.joins_built_variant(file, late, "pkg.kernels")


def test_an_enum_member_is_an_object_whose_value_is_what_its_class_body_wrote(tmp_path):
    # `Placement.SHARED` is a member object (no module name); `.value` is the string, `.name` the member's name;
    # an IntEnum's or str-mixed enum's member is an int or str equal to its value
    project = project_of(tmp_path, {
        "app/__init__.py": "",
        "app/config.py": (
            "import enum\n\nclass Placement(enum.Enum):\n    SHARED = 'app.shared'\n    OWN = 'unique'\n\n"
            "class Base(enum.Enum):\n    pass\n\nclass Derived(Base):\n    X = 'app.derived'\n\n"
            "class Sizes(enum.IntEnum):\n    SMALL = 64\n\nclass Named(str, enum.Enum):\n    K = 'app.named'\n"
        ),
        "app/solver.py": (
            "import warp as wp\nfrom app.config import Derived, Named, Placement, Sizes\n"
            "a = Placement.SHARED.value\nb = Placement.OWN.name\nc = Placement.SHARED\nd = Derived.X.value\n"
            "e = Sizes.SMALL\nf = Named.K\n"
            "@wp.kernel(module=Placement.SHARED.value)\ndef k(x: wp.array(dtype=float)):\n    x[0] = 1.0\n"
        ),
    })
    file = _file(project, "solver.py")
    values = {a.target.text: project.constant(file, a.value) for a in file.assignments}
    assert values == {"a": (True, "app.shared"), "b": (True, "OWN"), "c": (False, None), "d": (True, "app.derived"),
                      "e": (True, 64), "f": (True, "app.named")}
    assert project.kernel_module(file, file.kernels[0]) == "app.shared"


def test_a_simple_namespace_attribute_is_the_keyword_it_was_made_with(tmp_path):
    # an attribute the project also writes somewhere (`obj.block = ...`) may have changed since: unknown
    project = project_of(tmp_path, {
        "app/__init__.py": "",
        "app/solver.py": (
            "import types\nimport warp as wp\n"
            "CONFIG = types.SimpleNamespace(module='unique', block=64, name='a')\n"
            "a = CONFIG.module\nb = CONFIG.block\nc = CONFIG.missing\n"
            "def retune(obj):\n    obj.block = 128\n"
        ),
    })
    file = _file(project, "solver.py")
    values = {a.target.text: project.constant(file, a.value) for a in file.assignments if a.target.text in "abc"}
    assert values == {"a": (True, "unique"), "b": (False, None), "c": (False, None)}


def test_getattr_and_module_lookups_read_what_python_reads(tmp_path):
    # `getattr(obj, "name")` is `obj.name`; with a default it may be either; a name known only at run time is
    # unknown; `importlib.import_module(name)` and `sys.modules[name]` are the module an import of that name binds;
    # a function of the project named `getattr` is that function, not the builtin
    project = project_of(tmp_path, {
        "app/__init__.py": "",
        "app/config.py": "MODULE = 'app.shared'\n",
        "app/solver.py": (
            "import importlib\nimport sys\nimport warp as wp\nimport app.config as config\n"
            "a = getattr(config, 'MODULE')\nb = getattr(importlib.import_module('app.config'), 'MODULE')\n"
            "c = getattr(sys.modules['app.config'], 'MODULE')\nd = getattr(config, 'MISSING', 'app.other')\n"
            "e = getattr(config, sys.argv[1])\nf = importlib.import_module('.config', 'app')\n"
            "def lookup(name):\n    def getattr(obj, attr):\n        return 'shadowed'\n"
            "    g = getattr(config, 'MODULE')\n    return g\n"
        ),
    })
    file = _file(project, "solver.py")
    values = {a.target.text: project.constant(file, a.value, a.ctx.scope) for a in file.assignments}
    assert values == {"a": (True, "app.shared"), "b": (True, "app.shared"), "c": (True, "app.shared"),
                      "d": (False, None), "e": (False, None), "f": (False, None), "g": (True, "shadowed")}


def test_a_name_a_setter_declares_global_holds_what_the_setter_assigns_too(tmp_path):
    project = project_of(tmp_path, {
        "app/__init__.py": "",
        "app/solver.py": (
            "import warp as wp\nMODULE = 'shared'\n\ndef set_module(m):\n    global MODULE\n    MODULE = m\n\n"
            "def make(c):\n    @wp.kernel(module=MODULE)\n    def k(a: wp.array(dtype=float)):\n        a[0] = c\n"
            "    return k\n\nset_module('unique')\n"
        ),
    })
    file = _file(project, "solver.py")
    kernel = file.kernels[0]
    assert project.kernel_module_names(file, kernel) == ({"shared", "unique"}, True)
    assert project.kernel_module(file, kernel) is None


def test_a_module_name_the_program_leaves_to_its_run_is_its_own_literal(tmp_path):
    # `os.environ.get("M", "unique")` builds "unique" unless the run says otherwise (as an option's value counts);
    # a name with no literal of the program's own, or two, is not one module
    project = project_of(tmp_path, {
        "app/__init__.py": "",
        "app/solver.py": (
            "import os\nimport warp as wp\n\n"
            "@wp.kernel(module=os.environ.get('M', 'unique'))\ndef own_unique(a: wp.array(dtype=float)):\n"
            "    a[0] = 1.0\n\n"
            "@wp.kernel(module=os.getenv('M', 'app.shared'))\ndef own_shared(a: wp.array(dtype=float)):\n"
            "    a[0] = 1.0\n\n"
            "@wp.kernel(module=os.environ.get('M'))\ndef no_default(a: wp.array(dtype=float)):\n    a[0] = 1.0\n\n"
            "@wp.kernel(module=os.environ['M'])\ndef environment_only(a: wp.array(dtype=float)):\n    a[0] = 1.0\n\n"
            "def make(name):\n    @wp.kernel(module=name)\n    def two_names(a: wp.array(dtype=float)):\n"
            "        a[0] = 1.0\n    return two_names\n\n"
            "make('app.first')\nmake('app.second')\n"
        ),
    })
    file = _file(project, "solver.py")
    modules = {k.name: project.kernel_module(file, k) for k in file.kernels}
    assert modules == {"own_unique": "unique", "own_shared": "app.shared", "no_default": None,
                       "environment_only": None, "two_names": None}


def test_a_module_level_name_is_read_in_statement_order(tmp_path):
    # Python reads a module-level name as the statements run so far bound it: a module-level assignment, a call of a
    # setter that rebinds it through `global` (bound from that call's arguments). A conditional statement, a
    # setter whose own assignment is conditional or follows a `return`, and a call of a helper that may reach a
    # setter only add what they may bind; a loop's later binding reaches the next turn's read.
    project = project_of(tmp_path, {
        "app/__init__.py": "",
        "app/main.py": (
            "import sys\nimport warp as wp\nMODE = 'a'\n\ndef set_mode(m):\n    global MODE\n    MODE = m\n\n"
            "def maybe_set_mode(m):\n    global MODE\n    if sys.argv[1:]:\n        MODE = m\n\n"
            "def late_set_mode(m):\n    global MODE\n    if not m:\n        return\n    MODE = m\n\n"
            "def configure():\n    set_mode('helper')\n\n"
            "r1 = MODE\nset_mode('b')\nr2 = MODE\nif sys.argv[1:]:\n    set_mode('c')\nr3 = MODE\n"
            "set_mode('d')\nmaybe_set_mode('e')\nr4 = MODE\nset_mode('f')\nlate_set_mode('g')\nr5 = MODE\n"
            "LEVEL = 0\nfor i in range(3):\n    r6 = LEVEL\n    LEVEL = 1\nr7 = LEVEL\n"
            "def main():\n    set_mode('h')\n    r8 = MODE\n    configure()\n    r9 = MODE\n    return r8, r9\n"
        ),
    })
    file = _file(project, "main.py")
    values = {a.target.text: project.values(file, a.value, a.ctx.scope) for a in file.assignments
              if a.target.text.startswith("r")}
    def constants(name):
        return {v.value for v in values[name]}
    assert constants("r1") == {"a"}
    assert constants("r2") == {"b"}
    assert constants("r3") == {"b", "c"}
    assert constants("r4") == {"d", "e"}
    assert constants("r5") == {"f", "g"}
    assert constants("r6") == {0, 1}
    assert constants("r7") == {0, 1}  # a loop may run no turn
    assert constants("r8") == {"h"}
    assert {"h", "helper"} <= constants("r9")


def test_a_module_given_as_get_module_is_the_module_of_that_name(tmp_path):
    # wp.get_module(name) returns the Module registered under name, the one a kernel with module=name joins
    project = project_of(tmp_path, {
        "m.py": (
            "import warp as wp\n"
            "@wp.kernel(module=wp.get_module('sim'))\ndef k(a: wp.array(dtype=float)):\n    a[0] = 1.0\n"
            "def preload(module):\n    wp.load_module(module=module)\n"
            "def apply(module):\n    wp.set_module_options({'max_unroll': 4}, module=module)\n"
            "def main():\n"
            "    wp.load_module(module=wp.get_module('sim'))\n    wp.load_module(None)\n"
            "    preload(wp.get_module('sim'))\n    preload('post')\n"
            "    apply(wp.get_module('sim'))\n    apply('post')\n"
        ),
    })
    file = _file(project, "m.py")
    assert project.kernel_module(file, file.kernels[0]) == "sim"
    loads = project.warp_calls(file, "load_module")
    assert [project.modules_loaded_by(file, call) for call in loads if call.ctx.scope == "main"] == [["sim"], ["m"]]
    # a helper's parameter is what each call passes, not every module some call passes
    assert [m for _, m, _ in project.launch_timeline(file, "main")] == ["sim", "m", "sim", "post"]
    applied = [call for call in project.calls_in(file, "main") if call.callee == "m.apply"]
    assert [[c.module for c in project.option_changes_at(file, call)] for call in applied] == [["sim"], ["post"]]


def test_values_follow_bindings_parameters_and_returns(tmp_path):
    project = project_of(tmp_path, {
        "m.py": (
            "import warp as wp\n"
            "@wp.kernel\ndef k(a: wp.array(dtype=float)):\n    a[0] = 1.0\n"
            "def pick(flag):\n    return k\n"
            "def size(n):\n    return 64 if n < 8 else 128\n"
            "def run(a, n):\n"
            "    first, second = 32, size(n)\n"
            "    wp.launch(pick(True), dim=1, inputs=[a], block_dim=second)\n"
            "    wp.launch(k, dim=1, inputs=[a], block_dim=first)\n"
            "    wp.launch(k, dim=1, inputs=[a], block_dim=a.shape[0])\n"
        ),
    })
    file = _file(project, "m.py")
    launches = [c for c in file.calls if c.callee == "warp.launch"]
    evaluator = project.layer.evaluator
    kernels = evaluator.values(file, launches[0].bound("kernel"), "run")
    assert [type(v) for v in kernels] == [KernelRef]
    assert sorted(evaluator.values(file, launches[0].bound("block_dim"), "run").constants()) == [64, 128]
    assert evaluator.constant(file, launches[1].bound("block_dim"), "run") == (True, 32)
    third = evaluator.values(file, launches[2].bound("block_dim"), "run")
    assert third.varies and not third.known
    assert all(v.reason for v in third)


def test_an_array_count_varies_and_another_attribute_is_one_unknown(tmp_path):
    # Warp documents an array's strides, shape, size as integers of its data: a new number per array. An
    # attribute that is no count of the data (a dtype, a configuration field) is one value nobody knows.
    project = project_of(tmp_path, {
        "m.py": (
            "import warp as wp\n"
            "@wp.kernel\ndef k(a: wp.array(dtype=float)):\n    a[0] = 1.0\n"
            "def run(a, cfg):\n"
            "    wp.launch(k, dim=1, inputs=[a], block_dim=a.strides[0])\n"
            "    wp.launch(k, dim=1, inputs=[a], block_dim=cfg.threads)\n"
        ),
    })
    file = _file(project, "m.py")
    strided, configured = (c for c in file.calls if c.callee == "warp.launch")
    evaluator = project.layer.evaluator
    assert evaluator.values(file, strided.bound("block_dim"), "run").varies
    threads = evaluator.values(file, configured.bound("block_dim"), "run")
    assert not threads.varies and not threads.known


def test_star_parameters_are_the_extra_arguments_of_each_call(tmp_path):
    # Python binds *args to the positional arguments no named parameter takes, **kwargs to the extra keywords
    project = project_of(tmp_path, {
        "m.py": (
            "import warp as wp\n"
            "@wp.kernel\ndef k(a: wp.array(dtype=float)):\n    a[0] = 1.0\n"
            "def by_keyword(a, **kwargs):\n    wp.launch(k, dim=1, inputs=[a], block_dim=kwargs['threads'])\n"
            "def by_position(a, *args):\n    wp.launch(k, dim=1, inputs=[a], block_dim=args[1])\n"
            "def main(a):\n    by_keyword(a, threads=64)\n    by_keyword(a, threads=128)\n"
            "    by_position(a, 'x', 32)\n"
        ),
    })
    sizes = sorted(launch.block_dims.single_constant()[1] for launch in project.all_launches())
    assert sizes == [32, 64, 128]


def test_unpacked_arguments_bind_parameters_as_python_does(tmp_path):
    # `*x` and `**x` at a call fill the callee's parameters from what they hold: by position in place of the `*x`,
    # by keyword for a dict's known keys, the default where every dict is known and lacks it; what is not known to
    # its last item leaves the parameter unknown (never its default, nor a plain argument written after a `*x`)
    project = project_of(tmp_path, {
        "m.py": (
            "import sys\nimport warp as wp\n"
            "@wp.kernel\ndef k(a: wp.array(dtype=float)):\n    a[0] = 1.0\n"
            "def run(a, threads=256):\n    wp.launch(k, dim=1, inputs=[a], block_dim=threads)\n"
            "def passed_on(*args, **kwargs):\n    run(*args, **kwargs)\n"
            "def main(a):\n"
            "    run(**{'a': a, 'threads': 64})\n"
            "    sizes = dict(threads=32)\n    run(a, **sizes)\n"
            "    run(*(a, 16))\n"
            "    run(a, **{'other': 1})\n"
            "    passed_on(a, threads=8)\n"
            "    run(*sys.argv[1:], 128)\n"
            "    run(a, **{**sizes})\n"
        ),
    })
    # the launch through `passed_on` is one per call of it (16) and, `passed_on` being public, one its users make (9)
    sizes = {launch.origin[1].span.line: launch.block_dims for launch in project.all_launches()}
    # `**{**sizes}` (18) holds what `sizes` holds: a dict display's `**` is followed
    assert {line: found.single_constant()[1] for line, found in sizes.items() if found.known} == {
        9: 8, 11: 64, 13: 32, 14: 16, 15: 256, 16: 8, 18: 32}
    assert not sizes[17].known and not sizes[17].constants()


def test_parameters_are_bound_per_call_site(tmp_path):
    project = project_of(tmp_path, {
        "w.py": (
            "import warp as wp\n"
            "@wp.kernel\ndef k(a: wp.array(dtype=float)):\n    a[0] = 1.0\n"
            "def _run(kernel, a, threads=256):\n    wp.launch(kernel, dim=1, inputs=[a], block_dim=threads)\n"
            "def main(a):\n    _run(k, a)\n    _run(k, a, threads=128)\n    _run(k, a, 64)\n"
        ),
    })
    sizes = sorted(launch.block_dims.single_constant()[1] for launch in project.all_launches())
    assert sizes == [64, 128, 256]
    origins = sorted(launch.origin[1].span.line for launch in project.all_launches())
    assert origins == [8, 9, 10]  # each at the call of the wrapper


def test_a_method_binds_its_first_parameter_as_python_does(tmp_path):
    # what a call fills first depends on how the function is read, not on the parameter's name: a method read off an
    # instance gets the instance (`this`), read off the class it is a plain function (`Runner.explicit(r, ...)`
    # passes the instance itself), a classmethod gets the class either way, a staticmethod nothing
    project = project_of(tmp_path, {"app.py": (
        "import warp as wp\nfrom builtins import staticmethod as static_method\n"
        "@wp.kernel\ndef k(a: wp.array(dtype=float)):\n    a[0] = 1.0\n"
        "class Runner:\n"
        "    def __init__(this, threads):\n        this.threads = threads\n"
        "    def run(this, a, threads):\n        wp.launch(k, dim=1, inputs=[a], block_dim=threads)\n"
        "    def run_own(this, a):\n        wp.launch(k, dim=1, inputs=[a], block_dim=this.threads)\n"
        "    def explicit(self, a, threads):\n        wp.launch(k, dim=1, inputs=[a], block_dim=threads)\n"
        "    @static_method\n    def static(a, threads):\n        wp.launch(k, dim=1, inputs=[a], block_dim=threads)\n"
        "    @classmethod\n    def of_class(klass, a, threads):\n"
        "        wp.launch(k, dim=1, inputs=[a], block_dim=threads)\n"
        "def main(a):\n"
        "    r = Runner(512)\n    r.run(a, 32)\n    Runner.explicit(r, a, 64)\n    Runner.static(a, 128)\n"
        "    Runner.of_class(a, 256)\n    r.of_class(a, 16)\n    r.run_own(a)\n"
    )})
    sizes = sorted((launch.call.ctx.scope, launch.block_dims.single_constant()[1]) for launch in project.all_launches())
    assert sizes == [("Runner.explicit", 64), ("Runner.of_class", 16), ("Runner.of_class", 256), ("Runner.run", 32),
                     ("Runner.run_own", 512), ("Runner.static", 128)]


def test_a_launch_behind_wrappers_is_one_launch_per_outermost_call(tmp_path):
    # three wrapper levels each passing their own `threads` on: one launch per call of the outermost wrapper,
    # with the size that call passes (not one per call site per level, nor cut at the second level)
    project = project_of(tmp_path, {"app.py": (
        "import warp as wp\n"
        "@wp.kernel\ndef k(a: wp.array(dtype=float)):\n    a[0] = 1.0\n"
        "def _launch(a, threads):\n    wp.launch(k, dim=1, inputs=[a], block_dim=threads)\n"
        "def _level2(a, threads):\n    _launch(a, threads)\n"
        "def _level3(a, threads):\n    _level2(a, threads)\n"
        "def main(a):\n    _level3(a, 32)\n    _level3(a, 64)\n    _level3(a, 128)\n"
    )})
    launches = project.all_launches()
    assert sorted((ln.block_dims.single_constant()[1], ln.origin[1].span.line) for ln in launches) == [
        (32, 12), (64, 13), (128, 14)]


def test_an_item_of_star_args_is_what_each_call_passes_there(tmp_path):
    project = project_of(tmp_path, {
        "m.py": (
            "import tempfile\nimport warp as wp\n"
            "def stage(n, *args, **kwargs):\n    first = args[0]\n    return first, kwargs['path'], args\n"
            "def main():\n    stage(1, tempfile.mkdtemp(), path='/x')\n    stage(2, 'stable', *[3])\n"
        ),
    })
    file = _file(project, "m.py")
    first, path, args = file.functions["stage"].returns[0].items
    # the call that unpacks a list of its own passes no known first item: `args[0]` is its own source there
    assert sorted(s.value.text for s in project.sources(file, first, "stage")) == ["args[...]",
                                                                                   "tempfile.mkdtemp(...)"]
    # the tuple / dict of the extra arguments, written where each call is
    assert sorted(s.value.text for s in project.sources(file, args, "stage")) == ["*args", "*args"]
    # `kwargs['path']` likewise: the keyword the first call passes, and its own source at the call that unpacks
    assert sorted(s.value.text for s in project.sources(file, path, "stage")) == ["'/x'", "kwargs[...]"]


def test_sources_that_must_all_pass_a_test_stop_at_the_first_that_fails(tmp_path):
    # a question that needs every source to be of one shape (a decorator bound to `wp.kernel`) stops at the
    # first source of another shape, the last in the list: a parameter with many callers has many sources
    project = project_of(tmp_path, {"m.py": (
        "import functools\nimport warp as wp\n"
        "def use(deco):\n    return deco\n"
        + "".join(f"use(functools.partial(wp.kernel, module='m{i}'))\n" for i in range(5))
        + "use(print)\n" + "".join(f"use(functools.partial(wp.kernel, module='n{i}'))\n" for i in range(5))
    )})
    file = _file(project, "m.py")
    deco = file.functions["use"].returns[0]
    every = project.sources(file, deco, "use")
    assert len(every) == 11
    stopped = project.sources(file, deco, "use", accept=lambda s: s.value.ref == "functools.partial")
    assert [s.value.ref for s in stopped] == ["functools.partial"] * 5 + ["print"]
    assert len(project.sources(file, deco, "use", accept=lambda s: True)) == 11


def test_an_unpacked_item_comes_from_the_item_of_the_tuple_made(tmp_path):
    # `a, b = rhs` binds b to rhs[1]: its source is the second item of each tuple `rhs` can be
    project = project_of(tmp_path, {
        "m.py": (
            "import tempfile\nimport warp as wp\n"
            "def make_dirs():\n    return tempfile.mkdtemp(), 3\n"
            "def setup(rows):\n    cache_dir, n = make_dirs()\n    _, last = (0, 'stable')\n"
            "    first, *rest = make_dirs()\n    m = rows[1]\n"
            "    return cache_dir, n, last, first, rest, m\n"
        ),
    })
    file = _file(project, "m.py")
    returned = file.functions["setup"].returns[0].items

    def sources(value):
        return [s.value.text for s in project.sources(file, value, "setup")]

    assert sources(returned[0]) == ["tempfile.mkdtemp(...)"]
    assert sources(returned[1]) == ["3"]
    assert sources(returned[2]) == ["'stable'"]
    assert sources(returned[3]) == ["tempfile.mkdtemp(...)"]
    # a starred target (and any after it) has no known position
    assert [s.value.kind for s in project.sources(file, returned[4], "setup")] == ["other"]
    assert sources(returned[5]) == ["rows[...]"]  # an item of what is not a tuple literal is its own source


def test_a_config_assignment_in_a_helper_is_made_once_per_call_deciding_its_value(tmp_path):
    project = project_of(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/helpers.py": (
            "import warp as wp\n"
            "def _set(value):\n    wp.config.cache_kernels = value\n"
            "def set_cache(value):\n    _set(value)\n"
            "def fixed():\n    wp.config.mode = 'release'\n"
            "def _set_on(value, device):\n    wp.config.cache_kernels = value\n"
            "def setup(device):\n    _set_on(False, device)\n"
        ),
        "main.py": (
            "from pkg import helpers\n"
            "def main():\n    helpers.set_cache(False)\n    helpers.set_cache(True)\n    helpers.fixed()\n"
            "    helpers.setup('cpu')\n"
        ),
    })
    main, helpers = _file(project, "main.py"), _file(project, "helpers.py")
    made = project.config_assignments_made(main)
    assert [(a.name, a.origin[1].line) for a in made] == [("cache_kernels", 3), ("cache_kernels", 4)]
    assert [project.constant(a.file, a.value, a.ctx.scope, a.site) for a in made] == [(True, False), (True, True)]
    # made where its value is decided: the call in setup() (its `device` does not reach the value); an assignment
    # whose value reads no parameter is made where it is written
    assert [(a.name, a.origin[1].line) for a in project.config_assignments_made(helpers)] == [
        ("mode", 7), ("cache_kernels", 11)]


def test_snapshot_values_are_the_default_and_every_assignment_that_may_run_first(tmp_path):
    project = project_of(tmp_path, {
        "kernels.py": "import warp as wp\n@wp.kernel\ndef k(a: wp.array(dtype=float)):\n    a[0] = 1.0\n",
        "main.py": (
            "import warp as wp\nwp.config.lineinfo = True\nimport kernels\n"
            "def main():\n    wp.config.lineinfo = True\n    wp.config.max_unroll = 8\n"
            "    wp.config.deterministic_max_records += 1\n"
            "if __name__ == '__main__':\n    main()\n"
        ),
    })
    main = _file(project, "main.py")
    created = main.imports[1].ctx  # `import kernels` creates module `kernels`
    assert project.snapshot_values("enable_backward", main, created) == (True,)  # Warp 1.19's default, never set
    assert project.snapshot_values("max_unroll", main, created) == (8, 16)  # the assignment may have run first
    # set above the import of the file the program runs: the default never reaches the module
    assert project.snapshot_values("lineinfo", main, created) == (True, True)
    assert project.snapshot_values("lineinfo", main, main.imports[0].ctx) == (True, True, False)
    assert project.snapshot_values("deterministic_max_records", main, created) is None  # `+=`: not one constant
    assert project.snapshot_values("deterministic", main, created) is None  # an enum member: no default in the table


def test_class_attributes_and_annotated_config(tmp_path):
    project = project_of(tmp_path, {
        "c.py": (
            "import warp as wp\nfrom dataclasses import dataclass, field\n"
            "@dataclass\nclass Inner:\n    contact: int = 64\n"
            "@dataclass\nclass Settings:\n    inner: Inner = field(default_factory=Inner)\n"
            "class Solver:\n    block = 32\n    def __init__(self, threads=128):\n        self.threads = threads\n"
            "def use(settings: Settings, solver: Solver):\n"
            "    x = settings.inner.contact\n    y = solver.threads\n    z = solver.block\n"
        ),
    })
    file = _file(project, "c.py")
    values = _values_of_locals(project, file)
    assert values["x"].constants() == [64]
    assert values["y"].constants() == [128]
    assert values["z"].constants() == [32]


def test_a_dict_display_holds_what_its_double_star_unpacks_where_it_stands(tmp_path):
    # `{**base, "k": v}` is built in the display's order, a later key replacing an earlier one: the written key
    # after `**` wins, the unpacked one after a written key wins, keys only the base has are kept; a mapping the
    # evaluator does not know (a parameter) may hold any key
    project = project_of(tmp_path, {"d.py": (
        "import warp as wp\n"
        "BASE = {'block_dim': 64, 'unroll': 4}\n"
        "def use(options):\n"
        "    merged = {**BASE, 'block_dim': 128}\n"
        "    overridden = {'block_dim': 32, **BASE}\n"
        "    local = {'tag': 1}\n"
        "    nested = {**{**local, 'block_dim': 16}, 'verbose': False}\n"
        "    a = merged['block_dim']\n    b = merged['unroll']\n    c = overridden['block_dim']\n"
        "    d = nested['block_dim']\n    e = {**options, 'verbose': False}['block_dim']\n"
    )})
    file = _file(project, "d.py")
    values = _values_of_locals(project, file)
    assert values["a"].constants() == [128] and values["a"].known
    assert values["b"].constants() == [4]
    assert values["c"].constants() == [64] and values["c"].known
    assert values["d"].constants() == [16] and values["d"].known
    assert not values["e"].known


def test_an_instance_attribute_is_what_its_own_construction_passed(tmp_path):
    # FAMILY.single is the `single=` of FAMILY's construction, not of every Family the project makes; an
    # __init__ that stores its parameter is bound at the construction; a field not passed keeps its default
    project = project_of(tmp_path, {"f.py": (
        "import warp as wp\nfrom dataclasses import dataclass\n"
        "@dataclass(frozen=True)\nclass Family:\n    single: object\n    batch: object = None\n"
        "class Holder:\n    def __init__(self, value, scale=2):\n        self.value = value\n"
        "        self.scale = scale\n"
        "A = Family(single=1, batch=2)\nB = Family(single=3)\nH = Holder(5)\nG = Holder(6, scale=7)\n"
        "def use(flag):\n"
        "    a = A.single\n    b = B.single\n    n = B.batch\n    h = H.value\n    g = G.scale\n"
        "    k = A.batch if flag else B.single\n"
    )})
    file = _file(project, "f.py")
    values = _values_of_locals(project, file)
    assert values["a"].constants() == [1]
    assert values["b"].constants() == [3]
    assert values["n"].constants() == [None]
    assert values["h"].constants() == [5]
    assert values["g"].constants() == [7]
    assert sorted(values["k"].constants()) == [2, 3]


def test_a_table_key_a_public_functions_users_pass_can_be_any_key(tmp_path):
    # run() is public library API: its users pass mode, whatever main() passes; _run() is private
    project = project_of(tmp_path, {"lib/__init__.py": "", "lib/ops.py": (
        "import warp as wp\nTABLE = {'a': 32, 'b': 64}\n"
        "def run(mode='a'):\n    return inner(mode)\n"
        "def inner(mode):\n    t = TABLE[mode]\n    return t\n"
        "def _run(mode='a'):\n    u = TABLE[mode]\n    return u\n"
        "def main():\n    run()\n    _run()\n"
    )})
    file = _file(project, "ops.py")
    evaluator = project.layer.evaluator
    found = {a.target.text: evaluator.values(file, a.value, a.ctx.scope) for a in file.assignments if a.ctx.scope}
    assert found["t"].constants() == [32, 64]
    assert found["u"].constants() == [32]


def test_a_none_default_replaced_by_a_guard_is_never_read_as_none(tmp_path):
    # `if p is None: p = 32` rebinds the parameter wherever it was None: the launch reads 32 (or what a caller
    # passes), never None (Warp's default block size). A guard with another condition, a loop around it, or a test
    # of something else leaves None possible.
    project = project_of(tmp_path, {"m.py": (
        "import warp as wp\n"
        "def guarded(k, block_dim=None):\n    if block_dim is None:\n        block_dim = 32\n"
        "    wp.launch(k, dim=1, block_dim=block_dim)\n"
        "def both(k, block_dim=None, fast=False):\n    if block_dim is None and fast:\n        block_dim = 32\n"
        "    wp.launch(k, dim=1, block_dim=block_dim)\n"
        "def other(k, block_dim=None, size=None):\n    if size is None:\n        block_dim = 32\n"
        "    wp.launch(k, dim=1, block_dim=block_dim)\n"
        "def looped(k, block_dim=None):\n    for _ in range(2):\n        if block_dim is None:\n"
        "            block_dim = 32\n    wp.launch(k, dim=1, block_dim=block_dim)\n"
        "def run(k):\n    guarded(k)\n    guarded(k, 64)\n    both(k)\n    other(k)\n    looped(k)\n"
    )})
    file = project.files[0]

    def block_dims(scope):
        call = next(c for c in file.calls if c.callee == "warp.launch" and c.ctx.scope == scope)
        return sorted(repr(v) for v in project.values(file, call.bound("block_dim"), scope).constants())

    assert block_dims("guarded") == ["32", "64"]
    assert block_dims("both") == block_dims("other") == block_dims("looped") == ["32", "None"]


def test_a_dicts_get_is_its_item_or_the_default(tmp_path):
    project = project_of(tmp_path, {"m.py": (
        "import warp as wp\nA = 32\nB = 64\nTABLE = {'a': A, 'b': B}\n"
        "def pick(x):\n    t = TABLE.get(x.key)\n    return t\n"
        "def known():\n    u = TABLE.get('b')\n    w = TABLE.get('z', 8)\n    local = {'c': 1}\n"
        "    v = local.get('c')\n    return u, w, v\n"
        "def other(obj):\n    o = obj.get('a')\n    return o\n"
    )})
    file = _file(project, "m.py")
    evaluator = project.layer.evaluator
    found = {a.target.text: evaluator.values(file, a.value, a.ctx.scope) for a in file.assignments if a.ctx.scope}
    # a key not known: any item (of a table of names, as a table of kernels is), or None when it is missing
    assert set(found["t"].constants()) == {32, 64, None}
    assert found["u"].constants() == [64] and found["w"].constants() == [8] and found["v"].constants() == [1]
    assert not found["o"].known  # another object's get(): not a dict the evaluator knows


def test_a_dict_a_helper_fills_and_returns_holds_what_it_stored(tmp_path):
    project = project_of(tmp_path, {"m.py": (
        "import warp as wp\nfrom typing import Any\n"
        "@wp.kernel\ndef k(x: wp.array(dtype=Any)):\n    x[0] = x[0]\n"
        "def register(kernel, dtypes):\n    out = {}\n    for t in dtypes:\n"
        "        out[t] = wp.overload(kernel, [wp.array(dtype=t)])\n    return out\n"
        "TABLE = register(k, (wp.float32, wp.float64))\n"
        "def run(x):\n    chosen = TABLE[x.dtype]\n    wp.launch(chosen, dim=1, inputs=[x])\n"
        "def listed():\n    items = []\n    items[0] = 1\n    return items\n"
        "LISTED = listed()\n"
    )})
    file = _file(project, "m.py")
    evaluator = project.layer.evaluator
    chosen = next(a for a in file.assignments if a.target.text == "chosen")
    assert [k.index for k in evaluator.values(file, chosen.value, "run").kernels()] == [0]
    assert [launch.kernel.name for launch in project.launches(file)] == ["k"]
    listed = next(a for a in file.assignments if a.target.text == "LISTED")
    assert not any(type(v).__name__ == "Mapping" for v in evaluator.values(file, listed.value, ""))  # not a dict


def test_cycles_and_bounds_end(tmp_path):
    project = project_of(tmp_path, {
        "r.py": "import warp as wp\ndef f(n):\n    return g(n)\ndef g(n):\n    return f(n)\nx = f(1)\ny = x + 1\n",
    })
    file = _file(project, "r.py")
    y = next(a for a in file.assignments if a.target.text == "y")
    result = project.layer.evaluator.values(file, y.value, "")
    assert not result.known  # a cycle adds no value: the sum is not a constant
    assert Const(2) not in result.items and not any(isinstance(v, Varies) and not v.reason for v in result)


def test_namespace_package_folders_are_part_of_module_names(tmp_path):
    # `_src` has no __init__.py: Python names the file sim._src.solvers.contact, and so does Warp.
    project = project_of(tmp_path, {
        "pyproject.toml": "",
        "sim/__init__.py": "",
        "sim/_src/solvers/__init__.py": "",
        "sim/_src/solvers/contact.py": "import warp as wp\n@wp.kernel\ndef k(a: wp.array(dtype=int)):\n    a[0] = 1\n",
        "sim/_src/run.py": ("import warp as wp\nfrom .solvers.contact import k\n"
                            "def run(a):\n    wp.launch(k, dim=1, inputs=[a])\n"),
        "scripts/tool.py": "import warp as wp\n",  # a folder with no package above it: a top-level name
    })
    contact = _file(project, "contact.py")
    assert contact.module == "sim._src.solvers.contact"
    assert project.kernel_module(contact, contact.kernels[0]) == "sim._src.solvers.contact"
    (launch,) = project.launches(_file(project, "run.py"))
    assert launch.module == "sim._src.solvers.contact"
    assert _file(project, "tool.py").module == "tool"


def _lint(path, **config):
    session = Session(Config(root=path, select=DEFAULT_CODES, **config))
    session.configure_cache(False)
    return session.lint_paths([path]).diagnostics, session.project()


def test_code_contexts():
    from warplint.semantic.context import CodeContext

    _, project = _lint(os.path.join(FIXTURES, "deliberate"))
    assert project.context_of(_file(project, "bench_compile.py")) is CodeContext.BENCHMARK
    assert project.context_of(_file(project, "checks.py"), "TestBuild.setUp") is CodeContext.TEST
    suite = _file(project, "suite.py")
    assert project.context_of(suite, "LoadSuite.setup") is CodeContext.BENCHMARK  # an asv class
    assert project.context_of(suite, "Warmup.setup") is CodeContext.LIBRARY  # setup() alone is not asv
    assert project.context_of(suite) is CodeContext.LIBRARY
    assert project.context_of(_file(project, "main.py"), "main") is CodeContext.LIBRARY


def test_deliberate_cold_starts_are_reported_on_request():
    path = os.path.join(FIXTURES, "deliberate")
    default, _ = _lint(path)
    assert all("deliberate" not in d.data for d in default)
    found, _ = _lint(path, report_deliberate=True)
    extra = sorted((os.path.relpath(d.path, path), d.span.line, d.code, d.data["deliberate"])
                   for d in found if "deliberate" in d.data)
    assert extra == [
        ("benchmarks/bench_compile.py", 5, "WC201", "in benchmark code"),
        ("benchmarks/bench_compile.py", 6, "WC202", "in benchmark code"),
        ("perf/suite.py", 14, "WC201", "in benchmark code"),
        ("perf/suite.py", 15, "WC204", "in benchmark code"),
        ("tests/checks.py", 21, "WC201", "in test code that runs only when its file is run as a script, not by the "
                                         "test runner"),
    ]
    assert len(found) == len(default) + len(extra)


def test_a_cold_start_in_test_code_is_deliberate_when_set_back_or_run_in_a_child_process():
    # test code alone is no reason (tests/checks.py's setUp of the fixture above is reported by default); a change
    # the test sets back once done, or code that runs only in a child process the test starts by name, is chosen
    path = os.path.join(os.path.dirname(FIXTURES), "WC202_test_code")
    default, _ = _lint(path)
    assert sorted(d.span.line for d in default if d.code == "WC202") == [23, 29]
    found, _ = _lint(path, report_deliberate=True)
    assert sorted((d.span.line, d.data["deliberate"]) for d in found if d.code == "WC202" and "deliberate" in d.data) \
        == [(38, "in test code that sets `wp.config.cache_kernels` back in a later statement to the value it read "
                 "before"),
            (47, "in test code that sets `wp.config.cache_kernels` back in a later statement to the value it read "
                 "before"),
            (60, "in test code that sets `wp.config.cache_kernels` back in `TestSetBack.tearDownClass` to the value "
                 "it read before"),
            (71, "in test code no test runs in its own process (a subprocess's entry, called by its name)")]


def test_options_of_a_module_the_tests_own_set_between_tests_are_reported_on_request():
    # the tests' own helper module's options set after an earlier test file launched it: deliberate (a test of those
    # options); the library's module, which the tests only call, is reported by default
    path = os.path.join(os.path.dirname(FIXTURES), "WC102_test_wrapped")
    default, _ = _lint(path)
    assert [(os.path.basename(d.path), d.span.line) for d in default if d.code == "WC102"] == [("test_b_run.py", 11)]
    found, _ = _lint(path, report_deliberate=True)
    assert sorted((os.path.basename(d.path), d.span.line, d.data["deliberate"]) for d in found
                  if d.code == "WC102" and "deliberate" in d.data) == [
        ("test_b_run.py", 17, "options of `tests.bodies`, a module the tests own, set between tests")]


def test_a_cache_defeat_is_chosen_by_what_its_condition_reads_or_by_timing_its_build(tmp_path):
    # names say nothing here: `run_fresh` and `clean` are judged by what the code reads and does
    project = project_of(tmp_path, {
        "app.py": (
            "import argparse, os, sys, time\nimport warp as wp\nfrom absl import flags\n"
            "_CLEAR = flags.DEFINE_bool('clear', False, 'clear the caches')\n"
            "args = argparse.ArgumentParser().parse_args()\n"
            "if args.clean:\n    wp.clear_kernel_cache()\n"  # 7: a command-line option
            "if _CLEAR.value:\n    wp.clear_kernel_cache()\n"  # 9: an absl flag
            "if '--cold' in sys.argv:\n    wp.clear_kernel_cache()\n"  # 11: the command line
            "if os.environ.get('COLD'):\n    wp.clear_kernel_cache()\n"  # 13: the environment
            "if wp.get_device().is_cuda:\n    wp.clear_kernel_cache()\n"  # 15: the machine, not a choice
            "def clean(full):\n    if full:\n        wp.clear_kernel_cache()\n"  # 18: a parameter
            "def run_fresh():\n    wp.clear_kernel_cache()\n    wp.force_load()\n"  # 20
            "def timed():\n    wp.clear_kernel_cache()\n    t = time.perf_counter()\n    wp.force_load()\n"  # 23
            "    return time.perf_counter() - t\n"
            "def timed_after():\n    wp.clear_kernel_cache()\n    wp.force_load()\n"  # 28
            "    t = time.perf_counter()\n    wp.synchronize()\n    return time.perf_counter() - t\n"
            "def scoped():\n    wp.clear_kernel_cache()\n    with wp.ScopedTimer('load'):\n"  # 34
            "        wp.force_load()\n"
            "def cli():\n    parser = argparse.ArgumentParser()\n    options, _ = parser.parse_known_args()\n"
            "    if options.fresh:\n        run_fresh()\n"  # run_fresh is only called on request
        ),
    })
    file = _file(project, "app.py")
    clears = {c.span.line: c.ctx for c in file.calls if c.callee == "warp.clear_kernel_cache"}
    opted = {line for line, ctx in clears.items() if project.opt_in(file, ctx)}
    assert opted == {7, 9, 11, 13, 18, 20}
    measured = {line for line, ctx in clears.items() if project.cold_start_measurement(file, ctx)}
    assert measured == {23, 34}


def test_report_deliberate_setting(tmp_path):
    from warplint.config import ConfigError, load_config
    from warplint.testing import known_codes

    (tmp_path / "pyproject.toml").write_text("[tool.warplint]\nreport-deliberate = true\n")
    assert load_config(str(tmp_path), known_codes()).report_deliberate is True
    (tmp_path / "pyproject.toml").write_text("[tool.warplint]\nreport-deliberate = 'yes'\n")
    with pytest.raises(ConfigError, match="report-deliberate"):
        load_config(str(tmp_path), known_codes())


def test_devices_a_launch_can_run_on():
    from warplint.semantic.devices import Device

    _, project = _lint(os.path.join(FIXTURES, "cpu_only"))
    host = {ln.call.span.line: ln for ln in project.launches(_file(project, "host.py"))}
    for line in (12, 13, 19, 25, 31):  # device bound at the wrapper's call, ScopedDevice, set_device, a param
        assert project.call_devices(host[line].file, host[line].call) == (
            {Device.CPU, Device.CUDA} if line == 25 else {Device.CPU}), line
    assert host[25].block_dims.constants() == [256]  # `256 if device.is_cuda else 1`: 1 is the CPU's
    for launch in project.launches(_file(project, "device.py")):  # no device: the default, CUDA if present
        assert project.can_run_on_cuda(launch)


def test_cuda_cache_disabled_in_a_cpu_only_project(tmp_path):
    launch = "def run(a):\n    wp.launch(k, dim=1, inputs=[a], device='cpu')\n"
    files = {"app.py": ("import os\nos.environ['CUDA_CACHE_DISABLE'] = '1'\nimport warp as wp\n"
                        "@wp.kernel\ndef k(a: wp.array(dtype=float)):\n    a[0] = 1.0\n" + launch)}
    project = project_of(tmp_path, files)
    assert not project.may_use_cuda()
    diagnostics, _ = _lint(str(tmp_path))
    assert [d.code for d in diagnostics] == []
    (tmp_path / "app.py").write_text(files["app.py"].replace(", device='cpu'", ""))
    diagnostics, _ = _lint(str(tmp_path))
    assert [d.code for d in diagnostics] == ["WC204"]


def test_one_finding_per_batch_of_kernels_and_cached_repeats():
    path = os.path.join(FIXTURES, "joins")
    found, _ = _lint(path)
    by_line = {(os.path.basename(d.path), d.span.line): d for d in found if d.code == "WC101"}
    batch = by_line[("batch.py", 13)]
    assert "kernels `mul`, `add` and `sub` join " in batch.message
    assert sorted(r.span.line for r in batch.related if "joins module" in r.message) == [17, 21]
    fill = by_line[("cached.py", 16)]
    # the call that makes a new kernel after the launch is new_value's, not same_again's cached repeat
    assert [r.span.line for r in fill.related if "called here" in r.message] == [32]


def test_cached_repeat_alone_is_clean(tmp_path):
    with open(os.path.join(FIXTURES, "joins", "cached.py"), encoding="utf-8") as fh:
        text = fh.read()
    (tmp_path / "cached.py").write_text(re.sub(r"  # WC101\b.*", "", text[:text.index("def new_value")]))
    found, _ = _lint(str(tmp_path))
    assert [d.code for d in found] == []


def test_positional_construction_of_a_class_with_its_own_init(tmp_path):
    # Solver(model, 4) passes its arguments to __init__, which sets self.block itself: not dataclass fields
    project = project_of(tmp_path, {"s.py": (
        "import warp as wp\n@wp.kernel\ndef k(a: wp.array(dtype=float)):\n    a[0] = 1.0\n"
        "class Solver:\n    def __init__(self, model, n):\n        self.block = 64 if n < 8 else 128\n"
        "    def step(self, a):\n        wp.launch(k, dim=1, inputs=[a], block_dim=self.block)\n"
        "s = Solver(None, 4)\n"
    )})
    (launch,) = project.launches(_file(project, "s.py"))
    assert launch.block_dims.known and sorted(launch.block_dims.constants()) == [64, 128]


def test_the_calls_and_assignments_of_one_statement_share_its_context():
    """One Context object per statement (fewer objects to cache and read back), never one shared across
    statements, and the shared one keeps the very exit branch whose end is set when the branch closes."""
    from warplint.engine import analyze

    model = analyze("m.py", "def f(x):\n    if x:\n        y = g(h(x))\n        return y\n    k(x)\n    k(x)\n")
    calls = {c.callee.rpartition(".")[2]: c for c in model.calls}
    (assignment,) = [a for a in model.assignments if a.target.text == "y"]
    assert calls["g"].ctx is calls["h"].ctx is assignment.ctx
    first_k, second_k = [c for c in model.calls if c.callee.endswith("k")]
    assert first_k.ctx is not second_k.ctx and first_k.ctx.order < second_k.ctx.order
    branch = assignment.ctx.exit_branch
    assert branch is not None and branch.end > assignment.ctx.order  # the `return y` after it
    assert assignment.ctx.runs_before(branch.end) and not assignment.ctx.runs_before(first_k.ctx.order)


def test_differentiation_reaches_what_a_tape_can_record(tmp_path):
    kernel = "import warp as wp\n@wp.kernel\ndef {0}(a: wp.array(dtype=float)):\n    a[0] = 1.0\n"
    project = project_of(tmp_path, {
        "lib/__init__.py": "",
        "lib/recorded.py": kernel.format("recorded") + "def run(a):\n    wp.launch(recorded, dim=1, inputs=[a])\n",
        "lib/on_self.py": kernel.format("on_self") + "def run(a):\n    wp.launch(on_self, dim=1, inputs=[a])\n",
        "lib/forward.py": kernel.format("forward") + "def run(a):\n    wp.launch(forward, dim=1, inputs=[a])\n",
        "lib/through_callback.py": kernel.format("cb") + "def run(a):\n    wp.launch(cb, dim=1, inputs=[a])\n",
        "train.py": (
            "import warp as wp\nfrom lib import forward, on_self, recorded\n"
            # a tape in a function reaches what that function runs, not its file's other functions
            "def step(a):\n    with wp.Tape() as tape:\n        recorded.run(a)\n    tape.backward()\n"
            "def evaluate(a):\n    forward.run(a)\n"
            # a tape kept on self reaches every method of its class
            "class Trainer:\n    def __init__(self):\n        self.tape = wp.Tape()\n"
            "    def forward(self, a):\n        with self.tape:\n            on_self.run(a)\n"
        ),
        # a tape around a callback the layer cannot follow reaches every module its program imports
        "grad.py": (
            "import warp as wp\nimport lib.through_callback\n"
            "def gradient(fn, a):\n    with wp.Tape() as tape:\n        fn(a)\n    tape.backward()\n"
        ),
    })

    def reached(suffix):
        file = _file(project, suffix)
        return bool(project.backward_reached(file, file.kernels[0]))

    assert reached("recorded.py")
    assert reached("on_self.py")
    assert reached("through_callback.py")
    assert not reached("forward.py")
    assert [u.module for u in project.unused_backward()] == ["lib.forward"]


def test_a_tape_around_a_callback_reaches_the_overrides_of_its_librarys_classes(tmp_path):
    """A library's tape calls a method of objects it is handed (``obj.residuals(a)``): an application's subclass
    of the library's base class, imported under its re-exported name, is what runs there, so its kernels are
    differentiated. A class of the application that derives from nothing of the library is not reached."""
    kernel = "@wp.kernel\ndef {0}(a: wp.array(dtype=float)):\n    a[0] = 1.0\n"
    project = project_of(tmp_path, {
        "lib/__init__.py": "from lib._solver import Objective, solve\n",
        "lib/_solver.py": (
            "import warp as wp\n"
            "class Objective:\n    def residuals(self, a):\n        pass\n"
            "def solve(objectives, a):\n    with wp.Tape() as tape:\n        for obj in objectives:\n"
            "            obj.residuals(a)\n    tape.backward()\n"
        ),
        "app.py": (
            "import warp as wp\nimport lib\n" + kernel.format("distance") + kernel.format("draw")
            + "class Distance(lib.Objective):\n    def residuals(self, a):\n"
            "        wp.launch(distance, dim=1, inputs=[a])\n"
            "class Viewer:\n    def show(self, a):\n        wp.launch(draw, dim=1, inputs=[a])\n"
            "lib.solve([Distance()], wp.zeros(1, dtype=float))\n"
        ),
        "viewer_app.py": (
            "import warp as wp\n" + kernel.format("paint")
            + "def show(a):\n    wp.launch(paint, dim=1, inputs=[a])\n"
        ),
    })
    app = _file(project, "app.py")
    assert project.layer.bindings.definition("lib.Objective") == "lib._solver.Objective"
    assert project.layer.bindings.subclasses("lib.Objective") == ["app.Distance"]
    assert project.backward_reached(app, app.kernels[0])  # app.py holds an override the tape calls
    viewer = _file(project, "viewer_app.py")
    assert not project.backward_reached(viewer, viewer.kernels[0])
    assert [u.file.path for u in project.unused_backward()] == [viewer.path]


def test_a_tape_kept_in_its_function_records_nothing_its_callers_launch(tmp_path):
    """A tape a function makes and keeps (``with`` it, ``tape.backward()``, never returned, passed or stored) records
    only while that function runs: a caller's other launches are not differentiated. A tape the function returns
    is its caller's to record with."""
    kernel = "import warp as wp\n@wp.kernel\ndef {0}(a: wp.array(dtype=float)):\n    a[0] = 1.0\n"
    project = project_of(tmp_path, {
        "taped.py": kernel.format("taped"), "forward.py": kernel.format("forward"),
        "returned_kernels.py": kernel.format("after_return"),
        "kept.py": (
            "import warp as wp\nfrom forward import forward\nfrom taped import taped\n"
            "def train(a):\n    tape = wp.Tape()\n    with tape:\n        wp.launch(taped, dim=1, inputs=[a])\n"
            "    tape.backward()\n"
            "def main(a):\n    train(a)\n    wp.launch(forward, dim=1, inputs=[a])\n"
        ),
        "returned.py": (
            "import warp as wp\nfrom returned_kernels import after_return\n"
            "def make():\n    tape = wp.Tape()\n    return tape\n"
            "def main(a):\n    tape = make()\n    with tape:\n        wp.launch(after_return, dim=1, inputs=[a])\n"
            "    tape.backward()\n"
        ),
    })
    files = {name: _file(project, f"{name}.py") for name in ("taped", "forward", "returned_kernels")}
    reached = {name: bool(project.backward_reached(f, f.kernels[0])) for name, f in files.items()}
    assert reached == {"taped": True, "forward": False, "returned_kernels": True}


def test_kernels_launched_with_arrays_made_to_carry_gradients_are_differentiable(tmp_path):
    """A training library's layer makes its outputs with ``requires_grad=self.requires_grad`` and launches its kernel on
    them: whoever records a tape around its forward pass differentiates that kernel, though no tape is in the library.
    So does a helper launched with an array its caller made so. Arrays made with ``requires_grad=False`` carry none."""
    kernel = "import warp as wp\n@wp.kernel\ndef k(a: wp.array(dtype=float)):\n    a[0] = 1.0\n"
    project = project_of(tmp_path, {
        "layer.py": kernel + (
            "class Layer:\n    def __init__(self, requires_grad=True):\n        self.requires_grad = requires_grad\n"
            "        self.out = wp.empty(4, dtype=float, requires_grad=self.requires_grad)\n"
            "    def forward(self):\n        wp.launch(k, dim=4, inputs=[self.out])\n        return self.out\n"),
        "ops.py": kernel + (
            "def fill(a):\n    wp.launch(k, dim=a.shape, inputs=[a])\n    return a\n"
            "def filled_like(a):\n    return fill(wp.empty(a.shape, dtype=float, requires_grad=a.requires_grad))\n"),
        "render.py": kernel + (
            "def draw():\n    image = wp.empty(4, dtype=float, requires_grad=False)\n"
            "    wp.launch(k, dim=4, inputs=[image])\n"),
    })
    reached = {name: bool(project.backward_reached(_file(project, name), _file(project, name).kernels[0]))
               for name in ("layer.py", "ops.py", "render.py")}
    assert reached == {"layer.py": True, "ops.py": True, "render.py": False}


def test_arrays_made_to_carry_gradients_count_only_where_users_call_the_launch(tmp_path):
    """Users tape library code; a program's own code (an example, a test, a script) is run by that program, whose
    tapes the reach follows. An example's launch of arrays a library made with ``requires_grad=a.requires_grad``,
    a test's arrays made with ``requires_grad=True``, a script's: with no tape, nothing differentiates them. A
    library function launching the same arrays stays differentiable, whoever calls it."""
    kernel = "import warp as wp\n@wp.kernel\ndef k(a: wp.array(dtype=float)):\n    a[0] = 1.0\n"
    project = project_of(tmp_path, {
        "lib/__init__.py": "",
        "lib/views.py": "import warp as wp\ndef like(a):\n"
                        "    return wp.empty(a.shape, dtype=float, requires_grad=a.requires_grad)\n",
        "lib/step.py": kernel + "def step(a):\n    wp.launch(k, dim=4, inputs=[a])\n",
        "examples/example_view.py": kernel + "from lib import views, step\n"
                                    "def run(a):\n    b = views.like(a)\n    wp.launch(k, dim=4, inputs=[b])\n"
                                    "    step.step(b)\n",
        "tests/test_grad.py": kernel + "def test_forward():\n"
                              "    a = wp.zeros(4, dtype=float, requires_grad=True)\n"
                              "    wp.launch(k, dim=4, inputs=[a])\n",
        "run.py": kernel + "if __name__ == '__main__':\n"
                  "    a = wp.zeros(4, dtype=float, requires_grad=True)\n    wp.launch(k, dim=4, inputs=[a])\n",
    })
    names = ("examples/example_view.py", "tests/test_grad.py", "run.py", "lib/step.py")
    reached = {name: bool(project.backward_reached(_file(project, name), _file(project, name).kernels[0]))
               for name in names}
    assert reached == {"examples/example_view.py": False, "tests/test_grad.py": False, "run.py": False,
                       "lib/step.py": True}


def test_a_kernels_own_enable_backward_decides_its_adjoint(tmp_path):
    """``@wp.kernel(enable_backward=True)`` builds the kernel's adjoint in a module whose option is off (Warp merges
    ``module.options | kernel.options`` when it builds the kernel); its own False never builds one."""
    body = "(a: wp.array(dtype=float)):\n    a[0] = 1.0\n"
    project = project_of(tmp_path, {
        "forced.py": ("import warp as wp\nwp.set_module_options({'enable_backward': False})\n"
                      "@wp.kernel(enable_backward=True)\ndef on" + body + "@wp.kernel\ndef follows" + body
                      + "def run(a):\n    wp.launch(on, dim=1, inputs=[a])\n"
                      "    wp.launch(follows, dim=1, inputs=[a])\n"),
        "off.py": ("import warp as wp\n@wp.kernel(enable_backward=False)\ndef off" + body
                   + "def run(a):\n    wp.launch(off, dim=1, inputs=[a])\n"),
    })
    (unused,) = project.unused_backward()
    forced = _file(project, "forced.py")
    assert unused.file is forced and [k.name for _, k in unused.kernels] == ["on"]
    assert unused.kernel_forces_it and unused.span == forced.kernels[0].span


def test_a_conftest_is_part_of_its_test_files_program(tmp_path):
    """pytest imports ``conftest.py`` before the test modules below it: a ``wp.config.enable_backward = False`` there
    reaches the modules those tests import; a script beside them that imports the same kind of module does not
    run the conftest."""
    kernel = "import warp as wp\n@wp.kernel\ndef k(a: wp.array(dtype=float)):\n    a[0] = 1.0\n"
    project = project_of(tmp_path, {
        "pytest.ini": "[pytest]\npythonpath = .\n",
        "tested.py": kernel, "shipped.py": kernel,
        "tests/conftest.py": "import warp as wp\nwp.config.enable_backward = False\n",
        "tests/test_k.py": ("import warp as wp\nimport tested\n"
                            "def test_k():\n    wp.launch(tested.k, dim=1, inputs=[wp.zeros(1)])\n"),
        "app.py": "import warp as wp\nimport shipped\nwp.launch(shipped.k, dim=1, inputs=[wp.zeros(1)])\n",
    })
    test_file = _file(project, "test_k.py")
    assert _file(project, "conftest.py") in project.layer.bindings.imported_files(test_file)
    assert [u.module for u in project.unused_backward()] == ["shipped"]


def test_reading_a_descriptor_runs_its_getter(tmp_path):
    # property, functools.cached_property, property(getter) and a class with __get__: reading the attribute on an
    # instance is what the getter returns; reading a plain method gives the method, a property returning a
    # fresh non-kernel gives that value
    project = project_of(tmp_path, {"d.py": (
        "import functools\nimport warp as wp\n"
        "class Getter:\n    def __get__(self, obj, owner=None):\n        @wp.kernel\n"
        "        def g(a: wp.array(dtype=float)):\n            a[0] = 1.0\n        return g\n"
        "class M:\n    via_get = Getter()\n"
        "    def __init__(self, c):\n        self.c = c\n"
        "    @property\n    def kernel(self):\n        @wp.kernel\n"
        "        def k(a: wp.array(dtype=float)):\n            a[0] = 1.0\n        return k\n"
        "    @functools.cached_property\n    def cached(self):\n        return self.kernel\n"
        "    def _size(self):\n        return 64\n"
        "    size = property(_size)\n"
        "    @property\n    def fresh(self):\n        return [self.c]\n"
        "    def method(self):\n        return 1\n"
        "    def run(self):\n        s = self.kernel\n        t = self.size\n"
        "def use():\n    m = M(1)\n    a = M(1).kernel\n    b = m.cached\n    c = M(2).via_get\n    d = M(1).size\n"
        "    e = M(1).fresh\n    f = M(1).method\n"
    )})
    file = _file(project, "d.py")
    evaluator = project.layer.evaluator
    values = {a.target.text: evaluator.values(file, a.value, a.ctx.scope) for a in file.assignments
              if a.ctx.scope in ("use", "M.run")}
    for name in ("a", "b", "c", "s"):
        assert [type(v) for v in values[name]] == [KernelRef], name
    assert values["d"].constants() == [64]
    assert values["t"].constants() == [64]
    assert not values["e"].kernels()
    assert [type(v).__name__ for v in values["f"]] == ["FunctionRef"]
    # the getter runs where the attribute is read: a call site of the getter
    sites = project.layer.bindings.call_sites("d.M.kernel")
    assert sorted(call.ctx.scope for _, call in sites) == ["M.run", "use"]


def test_an_attribute_read_off_a_local_runs_a_getter_only_where_the_local_may_hold_its_class(tmp_path):
    # Python looks an instance's attribute up in its own class's MRO: a local that only a call of another class
    # binds (a SimpleNamespace, a builtin, another project class) runs no getter or descriptor of this one; a
    # local bound to this class (or to what a parameter holds) does, and passes itself as the instance
    project = project_of(tmp_path, {"d.py": (
        "import types\nimport warp as wp\n"
        "class Getter:\n    def __get__(self, obj, owner=None):\n        c = obj.c\n        @wp.kernel\n"
        "        def g(a: wp.array(dtype=float)):\n            a[0] = c\n        return g\n"
        "class M:\n    via_get = Getter()\n"
        "    def __init__(self, c):\n        self.c = c\n"
        "    @property\n    def kernel(self):\n        @wp.kernel\n"
        "        def k(a: wp.array(dtype=float)):\n            a[0] = 1.0\n        return k\n"
        "class Other:\n    pass\n"
        "def use(param):\n"
        "    ns = types.SimpleNamespace(kernel=1, via_get=2)\n    x = ns.kernel\n    y = ns.via_get\n"
        "    o = Other()\n    z = o.via_get\n    d = dict(kernel=1)\n    w = d.kernel\n"
        "    m = M(3.0)\n    u = m.via_get\n    v = m.kernel\n    p = param.via_get\n"
    )})
    bindings = project.layer.bindings
    getter_lines = sorted(call.span.line for _, call in bindings.call_sites("d.M.kernel"))
    descriptor = sorted((call.span.line, sorted(call.kwargs)) for _, call in bindings.call_sites("d.Getter.__get__"))
    lines = {text: i for i, text in enumerate((tmp_path / "d.py").read_text().splitlines(), 1)}
    assert getter_lines == [lines["    v = m.kernel"]]
    assert descriptor == [(lines["    u = m.via_get"], ["obj"]), (lines["    p = param.via_get"], ["obj"])]
    # the local passed as the instance is followed to what it holds
    file = _file(project, "d.py")
    u = next(a for a in file.assignments if a.target.text == "u")
    assert [type(v) for v in project.layer.evaluator.values(file, u.value, "use")] == [KernelRef]


def test_a_kernel_is_what_wp_kernel_makes_of_a_function_wherever_it_is_defined(tmp_path):
    # wp.kernel(...)(f) applied later, wp.kernel(other.f) of another file's function (Warp puts it in that file's
    # module: f.__module__) with that function's body facts and genericity, and a project decorator factory with a
    # `fn=None` switch whose options arrive through **options
    project = project_of(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/bodies.py": (
            "import warp as wp\nfrom typing import Any\n"
            "def double(a: wp.array(dtype=Any)):\n    i = wp.tid()\n    a[i] = wp.sin(a[i])\n"
        ),
        "pkg/util.py": (
            "import warp as wp\n"
            "def project_kernel(fn=None, **options):\n    def wrap(f):\n        return wp.kernel(f, **options)\n"
            "    return wrap(fn) if fn is not None else wrap\n"
        ),
        "main.py": (
            "import warp as wp\nfrom pkg import bodies, util\n"
            "def plain(a: wp.array(dtype=float)):\n    a[0] = 1.0\n"
            "@util.project_kernel(module='sim')\ndef decorated(a: wp.array(dtype=float)):\n    a[0] = 2.0\n"
            "def main():\n"
            "    k = wp.kernel(enable_backward=False)(plain)\n"
            "    g = wp.kernel(bodies.double)\n"
            "    wp.launch(k, dim=1, inputs=[wp.zeros(1)])\n"
            "    wp.launch(g, dim=1, inputs=[wp.zeros(1)])\n"
            "    wp.launch(decorated, dim=1, inputs=[wp.zeros(1)])\n"
        ),
    })
    main = _file(project, "main.py")
    launched = []
    for call in (c for c in main.calls if c.callee == "warp.launch"):
        ((kf, kernel),) = project.layer.find_kernels(main, "main", call.bound("kernel"))
        launched.append((kernel.name, project.kernel_module(kf, kernel), kernel.generic,
                         "warp.sin" in kernel.warp_calls))
    assert launched == [("plain", "main", False, False), ("double", "pkg.bodies", True, True),
                        ("decorated", "sim", False, False)]
    # the helper's own wp.kernel(f, **options) makes no kernel of pkg.util: what it makes is not known there
    util = _file(project, "util.py")
    assert [project.kernel_module(util, k) for k in util.kernels] == [None]


def test_a_decorator_calls_keywords_are_evaluated_where_the_def_is(tmp_path):
    # Python evaluates `@project_kernel(module=PARAMS.module)` in the scope around the def: the keyword is a value of
    # that scope (a frozen dataclass's default, a module constant), as `@wp.kernel(module=...)`'s is. An option
    # written inside the factory reads the factory's scope: only a literal there is known at the kernel.
    project = project_of(tmp_path, {
        "util.py": (
            "import warp as wp\n"
            "def project_kernel(fn=None, **options):\n    def wrap(f):\n        return wp.kernel(f, **options)\n"
            "    return wrap(fn) if fn is not None else wrap\n"
            "def tuned(**options):\n    name = options.pop('name')\n"
            "    def wrap(f):\n        return wp.kernel(f, module=name, **options)\n    return wrap\n"
        ),
        "main.py": (
            "import dataclasses\nimport warp as wp\nimport util\n"
            "@dataclasses.dataclass(frozen=True)\nclass Params:\n    module: str = 'unique'\n"
            "PARAMS = Params()\nNAME = 'sim'\n"
            "@util.project_kernel(module=PARAMS.module)\ndef from_field(a: wp.array(dtype=float)):\n    a[0] = 1.0\n"
            "@util.project_kernel(module=NAME)\ndef from_constant(a: wp.array(dtype=float)):\n    a[0] = 2.0\n"
            "@util.tuned(name='fast')\ndef from_factory(a: wp.array(dtype=float)):\n    a[0] = 3.0\n"
        ),
    })
    main = _file(project, "main.py")
    assert {k.name: project.kernel_module(main, k) for k in main.kernels} == {
        "from_field": "unique", "from_constant": "sim", "from_factory": None}


def test_a_decorator_that_returns_a_kernel_held_elsewhere_makes_one(tmp_path):
    # The decorator's own call graph holds no kernel maker and stores nothing outside its locals, yet what it
    # returns is a kernel: one a module-level name of another file holds (made there by a helper wrapping
    # wp.kernel). A proof that skips evaluating decorators must follow reads of state made elsewhere too, not
    # only the calls the decorator makes (docs/performance.md, "The decorators of Warp's tree").
    project = project_of(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/makers.py": (
            "import warp as wp\n"
            "def body(a: wp.array(dtype=float)):\n    a[0] = 1.0\n"
            "def build(f):\n    return wp.kernel(f)\n"
            "MADE = build(body)\n"
        ),
        "pkg/deco.py": "from pkg import makers\ndef reuse(fn):\n    return makers.MADE\n",
        "main.py": (
            "import warp as wp\nfrom pkg.deco import reuse\n"
            "@reuse\ndef step(a: wp.array(dtype=float)):\n    a[0] = 2.0\n"
            "def main():\n    wp.launch(step, dim=1, inputs=[wp.zeros(1)])\n"
        ),
    })
    main = _file(project, "main.py")
    assert [(k.name, k.form) for k in main.kernels if k.derived] == [("step", "decorator")]
    (launch,) = (c for c in main.calls if c.callee == "warp.launch")
    assert [k.name for _, k in project.layer.find_kernels(main, "main", launch.bound("kernel"))] == ["step"]


# A kernel `wp.kernel(f)` makes of a function defined elsewhere, held where no decorator can read it: a test's
# local read only as `k.adj`, a module-level table whose items go to a helper as a keyword the helper passes on
# only through `**kwargs` (which the evaluator follows no further), as Warp's own tests hold theirs.
_HELD_APART = {
    "pkg/__init__.py": "",
    "pkg/bodies.py": "import warp as wp\ndef body(a: wp.array(dtype=float)):\n    a[0] = 1.0\n",
    "pkg/register.py": (
        "def create(func, **kwargs):\n    def test(self):\n        func(self, **kwargs)\n    return test\n"
        "def add_test(cls, name, func, **kwargs):\n    setattr(cls, name, create(func, **kwargs))\n"
    ),
    "pkg/deco.py": "def keep(fn):\n    return fn\n",
    "test_tables.py": (
        "import warp as wp\nfrom pkg.bodies import body\nfrom pkg.register import add_test\n"
        "KERNELS = {}\nfor i in range(2):\n    KERNELS[i] = wp.kernel(body)\n"
        "def check(test, kernel):\n    wp.launch(kernel, dim=1, inputs=[wp.zeros(1)])\n"
        "class Tests:\n    def test_local(self):\n        k = wp.kernel(body)\n        print(k.adj, k.module)\n"
        "for i in range(2):\n    kernel = KERNELS[i]\n    add_test(Tests, 'test', check, kernel=kernel)\n"
    ),
    "main.py": (
        "import warp as wp\nfrom pkg.deco import keep\n"
        "@keep\ndef step(a: wp.array(dtype=float)):\n    a[0] = 2.0\n"
    ),
}


def _decorators_evaluated(tmp_path, monkeypatch, files):
    import warplint.semantic.kernels as kernels

    asked = []
    evaluate = kernels._kernel_options
    monkeypatch.setattr(kernels, "_kernel_options", lambda *a: asked.append(a[3].name) or evaluate(*a))
    project = project_of(tmp_path, files)
    return asked, [(f.path.rpartition("/")[2], k.name) for f in project.files for k in f.kernels if k.derived]


def test_no_decorator_is_evaluated_when_no_kernel_made_of_a_function_passed_in_can_be_returned(tmp_path, monkeypatch):
    # Applying a decorator can give such a kernel only through a return (or the decorator expression, or the
    # decorated name): when none can reach one, no decorator makes a kernel and none is evaluated
    # (docs/performance.md: on Warp's tree, ~20 CPU s of budget-cut evaluations of @cache.dynamic_func).
    asked, derived = _decorators_evaluated(tmp_path, monkeypatch, _HELD_APART)
    assert (asked, derived) == ([], [])


@pytest.mark.parametrize("change", [
    ("pkg/register.py", "def add_test(cls, name, func, **kwargs):\n    return kwargs\n"),  # the dict goes out
    ("pkg/register.py", "def add_test(cls, name, func, kernel=None):\n    return kernel\n"),  # the parameter
    ("test_tables.py", "LAST = lambda: kernel\n"),  # a lambda's body, evaluated wherever it is called
    ("test_tables.py", "class Keep:\n    held = kernel\n"),  # a class attribute
])
def test_decorators_are_evaluated_when_such_a_kernel_can_be_returned(tmp_path, monkeypatch, change):
    path, text = change
    files = dict(_HELD_APART)
    files[path] = files[path] + text if path == "test_tables.py" else files[path].replace(
        "def add_test(cls, name, func, **kwargs):\n    setattr(cls, name, create(func, **kwargs))\n", text)
    asked, derived = _decorators_evaluated(tmp_path, monkeypatch, files)
    assert asked == ["step"] and derived == []


@pytest.mark.parametrize("create, evaluated", [
    # `create(func, **kwargs)`: what the dict holds can bind `device`, which goes out
    ("def create(func, device=None, **kwargs):\n    return device\n", True),
    # `create(func, None, **kwargs)`: `device` is given by position, and Python refuses it twice: nothing the
    # dict holds reaches it (Warp's create_test_func(func, device, check_output, ..., **kwargs))
    ("def create(func, device, **kwargs):\n    return device\n", False),
])
def test_what_a_dict_splat_holds_binds_only_parameters_the_call_leaves_open(tmp_path, monkeypatch, create,
                                                                           evaluated):
    files = dict(_HELD_APART)
    call = "create(func, **kwargs)" if evaluated else "create(func, None, **kwargs)"
    files["pkg/register.py"] = create + f"def add_test(cls, name, func, **kwargs):\n    setattr(cls, name, {call})\n"
    asked, _ = _decorators_evaluated(tmp_path, monkeypatch, files)
    assert asked == (["step"] if evaluated else [])


def test_a_decorator_returning_a_kernel_passed_as_a_keyword_makes_one(tmp_path, monkeypatch):
    # The look-alike that must still be evaluated: the helper hands the keyword back, and a decorator returns it.
    files = dict(_HELD_APART)
    files["pkg/register.py"] = "def add_test(cls, name, func, kernel=None):\n    return kernel\n"
    files["pkg/deco.py"] = (
        "from pkg.register import add_test\nimport test_tables\n"
        "def keep(fn):\n    return add_test(None, 'x', fn, kernel=test_tables.kernel)\n"
    )
    asked, derived = _decorators_evaluated(tmp_path, monkeypatch, files)
    assert asked == ["step"] and derived == [("main.py", "step")]


def _decorators_evaluated_read_back(tmp_path, monkeypatch, files):
    """``_decorators_evaluated`` over the models as a worker or the cache hands them back (pickled): each
    record's stored fields stay pickled, and where a kernel can flow is searched in their bytes by word."""
    import pickle

    import warplint.semantic.kernels as kernels

    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    session = Session(Config(root=str(tmp_path), select=("ALL",)))
    session.configure_cache(False)
    session.lint_paths([str(tmp_path)])
    session.models = {path: pickle.loads(pickle.dumps(model)) for path, model in session.models.items()}
    assert any("_packed" in call.__dict__ for model in session.models.values() for call in model.calls)
    from warplint.semantic.file_facts import FileFacts

    session._project, session._file_facts, session._kept_facts = None, FileFacts(), None  # a fresh index
    asked = []
    evaluate = kernels._kernel_options
    monkeypatch.setattr(kernels, "_kernel_options", lambda *a: asked.append(a[3].name) or evaluate(*a))
    project = session.project()
    return asked, [(f.path.rpartition("/")[2], k.name) for f in project.files for k in f.kernels if k.derived]


@pytest.mark.parametrize("change, evaluated", [
    (None, False),
    (("pkg/register.py", "def add_test(cls, name, func, **kwargs):\n    return kwargs\n"), True),
    (("test_tables.py", "LAST = lambda: kernel\n"), True),
    # read from another file in an assignment's value or a call's argument (records kept pickled there)
    (("pkg/later.py", "import test_tables\nHELD = [test_tables.KERNELS]\ndef get():\n    return HELD\n"), True),
    (("pkg/later.py", "import test_tables\nfrom pkg.deco import keep\nkeep(test_tables.KERNELS)\n"), True),
    (("pkg/later.py", "import test_tables\nHELD = [test_tables.OTHER]\ndef get():\n    return HELD\n"), False),
    (("pkg/later.py", "import test_tables\nfrom pkg.deco import keep\nkeep(test_tables.check)\n"), False),
])
def test_where_a_passed_in_kernel_flows_is_the_same_in_models_read_back(tmp_path, change, evaluated):
    # The search of read-back models by word (their stored bytes, one joined text per file) finds every flow
    # the walk of the models made in this process finds: the same decorators are evaluated.
    files = dict(_HELD_APART)
    if change is not None:
        path, text = change
        if path not in files:
            files[path] = text
        elif path == "test_tables.py":
            files[path] += text
        else:
            files[path] = files[path].replace(
                "def add_test(cls, name, func, **kwargs):\n    setattr(cls, name, create(func, **kwargs))\n", text)
    with pytest.MonkeyPatch.context() as patch:
        fresh = _decorators_evaluated(tmp_path / "fresh", patch, files)
    with pytest.MonkeyPatch.context() as patch:
        read_back = _decorators_evaluated_read_back(tmp_path / "read_back", patch, files)
    assert read_back == fresh
    assert fresh[0] == (["step"] if evaluated else [])


def test_a_kernel_made_again_of_the_same_function_is_the_same_content(tmp_path):
    project = project_of(tmp_path, {"m.py": (
        "import warp as wp\n"
        "def body(a: wp.array(dtype=float)):\n    a[0] = 1.0\n"
        "first = wp.kernel(enable_backward=True)(body)\n"
        "def run(flag):\n"
        "    again = wp.kernel(enable_backward=True)(body)\n"
        "    other = wp.kernel(enable_backward=False)(body)\n"
        "    def inner(a: wp.array(dtype=float)):\n        a[0] = 2.0\n"
        "    x = wp.kernel(inner)\n    y = wp.kernel(inner)\n"
    )})
    file = _file(project, "m.py")
    remade = {k.ctx.order: project.remade_kernel(file, k) for k in file.kernels}
    first, again, other, x, y = sorted(remade)
    assert remade[again] is file.kernels[0]
    assert remade[first] is None and remade[other] is None
    assert remade[x] is None and remade[y] is None  # a closure: the same def can capture other values


@pytest.mark.parametrize("annotation, generic", [
    ("wp.array(dtype=float)", False), ("wp.array(ndim=1)", True), ("wp.array2d()", True), ("wp.array[Any]", True),
    ("wp.indexedarray()", False), ("wp.Float", True), ("wp.array(dtype=wp.vec3)", False),
    ("tuple[int, int]", True), ("wp.array", False), ("wp.types.matrix(shape=(3, 3), dtype=wp.Float)", True),
    ("Any", True), ("wp.array(dtype=AnyThing)", False), ("wp.types.matrix((Any, Any), float)", True),
    ("wp.types.vector(length=Any, dtype=float)", True), ("wp.types.matrix((3, 3), float)", False),
])
def test_a_parameter_is_generic_as_warp_decides(tmp_path, annotation, generic):
    # warp.types.type_is_generic, not the text `Any`
    project = project_of(tmp_path, {"m.py": (
        "import warp as wp\nfrom typing import Any\nAnyThing = wp.float32\n"
        f"@wp.kernel\ndef k(a: {annotation}):\n    pass\n"
    )})
    (kernel,) = _file(project, "m.py").kernels
    assert kernel.generic is generic


def test_a_table_indexed_by_a_run_time_key_is_any_of_its_items(tmp_path):
    project = project_of(tmp_path, {"t.py": (
        "import os\nimport warp as wp\nTABLE = {'default': 64, 'fast': 128}\nSIZES = (32, 64)\n"
        "def use(n):\n"
        "    mode = os.environ.get('MODE', 'default')\n"
        "    a = TABLE[mode]\n    b = TABLE.get(mode, 8)\n    c = SIZES[n.shape[0]]\n    d = TABLE['fast']\n"
    )})
    file = _file(project, "t.py")
    values = _values_of_locals(project, file)
    assert sorted(values["a"].constants()) == [64, 128] and values["a"].known
    assert sorted(values["b"].constants()) == [8, 64, 128]
    assert sorted(values["c"].constants()) == [32, 64]
    assert values["d"].constants() == [128]


def test_a_dtype_table_filled_later_holds_what_was_stored(tmp_path):
    project = project_of(tmp_path, {"t.py": (
        "import warp as wp\nfrom typing import Any\nTABLE = {}\n"
        "@wp.kernel\ndef k(a: wp.array(dtype=Any)):\n    pass\n"
        "def run():\n"
        "    TABLE['dtype'] = wp.float64\n"
        "    wp.launch(k, dim=1, inputs=[wp.zeros(1, dtype=TABLE['dtype'])])\n"
    )})
    (launch,) = project.all_launches()
    (types,) = project.launch_argument_types(launch)
    assert types.known and types.names == frozenset({"array[warp.float64]"})


def test_memoisation_is_recognised_by_behaviour(tmp_path):
    project = project_of(tmp_path, {"m.py": (
        "import functools\nimport warp as wp\n_INSTANCE = None\n_CACHE = {}\n"
        "def memo(f):\n    seen = {}\n    def wrapper(key):\n        if key not in seen:\n"
        "            seen[key] = f(key)\n        return seen[key]\n    return wrapper\n"
        "@functools.lru_cache(maxsize=None)\ndef cached(n):\n    return n\n"
        "@memo\ndef decorated(n):\n    return n\n"
        "def singleton():\n    global _INSTANCE\n    if _INSTANCE is None:\n        _INSTANCE = make()\n"
        "    return _INSTANCE\n"
        "def by_key(dtype, n):\n    key = (dtype, n)\n    if key not in _CACHE:\n        _CACHE[key] = make(dtype)\n"
        "    return _CACHE[key]\n"
        "def make(x=None):\n    if x is None:\n        x = 3\n    return x\n"
        "def fresh(dtype):\n    key = object()\n    _CACHE[key] = make(dtype)\n    return _CACHE[key]\n"
        "class Holder:\n    def __init__(self):\n        self._k = None\n        self._cache = {}\n"
        "    def guarded(self):\n        if self._k is None:\n            self._k = make()\n        return self._k\n"
        "    def counted(self, dtype):\n        key = len(self._cache)\n        self._cache[key] = make(dtype)\n"
        "        return self._cache[key]\n"
    )})
    file = _file(project, "m.py")
    memoized = {name for name, fn in file.functions.items() if project.is_memoized(fn)}
    assert memoized == {"cached", "decorated", "memo.wrapper", "singleton", "by_key", "Holder.guarded"}


def test_a_long_ordinary_chain_resolves(tmp_path):
    # a tuple returned, unpacked, passed to a constructor, unpacked again, six times over: the bound is a budget per
    # question, not a nesting depth of 14 (which cut this at its second round)
    lines = ["import warp as wp", "@wp.kernel", "def k(a: wp.array(dtype=float)):", "    a[0] = 1.0",
             "def sizes():", "    return 64, 128", "class Cfg:", "    def __init__(self, t):", "        self.t = t"]
    previous = "sizes"
    for i in range(6):
        lines += [f"def step{i}():", f"    a, b = {previous}()", "    c = Cfg((a, b))", "    x, y = c.t",
                  "    return x, y"]
        previous = f"step{i}"
    lines += ["def main():", f"    p, q = {previous}()", "    wp.launch(k, dim=1, inputs=[wp.zeros(1)], block_dim=q)"]
    project = project_of(tmp_path, {"c.py": "\n".join(lines) + "\n"})
    (launch,) = project.all_launches()
    assert launch.block_dims.single_constant() == (True, 128)


def test_the_name_of_an_imported_module_is_its_module_name(tmp_path):
    project = project_of(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/kernels.py": "import warp as wp\n",
        "main.py": "import warp as wp\nfrom pkg import kernels\n"
                   "def f():\n    wp.get_module(kernels.__name__).options.update({'max_unroll': 4})\n",
    })
    (change,) = project.option_changes(_file(project, "main.py"))
    assert change.module == "pkg.kernels"


def test_asv_parameters_are_one_value_per_process(tmp_path):
    """asv passes one combination of a class's `params` per process: a parameter of its benchmark methods and
    `setup` is a PerProcess value of its axis (a list of lists is one list per parameter); launches made only
    from two benchmark methods run in two processes."""
    from warplint.semantic.builds import several_block_dims_in_one_process
    from warplint.semantic.values import PerProcess

    project = project_of(tmp_path, {
        "benchmarks/__init__.py": "",
        "benchmarks/bench.py": (
            "import warp as wp\n"
            "@wp.kernel\ndef k(a: wp.array(dtype=float)):\n    a[0] = 1.0\n"
            "@wp.kernel\ndef j(a: wp.array(dtype=float)):\n    a[0] = 2.0\n"
            "class Sizes:\n"
            "    params = ([32, 64], [1024, 4096])\n"
            "    param_names = ['block_dim', 'n']\n"
            "    def setup(self, block_dim, n):\n        self.a = wp.zeros(n)\n"
            "    def time_k(self, block_dim, n):\n"
            "        wp.launch(k, dim=n, inputs=[self.a], block_dim=block_dim)\n"
            "class Default:\n"
            "    def setup(self):\n        self.a = wp.zeros(8)\n"
            "    def time_j(self):\n        wp.launch(j, dim=8, inputs=[self.a])\n"
            "def helper(a, block_dim):\n    wp.launch(j, dim=8, inputs=[a], block_dim=block_dim)\n"
            "class Cached:\n"
            "    params = [64, 128]\n"
            "    def setup_cache(self):\n        return 8\n"
            "    def time_c(self, cache, block_dim):\n"
            "        wp.launch(j, dim=cache, inputs=[wp.zeros(8)], block_dim=block_dim)\n"
        ),
    })
    file = _file(project, "bench.py")
    evaluator = project.layer.evaluator
    for name, choices in (("block_dim", [32, 64]), ("n", [1024, 4096])):
        (value,) = evaluator.parameter(file, file.functions["Sizes.time_k"], name, None)
        assert isinstance(value, PerProcess) and sorted(value.choices.constants()) == choices
        assert value == next(iter(evaluator.parameter(file, file.functions["Sizes.setup"], name, None)))
    # with a setup_cache, asv passes its result first: the parameters follow it
    (value,) = evaluator.parameter(file, file.functions["Cached.time_c"], "block_dim", None)
    assert isinstance(value, PerProcess) and sorted(value.choices.constants()) == [64, 128]
    assert not any(isinstance(v, PerProcess)
                   for v in evaluator.parameter(file, file.functions["Cached.time_c"], "cache", None))
    # not an asv method: a caller outside the project chooses it, as before
    assert not any(isinstance(v, PerProcess)
                   for v in evaluator.parameter(file, file.functions["helper"], "block_dim", None))

    facts = project.layer
    launches = {launch.call.ctx.scope: launch for launch in facts.all_launches()}
    assert not several_block_dims_in_one_process(facts, [launches["Sizes.time_k"]])  # 32 or 64, one per process
    # k at 32 or 64 and j at 256 are in different benchmark methods: different processes
    assert not several_block_dims_in_one_process(facts, [launches["Sizes.time_k"], launches["Default.time_j"]])


def test_several_values_in_one_process():
    from warplint.semantic.values import PerProcess, ValueSet, several_in_one_process

    def per_process(source, *sizes):
        return ValueSet.of(PerProcess(source, ValueSet(frozenset(Const(s) for s in sizes))))

    fixed = ValueSet.of(Const(256))
    assert not several_in_one_process([per_process("A.params[0]", 64, 128)] * 2)
    assert several_in_one_process([per_process("A.params[0]", 64, 128), fixed])  # 64 and 256 in one process
    assert not several_in_one_process([per_process("A.params[0]", 256), fixed])
    assert several_in_one_process([per_process("A.params[0]", 64, 128), per_process("A.params[1]", 64, 128)])
    assert several_in_one_process([ValueSet.of(Const(64), Const(128))])  # a loop takes both
    assert several_in_one_process([fixed, ValueSet.of(Varies())])  # a run-time size is one more variant
    assert not several_in_one_process([ValueSet.of(Varies())] * 2)
    assert not several_in_one_process([fixed, ValueSet.of(Unknown())])  # unknown proves nothing


def test_a_loop_over_functions_calls_each_in_turn(tmp_path):
    # `for step in (setup, run): step()` is a call of setup, then of run (each a call site of its function); a
    # name bound to functools.partial(f, 4) calls f with 4 first
    project = project_of(tmp_path, {
        "m.py": (
            "import functools\nimport warp as wp\n"
            "def setup(n=1):\n    pass\n"
            "def run(n=1):\n    pass\n"
            "later = functools.partial(run, 4)\n"
            "def main():\n"
            "    for step in (setup, functools.partial(run, 2)):\n        step()\n"
            "    later()\n"
            "def other(f):\n    for g in (f, print):\n        g()\n"
        ),
    })
    file = _file(project, "m.py")
    made = [(c.callee, c.ctx.item, [a.const for a in c.args]) for c in project.calls_in(file, "main")]
    assert made == [("functools.partial", 0, [None, 2]), ("m.setup", 1, []), ("m.run", 2, [2]), ("m.run", 0, [4])]
    first, second = (c for c in project.calls_in(file, "main") if c.ctx.item)
    assert first.ctx.runs_before(second.ctx.order, second.ctx.item)
    assert not second.ctx.runs_before(first.ctx.order, first.ctx.item)
    assert next(c for _, c in project.call_sites("m.run") if c.ctx.scope == "main") is second
    # a loop over what a caller passes, or over functions outside the project, calls nothing the layer knows
    assert [c.callee for c in project.calls_in(file, "other")] == ["g"]


def test_a_module_level_partial_called_from_another_module_calls_its_function(tmp_path):
    # `steps.later()` in another file calls what `later = functools.partial(run, 4)` binds at the module level of
    # `steps`, with the partial's argument (an attribute of a module names its module-level name)
    project = project_of(tmp_path, {
        "steps.py": ("import functools\nimport warp as wp\n"
                     "def run(n=1):\n    pass\n"
                     "later = functools.partial(run, 4)\n"
                     "plain = run\n"),
        "app.py": ("import warp as wp\nimport steps\n"
                   "def main():\n    steps.later()\n    steps.other()\n"),
    })
    file = _file(project, "app.py")
    made = [(c.callee, [a.const for a in c.args]) for c in project.calls_in(file, "main")]
    assert made == [("steps.run", [4]), ("steps.other", [])]
    assert [c.ctx.scope for f, c in project.call_sites("steps.run") if f is file] == ["main"]


def test_work_submitted_to_an_executor_is_a_call_of_the_function_submitted(tmp_path):
    # `pool.submit(fn, *args, **kwargs)` on a `concurrent.futures` executor (`with ThreadPoolExecutor() as pool`, or
    # a name bound to one) calls `fn` with those arguments where the work is submitted; a `submit` of an object of
    # another class (a project queue) calls nothing the layer knows
    project = project_of(tmp_path, {
        "m.py": (
            "import concurrent.futures\nimport warp as wp\n"
            "def step(n, scale=1):\n    pass\n"
            "class Queue:\n    def submit(self, fn):\n        pass\n"
            "def main():\n"
            "    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:\n"
            "        pool.submit(step, 2, scale=3).result()\n"
            "    executor = concurrent.futures.ProcessPoolExecutor()\n"
            "    executor.submit(step, 4)\n"
            "    queue = Queue()\n"
            "    queue.submit(step)\n"
        ),
    })
    file = _file(project, "m.py")
    made = [(c.callee, [a.const for a in c.args], {k: v.const for k, v in c.kwargs.items()})
            for c in project.calls_in(file, "main") if c.callee in ("m.step", "queue.submit")]
    assert made == [("m.step", [2], {"scale": 3}), ("m.step", [4], {}), ("queue.submit", [None], {})]
    assert len([c for _, c in project.call_sites("m.step") if c.ctx.scope == "main"]) == 2


def test_a_loop_over_a_list_filled_at_import_calls_each_function_appended_in_turn(tmp_path):
    # `for step in STEPS: step()` over a module-level list: its literal items, then what the module appends while it
    # is imported, in that order: `STEPS.append(f)` at module level, and each function a registering function (one
    # whose body appends its first parameter unconditionally) is applied to as a decorator or called with. An
    # append behind a condition, of another parameter, or made by a function run later is no registration.
    project = project_of(tmp_path, {
        "m.py": (
            "import warp as wp\n"
            "def a():\n    pass\n"
            "def b():\n    pass\n"
            "STEPS = [a]\n"
            "def step(f):\n    STEPS.append(f)\n    return f\n"
            "def maybe(f, on=True):\n    if on:\n        STEPS.append(f)\n    return f\n"
            "def second(x, f):\n    STEPS.append(f)\n"
            "@step\ndef c():\n    pass\n"
            "STEPS.append(b)\n"
            "@maybe\ndef d():\n    pass\n"
            "step(print)\n"
            "def later():\n    step(d)\n"
            "@step\ndef e():\n    pass\n"
            "def main():\n    for run in STEPS:\n        run()\n"
        ),
    })
    file = _file(project, "m.py")
    made = [(c.callee, c.ctx.item) for c in project.calls_in(file, "main")]
    assert made == [("m.a", 1), ("m.c", 2), ("m.b", 3), ("m.e", 5)]


def test_sources_of_an_attribute_an_instance_was_made_with(tmp_path):
    # `h.dtype` of `h = Holder(wp.float64)` (stored by __init__) and of a dataclass made with `dtype=`: what that
    # construction passed, not the attribute read
    project = project_of(tmp_path, {
        "m.py": (
            "import dataclasses\nimport warp as wp\n"
            "class Holder:\n    def __init__(self, dtype):\n        self.dtype = dtype\n"
            "@dataclasses.dataclass\nclass Settings:\n    dtype: object = wp.float32\n"
            "class Computed:\n    @property\n    def dtype(self):\n        return wp.float16\n"
            "def run():\n"
            "    h = Holder(wp.float64)\n"
            "    s = Settings(dtype=wp.int32)\n"
            "    a = h.dtype\n    b = s.dtype\n    c = Settings().dtype\n    d = Computed().dtype\n"
        ),
    })
    file = _file(project, "m.py")

    def sources(name):
        (bound,) = project.layer.bindings.name_assignments(file, "run", name)
        return [(s.value.text, s.attrs) for s in project.sources(file, bound.value, "run")]

    assert sources("a") == [("wp.float64", ())]
    assert sources("b") == [("wp.int32", ())]
    assert sources("c") == [("wp.float32", ())]
    assert sources("d") == [("Computed(...).dtype", ())]  # a property computes it: the read is its own source


def test_sources_of_star_args_are_the_extra_arguments_of_each_call(tmp_path):
    # `*args` holds the positional arguments no named parameter takes: a tuple of them at each call
    project = project_of(tmp_path, {
        "m.py": (
            "import warp as wp\n"
            "def stage(n, *args):\n    extra = args\n"
            "def main(more):\n    stage(4, wp.float64, 2)\n    stage(8)\n    stage(1, *more)\n"
        ),
    })
    file = _file(project, "m.py")
    (bound,) = project.layer.bindings.name_assignments(file, "stage", "extra")
    found = [([i.text for i in s.value.items], s.complete) for s in project.sources(file, bound.value, "stage")]
    assert found == [(["wp.float64", "2"], True), ([], True), ([], False)]


def test_sources_of_a_dict_display_read_by_its_key(tmp_path):
    # `cfg["value"]` of a dict display is what the last entry in written order that supplies "value" holds: a pair
    # written with that key, or the item "value" of each dict a `**base` unpacks (where a `**base` lacks it, the
    # entries before it decide). Where that cannot be told the read is its own source: the dict is written into
    # after it was made (its own item, `update`, `|=`, a dict it unpacks), no entry supplies the key, a key is computed,
    # or a `**` unpacks what is not a dict display
    project = project_of(tmp_path, {"m.py": (
        "import tempfile\nimport warp as wp\n"
        "def merged():\n"
        "    base = {'value': tempfile.mkdtemp()}\n    cfg = {**base, 'verbose': False}\n    got = cfg['value']\n"
        "def nested():\n"
        "    inner = dict(value=tempfile.mkdtemp(), verbose=True)\n    base = {'verbose': False, **inner}\n"
        "    cfg = {'value': '/early', **base}\n    got = cfg['value']\n"
        "def overridden_by_a_later_pair():\n"
        "    base = {'value': tempfile.mkdtemp()}\n    cfg = {**base, 'value': '/fixed'}\n    got = cfg['value']\n"
        "def overriding_an_earlier_pair():\n"
        "    base = {'value': tempfile.mkdtemp()}\n    cfg = {'value': '/fixed', **base}\n    got = cfg['value']\n"
        "def lacking_in_the_unpacked_dict():\n"
        "    base = {'verbose': True}\n    cfg = {'value': '/fixed', **base}\n    got = cfg['value']\n"
        "def item_written_after():\n"
        "    base = {'value': tempfile.mkdtemp()}\n    cfg = {**base, 'verbose': False}\n    got = cfg['value']\n"
        "    cfg['value'] = '/elsewhere'\n"
        "def updated_after():\n"
        "    base = {'value': tempfile.mkdtemp()}\n    cfg = {**base, 'verbose': False}\n    got = cfg['value']\n"
        "    cfg.update(value='/elsewhere')\n"
        "def updated_in_place():\n"
        "    cfg = {'value': tempfile.mkdtemp()}\n    cfg |= {'value': '/elsewhere'}\n    got = cfg['value']\n"
        "def unpacked_dict_written_after():\n"
        "    base = {'value': tempfile.mkdtemp()}\n    cfg = {**base, 'verbose': False}\n"
        "    base['value'] = '/elsewhere'\n    got = cfg['value']\n"
        "def absent():\n"
        "    base = {'value': tempfile.mkdtemp()}\n    cfg = {**base, 'verbose': False}\n    got = cfg['other']\n"
        "def computed_key(name):\n"
        "    base = {'value': tempfile.mkdtemp()}\n    cfg = {**base, name: '/elsewhere'}\n    got = cfg['value']\n"
        "def unpacking_a_parameter(options):\n"
        "    cfg = {'value': tempfile.mkdtemp(), **options}\n    got = cfg['value']\n"
    )})
    file = _file(project, "m.py")

    def sources(scope):
        (bound,) = project.layer.bindings.name_assignments(file, scope, "got")
        return [s.value.text for s in project.sources(file, bound.value, scope)]

    assert sources("merged") == ["tempfile.mkdtemp(...)"]
    assert sources("nested") == ["tempfile.mkdtemp(...)"]
    assert sources("overridden_by_a_later_pair") == ["'/fixed'"]
    assert sources("overriding_an_earlier_pair") == ["tempfile.mkdtemp(...)"]
    assert sources("lacking_in_the_unpacked_dict") == ["'/fixed'"]
    assert "tempfile.mkdtemp(...)" not in sources("item_written_after")
    for scope in ("updated_after", "updated_in_place", "unpacked_dict_written_after", "absent", "computed_key",
                  "unpacking_a_parameter"):
        assert sources(scope) == ["cfg[...]"], scope


def test_builtin_of_partly_known_values_keeps_the_known_results(tmp_path):
    # int() of "a run-time string or the default" is the default's number or a run-time number, not all unknown;
    # the environment is one string for the whole process (unknown, not varying), read with [] or .get()
    project = project_of(tmp_path, {
        "m.py": (
            "import os\nfrom os import environ\nimport warp as wp\n"
            "def f():\n"
            "    a = int(os.environ.get('N', '16'))\n    b = environ['N']\n    c = max(int(environ['N']), 4)\n"
        ),
    })
    file = _file(project, "m.py")

    def values(name):
        (bound,) = project.layer.bindings.name_assignments(file, "f", name)
        return project.values(file, bound.value, "f")

    assert values("a").constants() == [16] and not values("a").varies
    assert values("a").own_constant() == (True, 16)
    assert all(isinstance(v, Unknown) for v in values("b"))
    assert values("c").constants() == [] and values("c").own_constant() == (False, None)


def test_a_random_choice_is_any_item_of_its_sequence(tmp_path):
    # `random.choice(seq)` is one item of `seq` per call, chosen at run time: each item is a possible value;
    # `random.sample` gives a list only the run knows; another module's `choice` is not the standard library's
    project = project_of(tmp_path, {"r.py": (
        "import random\nimport warp as wp\nimport picker\nSIZES = (64, 128)\n"
        "def use(seq):\n"
        "    a = random.choice(SIZES)\n    b = random.choice([256])\n    c = random.choice(seq)\n"
        "    d = random.sample(SIZES, 1)\n    e = picker.choice(SIZES)\n"
    )})
    file = _file(project, "r.py")
    values = _values_of_locals(project, file)
    assert sorted(values["a"].constants()) == [64, 128] and values["a"].known
    assert values["b"].constants() == [256]
    assert not values["c"].known
    assert values["d"].varies
    assert not values["e"].constants()


def test_timeline_binds_a_helpers_kernel_to_each_call_and_orders_module_level_code(tmp_path):
    # A helper launching its `kernel` parameter loads, at each call, the module of the kernel that call passes;
    # a module-level kernel (in the __main__ block too) is made after the module-level launches before it.
    runner = "import warp as wp\ndef run(kernel):\n    wp.launch(kernel, dim=1, inputs=[wp.zeros(1)])\n"
    kernel = "@wp.kernel(module={module!r})\ndef {name}(a: wp.array(dtype=float)):\n    a[0] = 1.0\n"
    project = project_of(tmp_path, {
        "runner.py": runner,
        "main.py": (
            "import warp as wp\nfrom runner import run\n"
            + kernel.format(module="early", name="first")
            + "if __name__ == '__main__':\n    run(first)\n"
            + "".join("    " + line + "\n" for line in kernel.format(module="late", name="second").splitlines())
            + "    run(second)\n"
        ),
    })
    main = _file(project, "main.py")
    assert [module for _, module, _ in project.launch_timeline(main, "")] == ["early", "late"]
    first, second = main.kernels
    assert project.created_before_loads(main, first)
    assert not project.created_before_loads(main, second)


def test_a_call_read_off_a_call_result_is_told_without_reading_its_stored_receiver():
    """``Call.on_call_result``, read back from the cache, answers without unpickling the call's stored fields, and
    agrees with the receiver the extractor records, on every call of every fixture and of a file written to hold
    each shape."""
    import glob
    import pickle

    from warplint.engine import analyze

    shapes = (
        "import warp as wp\n"
        "class Solver:\n"
        "    def step(self): pass\n"
        "    def __call__(self): pass\n"
        "def make(c): return Solver()\n"
        "Solver().step()\n"
        "Solver()()\n"
        "make(1).step()\n"
        "make(1)()\n"
        "wp.get_module('m').options.update({'max_unroll': 2})\n"
        "wp.kernel(module='m')(make)\n"
        "s = Solver()\n"
        "s.step()\n"
    )
    sources = [("shapes.py", shapes)]
    fixtures = os.path.join(os.path.dirname(__file__), "fixtures")
    for path in sorted(glob.glob(os.path.join(fixtures, "**", "*.py"), recursive=True)):
        with open(path, encoding="utf-8") as fh:
            sources.append((path, fh.read()))
    on_results = 0
    for path, text in sources:
        for call in pickle.loads(pickle.dumps(analyze(path, text))).calls:  # as the cache reads it back
            answer = call.on_call_result
            assert "_packed" in vars(call), (path, call.callee)  # the stored fields are still pickled
            assert answer == (call.receiver is not None), (path, call.callee)
            on_results += answer
    assert on_results >= 5  # the shapes file alone has five


def test_a_comprehension_binds_its_target_to_each_item_and_calls_in_a_loop(tmp_path):
    """``[f(n) for n in it]`` runs ``f`` once per item of ``it`` with ``n`` bound to that item, as a ``for`` loop
    would; nested clauses too, and in a function the target is the comprehension's local."""
    project = project_of(tmp_path, {
        "m.py": (
            "import warp as wp\n"
            "def make(n, m=0):\n    return n\n"
            "SIZES = {n: make(n) for n in (64, 128)}\n"
            "def run():\n"
            "    pairs = [make(n, m) for n in (1, 2) for m in (3, 4) if n != m]\n"
            "    lazy = list(make(x) for x in (5,))\n"
            "    wp.launch(None, dim=1)\n"
        ),
    })
    file = _file(project, "m.py")
    evaluator = project.layer.evaluator
    made = [c for c in file.calls if c.callee == "m.make"]
    assert len(made) == 3 and all(c.ctx.in_loop for c in made)
    module_level, nested, generator = made
    assert sorted(evaluator.values(file, module_level.args[0], "").constants()) == [64, 128]
    assert sorted(evaluator.values(file, nested.args[0], "run").constants()) == [1, 2]
    assert sorted(evaluator.values(file, nested.args[1], "run").constants()) == [3, 4]
    assert evaluator.values(file, generator.args[0], "run").constants() == [5]
    launch = next(c for c in file.calls if c.callee == "warp.launch")
    assert not launch.ctx.in_loop  # the loop ends with the comprehension


def test_warp_types_are_known_values_identified_as_warp_binds_them(tmp_path):
    # `wp.vec3` is `wp.vec3f` (Warp's `vec3 = vec3f`), whatever the import spelling; a construction of the same
    # shape is the same type for a kernel's content (it hashes alike); different types differ; the dtype of an
    # array made at run time is not known, and two such reads are not one value
    source = (
        "import warp as wp\nimport warp as warp_lang\nimport warp.types\nfrom warp import float32, vec3 as v3\n"
        "from warp.types import vector, matrix\n"
        "a = wp.float32\nb = warp_lang.float32\nc = float32\nd = wp.float64\n"
        "e = wp.vec3\nf = wp.vec3f\ng = v3\nh = warp.types.vector(length=3, dtype=wp.float32)\n"
        "i = vector(3, float32)\nj = vector(length=2, dtype=wp.float32)\nk = wp.vec3d\n"
        "m = matrix(shape=(3, 3), dtype=wp.float64)\nn = wp.mat33d\no = wp.types.float32\n"
        "p = vector(length=3, dtype=float)\nq = wp.quat\nr = wp.types.quaternion(dtype=wp.float32)\n"
        "def dtype_of(x):\n    return x.dtype\n"
        "s = dtype_of(wp.zeros(3, dtype=wp.float32))\nt = wp.zeros(3, dtype=wp.float64).dtype\n"
        "TABLE = {wp.float32: 'f', wp.float64: 'd', 'float32': 's'}\nu = TABLE[float32]\nw = TABLE[t]\n"
    )
    project = project_of(tmp_path, {"m.py": source})
    file = _file(project, "m.py")

    def value(name):
        (bound,) = project.layer.bindings.name_assignments(file, "", name)
        return project.values(file, bound.value)

    def only(name):
        (found,) = value(name)
        return found

    assert isinstance(only("a"), WarpType) and only("a").name == "float32"
    assert only("a") == only("b") == only("c") != only("d")
    assert only("e") == only("f") == only("g") == only("h") == only("i")
    assert only("e").name == "vec3f" and only("h").name == "vec3f"
    assert len({only("e"), only("j"), only("k")}) == 3  # another length, another scalar
    assert only("m") == only("n") and only("m").name == "mat33d" and only("m") != only("k")
    assert only("q") == only("r") and only("q") != only("e")
    assert isinstance(only("o"), Unknown)  # warp.types has no float32 in 1.19 (it forwarded to it until 1.12)
    assert only("p") == only("e") and only("p").name == "vec3f"  # Warp makes Python's float its float32 there
    assert all(isinstance(v, Unknown) for v in value("s")) and all(isinstance(v, Unknown) for v in value("t"))
    # a dict keyed by types: the item of that one class (no other type, no string, is the same key)
    assert value("u").constants() == ["f"] and value("w").constants() == ["d", "f", "s"]

    # the spelling Warp gave the types module before 1.13 (deprecated forwarding), and `wp.vec` of 1.10
    old = tmp_path / "old"
    old.mkdir()
    (old / "m.py").write_text("import warp as wp\na = wp.types.float32\nb = wp.vec(length=3, dtype=wp.float32)\n"
                             "c = wp.vec(3, float)\n")
    session = Session(Config(root=str(old), select=("ALL",), warp_version="1.10"))
    session.configure_cache(False)
    session.lint_paths([str(old)])
    old_project = session.project()
    old_file = old_project.files[0]
    found = {a.target.text: old_project.values(old_file, a.value) for a in old_file.assignments}
    assert found["a"] == ValueSet.of(only("a")) and found["b"] == found["c"] == ValueSet.of(only("e"))


def test_a_python_scalar_type_as_a_dtype_is_the_warp_scalar_warp_maps_it_to(tmp_path):
    # where Warp takes a dtype (its type constructors, an array's dtype) it makes `float` its `float32`, `int` its
    # `int32` and `bool` its `bool` (types.py's type_to_warp, read into the version's tables), through names,
    # parameters and `builtins.`; Python's `float` itself is no Warp type, and a module's own `float` is not Python's
    source = (
        "import builtins\nimport warp as wp\nfrom warp.types import matrix, vector\n"
        "def vec_of(t):\n    return vector(3, t)\n"
        "scalar = float\n"
        "a = vector(3, float)\nb = wp.vec3f\nc = vector(length=3, dtype=scalar)\nd = vec_of(float)\n"
        "e = vector(3, builtins.float)\nf = vector(3, wp.float64)\ng = matrix(shape=(3, 3), dtype=float)\n"
        "h = wp.mat33\ni = vector(3, int)\nj = wp.vec3i\nk = vector(3, bool)\nm = wp.types.quaternion(float)\n"
        "n = wp.quatf\no = float\np = vector(3, str)\n"
    )
    shadowing = "import warp as wp\nfrom warp.types import vector\nfloat = wp.float64\nq = vector(3, float)\n"
    # a module that binds `float` by a def, in its `__main__` block: not Python's `float` either
    defined = ("import warp as wp\nfrom warp.types import vector\nif __name__ == '__main__':\n"
               "    def float():\n        pass\nr = vector(3, float)\n")
    project = project_of(tmp_path, {"m.py": source, "s.py": shadowing, "d.py": defined})

    def only(name, path="m.py"):
        file = _file(project, path)
        (bound,) = project.layer.bindings.name_assignments(file, "", name)
        (found,) = project.values(file, bound.value)
        return found

    assert only("a") == only("b") == only("c") == only("d") == only("e") and only("a").name == "vec3f"
    assert only("a") != only("f") and only("f").name == "vec3d"
    assert only("g") == only("h") and only("i") == only("j") and only("m") == only("n")
    assert only("k").scalar == "bool" and only("k") != only("a")
    assert not isinstance(only("o"), WarpType)  # a Python type read as a value, not where Warp takes a dtype
    assert isinstance(only("p"), Unknown)  # a Python type Warp does not map
    assert only("q", "s.py") == only("f")  # the module's own `float` is wp.float64
    assert not isinstance(only("r", "d.py"), WarpType)

    # the argument types of a generic kernel's launch: one instance for `vector(3, float)` and `wp.vec3f`
    from warplint.semantic import arg_types

    arrays = (
        "import builtins\nimport warp as wp\nfrom warp.types import vector\n"
        "def run(n):\n"
        "    a = wp.zeros(n, dtype=vector(3, float))\n    b = wp.zeros(n, dtype=wp.vec3f)\n"
        "    c = wp.zeros(n, dtype=vector(3, wp.float64))\n    d = wp.zeros(n, dtype=int)\n"
        "    e = wp.zeros(n, dtype=builtins.bool)\n    f = wp.zeros(n, dtype=vector(5, float))\n"
        "    g = wp.zeros(n, dtype=vector(5, wp.float64))\n    h = wp.zeros(n, dtype=vector(n, float))\n"
        "    i = 2.0\n    j = True\n    k = 'x'\n"
    )
    project = project_of(tmp_path / "arrays", {"a.py": arrays})
    file = _file(project, "a.py")

    def types(name):
        (assignment,) = project.name_assignments(file, "run", name)
        return arg_types.value_types(project.layer, file, assignment.value, "run")

    assert types("a").one == types("b").one == "array[warp.vec3f]"
    assert types("c").one == "array[warp.vec3d]" and types("d").one == "array[warp.int32]"
    assert types("e").one == "array[warp.bool]"
    assert types("f").one is not None and types("g").one is not None and types("f").one != types("g").one
    assert not types("h").known  # a length known only at run time
    assert types("i").one == "warp.float32" and types("j").one == "warp.bool" and not types("k").known


def test_two_warp_types_passed_to_a_factory_make_several_contents(tmp_path):
    # `make(wp.float32)` and `make(wp.float64)`: two kernel contents; one type twice (`wp.vec3`, `wp.vec3f`)
    # proves nothing several; nor do dtypes of arrays made at run time
    factory = ("def {0}(dtype):\n    @wp.kernel\n    def k(a: wp.array(dtype=dtype)):\n        a[wp.tid()] = dtype()\n"
               "    return k\n")
    source = ("import warp as wp\n" + "".join(factory.format(n) for n in ("two", "alias", "arrays"))
              + "def run(x, y):\n    two(wp.float32)\n    two(wp.float64)\n    alias(wp.vec3)\n    alias(wp.vec3f)\n"
              "    arrays(x.dtype)\n    arrays(y.dtype)\n")
    project = project_of(tmp_path, {"m.py": source})
    file = _file(project, "m.py")
    contents = {k.ctx.scope: project.contents_across_calls(file, k) for k in file.kernels}
    assert contents == {"two": CallContents.SEVERAL, "alias": CallContents.UNKNOWN, "arrays": CallContents.UNKNOWN}


def _long_chains_project(tmp_path):
    # Long but ordinary chains, deeper than any of the old per-walk limits (a nesting depth of 14 for sources,
    # 6 for argument types, 12 calls for what a function launches, 3 for "runs at import", 3 callers out for the
    # default device, 3 for a caller's opt-in): each link is one step of the question's budget, and what a
    # function does is a summary every chain through it reads.
    lines = ["import os", "import warp as wp", "@wp.kernel", "def k(a: wp.array(dtype=wp.float64)):", "    pass",
             "def types():", "    return wp.float64, 4", "class Cfg:", "    def __init__(self, t):",
             "        self.t = t"]
    previous = "types"
    for i in range(6):  # a tuple returned, unpacked, passed to a constructor, unpacked again
        lines += [f"def step{i}():", f"    a, b = {previous}()", "    c = Cfg((a, b))", "    x, y = c.t",
                  "    return x, y"]
        previous = f"step{i}"
    lines += ["def launch0(a):", "    wp.launch(k, dim=1, inputs=[a])"]
    lines += [line for i in range(1, 16) for line in (f"def launch{i}(a):", f"    launch{i - 1}(a)")]
    lines += ["def setup0():", "    pass"]
    lines += [line for i in range(1, 6) for line in (f"def setup{i}():", f"    setup{i - 1}()")]
    lines += ["def device0():", "    wp.launch(k, dim=1, inputs=[wp.zeros(1, dtype=wp.float64)])"]
    lines += [line for i in range(1, 6) for line in (f"def device{i}():", f"    device{i - 1}()")]
    lines += ["def on_cpu():", "    wp.set_device('cpu')", "    device5()"]
    lines += ["def asked0():", "    wp.config.cache_kernels = False"]
    lines += [line for i in range(1, 6) for line in (f"def asked{i}():", f"    asked{i - 1}()")]
    lines += ["def main():", f"    d, n = {previous}()", "    arr = wp.zeros(n, dtype=d)",
              "    like = wp.zeros_like(arr)", "    launch15(like)", "    if os.environ.get('COLD'):",
              "        asked5()"]
    lines += ["setup5()"]
    return project_of(tmp_path, {"c.py": "\n".join(lines) + "\n"})


def test_long_chains_of_helpers_resolve(tmp_path):
    project = _long_chains_project(tmp_path)
    file = _file(project, "c.py")
    like = next(a for a in file.assignments if a.target.text == "like")
    assert [(s.value.ref, s.complete) for s in project.sources(file, like.value.args[0], "main")] == [
        ("warp.zeros", True)]
    d = next(a for a in file.assignments if a.target.text == "arr").value.kwargs["dtype"]
    assert [(s.value.ref, s.complete) for s in project.sources(file, d, "main")] == [("warp.float64", True)]
    launch = next(ln for ln in project.launches(file) if ln.call.ctx.scope == "launch0")
    assert [t.names for t in project.launch_argument_types(launch)] == [frozenset({"array[warp.float64]"})]
    assert "c" in project.modules_launched_by("c.launch15")
    assert project.runs_at_import(file, "setup0")
    (on_cpu,) = [c for c in file.calls if c.ctx.scope == "device0" and c.callee == "warp.launch"]
    assert project.call_devices(file, on_cpu) == frozenset({Device.CPU})
    (cold,) = [a for a in file.assignments if a.ctx.scope == "asked0"]
    assert project.opt_in(file, cold.ctx) is not None


def test_a_recursive_chain_ends_and_answers_alike_whichever_is_asked_first(tmp_path):
    # f and g call each other (and h calls itself); every walk over them ends, and what each launches, whether
    # it runs at import and the values it returns do not depend on which was asked first
    source = ("import warp as wp\n@wp.kernel\ndef k(a: wp.array(dtype=float)):\n    pass\n"
              "def f(n, a):\n    if n:\n        return g(n - 1, a)\n"
              "    wp.launch(k, dim=1, inputs=[a])\n    return 64\n"
              "def g(n, a):\n    return f(n, a)\n"
              "def h(a):\n    return h(a)\n"
              "def main(a):\n    size = g(3, a)\n    wp.launch(k, dim=1, inputs=[h(a)], block_dim=size)\n"
              "f(0, wp.zeros(1))\n")
    answers = []
    for order in (("f", "g", "h", "main"), ("main", "h", "g", "f")):
        project = project_of(tmp_path / "".join(order), {"r.py": source})
        file = _file(project, "r.py")
        size = next(a for a in file.assignments if a.target.text == "size")
        found = {}
        for name in order:
            found[name] = (sorted(project.modules_launched_by(f"r.{name}")), project.runs_at_import(file, name))
        found["size"] = project.values(file, size.value, "main").constants()
        found["sources"] = [s.value.text for s in project.sources(file, size.value, "main")]
        answers.append(found)
    assert answers[0] == answers[1]
    assert answers[0]["g"] == (["r"], True) and answers[0]["main"] == (["r"], False)
    assert answers[0]["h"] == ([], False)
    assert answers[0]["size"] == [64]


def test_a_decorated_def_defined_twice_in_its_scope_has_a_text_digest():
    """Only a name its scope defines twice needs its text compared (an identical re-definition of a kernel);
    the digest ignores where the def is nested, and differs with the text."""
    from warplint.engine import analyze

    model = analyze("twice.py", (
        "import warp as wp\n"
        "@wp.kernel\ndef k(a: wp.array(dtype=float)):\n    a[0] = 1.0\n"
        "@wp.kernel\ndef k(a: wp.array(dtype=float)):\n    a[0] = 1.0\n"
        "@wp.kernel\ndef once(a: wp.array(dtype=float)):\n    a[0] = 1.0\n"
        "def make(flag):\n"
        "    if flag:\n"
        "        @wp.kernel\n        def k(a: wp.array(dtype=float)):\n            a[0] = 1.0\n"
        "    else:\n"
        "        @wp.kernel\n        def k(a: wp.array(dtype=float)):\n            a[0] = 2.0\n"
        "    return k\n"
    ))
    top = [k.source_digest for k in model.kernels if k.ctx.scope == "" and k.name == "k"]
    nested = [k.source_digest for k in model.kernels if k.ctx.scope == "make"]
    assert len(top) == 2 and top[0] and top[0] == top[1]
    assert len(nested) == 2 and nested[0] == top[0] and nested[1] not in ("", top[0])
    assert [k.source_digest for k in model.kernels if k.name == "once"] == [""]
    assert model.functions["make.k"].source_digest == nested[1]


def test_whether_a_test_runs_before_another_agrees_with_the_listed_order(tmp_path):
    """``test_runs_before`` answers, for a pair of tests, what looking the first up in ``tests_run_before`` of the
    second answers: a test file's own tests in the runner's order, the test files before it in its folder by
    name, not those after it, not another folder's, not a helper."""
    test = ("import unittest\n\nimport warp as wp\n\n\ndef helper():\n    wp.synchronize()\n\n"
            "def test_{0}_one():\n    pass\n\ndef test_{0}_two():\n    pass\n\n"
            "class TestThing(unittest.TestCase):\n    def test_b(self):\n        pass\n\n"
            "    def test_a(self):\n        pass\n")
    project = project_of(tmp_path, {
        "tests/test_alpha.py": test.format("alpha"), "tests/test_beta.py": test.format("beta"),
        "tests/test_gamma.py": test.format("gamma"), "tests/other/test_delta.py": test.format("delta"),
        "tests/helpers.py": "import warp as wp\n\n\ndef test_like():\n    wp.synchronize()\n",
    })
    facts = project.layer
    pairs = [(f, qualname) for f in project.files for qualname in f.functions]
    assert len(pairs) == 21
    listed = {(id(o[0]), o[1]): {(id(f), s) for f, s in facts.tests_run_before(*o)} for o in pairs}
    agreed = [(t, o) for t in pairs for o in pairs
              if facts.test_runs_before(t, o) == ((id(t[0]), t[1]) in listed[(id(o[0]), o[1])])]
    assert len(agreed) == len(pairs) ** 2
    before_gamma_two = {(os.path.basename(f.path), s) for f, s in facts.tests_run_before(
        next(f for f in project.files if f.path.endswith("test_gamma.py")), "test_gamma_two")}
    assert ("test_beta.py", "TestThing.test_a") in before_gamma_two
    assert ("test_gamma.py", "test_gamma_one") in before_gamma_two
    assert not any(name in ("test_delta.py", "helpers.py") for name, _ in before_gamma_two)


def test_a_modules_global_names_include_those_its_blocks_bind():
    """A block opens no scope: names bound inside module-level ``if`` / ``for`` / ``with`` / ``try`` blocks (the
    ``__main__`` block among them), by tuple targets and ``as`` clauses, are the module's; a function's and a
    class body's are not."""
    from warplint.engine import analyze

    model = analyze("blocks.py", (
        "import warp as wp\n"
        "a, (b, *c) = 1, (2, 3)\n"
        "if __name__ == '__main__':\n    cfg = 1\nelif wp:\n    other = 2\nelse:\n    last = 3\n"
        "for i, item in enumerate(()):\n    looped = i\nelse:\n    after = 0\n"
        "with open('x') as fh, open('y') as (one, two):\n    inside = fh\n"
        "try:\n    tried = 1\nexcept ValueError as err:\n    handled = err\nfinally:\n    final = 0\n"
        "while False: spun = 1\n"
        "total = 0\ntotal += 1\n"
        "def f():\n    local = 1\n"
        "class C:\n    field = 1\n"
    ))
    assert {"a", "b", "c", "cfg", "other", "last", "i", "item", "looped", "after", "fh", "one", "two", "inside",
            "tried", "err", "handled", "final", "spun", "total", "f", "C"} <= model.toplevel
    assert not {"local", "field", "wp"} & model.toplevel


def test_a_decorator_that_stores_a_kernel_into_a_dict_makes_that_item_a_kernel_of_the_decorated_function(tmp_path):
    # `register(name)`'s inner function stores `wp.kernel(f, **options)` and returns `f`: when each `def` runs, the
    # item under its call's key is a kernel of that function's module, with the options its call passed; the
    # decorated name stays the function
    project = project_of(tmp_path, {
        "app/__init__.py": "",
        "app/registry.py": (
            "import warp as wp\nKERNELS = {}\n\ndef register(name, **options):\n    def store(f):\n"
            "        KERNELS[name] = wp.kernel(f, **options)\n        return f\n    return store\n"
        ),
        "app/ops.py": (
            "import warp as wp\nfrom app.registry import register\n\n@register('one')\n"
            "def one(a: wp.array(dtype=float)):\n    a[0] = 1.0\n\n@register('two', module='unique')\n"
            "def two(a: wp.array(dtype=float)):\n    a[0] = 2.0\n"
        ),
        "app/main.py": (
            "from app import ops, registry\nfrom app.registry import KERNELS\n"
            "a = KERNELS['one']\nb = registry.KERNELS['two']\nc = KERNELS['three']\nd = ops.one\n"
        ),
    })
    ops, main = _file(project, "ops.py"), _file(project, "main.py")
    found = {a.target.text: project.find_kernels(main, "", a.value) for a in main.assignments}
    (one,), (two,) = found["a"], found["b"]
    assert one[0] is ops and one[1].name == "one" and project.kernel_module(*one) == "app.ops"
    assert two[0] is ops and two[1].name == "two" and project.kernel_module(*two) == "unique"
    assert found["c"] == [] and found["d"] == []


def test_a_dict_comprehension_made_at_import_holds_what_its_value_expression_returns(tmp_path):
    # `KERNELS = {c: make(c) for c in (...)}`: a known key that can match selects the factory's kernel, read
    # through the module too; every variant is made by the import-time loop before the launches after it
    project = project_of(tmp_path, {
        "app/__init__.py": "",
        "app/kernels.py": (
            "import warp as wp\n\ndef make(c):\n    @wp.kernel\n    def k(a: wp.array(dtype=float)):\n"
            "        a[0] = c\n    return k\n\nKERNELS = {c: make(c) for c in (1.0, 2.0)}\n"
        ),
        "app/main.py": (
            "import warp as wp\nfrom app import kernels\n\ndef main():\n"
            "    wp.launch(kernels.KERNELS[2.0], dim=1, inputs=[wp.zeros(1, dtype=float)])\n"
            "    wp.launch(kernels.KERNELS[5.0], dim=1, inputs=[wp.zeros(1, dtype=float)])\n\nmain()\n"
        ),
    })
    main, kernels = _file(project, "main.py"), _file(project, "kernels.py")
    known, missing = (project.find_kernels(main, call.ctx.scope, call.bound("kernel")) for call in main.calls
                      if call.callee == "warp.launch")
    assert [(f, k.name) for f, k in known] == [(kernels, "k")]
    assert missing == []
    assert project.created_before_loads(kernels, kernels.kernels[0])


def test_a_dict_made_by_keywords_holds_its_items(tmp_path):
    # `dict(a=x, b=y)` is `{"a": x, "b": y}`, read by key in its file or through its module; a literal dict too
    project = project_of(tmp_path, {
        "app/__init__.py": "",
        "app/k.py": (
            "import warp as wp\n\n@wp.kernel\ndef ka(a: wp.array(dtype=float)):\n    a[0] = 1.0\n\n"
            "@wp.kernel\ndef kb(a: wp.array(dtype=float)):\n    a[0] = 2.0\n\n"
            "LITERAL = {'a': ka, 'b': kb}\nCALLED = dict(a=ka, b=kb)\n"
        ),
        "app/main.py": ("from app import k\nfrom app.k import CALLED\n"
                        "a = CALLED['a']\nb = k.CALLED['b']\nc = k.LITERAL['b']\n"),
    })
    main = _file(project, "main.py")
    found = {a.target.text: [k.name for _, k in project.find_kernels(main, "", a.value)] for a in main.assignments}
    assert found == {"a": ["ka"], "b": ["kb"], "c": ["kb"]}


def test_what_the_runner_runs_before_a_tests_body(tmp_path):
    """``runner_setup`` lists, in pytest's order, what runs before a test's body: the module's and the class's
    setup, the fixtures visible where the test is (its class, its module, the conftest.py files above it, nearest
    first) that it requests by parameter or ``usefixtures``, each after the fixtures it requests in turn (a fixture
    requesting its own name gets the one it overrides), the ``autouse`` ones, ``setUp``; a fixture up to its first
    ``yield``. Parameters ``parametrize`` passes, plugin fixtures and fixtures nobody requests add nothing."""
    project = project_of(tmp_path, {
        "tests/conftest.py": ("import pytest\nimport warp as wp\n\n\n"
                              "@pytest.fixture\ndef device():\n    return 'cpu'\n\n\n"
                              "@pytest.fixture(name='model')\ndef make_model(device):\n    return device\n"),
        "tests/test_order.py": (
            "import unittest\n\nimport pytest\nimport warp as wp\n\n\ndef setup_module():\n    pass\n\n\n"
            "@pytest.fixture\ndef device(device):\n    yield device\n    print('teardown')\n\n\n"
            "@pytest.fixture(autouse=True)\ndef always():\n    pass\n\n\n"
            "@pytest.fixture\ndef unused():\n    pass\n\n\n"
            "@pytest.mark.usefixtures('unused_by_name')\n"
            "@pytest.mark.parametrize('dtype', [1, 2])\n"
            "def test_plain(model, dtype, tmp_path):\n    pass\n\n\n"
            "class TestCase_(unittest.TestCase):\n    @classmethod\n    def setUpClass(cls):\n        pass\n\n"
            "    def setUp(self):\n        pass\n\n    def test_method(self):\n        pass\n\n\n"
            "class TestRegistered(unittest.TestCase):\n    @classmethod\n    def setUpClass(cls):\n        pass\n\n\n"
            "def registered(test, device):\n    pass\n\n\n"
            "add_function_test(TestRegistered, 'test_registered', registered, devices=None)\n"),
    })
    facts = project.layer
    test_file = next(f for f in project.files if f.path.endswith("test_order.py"))
    steps = [(os.path.basename(s.file.path), s.scope, s.until) for s in facts.runner_setup(test_file, "test_plain")]
    yield_order = test_file.functions["device"].first_yield
    assert yield_order > 0
    assert steps == [("test_order.py", "setup_module", 0), ("test_order.py", "always", 0),
                     ("conftest.py", "device", 0), ("test_order.py", "device", yield_order),
                     ("conftest.py", "make_model", 0)]
    method = [(s.scope, s.until) for s in facts.runner_setup(test_file, "TestCase_.test_method")]
    assert method == [("setup_module", 0), ("TestCase_.setUpClass", 0), ("always", 0), ("TestCase_.setUp", 0)]
    before_method = [s.scope for s in facts.runner_steps_before(test_file, "TestCase_.test_method")]
    assert before_method == ["TestCase_.setUp", "always", "TestCase_.setUpClass", "setup_module"]
    before_plain = [s.scope for s in facts.runner_steps_before(test_file, "test_plain")]
    assert before_plain == ["make_model", "device", "device", "always", "setup_module"]
    assert facts.runner_steps_before(test_file, "device") == []  # a fixture is no test
    # a function registered as a TestCase's method: its class's setup; its parameters are the wrapper's, no fixtures
    assert [s.scope for s in facts.runner_setup(test_file, "registered")] == ["setup_module",
                                                                              "TestRegistered.setUpClass", "always"]


def test_a_call_through_a_parametrized_parameter_calls_each_listed_function_in_turn(tmp_path):
    """pytest runs a test once per value ``parametrize`` lists, in order: a call of the parameter calls each
    listed project function, as a ``for`` over the list would (``ctx.item`` their place); a second parametrize
    mark repeats them (``in_loop``); a parameter the body binds again, or values not listed, call nothing known."""
    project = project_of(tmp_path, {"tests/test_phases.py": (
        "import pytest\nimport warp as wp\n\n\ndef first():\n    pass\n\n\ndef second():\n    pass\n\n\n"
        "@pytest.mark.parametrize('phase', [first, pytest.param(second, id='2')])\n"
        "def test_once(phase):\n    phase()\n\n\n"
        "@pytest.mark.parametrize('n', [1, 2])\n@pytest.mark.parametrize('phase, m', [(first, 1), (second, 2)])\n"
        "def test_twice(phase, m, n):\n    phase()\n\n\n"
        "@pytest.mark.parametrize('phase', [first, second])\n"
        "def test_rebound(phase):\n    phase = first\n    phase()\n")})
    bindings = project.layer.bindings
    file = project.files[0]
    once = [(c.callee.rpartition(".")[2], c.ctx.item, c.ctx.in_loop) for c in bindings.calls_in(file, "test_once")]
    assert once == [("first", 1, False), ("second", 2, False)]
    twice = [(c.callee.rpartition(".")[2], c.ctx.item, c.ctx.in_loop) for c in bindings.calls_in(file, "test_twice")]
    assert twice == [("first", 1, True), ("second", 2, True)]
    assert [c.ctx.item for c in bindings.calls_in(file, "test_rebound")] == [0]

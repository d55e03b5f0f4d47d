"""Module membership as a fact of the semantic layer (warplint/semantic/membership.py)."""

from warplint.testing import project_of

HEADER = "import warp as wp\n"
BODY = "def body(x: wp.array(dtype=float)):\n    x[0] = 1.0\n"


def _file(project, suffix):
    return next(f for f in project.files if f.path.endswith(suffix))


def test_a_kernel_made_from_a_function_joins_the_functions_module(tmp_path):
    # Warp: without module=, wp.kernel(f) joins f.__module__, where f is defined, not the calling file's module
    project = project_of(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/bodies.py": HEADER + BODY,
        "main.py": HEADER + "from pkg import bodies\nk = wp.kernel(bodies.body)\n"
                   "local = wp.kernel(bodies.body, module='m')\n",
    })
    main = _file(project, "main.py")
    made, named = main.kernels
    assert project.kernel_module(main, made) == "pkg.bodies"
    assert project.kernel_module(main, named) == "m"
    assert [k.name for _, k in project.module_members("pkg.bodies").kernels] == ["body"]
    assert not project.module_members("main").kernels


def test_a_module_is_the_tests_own_when_its_kernels_code_is_test_code(tmp_path):
    # where wp.kernel(f) is called does not decide it: the kernel's code, f, is where it is defined
    project = project_of(tmp_path, {
        "lib/__init__.py": "",
        "lib/bodies.py": HEADER + BODY,
        "tests/__init__.py": "",
        "tests/helpers.py": HEADER + BODY,
        "tests/pure.py": HEADER + BODY,
        "tests/test_a.py": HEADER + "from lib import bodies\nfrom tests import helpers, pure\n"
                           "library = wp.kernel(bodies.body)\nown = wp.kernel(helpers.body)\n"
                           "pure_own = wp.kernel(pure.body)\n"
                           "@wp.kernel\n" + BODY.replace("def body", "def local"),
        "tests/test_b.py": HEADER + "from lib import bodies\nmixed = wp.kernel(bodies.body, module='tests.helpers')\n",
    })
    assert [f.path.rpartition("/")[2] for f, _ in project.module_members("lib.bodies").kernels] == ["test_a.py"]
    assert not project.module_owned_by_tests("lib.bodies")
    assert project.module_owned_by_tests("tests.test_a") and project.module_owned_by_tests("tests.pure")
    # a library function's kernel placed in the helper module by module= brings library code into it
    assert not project.module_owned_by_tests("tests.helpers")
    assert project.module_owned_by_tests("tests.test_b")  # a test file's own module, no kernel of it known
    assert not project.module_owned_by_tests("lib") and not project.module_owned_by_tests("nothing.lands.here")


def test_members_options_and_variants_from_every_file(tmp_path):
    project = project_of(tmp_path, {
        "kernels.py": HEADER + "@wp.kernel(module='a')\n" + BODY + "@wp.kernel(module='unique', "
                      "module_options={'fast_math': True})\ndef iso(x: wp.array(dtype=float)):\n    x[0] = 2.0\n",
        "app.py": HEADER + "import kernels\nwp.set_module_options({'max_unroll': 2}, module='a')\n"
                  "def run(x):\n    wp.launch(kernels.body, dim=1, inputs=[x], block_dim=64)\n",
    })
    a = project.module_members("a")
    assert [k.name for _, k in a.kernels] == ["body"]
    assert a.options == frozenset({("max_unroll", "2")})
    variants = project.module_variants("a")
    assert a.launched and variants is not None and {size for _, size in variants} >= {64}
    iso = project.module_members("unique:kernels.iso")
    assert iso.options == frozenset({("fast_math", "True")}) and not iso.launched


def test_a_module_is_launched_from_the_function_that_makes_the_launch_or_calls_its_wrapper(tmp_path):
    # a launch written in a wrapper whose parameter is the kernel is made where the wrapper is called
    project = project_of(tmp_path, {
        "ops.py": HEADER + "@wp.kernel\n" + BODY,
        "app.py": HEADER + "import ops\n"
                  "def run(kernel, x):\n    wp.launch(kernel, dim=1, inputs=[x])\n"
                  "def step(x):\n    run(ops.body, x)\n    wp.launch(ops.body, dim=1, inputs=[x])\n"
                  "def other(x):\n    wp.launch(ops.body, dim=1, inputs=[x])\n"
                  "wp.launch(ops.body, dim=1, inputs=[None])\n",
    })
    origins = project.module_members("ops").launched_from
    assert sorted((path.rpartition("/")[2], scope) for path, scope, _ in origins) == [
        ("app.py", ""), ("app.py", "other"), ("app.py", "step")]
    step = next(span for _, scope, span in origins if scope == "step")
    assert step.line == 6  # the first launch in step: the wrapper's call
    assert not project.module_members("app").launched_from


def test_a_kernel_is_stable_when_it_has_one_content_and_comes_before_any_load(tmp_path):
    project = project_of(tmp_path, {
        "m.py": HEADER + (
            "@wp.kernel\ndef top(x: wp.array(dtype=float)):\n    x[0] = 1.0\n"
            "def make(c: float):\n    @wp.kernel(module='unique')\n    def once(x: wp.array(dtype=float)):\n"
            "        x[0] = c\n    return once\n"
            "def vary(c: float):\n    @wp.kernel(module='unique')\n    def each(x: wp.array(dtype=float)):\n"
            "        x[0] = c\n    return each\n"
            "ONCE = make(1.0)\n"
            "def run(x):\n    wp.launch(top, dim=1, inputs=[x])\n    wp.launch(ONCE, dim=1, inputs=[x])\n"
            "    for c in (1.0, 2.0):\n        wp.launch(vary(c), dim=1, inputs=[x])\n"
            "    @wp.kernel(module='unique')\n    def late(x: wp.array(dtype=float)):\n        x[0] = 3.0\n"
            "    wp.launch(late, dim=1, inputs=[x])\n"
        ),
    })
    m = _file(project, "m.py")
    stable = {k.name: project.stable_kernel(m, k) for k in m.kernels}
    assert stable == {"top": True, "once": True, "each": False, "late": False}


def test_a_kernel_made_after_a_load_or_a_call_that_launches_is_not_made_before_loads(tmp_path):
    """What runs earlier in the kernel's scope (``launches_or_loads_before``, read by ``created_before_loads``): a
    ``wp.load_module``, a call of a project function that launches, or a launch; a call that launches nothing, or
    any of them made after the kernel, is none."""
    kernel = "    @wp.kernel(module='unique')\n    def {0}(x: wp.array(dtype=float)):\n        x[0] = 1.0\n"
    project = project_of(tmp_path, {
        "m.py": HEADER + (
            "@wp.kernel\ndef top(x: wp.array(dtype=float)):\n    x[0] = 1.0\n"
            "def helper(x):\n    wp.launch(top, dim=1, inputs=[x])\n"
            "def quiet(x):\n    return x\n"
            "def after_load(x):\n    wp.load_module('m')\n" + kernel.format("loaded") +
            "def after_helper(x):\n    helper(x)\n" + kernel.format("helped") +
            "def after_quiet(x):\n    quiet(x)\n" + kernel.format("calm") +
            "def before_all(x):\n" + kernel.format("first") + "    wp.load_module('m')\n    helper(x)\n"
        ),
    })
    m = _file(project, "m.py")
    made_before = {k.name: project.created_before_loads(m, k) for k in m.kernels if k.ctx.scope}
    assert made_before["loaded"] is False and made_before["helped"] is False
    layer = project.layer  # without the scope's whole timeline: the same answer as reading it
    before = {k.name: layer.launches_or_loads_before(m, k.ctx.scope, k.ctx) for k in m.kernels if k.ctx.scope}
    assert before == {k.name: any(c.ctx.precedes(k.ctx) for _, _, c in layer.launch_timeline(m, k.ctx.scope))
                      for k in m.kernels if k.ctx.scope}
    assert before == {"loaded": True, "helped": True, "calm": False, "first": False}

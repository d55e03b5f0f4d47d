"""Facts about kernels created at run time: which factory arguments reach a kernel's content and which its
module name (Evaluator.parameters_reaching, Project.kernel_variants), where a kernel is launched whatever its
module (Project.kernel_launches), and whether a factory only runs before anything is launched
(Project.runs_before_launches)."""

from warplint.model import Value
from warplint.testing import project_of


def _kernel(project, name):
    return next((f, k) for f in project.files for k in f.kernels if k.name == name)


FACTORIES = {
    "lib/__init__.py": "",
    "lib/sort.py": (
        "import functools\n"
        "import warp as wp\n"
        "def _name(dtype, batched):\n"
        "    return f\"lib.sort.{dtype}_{'b' if batched else 's'}\"\n"
        "def _suffix(flag, other):\n"
        "    return str(flag)\n"
        "@functools.cache\n"
        "def get_sort(dtype, batched: bool, descending: bool):\n"
        "    @wp.kernel(module=_name(dtype, batched))\n"
        "    def sort_pass(keys: wp.array(dtype=dtype)):\n"
        "        if wp.static(descending):\n"
        "            keys[0] = -keys[0]\n"
        "    return sort_pass\n"
        "def get_scan(dtype, inclusive: bool, unused: int):\n"
        "    name = '_'.join(['lib.scan', str(dtype), _suffix(inclusive, unused)])\n"
        "    @wp.kernel(module=name, enable_backward=unused)\n"
        "    def scan_pass(keys: wp.array(dtype=dtype)):\n"
        "        if wp.static(inclusive):\n"
        "            keys[0] = keys[0]\n"
        "    return scan_pass\n"
        "def get_plain(dtype):\n"
        "    @wp.kernel\n"
        "    def plain(keys: wp.array(dtype=float)):\n"
        "        keys[0] = 1.0\n"
        "    return plain\n"
        "def sort(keys, descending):\n"
        "    wp.launch(get_sort(keys.dtype, True, descending), dim=1, inputs=[keys])\n"
        "def scan(keys):\n"
        "    k = get_scan(keys.dtype, True, False)\n"
        "    wp.launch(k, dim=1, inputs=[keys])\n"
        "def run(keys):\n"
        "    sort(keys, True)\n"
        "    sort(keys, False)\n"
        "    scan(keys)\n"
        "    wp.launch(get_plain(float), dim=1, inputs=[keys])\n"
    ),
}


def test_parameters_reaching_a_module_name_through_a_helper_and_an_f_string(tmp_path):
    project = project_of(tmp_path, FACTORIES)
    file, kernel = _kernel(project, "sort_pass")
    params, complete = project.evaluator.parameters_reaching(file, kernel.module_value, "get_sort")
    assert complete
    assert params == {("get_sort", "dtype"), ("get_sort", "batched")}
    # through a local, a join of a list and a helper that reads only one of the two arguments it is given
    file, kernel = _kernel(project, "scan_pass")
    params, complete = project.evaluator.parameters_reaching(file, kernel.module_value, "get_scan")
    assert complete
    assert params == {("get_scan", "dtype"), ("get_scan", "inclusive")}
    # a literal and a module-level name read no parameter; `not x` is an expression the binder keeps no parts of
    assert project.evaluator.parameters_reaching(file, Value("const", const="m"), "get_scan") == (frozenset(), True)
    assert project.evaluator.parameters_reaching(file, Value("other"), "get_scan") == (frozenset(), False)


def test_kernel_variants_content_and_module(tmp_path):
    project = project_of(tmp_path, FACTORIES)
    file, kernel = _kernel(project, "sort_pass")
    variants = project.kernel_variants(file, kernel)
    assert variants is not None
    # dtype comes from the parameter's annotation (argument types are content), descending from wp.static
    assert variants.captures == {"dtype", "descending"}
    assert variants.content == {("get_sort", "dtype"), ("get_sort", "descending")}
    assert variants.kept  # functools.cache keeps every kernel it made
    assert variants.shared == {("get_sort", "descending")}  # both orders are called: one module for both

    file, kernel = _kernel(project, "scan_pass")
    variants = project.kernel_variants(file, kernel)
    # enable_backward= reads `unused`, which the name leaves out, but every call passes the literal False
    assert ("get_scan", "unused") in variants.content
    assert ("get_scan", "unused") not in variants.varying
    assert variants.shared == frozenset()
    assert not variants.kept

    file, kernel = _kernel(project, "plain")
    variants = project.kernel_variants(file, kernel)
    assert variants.captures == frozenset()  # `dtype=float` is the keyword, not the factory's dtype
    assert variants.module == frozenset()  # the file module: one name for every call


def test_kernel_launches_whatever_the_module(tmp_path):
    project = project_of(tmp_path, FACTORIES)
    file, kernel = _kernel(project, "sort_pass")
    assert project.kernel_module(file, kernel) is None  # a name computed per call: launches() leaves it out
    assert [(f.module, call.ctx.scope) for f, call in project.kernel_launches(file, kernel)] == [("lib.sort", "sort")]
    assert not any(ln.kernel is kernel for ln in project.launches(file))


def test_runs_before_launches(tmp_path):
    project = project_of(tmp_path, {
        "app/__init__.py": "",
        "app/main.py": (
            "import warp as wp\n"
            "def make(c: float):\n"
            "    @wp.kernel\n"
            "    def k(a: wp.array(dtype=float)):\n"
            "        a[0] = c\n"
            "    return k\n"
            "def setup():\n"
            "    return make(1.0), make(2.0)\n"
            "def later(a, k):\n"
            "    wp.launch(k, dim=1, inputs=[a])\n"
            "    return make(3.0)\n"
            "def main():\n"
            "    ks = setup()\n"
            "    for k in ks:\n"
            "        wp.launch(k, dim=1, inputs=[None])\n"
            "    later(None, ks[0])\n"
            "def api():\n"
            "    return make(4.0)\n"
            "if __name__ == '__main__':\n"
            "    main()\n"
        ),
    })
    assert project.runs_before_launches("app.main.main")
    assert project.runs_before_launches("app.main.setup")
    assert not project.runs_before_launches("app.main.later")  # main() launches before it calls later()
    assert not project.runs_before_launches("app.main.make")  # later() calls it after a launch
    assert not project.runs_before_launches("app.main.api")  # nothing calls it: its callers are not known


def test_module_names_computed_alike_and_at_a_call(tmp_path):
    project = project_of(tmp_path, {
        "lib/__init__.py": "",
        "lib/solve.py": (
            "import functools\n"
            "import warp as wp\n"
            "def _module(dtype):\n"
            "    return f'lib.solve_{dtype}'\n"
            "@functools.cache\n"
            "def get_factor(dtype):\n"
            "    @wp.kernel(module=_module(dtype))\n"
            "    def factor(a: wp.array(dtype=dtype)):\n"
            "        a[0] = a[0]\n"
            "    return factor\n"
            "@functools.cache\n"
            "def get_back(dt, flag: bool):\n"
            "    name = _module(dt)\n"
            "    @wp.kernel(module=name)\n"
            "    def back(a: wp.array(dtype=dt)):\n"
            "        a[0] = a[0]\n"
            "    return back\n"
            "def get_other(dtype):\n"
            "    @wp.kernel(module=f'lib.other_{dtype}')\n"
            "    def other(a: wp.array(dtype=dtype)):\n"
            "        a[0] = a[0]\n"
            "    return other\n"
            "def solve(a, b):\n"
            "    wp.launch(get_factor(a.dtype), dim=1, inputs=[a])\n"
            "    wp.launch(get_back(a.dtype, True), dim=1, inputs=[a])\n"
            "    wp.launch(get_back(b.dtype, True), dim=1, inputs=[b])\n"
        ),
    })
    file, factor = _kernel(project, "factor")
    _, back = _kernel(project, "back")
    _, other = _kernel(project, "other")
    # the same helper of the factory's first argument, whatever the parameter is called
    assert {k.name for _, k in project.kernels_of_module_shape(file, factor)} == {"factor", "back"}
    assert {k.name for _, k in project.kernels_of_module_shape(file, other)} == {"other"}  # another literal text
    calls = [c for c in project.calls_in(file, "solve") if c.callee.endswith(("get_factor", "get_back"))]
    at = [project.module_shape_at(file, "solve", c, file, factor if c.callee.endswith("get_factor") else back)
          for c in calls]
    assert at[0] is not None
    assert at[0] == at[1]  # get_factor(a.dtype) and get_back(a.dtype, True): one module
    assert at[1] != at[2]  # b.dtype: perhaps another one


def test_a_public_keyword_nobody_passes_is_the_users_choice(tmp_path):
    project = project_of(tmp_path, {
        "lib/__init__.py": "",
        "lib/select.py": (
            "import functools\n"
            "import warp as wp\n"
            "@functools.cache\n"
            "def get_select(dtype, largest: bool):\n"
            "    @wp.kernel(module=f'lib.select_{dtype}')\n"
            "    def select_pass(keys: wp.array(dtype=dtype)):\n"
            "        if wp.static(largest):\n"
            "            keys[0] = keys[1]\n"
            "    return select_pass\n"
            "def select(keys, largest=False):\n"
            "    wp.launch(get_select(keys.dtype, largest), dim=1, inputs=[keys])\n"
            "def _select(keys, largest=False):\n"
            "    wp.launch(get_private(keys.dtype, largest), dim=1, inputs=[keys])\n"
            "@functools.cache\n"
            "def get_private(dtype, largest: bool):\n"
            "    @wp.kernel(module=f'lib.private_{dtype}')\n"
            "    def private_pass(keys: wp.array(dtype=dtype)):\n"
            "        if wp.static(largest):\n"
            "            keys[0] = keys[1]\n"
            "    return private_pass\n"
        ),
    })
    file, kernel = _kernel(project, "select_pass")
    fn = file.functions["get_select"]
    # the evaluator reads the default of select() (no call in the project passes another value) ...
    assert project.evaluator.parameter(file, fn, "largest", None).single_constant() == (True, False)
    # ... but a user of the library picks it: both variants share f'lib.select_{dtype}'
    assert project.kernel_variants(file, kernel).shared == {("get_select", "largest")}
    file, kernel = _kernel(project, "private_pass")
    assert project.kernel_variants(file, kernel).shared == frozenset()  # a private helper: its default only

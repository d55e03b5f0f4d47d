"""Facts about kernels created at run time: which factory arguments reach a kernel's content and which its
module name (Evaluator.parameters_reaching, Project.kernel_variants), where a kernel is launched whatever its
module (Project.kernel_launches), and whether a factory only runs before anything is launched
(Project.runs_before_launches)."""

from warplint.model import Value
from warplint.semantic.variants import CallContents
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
    params, complete = project.layer.evaluator.parameters_reaching(file, kernel.module_value, "get_sort")
    assert complete
    assert params == {("get_sort", "dtype"), ("get_sort", "batched")}
    # through a local, a join of a list and a helper that reads only one of the two arguments it is given
    file, kernel = _kernel(project, "scan_pass")
    params, complete = project.layer.evaluator.parameters_reaching(file, kernel.module_value, "get_scan")
    assert complete
    assert params == {("get_scan", "dtype"), ("get_scan", "inclusive")}
    # a literal and a module-level name read no parameter; `not x` is an expression the binder keeps no parts of
    evaluator = project.layer.evaluator
    assert evaluator.parameters_reaching(file, Value("const", const="m"), "get_scan") == (frozenset(), True)
    assert evaluator.parameters_reaching(file, Value("other"), "get_scan") == (frozenset(), False)


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
    assert project.layer.evaluator.parameter(file, fn, "largest", None).single_constant() == (True, False)
    # ... but a user of the library picks it: both variants share f'lib.select_{dtype}'
    assert project.kernel_variants(file, kernel).shared == {("get_select", "largest")}
    file, kernel = _kernel(project, "private_pass")
    assert project.kernel_variants(file, kernel).shared == frozenset()  # a private helper: its default only


LAZY = {
    "lib/__init__.py": "",
    "lib/pairs.py": (
        "import functools\n"
        "import warp as wp\n"
        "_CACHE = {}\n"
        "@wp.kernel\n"
        "def energy(x: wp.array(dtype=float)):\n"
        "    x[0] = 0.0\n"
        "def get_force():\n"
        "    if 'force' not in _CACHE:\n"
        "        @wp.kernel\n"
        "        def force(x: wp.array(dtype=float)):\n"
        "            x[0] = 1.0\n"
        "        _CACHE['force'] = force\n"
        "    return _CACHE['force']\n"
        "def get_virial():\n"
        "    if 'virial' not in _CACHE:\n"
        "        @wp.kernel\n"
        "        def virial(x: wp.array(dtype=float)):\n"
        "            x[0] = 2.0\n"
        "        _CACHE['virial'] = virial\n"
        "    return _CACHE['virial']\n"
        "def get_stress():\n"
        "    if 'stress' not in _CACHE:\n"
        "        @wp.kernel\n"
        "        def stress(x: wp.array(dtype=float)):\n"
        "            x[0] = 3.0\n"
        "        _CACHE['stress'] = stress\n"
        "    return _CACHE['stress']\n"
        "def _build_angle():\n"
        "    @wp.kernel\n"
        "    def angle(x: wp.array(dtype=float)):\n"
        "        x[0] = 4.0\n"
        "    return angle\n"
        "@functools.cache\n"
        "def get_angle():\n"
        "    return _build_angle()\n"
        "def _build_plain():\n"
        "    @wp.kernel\n"
        "    def plain(x: wp.array(dtype=float)):\n"
        "        x[0] = 5.0\n"
        "    return plain\n"
        "STRESS = get_stress()\n"
        "def compute_energy(x):\n"
        "    wp.launch(energy, dim=1, inputs=[x])\n"
        "def compute_forces(x):\n"
        "    wp.launch(get_force(), dim=1, inputs=[x])\n"
        "def compute_virial(x):\n"
        "    k = get_virial()\n"
        "    wp.launch(energy, dim=1, inputs=[x])\n"
        "    wp.launch(k, dim=1, inputs=[x])\n"
        "def compute_stress(x):\n"
        "    wp.launch(get_stress(), dim=1, inputs=[x])\n"
        "def compute_angles(x):\n"
        "    local = {}\n"
        "    local['plain'] = _build_plain()\n"
        "    wp.launch(get_angle(), dim=1, inputs=[x])\n"
        "    wp.launch(local['plain'], dim=1, inputs=[x])\n"
    ),
}


def test_a_lazy_builders_first_call_and_a_launch_nothing_orders(tmp_path):
    project = project_of(tmp_path, LAZY)
    file, force = _kernel(project, "force")
    apart = project.launched_apart(file, force, "lib.pairs")
    assert apart is not None
    # the module-level kernel's launch comes first among the candidates; the kernel's own launch is the other end
    assert (apart.launch.ctx.scope, apart.own.ctx.scope) == ("compute_energy", "compute_forces")
    # get_virial() is called before compute_virial()'s own launch of energy, but compute_energy() is another entry
    _, virial = _kernel(project, "virial")
    assert project.launched_apart(file, virial, "lib.pairs").launch.ctx.scope == "compute_energy"
    # first called at import: the cache returns that kernel to every later call
    _, stress = _kernel(project, "stress")
    assert project.launched_apart(file, stress, "lib.pairs") is None
    # the cache is the caller's (a functools.cache'd getter that returns the builder's kernel) ...
    _, angle = _kernel(project, "angle")
    assert project.kernel_variants(file, angle).keeper == "lib.pairs.get_angle"
    assert project.launched_apart(file, angle, "lib.pairs") is not None
    # ... but a local dict dies with its call: nothing keeps, not a lazy builder
    _, plain = _kernel(project, "plain")
    assert not project.kernel_variants(file, plain).kept
    assert project.launched_apart(file, plain, "lib.pairs") is None


def test_launched_apart_is_none_when_every_way_to_the_launch_makes_the_kernel_first(tmp_path):
    files = {
        "lib/__init__.py": "",
        "lib/pairs.py": (
            "import warp as wp\n"
            "_CACHE = {}\n"
            "@wp.kernel\n"
            "def energy(x: wp.array(dtype=float)):\n"
            "    x[0] = 0.0\n"
            "def get_force():\n"
            "    if 'force' not in _CACHE:\n"
            "        @wp.kernel\n"
            "        def force(x: wp.array(dtype=float)):\n"
            "            x[0] = 1.0\n"
            "        _CACHE['force'] = force\n"
            "    return _CACHE['force']\n"
            "def compute_energy(x):\n"
            "    wp.launch(energy, dim=1, inputs=[x])\n"
            "def compute_forces(x):\n"
            "    wp.launch(get_force(), dim=1, inputs=[x])\n"
        ),
        "app.py": (
            "from lib import pairs\n"
            "def main(x):\n"
            "    pairs.compute_forces(x)\n"
            "    pairs.compute_energy(x)\n"
        ),
    }
    project = project_of(tmp_path / "ordered", files)
    file, force = _kernel(project, "force")
    assert project.launched_apart(file, force, "lib.pairs") is None  # main() makes `force` before energy's launch
    files["app.py"] += "def other(x):\n    pairs.compute_energy(x)\n"  # another way to energy's launch
    project = project_of(tmp_path / "apart", files)
    file, force = _kernel(project, "force")
    apart = project.launched_apart(file, force, "lib.pairs")
    assert apart is not None and apart.launch.ctx.scope == "compute_energy"


def test_a_cache_dict_read_with_a_literal_key_gives_what_was_stored_under_it(tmp_path):
    project = project_of(tmp_path, LAZY)
    file = next(f for f in project.files if f.module == "lib.pairs")
    call = next(c for c in project.calls_in(file, "compute_forces") if c.callee.endswith("launch"))
    # _CACHE['force'] holds force only: virial and stress were stored under other literal keys
    assert [k.name for _, k in project.find_kernels(file, "compute_forces", call.bound("kernel"))] == ["force"]


def test_kernels_stored_by_a_dict_comprehension_or_a_loop(tmp_path):
    project = project_of(tmp_path, {
        "lib/__init__.py": "",
        "lib/table.py": (
            "import warp as wp\n"
            "def make_scaled(n: int):\n"
            "    @wp.kernel\n"
            "    def scaled(x: wp.array(dtype=float)):\n"
            "        x[0] = float(n)\n"
            "    return scaled\n"
            "def make_shifted(n: int):\n"
            "    @wp.kernel\n"
            "    def shifted(x: wp.array(dtype=float)):\n"
            "        x[0] = x[0] + float(n)\n"
            "    return shifted\n"
            "SCALED = {n: make_scaled(n) for n in (1, 2)}\n"
            "SHIFTED = {}\n"
            "for n in (1, 2):\n"
            "    SHIFTED[n] = make_shifted(n)\n"
            "def run(x, n):\n"
            "    wp.launch(SCALED[n], dim=1, inputs=[x])\n"
            "    wp.launch(SHIFTED[n], dim=1, inputs=[x])\n"
        ),
    })
    for name in ("scaled", "shifted"):
        file, kernel = _kernel(project, name)
        assert [call.ctx.scope for _, call in project.kernel_launches(file, kernel)] == ["run"]
        # made at import, the loop included (it launches nothing): before any launch
        assert project.runs_before_launches(project.fqname(file, kernel.ctx.scope))


def test_parameter_values_through_callers(tmp_path):
    project = project_of(tmp_path, {
        "lib/__init__.py": "",
        "lib/ewald.py": (
            "import warp as wp\n"
            "def get_kernel(dtype, charge_grad: bool, has_force: bool = False):\n"
            "    @wp.kernel(module=f'lib.ewald_{dtype}')\n"
            "    def ewald(x: wp.array(dtype=dtype)):\n"
            "        if wp.static(charge_grad or has_force):\n"
            "            x[0] = x[0]\n"
            "    return ewald\n"
            "def _ewald(x, charge_grad):\n"
            "    wp.launch(get_kernel(x.dtype, charge_grad), dim=1, inputs=[x])\n"
            "def energy(x):\n"
            "    _ewald(x, False)\n"
            "def grads(x):\n"
            "    _ewald(x, True)\n"
            "def again(x):\n"
            "    _ewald(x, False)\n"
        ),
    })
    file = next(f for f in project.files if f.module == "lib.ewald")
    fn = file.functions["get_kernel"]
    # through _ewald's own parameter to its three call sites: two values, each at the first call writing it
    found = [(value, call.ctx.scope) for value, _, call in project.parameter_values(file, fn, "charge_grad")]
    assert found == [(False, "energy"), (True, "grads")]
    # left to its default at the one call: one value
    assert [value for value, _, _ in project.parameter_values(file, fn, "has_force")] == [False]


def test_parameters_reaching_a_name_built_in_place_and_under_tests(tmp_path):
    # the module name is a list filled by `.append` under `if` tests, and a local bound only under a test:
    # both read the parameters of those tests (the harmless shape of a name that does encode every axis)
    project = project_of(tmp_path, {
        "lib/__init__.py": "",
        "lib/scale.py": (
            "import warp as wp\n"
            "def _module_name(kind, dtype, suffix, tail):\n"
            "    return f'lib.scale.{kind}_{dtype}_{suffix}_{tail}'\n"
            "def get_scale(dtype, scale_pos: bool, scale_charge: bool, mode: int, unused: int):\n"
            "    parts = ['scale']\n"
            "    if scale_pos:\n"
            "        parts.append('pos')\n"
            "    if scale_charge:\n"
            "        parts.extend(['charge'])\n"
            "    tail = 'plain'\n"
            "    if mode > 1:\n"
            "        tail = 'wide'\n"
            "    name = _module_name('scale', dtype=dtype, suffix='_'.join(parts), tail=tail)\n"
            "    @wp.kernel(module=name)\n"
            "    def scale(x: wp.array(dtype=dtype)):\n"
            "        if wp.static(scale_pos):\n"
            "            x[0] = x[0]\n"
            "    return scale\n"
        ),
    })
    file, kernel = _kernel(project, "scale")
    params, complete = project.layer.evaluator.parameters_reaching(file, kernel.module_value, "get_scale")
    assert complete
    assert params == {("get_scale", p) for p in ("dtype", "scale_pos", "scale_charge", "mode")}


def test_contents_across_calls_needs_two_distinct_known_values_to_vary(tmp_path):
    def factory(name):
        return (f"def {name}(c, module='unique'):\n    @wp.kernel(module=module)\n"
                f"    def k_{name}(a: wp.array(dtype=float)):\n        a[0] = c\n    return k_{name}\n")

    project = project_of(tmp_path, {"m.py": (
        "import warp as wp\n"
        "@wp.kernel\ndef top(a: wp.array(dtype=float)):\n    a[0] = 1.0\n"
        + "".join(factory(n) for n in ("each", "loop", "same", "run_time", "mixed", "passed_on", "nobody"))
        + "def relay(c):\n    return passed_on(c)\n"
        "def run(x, n):\n"
        "    each(2.0); each(3.0)\n"
        "    for c in (2.0, 3.0):\n        loop(c)\n"
        "    same(2.0); same(2.0)\n"
        "    run_time(x.shape[0]); run_time(n)\n"
        "    mixed(2.0); mixed(n)\n"
        "    relay(2.0); relay(4.0)\n"
    )})
    contents = {k.name: project.contents_across_calls(f, k) for f in project.files for k in f.kernels}
    assert contents == {
        "top": CallContents.ONE,  # made at import
        "k_each": CallContents.SEVERAL, "k_loop": CallContents.SEVERAL, "k_passed_on": CallContents.SEVERAL,
        "k_same": CallContents.ONE,
        "k_run_time": CallContents.UNKNOWN,  # values computed at run time may all be the same
        "k_mixed": CallContents.UNKNOWN,  # one literal and one unknown value: no proof of two contents
        "k_nobody": CallContents.NOT_CALLED,  # a library's factory: its users choose
    }

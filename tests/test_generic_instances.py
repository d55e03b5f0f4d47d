"""The layer's facts about generic kernels' instances (warplint/semantic/generics.py, through Project):
where wp.overload registers them and whether that runs at import, which kernel each statement launches,
which launch of a module can run before a call, and a generic kernel's launches in source and run order."""

import os

from warplint.semantic import generics
from warplint.testing import lint_tree, project_of

HEADER = "from typing import Any\nimport functools\nimport warp as wp\n"
KERNELS = (
    "@wp.kernel\ndef plain(a: wp.array(dtype=float)):\n    a[0] = 1.0\n"
    "@wp.kernel\ndef gen(a: wp.array(dtype=Any)):\n    a[0] = a[0]\n"
    "@wp.kernel\ndef other(a: wp.array(dtype=Any)):\n    a[0] = a[0]\n"
)




def _file(project, suffix):
    return next(f for f in project.files if f.path.endswith(suffix))


def _kernel(file, name):
    return next(k for k in file.kernels if k.name == name)


def _call(file, callee_suffix, scope, nth=0):
    return [c for c in file.calls if c.callee.endswith(callee_suffix) and c.ctx.scope == scope][nth]


def test_registrations_at_import_and_at_run_time(tmp_path):
    project = project_of(tmp_path, {"m.py": HEADER + KERNELS + (
        "wp.overload(gen, [wp.array(dtype=wp.float32)])\n"            # module level: at import
        "def register(dtype):\n    wp.overload(gen, [wp.array(dtype=dtype)])\n"
        "register(wp.float64)\n"                                        # a helper called at module level
        "@functools.cache\ndef get(dtype):\n    return wp.overload(other, [wp.array(dtype=dtype)])\n"
        "def run(a):\n    wp.launch(get(wp.float32), dim=1, inputs=[a])\n"  # only called at run time
    )})
    f = _file(project, "m.py")
    gen = project.overload_registrations(f, _kernel(f, "gen"))
    assert [(r.span.line, r.at_import) for r in gen] == [(13, True), (15, True)]
    other = project.overload_registrations(f, _kernel(f, "other"))
    assert [(r.span.line, r.at_import) for r in other] == [(19, False)]
    assert project.overload_registrations(f, _kernel(f, "plain")) == []


def test_registration_through_a_kernel_parameter_is_per_call_site(tmp_path):
    # `def reg(kernel, ...)`: the call at import registers gen, the one in a function registers other
    project = project_of(tmp_path, {"m.py": HEADER + KERNELS + (
        "def reg(kernel, dtype):\n    return wp.overload(kernel, [wp.array(dtype=dtype)])\n"
        "reg(gen, wp.float32)\n"
        "def late():\n    reg(other, wp.float32)\n"
    )})
    f = _file(project, "m.py")
    assert [r.at_import for r in project.overload_registrations(f, _kernel(f, "gen"))] == [True]
    assert [r.at_import for r in project.overload_registrations(f, _kernel(f, "other"))] == [False]


def test_overload_stub_is_registered_at_import(tmp_path):
    project = project_of(tmp_path, {"m.py": HEADER + KERNELS + (
        "@wp.overload\ndef gen(a: wp.array(dtype=wp.float32)):\n    ...\n"
    )})
    f = _file(project, "m.py")
    (stub,) = project.overload_registrations(f, _kernel(f, "gen"))
    assert stub.call is None and stub.at_import


def test_kernel_timeline_names_the_kernel_each_statement_launches(tmp_path):
    project = project_of(tmp_path, {"m.py": HEADER + KERNELS + (
        "def run_kernel(kernel, a):\n    wp.launch(kernel, dim=1, inputs=[a])\n"
        "def helper(a):\n    wp.launch(plain, dim=1, inputs=[a])\n"
        "def run(a):\n    helper(a)\n    run_kernel(gen, a)\n    wp.load_module()\n"
        "def elsewhere(a):\n    run_kernel(other, a)\n"
    )})
    f = _file(project, "m.py")
    events = [(e.module, e.kernel[1] if e.kernel else None) for e in project.kernel_timeline(f, "run")]
    # the wrapper call launches the kernel it passes, not every kernel any call passes
    assert events == [("m", "plain"), ("m", "gen"), ("m", None)]


def test_launched_before_in_scope_in_callers_and_in_runner_order(tmp_path):
    project = project_of(tmp_path, {
        "m.py": HEADER + KERNELS + (
            "def step(a):\n    wp.launch(plain, dim=1, inputs=[a])\n    wp.launch(gen, dim=1, inputs=[a])\n"
            "def late(a):\n    wp.launch(other, dim=1, inputs=[a])\n"
            "def main(a):\n    step(a)\n    late(a)\n"
            "def alone(a):\n    wp.launch(other, dim=1, inputs=[a])\n    wp.launch(plain, dim=1, inputs=[a])\n"
        ),
        "_private.py": HEADER + KERNELS + (
            "def _step(a):\n    wp.launch(plain, dim=1, inputs=[a])\n"
            "def _alone(a):\n    wp.launch(other, dim=1, inputs=[a])\n"
        ),
        "test_m.py": HEADER + KERNELS + (
            "def test_a():\n    wp.launch(plain, dim=1, inputs=[None])\n"
            "def test_b():\n    wp.launch(gen, dim=1, inputs=[None])\n"
        ),
    })
    f = _file(project, "/m.py")
    not_gen = lambda k: k is None or k[1] != "gen"  # noqa: E731
    earlier = project.launched_before(f, _call(f, "launch", "step", 1), "m", not_gen)
    assert earlier is not None and earlier.call is _call(f, "launch", "step", 0) and earlier.through == ()
    # the launch of `other` in late(): step() ran before it in main()
    earlier = project.launched_before(f, _call(f, "launch", "late"), "m", lambda k: k is not None and k[1] != "other")
    assert earlier is not None and earlier.call is _call(f, "step", "main")
    assert [call for _, call in earlier.through] == [_call(f, "late", "main")]
    # alone() and step() are public functions of one library file: its users can call step() first
    earlier = project.launched_before(f, _call(f, "launch", "alone"), "m", lambda k: True)
    assert earlier is not None and earlier.peer == ("step", "alone") and earlier.call is _call(f, "launch", "step", 0)
    # nothing before the first launch of a private function no one calls, nor of a kernel the filter refuses
    p = _file(project, "_private.py")
    assert project.launched_before(p, _call(p, "launch", "_alone"), "_private", lambda k: True) is None
    assert project.launched_before(p, _call(p, "launch", "_step"), "_private", lambda k: k is not None
                                   and k[1] == "other") is None
    t = _file(project, "test_m.py")
    earlier = project.launched_before(t, _call(t, "launch", "test_b"), "test_m", not_gen)
    assert earlier is not None and earlier.runner == "test_a"


def test_launched_before_one_kernel_passes_over_runner_steps_that_cannot_launch_it(tmp_path):
    # asked for one kernel (`kernel=`), the runner's earlier steps are read only where that kernel can be launched:
    # its launches' functions and every caller of them, however far up (a test calling a helper of another file
    # that calls the function launching it); the answer is the one every step's timeline gives
    from warplint.semantic import generics

    project = project_of(tmp_path, {
        "kernels.py": HEADER + KERNELS,
        "helpers.py": HEADER + "import kernels\n" + (
            "def launch_gen(a):\n    wp.launch(kernels.gen, dim=1, inputs=[a])\n"
            "def warm(a):\n    launch_gen(a)\n"
            "def unrelated(a):\n    wp.launch(kernels.plain, dim=1, inputs=[a])\n"
        ),
        "test_a.py": HEADER + "import helpers\n" + (
            "def test_warm():\n    helpers.warm(wp.zeros(1, dtype=wp.float32))\n"
            "def test_unrelated():\n    helpers.unrelated(wp.zeros(1, dtype=float))\n"
        ),
        "test_b.py": HEADER + "import kernels\n" + (
            "def test_late():\n    wp.launch(kernels.gen, dim=1, inputs=[wp.zeros(1, dtype=wp.float64)])\n"
        ),
    })
    facts = project._facts
    k = _file(project, "kernels.py")
    key = generics.kernel_key(facts, k, _kernel(k, "gen"))
    t = _file(project, "test_b.py")
    call = _call(t, "launch", "test_late")
    launching = generics._scopes_launching(facts, key).scopes
    a = _file(project, "test_a.py")
    assert (id(a), "test_warm") in launching and (id(a), "test_unrelated") not in launching
    found = generics.launched_before(facts, t, call, "kernels", kernel=key)
    every_step = _first_event_of_every_step(facts, t, call, lambda event: event.kernel == key)
    assert found is not None and found.runner == "test_warm" and found.call is every_step


def _first_event_of_every_step(facts, file, call, matches):
    """The first event of the runner's earlier steps that ``matches``, every step's timeline built (what
    ``launched_before`` answers from the steps, without passing any over)."""
    from warplint.semantic import generics

    for step in facts.runner_steps_before(file, call.ctx.scope):
        for event in generics.kernel_timeline(facts, step.file, step.scope):
            if step.runs_first(event.call.ctx) and matches(event):
                return event.call
    return None


def test_launched_before_a_module_lists_runner_steps_only_in_files_that_can_reach_it(tmp_path):
    # asked for any kernel of a module (or a load), the runner's earlier steps are listed only in the test files
    # (and their conftest.py files) that hold code able to launch a kernel of it or to load a module: a load's
    # modules can be decided by its caller, so every load counts. The answer is the one every step's timeline gives.
    from warplint.semantic import generics

    project = project_of(tmp_path, {
        "kernels.py": HEADER + KERNELS,
        "other.py": HEADER + "@wp.kernel\ndef k(a: wp.array(dtype=float)):\n    pass\n",
        "helpers.py": HEADER + "import kernels, other\n" + (
            "def preload(name):\n    wp.load_module(name)\n"
            "def elsewhere(a):\n    wp.launch(other.k, dim=1, inputs=[a])\n"
        ),
        "conftest.py": HEADER + "import pytest, helpers\n" + (
            "@pytest.fixture\ndef loaded():\n    helpers.preload('kernels')\n    yield\n"
        ),
        "test_a.py": HEADER + "import helpers\n" + (
            "def test_elsewhere():\n    helpers.elsewhere(wp.zeros(1, dtype=float))\n"
        ),
        "test_b.py": HEADER + "import helpers\n" + (
            "def test_uses(loaded):\n    pass\n"
        ),
        "test_c.py": HEADER + "import kernels\n" + (
            "def test_late():\n    wp.launch(kernels.gen, dim=1, inputs=[wp.zeros(1, dtype=wp.float64)])\n"
        ),
    })
    facts = project._facts
    t, a, conftest = (_file(project, name) for name in ("test_c.py", "test_a.py", "conftest.py"))
    call = _call(t, "launch", "test_late")
    reaching = generics._scopes_reaching(facts, "kernels")
    assert (id(conftest), "loaded") in reaching.scopes and id(a) not in reaching.files
    listed = facts.runner_steps_in(t, "test_late", reaching.files)
    assert [(s.file.path, s.scope) for s in listed] == [(conftest.path, "loaded")]
    every = facts.runner_steps_before(t, "test_late")
    assert all(s in every for s in listed) and (a.path, "test_elsewhere") in [(s.file.path, s.scope) for s in every]
    found = generics.launched_before(facts, t, call, "kernels", lambda _kernel: True)
    every_step = _first_event_of_every_step(facts, t, call, lambda event: event.module in ("kernels", "*"))
    assert found is not None and found.runner == "loaded" and found.call is every_step


def test_signature_compares_literal_types_only(tmp_path):
    # types keyed as Warp takes them: Python's `float` as a dtype is `wp.float32`, `wp.vec3` is `wp.vec3f`, and so
    # is `wp.types.vector(3, float)`
    project = project_of(tmp_path, {"m.py": HEADER + KERNELS + (
        "wp.overload(gen, [wp.array(dtype=wp.float32)])\n"
        "def run(dtype):\n"
        "    wp.overload(gen, [wp.array(dtype=wp.float32)])\n"
        "    wp.overload(gen, [wp.array(dtype=wp.float64)])\n"
        "    wp.overload(gen, [wp.array(dtype=dtype)])\n"
        "    wp.overload(gen, [wp.array(dtype=float)])\n"
        "    wp.overload(gen, [wp.array(dtype=wp.vec3)])\n"
        "    wp.overload(gen, [wp.array(dtype=wp.types.vector(3, float))])\n"
        "    wp.overload(gen, [wp.array(dtype=wp.types.vector(3, wp.float64))])\n"
    )})
    f = _file(project, "m.py")
    first, same, other, varies, python, vec3, made, made64 = project.overload_registrations(f, _kernel(f, "gen"))
    assert first.signature is not None and first.signature == same.signature == python.signature
    assert other.signature is not None and other.signature != first.signature
    assert varies.signature is None  # a parameter: not one known type
    assert vec3.signature is not None and vec3.signature == made.signature != made64.signature
    assert made64.signature is not None and vec3.signature != first.signature


def test_getter_called_at_import_and_at_run_time_is_listed_for_both(tmp_path):
    project = project_of(tmp_path, {"m.py": HEADER + KERNELS + (
        "@functools.cache\ndef get(dtype):\n    return wp.overload(gen, [wp.array(dtype=dtype)])\n"
        "get(wp.float32)\n"                                                   # warmed up at import
        "def run(a):\n    wp.launch(get(a.dtype), dim=1, inputs=[a])\n"  # and called again at run time
        "def late_only(dtype):\n    return wp.overload(other, [wp.array(dtype=dtype)])\n"
        "def run2(a):\n    wp.launch(late_only(a.dtype), dim=1, inputs=[a])\n"
    )})
    f = _file(project, "m.py")
    assert [r.at_import for r in project.overload_registrations(f, _kernel(f, "gen"))] == [True, False]
    assert [r.at_import for r in project.overload_registrations(f, _kernel(f, "other"))] == [False]


# ---------------------------------------------------------------------------------------------- argument types
TYPES = HEADER + (
    "import numpy as np\n"
    "TABLE = {np.float32: wp.float32, np.float64: wp.float64}\n"
    "ONE = {np.float32: wp.float32}\n"
    "NAMED = {'single': wp.float32, 'double': wp.float64}\n"
    "FILLED = {np.float32: wp.float32}\n"
    "FILLED[np.float16] = wp.float16\n"
    "def dtype_of(x):\n    return TABLE[x.dtype.type]\n"
    "def make(x, dtype):\n    return wp.from_numpy(x, dtype=dtype)\n"
    "def run(x, flag, given):\n"
    "    a = wp.zeros(4, dtype=wp.float32)\n"              # line 13
    "    b = make(x, dtype_of(x))\n"                        # a dtype looked up in a table by a run-time key
    "    c = wp.zeros(4, dtype=ONE[x.dtype.type])\n"        # a table of one entry
    "    d = wp.empty(4, dtype=NAMED['double'])\n"          # a key the evaluator knows
    "    e = wp.zeros_like(b)\n"
    "    f = given\n"                                       # passed in: not known
    "    g = 2.0 if flag else wp.float64(2.0)\n"
    "    h = wp.zeros(4, dtype=TABLE[x.dtype.type] if flag else np.float16)\n"
    "    i = wp.zeros(4, dtype=FILLED[x.dtype.type])\n"     # a table filled later: not only its literal
)


def _types_of(project, file, name):
    from warplint.semantic import arg_types

    (assignment,) = project.name_assignments(file, "run", name)
    return arg_types.value_types(project.layer, file, assignment.value, "run")


def test_value_types_follow_makers_names_and_dtype_tables(tmp_path):
    project = project_of(tmp_path, {"m.py": TYPES})
    f = _file(project, "m.py")
    both = frozenset({"array[warp.float32]", "array[warp.float64]"})
    assert _types_of(project, f, "a").one == "array[warp.float32]"
    b = _types_of(project, f, "b")
    assert b.names == both and b.several and b.one is None
    assert _types_of(project, f, "c").one == "array[warp.float32]"
    assert _types_of(project, f, "d").one == "array[warp.float64]"
    assert _types_of(project, f, "e").names == both
    assert not _types_of(project, f, "f").known
    g = _types_of(project, f, "g")
    assert g.names == frozenset({"warp.float32", "warp.float64"}) and g.several
    h = _types_of(project, f, "h")
    assert not h.known and not h.several  # one branch is not known: other types are possible
    i = _types_of(project, f, "i")  # a table filled item by item at import holds what was stored
    assert i.names == frozenset({"array[warp.float32]", "array[warp.float16]"}) and i.several


def test_launch_argument_types_in_parameter_order(tmp_path):
    from warplint.semantic import arg_types

    project = project_of(tmp_path, {"m.py": TYPES + KERNELS + (
        "def go(x):\n    args = [wp.zeros(4, dtype=TABLE[x.dtype.type])]\n"
        "    wp.launch(gen, dim=1, inputs=args, outputs=[wp.zeros(4, dtype=int)])\n"
    )})
    f = _file(project, "m.py")
    (launch,) = [ln for ln in project.launches(f) if ln.kernel.name == "gen"]
    first, second = arg_types.launch_argument_types(project.layer, launch)
    assert first.several and second.one == "array[warp.int32]"


# ---------------------------------------------------------------------------------------------- WC106's locations
def _wc106(tmp_path, source):

    (tmp_path / "m.py").write_text(source)
    return [d for d in lint_tree(str(tmp_path), ("WC106",)) if d.code == "WC106"]


def _lines(found):
    return sorted(d.span.line for d in found)


def test_wc106_reports_at_every_late_launch_and_names_what_loaded_first(tmp_path):
    found = _wc106(tmp_path, HEADER + KERNELS + (
        "def a(x):\n    wp.launch(plain, dim=1, inputs=[x])\n    wp.launch(gen, dim=1, inputs=[x])\n"  # 13-15
        "def b(x):\n    wp.launch(plain, dim=1, inputs=[x])\n    wp.launch(gen, dim=1, inputs=[x])\n"  # 16-18
    ))
    assert _lines(found) == [15, 18]  # each late launch, where the program changes
    first = min(found, key=lambda d: d.span.line)
    assert [(r.span.line, r.message.split(" here")[0]) for r in first.related] == [
        (8, "generic kernel `gen` is defined"), (14, "module `m` (3 kernels) launched"),
        (17, "module `m` (3 kernels) launched"), (18, "`gen` launched")]
    assert ".py:" not in first.message


def test_wc106_reports_at_every_run_time_overload(tmp_path):
    found = _wc106(tmp_path, HEADER + KERNELS + (
        "def a(x):\n    wp.launch(plain, dim=1, inputs=[x])\n"  # 13-14
        "    wp.launch(wp.overload(gen, [wp.array(dtype=wp.float32)]), dim=1, inputs=[x])\n"  # 15
        "    wp.launch(wp.overload(gen, [wp.array(dtype=wp.float64)]), dim=1, inputs=[x])\n"  # 16
    ))
    assert _lines(found) == [15, 16]
    assert [r.span.line for r in found[0].related] == [8, 14, 16]


def test_wc106_reports_at_every_launch_with_a_new_type(tmp_path):
    found = _wc106(tmp_path, HEADER + KERNELS + (
        "def a(n):\n"
        "    wp.launch(gen, dim=n, inputs=[wp.zeros(n, dtype=wp.float32)])\n"  # 14
        "    wp.launch(gen, dim=n, inputs=[wp.zeros(n, dtype=wp.float64)])\n"  # 15: a second type
        "    wp.launch(gen, dim=n, inputs=[wp.zeros(n, dtype=wp.float32)])\n"  # 16: an instance it has
        "    wp.launch(gen, dim=n, inputs=[wp.zeros(n, dtype=wp.float16)])\n"  # 17: a third
    ))
    assert _lines(found) == [15, 17]
    assert [r.span.line for r in found[0].related] == [8, 14, 17, 8]  # the last: why, at the kernel
    assert "wp.float32" in found[0].related[-1].message and "wp.float64" in found[0].related[-1].message


def test_wc106_reports_at_the_wrappers_call_and_names_the_launch_inside(tmp_path):
    # the kernel is picked from a family object and launched by a helper: the helper's call is where the late
    # launch is made from, and the helper's own wp.launch is named as well
    (found,) = _wc106(tmp_path, HEADER + KERNELS + (
        "def step(x):\n    wp.launch(plain, dim=1, inputs=[x])\n    run(gen, x)\n"  # 13-15
        "def run(kernel, x):\n    wp.launch(kernel, dim=1, inputs=[x])\n"  # 16-17
    ))
    assert found.span.line == 15
    assert [(r.span.line, r.message.split(" here")[0]) for r in found.related] == [
        (8, "generic kernel `gen` is defined"), (14, "module `m` (3 kernels) launched"),
        (17, "the launch inside the wrapper")]


def test_wc106_a_generic_kernel_a_factory_makes_at_import_with_others(tmp_path):
    # made together by one factory before anything runs: no late creation for WC101 to report, but the first
    # launch of the generic one comes after the module loaded
    found = _wc106(tmp_path, HEADER + (
        "def make_ops():\n"
        "    @wp.kernel\n    def scale(x: wp.array(dtype=Any)):\n        x[0] = x[0] + x[0]\n"
        "    @wp.kernel\n    def clear(x: wp.array(dtype=float)):\n        x[0] = 0.0\n"
        "    return scale, clear\n"
        "SCALE, CLEAR = make_ops()\n"
        "def run(x):\n    wp.launch(CLEAR, dim=1, inputs=[x])\n    wp.launch(SCALE, dim=1, inputs=[x])\n"
    ))
    assert [d.message.split(" rebuilds")[0] for d in found] == ["the first launch of kernel `scale`"]
    assert found[0].span.line == found[0].related[-1].span.line + 1  # the late launch, after CLEAR's


def test_wc106_a_factory_called_after_a_launch_is_left_to_wp101(tmp_path):
    # created after the module loaded: its creation is the rebuild (WC101's), not its instance
    assert not _wc106(tmp_path, HEADER + (
        "@wp.kernel\ndef clear(x: wp.array(dtype=float)):\n    x[0] = 0.0\n"
        "def make():\n    @wp.kernel\n    def scale(x: wp.array(dtype=Any)):\n        x[0] = x[0] + x[0]\n"
        "    return scale\n"
        "def run(x):\n    wp.launch(clear, dim=1, inputs=[x])\n    wp.launch(make(), dim=1, inputs=[x])\n"
    ))


def test_a_registration_on_an_object_a_factory_two_calls_deep_makes_anew_is_not_kept(tmp_path):
    # `outer(c)` returns `build`, which defines the generic kernel: `wp.overload(outer(1.0)(), ...)` registers on
    # an object nothing keeps (freed whenever the cycle collector runs: Warp 1.19 CPU, `python` of this shape
    # built twice, oracle s1047334711-0168), so its instance is not counted for the launches' new objects;
    # one registered on an object a name keeps is (one build)
    factory = (
        "def outer(c):\n    def build():\n"
        "        @wp.kernel\n        def k(a: wp.array(dtype=Any)):\n            a[0] = a[0] + a[0]\n"
        "        return k\n    return build\n"
    )
    launches = (
        "    wp.launch(outer(1.0)(), dim=1, inputs=[wp.zeros(1, dtype=wp.float32)])\n"
        "    wp.launch(outer(1.0)(), dim=1, inputs=[wp.zeros(1, dtype=wp.float64)])\n"
    )
    project = project_of(tmp_path, {
        "dropped.py": HEADER + factory + "def main():\n"
        + "".join(f"    wp.overload(outer(1.0)(), {{'a': wp.array(dtype=wp.{t})}})\n" for t in ("float32", "float64"))
        + launches,
        "kept.py": HEADER + factory + "def main():\n    kept = outer(1.0)()\n"
        + "".join(f"    wp.overload(kept, {{'a': wp.array(dtype=wp.{t})}})\n" for t in ("float32", "float64"))
        + launches,
    })
    dropped, kept = _file(project, "dropped.py"), _file(project, "kept.py")
    assert [r.kept for r in project.overload_registrations(dropped, _kernel(dropped, "k"))] == [False, False]
    assert [r.kept for r in project.overload_registrations(kept, _kernel(kept, "k"))] == [True, True]
    assert project.remade_with_new_types(dropped, _kernel(dropped, "k")) is not None
    assert project.remade_with_new_types(kept, _kernel(kept, "k")) is None
    found = [(os.path.basename(d.path), d.span.line) for d in lint_tree(str(tmp_path), ("WC106",)) if d.code == "WC106"]
    assert found == [("dropped.py", 15)]


def test_a_registering_helper_with_many_callers_registers_each_callers_kernel(tmp_path):
    # register(kernel, dtypes) is called for more kernels than the evaluator follows call sites of one
    # parameter: each call still registers its own kernel, and WC106 sees those registrations
    kernels = "".join(f"@wp.kernel\ndef k{i}(a: wp.array(dtype=Any)):\n    a[0] = a[0]\n" for i in range(20))
    registered = "".join(f"K{i} = register(k{i}, (wp.float32, wp.float64))\n" for i in range(20))
    project = project_of(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/dispatch.py": HEADER + ("def register(kernel, dtypes):\n    out = {}\n    for t in dtypes:\n"
                                     "        out[t] = wp.overload(kernel, [wp.array(dtype=t)])\n    return out\n"),
        "pkg/ops.py": HEADER + "from pkg.dispatch import register\n" + kernels + registered + (
            "def run(n):\n    wp.launch(k3, dim=n, inputs=[wp.zeros(n, dtype=wp.float32)])\n"
            "    wp.launch(k3, dim=n, inputs=[wp.zeros(n, dtype=wp.float64)])\n"),
    })
    ops = _file(project, "ops.py")
    assert all(r.at_import for r in project.overload_registrations(ops, _kernel(ops, "k3")))
    assert len(project.overload_registrations(ops, _kernel(ops, "k3"))) == 1
    assert not [d for d in lint_tree(str(tmp_path), ("WC106",)) if d.code == "WC106"]


def test_wc106_tells_apart_two_factories_local_kernels_of_one_name(tmp_path):
    # each factory wraps its own local `_kernel`: two kernels, each named at its own registration
    found = _wc106(tmp_path, HEADER + (
        "def make_a():\n    def _kernel(x: wp.array(dtype=Any)):\n        x[0] = x[0]\n"  # 4-6
        "    return wp.kernel(_kernel, enable_backward=False)\n"  # 7
        "def make_b():\n    def _kernel(y: wp.array(dtype=Any)):\n        y[0] = y[0] + y[0]\n"  # 8-10
        "    return wp.kernel(_kernel, enable_backward=False)\n"  # 11
        "@wp.kernel\ndef other(a: wp.array(dtype=float)):\n    a[0] = 1.0\n"  # 12-14
        "def run(a, b):\n    wp.launch(other, dim=1, inputs=[a])\n"  # 15-16
        "    wp.overload(make_a(), [wp.array(dtype=a.dtype)])\n"  # 17
        "    wp.overload(make_b(), [wp.array(dtype=b.dtype)])\n"  # 18
    ))
    assert _lines(found) == [17, 18]
    assert [next(r.span.line for r in d.related if "defined" in r.message) for d in found] == [7, 11]


def test_wc106_one_getter_registering_two_factories_kernels_names_both_definitions(tmp_path):
    # a cached getter builds either factory's local `_kernel` (a dispatcher) and registers its overload at run
    # time: one late site, two kernels with one message; the finding there names both definitions (the
    # engine keeps one finding per site and message, so a finding per kernel lost the second definition)
    (found,) = _wc106(tmp_path, HEADER + (
        "def make_a():\n    def _kernel(x: wp.array(dtype=Any)):\n        x[0] = x[0]\n"  # 4-6
        "    return wp.kernel(_kernel, enable_backward=False)\n"  # 7
        "def make_b():\n    def _kernel(y: wp.array(dtype=Any)):\n        y[0] = y[0] + y[0]\n"  # 8-10
        "    return wp.kernel(_kernel, enable_backward=False)\n"  # 11
        "def make(batched):\n    return make_b() if batched else make_a()\n"  # 12-13
        "_KERNELS = {}\n"  # 14
        "def get(batched, dtype):\n    if batched not in _KERNELS:\n        _KERNELS[batched] = make(batched)\n"
        "    return wp.overload(_KERNELS[batched], [wp.array(dtype=dtype)])\n"  # 15-18
        "@wp.kernel\ndef other(a: wp.array(dtype=float)):\n    a[0] = 1.0\n"  # 19-21
        "def run(a, b):\n    wp.launch(other, dim=1, inputs=[a])\n"  # 22-23
        "    wp.launch(get(True, b.dtype), dim=1, inputs=[b])\n"  # 24
        "    wp.launch(get(False, b.dtype), dim=1, inputs=[b])\n"  # 25
    ))
    assert found.span.line == 18
    assert [r.span.line for r in found.related if "defined" in r.message] == [7, 11]


def test_wc106_takes_genericity_from_warp_not_from_the_word_any(tmp_path):
    # wp.array(ndim=1) without a dtype is generic in Warp: two element types launched late are two instances
    found = _wc106(tmp_path, HEADER + (
        "@wp.kernel\ndef plain(a: wp.array(dtype=float)):\n    a[0] = 1.0\n"  # 4-6
        "@wp.kernel\ndef gen(a: wp.array(ndim=1)):\n    a[0] = a[0]\n"  # 7-9
        "def a(n):\n"
        "    wp.launch(gen, dim=n, inputs=[wp.zeros(n, dtype=wp.float32)])\n"  # 11
        "    wp.launch(gen, dim=n, inputs=[wp.zeros(n, dtype=wp.float64)])\n"  # 12: a second type
    ))
    assert _lines(found) == [12]


def test_generic_launches_one_per_project_call_in_source_then_run_order(tmp_path):
    # the library's public scale() launches gen through _launch(); the project calls it twice. all_launches also
    # keeps the _launch() call inside scale() unbound (for the library's users): the project's calls pass
    # through it, so the fact leaves that copy out
    project = project_of(tmp_path, {
        "lib.py": HEADER + (
            "@wp.kernel\ndef gen(a: wp.array(dtype=Any)):\n    a[0] = a[0]\n"
            "def _launch(kernel, a):\n    wp.launch(kernel, dim=1, inputs=[a])\n"
            "def scale(a, kernel=gen):\n    _launch(kernel, a)\n"
        ),
        "app.py": HEADER + "from lib import scale\n"
        "def _late():\n    scale(wp.zeros(1, dtype=wp.float64))\n"
        "def main():\n    scale(wp.zeros(1, dtype=wp.float32))\n    _late()\n",
    })
    lib, app = _file(project, "lib.py"), _file(project, "app.py")
    gen = _kernel(lib, "gen")
    origins = {(launch.origin[0].path, launch.origin[1].span.line) for launch in project.all_launches()}
    assert (lib.path, 10) in origins  # the unbound copy is there
    # source order of the calls they are made from
    assert [(ln.origin[0].path, ln.origin[1].span.line) for ln in project.generic_launches(lib, gen)] == [
        (app.path, 6), (app.path, 8)]
    # main() launches float32 first, then _late() float64
    assert [ln.origin[1].span.line for ln in project.generic_launches_in_run_order(lib, gen)] == [8, 6]
    # where each launch of gen is made from, once each (the unbound copy too), with the wrapper's own launch
    assert [(o.file.path, o.call.span.line, o.inner[1].span.line if o.inner else None)
            for o in project.launch_origins(lib, gen)] == [(app.path, 6, 8), (app.path, 8, 8), (lib.path, 10, 8)]


def test_run_order_of_generic_launches_is_asked_only_where_their_types_differ(tmp_path):
    # a launched_before per launch is costly (28 % of a newton edit when asked for every generic kernel):
    # linting asks it for no kernel whose launches all have one type
    files = {"m.py": HEADER + KERNELS + (
        "def run():\n    wp.launch(gen, dim=1, inputs=[wp.zeros(1, dtype=wp.float32)])\n"
        "    wp.launch(gen, dim=1, inputs=[wp.zeros(1, dtype=wp.float32)])\n"
        "    wp.launch(other, dim=1, inputs=[wp.zeros(1, dtype=wp.float32)])\n"
        "    wp.launch(other, dim=1, inputs=[wp.zeros(1, dtype=wp.float64)])\n"
    )}
    project = project_of(tmp_path, files)
    f = _file(project, "m.py")
    asked = {key[1][1] for key in project.layer._asked if key[0] is generics._in_run_order.__wrapped__}  # by kernel key
    assert asked == {"other"}
    assert len(project.generic_launches_in_run_order(f, _kernel(f, "gen"))) == 2

"""The layer's facts about generic kernels' instances (warplint/semantic/generics.py, through Project):
where wp.overload registers them and whether that runs at import, which kernel each statement launches,
and which launch of a module can run before a call."""

from warplint.testing import project_of

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
    # nothing before the first launch of alone(), nor of a kernel the filter refuses
    assert project.launched_before(f, _call(f, "launch", "alone"), "m", lambda k: True) is None
    assert project.launched_before(f, _call(f, "launch", "step", 1), "m", lambda k: k is not None
                                   and k[1] == "other") is None
    t = _file(project, "test_m.py")
    earlier = project.launched_before(t, _call(t, "launch", "test_b"), "test_m", not_gen)
    assert earlier is not None and earlier.runner == "test_a"


def test_signature_compares_literal_types_only(tmp_path):
    project = project_of(tmp_path, {"m.py": HEADER + KERNELS + (
        "wp.overload(gen, [wp.array(dtype=wp.float32)])\n"
        "def run(dtype):\n"
        "    wp.overload(gen, [wp.array(dtype=wp.float32)])\n"
        "    wp.overload(gen, [wp.array(dtype=wp.float64)])\n"
        "    wp.overload(gen, [wp.array(dtype=dtype)])\n"
    )})
    f = _file(project, "m.py")
    first, same, other, varies = project.overload_registrations(f, _kernel(f, "gen"))
    assert first.signature is not None and first.signature == same.signature
    assert other.signature is not None and other.signature != first.signature
    assert varies.signature is None  # a parameter: not one known type

"""The devices layer's facts WC303 (and every CUDA-only rule) reads: device tests read from the test's
expression, block sizes a later binding replaces on CUDA, and calls a test expects to raise."""

import libcst as cst
import pytest

from warplint.extract import extract
from warplint.model import FileModel
from warplint.semantic.devices import CPU_ONLY, CUDA_ONLY, EITHER, condition_devices
from warplint.testing import project_of


def _model(source: str) -> FileModel:
    return extract(cst.parse_module(source), FileModel("m.py", "m"), text=source)


@pytest.mark.parametrize(("test", "holds", "otherwise"), [
    ('"cuda" in device', CUDA_ONLY, CPU_ONLY),
    ('"cuda" in str(device)', CUDA_ONLY, CPU_ONLY),
    ('"cuda" not in str(device)', CPU_ONLY, CUDA_ONLY),
    ('"cpu" in device', CPU_ONLY, CUDA_ONLY),
    ('device == "cpu"', CPU_ONLY, CUDA_ONLY),
    ('"cpu" == device', CPU_ONLY, CUDA_ONLY),
    ('device != "cpu"', CUDA_ONLY, CPU_ONLY),
    ('device == "cuda:1"', CUDA_ONLY, CPU_ONLY),
    ('device != "cuda"', EITHER, EITHER),  # "cuda:1" != "cuda"
    ('device in ("cuda", "cuda:0")', CUDA_ONLY, CPU_ONLY),
    ('str(device).startswith("cuda")', CUDA_ONLY, CPU_ONLY),
    ('device.startswith("cpu")', CPU_ONLY, CUDA_ONLY),
    ("wp.get_device(d).is_cuda", CUDA_ONLY, CPU_ONLY),
    ("device.is_cpu", CPU_ONLY, CUDA_ONLY),
    ("not device.is_cuda", CPU_ONLY, CUDA_ONLY),
    ("not (not device.is_cuda)", CUDA_ONLY, CPU_ONLY),
    ("device.is_cuda and blocks is None", CUDA_ONLY, EITHER),  # else: blocks may be given on CUDA
    ("blocks is None and n > 4 and device.is_cuda", CUDA_ONLY, EITHER),
    ("device.is_cuda or blocks is None", EITHER, CPU_ONLY),  # the other test may hold on the CPU
    ("device.is_cpu or d.is_cpu", CPU_ONLY, CUDA_ONLY),
    ("blocks is None", EITHER, EITHER),
    ('backend == "cuda_graph"', EITHER, EITHER),  # not a device's name
    ('mode == "fast"', EITHER, EITHER),
])
def test_device_tests_read_from_the_expression(test, holds, otherwise):
    model = _model(f"import warp as wp\ndef f(device, d, blocks, n, backend, mode):\n    if {test}:\n        x = 1\n"
                   "    else:\n        y = 2\n")
    x, y = (next(a for a in model.assignments if a.target.text == name) for name in "xy")
    assert (condition_devices(x.ctx), condition_devices(y.ctx)) == (holds, otherwise)


def test_a_later_binding_replaces_the_cpu_size_on_cuda(tmp_path):
    body = (
        "import warp as wp\n"
        "@wp.kernel\ndef k(a: wp.array(dtype=float)):\n    pass\n"
        "def run(a, device, blocks, items):\n"
        "    bs = 1\n"
        "    if device.is_cuda and blocks is None:\n"
        "        bs = 128\n"
        "    if blocks is None:\n"
        "        wp.launch(k, dim=1, inputs=[a], block_dim=bs, device=device)\n"  # 128 only
        "    wp.launch(k, dim=1, inputs=[a], block_dim=bs, device=device)\n"  # 1 when blocks is given
        "    other = 1\n"
        "    for item in items:\n"
        "        other = 64\n"
        "    wp.launch(k, dim=1, inputs=[a], block_dim=other, device=device)\n"  # the loop may not run
    )
    project = project_of(tmp_path, {"app.py": body})
    (file,) = [f for f in project.files if f.path.endswith("app.py")]
    sizes = [sorted(launch.block_dims.constants()) for launch in project.launches(file)]
    assert sizes == [[128], [1, 128], [1, 64]]


def test_calls_a_test_expects_to_raise():
    model = _model(
        "import pytest\nimport unittest\nimport warp as wp\n"
        "class T(unittest.TestCase):\n"
        "    def test_a(self):\n"
        "        with self.assertRaisesRegex(ValueError, 'at most'):\n"
        "            out = wp.zeros(1)\n"
        "            wp.launch(k, dim=1, inputs=[out], block_dim=1025)\n"
        "        with self.subTest(), self.assertRaises((TypeError, RuntimeError)):\n"
        "            with wp.ScopedDevice('cpu'):\n"
        "                wp.launch(k, dim=1)\n"
        "        with pytest.raises(err.Mine): wp.launch(k, dim=2)\n"
        "        with self.assertRaises(TypeError):\n"
        "            @wp.overload\n"
        "            def k(x: float) -> float: ...\n"
        "        with pytest.raises(TypeError):\n"
        "            @decorate(wp.launch(k, dim=3))\n"
        "            def later():\n"
        "                wp.launch(k, dim=4)\n"
        "        wp.launch(k, dim=5)\n"
    )
    found = {(c.callee, c.span.line): c.ctx.expects_raise for c in model.calls if c.callee.startswith("warp.")}
    assert found == {
        ("warp.zeros", 7): (),  # runs before the statement that raises
        ("warp.launch", 8): ("ValueError",),
        ("warp.ScopedDevice", 10): (),
        ("warp.launch", 11): ("TypeError", "RuntimeError"),
        ("warp.launch", 12): ("err.Mine",),
        ("warp.launch", 17): ("TypeError",),  # a decorator runs with the def
        ("warp.launch", 19): (),  # the body runs later, if ever
        ("warp.launch", 20): (),
    }
    assert model.functions["T.test_a.k"].ctx.expects_raise == ("TypeError",)


def test_a_size_callers_outside_the_project_choose_varies(tmp_path):
    kernel = "import warp as wp\n@wp.kernel\ndef k(a: wp.array(dtype=float)):\n    pass\n"
    project = project_of(tmp_path, {
        "lib.py": kernel + "def op(a, n):\n    wp.launch(k, dim=1, inputs=[a], block_dim=n)\n"
                           "def tuned(a):\n    wp.launch(k, dim=1, inputs=[a], block_dim=vendor.pick(a))\n",
    })
    (file,) = [f for f in project.files if f.path.endswith("lib.py")]
    op, tuned = project.launches(file)
    assert op.block_dims.varies and not op.block_dims.constants()  # no call passes n: the caller's choice
    assert not tuned.block_dims.varies  # an external call's result: not known, not guessed

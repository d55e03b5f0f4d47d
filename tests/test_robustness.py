"""Generated and hostile inputs never crash the linter: each file yields findings or one WC000."""

import hypothesmith
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from warplint.config import Config
from warplint.engine import Session

WARP_HEADER = "import warp as wp\n"


def lint_one(tmp_path, name: str, data: bytes):
    path = tmp_path / name
    path.write_bytes(data)
    session = Session(Config(root=str(tmp_path), select=("ALL",)))
    return session.lint_paths([str(path)])


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(source=hypothesmith.from_grammar())
def test_generated_programs_do_not_crash(tmp_path_factory, source):
    tmp = tmp_path_factory.mktemp("gen")
    result = lint_one(tmp, "gen.py", (WARP_HEADER + source).encode("utf-8", "surrogatepass"))
    assert not result.errors
    for d in result.diagnostics:
        assert d.span.line >= 1 or d.code == "WC000"


WARP_SHAPES = st.sampled_from([
    "wp.launch(k, dim=1, inputs=[a], block_dim={n})\n",
    "wp.set_module_options({{'max_unroll': {n}}})\n",
    "wp.config.enable_backward = {b}\n",
    "@wp.kernel(module={m})\ndef k{n}(a: wp.array(dtype=float)):\n    a[0] = {n}.0\n",
    "def f{n}(x={m}):\n    @wp.kernel(module=x)\n    def g(a: wp.array(dtype=float)):\n"
    "        a[0] = x\n    return g\n",
    "try:\n    wp.load_module({m})\nexcept RuntimeError:\n    pass\n",
    "wp.force_load(device={m}, max_workers={n})\n",
    "wp.get_module({m}).options[{m}] = {n}\n",
    "os.environ['WARP_CACHE_PATH'] = tempfile.mkdtemp()\n",
    "setattr(wp.config, {m}, {n})\n",
])


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(parts=st.lists(st.tuples(WARP_SHAPES, st.integers(0, 1025), st.booleans(),
                                st.sampled_from(["None", "'unique'", "'m'", "__name__", "1", "[]", "f()"])),
                      min_size=1, max_size=8))
def test_warp_shaped_programs_do_not_crash(tmp_path_factory, parts):
    body = "".join(shape.format(n=n, b=b, m=m) for shape, n, b, m in parts)
    tmp = tmp_path_factory.mktemp("shape")
    result = lint_one(tmp, "shape.py", ("import os, tempfile\n" + WARP_HEADER + body).encode())
    assert not result.errors
    assert all(d.code != "WC000" for d in result.diagnostics), body


HOSTILE = {
    "empty.py": b"",
    "comment_only.py": b"# warp\n",
    "bom.py": b"\xef\xbb\xbfimport warp as wp\nwp.force_load()\n",
    "crlf.py": b"import warp as wp\r\nwp.force_load()\r\n",
    "nul.py": b"import warp as wp\n\x00\x00\n",
    "latin1_declared.py": b"# -*- coding: latin-1 -*-\nimport warp as wp\nx = '\xe9'\nwp.force_load()\n",
    "bad_coding.py": b"# -*- coding: no-such-codec -*-\nimport warp\n",
    "deep.py": b"import warp as wp\nx = " + b"(" * 5000 + b"1" + b")" * 5000 + b"\n",
    "long_line.py": b"import warp as wp\nx = [" + b"1," * 200000 + b"]\n",
    "tabs.py": b"import warp as wp\nif True:\n\twp.force_load()\n",
    "unterminated.py": b"import warp as wp\ns = '''never closed\n",
}


def test_hostile_files_each_give_findings_or_one_error(tmp_path):
    for name, data in HOSTILE.items():
        result = lint_one(tmp_path, name, data)
        assert not result.errors, name
        errors = [d for d in result.diagnostics if d.code == "WC000"]
        assert len(errors) <= 1, name
    # The ones that are valid Python are really checked.
    for name in ("bom.py", "crlf.py", "latin1_declared.py", "tabs.py"):
        codes = [d.code for d in lint_one(tmp_path, name, HOSTILE[name]).diagnostics]
        assert "WC501" in codes, name


def test_a_file_over_max_file_size_gets_one_finding(tmp_path, run_cli):
    (tmp_path / "pyproject.toml").write_text("[tool.warplint]\nmax-file-size = 1000\n")
    (tmp_path / "big.py").write_text("import warp as wp\n" + "x = 1\n" * 500)
    (tmp_path / "good.py").write_text("import warp as wp\nwp.force_load()\n")
    code, out, err = run_cli(".", "--format", "concise", "--no-cache", "-q")
    lines = sorted(out.splitlines())
    assert code == 1 and len(lines) == 2, (out, err)
    assert lines[0].startswith("big.py:1:1: WC000 ")
    assert "3,018 bytes, over the max-file-size of 1,000 bytes" in lines[0]
    assert lines[1].startswith("good.py:2:1: WC501 ")


def test_findings_on_one_line_are_bounded(tmp_path, run_cli):
    (tmp_path / "x.py").write_text("import warp as wp\n" + ";".join(["wp.force_load()"] * 20_000) + "\n")
    code, out, _ = run_cli("x.py", "--no-cache")
    assert code == 1
    assert out.count(": WC501 [") == 10
    assert out.count("(19990 more WC501 findings on this line not shown)") == 1
    # each shown source line is an excerpt, not the 320 kB line
    assert max(len(line) for line in out.splitlines()) < 400

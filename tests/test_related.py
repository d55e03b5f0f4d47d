"""Related locations travel as data: a text ``note:`` line, JSON ``related``, SARIF ``relatedLocations``."""

from __future__ import annotations

import json

KERNELS = (
    "import warp as wp\n\n"
    "@wp.kernel\ndef a(x: wp.array(dtype=float)):\n    x[0] = 1.0\n\n"
    "@wp.kernel\ndef b(x: wp.array(dtype=float)):\n    x[0] = 2.0\n"
)
RUN = (
    "import warp as wp\nfrom kernels import a, b\n\n"
    "def go(k, x, threads=256):\n    wp.launch(k, dim=1, inputs=[x], block_dim=threads)\n\n"
    "def run(x):\n    go(a, x)\n    go(b, x, 128)\n"
)


def project(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.warplint]\nselect = ['WC303']\n")
    (tmp_path / "kernels.py").write_text(KERNELS)
    (tmp_path / "run.py").write_text(RUN)


def test_related_locations_in_every_format(tmp_path, run_cli):
    project(tmp_path)
    code, out, _ = run_cli(".", "--no-cache", "--format", "json")
    (finding,) = json.loads(out)
    assert code == 1 and finding["code"] == "WC303" and "run.py:" not in finding["message"]
    assert finding["line"] == 9
    assert [(r["path"], r["line"], r["message"]) for r in finding["related"]] == [
        ("run.py", 8, "`a` launched at block_dim 256"), ("run.py", 5, "the launch inside the wrapper"),
        ("run.py", 9, "module `kernels` is launched at block_dim 128, 256: on CUDA the whole module compiles once per "
                      "block_dim; give the kernels that need another block size their own module")]

    _, out, _ = run_cli(".", "--no-cache", "--format", "sarif")
    (result,) = json.loads(out)["runs"][0]["results"]
    related = result["relatedLocations"]
    assert [r["id"] for r in related] == [0, 1, 2]
    assert related[0]["physicalLocation"]["artifactLocation"]["uri"] == "run.py"
    assert related[0]["physicalLocation"]["region"]["startLine"] == 8
    assert related[1]["message"]["text"] == "the launch inside the wrapper"

    _, out, _ = run_cli(".", "--no-cache")
    assert "  note: `a` launched at block_dim 256 at run.py:8:5\n" in out
    assert "  note: the launch inside the wrapper at run.py:5:5\n" in out


def test_unique_factory_default_relates_each_kernel_of_one_content(tmp_path):
    """WC301 stands at the `module="unique"` default (the edit that removes the defect) and relates the evidence:
    each kernel the factory makes with one content, at its definition; a kernel whose calls make two contents
    (a run-time specialisation, which a unique module is for) is not evidence."""
    from warplint.testing import lint_example

    source = (
        "import warp as wp\n\n\n"
        "def make_pair(offset, module=\"unique\"):\n"
        "    @wp.kernel(module=module)\n"
        "    def shift(a: wp.array(dtype=float)):\n"
        "        a[wp.tid()] = a[wp.tid()] + offset\n\n"
        "    @wp.kernel(module=module)\n"
        "    def clear(a: wp.array(dtype=float)):\n"
        "        a[wp.tid()] = 0.0\n\n"
        "    return shift, clear\n\n\n"
        "PAIRS = [make_pair(1.0), make_pair(-1.0)]\n"
    )
    (finding,) = lint_example(source, "WC301")
    lines = source.splitlines()
    assert lines[finding.span.line - 1].startswith("def make_pair(")
    assert [(lines[r.span.line - 1].strip(), r.message.split(" is made here")[0]) for r in finding.related] == [
        ("def clear(a: wp.array(dtype=float)):", "`clear`")]

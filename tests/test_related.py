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

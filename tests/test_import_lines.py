"""The one reader of import statements from a file's text (warplint/import_lines.py) and its three users:
the engine's choice of files to parse early and the module namer's evidence."""

import ast

import libcst as cst

from warplint.config import Config
from warplint.discovery import ProjectScope
from warplint.engine import Session, _import_line_names, _imported_names
from warplint.extract import extract
from warplint.import_lines import ImportLine, import_lines
from warplint.model import FileModel
from warplint.module_names import imports_of

# Every shape Python accepts that the callers meet; the commented-out ones are not imports.
SHAPES = '''import a.b, c as d
from e.f import (g,  # import q (a comment)
    h as i,
    # j,
)
from . import k
from .l.m import n as o
from .. import \\
    p, r
from s \\
    import t
import u, \\
    v.w
x = 1; import y; from z import *
# import commented_out
    # from commented import out
if True:
    from aa import bb
try:
    import cc.dd as ee
except ImportError:
    from .ff import gg
from .import hh
import_name = 2
important = (
    1)
def f():
    import ii
'''


def _parsed(source: str) -> list[ImportLine]:
    """What Python's own parser says ``source`` imports, shaped as the reader answers."""
    found: list[ImportLine] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [ImportLine(alias.name, (), 0) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            found.append(ImportLine(node.module or "", tuple(a.name for a in node.names), node.level))
    return found


def test_every_import_shape_reads_as_python_parses_it():
    read = list(import_lines(SHAPES))
    assert sorted(read, key=repr) == sorted(_parsed(SHAPES), key=repr)
    assert ImportLine("", ("p", "r"), 2) in read and ImportLine("s", ("t",), 0) in read
    assert not any("commented" in line.module for line in read)


def test_windows_line_endings_and_continuations():
    source = "from a \\\r\n    import (b,\r\n  c)\r\nimport d, \\\r\n e\r\n"
    assert list(import_lines(source)) == [ImportLine("a", ("b", "c"), 0), ImportLine("d", (), 0),
                                          ImportLine("e", (), 0)]


def test_relative_imports_resolve_against_the_files_package():
    line, = import_lines("from ..c import d\n")
    assert line.absolute("pkg.sub.mod", is_package=False) == "pkg.c"
    assert line.absolute("pkg.sub", is_package=True) == "pkg.c"
    dot, = import_lines("from . import e\n")
    assert dot.absolute("pkg.sub.mod", is_package=False) == "pkg.sub"


def test_the_engine_reads_from_the_text_what_the_model_will_hold():
    """``_import_line_names`` decides what is parsed early: it must name what the parse's imports name."""
    model = extract(cst.parse_module(SHAPES), FileModel("pkg/sub/mod.py", "pkg.sub.mod"), text=SHAPES)
    assert _import_line_names(SHAPES, "pkg.sub.mod", False) == _imported_names(model)


def test_the_module_namer_reads_continued_and_chained_statements():
    found, relative = imports_of("from s \\\n    import t\nx = 1; import y\nfrom .a import b\n")
    assert found == ["s", "s.t", "y"]
    assert relative


def test_a_literal_dynamic_import_is_an_import():
    # `importlib.import_module("a.b")` and `__import__("a.b")` import `a.b` as an import statement does (a loose
    # script's folder `a/` is its own code then); a name computed at run time is not read
    source = ("import importlib\nk = getattr(importlib.import_module('pkg.kernels'), 'k_1')\n"
              "m = __import__(\"other.mod\", fromlist=['x'])\nn = importlib.import_module(name)\n"
              "r = importlib.import_module('.rel', package='pkg')\n")
    assert list(import_lines(source)) == [ImportLine("importlib", (), 0), ImportLine("pkg.kernels", (), 0),
                                          ImportLine("other.mod", (), 0)]


def test_a_loose_script_is_indexed_with_the_folder_it_imports_dynamically(tmp_path):
    # the CLI lints `main.py` with its project (ProjectScope): `pkg/` is its own code, so the kernels landing in
    # module `sim` are known and dropping the error of loading `sim` loses nothing (it cannot raise)
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "kernels.py").write_text(
        "import warp as wp\n\n@wp.kernel(module='sim')\ndef k_1(a: wp.array(dtype=float)):\n    a[0] = 1.0\n")
    (tmp_path / "main.py").write_text(
        "import importlib\nimport warp as wp\n\ndef warm_up():\n    importlib.import_module('pkg.kernels')\n"
        "    try:\n        wp.load_module('sim')\n    except RuntimeError:\n        pass\n"
        "    try:\n        wp.load_module('simulation')\n    except RuntimeError:\n        pass\n")
    assert str(tmp_path / "pkg" / "kernels.py") in ProjectScope(Config(root=str(tmp_path))).files_for(
        str(tmp_path / "main.py"))
    session = Session(Config(root=str(tmp_path), select=("WC502",)))
    session.configure_cache(False)
    found = session.lint_paths([str(tmp_path / "main.py")], project_context=True).diagnostics
    assert [d.span.line for d in found] == [11]

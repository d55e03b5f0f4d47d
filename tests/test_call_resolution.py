"""The binder's call resolution carried across an edit (``CallResolution``, semantic/resolution.py) is the
resolution a fresh session makes: each test edits one file of a small project in a session kept across the edit
(as the language server keeps it) and compares the callees of another file's calls with a fresh session's, and
whether the new layer carried the resolved calls over or resolved them again.
"""

from __future__ import annotations

import os
import textwrap

from warplint.config import Config
from warplint.engine import Session
from warplint.testing import write_tree

FILES = {
    "pkg/__init__.py": "",
    "pkg/solver.py": textwrap.dedent(
        """\
        import warp as wp


        class Solver:
            def step(self):
                pass


        def make():
            def build():
                pass
            return build


        REGISTRY = Solver()
        """
    ),
    "pkg/api.py": "import warp as wp\n\nCOUNT = 1\n",
    # each call's callee reads solver.py or api.py: a local instance's method, a maker's return, a module-level
    # instance of another module, a class another module does not define (yet)
    "pkg/app.py": textwrap.dedent(
        """\
        import warp as wp

        from pkg import api, solver
        from pkg.solver import Solver, make


        def run():
            s = Solver()
            s.step()
            make()()
            solver.REGISTRY.step()
            t = api.Thing()
            t.go()
        """
    ),
    "pkg/other.py": "import warp as wp\n\nCOUNT = 1\n",
}


def _callees(session: Session, root: str) -> list[str]:
    model = session.models[os.path.join(root, "pkg/app.py")]
    bindings = session.project().layer.bindings
    return [bindings.callee_of(model, call) for call in model.calls]


def _edited(tmp_path, name: str, old: str, new: str) -> tuple[list[str], list[str], list[str], bool]:
    """app.py's callees before and after ``name``'s edit in a kept session, a fresh session's after it, and
    whether the kept session's new layer carried the resolution over."""
    root = write_tree(str(tmp_path / "tree"), {**FILES, "pyproject.toml": "[tool.warplint]\n"})
    config = Config(root=root)
    session = Session(config, cache=False, jobs=1)
    session.check_text(os.path.join(root, "pkg/app.py"), FILES["pkg/app.py"])
    before = _callees(session, root)
    resolution = session.project()._bindings._resolution
    carried = resolution.layers_carried
    edited = FILES[name].replace(old, new)
    assert edited != FILES[name]
    session.check_text(os.path.join(root, name), edited)
    after = _callees(session, root)
    assert session.project()._bindings._resolution is resolution  # (the session's, handed to each layer)
    with open(os.path.join(root, name), "w", encoding="utf-8") as fh:
        fh.write(edited)
    fresh = Session(config, cache=False, jobs=1)
    fresh.check_text(os.path.join(root, "pkg/app.py"), FILES["pkg/app.py"])
    return before, after, _callees(fresh, root), resolution.layers_carried > carried


def test_an_unrelated_edit_carries_the_resolution(tmp_path):
    before, after, fresh, carried = _edited(tmp_path, "pkg/other.py", "COUNT = 1", "COUNT = 2")
    assert carried
    assert after == before == fresh
    assert "pkg.solver.Solver.step" in after and "pkg.solver.make.build" in after


def test_a_name_added_where_calls_resolve_carries_it(tmp_path):
    # the commonest edit: a name nobody looked up is added to a module the resolution reads
    before, after, fresh, carried = _edited(tmp_path, "pkg/solver.py", "REGISTRY = Solver()\n",
                                            "REGISTRY = Solver()\n_E = 1\n")
    assert carried
    assert after == before == fresh


def test_a_module_level_instance_rebound(tmp_path):
    before, after, fresh, carried = _edited(tmp_path, "pkg/solver.py", "REGISTRY = Solver()", "REGISTRY = make()")
    assert not carried
    assert "pkg.solver.Solver.step" in before[before.index("pkg.solver.Solver.step") + 1:]  # REGISTRY.step()
    assert after == fresh
    assert after != before


def test_what_a_maker_returns_changes(tmp_path):
    before, after, fresh, carried = _edited(tmp_path, "pkg/solver.py", "    return build", "    return None")
    assert not carried
    assert "pkg.solver.make.build" in before and "pkg.solver.make.build" not in after
    assert after == fresh


def test_a_class_added_where_a_lookup_missed_it(tmp_path):
    # `api.Thing` named nothing when the calls were resolved: adding it must not keep that answer
    before, after, fresh, carried = _edited(tmp_path, "pkg/api.py", "COUNT = 1\n",
                                            "COUNT = 1\n\n\nclass Thing:\n    def go(self):\n        pass\n")
    assert not carried
    assert "pkg.api.Thing.go" not in before and "pkg.api.Thing.go" in after
    assert after == fresh


def _callers(session: Session) -> dict[str, list[tuple[str, int]]]:
    """Every project function's and class's callers (file, line), in the binder's order."""
    bindings = session.project().layer.bindings
    return {fq: [(os.path.basename(f.path), call.span.line) for f, call in bindings.callers(fq)]
            for f in bindings.files for fq in (bindings.fqname(f, q) for q in [*f.functions, *f.classes])}


GROUPED = {
    "pkg/__init__.py": "",
    "pkg/solver.py": "import warp as wp\n\n\nclass Solver:\n    def step(self):\n        pass\n\n\n"
                     "def helper():\n    pass\n",
    "pkg/a.py": "import warp as wp\n\nfrom pkg.solver import Solver, helper\n\n\n"
                "def run():\n    s = Solver()\n    s.step()\n    helper()\n",
    "pkg/b.py": "import warp as wp\n\nfrom pkg.solver import Solver, helper\n\n\n"
                "def go():\n    helper()\n    s = Solver()\n    s.step()\n",
    "pkg/c.py": "import warp as wp\n\nfrom pkg.solver import helper\n\nCOUNT = 1\n",
}


def test_the_calls_grouped_by_name_are_kept_and_regrouped_where_edited(tmp_path):
    """A session keeps every file's calls grouped by the last part of their names (``NameGroups``) and groups
    again only the names of the files an edit changed, in file order, whatever the edit adds or removes: the
    callers are a fresh session's after each edit."""
    root = write_tree(str(tmp_path / "tree"), {**GROUPED, "pyproject.toml": "[tool.warplint]\n"})
    config = Config(root=root)
    session = Session(config, cache=False, jobs=1)
    session.check_text(os.path.join(root, "pkg/b.py"), GROUPED["pkg/b.py"])
    _callers(session)  # (the groups are made when a caller is first asked for)
    groups = session.project()._bindings._resolution.groups
    edits = [("pkg/c.py", "COUNT = 1", "COUNT = helper()"),  # a file added to a group
             ("pkg/a.py", "    helper()\n", "    helper()\n    helper()\n    s.step()\n"),  # one re-placed
             ("pkg/c.py", "COUNT = helper()", "COUNT = 1")]  # one left out again
    texts = dict(GROUPED)
    for name, old, new in edits:
        texts[name] = texts[name].replace(old, new)
        regrouped = groups.regrouped
        session.check_text(os.path.join(root, name), texts[name])
        kept = _callers(session)
        assert 0 < groups.regrouped - regrouped <= 6  # the edited file's names only (out, then in again)
        with open(os.path.join(root, name), "w", encoding="utf-8") as fh:
            fh.write(texts[name])
        fresh = Session(config, cache=False, jobs=1)
        fresh.check_text(os.path.join(root, "pkg/b.py"), GROUPED["pkg/b.py"])
        assert kept == _callers(fresh)
        order = [path for path, _ in kept["pkg.solver.helper"]]
        in_file_order = [os.path.basename(f.path) for f in session.project().layer.bindings.files]
        assert order == sorted(order, key=in_file_order.index)
    assert kept["pkg.solver.helper"].count(("a.py", 10)) == 1 and ("c.py", 5) not in kept["pkg.solver.helper"]


def test_the_attribute_assignments_are_kept_and_regrouped_where_edited(tmp_path):
    """The binder's attribute assignments (``pkg.mod.Class.attr``) are grouped the same way across edits
    (``NameGroups``): after each edit they are a fresh session's, in file order."""
    root = write_tree(str(tmp_path / "tree"), {**GROUPED, "pyproject.toml": "[tool.warplint]\n"})
    config = Config(root=root)
    session = Session(config, cache=False, jobs=1)
    session.check_text(os.path.join(root, "pkg/b.py"), GROUPED["pkg/b.py"])
    ref = "pkg.solver.Solver.count"

    def assigned(s: Session) -> list[tuple[str, int]]:
        bindings = s.project().layer.bindings
        return [(os.path.basename(f.path), a.span.line) for f, a in bindings.attribute_assignments(ref)]

    assert assigned(session) == []
    groups = session.project()._bindings._resolution.attribute_groups
    texts = dict(GROUPED)
    for name, old, new in [("pkg/solver.py", "    def step(self):\n        pass", "    def step(self):\n        "
                            "self.count = 1\n\n    def reset(self):\n        self.count = 0"),
                           ("pkg/a.py", "    s.step()\n", "    s.step()\n    s.count = 2\n"),
                           ("pkg/solver.py", "        self.count = 0", "        pass")]:
        texts[name] = texts[name].replace(old, new)
        session.check_text(os.path.join(root, name), texts[name])
        kept = assigned(session)
        with open(os.path.join(root, name), "w", encoding="utf-8") as fh:
            fh.write(texts[name])
        fresh = Session(config, cache=False, jobs=1)
        fresh.check_text(os.path.join(root, "pkg/b.py"), GROUPED["pkg/b.py"])
        assert kept == assigned(fresh)
    assert kept == [("solver.py", 6)] and groups.regrouped > 0


IMPORTS = {
    "pkg/__init__.py": "",
    "pkg/kernels.py": "import warp as wp\n\nCOUNT = 1\n",
    "pkg/solver.py": "import warp as wp\n\nfrom pkg import kernels\n",
    "pkg/app.py": "import warp as wp\n\nimport pkg.solver\n",
    "pkg/other.py": "import warp as wp\n\nCOUNT = 1\n",
    "tests/conftest.py": "import warp as wp\n\nimport pkg.other\n",
    "tests/test_app.py": "import warp as wp\n\nfrom pkg import app\n",
}


def test_the_import_graph_is_kept_until_an_edit_changes_an_import(tmp_path):
    """The files each file imports (``ImportGraph``: a file's program, the files run together with one) are kept
    across edits that change no import, and made again by one that does: after each edit every file's imports and
    those run with each are a fresh session's."""
    root = write_tree(str(tmp_path / "tree"), {**IMPORTS, "pyproject.toml": "[tool.warplint]\n"})
    config = Config(root=root)
    session = Session(config, cache=False, jobs=1)
    session.check_text(os.path.join(root, "pkg/app.py"), IMPORTS["pkg/app.py"])

    def graph(s: Session) -> dict[str, tuple[list[str], list[str]]]:
        bindings = s.project().layer.bindings
        name = {f.path: os.path.relpath(f.path, root) for f in bindings.files}
        found = {}
        for f in bindings.files:
            program = [name[g.path] for g in bindings.imported_files(f)]
            assert program[0] == name[f.path]  # (itself first)
            found[name[f.path]] = (sorted(program), sorted(name[p] for p in bindings.run_together(frozenset({f.path}))))
        return found

    first = graph(session)
    assert first["tests/test_app.py"][0] == ["pkg/__init__.py", "pkg/app.py", "pkg/kernels.py", "pkg/other.py",
                                             "pkg/solver.py", "tests/conftest.py", "tests/test_app.py"]
    assert "pkg/other.py" not in first["pkg/solver.py"][0]  # (the conftest's import is the test file's program's)
    assert "tests/test_app.py" in first["pkg/kernels.py"][1] and "pkg/other.py" in first["pkg/kernels.py"][1]
    imports = session.project()._bindings._resolution.imports
    texts = dict(IMPORTS)
    for name, old, new, remade in [("pkg/kernels.py", "COUNT = 1", "COUNT = 2", False),  # no import changed
                                   ("pkg/other.py", "COUNT = 1", "from pkg import kernels\n\nCOUNT = 1", True),
                                   ("pkg/solver.py", "from pkg import kernels\n", "COUNT = 3\n", True),
                                   ("pkg/app.py", "import pkg.solver\n", "import pkg.solver\n\nN = 1\n", False)]:
        texts[name] = texts[name].replace(old, new)
        made = imports.made
        session.check_text(os.path.join(root, name), texts[name])
        kept = graph(session)
        assert imports.made - made == remade
        with open(os.path.join(root, name), "w", encoding="utf-8") as fh:
            fh.write(texts[name])
        fresh = Session(config, cache=False, jobs=1)
        fresh.check_text(os.path.join(root, "pkg/app.py"), texts["pkg/app.py"])
        assert kept == graph(fresh)
    assert "pkg/kernels.py" not in kept["pkg/solver.py"][0] and "pkg/kernels.py" in kept["pkg/other.py"][0]
    assert kept != first


def test_a_group_of_calls_the_edit_leaves_is_taken_over_resolved(tmp_path):
    """After an edit that carries the resolution, a group of calls (by the last part of the callee's name) that no
    edited file has a call in is taken over as the last layer resolved it, and the callers it lists are the same;
    a group with a call of the edited file is resolved again, and lists what a fresh session lists."""
    files = {**FILES, "pkg/tools.py": "import warp as wp\n\n\ndef helper():\n    pass\n\n\ndef other():\n    pass\n",
             "pkg/runner.py": "from pkg.tools import helper\n\n\ndef go():\n    helper()\n",
             "pkg/user.py": "from pkg.tools import other\n\n\ndef use():\n    other()\n"}
    root = write_tree(str(tmp_path / "tree"), {**files, "pyproject.toml": "[tool.warplint]\n"})
    config = Config(root=root)
    session = Session(config, cache=False, jobs=1)
    session.check_text(os.path.join(root, "pkg/app.py"), files["pkg/app.py"])
    bindings = session.project().layer.bindings
    helpers, others = bindings.callers("pkg.tools.helper"), bindings.callers("pkg.tools.other")
    assert len(helpers) == len(others) == 1
    resolution = session.project()._bindings._resolution
    helper_group, other_group = resolution.resolved["helper"], resolution.resolved["other"]
    edited = files["pkg/user.py"] + "    other()\n"  # user.py calls other() once more; nothing of it calls helper()
    session.check_text(os.path.join(root, "pkg/user.py"), edited)
    bindings = session.project().layer.bindings
    assert bindings.callers("pkg.tools.helper") == helpers and resolution.resolved["helper"] is helper_group
    now = bindings.callers("pkg.tools.other")
    assert resolution.resolved["other"] is not other_group and len(now) == 2
    with open(os.path.join(root, "pkg/user.py"), "w", encoding="utf-8") as fh:
        fh.write(edited)
    fresh = Session(config, cache=False, jobs=1)
    fresh.check_text(os.path.join(root, "pkg/app.py"), files["pkg/app.py"])
    fresh_bindings = fresh.project().layer.bindings
    for name in ("pkg.tools.helper", "pkg.tools.other"):
        assert ([(f.path, c.span) for f, c in bindings.callers(name)]
                == [(f.path, c.span) for f, c in fresh_bindings.callers(name)])


def test_the_groups_the_binder_makes_are_taken_over_resolved_where_made_of_the_same_calls(tmp_path):
    """A file that calls a returned function (``make()()``) has its calls grouped by the binder itself, anew in each
    layer (``SameGroups``): after an edit elsewhere that carries the resolution, a group made of the same calls is
    the last layer's list, taken over as resolved; after an edit of that file its groups are made and resolved
    again, and list what a fresh session lists."""
    root = write_tree(str(tmp_path / "tree"), {**FILES, "pyproject.toml": "[tool.warplint]\n"})
    config = Config(root=root)
    session = Session(config, cache=False, jobs=1)
    session.check_text(os.path.join(root, "pkg/app.py"), FILES["pkg/app.py"])
    bindings = session.project().layer.bindings
    steps = bindings.callers("pkg.solver.Solver.step")
    assert len(steps) == 2  # `s.step()` and `solver.REGISTRY.step()`, grouped by the binder: app.py calls `make()()`
    resolution = session.project()._bindings._resolution
    step_group, handed = resolution.resolved["step"], resolution.binder_groups.handed_over
    session.check_text(os.path.join(root, "pkg/other.py"), FILES["pkg/other.py"] + "MORE = 2\n")
    bindings = session.project().layer.bindings
    assert bindings.callers("pkg.solver.Solver.step") == steps
    assert resolution.resolved["step"] is step_group and resolution.binder_groups.handed_over > handed
    edited = FILES["pkg/app.py"] + "    s.step()\n"
    session.check_text(os.path.join(root, "pkg/app.py"), edited)
    bindings = session.project().layer.bindings
    now = bindings.callers("pkg.solver.Solver.step")
    assert resolution.resolved["step"] is not step_group and len(now) == 3
    with open(os.path.join(root, "pkg/app.py"), "w", encoding="utf-8") as fh:
        fh.write(edited)
    fresh = Session(config, cache=False, jobs=1)
    fresh.check_text(os.path.join(root, "pkg/app.py"), edited)
    assert ([(f.path, c.span) for f, c in now]
            == [(f.path, c.span) for f, c in fresh.project().layer.bindings.callers("pkg.solver.Solver.step")])


def test_the_file_of_each_function_is_kept_and_made_again_where_edited(tmp_path):
    """``file_of_function`` answers from a table a session keeps across its layers (``FunctionFiles``): after an
    edit, the edited file's new functions are its new model's, its old model's functions are no project file's, and
    every other file's functions stay theirs."""
    root = write_tree(str(tmp_path / "tree"), {**FILES, "pyproject.toml": "[tool.warplint]\n"})
    session = Session(Config(root=root), cache=False, jobs=1)
    session.check_text(os.path.join(root, "pkg/app.py"), FILES["pkg/app.py"])
    bindings = session.project().layer.bindings
    solver, app = (bindings.by_path[os.path.join(root, name)] for name in ("pkg/solver.py", "pkg/app.py"))
    assert bindings.file_of_function(app.functions["run"]) is app
    session.check_text(os.path.join(root, "pkg/app.py"), FILES["pkg/app.py"] + "\n\ndef more():\n    run()\n")
    bindings = session.project().layer.bindings
    new_app = bindings.by_path[os.path.join(root, "pkg/app.py")]
    assert new_app is not app and bindings.file_of_function(new_app.functions["more"]) is new_app
    assert bindings.file_of_function(new_app.functions["run"]) is new_app
    assert bindings.file_of_function(app.functions["run"]) is None
    assert bindings.file_of_function(solver.functions["Solver.step"]) is solver


def test_the_attribute_names_assigned_are_kept_until_an_edit_assigns_another(tmp_path):
    """The names of the attributes the project assigns off no class (``attribute_names_assigned``) are kept across
    an edit that assigns no attribute by a new name (the same set, not made again), and made again after one that
    does, as a fresh session makes them."""
    space = "import types\n\nimport warp as wp\n\nNS = types.SimpleNamespace()\nNS.size = 1\n"
    files = {**FILES, "pkg/space.py": space}
    root = write_tree(str(tmp_path / "tree"), {**files, "pyproject.toml": "[tool.warplint]\n"})
    config = Config(root=root)
    session = Session(config, cache=False, jobs=1)
    session.check_text(os.path.join(root, "pkg/app.py"), files["pkg/app.py"])
    names = session.project().layer.bindings.attribute_names_assigned()
    assert "size" in names and "depth" not in names
    session.check_text(os.path.join(root, "pkg/other.py"), files["pkg/other.py"] + "MORE = 2\n")
    assert session.project().layer.bindings.attribute_names_assigned() is names
    edited = files["pkg/space.py"] + "NS.depth = 2\n"
    session.check_text(os.path.join(root, "pkg/space.py"), edited)
    now = session.project().layer.bindings.attribute_names_assigned()
    assert now == names | {"depth"}
    with open(os.path.join(root, "pkg/space.py"), "w", encoding="utf-8") as fh:
        fh.write(edited)
    fresh = Session(config, cache=False, jobs=1)
    fresh.check_text(os.path.join(root, "pkg/app.py"), files["pkg/app.py"])
    assert fresh.project().layer.bindings.attribute_names_assigned() == now

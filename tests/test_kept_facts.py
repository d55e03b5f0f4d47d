"""A fact a layer takes over from the one before an edit (``Layer.kept``, reads.py) is the fact a fresh
session computes: an edit of what it read makes the next layer compute it again, and an edit of anything else
lets the next layer take it over (issue 28 item 1, the option changes of each file).

Each test edits one file of a small project in a session kept across the edit (as the language server keeps
it) and compares the option changes of another file with a fresh session's, and whether the layer took them
over (the same list object as before the edit) or computed them again.
"""

from __future__ import annotations

import os
import textwrap

from warplint.config import Config
from warplint.engine import Session
from warplint.semantic.events import OptionForm

FILES = {
    "pkg/__init__.py": "",
    "pkg/names.py": textwrap.dedent(
        """\
        import warp as wp

        TARGET = "pkg.first"


        def target(module="pkg.first"):
            return module
        """
    ),
    # its option changes read names.py through the evaluator
    "pkg/user.py": textwrap.dedent(
        """\
        import warp as wp

        from pkg.names import TARGET, target

        wp.set_module_options({"enable_backward": False}, module=TARGET)
        wp.set_module_options({"fast_math": True}, module=target())
        """
    ),
    # its option changes read its own records only
    "pkg/plain.py": textwrap.dedent(
        """\
        import warp as wp

        wp.set_module_options({"enable_backward": False})
        """
    ),
    "pkg/decorators.py": textwrap.dedent(
        """\
        import warp as wp


        def fast(fn):
            return fn
        """
    ),
    # its kernel list gains a derived kernel when decorators.fast makes kernels
    "pkg/decorated.py": textwrap.dedent(
        """\
        import warp as wp

        from pkg.decorators import fast

        wp.set_module_options({"enable_backward": False})


        @fast
        def scale(x: wp.array(dtype=float)):
            i = wp.tid()
            x[i] = x[i] * 2.0
        """
    ),
    "pkg/other.py": "import warp as wp\n\nCOUNT = 1\n",
}


def _tree(tmp_path) -> str:
    root = str(tmp_path / "tree")
    for name, text in {**FILES, "pyproject.toml": "[tool.warplint]\n"}.items():
        os.makedirs(os.path.dirname(os.path.join(root, name)), exist_ok=True)
        with open(os.path.join(root, name), "w", encoding="utf-8") as fh:
            fh.write(text)
    return root


def _changes(session: Session, root: str, name: str):
    project = session.project()
    return project.option_changes(session.models[os.path.join(root, name)])


def _described(changes) -> list[tuple]:
    return [(c.module, c.form, c.values, c.span) for c in changes]


def _edited(tmp_path, name: str, old: str, new: str, asked: str):
    """The option changes of ``asked`` before and after ``name``'s edit in a kept session, and a fresh
    session's after it."""
    root = _tree(tmp_path)
    config = Config(root=root)
    session = Session(config, cache=False, jobs=1)
    session.check_text(os.path.join(root, asked), FILES[asked])
    before = _changes(session, root, asked)
    edited = FILES[name].replace(old, new)
    assert edited != FILES[name]
    session.check_text(os.path.join(root, name), edited)
    after = _changes(session, root, asked)
    with open(os.path.join(root, name), "w", encoding="utf-8") as fh:
        fh.write(edited)
    fresh = Session(config, cache=False, jobs=1)
    fresh.check_text(os.path.join(root, asked), edited if asked == name else FILES[asked])
    return before, after, _changes(fresh, root, asked)


def test_an_unrelated_edit_keeps_a_files_option_changes(tmp_path):
    before, after, fresh = _edited(tmp_path, "pkg/other.py", "COUNT = 1", "COUNT = 2", "pkg/plain.py")
    assert after is before  # taken over, not computed again
    assert _described(after) == _described(fresh)


def test_an_edit_of_a_constant_the_changes_read_through_the_evaluator(tmp_path):
    before, after, fresh = _edited(tmp_path, "pkg/names.py", 'TARGET = "pkg.first"', 'TARGET = "pkg.second"',
                                   "pkg/user.py")
    assert [c.module for c in before] == ["pkg.first", "pkg.first"]
    assert [c.module for c in after] == ["pkg.second", "pkg.first"]
    assert _described(after) == _described(fresh)


def test_an_edit_of_a_helpers_module_name_default(tmp_path):
    before, after, fresh = _edited(tmp_path, "pkg/names.py", 'def target(module="pkg.first")',
                                   'def target(module="pkg.second")', "pkg/user.py")
    assert [c.module for c in before] == ["pkg.first", "pkg.first"]
    assert [c.module for c in after] == ["pkg.first", "pkg.second"]
    assert _described(after) == _described(fresh)


def test_a_decorator_that_starts_making_kernels_in_another_file(tmp_path):
    # decorated.py's own records do not change, but the project now adds a derived kernel to its model whose
    # module_options= is one more change
    before, after, fresh = _edited(tmp_path, "pkg/decorators.py", "return fn",
                                   'return wp.kernel(fn, module_options={"enable_backward": True})',
                                   "pkg/decorated.py")
    assert [c.form for c in before] == [OptionForm.SET_MODULE_OPTIONS]
    assert [c.form for c in after] == [OptionForm.SET_MODULE_OPTIONS, OptionForm.KERNEL]
    assert _described(after) == _described(fresh)


def test_a_decorator_that_stops_making_kernels_in_another_file(tmp_path):
    root_files = dict(FILES)
    FILES["pkg/decorators.py"] = root_files["pkg/decorators.py"].replace(
        "return fn", 'return wp.kernel(fn, module_options={"enable_backward": True})')
    try:
        before, after, fresh = _edited(tmp_path, "pkg/decorators.py",
                                       'return wp.kernel(fn, module_options={"enable_backward": True})',
                                       "return fn", "pkg/decorated.py")
    finally:
        FILES.update(root_files)
    assert [c.form for c in before] == [OptionForm.SET_MODULE_OPTIONS, OptionForm.KERNEL]
    assert [c.form for c in after] == [OptionForm.SET_MODULE_OPTIONS]
    assert _described(after) == _described(fresh)


def test_an_edit_of_the_file_itself(tmp_path):
    before, after, fresh = _edited(tmp_path, "pkg/plain.py", '{"enable_backward": False}', '{"fast_math": True}',
                                   "pkg/plain.py")
    assert after is not before
    assert [c.values for c in after] == [{"fast_math": True}]
    assert _described(after) == _described(fresh)


def test_a_recorded_fact_asked_inside_another_adds_its_reads(tmp_path):
    """The recorder's nesting: an inner fact's reads belong to the outer one, whether the inner one is computed
    there or found in the layer (a hit); an unattributed read inside makes the outer one read everything."""
    root = _tree(tmp_path)
    session = Session(Config(root=root), cache=False, jobs=1)
    session.check_text(os.path.join(root, "pkg/plain.py"), FILES["pkg/plain.py"])
    layer = session.project().layer
    plain, user, other = (session.models[os.path.join(root, f"pkg/{name}.py")] for name in ("plain", "user", "other"))

    def outer(reading) -> None:
        reading.bindings.name_assignments(other, "", "COUNT")
        reading.kept("option_changes", plain, lambda inner: None)

    recorder = layer.bindings.reads
    layer.kept("option_changes", plain, lambda reading: None)  # computed first: the outer fact's ask is a hit
    with recorder.recording() as reads:
        layer.kept("outer", user, outer)
    assert not reads.everything
    assert set(reads.models) == {user.path, other.path, plain.path}
    with recorder.recording() as reads:
        layer.kept("reads everything", other, lambda reading: reading.evaluator.module_names(other, None, ""))
    assert reads.everything

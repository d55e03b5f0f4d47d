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

import pytest

from warplint.config import Config
from warplint.engine import Session
from warplint.semantic.events import OptionForm
from warplint.semantic.reads import HeldReads
from warplint.testing import write_tree

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
    return write_tree(str(tmp_path / "tree"), {**FILES, "pyproject.toml": "[tool.warplint]\n"})


def _changes(session: Session, root: str, name: str):
    project = session.project()
    return project.option_changes(session.models[os.path.join(root, name)])


def _described(changes) -> list[tuple]:
    return [(c.module, c.form, c.values, c.span) for c in changes]


def _edited(tmp_path, name: str, old: str, new: str, asked: str, unrelated_first: bool = False):
    """The option changes of ``asked`` before and after ``name``'s edit in a kept session, and a fresh
    session's after it. ``unrelated_first``: an edit of another file comes between, after which the layer takes
    the changes over and holds what they read across its layers (``HeldReads``): the edit that matters is then
    found by what it changed, not by checking every read again."""
    root = _tree(tmp_path)
    config = Config(root=root)
    session = Session(config, cache=False, jobs=1)
    session.check_text(os.path.join(root, asked), FILES[asked])
    before = _changes(session, root, asked)
    if unrelated_first:
        session.check_text(os.path.join(root, "pkg/other.py"), FILES["pkg/other.py"].replace("COUNT = 1", "COUNT = 3"))
        assert _described(_changes(session, root, asked)) == _described(before)
        assert len(session.project().layer.bindings.unrecorded.kept_facts.held)  # held from now on
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


@pytest.mark.parametrize("unrelated_first", [False, True])
def test_an_edit_of_a_constant_the_changes_read_through_the_evaluator(tmp_path, unrelated_first):
    before, after, fresh = _edited(tmp_path, "pkg/names.py", 'TARGET = "pkg.first"', 'TARGET = "pkg.second"',
                                   "pkg/user.py", unrelated_first)
    assert [c.module for c in before] == ["pkg.first", "pkg.first"]
    assert [c.module for c in after] == ["pkg.second", "pkg.first"]
    assert _described(after) == _described(fresh)


@pytest.mark.parametrize("unrelated_first", [False, True])
def test_an_edit_of_a_helpers_module_name_default(tmp_path, unrelated_first):
    before, after, fresh = _edited(tmp_path, "pkg/names.py", 'def target(module="pkg.first")',
                                   'def target(module="pkg.second")', "pkg/user.py", unrelated_first)
    assert [c.module for c in before] == ["pkg.first", "pkg.first"]
    assert [c.module for c in after] == ["pkg.first", "pkg.second"]
    assert _described(after) == _described(fresh)


@pytest.mark.parametrize("unrelated_first", [False, True])
def test_a_decorator_that_starts_making_kernels_in_another_file(tmp_path, unrelated_first):
    # decorated.py's own records do not change, but the project now adds a derived kernel to its model whose
    # module_options= is one more change
    before, after, fresh = _edited(tmp_path, "pkg/decorators.py", "return fn",
                                   'return wp.kernel(fn, module_options={"enable_backward": True})',
                                   "pkg/decorated.py", unrelated_first)
    assert [c.form for c in before] == [OptionForm.SET_MODULE_OPTIONS]
    assert [c.form for c in after] == [OptionForm.SET_MODULE_OPTIONS, OptionForm.KERNEL]
    assert _described(after) == _described(fresh)


@pytest.mark.parametrize("unrelated_first", [False, True])
def test_a_decorator_that_stops_making_kernels_in_another_file(tmp_path, unrelated_first):
    root_files = dict(FILES)
    FILES["pkg/decorators.py"] = root_files["pkg/decorators.py"].replace(
        "return fn", 'return wp.kernel(fn, module_options={"enable_backward": True})')
    try:
        before, after, fresh = _edited(tmp_path, "pkg/decorators.py",
                                       'return wp.kernel(fn, module_options={"enable_backward": True})',
                                       "return fn", "pkg/decorated.py", unrelated_first)
    finally:
        FILES.update(root_files)
    assert [c.form for c in before] == [OptionForm.SET_MODULE_OPTIONS, OptionForm.KERNEL]
    assert [c.form for c in after] == [OptionForm.SET_MODULE_OPTIONS]
    assert _described(after) == _described(fresh)


@pytest.mark.parametrize("unrelated_first", [False, True])
def test_an_edit_of_the_file_itself(tmp_path, unrelated_first):
    before, after, fresh = _edited(tmp_path, "pkg/plain.py", '{"enable_backward": False}', '{"fast_math": True}',
                                   "pkg/plain.py", unrelated_first)
    assert after is not before
    assert [c.values for c in after] == [{"fast_math": True}]
    assert _described(after) == _described(fresh)


def test_a_recorded_fact_asked_inside_another_adds_its_reads(tmp_path):
    """The recorder's nesting: an inner fact's reads belong to the outer one, whether the inner one is computed
    there or found in the layer (a hit); an evaluator question adds the reads of its memo entries (what it asked
    the binder); an unattributed read inside (every file at once) makes the outer one read everything."""
    root = _tree(tmp_path)
    session = Session(Config(root=root), cache=False, jobs=1)
    session.check_text(os.path.join(root, "pkg/plain.py"), FILES["pkg/plain.py"])
    layer = session.project().layer
    plain, user, other = (session.models[os.path.join(root, f"pkg/{name}.py")] for name in ("plain", "user", "other"))

    def outer(recorded) -> None:
        recorded.bindings.name_assignments(other, "", "COUNT")
        recorded.kept("option_changes", plain, lambda inner: None)

    recorder = layer.evaluator.recorder
    layer.kept("option_changes", plain, lambda recorded: None)  # computed first: the outer fact's ask is a hit
    with recorder.recording() as reads:
        layer.kept("outer", user, outer)
    assert not reads.everything
    assert {path for r in reads.graph() for path in r.models} == {user.path, other.path, plain.path}

    def imported(recorded) -> None:  # names.py's `TARGET` and `target()`, read through the evaluator
        for call in user.calls:
            recorded.evaluator.module_names(user, call.kwargs.get("module"), "")

    with recorder.recording() as reads:
        layer.kept("imported", user, imported)
    assert not reads.everything
    graph = reads.graph()
    assert os.path.join(root, "pkg/names.py") in {path for r in graph for path in r.models}  # the owner of TARGET
    assert "function" in {method for r in graph for method, _, _ in r.asked}  # `target` looked up by name
    with recorder.recording() as reads:
        layer.kept("reads everything", other, lambda recorded: recorded.bindings.files)
    assert reads.everything


# Each file's launches (``IdentityFacts.launches``): they ask the evaluator, whose memo entries carry what they
# read (the binder's hand-outs, by key), so an edit of another file keeps them unless it changes what they read.
LAUNCHING = {
    "pkg/__init__.py": "",
    "pkg/kernels.py": textwrap.dedent(
        """\
        import warp as wp


        @wp.kernel
        def first(x: wp.array(dtype=float)):
            x[wp.tid()] = 1.0


        @wp.kernel
        def second(x: wp.array(dtype=float)):
            x[wp.tid()] = 2.0
        """
    ),
    # a name bound to a kernel of another module
    "pkg/choice.py": textwrap.dedent(
        """\
        import warp as wp

        from pkg.kernels import first, second

        KERNEL = first
        """
    ),
    # its launches are computed before user.py's (the files in order) and fill the evaluator's entry for
    # `pkg.choice.KERNEL`, which user.py's launches then hit: they read what that entry read
    "pkg/early.py": textwrap.dedent(
        """\
        import warp as wp

        from pkg.choice import KERNEL


        def main(x):
            wp.launch(KERNEL, dim=1, inputs=[x])
        """
    ),
    "pkg/sizes.py": textwrap.dedent(
        """\
        import warp as wp


        def block_size(n=64):
            return n
        """
    ),
    "pkg/decorators.py": textwrap.dedent(
        """\
        import warp as wp


        def fast(fn):
            return fn
        """
    ),
    # its launches read choice.py (a name bound there), sizes.py (a default), decorators.py (whether `scale`
    # is a kernel) and the callers of its wrapper `run` (whose parameter decides the kernel)
    "pkg/user.py": textwrap.dedent(
        """\
        import warp as wp

        from pkg import kernels
        from pkg.decorators import fast
        from pkg.choice import KERNEL
        from pkg.sizes import block_size


        @fast
        def scale(x: wp.array(dtype=float)):
            x[wp.tid()] = x[wp.tid()] * 2.0


        def run(kernel, x):
            wp.launch(kernel, dim=1, inputs=[x])


        def main(x):
            wp.launch(KERNEL, dim=1, inputs=[x], block_dim=block_size())
            wp.launch(scale, dim=1, inputs=[x])
            run(kernels.first, x)
        """
    ),
    "pkg/plain.py": textwrap.dedent(
        """\
        import warp as wp


        @wp.kernel
        def fill(x: wp.array(dtype=float)):
            x[wp.tid()] = 0.0


        def main(x):
            wp.launch(fill, dim=1, inputs=[x], block_dim=32)
        """
    ),
    "pkg/other.py": "import warp as wp\n\nfrom pkg import kernels\n\nCOUNT = 1\n",
}


def _own_launches(layer, model):
    return layer.launches(model)


def _launches_edited(tmp_path, name: str, old: str, new: str, asked: str, fact=_own_launches,
                     unrelated_first: bool = False):
    """The launches of ``asked`` (``fact``) before and after ``name``'s edit in a kept session, and a fresh
    session's."""
    return _fact_edited(tmp_path, LAUNCHING, name, old, new, asked, fact, unrelated_first)


def _fact_edited(tmp_path, files: dict[str, str], name: str, old: str, new: str, asked: str, fact,
                 unrelated_first: bool = False):
    """``fact(layer, model of asked)`` before and after ``name``'s edit in a kept session, and a fresh session's.
    ``unrelated_first``: a line added to ``pkg/plain.py`` (which no other file reads) comes between (as in
    ``_edited``)."""
    root = write_tree(str(tmp_path / "tree"), {**files, "pyproject.toml": "[tool.warplint]\n"})
    config = Config(root=root)

    def asked_of(session: Session):
        return fact(session.project().layer, session.models[os.path.join(root, asked)])

    session = Session(config, cache=False, jobs=1)
    session.check_text(os.path.join(root, asked), files[asked])
    before = asked_of(session)
    if unrelated_first:
        assert "pkg/plain.py" not in (name, asked)
        session.check_text(os.path.join(root, "pkg/plain.py"), f"{files['pkg/plain.py']}\n_UNRELATED = 1\n")
        assert _taken_over(before, asked_of(session))
        assert len(session.project().layer.bindings.unrecorded.kept_facts.held)  # held from now on
    edited = files[name].replace(old, new)
    assert edited != files[name]
    session.check_text(os.path.join(root, name), edited)
    after = asked_of(session)
    with open(os.path.join(root, name), "w", encoding="utf-8") as fh:
        fh.write(edited)
    fresh = Session(config, cache=False, jobs=1)
    fresh.check_text(os.path.join(root, asked), files[asked])
    return before, after, asked_of(fresh)


def _launched(launches) -> list[tuple]:
    return [(launch.call.span, launch.kernel_file.path, launch.kernel.name, launch.module,
             sorted(repr(getattr(v, "value", v)) for v in launch.block_dims)) for launch in launches]


def _taken_over(before, after) -> bool:
    return len(before) == len(after) and all(a is b for a, b in zip(before, after, strict=True))


def test_an_unrelated_edit_keeps_a_files_launches(tmp_path):
    before, after, fresh = _launches_edited(tmp_path, "pkg/other.py", "COUNT = 1", "COUNT = 2", "pkg/user.py")
    assert _taken_over(before, after)  # the same Launch objects: taken over, not computed again
    assert _launched(after) == _launched(fresh)
    assert {launch.kernel.name for launch in after} == {"first"}


@pytest.mark.parametrize("unrelated_first", [False, True])
def test_a_kernel_name_bound_in_another_module(tmp_path, unrelated_first):
    before, after, fresh = _launches_edited(tmp_path, "pkg/choice.py", "KERNEL = first", "KERNEL = second",
                                            "pkg/user.py",
        unrelated_first=unrelated_first)
    assert not _taken_over(before, after)
    assert "second" not in {launch.kernel.name for launch in before}
    assert "second" in {launch.kernel.name for launch in after}
    assert _launched(after) == _launched(fresh)


@pytest.mark.parametrize("unrelated_first", [False, True])
def test_a_helpers_default_block_dim(tmp_path, unrelated_first):
    before, after, fresh = _launches_edited(tmp_path, "pkg/sizes.py", "n=64", "n=128", "pkg/user.py",
        unrelated_first=unrelated_first)
    assert not _taken_over(before, after)
    assert ["64"] in [sizes for *_, sizes in _launched(before)]
    assert ["128"] in [sizes for *_, sizes in _launched(after)]
    assert _launched(after) == _launched(fresh)


@pytest.mark.parametrize("unrelated_first", [False, True])
def test_a_new_caller_of_a_wrapper_whose_parameter_the_launch_reads(tmp_path, unrelated_first):
    before, after, fresh = _launches_edited(
        tmp_path, "pkg/other.py", "COUNT = 1", "COUNT = 1\n\n\ndef go(x):\n    from pkg.user import run\n\n"
        "    run(kernels.second, x)\n", "pkg/user.py",
        unrelated_first=unrelated_first)
    assert not _taken_over(before, after)
    assert "second" not in {launch.kernel.name for launch in before}
    assert "second" in {launch.kernel.name for launch in after}
    assert _launched(after) == _launched(fresh)


@pytest.mark.parametrize("unrelated_first", [False, True])
def test_a_decorator_that_starts_making_launched_kernels(tmp_path, unrelated_first):
    before, after, fresh = _launches_edited(tmp_path, "pkg/decorators.py", "return fn", "return wp.kernel(fn)",
                                            "pkg/user.py",
        unrelated_first=unrelated_first)
    assert not _taken_over(before, after)
    assert "scale" not in {launch.kernel.name for launch in before}
    assert "scale" in {launch.kernel.name for launch in after}
    assert _launched(after) == _launched(fresh)


def test_the_entries_held_across_layers_are_those_the_kept_facts_hold(tmp_path, monkeypatch):
    """An entry stays held until what it read changes, though the fact that held it was computed again; the entries
    no kept fact holds any more are forgotten (swept, here whenever more are held than after the last sweep) and
    the facts are still taken over."""
    monkeypatch.setattr(HeldReads, "SWEEP_GROWTH", 1)
    monkeypatch.setattr(HeldReads, "SWEEP_AFTER", 0)
    root = write_tree(str(tmp_path / "tree"), {**LAUNCHING, "pyproject.toml": "[tool.warplint]\n"})
    session = Session(Config(root=root), cache=False, jobs=1)
    user = os.path.join(root, "pkg/user.py")
    session.check_text(user, LAUNCHING["pkg/user.py"])
    before = _through_callers(session.project().layer, session.models[user])
    for step, name in enumerate(["pkg/plain.py", "pkg/early.py"] * 3):
        session.check_text(os.path.join(root, name), f"{LAUNCHING[name]}\n_EDITED = {step}\n")
        layer = session.project().layer
        assert _taken_over(before, _through_callers(layer, session.models[user]))
        for model in session.models.values():
            layer.launches_through_callers(model)
        kept_facts = layer.bindings.unrecorded.kept_facts
        kept_facts.check_in(layer.bindings.unrecorded, layer)  # as the next layer does: what this one left unheld swept
        held = kept_facts.held
        assert len(held)
        reachable = {id(r) for fact in kept_facts._facts.values() for r in fact[2].graph()}
        assert set(held._held) <= reachable, f"step {step}"


def test_an_edit_keeps_the_launches_of_a_file_that_read_nothing_of_it(tmp_path):
    before, after, fresh = _launches_edited(tmp_path, "pkg/choice.py", "KERNEL = first", "KERNEL = second",
                                            "pkg/plain.py")
    assert _taken_over(before, after)
    assert _launched(after) == _launched(fresh) == [(after[0].call.span, after[0].kernel_file.path, "fill",
                                                     "pkg.plain", ["32"])]


def _kernels_launched(layer, model):
    return layer.kernels_launched_in(model)


def _named(launched) -> list[tuple]:
    return [(call.span, sorted(k.name for k in kernels)) for call, kernels in launched]


def test_an_unrelated_edit_keeps_the_kernels_a_files_launches_can_launch(tmp_path):
    before, after, fresh = _launches_edited(tmp_path, "pkg/other.py", "COUNT = 1", "COUNT = 2", "pkg/user.py",
                                            _kernels_launched)
    assert after is before  # taken over, not evaluated again
    assert _named(after) == _named(fresh)
    assert ["first"] in [names for _, names in _named(after)]


@pytest.mark.parametrize("unrelated_first", [False, True])
def test_the_kernels_a_launch_can_launch_follow_a_name_bound_in_another_module(tmp_path, unrelated_first):
    before, after, fresh = _launches_edited(tmp_path, "pkg/choice.py", "KERNEL = first", "KERNEL = second",
                                            "pkg/user.py", _kernels_launched,
        unrelated_first=unrelated_first)
    assert after is not before
    assert "second" not in {name for _, names in _named(before) for name in names}
    assert "second" in {name for _, names in _named(after) for name in names}
    assert _named(after) == _named(fresh)


def _through_callers(layer, model):
    return layer.launches_through_callers(model)


def test_an_unrelated_edit_keeps_a_files_launches_through_its_wrappers_callers(tmp_path):
    before, after, fresh = _launches_edited(tmp_path, "pkg/other.py", "COUNT = 1", "COUNT = 2", "pkg/user.py",
                                            _through_callers)
    assert _taken_over(before, after)
    assert _launched(after) == _launched(fresh)


@pytest.mark.parametrize("unrelated_first", [False, True])
def test_a_new_caller_of_a_wrapper_adds_a_launch_through_it(tmp_path, unrelated_first):
    # `run`'s launch is expanded at each call of `run`: a new call in another file is one more launch
    before, after, fresh = _launches_edited(
        tmp_path, "pkg/other.py", "COUNT = 1", "COUNT = 1\n\n\ndef go(x):\n    from pkg.user import run\n\n"
        "    run(kernels.second, x)\n", "pkg/user.py", _through_callers,
        unrelated_first=unrelated_first)
    assert not _taken_over(before, after)

    def sites(launches) -> list[tuple]:
        return [(launch.kernel.name, os.path.basename(launch.origin[0].path), launch.origin[1].span)
                for launch in launches]

    assert ("second", "other.py") not in {found[:2] for found in sites(before)}
    assert ("second", "other.py") in {found[:2] for found in sites(after)}
    assert sites(after) == sites(fresh)
    assert _launched(after) == _launched(fresh)


# Each file's differentiations (``differentiation.differentiations``): the kernels a tape or an adjoint launch
# reaches, through the functions it calls in other files; kept across an edit that changes none of what they read.
DIFFERENTIATING = {
    "pkg/__init__.py": "",
    "pkg/kernels.py": LAUNCHING["pkg/kernels.py"],
    "pkg/steps.py": textwrap.dedent(
        """\
        import warp as wp

        from pkg import kernels


        def forward(x):
            wp.launch(kernels.first, dim=1, inputs=[x])
        """
    ),
    "pkg/train.py": textwrap.dedent(
        """\
        import warp as wp

        from pkg.steps import forward


        def train(x):
            tape = wp.Tape()
            with tape:
                forward(x)
            tape.backward()
        """
    ),
    "pkg/other.py": "import warp as wp\n\nCOUNT = 1\n",
}


def _differentiations_edited(tmp_path, name: str, old: str, new: str):
    """train.py's differentiations before and after ``name``'s edit in a kept session, and a fresh session's: each
    the fact itself and what it says (the kernels' names for their ids)."""
    from warplint.semantic.differentiation import differentiations

    def reached(layer, train):
        found = differentiations(layer, train)
        names = {id(k): k.name for f in layer.bindings.files for k in f.kernels}
        return found, [(call.span, sorted(names[k] for k in launched.kernels), launched.unbounded,
                        [os.path.basename(p) for p in program]) for call, launched, program in found]

    return _fact_edited(tmp_path, DIFFERENTIATING, name, old, new, "pkg/train.py", reached)


def test_an_unrelated_edit_keeps_a_files_differentiations(tmp_path):
    (before, _), (after, described), (_, fresh) = _differentiations_edited(
        tmp_path, "pkg/other.py", "COUNT = 1", "COUNT = 2")
    assert after is before  # taken over, not computed again
    assert described == fresh
    assert ["first"] in [kernels for _, kernels, _, _ in described]


def test_an_edit_of_what_a_tape_runs_in_another_file(tmp_path):
    (before, described_before), (after, described), (_, fresh) = _differentiations_edited(
        tmp_path, "pkg/steps.py", "kernels.first", "kernels.second")
    assert after is not before
    assert ["first"] in [kernels for _, kernels, _, _ in described_before]
    assert ["second"] in [kernels for _, kernels, _, _ in described]
    assert described == fresh


# Each file's kernels made by a name bound to ``wp.kernel`` with options (``kernels._bound_decorator_options``):
# asked of every decorated function after each edit, kept while what it read holds.
BOUND_DECORATORS = {
    "pkg/__init__.py": "",
    "pkg/fwd.py": textwrap.dedent(
        """\
        import functools

        import warp as wp

        forward = functools.partial(wp.kernel, enable_backward=False)
        """
    ),
    "pkg/ops.py": textwrap.dedent(
        """\
        import warp as wp

        from pkg.fwd import forward


        @forward
        def scale(x: wp.array(dtype=float)):
            i = wp.tid()
            x[i] = x[i] * 2.0


        @staticmethod
        def plain(x):
            return x
        """
    ),
    "pkg/other.py": "import warp as wp\n\nCOUNT = 1\n",
}


PROJECT_DECORATORS = {
    "pkg/__init__.py": "",
    "pkg/make.py": textwrap.dedent(
        """\
        import warp as wp


        def forward(fn):
            return wp.kernel(fn, enable_backward=False)
        """
    ),
    "pkg/ops.py": textwrap.dedent(
        """\
        import warp as wp

        from pkg.make import forward


        @forward
        def scale(x: wp.array(dtype=float)):
            i = wp.tid()
            x[i] = x[i] * 2.0
        """
    ),
    "pkg/other.py": "import warp as wp\n\nCOUNT = 1\n",
}


# each kept decorator phase: its project, the fact's family, the file whose options the kernel takes, and an edit
# of that file that stops the decorator making kernels
DECORATOR_PHASES = [
    pytest.param(BOUND_DECORATORS, "kernels of bound decorators", "pkg/fwd.py",
                 ("functools.partial(wp.kernel, enable_backward=False)", "functools.partial(print)"), id="bound"),
    pytest.param(PROJECT_DECORATORS, "kernels of project decorators", "pkg/make.py",
                 ("return wp.kernel(fn, enable_backward=False)", "return fn"), id="project"),
]


def _decorated_kernels_edited(tmp_path, files: dict[str, str], family: str, name: str, old: str, new: str):
    """ops.py's derived kernels (name, options as written) before and after ``name``'s edit in a kept session, and
    a fresh session's, each with how many ``family`` facts the session's layers took over so far."""
    def derived(layer, ops):
        taken = layer.bindings.kept_facts.taken_over_of.get(family, 0)
        return taken, [(k.name, {key: v.text for key, v in k.options.items()}) for k in ops.kernels if k.derived]

    return _fact_edited(tmp_path, files, name, old, new, "pkg/ops.py", derived)


@pytest.mark.parametrize(("files", "family", "maker", "stop"), DECORATOR_PHASES)
def test_an_unrelated_edit_keeps_a_files_decorated_kernels(tmp_path, files, family, maker, stop):
    (taken_before, before), (taken_after, after), (_, fresh) = _decorated_kernels_edited(
        tmp_path, files, family, "pkg/other.py", "COUNT = 1", "COUNT = 2")
    assert taken_after == taken_before + 1  # taken over, not computed again
    assert after == before == fresh == [("scale", {"enable_backward": "False"})]


@pytest.mark.parametrize(("files", "family", "maker", "stop"), DECORATOR_PHASES)
def test_an_edit_of_the_options_a_decorator_applies(tmp_path, files, family, maker, stop):
    (taken_before, before), (taken_after, after), (_, fresh) = _decorated_kernels_edited(
        tmp_path, files, family, maker, "enable_backward=False", "enable_backward=True")
    assert taken_after == taken_before  # what it read changed: computed again
    assert before == [("scale", {"enable_backward": "False"})]
    assert after == fresh == [("scale", {"enable_backward": "True"})]


@pytest.mark.parametrize(("files", "family", "maker", "stop"), DECORATOR_PHASES)
def test_a_decorator_that_stops_making_kernels(tmp_path, files, family, maker, stop):
    (_, before), (_, after), (_, fresh) = _decorated_kernels_edited(tmp_path, files, family, maker, *stop)
    assert before == [("scale", {"enable_backward": "False"})]
    assert after == fresh == []


VARIANTS = {
    "pkg/__init__.py": "",
    "pkg/factory.py": textwrap.dedent(
        """\
        import warp as wp


        def make(scale):
            @wp.kernel
            def k(a: wp.array(dtype=float)):
                a[0] = scale

            return k
        """
    ),
    "pkg/calls.py": textwrap.dedent(
        """\
        import warp as wp

        from pkg.factory import make

        first = make(1.0)
        """
    ),
    "pkg/other.py": "import warp as wp\n\nCOUNT = 1\n",
}


def _variants(layer, model):
    from warplint.semantic.variants import kernel_variants

    return kernel_variants(layer, model, model.kernels[0])


def test_an_unrelated_edit_keeps_a_kernels_variants(tmp_path):
    before, after, fresh = _fact_edited(tmp_path, VARIANTS, "pkg/other.py", "COUNT = 1", "COUNT = 2",
                                        "pkg/factory.py", _variants)
    assert after is before  # taken over, not computed again
    assert after == fresh and not after.varying  # one literal on the one call


def test_a_new_argument_of_a_factory_makes_its_kernels_variants_again(tmp_path):
    before, after, fresh = _fact_edited(tmp_path, VARIANTS, "pkg/calls.py", "first = make(1.0)",
                                        "first = make(1.0)\nsecond = make(2.0)", "pkg/factory.py", _variants)
    assert after is not before and after == fresh
    assert not before.varying and after.varying == {("make", "scale")}  # a second value: two contents


# Each launch's argument types and devices (``arg_types.launch_argument_types``, ``builds.launch_devices``): facts of
# the launch's file, of its call and site, kept while what they read holds.
ARGUMENTS = {
    "pkg/__init__.py": "",
    "pkg/arrays.py": textwrap.dedent(
        """\
        import warp as wp

        DEVICE = "cuda:0"


        def make(n):
            return wp.zeros(n, dtype=wp.float32)
        """
    ),
    "pkg/user.py": textwrap.dedent(
        """\
        import warp as wp

        from pkg.arrays import DEVICE, make


        @wp.kernel
        def scale(x: wp.array(dtype=wp.float32)):
            x[wp.tid()] = x[wp.tid()] * 2.0


        def main():
            x = make(4)
            wp.launch(scale, dim=4, inputs=[x], device=DEVICE)
        """
    ),
    "pkg/other.py": "import warp as wp\n\nCOUNT = 1\n",
}


def _launch_facts(layer, model) -> list[tuple]:
    from warplint.semantic.arg_types import launch_argument_types
    from warplint.semantic.builds import launch_devices

    return [(launch_argument_types(layer, launch), launch_devices(layer, launch)) for launch in layer.launches(model)]


def _argument_facts_edited(tmp_path, name: str, old: str, new: str):
    return _fact_edited(tmp_path, ARGUMENTS, name, old, new, "pkg/user.py", _launch_facts)


def _shown(facts: list[tuple]) -> list[tuple]:
    return [([sorted(t.names) for t in types or ()], sorted(d.name for d in devices)) for types, devices in facts]


def test_an_unrelated_edit_keeps_a_launchs_argument_types_and_devices(tmp_path):
    before, after, fresh = _argument_facts_edited(tmp_path, "pkg/other.py", "COUNT = 1", "COUNT = 2")
    assert len(after) == 1
    assert after[0][0] is before[0][0] and after[0][1] is before[0][1]  # taken over, not computed again
    assert _shown(after) == _shown(fresh) == [([["array[warp.float32]"]], ["CUDA"])]


def test_an_edit_of_the_array_a_launch_passes(tmp_path):
    before, after, fresh = _argument_facts_edited(tmp_path, "pkg/arrays.py", "dtype=wp.float32", "dtype=wp.float64")
    assert _shown(before) == [([["array[warp.float32]"]], ["CUDA"])]
    assert _shown(after) == _shown(fresh) == [([["array[warp.float64]"]], ["CUDA"])]


def test_an_edit_of_the_device_a_launch_names(tmp_path):
    before, after, fresh = _argument_facts_edited(tmp_path, "pkg/arrays.py", '"cuda:0"', '"cpu"')
    assert _shown(after) == _shown(fresh) == [([["array[warp.float32]"]], ["CPU"])]
    assert after[0][1] is not before[0][1]


def test_a_fact_of_objects_no_layer_asks_for_is_forgotten(tmp_path):
    """A launch's facts are kept with the objects they are of; once no layer asked for them in ``UNUSED_LAYERS``
    layers (their launch made again since, in a real session) they are forgotten, not kept for ever."""
    root = write_tree(str(tmp_path / "tree"), {**ARGUMENTS, "pyproject.toml": "[tool.warplint]\n"})
    session = Session(Config(root=root), cache=False, jobs=1)
    user = os.path.join(root, "pkg/user.py")
    session.check_text(user, ARGUMENTS["pkg/user.py"])
    _launch_facts(session.project().layer, session.models[user])
    kept_facts = session.project().layer.bindings.unrecorded.kept_facts

    def families() -> set[str]:
        return {family for family, _, _ in kept_facts._facts}

    assert {"launch argument types", "launch devices"} <= families()
    session.enabled = frozenset()  # the layers below ask for nothing: no rule runs
    other = os.path.join(root, "pkg/other.py")
    for step in range(kept_facts.UNUSED_LAYERS + 1):
        session.check_text(other, f"{ARGUMENTS['pkg/other.py']}\n_EDITED = {step}\n")
        session.project()
    assert not {"launch argument types", "launch devices"} & families()
    assert "launches" in families()  # (a file's own facts stay while their model does)

"""After an edit, every answer that reuses earlier work equals a cold ``--no-cache`` run (issue 28).

A real corpus (warp-nn when ``scripts/fetch_corpora.py`` has fetched it, else the fixture tree every
rule test lints) is copied, a small package whose findings cross files is added to it, and files are
edited one after another in a random order (seeded, so a failure replays). After each edit three
answers are compared with a cold run of the same tree:

- the same ``Session`` kept across the edits, as the language server and flake8 keep it (models in
  memory, the changed files modelled again);
- a fresh ``Session`` over the cache directory the earlier steps wrote, as the CLI after an edit
  (the model cache, the result cache, the "models did not change" shortcut);
- the language server's path: the edited file checked with ``check_text`` in the kept session, then
  every other file whose findings the cold run changed.

The edits include the cross-file kinds the issue names: a late launch added in one file and a module
option set in another change the findings of a third file. The test also checks that some step
changed the findings of a file other than the one edited, so the cross-file invalidation is exercised.
"""

from __future__ import annotations

import os
import random
import shutil
import textwrap
from pathlib import Path

import pytest

from warplint.config import Config
from warplint.engine import Session
from warplint.semantic import file_facts

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.path.join(ROOT, ".cache", "corpora", "warp-nn")
FIXTURES = os.path.join(ROOT, "tests", "fixtures")
STEPS = 6

# A package whose findings cross files: pipeline.py's WC102/WC303 come from blur.py's module and
# tuning.py's option change (as in test_front_ends.py).
CROSS = {
    "crossfile/__init__.py": "",
    "crossfile/blur.py": textwrap.dedent(
        """\
        import warp as wp


        @wp.kernel(module="crossfile.tuning")
        def blur_rows(src: wp.array2d(dtype=float), dst: wp.array2d(dtype=float)):
            i, j = wp.tid()
            dst[i, j] = src[i, j]


        @wp.kernel(module="crossfile.tuning")
        def blur_cols(src: wp.array2d(dtype=float), dst: wp.array2d(dtype=float)):
            i, j = wp.tid()
            dst[i, j] = src[i, j]
        """
    ),
    "crossfile/tuning.py": textwrap.dedent(
        """\
        import warp as wp


        def prefer_speed():
            pass
        """
    ),
    "crossfile/pipeline.py": textwrap.dedent(
        """\
        import warp as wp

        from crossfile.blur import blur_cols, blur_rows
        from crossfile.tuning import prefer_speed


        class Pipeline:
            def __init__(self, device="cuda:0"):
                self.device = device

            def _run(self, kernel, src, dst, threads=256):
                wp.launch(kernel, dim=src.shape, inputs=[src, dst], device=self.device, block_dim=threads)

            def __call__(self, src, tmp, dst):
                self._run(blur_rows, src, tmp)
                prefer_speed()
                self._run(blur_cols, tmp, dst)
        """
    ),
}
# Cross-file edits: (file, old text, new text). Each changes pipeline.py's findings, not its own file's.
CROSS_EDITS = [
    # a module option set in tuning.py: pipeline.py changes options after a launch (WC102)
    ("crossfile/tuning.py", "    pass\n", '    wp.set_module_options({"fast_math": True})\n'),
    # a late launch at another block size in one file: pipeline.py's module runs at two (WC303)
    ("crossfile/pipeline.py", "        self._run(blur_cols, tmp, dst)\n",
     "        self._run(blur_cols, tmp, dst)\n        self._run(blur_rows, dst, tmp, threads=128)\n"),
    # the kernels move to their own module: pipeline.py's findings no longer concern crossfile.tuning
    ("crossfile/blur.py", 'module="crossfile.tuning"', 'module="crossfile.filters"'),
]


def _source_tree() -> str:
    return CORPUS if os.path.isdir(CORPUS) else FIXTURES


def _python_files(root: str) -> list[str]:
    found = []
    for directory, dirs, names in os.walk(root):
        dirs.sort()
        found += [os.path.join(directory, n) for n in sorted(names) if n.endswith(".py")]
    return found


def _edit(rng: random.Random, tree: str, files: list[str]) -> str:
    """One random edit of one file; its path."""
    path = rng.choice(files)
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    lines = text.splitlines(keepends=True)
    warp_lines = [i for i, line in enumerate(lines) if "wp." in line and line.strip() and not line.rstrip().endswith(
        ("(", ",", "\\", "[", "{"))]
    kind = rng.choice(["assign", "comment", "duplicate", "delete", "option"] if warp_lines else ["assign", "comment"])
    if kind == "assign":  # the model changes, no line moves
        text += f"\n_edited_{rng.randrange(1000)} = {rng.randrange(1000)}\n"
    elif kind == "comment":  # the text changes, the model does not
        text += f"\n# edited {rng.randrange(1000)}\n"
    else:
        i = rng.choice(warp_lines)
        line = lines[i]
        indent = line[:len(line) - len(line.lstrip())]
        if kind == "duplicate":  # a launch or option call once more, later: every line below moves
            lines.insert(i + 1, line if line.endswith("\n") else line + "\n")
        elif kind == "delete":  # may leave a block empty: a syntax error is an answer too
            lines[i] = "\n"
        else:  # a module option set where Warp code runs
            lines.insert(i + 1, f'{indent}wp.set_module_options({{"fast_math": True}})\n')
        text = "".join(lines)
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text)
    return path


def _answer(diagnostics) -> list[tuple]:
    def at(span) -> tuple[int, int, int, int]:
        return (span.line, span.col, span.end_line, span.end_col)

    return sorted((os.path.abspath(d.path), at(d.span), d.code, d.message, d.confidence,
                   tuple((os.path.abspath(r.path), at(r.span), r.message) for r in d.related)) for d in diagnostics)


def _by_file(answer: list[tuple]) -> dict[str, list[tuple]]:
    found: dict[str, list[tuple]] = {}
    for entry in answer:
        found.setdefault(entry[0], []).append(entry)
    return found


@pytest.mark.parametrize("seed", [2808])
def test_random_edits_answer_as_a_cold_run(tmp_path, seed):
    tree = str(tmp_path / "tree")
    shutil.copytree(_source_tree(), tree, ignore=shutil.ignore_patterns("__pycache__", ".warplint_cache"))
    for name, text in CROSS.items():
        os.makedirs(os.path.dirname(os.path.join(tree, name)), exist_ok=True)
        with open(os.path.join(tree, name), "w", encoding="utf-8") as fh:
            fh.write(text)
    with open(os.path.join(tree, "pyproject.toml"), "w", encoding="utf-8") as fh:
        fh.write("[tool.warplint]\n")
    cache_dir = str(tmp_path / "cache")
    config = Config(root=tree)

    def cold() -> list[tuple]:
        return _answer(Session(config, cache=False, jobs=1).lint_paths([tree]).diagnostics)

    kept = Session(config, cache_dir=cache_dir, jobs=1)
    before = _answer(kept.lint_paths([tree]).diagnostics)
    assert before == cold()
    rng = random.Random(seed)
    files = [f for f in _python_files(tree) if "warp" in Path(f).read_text(encoding="utf-8")]
    edits: list[tuple[str, tuple[str, str, str] | None]] = [("random", None)] * STEPS
    at = 0
    for cross_edit in CROSS_EDITS:  # at random steps, in their order (each builds on the one before)
        at = rng.randint(at, len(edits))
        edits.insert(at, ("cross", cross_edit))
        at += 1
    crossed = 0
    for step, (kind, cross) in enumerate(edits):
        if cross is None:
            edited = _edit(rng, tree, files)
        else:
            name, old, new = cross
            edited = os.path.join(tree, name)
            with open(edited, encoding="utf-8") as fh:
                text = fh.read()
            with open(edited, "w", encoding="utf-8") as fh:
                fh.write(text.replace(old, new))
        expected = cold()
        where = f"seed {seed}, step {step} ({kind}): {os.path.relpath(edited, tree)}"
        with open(edited, encoding="utf-8") as fh:
            new_text = fh.read()
        # the language server's path: the edited buffer first, then the files whose findings changed
        changed = {path for path, found in _by_file(expected).items() if found != _by_file(before).get(path)}
        changed |= set(_by_file(before)) - set(_by_file(expected))
        editor = {os.path.abspath(edited): _answer(kept.check_text(edited, new_text))}
        for path in sorted(changed - {os.path.abspath(edited)}):
            with open(path, encoding="utf-8") as fh:
                editor[path] = _answer(kept.check_text(path, fh.read()))
        for path, found in editor.items():
            assert found == _by_file(expected).get(path, []), f"editor path, {where}: {path}"
        assert _answer(kept.lint_paths([tree]).diagnostics) == expected, f"kept session, {where}"
        fresh = Session(config, cache_dir=cache_dir, jobs=1)
        assert _answer(fresh.lint_paths([tree]).diagnostics) == expected, f"CLI over the cache, {where}"
        crossed += any(path != os.path.abspath(edited) for path in changed)
        before = expected
    assert crossed, "no edit changed another file's findings: the cross-file edits lost their meaning"


def test_an_edit_that_leaves_the_model_as_it_was_keeps_the_index(tmp_path):
    """The editor's case: a comment typed at the end of a line outside a kernel models the file as before, so
    the index and every fact derived from it stay (the same ``Project`` object); what is read from the text
    still changes (a noqa comment suppresses a finding); so does any edit of a file without Warp that nothing
    parses. A change to the code, or a file that starts importing the Warp file, builds the index again. Each
    answer equals a fresh session's."""
    (tmp_path / "pyproject.toml").write_text("[tool.warplint]\n")
    app = tmp_path / "app.py"
    text = textwrap.dedent(
        """\
        import warp as wp


        @wp.kernel
        def first(a: wp.array(dtype=float)):
            a[0] = 1.0


        def run(a):
            wp.launch(first, dim=1, inputs=[a])
            wp.set_module_options({"max_unroll": 4})

            @wp.kernel
            def late(a: wp.array(dtype=float)):
                a[0] = 2.0

            wp.launch(late, dim=1, inputs=[a])
        """
    )
    app.write_text(text)
    config = Config(root=str(tmp_path))

    def fresh(buffer: str) -> list[tuple]:
        return _answer(Session(config, cache=False, jobs=1).check_text(str(app), buffer))

    session = Session(config, cache=False, jobs=1)
    found = _answer(session.check_text(str(app), text))
    assert any(entry[2] == "WC102" for entry in found), found
    index = session.project()
    commented = text.replace("inputs=[a])\n\n", "inputs=[a])  # the first launch\n\n")
    assert _answer(session.check_text(str(app), commented)) == found == fresh(commented)
    assert session.project() is index
    suppressed = commented.replace('{"max_unroll": 4})', '{"max_unroll": 4})  # noqa: WC102')
    answer = _answer(session.check_text(str(app), suppressed))
    assert session.project() is index
    assert answer == fresh(suppressed) and not any(entry[2] == "WC102" for entry in answer), answer
    # a file without Warp that nothing imports from: whatever its text, the index holds nothing of it
    notes = tmp_path / "notes.py"
    notes.write_text("STEPS = 1\n")
    assert _answer(session.check_text(str(notes), "STEPS = 1\n")) == []  # modelled: not parsed
    index = session.project()
    assert _answer(session.check_text(str(notes), "STEPS = 2\n")) == []
    assert session.project() is index
    notes.write_text("STEPS = 2\n")
    # once it imports the Warp file it can order its launches: parsed, and the index is built again
    assert _answer(session.check_text(str(notes), "from app import run\nrun(None)\n")) == _answer(
        Session(config, cache=False, jobs=1).check_text(str(notes), "from app import run\nrun(None)\n"))
    assert session.project() is not index
    index = session.project()
    # a kernel body's constant is no fact of the model (only a name defined twice keeps a digest of its text)
    body = suppressed.replace("a[0] = 2.0", "a[0] = 3.0")
    assert _answer(session.check_text(str(app), body)) == fresh(body)
    assert session.project() is index
    changed = body.replace("wp.launch(late, dim=1", "wp.launch(late, dim=2")  # a launch's arguments: a new model
    assert _answer(session.check_text(str(app), changed)) == fresh(changed)
    assert session.project() is not index


def test_an_edit_rebuilds_the_index_over_the_other_files_own_tables(tmp_path):
    """The editor's case after an edit that changes a file's model: the index is built again, but every other
    file's own tables (read from its model alone: ``semantic/file_facts.py``) are the ones the last index built,
    while the edited file's are new. The answer of each step equals a fresh session's (the edit adds a late
    launch, which changes the findings)."""
    for relative, text in CROSS.items():
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / relative).write_text(text)
    (tmp_path / "pyproject.toml").write_text("[tool.warplint]\n")
    config = Config(root=str(tmp_path))
    pipeline, blur = tmp_path / "crossfile" / "pipeline.py", tmp_path / "crossfile" / "blur.py"

    def fresh(path: Path, buffer: str) -> list[tuple]:
        return _answer(Session(config, cache=False, jobs=1).check_text(str(path), buffer))

    def own_tables(project, path: Path) -> dict:
        bindings = project.layer.bindings
        model = bindings.by_path[str(path)]
        return {"calls by callee": bindings._calls_by_callee(model), "calls by scope": bindings.calls_in(model, ""),
                "names": bindings.file_facts.cached(model, file_facts.assignment_tables).names}

    session = Session(config, cache=False, jobs=1)
    text = pipeline.read_text()
    first = _answer(session.check_text(str(pipeline), text))
    assert first == fresh(pipeline, text)
    index = session.project()
    blur_tables, pipeline_tables = own_tables(index, blur), own_tables(index, pipeline)
    _, before, after = CROSS_EDITS[1]  # a late launch at another block size
    edited = text.replace(before, after)
    answer = _answer(session.check_text(str(pipeline), edited))
    assert answer == fresh(pipeline, edited) and answer != first
    assert session.project() is not index  # a new model: a new index
    kept, remade = own_tables(session.project(), blur), own_tables(session.project(), pipeline)
    assert all(kept[name] is blur_tables[name] for name in kept), "the unchanged file's tables were built again"
    assert not any(remade[name] is pipeline_tables[name] for name in remade)
    assert _answer(session.check_text(str(blur), blur.read_text())) == fresh(blur, blur.read_text())


def test_an_editor_session_frees_the_replaced_index_after_its_answer(tmp_path):
    """An editor's session (``retire_indexes``) keeps the index an edit replaced until it has answered and calls
    ``free_retired``; one at most: the next change frees the older one. Other sessions free it at once."""
    import weakref

    (tmp_path / "pyproject.toml").write_text("[tool.warplint]\n")
    app = tmp_path / "app.py"
    text = "import warp as wp\n\n\n@wp.kernel\ndef k(a: wp.array(dtype=float)):\n    a[0] = 1.0\n"
    app.write_text(text)
    config = Config(root=str(tmp_path))
    for retire in (True, False):
        session = Session(config, cache=False, jobs=1)
        session.retire_indexes = retire
        session.check_text(str(app), text)
        first = weakref.ref(session.project())
        session.check_text(str(app), text + "\nN = 1\n")
        assert (first() is not None) is retire
        second = weakref.ref(session.project())
        session.check_text(str(app), text + "\nN = 2\n")
        assert first() is None and (second() is not None) is retire
        session.free_retired()
        assert second() is None

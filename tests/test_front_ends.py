"""One answer everywhere: every front end reports the same findings for the same file and config,
cross-file facts included (issue 14 item 4).

A small project whose findings need other files: ``pipeline.py`` is reported for an option change
and a block size that only the kernels' file and the options helper make findings (WC102, WC303),
and ``tuning.py`` would get a WC103 ("the options reach no kernel") if it were linted alone. Each
front end runs for real: the CLI on the file, on the directory, on stdin with ``--stdin-filename``,
the pre-commit hook (``pre-commit run``, on a git repository), flake8 in a subprocess, and the
language server over stdio.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import textwrap

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient
from test_precommit import precommit_env, run  # noqa: F401 - the session's pre-commit home, shared

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TIMEOUT = 60

FILES = {
    "imgproc/__init__.py": "",
    "imgproc/blur.py": textwrap.dedent(
        """\
        import warp as wp


        @wp.kernel(module="imgproc.tuning")
        def blur_rows(src: wp.array2d(dtype=float), dst: wp.array2d(dtype=float)):
            i, j = wp.tid()
            dst[i, j] = src[i, j]


        @wp.kernel(module="imgproc.tuning")
        def blur_cols(src: wp.array2d(dtype=float), dst: wp.array2d(dtype=float)):
            i, j = wp.tid()
            dst[i, j] = src[i, j]
        """
    ),
    "imgproc/tuning.py": textwrap.dedent(
        """\
        import warp as wp


        def prefer_speed():
            wp.set_module_options({"fast_math": True})
        """
    ),
    "imgproc/pipeline.py": textwrap.dedent(
        """\
        import warp as wp

        from imgproc.blur import blur_cols, blur_rows
        from imgproc.tuning import prefer_speed


        class Pipeline:
            def __init__(self, device="cuda:0"):
                self.device = device

            def _run(self, kernel, src, dst, threads=256):
                wp.launch(kernel, dim=src.shape, inputs=[src, dst], device=self.device, block_dim=threads)

            def __call__(self, src, tmp, dst):
                self._run(blur_rows, src, tmp)
                prefer_speed()
                self._run(blur_cols, tmp, dst)
                self._run(blur_rows, dst, tmp, threads=128)
        """
    ),
}
# What the whole project says about each file: (line, column 1-based, code).
EXPECTED = {
    "imgproc/pipeline.py": [(16, 9, "WC102"), (18, 9, "WC303")],
    "imgproc/tuning.py": [],
    # the module the pipeline launches builds backward code nothing in the project differentiates: a finding in
    # blur.py that only pipeline.py's launches make
    "imgproc/blur.py": [(5, 5, "WC406")],
}


@pytest.fixture
def project(tmp_path):
    root = tmp_path / "proj"
    for name, text in FILES.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    (root / "pyproject.toml").write_text("[tool.warplint]\n")
    return root


def cli(cwd, *args, stdin: str | None = None) -> list[dict]:
    result = subprocess.run(
        [sys.executable, "-m", "warplint", "--format", "json", *args],
        cwd=cwd, input=stdin, capture_output=True, text=True, timeout=300,
    )
    assert result.returncode in (0, 1), result.stderr
    return json.loads(result.stdout)


def found(entries: list[dict], name: str) -> list[tuple[int, int, str]]:
    return sorted((e["line"], e["column"], e["code"]) for e in entries if e["path"].endswith(name))


def test_the_project_has_cross_file_findings(project):
    """The fixture means something: linted alone, files say otherwise (what the front ends used to)."""
    from warplint.config import Config
    from warplint.engine import Session

    alone = Session(Config(root=str(project)), cache=False)
    for name in ("imgproc/pipeline.py", "imgproc/tuning.py"):
        path = str(project / name)
        got = [(d.line, d.col + 1, d.code) for d in alone.check_alone(path, FILES[name])]
        assert got != EXPECTED[name], name


@pytest.mark.parametrize("cache", [True, False], ids=["cache", "no-cache"])
def test_cli_file_directory_and_stdin_agree(project, cache):
    flags = [] if cache else ["--no-cache"]
    directory = cli(project, *flags, ".")
    for name, expected in EXPECTED.items():
        assert found(directory, name) == expected, ("directory", name)
        assert found(cli(project, *flags, name), name) == expected, ("file", name)
        piped = cli(project, *flags, "--stdin-filename", name, "-", stdin=FILES[name])
        assert found(piped, name) == expected, ("stdin", name)
        # from another working directory, with absolute paths
        assert found(cli(project.parent, *flags, str(project / name)), name) == expected, ("absolute", name)
    # the files named alone, then the tree: the same (the result cache is shared, per file)
    assert found(cli(project, *flags, "."), "imgproc/pipeline.py") == EXPECTED["imgproc/pipeline.py"]


def test_stdin_text_replaces_the_file_on_disk(project):
    """An unsaved buffer piped in counts instead of the file on disk, for the file and its project."""
    fixed = FILES["imgproc/pipeline.py"].replace("threads=128", "threads=256")
    piped = cli(project, "--stdin-filename", "imgproc/pipeline.py", "-", stdin=fixed)
    assert found(piped, "imgproc/pipeline.py") == [(16, 9, "WC102")]


def test_flake8_agrees(project):
    names = list(EXPECTED)
    result = subprocess.run([sys.executable, "-m", "flake8", "--select", "WC", *names],
                            cwd=project, capture_output=True, text=True, timeout=300)
    assert result.stderr == ""
    got: dict[str, list] = {name: [] for name in names}
    for line in result.stdout.splitlines():
        path, row, col, rest = line.split(":", 3)
        got[path].append((int(row), int(col), rest.split()[0]))
    assert got == EXPECTED
    # one file at a time, each in its own flake8 process (the result cache answers the later ones)
    for name, expected in EXPECTED.items():
        one = subprocess.run([sys.executable, "-m", "flake8", "--select", "WC", name],
                             cwd=project, capture_output=True, text=True, timeout=300)
        assert sorted((int(x.split(":")[1]), int(x.split(":")[2]), x.split(": ")[1].split()[0])
                      for x in one.stdout.splitlines()) == expected, name


def test_flake8_without_a_project_indexes_the_package_not_the_working_directory(tmp_path):
    """No pyproject.toml, setup.cfg or .git: a file in a package is indexed with its package (the
    cross-file findings stay), a loose script with the scripts beside it, and never the tree flake8
    runs in (that once read all of /tmp)."""
    outer = tmp_path / "loose"
    for name, text in FILES.items():
        (outer / name).parent.mkdir(parents=True, exist_ok=True)
        (outer / name).write_text(text)
    (outer / "elsewhere").mkdir()
    (outer / "elsewhere" / "other.py").write_text("import warp as wp\nwp.force_load()\n")
    result = subprocess.run([sys.executable, "-m", "flake8", "--select", "WC", "imgproc/pipeline.py"],
                            cwd=outer, capture_output=True, text=True, timeout=300)
    assert [line.split(": ")[1].split()[0] for line in result.stdout.splitlines()] == ["WC102", "WC303"]
    from warplint.config import load_config
    from warplint.discovery import ProjectScope

    config = load_config(str(outer / "imgproc"), set())
    scope = ProjectScope(config)
    assert sorted(os.path.relpath(p, outer) for p in scope.files_for(str(outer / "imgproc" / "pipeline.py"))) == [
        os.path.join("imgproc", n) for n in ("__init__.py", "blur.py", "pipeline.py", "tuning.py")]
    loose = ProjectScope(load_config(str(outer), set()))
    (outer / "script.py").write_text("import warp as wp\n")
    assert loose.files_for(str(outer / "script.py")) == [str(outer / "script.py")]  # not elsewhere/, not imgproc/


@pytest.fixture(scope="session")
def working_tree_repo(tmp_path_factory, precommit_env):  # noqa: F811 - the fixture imported above
    """This checkout's working tree (tracked and untracked, not ignored files) committed in a repository
    of its own: pre-commit installs the hook from a commit, and the tree under test may not be one yet."""
    import shutil

    repo = tmp_path_factory.mktemp("warplint-tree")
    listed = run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], ROOT, precommit_env,
                 check=True).stdout
    for name in filter(None, listed.split("\0")):
        source = os.path.join(ROOT, name)
        if os.path.isfile(source):
            os.makedirs(os.path.dirname(os.path.join(repo, name)), exist_ok=True)
            shutil.copy2(source, os.path.join(repo, name))
    run(["git", "init", "-q", "-b", "main"], repo, precommit_env, check=True)
    run(["git", "add", "."], repo, precommit_env, check=True)
    run(["git", "commit", "-q", "-m", "tree"], repo, precommit_env, check=True)
    head = run(["git", "rev-parse", "HEAD"], repo, precommit_env, check=True).stdout.strip()
    return str(repo), head


def test_precommit_hook_agrees(project, precommit_env, working_tree_repo):  # noqa: F811 - imported fixture
    repo, head = working_tree_repo
    (project / ".pre-commit-config.yaml").write_text(textwrap.dedent(
        f"""\
        repos:
          - repo: {repo}
            rev: {head}
            hooks:
              - id: warplint
                args: [--format, concise]
        """
    ))
    run(["git", "init", "-q", "-b", "main"], project, precommit_env, check=True)
    run(["git", "add", "."], project, precommit_env, check=True)
    for name, expected in EXPECTED.items():
        result = run([sys.executable, "-m", "pre_commit", "run", "warplint", "--files", name], project, precommit_env)
        output = result.stdout + result.stderr
        got = []
        for line in output.splitlines():
            if line.startswith(name + ":"):
                _, row, col, rest = line.split(":", 3)
                got.append((int(row), int(col), rest.split()[0]))
        assert sorted(got) == expected, (name, output)
        assert result.returncode == (1 if expected else 0), output


@pytest_lsp.fixture(
    config=ClientServerConfig(server_command=[sys.executable, "-m", "warplint", "server", "--debounce", "0.05"])
)
async def client(lsp_client: LanguageClient, project):
    await lsp_client.initialize_session(
        types.InitializeParams(
            capabilities=types.ClientCapabilities(
                window=types.WindowClientCapabilities(work_done_progress=True),
                text_document=types.TextDocumentClientCapabilities(
                    publish_diagnostics=types.PublishDiagnosticsClientCapabilities(version_support=True)
                ),
            ),
            root_uri=project.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=project.as_uri(), name="proj")],
        )
    )
    yield
    await lsp_client.shutdown_session()


def lsp_found(diagnostics) -> list[tuple[int, int, str]]:
    return sorted((d.range.start.line + 1, d.range.start.character + 1, str(d.code)) for d in diagnostics)


async def settled(client: LanguageClient, uri: str, expected: list, seconds: float = TIMEOUT) -> list:
    """The diagnostics published for ``uri`` once they equal ``expected`` (a server may publish the
    file's own findings first); the last ones published when they never do."""
    async def until():
        while lsp_found(client.diagnostics.get(uri, [])) != expected:
            await asyncio.sleep(0.02)

    try:
        await asyncio.wait_for(until(), seconds)
    except TimeoutError:
        pass
    return lsp_found(client.diagnostics.get(uri, []))


@pytest.mark.asyncio
async def test_editor_agrees_reports_progress_and_republishes_related_files(client: LanguageClient, project):
    uris = {}
    for name in EXPECTED:
        path = project / name
        uri = uris[name] = path.as_uri()
        client.text_document_did_open(types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id="python", version=1, text=FILES[name])))
    for name, expected in EXPECTED.items():
        assert await settled(client, uris[name], expected) == expected, name
    # the project index was built under $/progress: begin, (reports), end
    kinds = [[type(v).__name__ for v in values] for values in client.progress_reports.values()]
    assert any(k[0] == "WorkDoneProgressBegin" and k[-1] == "WorkDoneProgressEnd" for k in kinds), kinds

    # A fix in one file changes the findings of another open file: the kernels move to their own
    # module, so pipeline.py's option change and block sizes no longer concern imgproc.tuning.
    blur = FILES["imgproc/blur.py"].replace('module="imgproc.tuning"', 'module="imgproc.filters"')
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=uris["imgproc/blur.py"], version=2),
        content_changes=[types.TextDocumentContentChangeWholeDocument(text=blur)]))
    # what the CLI says once that change is on disk (the server reads only the buffer)
    (project / "imgproc" / "blur.py").write_text(blur)
    expected_after = found(cli(project, "--no-cache", "."), "imgproc/pipeline.py")
    assert expected_after != EXPECTED["imgproc/pipeline.py"]  # the change matters
    assert await settled(client, uris["imgproc/pipeline.py"], expected_after) == expected_after


def test_single_file_cli_is_not_slower_to_answer_than_it_must(project):
    """The CLI on one file reads its project but answers a second time from the result cache: the
    second run models no file."""
    first = cli(project, "imgproc/pipeline.py")
    assert found(first, "imgproc/pipeline.py") == EXPECTED["imgproc/pipeline.py"]
    from warplint.config import load_config
    from warplint.engine import Session

    session = Session(load_config(str(project), set()))
    result = session.lint_paths([str(project / "imgproc" / "pipeline.py")], project_context=True)
    assert result.cached and session.models == {}
    assert sorted((d.line, d.col + 1, d.code) for d in result.diagnostics) == EXPECTED["imgproc/pipeline.py"]



def test_a_change_that_leaves_the_models_as_they_were_is_answered_from_the_findings_before(project):
    """A comment added: the changed file is parsed again, its model is the one cached, and the findings
    stored for the texts before are the answer (no other model is loaded). A noqa comment or a change
    to the code is not such a change."""
    from warplint.config import load_config
    from warplint.engine import Session

    pipeline = project / "imgproc" / "pipeline.py"
    assert found(cli(project, "."), "imgproc/pipeline.py") == EXPECTED["imgproc/pipeline.py"]
    pipeline.write_text(FILES["imgproc/pipeline.py"] + "# a note at the end\n")
    session = Session(load_config(str(project), set()))
    result = session.lint_paths([str(project)], project_context=True)
    assert result.cached and list(session.models) == [str(pipeline)]  # only the changed file was modelled
    assert sorted((os.path.relpath(d.path, project).replace(os.sep, "/"), d.line, d.col + 1, d.code)
                  for d in result.diagnostics) == sorted((name, *f) for name, fs in EXPECTED.items() for f in fs)

    lines = FILES["imgproc/pipeline.py"].splitlines(True)
    lines[17] = lines[17].rstrip("\n") + "  # noqa: WC303\n"
    for text in ("".join(lines), FILES["imgproc/pipeline.py"].replace("threads=128", "threads=256")):
        pipeline.write_text(text)
        cached, fresh = cli(project, "."), cli(project, "--no-cache", ".")
        assert found(cached, "imgproc/pipeline.py") == found(fresh, "imgproc/pipeline.py") == [(16, 9, "WC102")]


SCRIPT_AND_PACKAGE = {
    "main.py": ("import warp as wp\n\nfrom pkg import kernels\n\n\ndef main():\n"
                "    wp.launch(kernels.double, dim=4, inputs=[wp.zeros(4, dtype=wp.float32)])\n"
                "    wp.launch(kernels.double, dim=4, inputs=[wp.zeros(4, dtype=wp.float64)])\n\n\n"
                "if __name__ == \"__main__\":\n    main()\n"),
    "pkg/__init__.py": "",
    "pkg/kernels.py": ("import warp as wp\nfrom typing import Any\n\n\n@wp.kernel\n"
                       "def double(a: wp.array(dtype=Any)):\n    i = wp.tid()\n    a[i] = a[i] + a[i]\n"),
    "unrelated/tool.py": "import warp as wp\nwp.force_load()\n",
}


@pytest.mark.parametrize("package", ["pkg", "nspkg"])
def test_a_script_is_indexed_with_the_folders_it_imports(tmp_path, package):
    """No project marker: ``python main.py`` puts main.py's folder first on ``sys.path``, so ``from pkg import
    kernels`` is the program's own code, a regular package or a namespace folder alike. The script and the
    package are one index from every starting point (they were two: the launch of the generic kernel with two
    dtypes was not seen, from `warplint .` or any file); a folder no script imports stays out."""
    from warplint.config import load_config
    from warplint.discovery import ProjectScope

    root = tmp_path / "loose"
    for name, text in SCRIPT_AND_PACKAGE.items():
        if package == "nspkg" and name == "pkg/__init__.py":
            continue
        path = root / name.replace("pkg/", f"{package}/")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text.replace("from pkg import", f"from {package} import"))
    scope = ProjectScope(load_config(str(root), set()))
    assert scope.scope_of(str(root / package / "kernels.py")) == scope.scope_of(str(root / "main.py"))
    assert sorted(os.path.relpath(p, root) for p in scope.files_for(str(root / "main.py"))) == sorted(
        n.replace("pkg/", f"{package}/") for n in SCRIPT_AND_PACKAGE
        if not n.startswith("unrelated/") and not (package == "nspkg" and n == "pkg/__init__.py"))
    expected = ["main.py:8:5: WC106"]
    for args, cwd in ((["."], root), (["main.py"], root), (["kernels.py", "../main.py"], root / package)):
        done = subprocess.run([sys.executable, "-m", "warplint", "--no-cache", "--format", "concise", *args],
                              cwd=cwd, capture_output=True, text=True, timeout=300)
        found = [" ".join(line.split()[:2]).replace("../", "") for line in done.stdout.splitlines()
                 if ": WC106" in line]
        assert found == expected, (args, done.stdout, done.stderr)


def test_a_pytest_rootdir_is_a_project(tmp_path):
    """A ``pytest.ini`` marks the folder pytest runs from (its rootdir; ``pythonpath = .`` makes the code there
    importable): the tests in ``tests/`` are indexed with the package they import."""
    root = tmp_path / "proj"
    files = {**{k: v for k, v in SCRIPT_AND_PACKAGE.items() if k.startswith("pkg/")},
             "pytest.ini": "[pytest]\npythonpath = .\ntestpaths = tests\n",
             "tests/test_double.py": SCRIPT_AND_PACKAGE["main.py"].replace("def main():", "def test_double():")
             .split("\n\nif __name__")[0] + "\n"}
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    done = subprocess.run([sys.executable, "-m", "warplint", "--no-cache", "--format", "concise", "."],
                          cwd=root, capture_output=True, text=True, timeout=300)
    assert [" ".join(line.split()[:2]) for line in done.stdout.splitlines() if ": WC" in line] == [
        os.path.join("pkg", "kernels.py") + ":6:5: WC406",  # the test is the program that launches the package
        os.path.join("tests", "test_double.py") + ":8:5: WC106"], done.stdout + done.stderr

"""The layer's fact "this code can run at all" (``Bindings.may_run``): a function of a test file or script that
nothing calls, names or imports runs nowhere; everything else may."""

from __future__ import annotations

from warplint.testing import project_of

TEST_FILE = '''\
"""Text that names `leftover` runs nothing (a docstring)."""
import atexit

import pytest


def leftover(*args):
    def inner():
        return args

    return inner


def called_by_a_test():
    pass


def named_at_module_level():
    pass


atexit.register(named_at_module_level)


def named_in_a_class_body():
    pass


class Holder:
    run = staticmethod(named_in_a_class_body)


def run_by_name_in_a_subprocess():
    pass


def test_isolated():
    code = "from tests.test_a import run_by_name_in_a_subprocess; run_by_name_in_a_subprocess()"
    return code


def recursive_only(n):
    return recursive_only(n - 1) if n else 0


@pytest.fixture
def decorated():
    pass


def setup_module(module):
    pass


def pytest_generate_tests(metafunc):
    pass


class TestThing:
    def helper(self):
        pass

    def test_it(self):
        pass


def test_one():
    called_by_a_test()
'''


def _may_run(tmp_path, files: dict[str, str], path: str) -> dict[str, bool]:
    # files that do not mention Warp are not modelled
    project = project_of(tmp_path, {name: "import warp\n" + text for name, text in files.items()})
    bindings = project._facts.bindings
    file = next(f for f in bindings.files if f.path.endswith(path))
    return {qualname: bindings.may_run(file, qualname) for qualname in file.functions}


def test_what_runs_in_a_test_file(tmp_path):
    runs = _may_run(tmp_path, {"tests/test_a.py": TEST_FILE}, "test_a.py")
    dead = {q for q, ok in runs.items() if not ok}
    # a helper nothing names, what is nested in it, and a function only its own body names
    assert dead == {"leftover", "leftover.inner", "recursive_only"}
    assert runs["test_one"] and runs["TestThing.test_it"] and runs["TestThing.helper"]


def test_a_test_file_another_file_imports_may_run(tmp_path):
    runs = _may_run(tmp_path, {"tests/test_a.py": TEST_FILE,
                               "tests/test_b.py": "from test_a import called_by_a_test\n"}, "test_a.py")
    assert runs["leftover"]


def test_a_script_helper_nothing_calls_may_still_run(tmp_path):
    # a script is a module too: a notebook or a tool outside the project may import it and call the helper
    script = ("def leftover():\n    pass\n\n\ndef main():\n    pass\n\n\n"
              "if __name__ == '__main__':\n    main()\n")
    runs = _may_run(tmp_path, {"run.py": script}, "run.py")
    assert runs == {"leftover": True, "main": True}


def test_library_code_may_run(tmp_path):
    # a library's users call its functions: nothing in the project says they do not
    runs = _may_run(tmp_path, {"pkg/__init__.py": "", "pkg/lib.py": "def leftover():\n    pass\n\n\n"
                               "def _private():\n    pass\n"}, "lib.py")
    assert runs == {"leftover": True, "_private": True}


def test_conftest_hooks_and_fixtures_run(tmp_path):
    conftest = ("import pytest\n\n\ndef pytest_configure(config):\n    pass\n\n\n@pytest.fixture\ndef f():\n"
                "    pass\n\n\ndef leftover():\n    pass\n")
    runs = _may_run(tmp_path, {"tests/conftest.py": conftest}, "conftest.py")
    assert runs == {"pytest_configure": True, "f": True, "leftover": False}

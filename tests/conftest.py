import os
import sys

import pytest

# Before warplint is imported (it is read once, at import), and inherited by the warplint processes tests start:
# Call.bound raises for a Warp callee or parameter missing from warplint/warp_api.py instead of answering None.
os.environ["WARPLINT_STRICT_WARP_API"] = "1"
assert "warplint.warp_api" not in sys.modules, "warplint was imported before tests/conftest.py set strict mode"

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURES = os.path.join(ROOT, "tests", "fixtures")
collect_ignore = ["fixtures"]  # lint inputs, not tests: a fixture's `tests` package would shadow this one


@pytest.fixture
def run_cli(tmp_path):
    """Run the CLI in-process; returns (exit code, stdout, stderr)."""
    import io

    from warplint.cli import main

    def run(*argv, stdin=None, cwd=None):
        out, err = io.StringIO(), io.StringIO()
        old_cwd = os.getcwd()
        old_stdin = sys.stdin
        try:
            os.chdir(cwd or tmp_path)
            if stdin is not None:
                sys.stdin = io.StringIO(stdin)
            code = main(list(argv), out=out, err=err)
        finally:
            os.chdir(old_cwd)
            sys.stdin = old_stdin
        return code, out.getvalue(), err.getvalue()

    return run


@pytest.fixture(autouse=True, scope="session")
def _private_cache_key(tmp_path_factory):
    """The cache's per-user key lives in the user's cache directory: tests keep their own."""
    from warplint import cache

    home = tmp_path_factory.mktemp("xdg-cache")
    old = os.environ.get("XDG_CACHE_HOME")
    os.environ["XDG_CACHE_HOME"] = str(home)
    cache._SECRETS.clear()
    yield home
    if old is None:
        os.environ.pop("XDG_CACHE_HOME", None)
    else:
        os.environ["XDG_CACHE_HOME"] = old
    cache._SECRETS.clear()

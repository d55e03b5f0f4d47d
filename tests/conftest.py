import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURES = os.path.join(ROOT, "tests", "fixtures")


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

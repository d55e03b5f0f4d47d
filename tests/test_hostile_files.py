"""Files a cloned repository can plant where warplint reads: a FIFO or a link to /dev/zero in place of a cache
entry, a config or a --confirm artifact. Each is refused as not a regular file instead of blocking on the open
or reading without end (issue 29, item 1). Every run has a timeout: a hang fails the test."""

import glob
import os
import subprocess
import sys

import pytest

from warplint.sources import FileTooLarge, NotRegularFile, read_regular

APP = "import warp as wp\nwp.config.cache_kernels = False\n"


def warplint(cwd, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "warplint", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=60)


def test_read_regular_refuses_fifos_devices_and_large_files(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(NotRegularFile):
        read_regular(str(fifo), 100)  # a blocking open would wait here for a writer
    with pytest.raises(NotRegularFile):
        read_regular("/dev/zero", 100)
    big = tmp_path / "big"
    big.write_bytes(b"x" * 101)
    with pytest.raises(FileTooLarge):
        read_regular(str(big), 100)
    assert read_regular(str(big), 101) == b"x" * 101


@pytest.mark.parametrize("plant", ["fifo", "dev-zero"])
def test_planted_cache_entries_are_a_miss(tmp_path, plant):
    (tmp_path / "pyproject.toml").write_text("[tool.warplint]\n")
    (tmp_path / "app.py").write_text(APP)
    first = warplint(tmp_path, ".", "--format", "concise")
    entries = glob.glob(str(tmp_path / ".warplint_cache" / "*.pickle"))
    assert first.returncode == 1 and entries
    for entry in entries:
        os.remove(entry)
        if plant == "fifo":
            os.mkfifo(entry)
        else:
            os.symlink("/dev/zero", entry)
    again = warplint(tmp_path, ".", "--format", "concise")
    assert again.returncode == 1 and again.stdout == first.stdout, again.stderr


def test_a_fifo_config_is_a_one_line_error(tmp_path):
    (tmp_path / "app.py").write_text(APP)
    os.mkfifo(tmp_path / "conf.toml")
    result = warplint(tmp_path, ".", "--config", "conf.toml")
    assert result.returncode == 2
    assert "not a regular file" in result.stderr and len(result.stderr.strip().splitlines()) == 1


def test_compare_refuses_fifo_artifacts(tmp_path):
    os.mkfifo(tmp_path / "a.json")
    os.mkfifo(tmp_path / "b.json")
    result = warplint(tmp_path, "compare", "a.json", "b.json")
    assert result.returncode == 2 and "not a regular file" in result.stderr

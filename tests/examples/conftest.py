"""Each example runs as a user runs it: its own process, outside the checkout."""

import shutil

import pytest


@pytest.fixture
def user_dirs(tmp_path):
    """``(cwd, scratch, home)``: the user's folder, Flink's temp files and logs (removed
    afterwards), the long-term memory's home."""
    cwd, scratch, home = tmp_path / "work", tmp_path / "flink", tmp_path / "home"
    cwd.mkdir()
    yield cwd, scratch, home
    shutil.rmtree(scratch, ignore_errors=True)

"""Jobs that read their options from Flink's configuration run as a user runs them."""

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

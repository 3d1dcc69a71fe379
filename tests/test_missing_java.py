"""No ``java`` where PyFlink looks (the PATH, or JAVA_HOME): a script, an example and a CLI
command each end with one line naming the problem and ``flink-agents-ltm doctor``, instead
of PyFlink's raw 23-line ``FileNotFoundError: 'java'``."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = """
from pyflink.datastream import StreamExecutionEnvironment
from flink_agents_ltm.api.execution_environment import AgentsExecutionEnvironment
StreamExecutionEnvironment.get_execution_environment()
"""


def without_java(tmp_path: Path, java_home: str | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("JAVA_HOME", "PYTHONPATH")}
    env["PATH"] = str(tmp_path / "empty-bin")  # no java (nor anything else) on the PATH
    env["FLINK_AGENTS_LTM_HOME"] = str(tmp_path / "home")
    if java_home is not None:
        env["JAVA_HOME"] = java_home
    return env


@pytest.mark.parametrize("java_home", [None, "/nowhere/jdk"])
def test_a_users_script_ends_with_one_line_pointing_at_doctor(tmp_path, java_home):
    (tmp_path / "my_job.py").write_text(SCRIPT)
    result = subprocess.run([sys.executable, "my_job.py"], cwd=tmp_path, capture_output=True,
                            text=True, timeout=300, env=without_java(tmp_path, java_home))
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("JavaNotFoundError: PyFlink could not start Java: no ")
    assert "flink-agents-ltm doctor" in lines[0]
    assert ("JAVA_HOME=/nowhere/jdk" if java_home else "from the PATH") in lines[0]


def test_an_example_ends_with_the_same_line(tmp_path):
    result = subprocess.run([sys.executable, "-m", "flink_agents_ltm.examples.first_agent"],
                            cwd=tmp_path, capture_output=True, text=True, timeout=300,
                            env=without_java(tmp_path, None))
    assert result.returncode == 1
    assert result.stderr.strip().splitlines()[-1].startswith(
        "JavaNotFoundError: PyFlink could not start Java: no java from the PATH")
    assert "Traceback" not in result.stderr


def test_another_error_still_gets_pythons_traceback(tmp_path):
    (tmp_path / "my_job.py").write_text(
        "import flink_agents_ltm.api.execution_environment\nopen('/nowhere/file')\n")
    result = subprocess.run([sys.executable, "my_job.py"], cwd=tmp_path, capture_output=True,
                            text=True, timeout=300, env=without_java(tmp_path, None))
    assert result.returncode == 1
    assert "Traceback" in result.stderr and "FileNotFoundError" in result.stderr

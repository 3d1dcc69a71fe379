"""Run a job the way a user does: a fresh ``python`` (or ``flink run``) in its own folder.

The child gets the environment of a user's shell: no ``PYTHONPATH``, its current
folder outside this checkout (so the package is found through the venv only, as
after ``pip install -e .``), the venv's ``bin`` first on ``PATH`` (as an
activated venv). Flink's temp files and logs go to a scratch folder of the test,
long-term memory to ``home``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VENV_BIN = Path(sys.executable).parent
PYFLINK_BIN = Path(__import__("pyflink").__file__).parent / "bin"


def user_environment(scratch: Path, home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    for sub in ("py", "jvm", "log"):
        (scratch / sub).mkdir(parents=True, exist_ok=True)
    env.update(
        PATH=f"{VENV_BIN}{os.pathsep}{env.get('PATH', '')}",
        TMPDIR=str(scratch / "py"),
        JVM_ARGS=f"-Djava.io.tmpdir={scratch / 'jvm'}",
        FLINK_LOG_DIR=str(scratch / "log"),
        FLINK_AGENTS_LTM_HOME=str(home),
        **extra,
    )
    return env


def run_python(args: list[str], cwd: Path, scratch: Path, home: Path, timeout: float = 600,
               **extra_env: str) -> subprocess.CompletedProcess:
    """``python <args>`` with the venv's interpreter, as a user runs a job."""
    return subprocess.run([sys.executable, *args], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, env=user_environment(scratch, home, **extra_env))


def run_flink(args: list[str], cwd: Path, scratch: Path, home: Path, timeout: float = 600,
              **extra_env: str) -> subprocess.CompletedProcess:
    """``flink <args>`` from PyFlink's ``bin`` folder (the client runs ``python`` from
    ``PATH``: the venv's)."""
    return subprocess.run([str(PYFLINK_BIN / "flink"), *args], cwd=cwd, capture_output=True,
                          text=True, timeout=timeout,
                          env=user_environment(scratch, home, **extra_env))


def failure(result: subprocess.CompletedProcess) -> str:
    """What a test shows when a job did not do what it should."""
    return (f"exit code {result.returncode}\n--- stdout\n{result.stdout[-3000:]}\n"
            f"--- stderr\n{result.stderr[-5000:]}")

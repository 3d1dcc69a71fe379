"""Run a job the way a user does: a fresh ``python`` (or ``flink run``) in its own folder.

The child gets the environment of a user's shell: no ``PYTHONPATH``, its current
folder outside this checkout (so the package is found through the venv only, as
after ``pip install -e .``). ``python`` jobs run with the venv's interpreter by
its path and the venv *not* on ``PATH``: there ``python`` is another interpreter,
one that cannot run a job (the harder case: PyFlink then finds no venv by
itself); ``flink run`` gets the venv's ``bin`` first on ``PATH``, as an
activated venv, since its client runs ``python``. Flink's temp files and logs go
to a scratch folder of the test, long-term memory to ``home``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VENV_BIN = Path(sys.executable).parent
PYFLINK_BIN = Path(__import__("pyflink").__file__).parent / "bin"


def user_environment(scratch: Path, home: Path, venv_on_path: bool,
                     **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    path = [p for p in env.get("PATH", "").split(os.pathsep) if Path(p) != VENV_BIN]
    for sub in ("py", "jvm", "log", "bin"):
        (scratch / sub).mkdir(parents=True, exist_ok=True)
    for name in ("python", "python3"):
        other = scratch / "bin" / name
        other.write_text('#!/bin/sh\necho "another Python, not the job\'s" >&2\nexit 3\n')
        other.chmod(0o700)
    first = VENV_BIN if venv_on_path else scratch / "bin"
    env.update(
        PATH=os.pathsep.join([str(first), *path]),
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
                          timeout=timeout,
                          env=user_environment(scratch, home, False, **extra_env))


def run_flink(args: list[str], cwd: Path, scratch: Path, home: Path, timeout: float = 600,
              **extra_env: str) -> subprocess.CompletedProcess:
    """``flink <args>`` from PyFlink's ``bin`` folder (the client runs ``python`` from
    ``PATH``: the venv's)."""
    return subprocess.run([str(PYFLINK_BIN / "flink"), *args], cwd=cwd, capture_output=True,
                          text=True, timeout=timeout,
                          env=user_environment(scratch, home, True, **extra_env))


def failure(result: subprocess.CompletedProcess) -> str:
    """What a test shows when a job did not do what it should."""
    return (f"exit code {result.returncode}\n--- stdout\n{result.stdout[-3000:]}\n"
            f"--- stderr\n{result.stderr[-5000:]}")

"""Setup that says what it does: `make demo` names what it installs and about how long it
takes, prints a line every few seconds while pip runs and pip's output only when it fails
(so no setuptools "Editable installation" block); Maven's output carries no colour codes."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from tests.job_runner import ROOT

PROGRESS = ROOT / "scripts" / "progress"


def run(args, **env):
    return subprocess.run(args, capture_output=True, text=True, timeout=120,
                          env={**os.environ, **env})


def test_progress_ticks_while_the_command_runs_and_keeps_its_chatter_to_itself(tmp_path):
    result = run([str(PROGRESS), "installing", "sh", "-c", "echo pip chatter; sleep 2.5"],
                 PROGRESS_EVERY="1", TMPDIR=str(tmp_path))
    assert result.returncode == 0
    lines = result.stdout.splitlines()
    assert lines[0] == "    still installing (1 s so far)", lines
    assert lines[-1].startswith("    installing took ") and "pip chatter" not in result.stdout
    assert list(tmp_path.iterdir()) == []  # its private log is gone


def test_progress_prints_the_commands_output_and_exit_code_when_it_fails(tmp_path):
    result = run([str(PROGRESS), "installing", "sh", "-c", "echo 'No matching distribution' >&2;"
                  " exit 3"], TMPDIR=str(tmp_path))
    assert result.returncode == 3
    assert "installing failed (exit 3)" in result.stderr
    assert "No matching distribution" in result.stderr


def test_make_demo_installs_through_progress_and_says_what_and_how_long(tmp_path):
    planned = run(["make", "-n", "-C", str(ROOT), f"VENV={tmp_path / 'venv'}", "demo"]).stdout
    assert "PyFlink, Mem0, PyTorch and the embedding model, about 2 minutes" in planned
    pip_lines = [line for line in planned.splitlines() if " pip install" in line]
    assert pip_lines and all(line.startswith("scripts/progress ") for line in pip_lines), \
        pip_lines


def test_maven_through_scripts_mvn_prints_no_colour_codes():
    plain = run([str(ROOT / "scripts" / "mvn"), "-v"])
    assert plain.returncode == 0 and "Apache Maven" in plain.stdout
    assert "\x1b" not in plain.stdout + plain.stderr
    assert "scripts/mvn" in (ROOT / "Makefile").read_text().split("java-demo:")[1].split("\n\n")[0]


def test_build_wheel_runs_maven_through_scripts_mvn():
    assert '"$ROOT/scripts/mvn"' in Path(ROOT / "scripts" / "build-wheel").read_text()

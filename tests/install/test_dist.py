"""``make dist`` and what it ships: the wheel carries the package and the Java bridge's jar,
its version is the package's one ``__version__``, and ``java-classpath`` names jars that
exist. ``make dist`` runs with this Python as the venv (its install stamp taken as done)."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from email.parser import Parser
from pathlib import Path

import pytest

import flink_agents_ltm
from flink_agents_ltm.cli import BRIDGE_JAR, UsageError, java_classpath_entries

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.install


@pytest.fixture(scope="module")
def dist(tmp_path_factory):
    """The folder ``make dist`` wrote (removed when the module ends)."""
    folder = tmp_path_factory.mktemp("dist")
    venv = Path(sys.executable).parent.parent
    make = subprocess.run(
        ["flock", "/tmp/ltm-heavy.lock", "make", "-C", str(ROOT), "--assume-old=.venv/.installed",
         f"PY={sys.executable}", f"VENV={venv}", f"DIST={folder}", "dist"],
        capture_output=True, text=True, timeout=900, check=False)
    assert make.returncode == 0, make.stdout[-2000:] + make.stderr[-2000:]
    yield folder
    subprocess.run(["rm", "-rf", str(folder)], check=False)


def the_wheel(dist: Path) -> Path:
    wheels = list(dist.glob("*.whl"))
    assert len(wheels) == 1, wheels
    return wheels[0]


def test_make_dist_builds_a_wheel_holding_the_package_and_the_bridge_jar(dist):
    names = zipfile.ZipFile(the_wheel(dist)).namelist()
    assert "flink_agents_ltm/java/flink-agents-ltm-bridge.jar" in names
    assert "flink_agents_ltm/cli.py" in names and "flink_agents_ltm/api/__init__.py" in names
    assert list(dist.glob("*.tar.gz")), "no sdist"


def test_the_jar_in_the_wheel_holds_the_java_bridge_classes(dist):
    with zipfile.ZipFile(the_wheel(dist)) as wheel, \
            wheel.open("flink_agents_ltm/java/flink-agents-ltm-bridge.jar") as jar_file:
        classes = zipfile.ZipFile(jar_file).namelist()
    assert "org/flinkagents/ltm/job/MemoryAgentJob.class" in classes


def test_the_wheels_version_is_the_packages_one_version(dist):
    with zipfile.ZipFile(the_wheel(dist)) as wheel:
        metadata = next(name for name in wheel.namelist() if name.endswith(".dist-info/METADATA"))
        version = Parser().parsestr(wheel.read(metadata).decode())["Version"]
    assert version == flink_agents_ltm.__version__


def test_version_option_prints_the_packages_version():
    printed = subprocess.run([sys.executable, "-m", "flink_agents_ltm.cli", "--version"],
                             capture_output=True, text=True, check=True).stdout
    assert printed.strip() == f"flink-agents-ltm {flink_agents_ltm.__version__}"


def test_java_classpath_prints_the_bridge_jar_and_pyflinks_jars_all_existing(dist):
    printed = subprocess.run(
        [sys.executable, "-m", "flink_agents_ltm.cli", "java-classpath", "--lines"],
        capture_output=True, text=True, check=True, cwd=ROOT).stdout.splitlines()
    assert printed[0] == str(BRIDGE_JAR)
    assert any("/pyflink/lib/" in line for line in printed)
    assert any("/pyflink/opt/flink-python-" in line for line in printed)
    assert [line for line in printed if not Path(line).is_file()] == []


def test_java_classpath_without_the_jar_says_how_to_build_it(tmp_path):
    with pytest.raises(UsageError, match=r"no Java bridge jar at .*make jar"):
        java_classpath_entries(tmp_path / "flink-agents-ltm-bridge.jar")

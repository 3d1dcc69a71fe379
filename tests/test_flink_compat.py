"""The Flink versions the package runs on are named in one place, and any other version is
refused with one line that says what is installed and what to install."""

import subprocess
from pathlib import Path

import pytest

from flink_agents_ltm.flink_compat import (
    UnsupportedFlinkVersionError,
    flink_python_jar,
    installed_version,
    require_supported_flink,
    unsupported_reason,
    version_line,
)

ROOT = Path(__file__).resolve().parents[1]
# Quick, and about the installed Flink: part of every version's smoke set (make test-flink).
pytestmark = pytest.mark.flink_smoke


@pytest.mark.parametrize("version", ["1.20.0", "1.20.5", "2.0.2", "2.1.3", "2.2.1", "2.3.0"])
def test_every_supported_line_is_accepted(version):
    assert unsupported_reason(version) is None
    assert require_supported_flink(version) == version


@pytest.mark.parametrize("version", ["1.19.3", "1.18.1", "2.4.0", "3.0.0"])
def test_another_version_is_refused_in_one_line_naming_it_and_the_supported_ones(version):
    with pytest.raises(UnsupportedFlinkVersionError) as raised:
        require_supported_flink(version)
    message = str(raised.value)
    assert "\n" not in message
    assert message == (f"flink-agents-ltm runs on apache-flink 1.20.x, 2.0.x, 2.1.x, 2.2.x or "
                       f"2.3.x, not {version}: pip install 'apache-flink==2.3.0'")


def test_no_flink_at_all_is_refused_saying_what_to_install():
    assert unsupported_reason(None) == (
        "flink-agents-ltm needs apache-flink 1.20.x, 2.0.x, 2.1.x, 2.2.x or 2.3.x, and none is "
        "installed: pip install 'apache-flink==2.3.0'")


def test_a_version_line_is_major_and_minor():
    assert version_line("1.20.5") == (1, 20)
    assert version_line("2.3.0") == (2, 3)
    assert version_line("nightly") is None


def test_the_installed_flink_is_supported_and_its_flink_python_jar_is_found_by_pattern():
    import pyflink

    version = installed_version()
    assert require_supported_flink() == version
    jar = flink_python_jar(Path(pyflink.__file__).resolve().parent)
    assert jar is not None and jar.name == f"flink-python-{version}.jar"


def test_each_supported_line_has_a_constraints_file_that_scripts_flink_venv_reads():
    from flink_agents_ltm.flink_compat import SUPPORTED_LINES

    files = sorted(p.name for p in (ROOT / "constraints").glob("flink-*.txt"))
    assert files == sorted(f"flink-{major}.{minor}.txt" for major, minor in SUPPORTED_LINES)


def test_flink_venv_refuses_an_unsupported_version_before_installing_anything(tmp_path):
    result = subprocess.run([str(ROOT / "scripts" / "flink-venv"), "1.19.3"],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 1
    assert result.stderr.strip() == ("flink-venv: apache-flink 1.19.3 is not supported "
                                     "(supported lines: 1.20 2.0 2.1 2.2 2.3)")
    assert not (ROOT / ".venv-flink-1.19.3").exists()


def test_building_an_agent_stream_on_an_unsupported_flink_fails_with_the_one_line(monkeypatch):
    from flink_agents_ltm import flink_compat
    from flink_agents_ltm.runtime import agent_operator

    monkeypatch.setattr(flink_compat, "installed_version", lambda: "1.19.3")
    with pytest.raises(UnsupportedFlinkVersionError, match=r"^flink-agents-ltm runs on .* not "
                                                           r"1\.19\.3: pip install"):
        agent_operator.build_agent_stream(None, None, None, None, None)


def test_ci_runs_a_smoke_set_for_every_supported_line_but_the_default_whose_suite_it_runs():
    import re

    from flink_agents_ltm.flink_compat import DEFAULT_VERSION, SUPPORTED_LINES

    ci = (ROOT / ".ci" / "run").read_text()
    others = re.search(r"^others=\(([^)]*)\)$", ci, re.M).group(1).split()
    always = re.search(r'FLINK_MATRIX-"([0-9.]+) ', ci).group(1)
    lines = sorted(version_line(v) for v in [always, *others])
    assert lines == sorted(set(SUPPORTED_LINES) - {version_line(DEFAULT_VERSION)})

"""Agent options in Flink's configuration reach the operator of a job started by ``flink
run``: the cluster's config.yaml, -D, and the job's Configuration, in Flink's order."""

import shutil
from pathlib import Path

import pytest

from tests.job_runner import PYFLINK_BIN, failure, run_flink

JOB = Path(__file__).with_name("jobs") / "options_probe_job.py"

pytestmark = pytest.mark.cluster


def flink_conf_dir(folder: Path, agent_options: str) -> Path:
    """PyFlink's own conf folder plus ``agent_options`` at the end of its config.yaml."""
    shipped = PYFLINK_BIN.parent / "conf"
    folder.mkdir(parents=True)
    for log_config in shipped.glob("log4j*.properties"):
        shutil.copy(log_config, folder)
    (folder / "config.yaml").write_text((shipped / "config.yaml").read_text() + agent_options)
    return folder


def test_config_yaml_then_dash_d_then_the_jobs_configuration_set_the_agent_options(user_dirs):
    cwd, scratch, home = user_dirs
    conf = flink_conf_dir(scratch / "conf", "\n".join([
        "agents:",
        "  job-id: from-config-yaml",
        "  error-handling: ignore",
        "long-term-memory:",
        "  max-item-length: 5",
        ""]))
    result = run_flink(["run", "-t", "local",
                        "-Dagents.job-id=from-dash-d",
                        "-Dlong-term-memory.max-item-length=10",
                        "-py", str(JOB)],
                       cwd, scratch, home, FLINK_CONF_DIR=str(conf))
    assert result.returncode == 0, failure(result)
    lines = [line for line in result.stdout.splitlines()
             if line.startswith(("stored", "refused"))]
    # max-item-length: 5 in config.yaml, 10 on -D, "15" in the job's Configuration: 15 wins
    assert sorted(lines) == [
        "refused: item 0 has 16 characters, more than the 15 allowed "
        "(long-term-memory.max-item-length); split or summarize it",
        "stored 12 characters",
    ]
    # agents.error-handling: ignore (config.yaml) dropped the failing input's run; the
    # job id of -D (over config.yaml) named the job's memory folder
    assert sorted(p.name for p in home.iterdir()) == ["from-dash-d"]


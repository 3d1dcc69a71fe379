"""The must-show of Apache Flink Agents' keys: a job configured only with upstream's keys (in
the ``agent:`` section of config.yaml, and ``LongTermMemoryOptions.Mem0`` in the program)
runs unchanged on PyFlink's mini-cluster and does what the same job with our keys does."""

import ast
import shutil
from pathlib import Path

import pytest

from tests.job_runner import PYFLINK_BIN, failure, run_python

JOB = Path(__file__).with_name("jobs") / "upstream_keys_job.py"

pytestmark = pytest.mark.cluster

CONFIG = {
    "upstream": """
agent:
  job-identifier: notes-job
  error-handling-strategy: IGNORE
  num-async-threads: 2
  chat:
    async: true
  long-term-memory:
    mem0:
      embedding-model-setup: hashing
""",
    "ours": """
agents:
  job-id: notes-job
  error-handling: ignore
  durable-async:
    capacity: 2
long-term-memory:
  embedding-model-setup: hashing
""",
}


@pytest.mark.parametrize("keys", ["upstream", "ours"])
def test_a_job_configured_with_upstreams_keys_runs_as_with_ours(keys, user_dirs):
    cwd, scratch, home = user_dirs
    conf = scratch / "conf"
    conf.mkdir(parents=True)
    shipped = PYFLINK_BIN.parent / "conf"
    for log_config in shipped.glob("log4j*.properties"):
        shutil.copy(log_config, conf)
    (conf / "config.yaml").write_text((shipped / "config.yaml").read_text() + CONFIG[keys])

    result = run_python([str(JOB), keys], cwd, scratch, home, timeout=120,
                        FLINK_CONF_DIR=str(conf))
    assert result.returncode == 0, failure(result)
    outputs = sorted(ast.literal_eval(line) for line in result.stdout.splitlines()
                     if line.startswith("("))
    # "boom" failed and its run was dropped (error handling IGNORE); each key's memory is in
    # the declared store (vector store), embedded by the declared hashing model (the
    # default model's 384 dimensions would not fit the store), under the job identifier
    assert outputs == [
        ("alice", [("alice likes tea", "notes-job", "notes")]),
        ("bob", [("bob likes coffee", "notes-job", "notes")]),
    ]

"""One failing e2e test does not fail the others: the jobs a test submitted are cancelled
when it ends, pass or fail, and a submission onto a cluster whose slots a leftover job holds
fails at once naming that job, not minutes later with NoResourceAvailableException."""

import os
import subprocess
import sys
import textwrap
import time
import uuid

import pytest

from e2e.cluster import LeftoverJobError
from tests.pgvector.server import ROOT

ENDLESS = str(ROOT / "e2e" / "jobs" / "endless_job.py")  # holds its slots until cancelled

pytestmark = pytest.mark.cluster


def wait_until_it_holds_every_slot(cluster, name):
    deadline = time.monotonic() + 120
    while cluster.slots()[0] > 0 and time.monotonic() < deadline:
        time.sleep(0.5)
    [job] = [job for job in cluster.jobs() if job["name"] == name]
    return job


def test_a_submission_onto_a_full_cluster_fails_naming_the_job_that_holds_the_slots(cluster):
    name = f"holder-{uuid.uuid4().hex[:8]}"
    total = cluster.slots()[1]
    held = cluster.run("-d", "-py", ENDLESS, "--name", name, "--parallelism", str(total))
    assert held.returncode == 0, cluster.summary_of(held)
    job = wait_until_it_holds_every_slot(cluster, name)

    with pytest.raises(LeftoverJobError) as refused:
        cluster.run("-py", ENDLESS, "--name", "never-submitted", "--parallelism", "1")
    assert str(refused.value) == (
        f"the cluster has 0 of {total} slots free and this job needs 1; held by: "
        f"{job['jid']} '{name}' {job['state']}")
    assert "never-submitted" not in {job["name"] for job in cluster.jobs()}


INNER_TESTS = '''
import time

ENDLESS = {endless!r}
NAME = {name!r}


def test_one_leaves_a_job_on_every_slot_and_fails(cluster):
    total = cluster.slots()[1]
    held = cluster.run("-d", "-py", ENDLESS, "--name", NAME, "--parallelism", str(total))
    assert held.returncode == 0, cluster.summary_of(held)
    deadline = time.monotonic() + 120
    while cluster.slots()[0] > 0 and time.monotonic() < deadline:
        time.sleep(0.5)
    assert cluster.slots()[0] == 0
    raise AssertionError("fails on purpose, its job still running")


def test_two_finds_every_slot_free(cluster):
    cluster.require_free_slots(cluster.slots()[1])
'''


def test_a_test_that_fails_with_its_job_running_leaves_every_slot_free_for_the_next(
        cluster, tmp_path):
    """An inner pytest session on this session's cluster, through e2e/conftest.py's
    fixtures: its first test submits a job that never ends and fails; its second test
    needs every slot of the cluster."""
    name = f"left-behind-{uuid.uuid4().hex[:8]}"
    (tmp_path / "conftest.py").write_text('pytest_plugins = ["e2e.conftest"]\n')
    (tmp_path / "test_inner.py").write_text(textwrap.dedent(INNER_TESTS.format(
        endless=ENDLESS, name=name)))
    inner = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
         "--basetemp", str(tmp_path / "inner-tmp"), str(tmp_path)],
        cwd=tmp_path, capture_output=True, text=True, timeout=600,
        env={**os.environ, "LTM_E2E_CLUSTER_DIR": str(cluster.folder),
             "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT),
                                                         os.environ.get("PYTHONPATH")]))})
    report = inner.stdout.splitlines()
    outcome = "\n".join(report[-25:])
    assert "1 failed, 1 passed" in report[-1], outcome
    assert "AssertionError: fails on purpose, its job still running" in inner.stdout, outcome
    assert [job["state"] for job in cluster.jobs() if job["name"] == name] == ["CANCELED"]
    available, total = cluster.slots()
    assert available == total

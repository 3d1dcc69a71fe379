"""Cancelling a job whose durable calls hang never takes a TaskManager down (issue 19).

Flink cancels a task by interrupting its thread and gives it 180 s to exit; after that it
declares the TaskManager broken and stops it. The job's keyed tasks wait for calls that
hang for an hour (capacity 4, 8 calls, a 10-minute call timeout): in the end-of-input drain
or in a submit to a full pool. Cancelled through the REST API, the job must reach CANCELED
long before Flink's 180 s, and both TaskManagers (their processes, and the JobManager's list)
must still be there, in thread mode (Python inside the TaskManager's JVM) and process mode."""

import contextlib
import time
import uuid

import pytest

from e2e.cluster import TERMINAL
from e2e.test_runtime_on_a_cluster import alive, status
from tests.pgvector.server import ROOT, run_script

JOB = str(ROOT / "e2e" / "jobs" / "hanging_job.py")
JOB_FOLDER = str(ROOT / "e2e" / "jobs")
CALLS = 8
CAPACITY = 4
# Flink stops a TaskManager whose task did not exit 180 s after the cancel; a cancel that
# stops waiting for the calls took 0.3 s (thread mode) and 1.2 s (process mode) here. The
# bound is the 10 s: a cancel an operator would call prompt.
CANCEL_BOUND_S = 10

pytestmark = pytest.mark.cluster


def job_named(cluster, name):
    return next((job for job in cluster.jobs() if job["name"] == name), None)


def wait_for(condition, timeout, what):
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {timeout:.0f} s")
        time.sleep(0.2)


def calls_started(folder):
    """How many calls started, once at least a pool's worth did and no more came for 3 s.
    Each subtask starts ``CAPACITY`` calls at most: how many of the ``CALLS`` keys each gets
    is Flink's hashing, so all of them start only when the keys split evenly; the others
    wait in a submit to a full pool."""
    wait_for(lambda: len(list(folder.glob("started-*"))) >= CAPACITY, 240,
             f"{CAPACITY} durable calls started (markers in {folder})")
    count, since = -1, time.monotonic()
    while time.monotonic() - since < 3:
        now = len(list(folder.glob("started-*")))
        if now != count:
            count, since = now, time.monotonic()
        time.sleep(0.2)
    return count


def restart_missing_taskmanagers(cluster, before):
    """Cleanup: a TaskManager that went down (the bug) is started again for the next tests."""
    running = {tm["id"]: tm for tm in status(cluster)["taskmanagers"]}
    for tm in before:
        if tm["id"] not in running or not alive(running[tm["id"]]["pid"]):
            run_script("flink-cluster", "restart-taskmanager", "--dir", str(cluster.folder),
                       str(tm["id"]), timeout=240)


@pytest.mark.parametrize("mode", ["thread", "process"])
def test_cancelling_a_job_whose_calls_hang_ends_it_and_leaves_both_taskmanagers_running(
        cluster, scratch, mode):
    before = status(cluster)["taskmanagers"]
    registered_before = {tm["id"] for tm in cluster.rest("/taskmanagers")["taskmanagers"]}
    assert len(before) == 2 and len(registered_before) == 2, f"the cluster: {before}"
    name = f"hanging-{mode}-{uuid.uuid4().hex[:8]}"
    try:
        client = cluster.run("-d", "-py", JOB, "-pyfs", JOB_FOLDER, "--name", name,
                             "--mode", mode, "--folder", str(scratch), "--calls", str(CALLS),
                             "--capacity", str(CAPACITY), "--timeout-s", "600", "--hang-s", "3600")
        assert client.returncode == 0, cluster.summary_of(client)
        started = calls_started(scratch)
        print(f"\n{mode} mode: {started} durable calls hang")
        job = job_named(cluster, name)
        assert job is not None and job["state"] == "RUNNING", f"the job: {job}"

        cancelled_at = time.monotonic()
        cluster.rest(f"/jobs/{job['jid']}?mode=cancel", method="PATCH")
        deadline = cancelled_at + CANCEL_BOUND_S
        while job_named(cluster, name)["state"] not in TERMINAL:
            if time.monotonic() > deadline:
                break
            time.sleep(0.1)
        took = time.monotonic() - cancelled_at
        final = job_named(cluster, name)["state"]
        print(f"\n{mode} mode: {final} {took:.1f} s after the cancel")
        assert final == "CANCELED", f"{took:.1f} s after the cancel the job is {final}"

        gone = [tm for tm in before if not alive(tm["pid"])]
        assert not gone, f"TaskManager processes gone after the cancel: {gone}"
        registered = {tm["id"] for tm in cluster.rest("/taskmanagers")["taskmanagers"]}
        assert registered == registered_before, (
            f"registered TaskManagers before the cancel {sorted(registered_before)}, "
            f"after {sorted(registered)}")
    finally:
        # A cancel that hangs ends when Flink gives up on the task (180 s) and stops its
        # TaskManager: wait for that, then bring back any TaskManager that went down.
        job = job_named(cluster, name)
        if job is not None and job["state"] not in TERMINAL:
            cluster.rest(f"/jobs/{job['jid']}?mode=cancel", method="PATCH")
            with contextlib.suppress(AssertionError):
                wait_for(lambda: job_named(cluster, name)["state"] in TERMINAL, 240,
                         "the job stopped")
        restart_missing_taskmanagers(cluster, before)

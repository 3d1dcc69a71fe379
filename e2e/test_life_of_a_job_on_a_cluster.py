"""A job's ordinary life on the standalone cluster, under one job id: run it, run it again
without state, stop it with a savepoint and resume it at another parallelism, twice. Through
it all every input gives one output, is charged once (a slow durable call, in flight at each
savepoint) and is remembered in one row of its own, and every run's rows stay.

The runs (``e2e/jobs/lifecycle_job.py``, inputs numbered across runs, 32 keys):

1. inputs 0-79 at parallelism 2, to the end;
2. inputs 80-159, a new submission without state (its counters start over);
3. inputs 160-559 at parallelism 2, stopped with a savepoint mid-stream;
4. resumed from it at parallelism 1, stopped with a savepoint again;
5. resumed from that at parallelism 2, to the end.
"""

import json
import subprocess
import time
import urllib.request
import uuid
from collections import Counter, defaultdict

import pytest

from e2e.test_runtime_on_a_cluster import rows_in_embedded_store
from tests.pgvector.server import ROOT

pytestmark = pytest.mark.cluster

JOB = str(ROOT / "e2e" / "jobs" / "lifecycle_job.py")
JOB_FOLDER = str(ROOT / "e2e" / "jobs")
KEYS = 32
# Inputs per second, below what 32 keys charging for HOLD_MS each get through (64/s), so
# that the source still runs at each stop, with about RATE * HOLD_MS calls in flight.
RATE = 40
HOLD_MS = 500
FRESH_RUNS = [(0, 80), (80, 80)]  # (first input, inputs)
RESUMED = (160, 400)  # one stream across three runs, two savepoints
STOP_AFTER = [60, 100]  # outputs of runs 3 and 4 before each is stopped


def post(cluster, path, body):
    request = urllib.request.Request(
        f"http://127.0.0.1:{cluster.rest_port}{path}", data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"}, method="POST")
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read())


def outputs(base_dir):
    path = base_dir / "outputs.log"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def charges(base_dir):
    path = base_dir / "calls.log"
    lines = path.read_text().splitlines() if path.exists() else []
    return Counter(int(line.split()[2]) for line in lines if line.startswith("charge "))


def submit(cluster, base_dir, job_id, first, events, parallelism, savepoint=None):
    args = (["-s", savepoint] if savepoint else []) + [
        "-py", JOB, "-pyfs", JOB_FOLDER, "--", "--job-id", job_id, "--first", str(first),
        "--events", str(events), "--keys", str(KEYS), "--rate", str(RATE),
        "--hold-ms", str(HOLD_MS), "--parallelism", str(parallelism),
        "--base-dir", str(base_dir)]
    return cluster.popen(cluster.command(*args), slots=parallelism, text=True,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def finished(cluster, client, timeout=240):
    try:
        out, err = client.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        client.kill()
        out, err = client.communicate()
        raise AssertionError("the run did not end: " + cluster.summary(out, err)) from None
    assert client.returncode == 0, cluster.summary(out, err, client.returncode)


def running_job(cluster, job_id, timeout=120):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for job in cluster.unfinished_jobs():
            if job["name"] == f"lifecycle-{job_id}" and job["state"] == "RUNNING":
                return job["jid"]
        time.sleep(0.5)
    raise AssertionError(f"no running job lifecycle-{job_id} after {timeout} s")


def stop_with_savepoint(cluster, jid, directory, timeout=120):
    """Flink's stop-with-savepoint (no drain); answers the savepoint's path."""
    trigger = post(cluster, f"/jobs/{jid}/stop",
                   {"targetDirectory": str(directory), "drain": False})["request-id"]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        answer = cluster.rest(f"/jobs/{jid}/savepoints/{trigger}")
        if answer["status"]["id"] == "COMPLETED":
            operation = answer["operation"]
            assert "location" in operation, f"the savepoint failed: {operation}"
            return operation["location"]
        time.sleep(0.5)
    raise AssertionError(f"stop-with-savepoint of {jid} did not complete in {timeout} s")


def wait_for_outputs(base_dir, count, timeout=180):
    deadline = time.monotonic() + timeout
    while len(outputs(base_dir)) < count:
        assert time.monotonic() < deadline, f"{len(outputs(base_dir))} of {count} outputs"
        time.sleep(0.2)


@pytest.fixture(scope="module")
def life(cluster, tmp_path_factory):
    """The five runs; answers (base dir, job id, {run: outputs}, charges in flight at each
    stop)."""
    base_dir = tmp_path_factory.mktemp("life-of-a-job")
    base_dir.chmod(0o700)
    job_id = f"life-{uuid.uuid4().hex[:8]}"
    runs = {}
    seen = 0
    for number, (first, events) in enumerate(FRESH_RUNS, start=1):
        finished(cluster, submit(cluster, base_dir, job_id, first, events, parallelism=2))
        runs[number] = outputs(base_dir)[seen:]
        seen += len(runs[number])
    first, events = RESUMED
    in_flight = []
    savepoint = None
    for number, parallelism in ((3, 2), (4, 1), (5, 2)):
        client = submit(cluster, base_dir, job_id, first, events, parallelism, savepoint)
        if number < 5:
            jid = running_job(cluster, job_id)
            wait_for_outputs(base_dir, seen + STOP_AFTER[number - 3])
            savepoint = stop_with_savepoint(cluster, jid, base_dir / f"savepoints-{number}")
        finished(cluster, client)
        if number < 5:  # inputs charged whose output the next run gives: in flight
            in_flight.append(len(set(charges(base_dir)) - {o["n"] for o in outputs(base_dir)}))
        runs[number] = outputs(base_dir)[seen:]
        seen += len(runs[number])
    return base_dir, job_id, runs, in_flight


def test_every_input_of_every_run_has_exactly_one_output(life):
    _, _, runs, _ = life
    total = sum(events for _, events in FRESH_RUNS) + RESUMED[1]
    seen = Counter(o["n"] for run in runs.values() for o in run)
    assert sorted(seen) == list(range(total))
    assert [n for n, times in seen.items() if times > 1] == []


def test_the_counters_start_over_in_a_new_run_and_go_on_across_savepoints(life):
    _, _, runs, _ = life
    for segment in ([1], [2], [3, 4, 5]):
        counts = defaultdict(list)
        for number in segment:
            for o in runs[number]:
                counts[o["key"]].append(o["count"])
        assert len(counts) == KEYS
        for key, seen in counts.items():
            assert sorted(seen) == list(range(1, len(seen) + 1)), (segment, key)


def test_no_input_is_charged_twice_though_charges_were_in_flight_at_each_savepoint(life):
    base_dir, _, _, in_flight = life
    total = sum(events for _, events in FRESH_RUNS) + RESUMED[1]
    assert all(n > 0 for n in in_flight), in_flight  # the savepoints found calls mid-way
    charged = charges(base_dir)
    assert sorted(charged) == list(range(total))
    assert {n: times for n, times in charged.items() if times > 1} == {}


def test_every_runs_memories_stay_one_row_per_input_under_its_own_id(life):
    base_dir, job_id, runs, _ = life
    total = sum(events for _, events in FRESH_RUNS) + RESUMED[1]
    stored = rows_in_embedded_store(base_dir, job_id)
    texts = Counter(row["data"] for row in stored.values())
    assert sorted(texts) == sorted(f"k{n % KEYS} event {n}" for n in range(total))
    assert max(texts.values()) == 1
    every_output = [o for run in runs.values() for o in run]
    assert {stored[o["id"]]["data"] for o in every_output} == set(texts)
    assert len({o["id"] for o in every_output}) == total

"""The Java agent's promises on the standalone cluster (two TaskManagers, parallelism 2), with
long-term memory in pgvector and in the embedded store: 1024 inputs over 64 keys through
CountingAgentJob (java-bridge), one TaskManager running the agent killed with SIGKILL mid-run;
the job recovers on the other. Every input then has exactly one output, each key's
short-term counter counted each of its inputs once, the store holds exactly one row per input
with its own text, and no action read another key's memory. Reuses the Python failover e2e's
cluster fixtures, kill helpers and row checks (e2e/test_runtime_on_a_cluster.py)."""

import json
import shutil
import signal
import subprocess
from collections import Counter, defaultdict
from contextlib import ExitStack

import pytest

from e2e.client_output import ClientOutput
from e2e.test_runtime_on_a_cluster import (
    KEYS,
    a_taskmanager_running_the_agent,
    check_exactly_one_output_per_input_and_exact_counters,
    check_one_row_per_input,
    results_of,
    rows_in_embedded_store,
    store_of,
)
from e2e.test_standalone_cluster import SITE_PACKAGES, java_job_jar
from tests.pgvector.server import ROOT, rows_in_postgres, run_script, scratch_dir

EVENTS = 1024
JOB_CLASS = "org.flinkagents.ltm.job.CountingAgentJob"

pytestmark = pytest.mark.cluster


def java_job_args(scratch, store, job_id, rate):
    args = ["-c", JOB_CLASS, str(java_job_jar()),
            "--python", str(ROOT / ".venv" / "bin" / "python"),
            "--pythonpath", f"{SITE_PACKAGES}:{ROOT}",
            "--events", str(EVENTS), "--keys", str(KEYS), "--rate", str(rate),
            "--parallelism", "2", "--memory-job-id", job_id, "--base-dir", str(scratch)]
    if store is not None:
        store_file = scratch / f"{job_id}-store.json"  # the password stays off command lines
        store_file.touch(mode=0o600)
        store_file.write_text(json.dumps(store))
        args += ["--vector-store-file", str(store_file)]
    return args


@pytest.fixture(scope="module", params=["pgvector", "embedded"])
def java_failover(cluster, request):
    store_kind = request.param
    job_id = f"java-failover-{store_kind}"
    store = store_of(cluster, job_id.replace("-", "_")) if store_kind == "pgvector" else None
    scratch = scratch_dir("test-e2e-java-failover-")
    with ExitStack() as cleanup:
        cleanup.callback(shutil.rmtree, scratch, ignore_errors=True)  # after the job stopped
        cleanup.enter_context(cluster.cancelling_new_jobs())  # cancels the job, pass or fail
        client = cluster.popen(cluster.command(*java_job_args(scratch, store, job_id, 50)),
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        output = ClientOutput(client)
        victim = None
        try:
            assert output.wait_for_results(100, timeout=300), (
                "the job ended (or stalled) before the TaskManager could be killed: "
                + cluster.summary(*output.finish(timeout=60), client.returncode))
            victim = a_taskmanager_running_the_agent(cluster)
            run_script("flink-cluster", "kill-taskmanager", "--dir", str(cluster.folder),
                       str(victim["id"]))
            out, err = output.finish(timeout=600)
            rows = (rows_in_postgres(store) if store is not None
                    else rows_in_embedded_store(scratch, job_id))
        finally:
            if client.poll() is None:
                client.send_signal(signal.SIGTERM)
                client.wait(timeout=60)
            if victim is not None:  # the next test finds two TaskManagers again
                run_script("flink-cluster", "restart-taskmanager", "--dir", str(cluster.folder),
                           str(victim["id"]), timeout=240)
    assert client.returncode == 0, cluster.summary(out, err, client.returncode)
    return results_of(out), rows


def test_after_a_taskmanager_kill_each_input_of_the_java_agent_has_exactly_one_output(
        java_failover):
    results, _ = java_failover
    check_exactly_one_output_per_input_and_exact_counters(results, EVENTS)


def test_after_a_taskmanager_kill_each_key_of_the_java_agent_counted_each_input_once(
        java_failover):
    results, _ = java_failover
    counts = defaultdict(list)
    for r in results:
        counts[r["key"]].append(r["count"])
    inputs_of = Counter(f"k{n % KEYS}" for n in range(EVENTS))
    wrong = {key: sorted(seen) for key, seen in counts.items()
             if sorted(seen) != list(range(1, inputs_of[key] + 1))}
    assert not wrong and len(counts) == KEYS, (
        f"{len(wrong)} key(s) with wrong counters (key: counts seen): "
        + "; ".join(f"{k}: {v}" for k, v in sorted(wrong.items())[:8])
        + f"; {len(counts)} of {KEYS} keys answered")


def test_after_a_taskmanager_kill_the_java_agent_stored_each_input_exactly_once(
        java_failover):
    results, rows = java_failover
    check_one_row_per_input(rows, results, EVENTS)


def test_no_java_action_read_another_keys_memory(java_failover):
    results, _ = java_failover
    foreign = [(r["n"], r["key"], r["foreign"][:3]) for r in results if r["foreign"]]
    assert not foreign, (f"{len(foreign)} input(s) read another key's memory (n, key, "
                         f"texts): {foreign[:12]}")

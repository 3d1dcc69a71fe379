"""The Java agent's promises on the standalone cluster (two TaskManagers, parallelism 2), with
long-term memory in pgvector and in the embedded store: 1024 inputs over 64 keys through
CountingAgentJob (java-bridge), one TaskManager running the agent killed with SIGKILL mid-run;
the job recovers on the other. Every input then has exactly one output, each key's
short-term counter counted each of its inputs once, the store holds exactly one row per input
with its own text, and no action read another key's memory. Every input is also charged once
(a side effect logged outside Flink, in a durable call with a reconciler): with the PostgreSQL
action-state store on (the third variant), no charge happens twice; without it, the charges
that completed after the restored checkpoint happen again. Reuses the Python failover e2e's
cluster fixtures, kill helpers and row checks (e2e/test_runtime_on_a_cluster.py)."""

import shutil
import signal
import subprocess
import sys
import time
from collections import Counter, defaultdict
from contextlib import ExitStack
from dataclasses import dataclass

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
    vector_store_file_args,
)
from e2e.test_standalone_cluster import SITE_PACKAGES, java_job_jar
from tests.pgvector.server import ROOT, rows_in_postgres, run_script, scratch_dir

EVENTS = 1024
RATE = 50  # events/s: the input lasts ~20 s, so the kill lands mid-run
KILL_AFTER = EVENTS // 4  # durable calls started before the kill
JOB_CLASS = "org.flinkagents.ltm.job.CountingAgentJob"
OPERATOR = "Agent: "  # the Java agent's operator: "Agent: <its class's name>", as in Python

pytestmark = pytest.mark.cluster


def java_job_args(scratch, store, job_id, rate, action_state="none"):
    args = ["-c", JOB_CLASS, str(java_job_jar()),
            "--charges-log", str(scratch / "charges.log"), "--action-state-store", action_state,
            "--python", sys.executable, "--pythonpath", f"{SITE_PACKAGES}:{ROOT}",
            "--events", str(EVENTS), "--keys", str(KEYS), "--rate", str(rate),
            "--calls-log", str(scratch / "calls.log"),
            "--parallelism", "2", "--memory-job-id", job_id, "--base-dir", str(scratch)]
    return args + vector_store_file_args(scratch, store, job_id)


@dataclass
class JavaFailover:
    results: list
    rows: dict
    starts: list  # every call start of the calls log: (key, n, pid, epoch s)
    victim_pid: int  # the killed TaskManager's JVM (the Java agent's calls run in it)
    killed_at: float
    calls_at_kill: int  # durable calls started when the TaskManager was killed
    results_at_kill: int  # results the client had printed then
    seconds: float  # from submission to the client's exit
    charges: list  # every charge of the charges log: (key, n, pid, epoch s)
    action_state: str  # the job's action-state store: "none" or "postgres"


def starts_of(log):
    """``[(key, n, pid, epoch s)]``, one per durable call start (lines ``key n pid ms``)."""
    if not log.exists():
        return []
    return [(key, int(n), int(pid), int(ms) / 1000) for key, n, pid, ms in
            (line.split() for line in log.read_text().splitlines())]


def wait_for_calls(log, count, client, timeout):
    """How many calls had started (lines of the calls log) once ``count`` had, the client
    exited or ``timeout`` s passed. The job's progress as it happens: the client prints
    results only as checkpoints complete, and a loaded machine once printed the 256th result
    after the job had finished."""
    deadline = time.monotonic() + timeout
    while True:
        calls = log.read_text().count("\n") if log.exists() else 0
        if calls >= count or client.poll() is not None or time.monotonic() > deadline:
            return calls
        time.sleep(0.1)


# Two runs (each ~1.5 min of a cluster): the embedded store without the action-state store
# (its charges after the restored checkpoint happen again: printed), pgvector with the
# PostgreSQL action-state store (none twice). A pgvector run without the store adds nothing
# the two do not show (ActionStateStoreTest shows the store off repeating a call).
@pytest.fixture(scope="module", params=["embedded", "pgvector-action-state"])
def java_failover(cluster, request):
    store_kind, _, with_store = request.param.partition("-")
    action_state = "postgres" if with_store else "none"
    job_id = f"java-failover-{request.param}"
    store = store_of(cluster, job_id.replace("-", "_")) if store_kind == "pgvector" else None
    scratch = scratch_dir("test-e2e-java-failover-")
    # a module fixture, set up before the test's own cancelling: it cancels its job itself
    with ExitStack() as cleanup:
        cleanup.callback(shutil.rmtree, scratch, ignore_errors=True)  # after the job stopped
        cleanup.enter_context(cluster.cancelling_new_jobs())  # cancels the job, pass or fail
        args = java_job_args(scratch, store, job_id, RATE, action_state)
        started = time.monotonic()
        client = cluster.popen(cluster.command(*args), stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
        output = ClientOutput(client)
        victim = None
        try:
            calls = wait_for_calls(scratch / "calls.log", KILL_AFTER, client, timeout=300)
            assert calls >= KILL_AFTER, (
                f"the job ended (or stalled) after {calls} calls, before the TaskManager could "
                "be killed: " + cluster.summary(*output.finish(timeout=60), client.returncode))
            victim = a_taskmanager_running_the_agent(cluster, OPERATOR)
            calls_at_kill = (scratch / "calls.log").read_text().count("\n")
            results_at_kill = output.results()
            run_script("flink-cluster", "kill-taskmanager", "--dir", str(cluster.folder),
                       str(victim["id"]))
            killed_at = time.time()
            out, err = output.finish(timeout=600)
            seconds = time.monotonic() - started
            rows = (rows_in_postgres(store) if store is not None
                    else rows_in_embedded_store(scratch, job_id))
            starts = starts_of(scratch / "calls.log")
            charges = starts_of(scratch / "charges.log")
        finally:
            if client.poll() is None:
                client.send_signal(signal.SIGTERM)
                client.wait(timeout=60)
            if victim is not None:  # the next test finds two TaskManagers again
                run_script("flink-cluster", "restart-taskmanager", "--dir", str(cluster.folder),
                           str(victim["id"]), timeout=240)
    assert client.returncode == 0, cluster.summary(out, err, client.returncode)
    return JavaFailover(results_of(out), rows, starts, victim["pid"], killed_at,
                        calls_at_kill, results_at_kill, seconds, charges, action_state)


def test_the_kill_landed_mid_run_and_the_survivor_ran_the_rest(java_failover):
    """The premise of the checks below: the killed TaskManager had run calls of the agent,
    and calls ran on the other one after the kill, so the job recovered mid-input."""
    f = java_failover
    by_victim = [n for _, n, pid, _ in f.starts if pid == f.victim_pid]
    after = [n for _, n, pid, at in f.starts if pid != f.victim_pid and at > f.killed_at]
    assert by_victim and after, (f"{len(by_victim)} call(s) ran on the killed TaskManager, "
                                 f"{len(after)} on the other after the kill")
    runs = Counter(n for _, n, _, _ in f.starts)
    again = sorted(n for n, times in runs.items() if times > 1)
    print(f"\n{len(f.results)} outputs in {f.seconds:.1f} s; killed after {f.calls_at_kill} "
          f"calls had started ({f.results_at_kill} results printed); {len(after)} call(s) ran "
          f"after the kill, {len(again)} input(s) had their call run again: {again[:20]}")


def test_after_a_taskmanager_kill_each_input_of_the_java_agent_has_exactly_one_output(
        java_failover):
    check_exactly_one_output_per_input_and_exact_counters(java_failover.results, EVENTS)


def test_after_a_taskmanager_kill_each_key_of_the_java_agent_counted_each_input_once(
        java_failover):
    counts = defaultdict(list)
    for r in java_failover.results:
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
    check_one_row_per_input(java_failover.rows, java_failover.results, EVENTS)


def test_no_java_action_read_another_keys_memory(java_failover):
    foreign = [(r["n"], r["key"], r["foreign"][:3]) for r in java_failover.results
               if r["foreign"]]
    assert not foreign, (f"{len(foreign)} input(s) read another key's memory (n, key, "
                         f"texts): {foreign[:12]}")


def test_every_input_is_charged_and_with_the_action_state_store_on_none_twice(java_failover):
    f = java_failover
    charges = Counter(n for _, n, _, _ in f.charges)
    never = sorted(set(range(EVENTS)) - set(charges))
    assert not never, f"{len(never)} input(s) never charged: {never[:20]}"
    twice = sorted(n for n, times in charges.items() if times > 1)
    if f.action_state == "none":
        print(f"\nwithout the action-state store, {len(twice)} of {EVENTS} charges happened "
              f"twice: {twice[:20]}")
        return
    assert not twice, (f"{len(twice)} charge(s) happened twice with the action-state store "
                       f"on: {twice[:20]}")

"""The runtime's promises on the standalone cluster (two TaskManagers, started by
scripts/flink-cluster) with long-term memory in pgvector: a bounded, throttled stream gives
every input exactly one output and exact short-term counters, in process and thread mode;
a TaskManager killed with SIGKILL mid-run (process and thread mode on pgvector, process mode on
the embedded store) loses nothing, and its Python workers stop at once instead of writing on.
The failover stream has late keys (e2e/jobs/stream_layout.py): their first input is held
mid-action after its memory write, so the restored checkpoint likely holds some of them half
done, and their second input comes only at the end, after the recovery (issue 19's
overwrite); the store is checked row by row against the inputs. Every input also charges
once (a side effect logged outside Flink, with a reconciler): with the action-state store on
(PostgreSQL, process mode) no charge happens twice; without it, the charges that completed
after the restored checkpoint happen again, and the test prints how many."""

import json
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
import uuid
from collections import Counter, defaultdict
from contextlib import ExitStack
from dataclasses import dataclass

import pytest

from e2e.client_output import ClientOutput
from e2e.jobs.stream_layout import first_inputs, key_of, late_inputs
from tests.pgvector.server import ROOT, rows_in_postgres, run_script, scratch_dir

JOB = str(ROOT / "e2e" / "jobs" / "counting_job.py")
JOB_FOLDER = str(ROOT / "e2e" / "jobs")
KEYS = 64
LATE_KEYS = 40  # 20 per source subtask: a first input every 16 of its numbers

pytestmark = pytest.mark.cluster


def store_of(cluster, name):
    store = json.loads(json.dumps(cluster.vector_store))
    store["config"]["collection_name"] = f"{name}_{uuid.uuid4().hex[:10]}"
    return store


POSTGRES_ACTION_STATE = "postgres"


def job_args(scratch, store, job_id, mode, events, rate=400, late_keys=0, hold_ms=500,
             action_state="none"):
    """The counting job's ``flink run`` arguments; ``store`` ``None`` for the embedded store."""
    args = ["-py", JOB, "-pyfs", JOB_FOLDER, "--job-id", job_id, "--mode", mode,
            "--events", str(events), "--keys", str(KEYS), "--rate", str(rate),
            "--base-dir", str(scratch), "--late-keys", str(late_keys),
            "--late-hold-ms", str(hold_ms), "--action-state-store", action_state]
    return args + vector_store_file_args(scratch, store, job_id)


def vector_store_file_args(scratch, store, job_id):
    """``--vector-store-file F`` with ``store`` written to F (0600, so that its password
    stays off command lines); none for the embedded store (``store`` ``None``)."""
    if store is None:
        return []
    store_file = scratch / f"{job_id}-store.json"
    store_file.touch(mode=0o600)
    store_file.write_text(json.dumps(store))
    return ["--vector-store-file", str(store_file)]


def rows_in_embedded_store(base_dir, job_id):
    """id -> payload (``data`` and the metadata) of every row of the job's embedded store."""
    from flink_agents_ltm.integrations.mem0.memory_factory import StoreSpec, acquire_memory

    memory, release = acquire_memory(StoreSpec(job_id, embedder="hashing", base_dir=base_dir))
    try:
        rows = memory.get_all(filters={"user_id": job_id}, top_k=100_000)["results"]
    finally:
        release()
    return {row["id"]: {"data": row["memory"], **(row.get("metadata") or {})} for row in rows}


def results_of(stdout):
    return [json.loads(line[len("RESULT "):]) for line in stdout.splitlines()
            if line.startswith("RESULT ")]


def text_of(n, late=None):
    """The text input ``n`` stores in its key's long-term memory."""
    return f"{key_of(n, KEYS, late or {})} event {n}"


def named(inputs, late=None, most=12):
    """A short list of inputs for a failure message: ``['late3 event 96', ...]``."""
    names = [text_of(n, late) for n in sorted(inputs)[:most]]
    return [*names, f"... {len(inputs) - most} more"] if len(inputs) > most else names


def check_exactly_one_output_per_input_and_exact_counters(results, events, late=None):
    seen = Counter(r["n"] for r in results)
    missing = sorted(set(range(events)) - set(seen))
    twice = sorted(n for n, times in seen.items() if times > 1)
    assert not missing and not twice, (
        f"{len(missing)} input(s) without output: {named(missing, late)}; "
        f"{len(twice)} with more than one: {named(twice, late)}")
    assert sorted(seen) == list(range(events))
    counts = defaultdict(list)
    for r in results:
        assert r["key"] == key_of(r["n"], KEYS, late or {}), r
        counts[r["key"]].append((r["n"], r["count"]))
    for key, seen in counts.items():  # each of the key's inputs counted once: 1, 2, 3, ...
        # (in arrival order, which at parallelism 2 is not the order of n)
        assert sorted(count for _, count in seen) == list(range(1, len(seen) + 1)), key
    assert len(counts) == KEYS + len(set((late or {}).values()))


def check_one_row_per_input(stored, results, events, late=None):
    """Every input (each writes memory once) stored exactly once with its own text: as many
    rows as inputs, and each output's item id, its own, holds that input's text."""
    texts = {text_of(n, late): n for n in range(events)}
    per_text = Counter(row["data"] for row in stored.values())
    missing = [n for text, n in texts.items() if text not in per_text]
    twice = [texts[text] for text, times in per_text.items() if times > 1 and text in texts]
    foreign = sorted(text for text in per_text if text not in texts)
    assert not missing and not twice and not foreign, (
        f"{len(stored)} rows for {events} inputs: {len(missing)} input(s) without a row: "
        f"{named(missing, late)}; {len(twice)} stored more than once: {named(twice, late)}; "
        f"{len(foreign)} row(s) of no input: {foreign[:5]}")
    assert len(stored) == events
    ids = Counter(r["id"] for r in results)
    shared = [r["n"] for r in results if ids[r["id"]] > 1]
    assert not shared, f"{len(shared)} outputs share an item id: {named(shared, late)}"
    elsewhere = {r["n"]: (stored.get(r["id"]) or {}).get("data") for r in results
                 if (stored.get(r["id"]) or {}).get("data") != text_of(r["n"], late)}
    assert not elsewhere, (
        f"{len(elsewhere)} output(s) whose item id holds another text (or none): "
        + "; ".join(f"{text_of(n, late)} -> {text!r}"
                    for n, text in sorted(elsewhere.items())[:12]))


@pytest.mark.parametrize("mode, events", [("process", 3200), ("thread", 640)])
def test_a_throttled_bounded_stream_gives_each_input_one_output_and_exact_counters(
        cluster, scratch, mode, events):
    """The shape of issue 7's lost inputs: python.fn-execution.bundle.size 1, checkpoints
    every second, a throttled source, one pgvector row per input."""
    store = store_of(cluster, f"matrix_{mode}")
    client = cluster.run(*job_args(scratch, store, f"matrix-{mode}", mode, events),
                         timeout=900)
    assert client.returncode == 0, cluster.summary_of(client)
    assert client.stdout.rstrip().endswith("DONE")
    results = results_of(client.stdout)
    check_exactly_one_output_per_input_and_exact_counters(results, events)
    check_one_row_per_input(rows_in_postgres(store), results, events)


def status(cluster):
    return json.loads(run_script("flink-cluster", "status", "--dir", str(cluster.folder),
                                 "--json").stdout)


def alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"  # a zombie is gone
    except OSError:
        return False


def describe(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            command = f.read().replace(b"\0", b" ").decode()[:160]
        with open(f"/proc/{pid}/stat") as f:
            state = f.read().rsplit(")", 1)[1].split()[:2]
        return f"{command} (state {state[0]}, parent {state[1]})"
    except OSError as error:
        return str(error)


def rest(cluster, path):
    with urllib.request.urlopen(f"http://127.0.0.1:{cluster.rest_port}{path}",
                                timeout=30) as response:
        return json.load(response)


def a_taskmanager_running_the_agent(cluster, operator="Agent: "):
    """A TaskManager that runs a subtask of the agent operator, the job vertex whose name
    starts with ``operator`` (found through the REST API)."""
    jobs = rest(cluster, "/jobs")["jobs"]
    running = [j["id"] for j in jobs if j["status"] == "RUNNING"]
    assert len(running) == 1, f"expected one running job to kill a TaskManager of: {jobs}"
    [job] = running
    hosts = set()
    vertices = rest(cluster, f"/jobs/{job}")["vertices"]
    for vertex in vertices:
        if vertex["name"].startswith(operator):
            for subtask in rest(cluster, f"/jobs/{job}/vertices/{vertex['id']}")["subtasks"]:
                hosts.add(subtask["taskmanager-id"])
    assert hosts, (f"no subtask of a vertex named {operator!r}...; the job's vertices: "
                   f"{[vertex['name'] for vertex in vertices]}")
    return next(tm for tm in status(cluster)["taskmanagers"] if tm["resource_id"] in hosts)


@dataclass
class Failover:
    events: int
    late: dict  # n -> late key, for the late keys' inputs
    calls: Counter  # (call, n) -> runs, for the late keys' first inputs
    results: list
    stored: dict
    writers: list  # the killed processes that ran the agent's Python code
    written_by_the_dead: dict
    workers_gone_at: float
    action_state: str  # the job's action-state store: "none" or PostgreSQL's
    starts: list  # every logged call start: (call, n, pid, time)
    killed_at: float  # when the killed TaskManager's JVM was gone (no longer running)


@pytest.fixture(scope="module", params=[("process", "pgvector", POSTGRES_ACTION_STATE),
                                        ("thread", "pgvector", "none"),
                                        ("process", "embedded", "none")],
                ids=lambda p: f"{p[0]}-{p[1]}-{'store' if p[2] != 'none' else 'no-store'}")
def failover(cluster, request):
    """A job of 1024 events whose agent's TaskManager is killed with SIGKILL after 200
    results; the job recovers on the other TaskManager. In process mode the agent's Python
    code runs in the TaskManager's Python workers, in thread mode inside its JVM; the
    embedded store is one SQLite file that the workers of both TaskManagers share. The
    process-mode pgvector job writes durable results ahead to the action-state store on the
    same PostgreSQL server."""
    (mode, store_kind, action_state), events = request.param, 1024
    late = late_inputs(events, LATE_KEYS)
    job_id = f"failover-{mode}-{store_kind}"
    store = store_of(cluster, job_id.replace("-", "_")) if store_kind == "pgvector" else None
    scratch = scratch_dir("test-e2e-failover-")

    def stored_rows():
        return (rows_in_postgres(store) if store is not None
                else rows_in_embedded_store(scratch, job_id))

    # Thread mode runs the whole input in seconds: at 400 events/s a loaded machine delivered
    # the 200th result (results come with checkpoints) after the job had finished; so did
    # process mode on the embedded store once (session 34), hence 250.
    rate = 250 if mode == "process" else 150
    # A late key's first input holds 1.5 s (its replay does not): at 0.4 s a process-mode
    # kill found none mid-action at the restored checkpoint, at 0.8 s thread mode found 6.
    hold_ms = 1500
    # a module fixture, set up before the test's own cancelling: it cancels its job itself
    with ExitStack() as cleanup:
        cleanup.callback(shutil.rmtree, scratch, ignore_errors=True)  # after the job stopped
        cleanup.enter_context(cluster.cancelling_new_jobs())
        client = cluster.popen(
            cluster.command(*job_args(scratch, store, job_id, mode, events, rate,
                                      LATE_KEYS, hold_ms, action_state)),
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        output = ClientOutput(client)
        victim = None
        try:
            # mid-run: results arrive with the checkpoints
            assert output.wait_for_results(200, timeout=600), (
                "the job ended before the TaskManager could be killed")
            victim = a_taskmanager_running_the_agent(cluster)
            run_script("flink-cluster", "kill-taskmanager", "--dir", str(cluster.folder),
                       str(victim["id"]))
            # SIGKILL is sent; the JVM is gone once the kernel has torn it down, which takes
            # a while on a loaded machine. Its workers see that moment (their pidfd poll);
            # a call they start before it is not one they could have known to skip.
            deadline = time.monotonic() + 30
            while alive(victim["pid"]) and time.monotonic() < deadline:
                time.sleep(0.002)
            killed_at = time.time()

            writers = victim["workers"] if mode == "process" else [victim["pid"]]
            assert writers, f"no Python worker found for the victim {victim}"
            deadline = time.monotonic() + 30
            while any(alive(pid) for pid in writers) and time.monotonic() < deadline:
                time.sleep(0.1)
            survivors = {pid: describe(pid) for pid in writers if alive(pid)}
            assert not survivors, f"the killed TaskManager's Python workers go on: {survivors}"
            workers_gone_at = time.time()
            written_by_the_dead = {item_id: row["written_at"]
                                   for item_id, row in stored_rows().items()
                                   if row["pid"] in writers}

            out, err = output.finish(timeout=900)
            rows = stored_rows()
            starts = starts_of(scratch / "calls.log")
        finally:
            if client.poll() is None:
                client.send_signal(signal.SIGTERM)
                client.wait(timeout=60)
            if victim is not None:
                run_script("flink-cluster", "restart-taskmanager", "--dir", str(cluster.folder),
                           str(victim["id"]), timeout=240)
    assert client.returncode == 0, cluster.summary(out, err, client.returncode)
    calls = Counter((call, n) for call, n, _, _ in starts)
    return Failover(events, late, calls, results_of(out), rows, writers, written_by_the_dead,
                    workers_gone_at, action_state, starts, killed_at)


def starts_of(log):
    """``[(call, n, pid, time)]``, one per call start, from the job's calls.log (lines
    ``call key n pid time``)."""
    if not log.exists():
        return []
    return [(call, int(n), int(pid), float(at)) for call, _, n, pid, at in
            (line.split() for line in log.read_text().splitlines())]


def caught_mid_action(failover):
    """The late keys whose first input the restored checkpoint held mid-action with its
    add recorded: the replay ran its hold again, not its add."""
    return sorted(failover.late[n] for n in first_inputs(failover.late)
                  if failover.calls[("remember", n)] == 1 and failover.calls[("hold", n)] > 1)


def test_the_kill_caught_late_keys_mid_action_after_their_memory_write(failover):
    # the premise of the row checks below: keys whose next input, after the recovery, would
    # overwrite the first one's row if the key forgot it stored an item (issue 19)
    caught = caught_mid_action(failover)
    held_again = {n: failover.calls[("remember", n)] for n in first_inputs(failover.late)
                  if failover.calls[("hold", n)] > 1}
    if not caught:  # timing: the kill lands where it lands; the row checks still ran
        pytest.skip("this run's kill caught no late key's first input mid-action with its add "
                    "recorded; held again after the recovery (input: adds run): "
                    f"{held_again or 'none'}")
    # each input of a caught key kept its own row: the key's next input, run after the
    # recovery, did not take the replayed first input's item id
    texts = Counter(row["data"] for row in failover.stored.values())
    inputs = [n for n, key in failover.late.items() if key in caught]
    assert len(inputs) >= 2 * len(caught)
    assert {text_of(n, failover.late): texts[text_of(n, failover.late)] for n in inputs} == {
        text_of(n, failover.late): 1 for n in inputs}


def test_after_a_taskmanager_kill_each_input_is_stored_exactly_once_with_its_own_text(
        failover):
    check_one_row_per_input(failover.stored, failover.results, failover.events, failover.late)


def test_after_a_taskmanager_kill_each_input_is_counted_exactly_once(failover):
    counts = defaultdict(list)
    for r in failover.results:
        counts[r["key"]].append(r["count"])
    inputs_of = Counter(key_of(n, KEYS, failover.late) for n in range(failover.events))
    for key, seen in counts.items():  # 1, 2, ..., the key's inputs: none twice, none skipped
        assert sorted(seen) == list(range(1, inputs_of[key] + 1)), key
    assert len(counts) == len(inputs_of) == KEYS + LATE_KEYS


def test_the_killed_taskmanagers_workers_stop_and_write_nothing_after(failover):
    after = {item_id: row["written_at"] for item_id, row in failover.stored.items()
             if row["pid"] in failover.writers}
    # a replayed input rewrites its row under the same id from a surviving worker, so rows
    # of the dead workers may only go
    assert after.items() <= failover.written_by_the_dead.items()
    assert all(written_at < failover.workers_gone_at for written_at in after.values())


def test_after_a_taskmanager_kill_every_input_has_exactly_one_output(failover):
    check_exactly_one_output_per_input_and_exact_counters(failover.results, failover.events,
                                                          failover.late)


def test_every_input_is_charged_and_with_the_action_state_store_on_none_twice(failover):
    charges = Counter(n for call, n, _, _ in failover.starts if call == "charge")
    never = sorted(set(range(failover.events)) - set(charges))
    assert not never, f"{len(never)} input(s) never charged: {named(never, failover.late)}"
    twice = sorted(n for n, times in charges.items() if times > 1)
    if failover.action_state == "none":  # the baseline: what the store is there to prevent
        print(f"without the action-state store, {len(twice)} of {failover.events} charges "
              f"happened twice: {named(twice, failover.late)}")
        return
    assert not twice, (f"{len(twice)} charge(s) happened twice with the action-state store "
                       f"on: {named(twice, failover.late)}")


# A worker checks its TaskManager right before a call starts (check_task_manager); a call
# whose check passed while the JVM still lived logs its start a moment later, and a thread
# switch between the two (Python's switch interval, 5 ms) may put that after the test saw the
# JVM gone (seen: starts 0.0 s and 0.007 s after). With several worker threads waiting for
# the GIL, that wait can be a few switch intervals, so four are allowed (20 ms). A start later
# than that was not checked: before the check existed the workers began 4-6 calls in ~0.3 s.
CHECKED_START_S = 4 * sys.getswitchinterval()


def test_the_killed_taskmanagers_workers_start_no_call_after_the_kill(failover):
    late_starts = [(call, n, round(at - failover.killed_at, 3))
                   for call, n, pid, at in failover.starts
                   if pid in failover.writers and at > failover.killed_at + CHECKED_START_S]
    assert not late_starts, (f"{len(late_starts)} call(s) started by the killed "
                             f"TaskManager's workers after the kill (call, n, s after): "
                             f"{late_starts[:12]}")

"""The ordinary life of a job on the in-memory harness: run it again, resume it from a
savepoint, fail its JobManager over. Long-term memory outlives each run, so no run may
take another run's item ids, and no restore may run again a side effect it can answer.

A *run* (submission) is a harness of its own under the same job id and the same store:
``AgentHarness(...)`` is a new submission without state, :meth:`AgentHarness.resume` a new
submission from a savepoint, :meth:`AgentHarness.restore` a later attempt of the same one
(a TaskManager failure), and ``AgentHarness(snapshot=..., first_attempt=True)`` with the
snapshot's submission a JobManager failover (the job restarts at attempt 0 from its last
checkpoint). Mem0 on the embedded store, embedding with the hashing model."""

import copy
import json
import time
import uuid

import pytest

from flink_agents_ltm.api.agent import Agent, action
from flink_agents_ltm.api.events import InputEvent, OutputEvent
from flink_agents_ltm.api.memory.long_term_memory import LongTermMemoryOptions
from flink_agents_ltm.api.resources import ResourceDescriptor, ResourceType
from flink_agents_ltm.examples.first_agent import SupportAgent
from flink_agents_ltm.integrations.mem0.hashing_embedder import HashingEmbedding
from flink_agents_ltm.runtime.incarnation import LEGACY
from flink_agents_ltm.testing import AgentHarness
from runtime import embedded_rows

JOB = "life-of-a-job"
HASHING = {"hashing": (ResourceType.EMBEDDING_MODEL, ResourceDescriptor(HashingEmbedding))}
charged: list = []  # the side effects: cards charged


def charge(n):
    charged.append(n)
    return f"charged #{n}"


def note_in_a_call(notes, text):
    return notes.add(text)


class NoteAgent(Agent):
    """Input ``(key, text)``: adds ``text`` to the key's notes in a durable call; outputs
    ``(key, ids)``."""

    @action(InputEvent)
    async def note(event, ctx):
        key, text = event.input
        notes = ctx.long_term_memory.get_memory_set("notes")
        ids = await ctx.durable_execute_async(note_in_a_call, notes, text)
        ctx.send_event(OutputEvent((key, ids)))


class ChargeAgent(Agent):
    """Input ``(key, n)``: charges card ``n`` in a durable call (a side effect)."""

    @action(InputEvent)
    async def bill(event, ctx):
        key, n = event.input
        receipt = await ctx.durable_execute_async(charge, n)
        ctx.send_event(OutputEvent((key, receipt)))


@pytest.fixture(autouse=True)
def nothing_charged_yet():
    charged.clear()
    yield
    charged.clear()


@pytest.fixture
def config(tmp_path):
    return {"agents.job-id": JOB, LongTermMemoryOptions.EMBEDDING_MODEL_SETUP.key: "hashing",
            LongTermMemoryOptions.BASE_DIR.key: str(tmp_path),
            "agents.event-log.sink": "file",
            "agents.event-log.file": str(tmp_path / "events.jsonl")}


@pytest.fixture(params=["sqlite", "postgres"])
def with_store(request, config):
    """The job's config with the action-state store on: SQLite, or PostgreSQL on the
    session's server (a job id of its own: its rows are its own)."""
    if request.param == "sqlite":
        return {**config, "agents.action-state.store": "sqlite"}
    server = request.getfixturevalue("pgvector_session")[0]
    return {**config, "agents.action-state.store": "postgres",
            "agents.job-id": f"{JOB}-{uuid.uuid4().hex[:8]}",
            "long-term-memory.vector-store": copy.deepcopy(server)}


def notes_in_store(tmp_path):
    return sorted(embedded_rows.rows(JOB, tmp_path).values())


def finish(harness):
    """Let every call run and every parked action go on."""
    for _ in range(5):
        harness.pool.complete_all()
        harness.advance(0.01)
    return harness.outputs


def observation_ids(tmp_path, key):
    """The observation ids of ``key``'s actions, in the order the event log wrote them."""
    lines = (tmp_path / "events.jsonl").read_text().splitlines()
    return [r["observation_id"] for r in map(json.loads, lines)
            if r["record"] == "action" and r["key"] == key]


def run(agent, config, inputs, key_selector=lambda r: r[0], **kwargs):
    """One run of the job: a harness on its own, the inputs, every call answered; closed."""
    harness = AgentHarness(agent, key_selector=key_selector, config=config,
                           resources=HASHING, **kwargs)
    try:
        for value in inputs:
            harness.process_element(value)
            finish(harness)
    finally:
        harness.close()
    return harness


# ---------------------------------------------------------------- runs without state


def test_three_runs_of_the_quickstart_agent_under_one_job_id_keep_all_six_messages(
        config, tmp_path):
    def message(n, run_):
        return {"customer": "alice", "text": f"message {n} of run {run_}"}

    runs = [run(SupportAgent(), config, [message("one", r), message("two", r)],
                key_selector=lambda m: m["customer"], sync=True) for r in (1, 2, 3)]
    assert notes_in_store(tmp_path) == sorted(
        f"message {n} of run {r}" for n in ("one", "two") for r in (1, 2, 3))
    assert len({h.incarnation for h in runs}) == 3
    # each run counted its own inputs from 0, in its own line of runs
    assert observation_ids(tmp_path, "alice") == [
        h.observation_id("alice", seq) for h in runs for seq in (0, 1)]


def test_a_new_run_recalls_what_the_last_run_remembered(config, tmp_path):
    run(SupportAgent(), config, [{"customer": "alice", "text": "my teapot is late"}],
        key_selector=lambda m: m["customer"], sync=True)
    again = run(SupportAgent(), config, [{"customer": "alice", "text": "my teapot?"}],
                key_selector=lambda m: m["customer"], sync=True)
    assert again.outputs == [{"customer": "alice", "message": 1,  # short-term: a new run's
                              "recalled": ["my teapot is late"]}]


def test_a_key_that_stored_items_keeps_its_runs_line_beside_its_counter(config):
    first = run(NoteAgent(), config, [("alice", "a note")])
    assert first.state_of("alice", "next_seq") == 1
    assert first.state_of("alice", "incarnation") == first.incarnation


# ---------------------------------------------------------------- savepoints


def test_a_run_resumed_from_a_savepoint_goes_on_in_each_restored_keys_line(
        config, tmp_path):
    first = AgentHarness(NoteAgent(), config=config, resources=HASHING)
    for text in ("note 1", "note 2"):
        first.process_element(("alice", text))
        finish(first)
    savepoint = first.snapshot()
    first.close()
    resumed = AgentHarness.resume(savepoint, NoteAgent(), config=config, resources=HASHING)
    try:
        resumed.process_element(("alice", "note 3"))
        resumed.process_element(("bob", "note 1"))  # no state: a line of the new run
        finish(resumed)
    finally:
        resumed.close()
    assert resumed.incarnation != first.incarnation
    assert observation_ids(tmp_path, "alice") == [
        first.observation_id("alice", seq) for seq in (0, 1, 2)]
    assert observation_ids(tmp_path, "bob") == [resumed.observation_id("bob", 0)]
    assert len(notes_in_store(tmp_path)) == 4


def test_an_input_in_flight_at_a_savepoint_writes_its_notes_once_when_the_job_resumes(
        config, tmp_path):
    first = AgentHarness(NoteAgent(), config=config, resources=HASHING)
    first.process_element(("alice", "in flight"))  # parks on its add
    savepoint = first.snapshot()
    finish(first)  # the add runs after the savepoint (stop-with-savepoint drains nothing)
    first.close()
    assert notes_in_store(tmp_path) == ["in flight"]
    resumed = AgentHarness.resume(savepoint, NoteAgent(), config=config, resources=HASHING)
    try:
        [(_, ids)] = finish(resumed)  # the replay adds again, under the same ids
    finally:
        resumed.close()
    assert notes_in_store(tmp_path) == ["in flight"]
    assert list(embedded_rows.rows(JOB, tmp_path)) == ids


def test_a_call_in_flight_at_a_savepoint_is_not_run_again_when_the_job_resumes(with_store):
    first = AgentHarness(ChargeAgent(), config=with_store, resources=HASHING)
    first.process_element(("a", 1))
    savepoint = first.snapshot()
    assert finish(first) == [("a", "charged #1")]  # its result is written ahead
    first.close()
    resumed = AgentHarness.resume(savepoint, ChargeAgent(), config=with_store, resources=HASHING)
    try:
        assert finish(resumed) == [("a", "charged #1")]
    finally:
        resumed.close()
    assert charged == [1]
    assert resumed.stats.durable_calls_replayed == 1


def test_a_call_in_flight_at_a_jobmanager_failover_is_not_run_again(with_store):
    first = AgentHarness(ChargeAgent(), config=with_store, resources=HASHING)
    first.process_element(("a", 1))
    checkpoint = first.snapshot()
    finish(first)
    first.close()
    # the same submission restarts at attempt 0 from its last checkpoint
    failed_over = AgentHarness(ChargeAgent(), config=with_store, snapshot=checkpoint,
                               first_attempt=True, resources=HASHING)
    try:
        assert finish(failed_over) == [("a", "charged #1")]
    finally:
        failed_over.close()
    assert failed_over.incarnation == first.incarnation
    assert charged == [1]


def test_a_new_runs_input_runs_its_own_calls_though_the_last_run_left_rows_of_the_same(
        with_store):
    first = AgentHarness(ChargeAgent(), config=with_store, resources=HASHING)
    first.process_element(("a", 1))
    first.pool.run()  # started, its result never recorded: a row left behind
    assert first.journal.store.row_count() == 1
    first.close()
    second = AgentHarness(ChargeAgent(), config=with_store, resources=HASHING)
    try:
        # kept: a savepoint of the last run restored later would need it
        assert second.journal.store.row_count() == 1
        second.process_element(("a", 1))  # the same input, read again by a new run
        assert finish(second) == [("a", "charged #1")]
    finally:
        second.close()
    assert charged == [1, 1]


def test_rows_of_calls_whose_action_never_ended_go_after_their_retention(with_store):
    config = {**with_store, "agents.action-state.unfinished-retention-ms": 50}
    first = AgentHarness(ChargeAgent(), config=config, resources=HASHING)
    first.process_element(("a", 1))
    first.pool.run()  # started, its step never ended
    assert first.journal.store.row_count() == 1
    first.close()
    time.sleep(0.1)
    second = AgentHarness(ChargeAgent(), config=config, resources=HASHING)
    try:
        assert second.journal.store.row_count() == 0
    finally:
        second.close()


# ---------------------------------------------------------------- state of earlier builds


def test_a_key_restored_from_state_of_a_build_before_runs_had_lines_keeps_its_ids(
        config, tmp_path):
    first = AgentHarness(NoteAgent(), config=config, resources=HASHING)
    first.process_element(("alice", "note 1"))
    finish(first)
    savepoint = first.snapshot()
    first.close()
    del savepoint.tables["incarnation"]["alice"]  # as an earlier build wrote it
    resumed = AgentHarness.resume(savepoint, NoteAgent(), config=config, resources=HASHING)
    try:
        resumed.process_element(("alice", "note 2"))
        finish(resumed)
    finally:
        resumed.close()
    assert observation_ids(tmp_path, "alice")[-1] == "alice#1#0"
    assert observation_ids(tmp_path, "alice")[-1] == resumed.observation_id(
        "alice", 1, incarnation=LEGACY)
    assert resumed.state_of("alice", "incarnation") is None  # it stays in the legacy line

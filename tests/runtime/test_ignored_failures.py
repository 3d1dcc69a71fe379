"""What a failing action leaves behind with ``agents.error-handling: ignore``, on the
in-memory harness with real Mem0 (in-memory Qdrant): its error line as a WARNING naming
the action and key, what it wrote to long-term memory (no transactions), and its key's
input counter when it stored an item, whether the run failed within its callback or after
parking on a durable call."""

import logging

import pytest

from flink_agents_ltm.api.agent import Agent, action
from flink_agents_ltm.api.events import InputEvent, OutputEvent
from flink_agents_ltm.api.memory.long_term_memory import LongTermMemoryOptions
from flink_agents_ltm.api.resources import ResourceDescriptor, embedding_model_setup
from flink_agents_ltm.integrations.mem0.hashing_embedder import HashingEmbedding
from flink_agents_ltm.testing import AgentHarness

ENGINE_STATES = ("next_seq", "incarnation", "busy", "pending", "run")
# The input's run fails in the callback that received it (its durable call returns at
# once), or after its action parked on the call (its work is in keyed state by then).
WHERE = ["within-its-callback", "after-parking"]


def echo(value):
    return value


class NoteWriter(Agent):
    """Input ``(key, n, fail)``: after a first durable call, stores a note (in a second one,
    so at the same write position every time), then fails if ``fail`` is
    ``"after-the-write"`` (``"before-the-write"``: fails before storing anything); else
    answers its observation id and the key's notes."""

    @embedding_model_setup
    def hashing():
        return ResourceDescriptor(HashingEmbedding)

    @action(InputEvent)
    async def write(event, ctx):
        key, n, fail = event.input
        await ctx.durable_execute_async(echo, n)
        if fail == "before-the-write":
            raise ValueError("the note was refused")
        notes = ctx.long_term_memory.get_memory_set("notes")
        await ctx.durable_execute_async(notes.add, f"note {n} of {key}")
        if fail == "after-the-write":
            raise ValueError("the note was wrong")
        ctx.send_event(OutputEvent((notes.observation_id,
                                    sorted(item.value for item in notes.get()))))


def ignoring_harness(tmp_path, where):
    return AgentHarness(NoteWriter(), sync=where == "within-its-callback", config={
        "agents.error-handling": "ignore",
        "agents.job-id": f"ignored-{tmp_path.name}",
        LongTermMemoryOptions.EMBEDDING_MODEL_SETUP.key: "hashing",
        LongTermMemoryOptions.VECTOR_STORE.key: {
            "provider": "qdrant", "config": {"collection_name": "notes", "path": ":memory:"}},
        LongTermMemoryOptions.BASE_DIR.key: str(tmp_path)})


def run_one(harness, value):
    harness.process_element(value)
    while harness.pool.pending():
        harness.pool.complete_all()
        harness.advance(0.005)


def stored_notes(harness, key):
    """What the long-term memory holds for ``key``, read outside any action."""
    memory = harness.memory.get()
    memory.switch_context(key)
    return sorted(item.value for item in memory.get_memory_set("notes").get())


def engine_entries(harness):
    entries = harness.state_entries()
    return {name: entries[name] for name in ENGINE_STATES}


@pytest.mark.parametrize("where", WHERE)
def test_an_ignored_failure_is_logged_as_a_warning_naming_the_action_and_key(
        tmp_path, caplog, where):
    harness = ignoring_harness(tmp_path, where)
    with caplog.at_level(logging.WARNING, logger="flink_agents_ltm"):
        run_one(harness, ("k", 0, "after-the-write"))
    failures = [(r.name, r.levelname, r.getMessage()) for r in caplog.records
                if "failed for key" in r.getMessage()]
    assert failures == [(
        "flink_agents_ltm.runtime.keyed_runs", "WARNING",
        "action 'write' of agent NoteWriter failed for key 'k' (input #0: ('k', 0, "
        "'after-the-write'), InputEvent): ValueError: the note was wrong; "
        "agents.error-handling is 'ignore': the input's run is dropped")]
    assert harness.outputs == []


@pytest.mark.parametrize("where", WHERE)
def test_what_a_failed_action_wrote_to_long_term_memory_stays_when_failures_are_ignored(
        tmp_path, where):
    harness = ignoring_harness(tmp_path, where)
    run_one(harness, ("k", 0, "after-the-write"))
    assert harness.outputs == []  # the run is dropped ...
    assert stored_notes(harness, "k") == ["note 0 of k"]  # ... its write is not
    run_one(harness, ("k", 1, None))
    assert harness.outputs == [(harness.observation_id("k", 1, 0), ["note 0 of k", "note 1 of k"])]


@pytest.mark.parametrize("where", WHERE)
def test_a_key_whose_failed_action_stored_an_item_keeps_its_input_counter(tmp_path, where):
    harness = ignoring_harness(tmp_path, where)
    run_one(harness, ("k", 0, "after-the-write"))
    assert engine_entries(harness) == {"next_seq": 1, "incarnation": 1, "busy": 0, "pending": 0,
                                       "run": 0}
    assert harness.state_of("k", "next_seq") == 1
    assert harness.timers() == []
    # Input #1 writes at the same position as the failed input #0: with the counter reset,
    # its item would get #0's id and overwrite the failed action's note.
    run_one(harness, ("k", 1, None))
    assert harness.outputs == [(harness.observation_id("k", 1, 0), ["note 0 of k", "note 1 of k"])]
    assert harness.state_of("k", "next_seq") == 2


@pytest.mark.parametrize("where", WHERE)
def test_a_key_whose_failed_action_stored_nothing_starts_again_at_input_zero(tmp_path, where):
    harness = ignoring_harness(tmp_path, where)
    run_one(harness, ("k", 0, "before-the-write"))
    assert engine_entries(harness) == dict.fromkeys(ENGINE_STATES, 0)
    run_one(harness, ("k", 1, None))
    assert harness.outputs == [(harness.observation_id("k", 0, 0), ["note 1 of k"])]

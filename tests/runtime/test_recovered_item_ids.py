"""A recovery never lets a key's next input reuse the item ids of the input it replayed.

Every item id is derived from the observation id ``key#seq#step``, so a key whose
actions stored items keeps its input counter ``seq`` for good. After a restore, the
replayed input's writes may lie in durable calls recorded before the checkpoint: the
new process does not mint their ids again, yet the key must still know it stored
items, or its next input runs as ``key#0#...`` again and overwrites the replayed
input's rows. On the public harness with Mem0 on the embedded store and, after the
restore, a new long-term memory (as a recovered operator builds)."""

import pickle

import cloudpickle
from chat.scripted_server import ScriptedServer, openai_reply

from flink_agents_ltm.api.agent import Agent, action
from flink_agents_ltm.api.events import InputEvent, OutputEvent
from flink_agents_ltm.api.memory.long_term_memory import LongTermMemoryOptions
from flink_agents_ltm.api.resources import (
    ResourceDescriptor,
    ResourceType,
    embedding_model_setup,
)
from flink_agents_ltm.integrations.chat_models.openai import OpenAIChatModelSetup
from flink_agents_ltm.integrations.mem0.hashing_embedder import HashingEmbedding
from flink_agents_ltm.runtime.run_record import decode_busy, decode_run
from flink_agents_ltm.testing import AgentHarness
from runtime import embedded_rows


def echo(value):
    return value


def fail_on_replay(n):
    """The second call of an input: it fails for an input whose text says so."""
    raise RuntimeError(f"input {n} fails after the restore")


class _Notes(Agent):
    @embedding_model_setup
    def hashing():
        return ResourceDescriptor(HashingEmbedding)


class AddInACallAgent(_Notes):
    """Input ``(key, n, text)``: adds ``text`` in a durable call, then awaits a second
    call; outputs ``(n, ids)``."""

    @action(InputEvent)
    async def note(event, ctx):
        _, n, text = event.input
        notes = ctx.long_term_memory.get_memory_set("notes")
        ids = await ctx.durable_execute_async(notes.add, text)
        await ctx.durable_execute_async(fail_on_replay if "fails" in text else echo, n)
        ctx.send_event(OutputEvent((n, ids)))


class ReadOnlyAgent(_Notes):
    """Uses its memory set but stores nothing; awaits two durable calls; outputs the
    observation id its set is bound to."""

    @action(InputEvent)
    async def note(event, ctx):
        _, n, _ = event.input
        notes = ctx.long_term_memory.get_memory_set("notes")
        await ctx.durable_execute_async(echo, n)
        await ctx.durable_execute_async(echo, n)
        ctx.send_event(OutputEvent(notes.observation_id))


class AddInTheBodyAgent(_Notes):
    """Adds ``text`` in the action's own code, then awaits two durable calls."""

    @action(InputEvent)
    async def note(event, ctx):
        _, n, text = event.input
        ids = ctx.long_term_memory.get_memory_set("notes").add(text)
        await ctx.durable_execute_async(echo, n)
        await ctx.durable_execute_async(echo, n)
        ctx.send_event(OutputEvent((n, ids)))


class AddInAChatToolAgent(_Notes):
    """A chat whose scripted model asks a tool to store the input's text; the tool runs
    on the pool, as a child of the action; outputs ``(n, reply)``."""

    @action(InputEvent)
    async def note(event, ctx):
        _, n, text = event.input
        notes = ctx.long_term_memory.get_memory_set("notes")

        def remember(text: str) -> str:
            """Stores a note."""
            return notes.add(text)[0]

        reply = await ctx.chat(f"remember {text}", model="scripted", tools=[remember])
        ctx.send_event(OutputEvent((n, reply.content)))


def config(tmp_path, **options):
    return {
        LongTermMemoryOptions.EMBEDDING_MODEL_SETUP.key: "hashing",
        LongTermMemoryOptions.BASE_DIR.key: str(tmp_path),  # the embedded store
        "agents.job-id": JOB,
        **options,
    }


JOB = "recovered-ids"


def rows(tmp_path):
    return embedded_rows.rows(JOB, tmp_path)


def assert_one_row_per_input(restored, tmp_path):
    """Inputs #0 and #1 output their ids; the store holds one row each, with its text."""
    (_, first_ids), (_, second_ids) = restored.outputs
    stored = rows(tmp_path)
    assert sorted(stored.values()) == ["first input", "second input"]
    assert (stored.get(first_ids[0]), stored.get(second_ids[0])) == (
        "first input", "second input")


def settle(harness):
    """Let the key's calls run and its poll timers fire until nothing is pending."""
    harness.advance(0.005)
    while harness.pool.pending():
        harness.pool.complete_all()
        harness.advance(0.005)


def snapshot_mid_action(agent, tmp_path, text="first input", **options):
    """Input #0 of key ``k`` stores its item in a durable call that gets recorded, then
    parks on its second call: the snapshot holds the recorded add."""
    harness = AgentHarness(agent, config=config(tmp_path, **options))
    try:
        harness.process_element(("k", 0, text))
        harness.pool.run()  # the add runs and is recorded
        harness.advance(0.005)  # the action resumes and parks on its second call
        assert [c.call.name for c in harness.pool.pending()] == [
            f"{__name__}.{'fail_on_replay' if 'fails' in text else 'echo'}"]
        assert len(rows(tmp_path)) == 1
        snapshot = harness.snapshot()
        harness.pool.complete()  # the old process is gone; its call never answers
    finally:
        harness.close()
    return snapshot


def restore_and_add_the_next_input(snapshot, agent, tmp_path, **options):
    restored = AgentHarness.restore(snapshot, agent, config=config(tmp_path, **options))
    try:
        settle(restored)  # the replay: the recorded add answers, input #0 completes
        restored.process_element(("k", 1, "second input"))
        settle(restored)
    finally:
        restored.close()
    return restored


def test_after_a_restore_the_next_input_does_not_overwrite_a_recorded_durable_add(tmp_path):
    snapshot = snapshot_mid_action(AddInACallAgent(), tmp_path)
    restored = restore_and_add_the_next_input(snapshot, AddInACallAgent(), tmp_path)
    (first, first_ids), (second, second_ids) = restored.outputs
    assert (first, second) == (0, 1)
    assert first_ids != second_ids
    assert rows(tmp_path) == {first_ids[0]: "first input", second_ids[0]: "second input"}
    assert restored.state_of("k", "next_seq") == 2
    assert restored.stats.durable_calls_replayed == 1  # the add was not run again


def test_the_checkpoint_of_a_key_mid_action_says_that_its_recorded_call_stored_items(
        tmp_path):
    snapshot = snapshot_mid_action(AddInACallAgent(), tmp_path)
    restored = AgentHarness.restore(snapshot, AddInACallAgent(), config=config(tmp_path))
    try:
        assert restored.state_of("k", "busy").keeps_counter is True
        assert [c.stored_items for c in restored.state_of("k", "run").calls] == [True]
    finally:
        restored.close()


def test_a_checkpoint_written_before_recorded_calls_said_so_still_keeps_the_rows_apart(
        tmp_path):
    """State of the previous version: its recorded calls have no ``stored_items`` and its
    busy record says the key kept no counter; both are pickled dataclasses, as before
    state formats had versions (version 0). It loads; an unknown call counts as one that
    stored items."""
    snapshot = snapshot_mid_action(AddInACallAgent(), tmp_path)
    record = decode_run(pickle.loads(snapshot.tables["run"]["k"]))
    for call in record.calls:
        del call.__dict__["stored_items"]
    busy = decode_busy(pickle.loads(snapshot.tables["busy"]["k"]))
    busy.keeps_counter = False
    snapshot.tables["run"]["k"] = cloudpickle.dumps(record)
    snapshot.tables["busy"]["k"] = cloudpickle.dumps(busy)
    assert b"stored_items" not in snapshot.tables["run"]["k"]
    restored = restore_and_add_the_next_input(snapshot, AddInACallAgent(), tmp_path)
    assert_one_row_per_input(restored, tmp_path)


def test_a_key_whose_replayed_calls_stored_nothing_still_starts_again_at_input_zero(
        tmp_path):
    harness = AgentHarness(ReadOnlyAgent(), config=config(tmp_path))
    try:
        harness.process_element(("k", 0, "first input"))
        harness.pool.run()
        harness.advance(0.005)  # the first echo is recorded; parks on the second
        snapshot = harness.snapshot()
        harness.pool.complete()
    finally:
        harness.close()
    restored = restore_and_add_the_next_input(snapshot, ReadOnlyAgent(), tmp_path)
    assert restored.outputs == [restored.observation_id("k", 0)] * 2
    assert restored.state_of("k", "next_seq") is None


def test_a_replayed_input_that_fails_in_ignore_mode_keeps_its_recorded_row(tmp_path):
    ignore = {"agents.error-handling": "ignore"}
    snapshot = snapshot_mid_action(AddInACallAgent(), tmp_path, "first input fails", **ignore)
    restored = restore_and_add_the_next_input(snapshot, AddInACallAgent(), tmp_path, **ignore)
    [(second, second_ids)] = restored.outputs  # input #0's run was dropped
    assert second == 1
    assert sorted(rows(tmp_path).values()) == ["first input fails", "second input"]
    assert rows(tmp_path)[second_ids[0]] == "second input"
    assert restored.state_of("k", "next_seq") == 2


def test_an_add_in_the_action_body_is_minted_again_by_the_replay_and_kept_apart(tmp_path):
    harness = AgentHarness(AddInTheBodyAgent(), config=config(tmp_path))
    try:
        harness.process_element(("k", 0, "first input"))  # adds, parks on the first echo
        harness.pool.run()
        harness.advance(0.005)  # the first echo is recorded; parks on the second
        snapshot = harness.snapshot()
        harness.pool.complete()
    finally:
        harness.close()
    restored = restore_and_add_the_next_input(snapshot, AddInTheBodyAgent(), tmp_path)
    assert_one_row_per_input(restored, tmp_path)
    assert restored.state_of("k", "next_seq") == 2


def test_an_add_in_a_recorded_chat_tool_call_is_not_overwritten_by_the_next_input(tmp_path):
    answers = [openai_reply(tool_calls=[("1", "remember", {"text": "first input"})]),
               openai_reply("kept"),
               openai_reply(tool_calls=[("2", "remember", {"text": "second input"})]),
               openai_reply("kept")]
    with ScriptedServer(answers) as server:
        resources = {"scripted": (ResourceType.CHAT_MODEL, ResourceDescriptor(
            OpenAIChatModelSetup, model="m", base_url=server.url, api_key_env=None))}
        harness = AgentHarness(AddInAChatToolAgent(), config=config(tmp_path),
                               resources=resources)
        try:
            harness.process_element(("k", 0, "first input"))
            harness.pool.run()  # the model asks for the tool
            harness.advance(0.005)
            harness.pool.run()  # the tool stores the item; its result is recorded
            harness.advance(0.005)  # parks on the second model call
            assert [c.call.name for c in harness.pool.pending()] == ["chat model 'scripted'"]
            snapshot = harness.snapshot()
            harness.pool.complete()
        finally:
            harness.close()
        restored = AgentHarness.restore(snapshot, AddInAChatToolAgent(), config=config(
            tmp_path), resources=resources)
        try:
            settle(restored)
            restored.process_element(("k", 1, "second input"))
            settle(restored)
        finally:
            restored.close()
    assert restored.outputs == [(0, "kept"), (1, "kept")]
    assert sorted(rows(tmp_path).values()) == ["first input", "second input"]
    assert restored.state_of("k", "next_seq") == 2


STORE_ON = {"agents.action-state.store": "sqlite"}


def test_with_the_store_on_a_new_input_in_a_replayed_inputs_place_keeps_off_its_rows(
        tmp_path):
    """Input #0 runs whole after the snapshot (its add answered by the store from then on);
    after the crash a new input arrives first and takes its place in the key's sequence
    (two upstream subtasks interleave anew), then input #0 comes back. The new input's
    add must not land on input #0's row, which nothing writes again."""
    first = AgentHarness(AddInACallAgent(), config=config(tmp_path, **STORE_ON))
    try:
        snapshot = first.snapshot()
        first.process_element(("k", 0, "first input"))
        settle(first)
        assert len(first.outputs) == 1 and len(rows(tmp_path)) == 1
    finally:
        first.close()
    restored = AgentHarness.restore(snapshot, AddInACallAgent(),
                                    config=config(tmp_path, **STORE_ON))
    try:
        restored.process_element(("k", 1, "second input"))
        settle(restored)
        restored.process_element(("k", 0, "first input"))
        settle(restored)
    finally:
        restored.close()
    (second, second_ids), (first_n, first_ids) = restored.outputs
    assert (second, first_n) == (1, 0)
    assert restored.stats.durable_calls_replayed == 2  # input #0's calls were not run again
    stored = rows(tmp_path)
    assert sorted(stored.values()) == ["first input", "second input"]
    assert (stored[first_ids[0]], stored[second_ids[0]]) == ("first input", "second input")

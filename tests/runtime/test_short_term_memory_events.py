"""Short-term and sensory memory events (``agents.memory-events.*``) on the harness: off by
default; on, a completed action's writes and reads arrive as upstream's four events (the key
as text, each path's last value in JSON form), after the events it sent and before its
long-term memory events, for actions to listen to and in the event log. Actions they
trigger are suppressed, a failed action raises none, and a chat's or subagent's scope
none."""

import json
import logging

import pytest

from flink_agents_ltm.api.agent import Agent, action
from flink_agents_ltm.api.events import (
    Event,
    InputEvent,
    MemoryAccessEvent,
    MemoryUpdateEvent,
    OutputEvent,
    SensoryReadEvent,
    SensoryWriteEvent,
    ShortTermReadEvent,
    ShortTermWriteEvent,
)
from flink_agents_ltm.api.options import AgentsConfiguration, AgentsOptions
from flink_agents_ltm.testing import AgentHarness
from runtime.subagent_agents import Coordinator

ALL_ON = {f"agents.memory-events.{kind}-{op}": True
          for kind in ("short-term", "sensory") for op in ("write", "read")}


class Done(Event):
    pass


class Writer(Agent):
    """Writes and reads both memories, sends Done, adds one long-term item; a listener
    outputs every memory event it gets, and writes and reads memory itself."""

    @action(InputEvent)
    def write(event, ctx):
        ctx.short_term_memory.set("gone", 0) if event.input[1] == "seed" else None
        if event.input[1] == "seed":
            return
        stm, sensory = ctx.short_term_memory, ctx.sensory_memory
        stm.set("count", 1)
        stm.get("count")
        stm.set("count", 2)  # the last value written, and read, wins
        stm.delete("gone")
        stm.new_object("profile").set("name", "Ann")
        sensory.set("raw", b"\x00\x01")  # bytes: base64
        sensory.set("opaque", object())  # no JSON form: left out
        stm.get("count")
        stm.get("profile.name")
        sensory.get("raw")
        ctx.send_event(Done())
        ctx.long_term_memory.get_memory_set("notes").add("a note")

    @action(Done)
    def done(event, ctx):
        ctx.send_event(OutputEvent(("Done", None, None)))

    @action(ShortTermWriteEvent, ShortTermReadEvent, SensoryWriteEvent, SensoryReadEvent,
            MemoryUpdateEvent)
    def listen(event, ctx):
        # Suppressed, this write and read raise no event (unsuppressed, each would raise one
        # that stops here: no endless cascade in a broken build)
        if not isinstance(event, ShortTermReadEvent) and "listened" not in getattr(
                event, "value", {}):
            ctx.short_term_memory.set("listened", type(event).__name__)
            ctx.short_term_memory.get("listened")
        value = event.value if isinstance(event, MemoryAccessEvent) else event.observation.op
        ctx.send_event(OutputEvent((type(event).__name__, getattr(event, "key", None), value)))


def run(options=None, inputs=(("ann", "seed"), ("ann", "go"))):
    harness = AgentHarness(Writer(), config={"agents.long-term-memory.factory": "in-memory",
                                             **(options or {})})
    for value in inputs:
        harness.process_element(value)
    return harness


def test_they_are_off_by_default():
    assert [o[0] for o in run().outputs] == ["Done", "MemoryUpdateEvent"]


def test_on_each_kind_is_one_event_with_each_path_s_last_value_after_the_sent_events():
    """Order: the events the action sent (Done) first, then sensory writes, short-term
    writes, sensory reads, short-term reads, then long-term memory's; the object node
    ``profile`` is no path of its own, a removed path is None."""
    assert run(ALL_ON).outputs == [
        ("ShortTermWriteEvent", "ann", {"gone": 0}),  # the seed input's
        ("Done", None, None),
        ("SensoryWriteEvent", "ann", {"raw": "AAE="}),
        ("ShortTermWriteEvent", "ann", {"count": 2, "gone": None, "profile.name": "Ann"}),
        ("SensoryReadEvent", "ann", {"raw": "AAE="}),
        ("ShortTermReadEvent", "ann", {"count": 2, "profile.name": "Ann"}),
        ("MemoryUpdateEvent", None, "add"),
    ]


def test_each_kind_has_its_own_switch():
    on = {"agents.memory-events.short-term-read": True}
    assert [o[0] for o in run(on).outputs] == ["Done", "ShortTermReadEvent",
                                               "MemoryUpdateEvent"]


def test_a_value_with_no_json_form_is_left_out_with_a_warning_naming_path_and_type(caplog):
    with caplog.at_level(logging.WARNING, "flink_agents_ltm.runtime.memory_access"):
        run(ALL_ON)
    assert [r.getMessage() for r in caplog.records] == [
        "SensoryWriteEvent leaves out path 'opaque': its value (a object) has no JSON form"]


def test_the_events_carry_upstream_s_type_names():
    assert [k.EVENT_TYPE for k in (ShortTermWriteEvent, ShortTermReadEvent, SensoryWriteEvent,
                                   SensoryReadEvent)] == [
        "_short_term_write_event", "_short_term_read_event", "_sensory_write_event",
        "_sensory_read_event"]


def test_they_are_in_the_event_log(tmp_path):
    log_file = tmp_path / "events.jsonl"
    run({**ALL_ON, "agents.event-log.sink": "file", "agents.event-log.file": str(log_file)})
    records = [json.loads(line) for line in log_file.read_text().splitlines()]
    sent = [(r["event_type"], r["payload"]) for r in records if r["record"] == "event"
            and r["event_type"].endswith(("WriteEvent", "ReadEvent"))]
    assert [event_type for event_type, _ in sent] == [
        "ShortTermWriteEvent", "SensoryWriteEvent", "ShortTermWriteEvent", "SensoryReadEvent",
        "ShortTermReadEvent"]
    assert '"profile.name": "Ann"' in json.dumps(sent[2][1])


class Failing(Agent):
    @action(InputEvent)
    def write_then_fail(event, ctx):
        ctx.short_term_memory.set(f"written by {event.input[1]}", 1)
        if event.input[1] == "failing":
            raise RuntimeError("no")

    @action(ShortTermWriteEvent)
    def listen(event, ctx):
        ctx.send_event(OutputEvent(event.value))


def test_a_failed_action_raises_none_nor_lends_its_writes_to_the_next():
    harness = AgentHarness(Failing(), config={**ALL_ON, "agents.error-handling": "ignore"})
    harness.process_element(("ann", "failing"))
    assert harness.outputs == []
    harness.process_element(("ann", "next"))
    assert harness.outputs == [{"written by next": 1}]


class Counting(Coordinator):
    @action(ShortTermWriteEvent)
    def listen(event, ctx):
        ctx.send_event(OutputEvent(("written", event.value)))


def test_a_subagent_s_and_its_chat_s_writes_raise_none(tmp_path):
    harness = AgentHarness(Counting(), config={**ALL_ON,
                                               "agents.long-term-memory.factory": "in-memory"})
    harness.process_element(("ann", 1, str(tmp_path), None))
    while harness.pool.pending():
        harness.pool.complete_all()
        harness.advance(0.005)
    assert [o for o in harness.outputs if o[0] == "written"] == [("written", {"count": 1})]


@pytest.mark.parametrize("kind", ["short-term-write", "short-term-read", "sensory-write",
                                  "sensory-read"])
def test_upstream_s_key_sets_the_option(kind):
    config = AgentsConfiguration({f"memory.generate-event.{kind}": True})
    assert config.get(AgentsOptions.all_by_key()[f"agents.memory-events.{kind}"]) is True

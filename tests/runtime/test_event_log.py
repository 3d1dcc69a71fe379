"""The event log on the in-memory harness: what each record says, that values, queries and
secrets never reach it, payloads cut, levels per event type, and ``trace`` over it."""

import json
import logging

import pytest

from flink_agents_ltm import cli
from flink_agents_ltm.api.event_log import EVENT_LOGGER
from flink_agents_ltm.testing import AgentHarness
from runtime.event_log_agents import QUERY, SECRET, STORED_TEXT, TracedAgent


def options(tmp_path, **extra):
    return {"agents.job-id": "traced", "agents.error-handling": "ignore",
            "agents.long-term-memory.factory": "in-memory",
            "agents.event-log.sink": "file",
            "agents.event-log.file": str(tmp_path / "events.jsonl"), **extra}


@pytest.fixture
def traced(tmp_path):
    """``traced(**options)`` -> (harness running TracedAgent with its calls run at once,
    a function answering the records written so far)."""
    harnesses = []

    def make(**extra):
        harness = AgentHarness(TracedAgent(), config=options(tmp_path, **extra), sync=True)
        harnesses.append(harness)
        return harness, lambda: read(tmp_path / "events.jsonl")

    yield make
    for harness in harnesses:
        harness.close()


def read(path):
    return [json.loads(line) for line in path.read_text().splitlines()] \
        if path.exists() else []


def kinds(records):
    return [(r["record"], r.get("action"), r["event_type"]) for r in records]


def test_a_run_is_its_input_call_output_action_and_end_each_naming_key_and_observation_id(
        traced):
    harness, records = traced()
    harness.process_element(("k", "call"))

    written = records()
    assert kinds(written) == [("input", None, "InputEvent"), ("call", "handle", "InputEvent"),
                              ("output", "handle", "OutputEvent"),
                              ("action", "handle", "InputEvent"), ("run", None, "InputEvent")]
    assert {(r["job"], r["agent"], r["key"], r["input"]) for r in written} == {
        ("traced", "TracedAgent", "k", 0)}
    _, call, output, action, run = written
    assert (call["call"], call["position"], call["outcome"], call["observation_id"]) == (
        "runtime.event_log_agents.echo", "call0", "completed",
        harness.observation_id("k", 0, 0))
    assert (action["outcome"], action["observation_id"], action["level"]) == (
        "completed", harness.observation_id("k", 0, 0), "INFO")
    assert isinstance(action["duration_ms"], int) and isinstance(call["duration_ms"], int)
    assert output["payload"] == 1000
    assert (run["outcome"], run["outputs"]) == ("completed", 1)
    assert action["time"].endswith("Z")


def test_a_secret_in_a_payload_is_masked_and_a_long_payload_is_cut_saying_its_length(
        traced, tmp_path):
    harness, records = traced(**{"agents.event-log.max-payload-chars": 200})
    harness.process_element(("k", "call"))
    harness.process_element(("j", "inline"))

    text = (tmp_path / "events.jsonl").read_text()
    assert SECRET not in text
    [call] = [r for r in records() if r["record"] == "call" and r["key"] == "k"]
    assert '"api_key": "***"' in call["payload"]
    assert len(call["payload"]) == 200 + len("...") and call["payload_chars"] > 1000
    [inline] = [r for r in records() if r["record"] == "call" and r["key"] == "j"]
    assert inline["payload"] == "password=***" and inline["outcome"] == "completed"
    assert (tmp_path / "events.jsonl").stat().st_mode & 0o777 == 0o600


def test_memory_operations_name_set_and_ids_and_never_the_value_query_or_metadata(
        traced, tmp_path):
    harness, records = traced()
    harness.process_element(("m", "memory"))

    memory = [r for r in records() if r["record"] == "memory"]
    assert [(r["op"], r["set"], r["observation_id"]) for r in memory] == [
        ("add", "notes", harness.observation_id("m", 0)),
        ("search", "notes", harness.observation_id("m", 0))]
    assert len(memory[0]["ids"]) == 1 and memory[1]["ids"] == memory[0]["ids"]
    sent = [r["event_type"] for r in records() if r["record"] == "event"]
    assert sent == ["Greeted", "MemoryUpdateEvent", "MemorySearchEvent"]
    text = (tmp_path / "events.jsonl").read_text()
    for never in (STORED_TEXT, QUERY, "metadata value"):
        assert never not in text
    assert [r["action"] for r in records() if r["record"] == "action"] == ["handle", "greeted"]


def test_a_failed_action_and_its_call_are_written_at_warning_with_their_error_classes(traced):
    harness, records = traced()
    harness.process_element(("f", "fail"))

    [call] = [r for r in records() if r["record"] == "call"]
    [action] = [r for r in records() if r["record"] == "action"]
    [run] = [r for r in records() if r["record"] == "run"]
    assert (call["outcome"], call["error"], call["level"]) == (
        "failed", "ConnectionError", "WARNING")
    assert "the service is down" in call["error_message"]
    assert (action["outcome"], action["error"], action["level"]) == (
        "failed", "DurableCallError", "WARNING")
    assert run["outcome"] == "failed"


def test_a_call_replayed_after_a_restore_is_written_as_replayed(tmp_path):
    harness = AgentHarness(TracedAgent(), config=options(tmp_path))
    harness.process_element(("r", "two"))
    harness.pool.run()
    harness.advance(0.01)  # the first call's result is recorded; the action awaits the second
    snapshot = harness.snapshot()
    harness.close()
    restored = AgentHarness.restore(snapshot, TracedAgent(), config=options(tmp_path),
                                    run_on_wait=True)
    try:
        restored.end_input()
    finally:
        restored.close()

    after = [r for r in read(tmp_path / "events.jsonl") if r.get("replayed")
             or r["record"] == "call"]
    assert [(r["record"], r.get("position"), r.get("outcome")) for r in after] == [
        ("call", "call0", "completed"), ("input", None, None),
        ("call", "call0", "replayed"), ("call", "call1", "completed")]
    assert restored.outputs == [["first", "second"]]


def test_levels_per_event_type_decide_which_records_the_logger_writes(tmp_path, caplog):
    harness = AgentHarness(TracedAgent(), sync=True, config=options(tmp_path, **{
        "agents.event-log.sink": "logging", "agents.event-log.level": "DEBUG",
        "agents.event-log.levels": "InputEvent:INFO,MemoryUpdateEvent:OFF,"
                                   "MemorySearchEvent:OFF,OutputEvent:WARNING"}))
    try:
        with caplog.at_level(logging.INFO, logger=EVENT_LOGGER):
            harness.process_element(("m", "memory"))
        at_info = [json.loads(r.getMessage()) for r in caplog.records
                   if r.name == EVENT_LOGGER]
        caplog.clear()
        with caplog.at_level(logging.DEBUG, logger=EVENT_LOGGER):
            harness.process_element(("n", "memory"))
        at_debug = [json.loads(r.getMessage()) for r in caplog.records
                    if r.name == EVENT_LOGGER]
    finally:
        harness.close()

    greeted = ("action", "greeted", "Greeted")
    assert greeted not in kinds(at_info) and greeted in kinds(at_debug)
    for written in (at_info, at_debug):
        assert ("action", "handle", "InputEvent") in kinds(written)
        assert ("output", "greeted", "OutputEvent") in kinds(written)
        assert not any(r["event_type"].startswith("Memory") for r in written)
    assert {r["level"] for r in at_debug if r["event_type"] == "OutputEvent"} == {"WARNING"}
    assert not (tmp_path / "events.jsonl").exists()


def test_the_event_log_is_off_unless_asked_for(tmp_path, caplog):
    config = options(tmp_path)
    del config["agents.event-log.sink"]
    harness = AgentHarness(TracedAgent(), config=config, sync=True)
    with caplog.at_level(logging.DEBUG, logger=EVENT_LOGGER):
        harness.process_element(("k", "call"))
    harness.close()
    assert harness.outputs == [1000] and not (tmp_path / "events.jsonl").exists()
    assert [r for r in caplog.records if r.name == EVENT_LOGGER] == []


def test_trace_prints_a_keys_runs_as_a_tree_from_input_to_output(traced, tmp_path, capsys):
    harness, _ = traced()
    harness.process_element(("m", "memory"))
    harness.process_element(("c", "chat"))
    harness.process_element(("m", "call"))

    code = cli.main(["trace", "--job-id", "traced", "--key", "m",
                     "--file", str(tmp_path / "events.jsonl")])
    lines = capsys.readouterr().out.splitlines()
    assert code == 0
    assert lines[0].startswith("input #0 of key 'm' (InputEvent): [\"m\", \"memory\"]")
    assert lines[1].startswith(
        f"  action handle on InputEvent [{harness.observation_id('m', 0, 0)}]: completed in ")
    assert lines[2].startswith("    memory add on set 'notes': ids ['")
    assert lines[3].startswith("    memory search on set 'notes'")
    assert lines[4] == '    event Greeted: {"text": "hello m"}'
    assert lines[7].startswith(
        f"  action greeted on Greeted [{harness.observation_id('m', 0, 1)}]: completed")
    assert lines[8] == '    output: "hello m"'
    assert "  run completed: 1 output(s)" in lines
    assert any(line.startswith("input #1 of key 'm'") for line in lines)
    assert any(line.startswith("    call call0 runtime.event_log_agents.echo: completed in ")
               for line in lines)
    assert not any("'c'" in line or "chat model" in line for line in lines)


def test_trace_of_a_missing_file_says_so_in_one_line(tmp_path, capsys):
    code = cli.main(["trace", "--job-id", "j", "--key", "k",
                     "--file", str(tmp_path / "nowhere.jsonl")])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1
    assert err[0].startswith(f"flink-agents-ltm trace: error: no event log at "
                             f"{tmp_path / 'nowhere.jsonl'}")


def test_an_event_log_that_cannot_be_written_warns_once_and_the_job_goes_on(tmp_path, caplog):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    harness = AgentHarness(TracedAgent(), sync=True, config=options(tmp_path, **{
        "agents.event-log.file": str(blocker / "events.jsonl")}))  # a folder that is a file
    try:
        with caplog.at_level(logging.WARNING, logger="flink_agents_ltm.runtime.event_log"):
            harness.process_element(("k", "call"))
            harness.process_element(("j", "call"))
    finally:
        harness.close()

    warnings = [r.getMessage() for r in caplog.records
                if r.name == "flink_agents_ltm.runtime.event_log"]
    assert harness.outputs == [1000, 1000]
    assert len(warnings) == 1 and "the event log could not be written" in warnings[0]
    assert str(blocker) in warnings[0]

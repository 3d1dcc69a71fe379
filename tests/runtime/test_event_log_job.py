"""The event log, ``trace`` and the token metrics on a real job: the mini-cluster (thread
mode) runs one key that chats with the scripted model and stores a memory item; a
Prometheus reporter is scraped while the key waits on a durable call the test releases,
then ``trace`` reads the job's event log file."""

import json
import re
import time
import urllib.request

import pytest
from pyflink.common import Types

from flink_agents_ltm import cli
from flink_agents_ltm.api.execution_environment import AgentsExecutionEnvironment
from runtime.event_log_agents import STORED_TEXT, ClusterTracedAgent
from runtime.test_operator_metrics import LINE, free_port, reporter_options

pytestmark = pytest.mark.cluster


def scrape(port):
    """``{(name, labels as a sorted tuple without the task's): value}`` of the agent
    metrics, attempt 0."""
    try:
        body = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=2).read()
    except OSError:
        return {}
    found = {}
    for line in body.decode().splitlines():
        match = LINE.match(line)
        if match:
            name, labels, value = match.groups()
            labels = dict(re.findall(r'(\w+)="([^"]*)"', labels))
            if labels.get("task_attempt_num") == "0":
                mine = tuple(sorted((k, v) for k, v in labels.items() if k in (
                    "action", "model")))
                found[(name, mine)] = float(value)
    return found


@pytest.fixture(scope="module")
def traced_job(flink_env, tmp_path_factory):
    work_dir = tmp_path_factory.mktemp("event-log-job")
    release = work_dir / "release"
    events = work_dir / "events.jsonl"
    port = free_port()
    env = flink_env(**reporter_options(port))
    agents_env = AgentsExecutionEnvironment.get_execution_environment(env=env)
    for key, value in {"agents.job-id": "traced-job", "agents.event-log.sink": "file",
                       "agents.event-log.file": str(events),
                       "agents.long-term-memory.factory": "in-memory"}.items():
        agents_env.get_config().set(key, value)
    stream = env.from_collection([("alice", str(release))], type_info=Types.TUPLE(
        [Types.STRING(), Types.STRING()]))
    out = agents_env.from_datastream(stream, key_selector=lambda r: r[0]) \
        .apply(ClusterTracedAgent()).to_datastream()
    results = out.execute_and_collect()
    # The third durable call (after both model calls) is published at the end of the
    # callback whose model answer counted the tokens: by then every count is in.
    waiting = ("durableCallsSubmitted", ())
    try:
        metrics = {}
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and metrics.get(waiting) != 3:
            metrics = scrape(port)
            time.sleep(0.1)
    finally:
        release.touch()
    return metrics, list(results), events


def test_a_reporter_sees_the_token_usage_per_action_and_model_and_the_user_metrics(
        traced_job):
    metrics, results, _ = traced_job
    labels = (("action", "answer"), ("model", "assistant"))
    assert results == ["order 7 has shipped"]
    assert {name: metrics.get((name, labels)) for name in (
        "action_model_promptTokens", "action_model_completionTokens",
        "action_model_modelCalls")} == {
        "action_model_promptTokens": 4 + 7, "action_model_completionTokens": 1 + 4,
        "action_model_modelCalls": 2}
    assert metrics.get(("numInputs", ())) == 1
    assert metrics.get(("action_lastQuestionWords", (("action", "answer"),))) == 4


def test_the_jobs_event_log_holds_every_record_and_trace_prints_the_keys_tree(
        traced_job, capsys):
    _, _, events = traced_job
    records = [json.loads(line) for line in events.read_text().splitlines()]
    assert STORED_TEXT not in events.read_text()
    assert [(r["record"], r.get("call")) for r in records] == [
        ("input", None), ("call", "chat model 'assistant'"), ("call", "tool 'lookup'"),
        ("call", "chat model 'assistant'"), ("call", "runtime.metrics_agents.wait_for_file"),
        ("memory", None), ("event", None), ("output", None), ("action", None), ("run", None)]
    assert events.stat().st_mode & 0o777 == 0o600

    code = cli.main(["trace", "--job-id", "traced-job", "--key", "alice", "--file",
                     str(events)])
    lines = capsys.readouterr().out.splitlines()
    assert code == 0
    assert lines[0] == "input #0 of key 'alice' (InputEvent): [\"alice\", " + json.dumps(
        str(events.parent / "release")) + "]"
    # the observation id names this run of the job: alice@<its incarnation>#0#0
    [observation] = {r["observation_id"] for r in records if r["record"] == "action"}
    assert re.fullmatch(r"alice@[0-9a-f]{16}#0#0", observation)
    assert lines[1].startswith(f"  action answer on InputEvent [{observation}]: completed in ")
    assert [line.split(":")[0] for line in lines[2:8]] == [
        "    call call0 chat model 'assistant'", "    call call1 tool 'lookup'",
        "    call call2 chat model 'assistant'",
        "    call call3 runtime.metrics_agents.wait_for_file", "    memory add on set 'notes'",
        "    event MemoryUpdateEvent"]
    assert lines[8:] == ['    output: "order 7 has shipped"', "  run completed: 1 output(s)"]

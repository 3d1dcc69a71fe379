"""Short-term and sensory memory events on PyFlink's mini-cluster, turned on from Flink's
configuration (upstream's key under ``agent.`` for short-term writes, ours for sensory
reads): a listening action gets them and the event log file holds them."""

import json

import pytest
from pyflink.common import Types

from flink_agents_ltm.api.execution_environment import AgentsExecutionEnvironment
from runtime.test_short_term_memory_events import Writer

pytestmark = pytest.mark.cluster


@pytest.fixture(scope="module")
def job(flink_env, tmp_path_factory):
    log_file = tmp_path_factory.mktemp("memory-events") / "events.jsonl"
    env = flink_env(**{"agent.memory.generate-event.short-term-write": "true",
                       "agents.memory-events.sensory-read": "true",
                       "agents.long-term-memory.factory": "in-memory",
                       "agents.event-log.sink": "file", "agents.event-log.file": str(log_file)})
    agents_env = AgentsExecutionEnvironment.get_execution_environment(env=env)
    stream = env.from_collection([("ann", "seed"), ("ann", "go")],
                                 type_info=Types.TUPLE([Types.STRING(), Types.STRING()]))
    out = (agents_env.from_datastream(stream, key_selector=lambda r: r[0])
           .apply(Writer()).to_datastream())
    results = list(out.execute_and_collect())
    return results, [json.loads(line) for line in log_file.read_text().splitlines()]


def test_a_listening_action_gets_the_kinds_turned_on(job):
    results, _ = job
    assert results == [
        ("ShortTermWriteEvent", "ann", {"gone": 0}),
        ("Done", None, None),
        ("ShortTermWriteEvent", "ann", {"count": 2, "gone": None, "profile.name": "Ann"}),
        ("SensoryReadEvent", "ann", {"raw": "AAE="}),
        ("MemoryUpdateEvent", None, "add"),
    ]


def test_the_event_log_holds_them(job):
    _, records = job
    assert [r["event_type"] for r in records if r["record"] == "event"
            and r["event_type"].endswith(("WriteEvent", "ReadEvent"))] == [
        "ShortTermWriteEvent", "ShortTermWriteEvent", "SensoryReadEvent"]

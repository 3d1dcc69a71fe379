"""``agents.error-handling: retry`` on the mini-cluster, in thread and in process mode: a
flaky action succeeds on its third attempt while the other keys' inputs go on (its retries
wait on timers of its key during the input, not in the end-of-input drain), its booked call
runs once, and its long-term memory holds each of its items once."""

import json
import os
import time

import pytest
from pyflink.common import Types

from flink_agents_ltm.api.execution_environment import AgentsExecutionEnvironment
from runtime.retry_agents import FlakyAgent, runs

pytestmark = pytest.mark.cluster

OTHERS = 80  # inputs of other keys, one every SPACING_S, after the flaky one
SPACING_S = 0.04  # the input lasts about 3 s: room for the retries on a loaded machine


def spaced(record):
    """Let the inputs reach the agent over about 3 s (the retries wait 150 ms)."""
    time.sleep(SPACING_S)
    return record


@pytest.mark.parametrize("mode", ["thread", "process"])
def test_a_flaky_action_retried_on_timers_succeeds_while_other_keys_go_on(
        flink_env, tmp_path, mode):
    counts = tmp_path / "counts"
    counts.mkdir()
    log_file = tmp_path / "events.jsonl"
    environment = dict(os.environ)
    try:
        env = flink_env(**{"python.execution-mode": mode})
        agents_env = AgentsExecutionEnvironment.get_execution_environment(env=env)
        for key, value in {"agents.error-handling": "retry",
                           "agents.error-handling.retry.initial-backoff-ms": 50,
                           "agents.long-term-memory.factory": "in-memory",
                           "agents.event-log.sink": "file",
                           "agents.event-log.file": str(log_file)}.items():
            agents_env.get_config().set(key, value)
        inputs = [("ann", "a1", 2, str(counts))] + [
            (f"k{n % 4}", f"t{n}", 0, str(counts)) for n in range(OTHERS)]
        row = Types.TUPLE([Types.STRING(), Types.STRING(), Types.INT(), Types.STRING()])
        stream = env.from_collection(inputs, type_info=row).map(spaced, output_type=row)
        out = agents_env.from_datastream(stream, key_selector=lambda r: r[0]).apply(FlakyAgent())
        results = list(out.to_datastream().execute_and_collect())
    finally:  # process mode's loopback worker marks this process; later jobs must not see it
        os.environ.clear()
        os.environ.update(environment)

    assert len(results) == 1 + OTHERS
    assert ("ann", "a1", 1, ["a1 body", "a1 call"]) in results  # one row per item
    assert (runs(str(counts), "a1.booked"), runs(str(counts), "a1.flaky")) == (1, 3)
    records = [json.loads(line) for line in log_file.read_text().splitlines()]
    ann = [(r["outcome"], r.get("attempt"), r.get("retry_in_ms"))
           for r in records if r["record"] == "action" and r["key"] == "ann"]
    assert ann == [("retrying", 1, 50), ("retrying", 2, 100), ("completed", None, None)]
    # The retries ran on their timers while inputs still arrived, not in the drain at the end.
    ann_done = next(i for i, r in enumerate(records) if r["record"] == "action"
                    and r["key"] == "ann" and r["outcome"] == "completed")
    last_input = max(i for i, r in enumerate(records) if r["record"] == "input")
    ann_actions = [(r["outcome"], r["time"]) for r in records
                   if r["record"] == "action" and r["key"] == "ann"]
    assert ann_done < last_input, (f"the last input came at {records[last_input]['time']}; "
                                   f"ann's actions: {ann_actions}")

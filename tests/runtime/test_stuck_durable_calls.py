"""More than ``agents.durable-async.capacity`` abandoned threads (calls timed out but still
running) fail the job with ``DurableCallsStuckError`` naming the calls, with the default
wiring: no ``max_abandoned`` given, as the operator builds its pool; in ``ignore`` mode too,
since it is the job's failure, not an action's."""

import threading

import pytest
from py4j.protocol import Py4JJavaError
from pyflink.common import Types

from flink_agents_ltm.api.execution_environment import AgentsExecutionEnvironment, AgentsOptions
from flink_agents_ltm.runtime.durable import DurableCall
from flink_agents_ltm.runtime.worker_pool import DurableCallsStuckError, ThreadWorkerPool
from flink_agents_ltm.testing import AgentHarness, ManualClock
from runtime.stuck_agents import StuckCallsAgent

CALL = "runtime.stuck_agents.outlive_the_timeout"


def hang(event):
    event.wait()


def test_a_pool_built_as_the_operator_builds_it_abandons_at_most_capacity_threads():
    clock, release = ManualClock(), threading.Event()
    pool = ThreadWorkerPool(2, 1.0, "test", clock)  # AgentOperator.open's arguments
    try:
        for _ in range(4):  # two running, then two more: each times out the oldest
            pool.submit(DurableCall(hang, (release,), {}), "call0")
            clock.advance(1)
        assert (pool.in_flight, pool.abandoned) == (2, 2)
        with pytest.raises(DurableCallsStuckError, match="abandons at most 2 and fails"):
            pool.submit(DurableCall(hang, (release,), {}), "call0")
    finally:
        release.set()
    assert pool.close(grace_s=10) == []


def test_the_run_fails_once_more_than_capacity_calls_are_abandoned_even_in_ignore_mode():
    harness = AgentHarness(StuckCallsAgent(), config={
        "agents.durable-async.capacity": 2, "agents.durable-async.timeout-ms": 1000,
        "agents.error-handling": "ignore"})
    for key in "abcd":  # c and d each wait for a slot: a and b (started together) abandoned
        harness.process_element((key, 60))
    assert (harness.pool.in_flight, harness.pool.abandoned) == (2, 2)
    with pytest.raises(DurableCallsStuckError) as stuck:
        harness.process_element(("e", 60))
    assert str(stuck.value).startswith(
        f"durable call {CALL} did not return within its timeout of 1 s "
        "(agents.durable-async.timeout-ms), and 2 earlier timed-out call(s) still hold their "
        f"threads: {CALL} (2 s), {CALL} (2 s).")
    assert "the operator abandons at most 2 and fails the job" in str(stuck.value)


@pytest.mark.cluster
def test_a_job_fails_with_durable_calls_stuck_once_more_than_capacity_threads_are_abandoned(
        flink_env):
    env = flink_env(**{"restart-strategy.type": "none"})
    agents_env = AgentsExecutionEnvironment.get_execution_environment(env=env)
    config = agents_env.get_config()
    config.set(AgentsOptions.ASYNC_CAPACITY, 1)
    config.set(AgentsOptions.ASYNC_TIMEOUT_MS, 200)
    config.set(AgentsOptions.ERROR_HANDLING, "ignore")  # a timed-out action alone goes on
    # Each call outlives its timeout by far; the second waiting for a slot abandons the
    # first, the third the second: two abandoned threads, one more than the capacity.
    stream = env.from_collection([("a", 3.0), ("b", 3.0), ("c", 3.0)],
                                 type_info=Types.TUPLE([Types.STRING(), Types.FLOAT()]))
    out = agents_env.from_datastream(stream, key_selector=lambda r: r[0]).apply(
        StuckCallsAgent())
    with pytest.raises(Py4JJavaError) as failure:
        list(out.to_datastream().execute_and_collect())
    message = str(failure.value)
    assert "DurableCallsStuckError" in message
    assert (f"durable call {CALL} did not return within its timeout of 0.2 s "
            "(agents.durable-async.timeout-ms), and 1 earlier timed-out call(s) still hold "
            f"their threads: {CALL} (") in message
    assert "the operator abandons at most 1 and fails the job" in message

"""Durable async execution on the mini-cluster: order, capacity, end of input,
sensory memory, and what a failing action does."""

import collections
import os

import pytest
from py4j.protocol import Py4JJavaError
from pyflink.common import Types

from flink_agents_ltm.api.execution_environment import AgentsExecutionEnvironment, AgentsOptions
from runtime.agents_for_tests import BadInputAgent, OrderAgent, SleepyAgent, SyncMisuseAgent

# flink_smoke: also run on every supported Flink version (make test-flink).
pytestmark = [pytest.mark.cluster, pytest.mark.flink_smoke]

KEYS = 8
PER_KEY = 12
CAPACITY = 4


def run(flink_env, agent, inputs, type_info, flink_options=None, **options):
    env = flink_env(**(flink_options or {}))
    agents_env = AgentsExecutionEnvironment.get_execution_environment(env=env)
    for key, value in options.items():
        agents_env.get_config().set(key, value)
    stream = env.from_collection(inputs, type_info=type_info)
    out = agents_env.from_datastream(stream, key_selector=lambda r: r[0]).apply(agent)
    return list(out.to_datastream().execute_and_collect())


@pytest.fixture(scope="module")
def ordered_run(flink_env):
    inputs = [(k, n) for n in range(PER_KEY) for k in range(KEYS)]
    return run(flink_env, OrderAgent(), inputs, Types.TUPLE([Types.INT(), Types.INT()]),
               **{AgentsOptions.ASYNC_CAPACITY.key: CAPACITY})


def test_a_bounded_input_ends_only_after_every_parked_action_finished(ordered_run):
    steps = [r for r in ordered_run if r[0] == "step"]
    assert sorted((key, n) for _, key, n, _, _ in steps) == sorted(
        (k, n) for n in range(PER_KEY) for k in range(KEYS))


def test_inputs_of_one_key_run_one_after_another_in_order(ordered_run):
    by_key = collections.defaultdict(list)
    for _, key, n, previous, _ in (r for r in ordered_run if r[0] == "step"):
        by_key[key].append((n, previous))
    assert by_key == {key: [(n, n - 1) for n in range(PER_KEY)] for key in range(KEYS)}


def test_calls_in_flight_reach_but_never_exceed_the_capacity(ordered_run):
    running = [r[4] for r in ordered_run if r[0] == "step"]
    assert max(running) == CAPACITY


def test_sensory_memory_lives_for_one_input_and_short_term_memory_for_the_key(ordered_run):
    sensory = [r for r in ordered_run if r[0] == "sensory"]
    assert len(sensory) == KEYS * PER_KEY
    assert all(n == seen == last for _, _, n, seen, last in sensory)


def bad_job(flink_env, what, **options):
    inputs = [("good-1", 0, "ok"), ("bad", 0, "ok"), ("good-2", 0, "ok"), ("bad", 1, what),
              ("good-1", 1, "ok"), ("bad", 2, "ok"), ("good-2", 1, "ok")]
    options.setdefault(AgentsOptions.ASYNC_TIMEOUT_MS.key, 300)
    return run(flink_env, BadInputAgent(), inputs,
               Types.TUPLE([Types.STRING(), Types.INT(), Types.STRING()]),
               {"restart-strategy.type": "none"}, **options)


@pytest.mark.parametrize("what, cause", [
    ("raise", "ValueError: this input is malformed"),
    ("mailbox-misuse", "ctx.short_term_memory of action 'handle' (key 'bad') was used off the "
                       "mailbox thread"),
])  # every other kind of failure: on the harness (test_engine_errors)
def test_a_failing_action_fails_the_job_with_an_error_naming_the_action_and_key(
        flink_env, what, cause):
    with pytest.raises(Py4JJavaError) as failure:
        bad_job(flink_env, what)
    message = str(failure.value)
    assert "action 'handle' of agent BadInputAgent failed for key 'bad' (input #" in message
    assert f"('bad', 1, '{what}'), InputEvent): " in message
    assert cause in message


def test_a_plain_action_asking_for_an_async_call_fails_instead_of_dropping_it(flink_env):
    with pytest.raises(Py4JJavaError) as failure:
        run(flink_env, SyncMisuseAgent(), [("k", 0)], Types.TUPLE([Types.STRING(), Types.INT()]),
            {"restart-strategy.type": "none"})
    message = str(failure.value)
    assert "action 'handle' of agent SyncMisuseAgent failed for key 'k'" in message
    assert ("ctx.durable_execute_async returns an awaitable, but action 'handle' is a plain"
            in message)


def test_an_ignored_failure_discards_the_action_writes_and_touches_no_other_key(flink_env):
    results = bad_job(flink_env, "failing-call",
                      **{AgentsOptions.ERROR_HANDLING.key: "ignore"})
    assert sorted(results) == [("bad", 0, 1), ("bad", 2, 2), ("good-1", 0, 1),
                               ("good-1", 1, 2), ("good-2", 0, 1), ("good-2", 1, 2)]


def run_in_process_mode(*args, **kwargs):
    environment = dict(os.environ)
    try:
        return run(*args, **kwargs)
    finally:  # the loopback worker marks this process as a UDF worker; later jobs must not see it
        os.environ.clear()
        os.environ.update(environment)


def test_process_mode_runs_the_same_agent_in_order(flink_env):
    inputs = [(k, n) for n in range(5) for k in range(4)]
    results = run_in_process_mode(flink_env, OrderAgent(), inputs,
                                  Types.TUPLE([Types.INT(), Types.INT()]),
                                  {"python.execution-mode": "process"})
    steps = sorted((key, n, previous) for kind, key, n, previous, _ in results if kind == "step")
    assert steps == sorted((k, n, n - 1) for n in range(5) for k in range(4))


def test_process_mode_with_one_record_bundles_finishes_actions_parked_at_the_end(flink_env):
    """No input is lost: with bundles of one record, PyFlink's process mode
    registers a timer set during the final watermark only after it; every call here
    still runs when the input ends."""
    inputs = [(k, n, 1.0) for n in range(2) for k in range(4)]
    results = run_in_process_mode(
        flink_env, SleepyAgent(), inputs,
        Types.TUPLE([Types.INT(), Types.INT(), Types.FLOAT()]),
        {"python.execution-mode": "process", "python.fn-execution.bundle.size": "1"},
        **{AgentsOptions.ASYNC_CAPACITY.key: 8})
    assert sorted(results) == sorted((k, n) for n in range(2) for k in range(4))


def test_a_key_selector_that_raises_fails_the_job_saying_it_was_the_key_selector(flink_env):
    def customer(record):
        return {"a": "ann"}[record[0]]

    with pytest.raises(Py4JJavaError) as failure:  # noqa: PT012 - the job fails as a whole
        env = flink_env(**{"restart-strategy.type": "none"})
        agents_env = AgentsExecutionEnvironment.get_execution_environment(env=env)
        stream = env.from_collection([("a", 0), ("b", 1)],
                                     type_info=Types.TUPLE([Types.STRING(), Types.INT()]))
        out = agents_env.from_datastream(stream, key_selector=customer).apply(OrderAgent())
        list(out.to_datastream().execute_and_collect())
    # The client's error is the project's one line (the whole trace is in failure.value.trace).
    assert str(failure.value) == (
        "KeySelectorError: the key selector test_a_key_selector_that_raises_fails_the_job_"
        "saying_it_was_the_key_selector.<locals>.customer given to from_datastream failed "
        "on the record ('b', 1): KeyError: 'b'")

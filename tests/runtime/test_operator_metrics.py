"""The agent operator's metrics, read through Flink's own metric system: a Prometheus
reporter of the mini-cluster, scraped while the job waits on a durable call that the
test releases once it has read what it needs."""

import os
import re
import socket
import time
import urllib.request

import pytest
from pyflink.common import Types, WatermarkStrategy
from pyflink.datastream.connectors.number_seq import NumberSequenceSource

from flink_agents_ltm.api.execution_environment import AgentsExecutionEnvironment, AgentsOptions
from runtime.flink_options import checkpointing
from runtime.metrics_agents import MetricsAgent, ReplayAgent

pytestmark = pytest.mark.cluster

PREFIX = "flink_taskmanager_job_task_operator_flink_agents_"
LINE = re.compile(r"^" + PREFIX + r"(\w+)\{(.*)\} (\S+)$")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def reporter_options(port):
    return {"metrics.reporter.prom.factory.class":
            "org.apache.flink.metrics.prometheus.PrometheusReporterFactory",
            "metrics.reporter.prom.port": str(port)}


def scrape(port, attempt):
    """``{name: value}`` of the agent metrics of task attempt ``attempt``; the memory
    operations as ``memoryOperations.<op>``."""
    try:
        body = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=2).read()
    except OSError:
        return {}
    metrics = {}
    for line in body.decode().splitlines():
        match = LINE.match(line)
        if not match:
            continue
        name, labels, value = match.groups()
        labels = dict(re.findall(r'(\w+)="([^"]*)"', labels))
        if labels.get("task_attempt_num") != str(attempt):
            continue
        if name == "op_memoryOperations":
            name = "memoryOperations." + labels["op"]
        metrics[name] = float(value)
    return metrics


def scrape_until(port, attempt, ready, seconds=30):
    deadline = time.monotonic() + seconds
    metrics = {}
    while time.monotonic() < deadline:
        metrics = scrape(port, attempt)
        if metrics and ready(metrics):
            return metrics
        time.sleep(0.1)
    return metrics  # the assertions then say what is missing


@pytest.fixture(scope="module")
def blocked_run(flink_env, tmp_path_factory):
    """Seven inputs. The first loads Mem0 (seconds on the mailbox) before any call starts.
    Key ``slow`` sleeps 3 s first, so that its blocking call starts after the one that
    times out (4 s) and is still far from its own timeout when the test scrapes."""
    work_dir = tmp_path_factory.mktemp("operator-metrics")
    release = str(work_dir / "release")
    port = free_port()
    env = flink_env(**reporter_options(port))
    agents_env = AgentsExecutionEnvironment.get_execution_environment(env=env)
    agents_env.get_config().set(AgentsOptions.ASYNC_TIMEOUT_MS.key, 4000)
    agents_env.get_config().set(AgentsOptions.ERROR_HANDLING.key, "ignore")
    agents_env.get_config().set(AgentsOptions.JOB_ID.key, "operator-metrics")
    inputs = [("c", 0, "memory"), ("b", 0, "sleep 6"), ("a", 0, "sleep 0.05"), ("a", 1, "fail"),
              ("slow", 0, "sleep 3"), ("slow", 1, "block"), ("slow", 2, "sleep 0")]
    stream = env.from_collection([i + (release,) for i in inputs], type_info=Types.TUPLE(
        [Types.STRING(), Types.INT(), Types.STRING(), Types.STRING()]))
    out = agents_env.from_datastream(stream, key_selector=lambda r: r[0]).apply(MetricsAgent())
    results = out.to_datastream().execute_and_collect()
    try:
        metrics = scrape_until(port, 0, lambda m: m.get("inputsReceived") == 7
                               and m.get("actionsCompleted") == 5 and m.get("actionsFailed") == 2
                               and m.get("durableCallsInFlight") == 1)
    finally:
        open(release, "w").close()
    return metrics, sorted(results)


def test_a_reporter_sees_the_inputs_and_what_the_actions_did(blocked_run):
    metrics, _ = blocked_run
    assert metrics.get("inputsReceived") == 7
    # six inputs started their action (one waits); each memory update event started one more
    assert metrics.get("actionsStarted") == 8
    assert metrics.get("actionsCompleted") == 5
    assert metrics.get("actionsFailed") == 2  # the failing call and the timed-out one


def test_a_reporter_sees_the_durable_calls_by_outcome(blocked_run):
    metrics, _ = blocked_run
    assert metrics.get("durableCallsSubmitted") == 5, metrics
    assert metrics.get("durableCallsCompleted") == 2
    assert metrics.get("durableCallsFailed") == 1
    assert metrics.get("durableCallsTimedOut") == 1
    assert metrics.get("durableCallsReplayed") == 0
    # the completed calls slept 3.05 s; the timed-out and the running ones are not timed
    # (with the timed-out call it would be 4 s more). Each call's time is whole
    # milliseconds and a sleep may end a hair early by the monotonic clock (3049 was seen).
    assert 3040 <= metrics.get("durableCallTimeMsTotal", 0) < 7000, metrics


def test_a_reporter_sees_memory_operations_by_kind_and_the_memory_events(blocked_run):
    metrics, _ = blocked_run
    assert {op: metrics.get(f"memoryOperations.{op}") for op in
            ("add", "get", "search", "delete")} == {"add": 1, "get": 1, "search": 1, "delete": 1}
    assert metrics.get("memoryEventsEmitted") == 4


def test_the_gauges_show_the_call_in_flight_its_parked_key_and_the_input_behind_it(blocked_run):
    metrics, _ = blocked_run
    assert metrics.get("durableCallsInFlight") == 1
    assert metrics.get("keysParked") == 1
    assert metrics.get("inputsWaiting") == 1


def test_the_job_ends_normally_once_the_call_is_released(blocked_run):
    _, results = blocked_run
    assert results == sorted([("done", "slow", 0), ("done", "slow", 1), ("done", "slow", 2),
                              ("done", "a", 0), ("done", "c", 0), ("observed", "c", "add"),
                              ("observed", "c", "delete")])


def test_after_a_restart_the_recorded_call_is_counted_as_replayed_not_submitted(
        flink_env, tmp_path):
    work_dir = str(tmp_path)
    port = free_port()
    env = flink_env(**reporter_options(port), **checkpointing(work_dir))
    agents_env = AgentsExecutionEnvironment.get_execution_environment(env=env)

    def to_input(n, work_dir=work_dir):
        import time
        time.sleep(0.005)  # keep the source running over a few checkpoints
        return ("trigger", n, work_dir, True) if n == 0 else (n % 3, n, work_dir, False)

    numbers = env.from_source(NumberSequenceSource(0, 299), WatermarkStrategy.no_watermarks(),
                              "numbers")
    stream = numbers.map(to_input, output_type=Types.PICKLED_BYTE_ARRAY())
    out = (agents_env.from_datastream(stream, key_selector=lambda r: r[0])
           .apply(ReplayAgent()).to_datastream())
    results = out.execute_and_collect()
    try:
        metrics = scrape_until(port, 1, lambda m: m.get("durableCallsInFlight") == 1)
    finally:
        open(os.path.join(work_dir, "release"), "w").close()
    outputs = list(results)
    assert os.path.exists(os.path.join(work_dir, "failed-once"))
    assert ("trigger", 0) in outputs
    assert metrics.get("durableCallsReplayed") == 1
    assert metrics.get("durableCallsSubmitted") == 1  # only the call after the replayed one
    assert metrics.get("keysParked") == 1

"""The agent operator's metrics reach Flink's own metric system: a Prometheus reporter of
the mini-cluster, scraped while the job waits on a durable call that the test releases
once it has read what it needs."""

import re
import socket
import time
import urllib.request

import pytest
from pyflink.common import Types

from flink_agents_ltm.api.execution_environment import AgentsExecutionEnvironment, AgentsOptions
from runtime.metrics_agents import MetricsAgent

# flink_smoke: also run on every supported Flink version (make test-flink).
pytestmark = [pytest.mark.cluster, pytest.mark.flink_smoke]

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
        metrics.setdefault("operator_name", labels.get("operator_name"))
    return metrics


def scrape_until(port, attempt, ready, seconds=180):
    # generous: the job first loads its embedding model (46 s once, on a machine running two
    # smoke sets and two benches); a ready reading returns at once
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
    """Four inputs: one uses long-term memory, one's call fails (ignore mode), and key
    ``slow`` blocks on a call until the test has read the metrics, with its second input
    waiting behind it. What each number means is tested on the harness
    (test_engine_metrics); this shows that Flink's reporter sees them."""
    work_dir = tmp_path_factory.mktemp("operator-metrics")
    release = str(work_dir / "release")
    port = free_port()
    env = flink_env(**reporter_options(port))
    agents_env = AgentsExecutionEnvironment.get_execution_environment(env=env)
    agents_env.get_config().set(AgentsOptions.ERROR_HANDLING.key, "ignore")
    agents_env.get_config().set(AgentsOptions.JOB_ID.key, "operator-metrics")
    inputs = [("c", 0, "memory"), ("a", 0, "fail"), ("slow", 0, "block"), ("slow", 1, "sleep 0")]
    stream = env.from_collection([(*i, release) for i in inputs], type_info=Types.TUPLE(
        [Types.STRING(), Types.INT(), Types.STRING(), Types.STRING()]))
    out = agents_env.from_datastream(stream, key_selector=lambda r: r[0]).apply(MetricsAgent())
    results = out.to_datastream().execute_and_collect()
    try:
        metrics = scrape_until(port, 0, lambda m: m.get("inputsReceived") == 4
                               and m.get("actionsFailed") == 1
                               and m.get("durableCallsInFlight") == 1
                               and m.get("inputsWaiting") == 1)
    finally:
        open(release, "w").close()
    return metrics, sorted(results)


def test_a_reporter_sees_the_agent_counters(blocked_run):
    metrics, _ = blocked_run
    assert {name: metrics.get(name) for name in (
        "inputsReceived", "actionsStarted", "actionsCompleted", "actionsFailed",
        "actionRetries", "durableCallsSubmitted", "durableCallsFailed",
        "memoryEventsEmitted")} == {
        "inputsReceived": 4, "actionsStarted": 5, "actionsCompleted": 3, "actionsFailed": 1,
        "actionRetries": 0, "durableCallsSubmitted": 2, "durableCallsFailed": 1,
        "memoryEventsEmitted": 4}
    assert {op: metrics.get(f"memoryOperations.{op}") for op in
            ("add", "get", "search", "delete")} == {"add": 1, "get": 1, "search": 1, "delete": 1}


def test_the_metrics_carry_the_agents_name(blocked_run):
    metrics, _ = blocked_run
    # the Prometheus reporter writes a space as "_", as in Flink's own "Source:_..."
    assert metrics["operator_name"] == "Agent:_MetricsAgent"


def test_a_reporter_sees_the_gauges_set_by_the_operator(blocked_run):
    metrics, _ = blocked_run
    assert {name: metrics.get(name) for name in (
        "durableCallsInFlight", "durableCallsAbandoned", "keysParked", "inputsWaiting")} == {
        "durableCallsInFlight": 1, "durableCallsAbandoned": 0, "keysParked": 1,
        "inputsWaiting": 1}


def test_the_job_ends_normally_once_the_call_is_released(blocked_run):
    _, results = blocked_run
    assert results == sorted([("done", "slow", 0), ("done", "slow", 1), ("done", "c", 0),
                              ("observed", "c", "add"), ("observed", "c", "delete")])

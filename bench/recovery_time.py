"""Recovery after a TaskManager is killed with SIGKILL, on the local standalone cluster.

Starts a cluster of two TaskManagers (scripts/flink-cluster, in a scratch folder), runs
an agent job (a throttled unbounded source, an action parked on a 50 ms durable call,
checkpoints every second) in process and in thread mode, kills the TaskManager running the
agent, and times, from the kill:

* detection: until the JobManager records the failure (the job's exception history);
* restart: until every task runs again (on the other TaskManager);
* restored: until the first checkpoint after the restart completes (processing again).

The killed TaskManager is restarted between runs; the cluster is stopped at the end.

    python -m bench.recovery_time [--modes process thread]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from flink_agents_ltm.api.agent import Agent, action
from flink_agents_ltm.api.events import InputEvent, OutputEvent

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = str(ROOT / "scripts" / "flink-cluster")


def nap(n):
    time.sleep(0.05)
    return n


class NappingAgent(Agent):
    @action(InputEvent)
    async def handle(event, ctx):
        count = (ctx.short_term_memory.get("count") or 0) + 1
        ctx.short_term_memory.set("count", count)
        ctx.send_event(OutputEvent((event.input, count, await ctx.durable_execute_async(
            nap, event.input))))


def job(mode: str) -> None:
    """The job, run by ``flink run`` (detached)."""
    from pyflink.common import Configuration, Types, WatermarkStrategy
    from pyflink.datastream import StreamExecutionEnvironment
    from pyflink.datastream.connectors.number_seq import NumberSequenceSource

    from flink_agents_ltm.api.execution_environment import AgentsExecutionEnvironment

    config = Configuration()
    for key, value in {"python.execution-mode": mode,
                       "execution.checkpointing.interval": "1 s",
                       "restart-strategy.type": "fixed-delay",
                       "restart-strategy.fixed-delay.attempts": "5",
                       "restart-strategy.fixed-delay.delay": "1 s"}.items():
        config.set_string(key, value)
    env = StreamExecutionEnvironment.get_execution_environment(config)
    env.set_parallelism(2)
    agents_env = AgentsExecutionEnvironment.get_execution_environment(env=env)

    def throttled(n):
        import time
        time.sleep(0.01)
        return n % 64

    numbers = env.from_source(NumberSequenceSource(0, 2**62), WatermarkStrategy.no_watermarks(),
                              "numbers").map(throttled, output_type=Types.LONG())
    out = (agents_env.from_datastream(numbers, key_selector=lambda n: n)
           .apply(NappingAgent()).to_datastream())
    out.map(lambda r: None, output_type=Types.PICKLED_BYTE_ARRAY()).filter(lambda r: False) \
        .print()
    env.execute_async(f"recovery-{mode}")


# ---------------------------------------------------------------------- the measurement


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Cluster:
    def __init__(self, folder: str):
        self.folder = folder
        self.rest_port = free_port()

    def script(self, *args: str, timeout: float = 300) -> str:
        done = subprocess.run([SCRIPT, *args[:1], "--dir", self.folder, *args[1:]],
                              capture_output=True, text=True, timeout=timeout)
        if done.returncode != 0:
            raise RuntimeError(f"flink-cluster {' '.join(args)}: {done.stderr[-2000:]}")
        return done.stdout

    def rest(self, path: str, method: str = "GET") -> dict:
        request = urllib.request.Request(f"http://127.0.0.1:{self.rest_port}{path}",
                                         method=method)
        with urllib.request.urlopen(request, timeout=5) as response:
            body = response.read()
        return json.loads(body) if body else {}


def wait_for(condition, timeout: float = 300, every: float = 0.05):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(every)
    raise TimeoutError(f"timed out waiting for {condition}")


def all_running(cluster: Cluster, jid: str) -> bool:
    job = cluster.rest(f"/jobs/{jid}")
    return job["state"] == "RUNNING" and all(v["status"] == "RUNNING" for v in job["vertices"])


def completed_checkpoints(cluster: Cluster, jid: str) -> int:
    return cluster.rest(f"/jobs/{jid}/checkpoints")["counts"]["completed"]


def measure(cluster: Cluster, mode: str, restart: bool = True) -> tuple[float, float, float]:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    subprocess.run([SCRIPT, "run", "--dir", cluster.folder, "-py", __file__, "--", "--job",
                    mode], check=True, capture_output=True, timeout=600, env=env)
    jid = wait_for(lambda: next((j["jid"] for j in cluster.rest("/jobs/overview")["jobs"]
                                 if j["name"] == f"recovery-{mode}" and j["state"] == "RUNNING"),
                                None))
    wait_for(lambda: all_running(cluster, jid))
    before = completed_checkpoints(cluster, jid)
    wait_for(lambda: completed_checkpoints(cluster, jid) >= before + 3)
    agent = next(v for v in cluster.rest(f"/jobs/{jid}")["vertices"] if "Agent" in v["name"]
                 or "process" in v["name"].lower())
    placed = cluster.rest(f"/jobs/{jid}/vertices/{agent['id']}/taskmanagers")["taskmanagers"]
    victim = placed[0]["taskmanager-id"].removeprefix("tm-")
    checkpoints = completed_checkpoints(cluster, jid)
    killed = time.time()
    cluster.script("kill-taskmanager", victim)

    def failure_recorded():
        entries = cluster.rest(f"/jobs/{jid}/exceptions")["exceptionHistory"]["entries"]
        return max((e["timestamp"] / 1000 for e in entries), default=None)

    detected = wait_for(failure_recorded)
    wait_for(lambda: not all_running(cluster, jid) or completed_checkpoints(cluster, jid) >
             checkpoints + 1, every=0.02)
    wait_for(lambda: all_running(cluster, jid))
    running = time.time()
    restarted_checkpoints = completed_checkpoints(cluster, jid)
    wait_for(lambda: completed_checkpoints(cluster, jid) > restarted_checkpoints)
    restored = time.time()
    cluster.rest(f"/jobs/{jid}?mode=cancel", method="PATCH")
    wait_for(lambda: cluster.rest(f"/jobs/{jid}")["state"] == "CANCELED")
    if restart:  # for the next mode
        cluster.script("restart-taskmanager", victim)
    return detected - killed, running - killed, restored - killed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--job", choices=["process", "thread"], help=argparse.SUPPRESS)
    parser.add_argument("--modes", nargs="+", choices=["process", "thread"],
                        default=["process", "thread"], help="Python execution modes to time")
    args = parser.parse_args()
    if args.job:
        job(args.job)
        return 0
    folder = tempfile.mkdtemp(prefix="flink-agents-ltm-recovery-")
    cluster = Cluster(folder)
    try:
        cluster.script("start", "--taskmanagers", "2", "--rest-port", str(cluster.rest_port),
                       "--rpc-port", str(free_port()))
        print("agent job at parallelism 2 on two TaskManagers, checkpoints every 1 s; one "
              "TaskManager killed with SIGKILL (heartbeat every 2 s)")
        print(f"{'mode':<8} {'detected after':>15} {'all tasks running':>18} "
              f"{'first checkpoint after':>23}")
        for mode in args.modes:
            detected, running, restored = measure(cluster, mode,
                                                  restart=mode != args.modes[-1])
            print(f"{mode:<8} {detected:>14.1f}s {running:>17.1f}s {restored:>22.1f}s",
                  flush=True)
    finally:
        subprocess.run([SCRIPT, "stop", "--dir", folder], capture_output=True, timeout=120)
        shutil.rmtree(folder, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    raise SystemExit(main())

"""Throughput of an agent whose action awaits a 100 ms durable call.

For 1 to 64 keys in flight, events per second of the parking runtime
(``durable_execute_async``, capacity 32) against the ideal
``min(keys, capacity) / latency``, and against a blocking variant whose action
waits on the mailbox thread (``durable_execute``). Throughput is measured
inside the job, from the first action start to the last action end, so JVM
and job start-up are left out.

    python -m bench.durable_async_throughput [--keys 1 2 4 8 16 32 64] [--events-per-key 10]
"""

from __future__ import annotations

import argparse
import atexit
import os
import shutil
import tempfile
import time

from bench._local_cluster import local_configuration
from bench._results import add_json_argument, write_results

LATENCY = 0.1
CAPACITY = 32
EVENTS_PER_KEY = 10
KEYS = [1, 2, 4, 8, 16, 32, 64]


def slow_call(started: float) -> tuple[float, float]:
    time.sleep(LATENCY)
    return started, time.time()


def build_agents():
    from flink_agents_ltm.api.agent import Agent, action
    from flink_agents_ltm.api.events import InputEvent, OutputEvent

    class ParkingAgent(Agent):
        @action(InputEvent)
        async def call(event, ctx):
            span = await ctx.durable_execute_async(slow_call, time.time())
            ctx.send_event(OutputEvent(span))

    class BlockingAgent(Agent):
        @action(InputEvent)
        def call(event, ctx):
            ctx.send_event(OutputEvent(ctx.durable_execute(slow_call, time.time())))

    return ParkingAgent, BlockingAgent


def run(agent, keys: int, events_per_key: int) -> float:
    from pyflink.common import Types
    from pyflink.datastream import StreamExecutionEnvironment

    from flink_agents_ltm.api.execution_environment import (
        AgentsExecutionEnvironment,
        AgentsOptions,
    )

    conf = local_configuration()
    env = StreamExecutionEnvironment.get_execution_environment(conf)
    agents_env = AgentsExecutionEnvironment.get_execution_environment(env=env)
    agents_env.get_config().set(AgentsOptions.ASYNC_CAPACITY, CAPACITY)
    inputs = [(k, n) for n in range(events_per_key) for k in range(keys)]
    stream = env.from_collection(inputs, type_info=Types.TUPLE([Types.INT(), Types.INT()]))
    spans = list(agents_env.from_datastream(stream, key_selector=lambda r: r[0])
                 .apply(agent).to_datastream().execute_and_collect())
    assert len(spans) == len(inputs)
    return len(spans) / (max(end for _, end in spans) - min(start for start, _ in spans))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--keys", type=int, nargs="+", default=KEYS,
                        help="keys in flight, one job each")
    parser.add_argument("--events-per-key", type=int, default=EVENTS_PER_KEY)
    add_json_argument(parser)
    args = parser.parse_args()
    scratch = tempfile.mkdtemp(prefix="flink-agents-ltm-bench-")
    atexit.register(shutil.rmtree, scratch, ignore_errors=True)
    os.environ.setdefault("JVM_ARGS", f"-Djava.io.tmpdir={scratch}")
    os.environ.setdefault("FLINK_LOG_DIR", scratch)
    parking, blocking = build_agents()
    print(f"action awaits a {LATENCY * 1000:.0f} ms durable call; capacity {CAPACITY}; "
          f"{args.events_per_key} events per key; thread mode, parallelism 1")
    print(f"{'keys':>5} {'ideal ev/s':>11} {'parking ev/s':>13} {'% of ideal':>11} "
          f"{'blocking ev/s':>14} {'parking/blocking':>17}")
    blocking_rate = run(blocking(), 4, 5)  # the mailbox waits: 1/latency whatever the keys
    series: dict[str, list[tuple[int, float]]] = {"ideal": [], "parking (ours)": [],
                                                  "blocking the mailbox": []}
    for keys in args.keys:
        ideal = min(keys, CAPACITY) / LATENCY
        rate = run(parking(), keys, args.events_per_key)
        print(f"{keys:>5} {ideal:>11.1f} {rate:>13.1f} {100 * rate / ideal:>10.0f}% "
              f"{blocking_rate:>14.1f} {rate / blocking_rate:>16.1f}x", flush=True)
        for name, value in (("ideal", ideal), ("parking (ours)", rate),
                            ("blocking the mailbox", blocking_rate)):
            series[name].append((keys, value))
    write_results(args.json, bench="durable_async_throughput", series=series,
                  title=f"Actions awaiting a {LATENCY * 1000:.0f} ms durable call, capacity "
                        f"{CAPACITY}", x_label="keys in flight", y_label="events per second")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

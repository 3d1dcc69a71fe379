"""What the action-state store costs: throughput with ``agents.action-state.store`` off,
``sqlite`` and PostgreSQL (the job's pgvector server), side by side in one run.

An agent whose action awaits a 100 ms durable call, 64 keys in flight (capacity 64),
on PyFlink's mini-cluster (thread mode, parallelism 1). Throughput is measured inside
the job, from the first action start to the last action end. A second table times the
store alone: the rows one durable call writes (started marker, result, step done) and
the lookup a replay makes, in microseconds per call, on both stores.

    python -m bench.action_state_store [--keys 64] [--events-per-key 10] [--rounds 3]
        [--store-calls 2000] [--pgvector-config FILE]

Without ``--pgvector-config`` (a file holding a pgvector VECTOR_STORE as JSON) the bench
starts a PostgreSQL server of its own through ``scripts/pgvector-server``.
"""

from __future__ import annotations

import argparse
import atexit
import os
import shutil
import statistics
import tempfile
import time
import uuid
from pathlib import Path

from bench._local_cluster import local_configuration
from bench.scoped_search import pgvector_server

LATENCY = 0.1
KEYS = 64
EVENTS_PER_KEY = 10
POSTGRES = "postgres"
STORES = {"none": "none", "sqlite": "sqlite", "postgres": POSTGRES}


def slow_call(started: float) -> tuple[float, float]:
    time.sleep(LATENCY)
    return started, time.time()


def build_agent():
    from flink_agents_ltm.api.agent import Agent, action
    from flink_agents_ltm.api.events import InputEvent, OutputEvent

    class ParkingAgent(Agent):
        @action(InputEvent)
        async def call(event, ctx):
            span = await ctx.durable_execute_async(slow_call, time.time())
            ctx.send_event(OutputEvent(span))

    return ParkingAgent


def run(agent, store: str, keys: int, events_per_key: int, home: str,
        pgvector: dict) -> float:
    from pyflink.common import Types
    from pyflink.datastream import StreamExecutionEnvironment

    from flink_agents_ltm.api.execution_environment import (
        AgentsExecutionEnvironment,
        AgentsOptions,
    )
    from flink_agents_ltm.api.memory.long_term_memory import LongTermMemoryOptions

    conf = local_configuration()
    env = StreamExecutionEnvironment.get_execution_environment(conf)
    agents_env = AgentsExecutionEnvironment.get_execution_environment(env=env)
    config = agents_env.get_config()
    config.set(AgentsOptions.ASYNC_CAPACITY, keys)
    config.set(AgentsOptions.ACTION_STATE_STORE, store)
    config.set(AgentsOptions.JOB_ID, f"bench-{uuid.uuid4().hex[:8]}")
    config.set(LongTermMemoryOptions.BASE_DIR, home)
    config.set(LongTermMemoryOptions.VECTOR_STORE, pgvector)  # the PostgreSQL store's server
    inputs = [(k, n) for n in range(events_per_key) for k in range(keys)]
    stream = env.from_collection(inputs, type_info=Types.TUPLE([Types.INT(), Types.INT()]))
    spans = list(agents_env.from_datastream(stream, key_selector=lambda r: r[0])
                 .apply(agent).to_datastream().execute_and_collect())
    assert len(spans) == len(inputs)
    return len(spans) / (max(end for _, end in spans) - min(start for start, _ in spans))


def open_alone(name: str, home: str, pgvector: dict):
    from flink_agents_ltm.api.execution_environment import AgentsConfiguration
    from flink_agents_ltm.api.memory.long_term_memory import LongTermMemoryOptions
    from flink_agents_ltm.integrations.action_state.postgres import open_store
    from flink_agents_ltm.runtime.action_state.sqlite import SqliteActionStateStore

    if name == "sqlite":
        return SqliteActionStateStore(Path(home) / "alone" / "action-state.sqlite", "bench")
    config = AgentsConfiguration()
    config.set(LongTermMemoryOptions.VECTOR_STORE, pgvector)
    return open_store(f"bench-{uuid.uuid4().hex[:8]}", config)


def store_alone(name: str, calls: int, home: str, pgvector: dict) -> dict[str, float]:
    """Microseconds per call of each store operation, on the store ``name``."""
    import cloudpickle

    from flink_agents_ltm.runtime.action_state.journal import ActionJournal

    store = open_alone(name, home, pgvector)
    journal = ActionJournal(store, 0, checkpoints=True, retention_s=600)
    result = {"answer": "x" * 200}
    cloudpickle.dumps(result)
    timings: dict[str, float] = {}
    started = time.perf_counter()
    writers = [journal.start(journal.run_of(f"k{n}", "", 0, "input"), f"k{n}#0#0", "call0",
                             "bench.slow_call") for n in range(calls)]
    for _, write_started, _ in writers:
        write_started()
    timings["run + started marker"] = time.perf_counter() - started
    started = time.perf_counter()
    for _, _, write_result in writers:
        write_result(result)
    timings["result"] = time.perf_counter() - started
    started = time.perf_counter()
    for n in range(calls):
        journal.replay(f"k{n}#0#0", "call0", "bench.slow_call")
    timings["replay lookup"] = time.perf_counter() - started
    started = time.perf_counter()
    for n in range(calls):
        journal.step_done(f"k{n}#0#0")
    journal.flush_marks()
    timings["step done (batched)"] = time.perf_counter() - started
    journal.checkpoint_started(1)
    started = time.perf_counter()
    journal.checkpoint_completed(1)
    timings["prune (per row)"] = time.perf_counter() - started
    journal.close()
    return {name: seconds / calls * 1e6 for name, seconds in timings.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--keys", type=int, default=KEYS, help="keys in flight (= capacity)")
    parser.add_argument("--events-per-key", type=int, default=EVENTS_PER_KEY)
    parser.add_argument("--rounds", type=int, default=3,
                        help="jobs per store, in alternating order; the median is shown")
    parser.add_argument("--store-calls", type=int, default=2000,
                        help="calls of the store-alone table")
    parser.add_argument("--pgvector-config", metavar="FILE",
                        help="a pgvector VECTOR_STORE as JSON (default: a server of its own)")
    args = parser.parse_args()
    with pgvector_server(args.pgvector_config) as pgvector:
        return measure(args, pgvector)


def measure(args: argparse.Namespace, pgvector: dict) -> int:
    scratch = tempfile.mkdtemp(prefix="flink-agents-ltm-bench-")
    atexit.register(shutil.rmtree, scratch, ignore_errors=True)
    os.environ.setdefault("JVM_ARGS", f"-Djava.io.tmpdir={scratch}")
    os.environ.setdefault("FLINK_LOG_DIR", scratch)
    agent = build_agent()
    ideal = args.keys / LATENCY
    print(f"action awaits a {LATENCY * 1000:.0f} ms durable call; {args.keys} keys, capacity "
          f"{args.keys}; {args.events_per_key} events per key; thread mode, parallelism 1")
    runs: dict[str, list[float]] = {store: [] for store in STORES}
    order = list(STORES)
    for round_ in range(args.rounds):  # rotating, so that a busy machine hits each store
        for store in order[round_ % len(order):] + order[:round_ % len(order)]:
            runs[store].append(run(agent(), STORES[store], args.keys, args.events_per_key,
                                   scratch, pgvector))
    rates = {store: statistics.median(values) for store, values in runs.items()}
    print(f"median of {args.rounds} job(s) per store")
    print(f"{'ideal ev/s':>11} {'store off ev/s':>15} {'sqlite ev/s':>12} {'postgres ev/s':>14}"
          f" {'sqlite/off':>11} {'postgres/off':>13}")
    print(f"{ideal:>11.1f} {rates['none']:>15.1f} {rates['sqlite']:>12.1f} "
          f"{rates['postgres']:>14.1f} {rates['sqlite'] / rates['none']:>10.2f}x "
          f"{rates['postgres'] / rates['none']:>12.2f}x", flush=True)
    print(f"\neach store alone, {args.store_calls} calls, microseconds per call")
    alone = {name: store_alone(name, args.store_calls, scratch, pgvector)
             for name in ("sqlite", "postgres")}
    print(f"{'operation':<16} {'sqlite':>10} {'postgres':>10}")
    for operation in alone["sqlite"]:
        print(f"{operation:<16} {alone['sqlite'][operation]:>10.1f} "
              f"{alone['postgres'][operation]:>10.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

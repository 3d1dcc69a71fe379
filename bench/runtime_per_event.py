"""The runtime's cost per event, side by side with a plain keyed PyFlink function.

Three jobs over the same keyed input, in thread and process mode, at parallelism 1 and 2,
all in one run:

* **plain PyFlink**, the floor a Flink user compares against: a ``KeyedProcessFunction``
  that counts the key's inputs in a ``ValueState`` and emits ``(key, count, time)``;
* **trivial agent**: one action per input that counts the key's inputs in short-term memory
  and emits the same output (no model, no long-term memory);
* **durable agent**: the same action, but it first awaits one durable async call of
  ``--latency-ms`` (50 ms) per input; 64 keys, capacity 32 per subtask: the ideal is
  ``min(keys, capacity x parallelism) / latency`` (640 ev/s at p=1, 1280 at p=2).

Events per second are measured inside the job, from the first output's time (the first
call's start for the durable agent) to the last output's, so JVM and job start-up are left
out; the median of ``--repeat`` runs is printed, with the ratio to plain PyFlink and, for the
durable agent, the share of the ideal and the median *wake-up*: from a call's end to its
action going on (what process mode's late poll timers made long). Upstream Apache Flink
Agents is not run: it needs a venv of its own (``--upstream-python``), and the run says it
was skipped.

    python -m bench.runtime_per_event [--events 2560] [--durable-events 1280] [--repeat 1]
        [--modes thread process] [--parallelism 1 2] [--json FILE]

``FLINK_AGENTS_LTM_PROFILE=/some/dir/prefix`` makes each agent subtask cProfile its Flink
callbacks and write ``prefix.<pid>.<subtask>.pstats`` when it closes (see docs/benchmarks.md).
"""

from __future__ import annotations

import argparse
import atexit
import os
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from typing import Any

from bench._local_cluster import local_configuration
from bench._results import add_json_argument, write_results

KEYS = 64
CAPACITY = 32
LATENCY_MS = 50
EVENTS = 2560
DURABLE_EVENTS = 1280
JOBS = ("plain PyFlink", "trivial agent", "durable agent")


def slow_call(started: float, latency_s: float) -> tuple[float, float]:
    time.sleep(latency_s)
    return started, time.time()


def build_jobs(latency_s: float) -> dict[str, Callable[[Any, Any, Any], Any]]:
    """Each job's builder: ``(env, agents_env, keyed input) -> stream of (key, start, end,
    call end)``: the durable agent's start is its call's, its end the output's."""
    from pyflink.common import Types
    from pyflink.datastream import KeyedProcessFunction
    from pyflink.datastream.state import ValueStateDescriptor

    from flink_agents_ltm.api.agent import Agent, action
    from flink_agents_ltm.api.events import InputEvent, OutputEvent

    class CountingFunction(KeyedProcessFunction):
        def open(self, runtime_context):
            self.count = runtime_context.get_state(ValueStateDescriptor("count", Types.LONG()))

        def process_element(self, value, ctx):
            count = (self.count.value() or 0) + 1
            self.count.update(count)
            now = time.time()
            yield value[0], now, now, now

    class TrivialAgent(Agent):
        @action(InputEvent)
        def count(event, ctx):
            memory = ctx.short_term_memory
            memory.set("count", (memory.get("count") or 0) + 1)
            now = time.time()
            ctx.send_event(OutputEvent((event.input[0], now, now, now)))

    class DurableAgent(Agent):
        @action(InputEvent)
        async def count(event, ctx):
            started, ended = await ctx.durable_execute_async(slow_call, time.time(),
                                                             latency_s)
            memory = ctx.short_term_memory
            memory.set("count", (memory.get("count") or 0) + 1)
            ctx.send_event(OutputEvent((event.input[0], started, time.time(), ended)))

    def plain(env, agents_env, stream):
        return stream.key_by(lambda r: r[0]).process(
            CountingFunction(), output_type=Types.PICKLED_BYTE_ARRAY())

    def agent(agent_class):
        def build(env, agents_env, stream):
            return (agents_env.from_datastream(stream, key_selector=lambda r: r[0])
                    .apply(agent_class()).to_datastream())
        return build

    return {"plain PyFlink": plain, "trivial agent": agent(TrivialAgent),
            "durable agent": agent(DurableAgent)}


def run(build: Callable[[Any, Any, Any], Any], mode: str, parallelism: int,
        events: int) -> tuple[float, float]:
    """Events per second of one job, from its first output (or call start) to its last, and
    the median wake-up in ms: from a durable call's end to its action going on (0 without
    calls)."""
    from pyflink.common import Types
    from pyflink.datastream import StreamExecutionEnvironment

    from flink_agents_ltm.api.execution_environment import (
        AgentsExecutionEnvironment,
        AgentsOptions,
    )

    conf = local_configuration({"python.execution-mode": mode,
                                "parallelism.default": str(parallelism)})
    env = StreamExecutionEnvironment.get_execution_environment(conf)
    env.set_parallelism(parallelism)
    agents_env = AgentsExecutionEnvironment.get_execution_environment(env=env)
    agents_env.get_config().set(AgentsOptions.ASYNC_CAPACITY, CAPACITY)
    inputs = [(n % KEYS, n) for n in range(events)]
    stream = env.from_collection(inputs, type_info=Types.TUPLE([Types.INT(), Types.INT()]))
    outputs = list(build(env, agents_env, stream).execute_and_collect())
    if len(outputs) != events:
        raise RuntimeError(f"the job emitted {len(outputs)} outputs for {events} inputs")
    spent = max(end for _, _, end, _ in outputs) - min(start for _, start, _, _ in outputs)
    wake_up = statistics.median(end - call_end for _, _, end, call_end in outputs)
    return (events / spent if spent > 0 else float("inf")), wake_up * 1000


def upstream_note(python: str | None) -> str:
    """Why upstream Apache Flink Agents is not in the table."""
    if not python:
        return ("upstream Apache Flink Agents: skipped (not installed here; it needs a venv of "
                "its own, named with --upstream-python)")
    return (f"upstream Apache Flink Agents: skipped ({python} is given, but this bench does "
            "not drive upstream's API yet)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=EVENTS,
                        help=f"inputs of the plain and trivial jobs, over {KEYS} keys")
    parser.add_argument("--durable-events", type=int, default=DURABLE_EVENTS,
                        help="inputs of the durable-call job (at the ideal 640 ev/s, "
                             "1280 take 2 s)")
    parser.add_argument("--repeat", type=int, default=1, help="runs of each job; the median "
                                                              "is printed")
    parser.add_argument("--modes", nargs="+", choices=["thread", "process"],
                        default=["thread", "process"], help="Python execution modes")
    parser.add_argument("--parallelism", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--jobs", nargs="+", choices=JOBS, default=list(JOBS),
                        help="which jobs to run (all three by default)")
    parser.add_argument("--latency-ms", type=int, default=LATENCY_MS,
                        help="the durable call's latency")
    parser.add_argument("--upstream-python", default=os.environ.get("FLINK_AGENTS_UPSTREAM_PYTHON"),
                        help="a Python with upstream apache-flink-agents installed")
    add_json_argument(parser)
    args = parser.parse_args()
    if min(args.events, args.durable_events, args.repeat) < 1:
        parser.error("--events, --durable-events and --repeat must be at least 1")
    scratch = tempfile.mkdtemp(prefix="flink-agents-ltm-bench-")
    atexit.register(shutil.rmtree, scratch, ignore_errors=True)
    os.environ.setdefault("JVM_ARGS", f"-Djava.io.tmpdir={scratch}")
    os.environ.setdefault("FLINK_LOG_DIR", scratch)
    latency_s = args.latency_ms / 1000

    def ideal(parallelism: int) -> float:
        return min(KEYS, CAPACITY * parallelism) / latency_s

    jobs = build_jobs(latency_s)
    print(f"{args.events} events over {KEYS} keys (durable agent: {args.durable_events}, one "
          f"{args.latency_ms} ms call each, capacity {CAPACITY} per subtask, ideal "
          f"{ideal(1):.0f} ev/s at p=1); "
          f"median of {args.repeat}; {upstream_note(args.upstream_python)}", flush=True)
    print(f"{'mode':<8} {'p':>2} {'plain ev/s':>11} {'trivial ev/s':>13} {'trivial/plain':>14} "
          f"{'durable ev/s':>13} {'durable/plain':>14} {'% of ideal':>11} {'wake-up ms':>11}",
          flush=True)
    series: dict[str, list[tuple[str, float]]] = {}
    for mode in args.modes:
        for parallelism in args.parallelism:
            rates: dict[str, float] = {}
            wake_up: float | None = None
            for name in args.jobs:
                events = args.durable_events if name == "durable agent" else args.events
                runs = [run(jobs[name], mode, parallelism, events) for _ in range(args.repeat)]
                rates[name] = statistics.median(rate for rate, _ in runs)
                if name == "durable agent":
                    wake_up = statistics.median(wake for _, wake in runs)
                series.setdefault(name, []).append((f"{mode} p={parallelism}", rates[name]))
            plain = rates.get("plain PyFlink")
            trivial = rates.get("trivial agent")
            durable = rates.get("durable agent")

            def cell(value: float | None, width: int, suffix: str = "",
                     scale: float = 1.0, digits: int = 0) -> str:
                return (f"{'-':>{width}}" if value is None
                        else f"{value * scale:>{width - len(suffix)}.{digits}f}{suffix}")

            print(f"{mode:<8} {parallelism:>2} {cell(plain, 11)} {cell(trivial, 13)} "
                  f"{cell(trivial / plain if trivial and plain else None, 14, 'x', digits=2)} "
                  f"{cell(durable, 13)} "
                  f"{cell(durable / plain if durable and plain else None, 14, 'x', digits=2)} "
                  f"{cell(durable / ideal(parallelism) if durable else None, 11, '%', 100)} "
                  f"{cell(wake_up, 11, digits=1)}", flush=True)
    write_results(args.json, bench="runtime_per_event", series=series, kind="bar",
                  title=f"Events per second over {KEYS} keys: plain PyFlink, a trivial agent, "
                        f"one {args.latency_ms} ms durable call per event",
                  x_label="execution mode, parallelism", y_label="events per second",
                  note=f"median of {args.repeat}; durable ideal {ideal(1):.0f} ev/s at p=1")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

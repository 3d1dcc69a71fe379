"""What the engine does per event, counted on the harness: numbers that a loaded machine
does not change.

The trivial agent of :mod:`bench.runtime_per_event` (one action per input that counts in
short-term memory and emits an output) and its durable variant (the same action after one
durable async call) run on the test harness (:mod:`flink_agents_ltm.runtime.harness`:
in-memory keyed state, a manual clock and worker pool) over 64 keys. Per event:

* **calls**: Python function calls inside the engine's callbacks (cProfile's count);
* **state accesses**: keyed-state reads and writes (each one a Pemja call into the JVM in
  thread mode, a state request over Beam's channel in process mode when not cached);
* **timer operations**: registrations and deletions (written to the JVM each);
* **pickles**: ``cloudpickle.dumps`` / ``pickle.dumps`` calls made by the engine (the
  harness's own pickling of state values is left out: PyFlink pickles those too);
* **µs**: the engine's own time per event on this machine (no Flink, no JVM; the least of
  ``--repeat`` runs).

    python -m bench.engine_per_event [--events 5120] [--repeat 5]
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import time
from collections import Counter
from typing import Any

from flink_agents_ltm.api.agent import Agent, action
from flink_agents_ltm.api.events import InputEvent, OutputEvent
from flink_agents_ltm.runtime.harness import AgentHarness

KEYS = 64


def quick_call(value: int) -> int:
    return value


class TrivialAgent(Agent):
    @action(InputEvent)
    def count(event, ctx):
        memory = ctx.short_term_memory
        memory.set("count", (memory.get("count") or 0) + 1)
        ctx.send_event(OutputEvent((event.input[0], event.input[1])))


class DurableAgent(Agent):
    @action(InputEvent)
    async def count(event, ctx):
        value = await ctx.durable_execute_async(quick_call, event.input[1])
        memory = ctx.short_term_memory
        memory.set("count", (memory.get("count") or 0) + 1)
        ctx.send_event(OutputEvent((event.input[0], value)))


class _TimerCount:
    """Counts the timer operations the engine asks the harness for."""

    def __init__(self) -> None:
        self.ops = 0

    def install(self, harness: AgentHarness) -> None:
        register, delete = harness._register, harness._delete

        def counted_register(*args: Any, **kwargs: Any) -> None:
            self.ops += 1
            register(*args, **kwargs)

        def counted_delete(*args: Any, **kwargs: Any) -> None:
            self.ops += 1
            delete(*args, **kwargs)

        harness._register = counted_register  # type: ignore[method-assign]
        harness._delete = counted_delete  # type: ignore[method-assign]


def _drive(harness: AgentHarness, events: int, durable: bool) -> None:
    if not durable:
        for n in range(events):
            harness.process_element((n % KEYS, n))
        return
    for start in range(0, events, KEYS):  # one input per key parks, its call ends, it goes on
        for n in range(start, min(start + KEYS, events)):
            harness.process_element((n % KEYS, n))
        harness.pool.complete_all()
        harness.advance(0.01)


def _harness(durable: bool) -> AgentHarness:
    agent = DurableAgent() if durable else TrivialAgent()
    return AgentHarness(agent, key_selector=lambda r: r[0],
                        config={"agents.durable-async.capacity": KEYS})


def measure(durable: bool, events: int, repeat: int) -> dict[str, float]:
    harness = _harness(durable)
    timers = _TimerCount()
    timers.install(harness)
    profile = cProfile.Profile()
    profile.enable()
    _drive(harness, events, durable)
    profile.disable()
    if len(harness.outputs) != events:
        raise RuntimeError(f"{len(harness.outputs)} outputs for {events} inputs")
    stats = pstats.Stats(profile)
    calls = sum(entry[1] for entry in stats.stats.values())  # type: ignore[attr-defined]
    pickles = 0
    for (file, _line, name), entry in stats.stats.items():  # type: ignore[attr-defined]
        if (name == "dumps" and "cloudpickle" in file) or \
                name == "<built-in method _pickle.dumps>":
            pickles += sum(count[0] for (caller, _, _), count in entry[4].items()
                           if not caller.endswith("harness.py"))
    state: Counter[str] = Counter()
    for (_name, kind), count in harness.state_ops().items():
        state[kind] += count
    best = float("inf")
    for _ in range(repeat):
        fresh = _harness(durable)
        started = time.perf_counter()
        _drive(fresh, events, durable)
        best = min(best, time.perf_counter() - started)
    return {"calls": calls / events, "state reads": state["read"] / events,
            "state writes": state["write"] / events, "timer ops": timers.ops / events,
            "pickles": pickles / events, "us": best / events * 1e6}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=5120)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    print(f"{args.events} events over {KEYS} keys on the harness (per event; µs: the least "
          f"of {args.repeat} runs, without the profiler)")
    print(f"{'agent':<10} {'calls':>7} {'state reads':>12} {'state writes':>13} "
          f"{'timer ops':>10} {'pickles':>8} {'µs':>7}")
    for name, durable in (("trivial", False), ("durable", True)):
        row = measure(durable, args.events, args.repeat)
        print(f"{name:<10} {row['calls']:>7.1f} {row['state reads']:>12.2f} "
              f"{row['state writes']:>13.2f} {row['timer ops']:>10.2f} {row['pickles']:>8.2f} "
              f"{row['us']:>7.1f}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Keyed state left behind by keys whose work ended: entries and checkpoint bytes per key.

100k distinct keys, each processed once by an action that parks on a durable call (so
each key *has work* in keyed state for a while), for two agents: one that never writes
long-term memory (target: 0 entries per finished key) and one that adds one item per
input (target: 1 entry, its input counter, which replay-stable item ids need).

* entries: the engine on the in-memory harness, counted exactly after every key finished,
  and at the peak while all of them were parked;
* checkpoint bytes: the same agents in a job on PyFlink's mini-cluster (thread mode,
  HashMap state backend), the size of a checkpoint taken after every key finished, for
  1k and for 100k keys; bytes per key is the difference divided by the keys added.

The long-term memory is a counter of items (``CountingMemory``): the bench measures the
runtime's state, not Mem0.

    python -m bench.state_per_key [--keys 100000] [--agents forgetful note-taking]
"""

from __future__ import annotations

import argparse
import atexit
import os
import shutil
import sys
import sysconfig
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from flink_agents_ltm.api.agent import Agent, action
from flink_agents_ltm.api.events import InputEvent, OutputEvent
from flink_agents_ltm.api.filters import MetadataFilter
from flink_agents_ltm.api.memory.long_term_memory import (
    BaseLongTermMemory,
    MemoryScope,
    MemorySetItem,
    NewItem,
)

ROOT = Path(__file__).resolve().parents[1]
TAIL = 40  # slow inputs of one more key after the distinct ones: checkpoints complete meanwhile


class CountingMemory(BaseLongTermMemory):
    """A long-term memory that keeps nothing: the contract's guards, id minting and
    observations are the base class's (as in every memory), the store only counts."""

    def __init__(self, job_id: str = "bench-state-per-key",
                 mailbox_check: Callable[[], None] | None = None) -> None:
        super().__init__(job_id, mailbox_check)
        self._lock = threading.Lock()
        self.items_added = 0

    def _add(self, scope: MemoryScope, items: Sequence[NewItem]) -> list[str]:
        with self._lock:
            self.items_added += len(items)
        return [item.id for item in items]

    def _get(self, scope: MemoryScope, ids: Sequence[str] | None,
             filters: MetadataFilter | None, limit: int) -> list[MemorySetItem]:
        return []

    def _search(self, scope: MemoryScope, query: str, limit: int,
                filters: MetadataFilter | None, options: Mapping[str, Any]
                ) -> list[MemorySetItem]:
        return []

    def _delete(self, scope: MemoryScope, ids: Sequence[str] | None) -> list[str]:
        return []

    def _erase_key(self, job_id: str, partition_key: str) -> int:
        return 0


def counting_memory(job_id, config, mailbox_check, *, resources) -> CountingMemory:
    """``agents.long-term-memory.factory`` of the job."""
    return CountingMemory(job_id, mailbox_check)


def nap(n, pause_s):
    time.sleep(pause_s)
    return n


class ForgetfulAgent(Agent):
    """Never writes long-term memory."""

    @action(InputEvent)
    async def handle(event, ctx):
        n, pause_s = event.input
        ctx.send_event(OutputEvent(await ctx.durable_execute_async(nap, n, pause_s)))


class NoteTakingAgent(Agent):
    """Adds one long-term-memory item per input."""

    @action(InputEvent)
    async def handle(event, ctx):
        notes = ctx.long_term_memory.get_memory_set("notes")
        await ctx.durable_execute_async(notes.add, f"input {event.input[0]}")
        ctx.send_event(OutputEvent(event.input[0]))


AGENTS = {"forgetful": ("never writes long-term memory", ForgetfulAgent, 0),
          "note-taking": ("adds one item per input", NoteTakingAgent, 1)}


# ---------------------------------------------------------------------- entries (harness)


def entries_on_the_harness(agent_class: type[Agent], keys: int) -> tuple[int, int, float]:
    """``(peak entries, entries at the end, seconds)`` for ``keys`` keys processed once."""
    from flink_agents_ltm.runtime.harness import AgentHarness

    harness = AgentHarness(agent_class(), memory=CountingMemory,
                           config={"agents.durable-async.capacity": keys})
    started = time.perf_counter()
    for n in range(keys):
        harness.process_element((n, 0.0))
    peak = sum(harness.state_entries().values()) + len(harness.timers())
    harness.pool.complete_all()
    harness.advance(0.01)
    assert len(harness.outputs) == keys
    end = sum(harness.state_entries().values()) + len(harness.timers())
    return peak, end, time.perf_counter() - started


# ---------------------------------------------------------------------- checkpoints (Flink)


def checkpoint_bytes(agent: Agent, keys: int, scratch: str, factory: str | None) -> int:
    """Size of a checkpoint completed after all ``keys`` keys finished their work."""
    from pyflink.common import Configuration, Types, WatermarkStrategy
    from pyflink.datastream import StreamExecutionEnvironment
    from pyflink.datastream.connectors.number_seq import NumberSequenceSource

    from flink_agents_ltm.api.execution_environment import (
        AgentsExecutionEnvironment,
        AgentsOptions,
    )

    checkpoints = os.path.join(scratch, f"ckpt-{uuid.uuid4().hex[:8]}")
    conf = Configuration()
    for key, value in {
        "python.execution-mode": "thread",
        "python.pythonpath": os.pathsep.join([sysconfig.get_paths()["purelib"], str(ROOT)]),
        "python.executable": sys.executable,
        "python.client.executable": sys.executable,
        "restart-strategy.type": "none",
        "parallelism.default": "1",
        "state.backend.type": "hashmap",
        "execution.checkpointing.interval": "500 ms",
        "execution.checkpointing.dir": f"file://{checkpoints}",
    }.items():
        conf.set_string(key, value)
    env = StreamExecutionEnvironment.get_execution_environment(conf)
    agents_env = AgentsExecutionEnvironment.get_execution_environment(env=env)
    agents_env.get_config().set(AgentsOptions.ASYNC_CAPACITY, 64)
    if factory:
        agents_env.get_config().set(AgentsOptions.LONG_TERM_MEMORY_FACTORY, factory)

    def to_input(n, keys=keys):
        if n < keys:
            return (n, 0.001)
        import time
        time.sleep(0.25)
        return (-1, 0.0)  # the tail key: keeps the job running while checkpoints complete

    numbers = env.from_source(NumberSequenceSource(0, keys + TAIL - 1),
                              WatermarkStrategy.no_watermarks(), "numbers")
    stream = numbers.map(to_input, output_type=Types.TUPLE([Types.LONG(), Types.DOUBLE()]))
    out = agents_env.from_datastream(stream, key_selector=lambda r: r[0]).apply(agent)
    seen, measured = 0, None
    with out.to_datastream().execute_and_collect() as results:
        for _ in results:
            seen += 1
            if seen == keys:  # every distinct key finished: measure a later checkpoint
                measured = _size_of_a_later_checkpoint(checkpoints)
                break  # closing the results cancels the job: the rest of the tail is not needed
    assert measured is not None, f"only {seen} outputs"
    return measured


def _completed(checkpoints: str) -> list[Path]:
    return sorted((p.parent for p in Path(checkpoints).glob("*/chk-*/_metadata")),
                  key=lambda p: int(p.name.split("-")[1]))


def _size_of_a_later_checkpoint(checkpoints: str) -> int:
    before = _completed(checkpoints)
    last = int(before[-1].name.split("-")[1]) if before else 0
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        later = [p for p in _completed(checkpoints) if int(p.name.split("-")[1]) >= last + 2]
        if later:
            return sum(f.stat().st_size for f in later[0].rglob("*") if f.is_file())
        time.sleep(0.05)
    raise TimeoutError("no checkpoint completed after the keys finished")


def _count(keys: int) -> str:
    return f"{keys // 1000}k" if keys >= 1000 and keys % 1000 == 0 else str(keys)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--keys", type=int, default=100_000)
    parser.add_argument("--baseline-keys", type=int, default=1_000)
    parser.add_argument("--agents", nargs="+", choices=list(AGENTS), default=list(AGENTS))
    args = parser.parse_args()
    if not 0 < args.baseline_keys < args.keys:
        parser.error("--baseline-keys must be positive and fewer than --keys")
    scratch = tempfile.mkdtemp(prefix="flink-agents-ltm-bench-")
    atexit.register(shutil.rmtree, scratch, ignore_errors=True)
    os.environ.setdefault("JVM_ARGS", f"-Djava.io.tmpdir={scratch}")
    os.environ.setdefault("FLINK_LOG_DIR", scratch)

    print(f"{args.keys} distinct keys, each processed once by an action that parks on a "
          "durable call")
    print(f"{'agent':<32} {'peak entries':>13} {'entries left':>13} {'per finished key':>17} "
          f"{'ckpt bytes ' + _count(args.baseline_keys) + ' keys':>18} "
          f"{'ckpt bytes ' + _count(args.keys) + ' keys':>19} {'bytes per key':>14}")
    for name, agent_class, _target in (AGENTS[agent] for agent in args.agents):
        peak, end, _ = entries_on_the_harness(agent_class, args.keys)
        factory = None if agent_class is ForgetfulAgent else "bench.state_per_key:counting_memory"
        small = checkpoint_bytes(agent_class(), args.baseline_keys, scratch, factory)
        large = checkpoint_bytes(agent_class(), args.keys, scratch, factory)
        per_key = (large - small) / (args.keys - args.baseline_keys)
        print(f"{name:<32} {peak:>13} {end:>13} {end / args.keys:>17.2f} {small:>18} "
              f"{large:>19} {per_key:>14.1f}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

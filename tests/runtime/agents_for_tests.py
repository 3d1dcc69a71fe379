"""Agents and durable functions the cluster tests run.

They live in a module (not in the tests) because the job pickles them by
reference: the embedded interpreter imports this module by the same name.
"""

import dataclasses
import glob
import os
import random
import threading
import time

from flink_agents_ltm.api.agent import Agent, action
from flink_agents_ltm.api.events import Event, InputEvent, MemoryUpdateEvent, OutputEvent
from flink_agents_ltm.api.resources import ResourceDescriptor, embedding_model_setup
from flink_agents_ltm.integrations.mem0.hashing_embedder import HashingEmbedding
from flink_agents_ltm.integrations.mem0.long_term_memory import Mem0LongTermMemory

IN_MEMORY_QDRANT = {"provider": "qdrant",
                    "config": {"collection_name": "race", "path": ":memory:"}}


# ------------------------------------- worker threads and the operator share the memory

def write_then_read(memory_set, key, n):
    """On a worker thread, long after the mailbox moved on to other keys."""
    time.sleep(random.uniform(0, 0.03))
    memory_set.add(f"note {n} of {key}")
    time.sleep(random.uniform(0, 0.03))
    return sorted(item.value for item in memory_set.get())


class NotesAgent(Agent):
    @embedding_model_setup
    def hashing():
        return ResourceDescriptor(HashingEmbedding)

    @action(InputEvent)
    async def take_note(event, ctx):
        key, n = event.input
        notes = ctx.long_term_memory.get_memory_set("notes")
        seen = await ctx.durable_execute_async(write_then_read, notes, key, n)
        ctx.send_event(OutputEvent(("read", key, n, seen)))

    @action(MemoryUpdateEvent)
    def observe(event, ctx):
        # runs suppressed: its own read raises no further memory event
        ctx.long_term_memory.get_memory_set("notes").get()
        ctx.send_event(OutputEvent(("observed", ctx.key, event.observation.key,
                                    event.observation.op.value)))


def pause():
    time.sleep(random.uniform(0, 0.03))


class LateNotesAgent(NotesAgent):
    """Obtains its memory set only after an await, when the operator has switched the
    long-term memory to other keys in the meantime."""

    @action(InputEvent)
    async def take_note(event, ctx):
        key, n = event.input
        await ctx.durable_execute_async(pause)
        notes = ctx.long_term_memory.get_memory_set("notes")
        notes.add(f"note {n} of {key}")
        ctx.send_event(OutputEvent(("read", key, n, sorted(i.value for i in notes.get()))))


class SharedCurrentKeyMemory(Mem0LongTermMemory):
    """The bug: item operations read the operator's current key (a worker thread's
    item lands on whatever key the operator runs meanwhile)."""

    def _scope(self, memory_set, operation):
        scope = super()._scope(memory_set, operation)
        return dataclasses.replace(scope, partition_key=self._context[0])


def shared_current_key_memory(job_id, config, mailbox_check, *, resources):
    real = Mem0LongTermMemory.from_config(job_id, config, mailbox_check, resources=resources)
    real.__class__ = SharedCurrentKeyMemory
    return real


# ----------------------------------------------------------------- exactly-once

def log_call(log_dir, key, n):
    with open(os.path.join(log_dir, "calls.log"), "a") as log:
        log.write(f"{key} {n}\n")
    time.sleep(0.005)
    return n


def completed_checkpoints(checkpoint_dir):
    ids = [int(p.split("chk-")[1].split(os.sep)[0])
           for p in glob.glob(os.path.join(checkpoint_dir, "*", "chk-*", "_metadata"))]
    return max(ids, default=0)


def wait_for_two_more_checkpoints(checkpoint_dir):
    """Returns once a checkpoint started after this call has completed."""
    start = completed_checkpoints(checkpoint_dir)
    deadline = time.monotonic() + 30
    while completed_checkpoints(checkpoint_dir) < start + 2:
        if time.monotonic() > deadline:
            raise TimeoutError("no checkpoint completed within 30 s")
        time.sleep(0.02)
    return completed_checkpoints(checkpoint_dir)


async def fail_once_after_two_checkpoints(ctx, work_dir):
    """The injected failure: the first time only (a marker file survives the restart),
    after two more checkpoints completed, so that recovery restores a checkpoint taken
    while this action was in flight."""
    marker = os.path.join(work_dir, "failed-once")
    if os.path.exists(marker):
        return
    await ctx.durable_execute_async(wait_for_two_more_checkpoints,
                                    os.path.join(work_dir, "checkpoints"))
    open(marker, "w").close()
    raise RuntimeError("injected failure after a completed checkpoint")


class CountingAgent(Agent):
    """Counts inputs per key in short-term memory; fails once, after the durable call
    of the trigger input was recorded and a later checkpoint completed. An input is
    ``(key, n, work_dir, is_trigger)``."""

    @action(InputEvent)
    async def count(event, ctx):
        key, n, work_dir, is_trigger = event.input
        count = (ctx.short_term_memory.get("count") or 0) + 1
        ctx.short_term_memory.set("count", count)
        await ctx.durable_execute_async(log_call, work_dir, key, n)
        if is_trigger:
            await fail_once_after_two_checkpoints(ctx, work_dir)
        ctx.send_event(OutputEvent((key, n, count)))


def remember_and_log(events, log_dir, key, n):
    """One long-term memory row per input, and a line in ``calls.log`` per run of the call."""
    [item_id] = events.add(f"{key} event {n}")
    log_call(log_dir, key, n)
    return item_id


class RememberingAgent(Agent):
    """Like :class:`CountingAgent`, and each input adds one item to its key's long-term
    memory in a durable call; outputs ``(key, n, count, item_id)``."""

    @embedding_model_setup
    def hashing():
        return ResourceDescriptor(HashingEmbedding)

    @action(InputEvent)
    async def count(event, ctx):
        key, n, work_dir, is_trigger = event.input
        count = (ctx.short_term_memory.get("count") or 0) + 1
        ctx.short_term_memory.set("count", count)
        events = ctx.long_term_memory.get_memory_set("events")
        item_id = await ctx.durable_execute_async(remember_and_log, events, work_dir, key, n)
        if is_trigger:
            await fail_once_after_two_checkpoints(ctx, work_dir)
        ctx.send_event(OutputEvent((key, n, count, item_id)))


# ----------------------------------------------------------------- order, capacity, drain

_running = 0
_running_lock = threading.Lock()


def measured_sleep(seconds):
    """Sleeps; returns how many calls were running when it started (itself included)."""
    global _running
    with _running_lock:
        _running += 1
        running = _running
    time.sleep(seconds)
    with _running_lock:
        _running -= 1
    return running


class Note(Event):
    def __init__(self, n):
        self.n = n


class OrderAgent(Agent):
    @action(InputEvent)
    async def step(event, ctx):
        key, n = event.input
        previous = ctx.short_term_memory.get("last", -1)
        ctx.short_term_memory.set("last", n)
        ctx.sensory_memory.set("input.n", n)
        running = await ctx.durable_execute_async(measured_sleep, random.uniform(0.01, 0.06))
        ctx.send_event(Note(n))
        ctx.send_event(OutputEvent(("step", key, n, previous, running)))

    @action(Note)
    def check_sensory(event, ctx):
        # sensory memory of this input's run, short-term memory of the key
        ctx.send_event(OutputEvent(("sensory", ctx.key, event.n,
                                    ctx.sensory_memory.get("input.n"),
                                    ctx.short_term_memory.get("last"))))


class SleepyAgent(Agent):
    """Input ``(key, n, seconds)``: one durable call that sleeps, then an output."""

    @action(InputEvent)
    async def nap(event, ctx):
        key, n, seconds = event.input
        await ctx.durable_execute_async(time.sleep, seconds)
        ctx.send_event(OutputEvent((key, n)))


# ----------------------------------------------------------------- bad input

def sleep_then(seconds, value):
    time.sleep(seconds)
    return value


def broken_call():
    raise ConnectionError("the backend is down")


class Unheard(Event):
    pass


class BadInputAgent(Agent):
    """Input ``(key, n, what)``; ``what`` picks a misbehaviour for that input."""

    @action(InputEvent)
    async def handle(event, ctx):
        key, n, what = event.input
        count = (ctx.short_term_memory.get("count") or 0) + 1
        ctx.short_term_memory.set("count", count)
        if what == "raise":
            raise ValueError("this input is malformed")
        if what == "unknown-event":
            ctx.send_event(Unheard())
        if what == "missing-resource":
            ctx.get_resource("no_such_model")
        if what == "unserializable":
            await ctx.durable_execute_async(threading.Lock)
        if what == "failing-call":
            await ctx.durable_execute_async(broken_call)
        if what == "mailbox-misuse":
            await ctx.durable_execute_async(lambda: ctx.short_term_memory.get("count"))
        if what == "timeout":
            await ctx.durable_execute_async(sleep_then, 2.0, None)
        await ctx.durable_execute_async(sleep_then, 0.01, None)
        ctx.send_event(OutputEvent((key, n, count)))


class SyncMisuseAgent(Agent):
    """A plain ``def`` action that asks for an awaitable it cannot await."""

    @action(InputEvent)
    def handle(event, ctx):
        ctx.durable_execute_async(sleep_then, 0.0, None)
        ctx.send_event(OutputEvent(event.input))

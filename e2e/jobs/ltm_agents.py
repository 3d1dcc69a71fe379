"""The agent the e2e job runs (a module of its own: workers import it by name; the job
ships this folder with `flink run -pyfs`)."""

import json
import os
import time

from flink_agents_ltm.api.agent import Agent, action
from flink_agents_ltm.api.events import InputEvent, OutputEvent
from flink_agents_ltm.api.resources import ResourceDescriptor, embedding_model_setup
from flink_agents_ltm.integrations.mem0.hashing_embedder import HashingEmbedding


def meet_the_other_workers(folder, workers, timeout_s=15.0):
    """Say this Python worker holds the store open, then wait until ``workers`` did so
    (or the job is cancelled): every worker holds its store at the same time."""
    open(os.path.join(folder, f"worker-{os.getpid()}"), "w").close()
    deadline = time.monotonic() + timeout_s
    while len(os.listdir(folder)) < workers and time.monotonic() < deadline:
        time.sleep(0.1)


def write_then_read(notes, key, n, hold_s, rendezvous=None):
    """On a worker thread of the operator's pool, bound to the key that obtained the set."""
    if rendezvous:
        meet_the_other_workers(rendezvous, workers=2)
    [note_id] = notes.add(f"{key} note {n}")
    time.sleep(hold_s)  # keeps calls of several keys in flight at once
    return note_id, sorted(item.value for item in notes.get(limit=1000))


class NoteTakingAgent(Agent):
    """Remembers each input in its key's long-term memory and reports what the key holds."""

    @action(InputEvent)
    async def take_note(event, ctx):
        key, n, hold_s, *rendezvous = json.loads(event.input)
        notes = ctx.long_term_memory.get_memory_set("notes")
        note_id, seen = await ctx.durable_execute_async(write_then_read, notes, key, n, hold_s,
                                                        *rendezvous)
        ctx.send_event(OutputEvent(json.dumps({
            "key": key, "n": n, "id": note_id, "seen": seen, "pid": os.getpid()})))


def log_call(log_dir, name, key, n):
    """A line ``name key n pid time`` in ``<log_dir>/calls.log`` (0600), written when the
    call starts: the failover test counts how often each input ran its calls, and which
    process started them when."""
    fd = os.open(os.path.join(log_dir, "calls.log"), os.O_WRONLY | os.O_APPEND | os.O_CREAT,
                 0o600)
    with os.fdopen(fd, "a") as log:
        log.write(f"{name} {key} {n} {os.getpid()} {time.time():.6f}\n")


def charge(log_dir, key, n):
    """On a worker thread: the side effect that must happen once per input (an e-mail, a
    payment): one ``charge`` line in ``calls.log``, the external counter of the test."""
    log_call(log_dir, "charge", key, n)
    return n


def charged(log_dir, key, n):
    """:func:`charge`'s reconciler: after a crash mid-call, did the charge of (key, n)
    happen? Its result if so, else call again."""
    from flink_agents_ltm.api.runner_context import CALL_AGAIN

    try:
        with open(os.path.join(log_dir, "calls.log")) as log:
            done = any(line.startswith(f"charge {key} {n} ") for line in log)
    except FileNotFoundError:
        done = False
    return n if done else CALL_AGAIN


def remember(events, key, n, log_dir=None):
    """On a worker thread: one row in the store per input, naming the process that wrote it
    and when (the failover test checks that no worker of a killed TaskManager wrote later);
    with ``log_dir``, each run is logged (:func:`log_call`)."""
    if log_dir:
        log_call(log_dir, "remember", key, n)
    [item_id] = events.add(f"{key} event {n}", {"pid": os.getpid(), "written_at": time.time()})
    return item_id


def hold(log_dir, key, n, seconds):
    """On a worker thread: keeps the action going after its memory write, so that a
    checkpoint finds it mid-action with the write recorded; each run logged. A hold that
    ran twice while the add ran once: the restored checkpoint held the input mid-action.
    Run again (a replay after a failure), it returns at once: the input then ends soon
    after the recovery, before its key's next input arrives."""
    again = f"hold {key} {n} "
    try:
        with open(os.path.join(log_dir, "calls.log")) as log:
            replayed = any(line.startswith(again) for line in log)
    except FileNotFoundError:
        replayed = False
    log_call(log_dir, "hold", key, n)
    if not replayed:
        time.sleep(seconds)


class CountingAgent(Agent):
    """Counts its key's inputs in short-term memory, charges each once (:func:`charge`, with
    its reconciler) and remembers each in long-term memory; one output per input: ``{"key",
    "n", "count", "id", "pid"}``. An input is ``(key, n, hold_s, log_dir)``: with
    ``log_dir``, every input is charged there; with ``hold_s``, the action then holds that
    long (:func:`hold`), and its calls are logged too."""

    @embedding_model_setup
    def hashing():
        return ResourceDescriptor(HashingEmbedding)

    @action(InputEvent)
    async def count(event, ctx):
        key, n, hold_s, log_dir = event.input
        count = (ctx.short_term_memory.get("count") or 0) + 1
        ctx.short_term_memory.set("count", count)
        if log_dir:
            await ctx.durable_execute_async(charge, log_dir, key, n,
                                            reconciler=lambda: charged(log_dir, key, n))
        events = ctx.long_term_memory.get_memory_set("events")
        item_id = await ctx.durable_execute_async(remember, events, key, n,
                                                  log_dir if hold_s else None)
        if hold_s:
            await ctx.durable_execute_async(hold, log_dir, key, n, hold_s)
        ctx.send_event(OutputEvent(json.dumps({"key": key, "n": n, "count": count,
                                               "id": item_id, "pid": os.getpid()})))


def charge_and_hold(log_dir, key, n, hold_s):
    """:func:`charge`, then the call stays in flight ``hold_s`` (a slow payment API): a
    savepoint taken meanwhile finds calls mid-way."""
    charge(log_dir, key, n)
    time.sleep(hold_s)
    return n


class LifecycleAgent(Agent):
    """The agent of the life-of-a-job test: counts its key's inputs in short-term memory,
    charges each once in a slow durable call (:func:`charge_and_hold`, reconciled by
    :func:`charged`) and remembers each in long-term memory. An input is ``(key, n, hold_s,
    log_dir)``; one output per input: ``{"key", "n", "count", "id", "pid"}``."""

    @embedding_model_setup
    def hashing():
        return ResourceDescriptor(HashingEmbedding)

    @action(InputEvent)
    async def count(event, ctx):
        key, n, hold_s, log_dir = event.input
        count = (ctx.short_term_memory.get("count") or 0) + 1
        ctx.short_term_memory.set("count", count)
        await ctx.durable_execute_async(charge_and_hold, log_dir, key, n, hold_s,
                                        reconciler=lambda: charged(log_dir, key, n))
        events = ctx.long_term_memory.get_memory_set("events")
        item_id = await ctx.durable_execute_async(remember, events, key, n)
        ctx.send_event(OutputEvent(json.dumps({"key": key, "n": n, "count": count,
                                               "id": item_id, "pid": os.getpid()})))

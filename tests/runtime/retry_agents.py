"""A flaky agent for ``agents.error-handling: retry``, on the harness and on the mini-cluster.

Input ``(key, text, failures[, counts_dir])``: the action counts the input in short-term
memory, makes a durable call ``booked`` (a side effect, counted), adds ``"<text> body"`` to
the key's set ``notes`` in its body, then makes the durable call ``flaky``, which adds
``"<text> call"`` and raises on its first ``failures`` runs for that text; then it answers
``(key, text, count, sorted texts of notes)``. Runs are counted in files of ``counts_dir``
(the operator may run in another process than the test), or in memory when it is None.
"""

from __future__ import annotations

import collections
import os
from pathlib import Path

from flink_agents_ltm.api.agent import Agent, action
from flink_agents_ltm.api.events import InputEvent, OutputEvent

MEMORY_COUNTS: collections.Counter[str] = collections.Counter()


class FlakyCallError(RuntimeError):
    pass


def count(counts_dir: str | None, name: str) -> int:
    """Count one run of ``name``; answers how many there were, this one included."""
    if counts_dir is None:
        MEMORY_COUNTS[name] += 1
        return MEMORY_COUNTS[name]
    path = Path(counts_dir) / name
    with open(path, "a") as file:
        file.write("x")
        file.flush()
        os.fsync(file.fileno())
    return path.stat().st_size


def runs(counts_dir: str | None, name: str) -> int:
    if counts_dir is None:
        return MEMORY_COUNTS[name]
    path = Path(counts_dir) / name
    return path.stat().st_size if path.exists() else 0


def booked(counts_dir: str | None, text: str) -> int:
    return count(counts_dir, f"{text}.booked")


def flaky(counts_dir: str | None, text: str, failures: int, notes) -> str:
    notes.add(f"{text} call")
    attempt = count(counts_dir, f"{text}.flaky")
    if attempt <= failures:
        raise FlakyCallError(f"{text}: the service is down (run {attempt})")
    return f"{text} ok"


class FlakyAgent(Agent):
    @action(InputEvent)
    async def answer(event, ctx):
        key, text, failures, *rest = event.input
        counts_dir = rest[0] if rest else None
        ctx.short_term_memory.set("count", (ctx.short_term_memory.get("count") or 0) + 1)
        ctx.sensory_memory.set("seen", text)
        await ctx.durable_execute_async(booked, counts_dir, text)
        notes = ctx.long_term_memory.get_memory_set("notes")
        notes.add(f"{text} body")
        await ctx.durable_execute_async(flaky, counts_dir, text, failures, notes)
        ctx.send_event(OutputEvent((key, text, ctx.short_term_memory.get("count"),
                                    sorted(item.value for item in notes.get()))))

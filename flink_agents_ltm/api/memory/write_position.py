"""Where in a replayable run a long-term-memory write happens.

Why: after a failure Flink replays every input since the last checkpoint, and
the runtime re-runs each step of it whose durable calls were not recorded. Mem0
appends a new row for every ``add``, so a replayed ``add`` would duplicate what
the first attempt wrote. Instead, an item added inside an action gets an id
derived from what a replay reproduces exactly:

* the set's binding: job id, partition key, set name, observation id (the
  runtime names it after the key, the input's sequence number and the step);
* the *write position* inside the step: ``"body"`` for the action's own code,
  ``"call<k>"`` for its k-th durable call (``ctx.chat`` model and tool calls
  included), whichever thread runs it;
* the item's ordinal among the items added at that position.

A replayed step re-runs its body and the calls that were not recorded, in the
same order, so it mints the same ids and the store write (an upsert) rewrites
the same rows. A recorded call is not re-run, so its writes are not repeated.

The runtime sets the position with :func:`write_position` around each durable
call, on the thread that runs it (``contextvars`` travel with the call).
Outside the runtime (no observation id on the set) items get random ids, as
Mem0 gives them.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

__all__ = ["BODY", "call_position", "current_write_position", "write_position"]

BODY = "body"
_position: ContextVar[str] = ContextVar("flink_agents_ltm_write_position", default=BODY)


def call_position(index: int) -> str:
    """The position of a step's ``index``-th durable call (0-based)."""
    return f"call{index}"


def current_write_position() -> str:
    """The position of the code running now: ``"body"`` unless inside a durable call."""
    return _position.get()


@contextmanager
def write_position(position: str) -> Iterator[None]:
    """Run the block at ``position`` (the runtime wraps each durable call in it)."""
    token = _position.set(position)
    try:
        yield
    finally:
        _position.reset(token)

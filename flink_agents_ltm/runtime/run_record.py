"""What the engine keeps in Flink state about a key with work: small, pickled values.

A key *has work* from the moment one of its inputs cannot finish within the
Flink callback that received it (its action parks on a durable call) until its
last pending input's run ends. Only then does it hold these records; a key
whose work ended holds none of them (see
:mod:`~flink_agents_ltm.runtime.keyed_runs` for the input-counter rule).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from flink_agents_ltm.api.events import Event


@dataclass
class BusyKey:
    """A key with work: its first pending input, and its drain timers.

    ``drain_rounds``: event-time timers ``DRAIN_BASE + 0 .. drain_rounds - 1`` are
    registered for the key; they fire only with the final watermark of a bounded
    input and are deleted when the key's work ends. ``keeps_counter``: an action of
    the key stored a long-term-memory item, so its input counter stays in state.
    """

    head: int
    drain_rounds: int
    keeps_counter: bool


@dataclass
class RecordedCall:
    name: str
    result: Any


@dataclass
class RunRecord:
    """The progress of one input's run (written when a step completes, and when a
    durable result arrives if action state is retained).

    Nothing of a run leaves the run before it ends: outputs of completed steps and
    their short-term-memory writes wait here and are emitted / applied in the mailbox
    turn the run completes, so a run that fails (``ignore`` mode) leaves no trace in
    Flink state or downstream. Sensory memory lives here for the run's length.
    """

    seq: int
    steps: list[list[Event]] = field(default_factory=list)  # events each done step sent
    calls: list[RecordedCall] = field(default_factory=list)  # durable results, current step
    outputs: list[Any] = field(default_factory=list)
    sensory: dict[str, bytes] = field(default_factory=dict)
    short_term: dict[str, bytes | None] = field(default_factory=dict)  # None: removed

    @property
    def has_progress(self) -> bool:
        return bool(self.steps or self.calls)

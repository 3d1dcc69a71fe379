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
    the key stored a long-term-memory item, so its input counter stays in state. It is
    set when a step that stored items ends and when a durable result is recorded after
    a write; a restore also reads it off the run record's calls
    (:attr:`RecordedCall.stored_items`), which a replay does not run again.
    """

    head: int
    drain_rounds: int
    keeps_counter: bool


@dataclass
class RecordedCall:
    """A durable result, and whether the step had stored long-term-memory items by the
    time it was recorded.

    A replay returns ``result`` without running the call, so the call's writes are
    not minted again in the new process: ``stored_items`` is what tells the key after
    a restore that it stored items and must keep its input counter. ``None``: recorded
    by a version that did not say; read as ``True`` (keeping a counter is always safe).
    """

    name: str
    result: Any
    stored_items: bool | None = None  # a class default: records pickled without it load

    @property
    def may_have_stored_items(self) -> bool:
        return self.stored_items is not False


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

    @property
    def calls_stored_items(self) -> bool:
        """A recorded call of the current step stored (or may have stored) items."""
        return any(call.may_have_stored_items for call in self.calls)

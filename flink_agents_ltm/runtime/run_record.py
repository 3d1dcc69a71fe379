"""What the engine keeps in Flink state about a key with work: small, versioned values.

A key *has work* from the moment one of its inputs cannot finish within the
Flink callback that received it (its action parks on a durable call) until its
last pending input's run ends. Only then does it hold these records; a key
whose work ended holds none of them (see
:mod:`~flink_agents_ltm.runtime.keyed_runs` for the input-counter rule).

**Format versions.** A record reaches Flink state (a pickled value) through
:func:`encode_busy` / :func:`encode_run` and comes back through :func:`decode_busy` /
:func:`decode_run`, the only readers of that state. The current format
(:data:`BUSY_VERSION`, :data:`RUN_VERSION`) is a tuple whose first item is the version,
the fields after it (nested records as tuples too), so that the state names no class of
this package:

* ``BusyKey`` version 2: ``(2, head, drain_rounds, keeps_counter, incarnation)``;
  version 1 (``(1, head, drain_rounds, keeps_counter)``) is read with the legacy
  incarnation (:data:`~flink_agents_ltm.runtime.incarnation.LEGACY`);
* ``RunRecord`` version 2: ``(2, seq, steps, calls, outputs, sensory, short_term,
  failures, retry_at)``, written only while the current step waits for a retry
  (``agents.error-handling: retry``); version 1 (``(1, seq, steps, calls, outputs,
  sensory, short_term)``, each call ``(name, result, stored_items)``) otherwise, so that a
  job that never retried can still be restored by a build that reads version 1 only.

Version 0 is what builds before versions wrote: the pickled dataclass itself (its
``__dict__``, read field by field, so these classes must keep their names and module).
A decoder migrates any version it knows to the current dataclass; a newer version than
it knows (state written by a newer build, restored by an older one) raises
:class:`StateFormatError` instead of being misread. A format change adds a version here,
a decoder branch that migrates the previous one, and a fixture test of the old bytes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from flink_agents_ltm.api.errors import FlinkAgentsLtmError
from flink_agents_ltm.api.events import Event
from flink_agents_ltm.runtime.incarnation import LEGACY

BUSY_VERSION = 2  # what encode_busy writes
RUN_VERSION = 2  # what encode_run writes for a record with retry state (else 1)
BUSY_VERSIONS = (0, 1, 2)  # what decode_busy reads (0: no version field)
RUN_VERSIONS = (0, 1, 2)  # what decode_run reads


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
    ``incarnation``: the submission the key's input counter counts in
    (:mod:`~flink_agents_ltm.runtime.incarnation`).
    """

    head: int
    drain_rounds: int
    keeps_counter: bool
    incarnation: str = LEGACY  # the incarnation the key's counter counts in


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
    # ``agents.error-handling: retry``: the failed attempts of the current step, and the
    # processing time (ms) its next attempt waits for (None: it does not wait)
    failures: int = 0
    retry_at: int | None = None

    @property
    def has_progress(self) -> bool:
        return bool(self.steps or self.calls or self.failures)

    @property
    def calls_stored_items(self) -> bool:
        """A recorded call of the current step stored (or may have stored) items."""
        return any(call.may_have_stored_items for call in self.calls)


class StateFormatError(FlinkAgentsLtmError, ValueError):
    """Keyed state in a format this build cannot read (written by a newer build)."""


def _refuse(record: str, state: str, found: object,
            readable: tuple[int, ...]) -> StateFormatError:
    return StateFormatError(
        f"the {record} in Flink state '{state}' has format version {found!r}, but this build "
        f"of flink_agents_ltm reads versions {', '.join(map(str, readable))} only: "
        "restore the job with the build that wrote this state, or a newer one")


def _version(value: Any, legacy: type, record: str, state: str,
             readable: tuple[int, ...]) -> int:
    if type(value) is tuple and value and type(value[0]) is int:
        if value[0] in readable and value[0] != 0:
            return value[0]
        raise _refuse(record, state, value[0], readable)
    if isinstance(value, legacy):
        return 0
    raise _refuse(record, state, f"unknown ({type(value).__name__})", readable)


def encode_busy(busy: BusyKey) -> tuple[Any, ...]:
    return (BUSY_VERSION, busy.head, busy.drain_rounds, busy.keeps_counter, busy.incarnation)


def decode_busy(value: Any) -> BusyKey:
    """A :class:`BusyKey` from Flink state of any readable version (versions 0 and 1 have
    the legacy incarnation)."""
    version = _version(value, BusyKey, "busy record (BusyKey)", "agent-busy", BUSY_VERSIONS)
    if version == 2:
        return BusyKey(value[1], value[2], value[3], value[4])
    if version == 1:
        return BusyKey(value[1], value[2], value[3])
    fields = vars(value)  # version 0: the pickled dataclass
    return BusyKey(fields["head"], fields["drain_rounds"], fields["keeps_counter"])


def encode_run(record: RunRecord) -> tuple[Any, ...]:
    fields = (record.seq, record.steps,
              [(call.name, call.result, call.stored_items) for call in record.calls],
              record.outputs, record.sensory, record.short_term)
    if record.failures or record.retry_at is not None:
        return (RUN_VERSION, *fields, record.failures, record.retry_at)
    return (1, *fields)


def decode_run(value: Any) -> RunRecord:
    """A :class:`RunRecord` from Flink state of any readable version."""
    version = _version(value, RunRecord, "run record (RunRecord)", "agent-run", RUN_VERSIONS)
    if version in (1, 2):
        seq, steps, calls, outputs, sensory, short_term = value[1:7]
        failures, retry_at = value[7:9] if version == 2 else (0, None)
        return RunRecord(seq, steps, [RecordedCall(*call) for call in calls], outputs,
                         sensory, short_term, failures, retry_at)
    fields = vars(value)  # version 0: the pickled dataclasses
    return RunRecord(
        fields["seq"], fields["steps"],
        # a call recorded before stored_items existed says None: read as "may have stored"
        [RecordedCall(c.name, c.result, vars(c).get("stored_items")) for c in fields["calls"]],
        fields["outputs"], fields["sensory"], fields["short_term"])

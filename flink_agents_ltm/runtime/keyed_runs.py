"""The keyed-run state machine: runs, steps, parking, replay, the end-of-input drain.

Pure Python: Flink reaches it only through the protocols of
:mod:`~flink_agents_ltm.runtime.protocols` (keyed state and timers of the
current key, a clock, a worker pool). The Flink adapter
(:mod:`~flink_agents_ltm.runtime.agent_operator`) and the test harness
(:mod:`~flink_agents_ltm.runtime.harness`) drive it the same way: they set the
current key, then call :meth:`KeyedRunEngine.process_input` or
:meth:`KeyedRunEngine.on_timer` on the mailbox thread and emit what it returns.

**Runs and steps.** One input of a key is processed by a *run*: events are
queued first in, first out; each (event, listening action) pair is a *step*.
An ``async`` action that awaits a durable call *parks*: the callback returns and
the mailbox goes on with other keys. A processing-time timer of the key polls
the call and resumes the action (Flink has set the key again by then). Later
inputs of a key with work wait in keyed state (``pending``, one entry per
input, by sequence number), in order.

**Nothing of a run leaves it before it ends.** Outputs, sensory memory and the
short-term-memory writes of completed steps are kept in the run's record and
emitted / applied in the mailbox turn the run completes. A failing action in
``ignore`` mode therefore drops the input's whole run, earlier steps included;
only long-term memory (Mem0, no transactions) keeps what was written.

**Retry** (``agents.error-handling: retry``). A failed step with retries left is
dropped as an attempt (its pending memory writes, sent events and outputs, its memory
observations) and put back at the head of the run's work; the run *waits*: its record
counts the failures and holds the processing time of the next attempt (``retry_at``), and
a processing-time timer of the key at that time brings it back, like a poll timer; the
mailbox goes on with other keys, and a restore finds the key waiting. The retry runs under
the same observation id and keeps the step's recorded durable results (and its
action-state store rows), so calls that returned are not made again and long-term memory
writes land on the same ids. In a drain round (timers no longer fire) the key waits for its
retry time as it waits for its call.

**Exactly-once.** The run's record (steps done with the events they sent,
durable results of the current step when action state is retained) is written
to keyed state before the callback returns, so a checkpoint sees whole steps.
After a restore the run of the first pending input is replayed: done steps are
skipped, recorded durable calls answer a call of the same name at the same
index without running, and any other call fails the action with
:class:`~flink_agents_ltm.runtime.durable.NonDeterministicReplayError`.

**End of a bounded input.** Processing-time timers stop firing; the final
watermark fires event-time timers. A key with work registers its *drain rounds*
ahead of time, before the final watermark: event-time timers ``DRAIN_BASE + r``
for ``r < 4 x`` (its pending inputs), registered as inputs queue up. The final
watermark fires them round by round across all keys; in its round a key waits
for the call its action awaits (the other keys' calls run meanwhile), goes on
until its action parks on the next one, and returns: a round costs about one
call, every key progresses in each round, and calls of all keys run side by
side. On its last round a key finishes its work in that callback, waiting for
its own calls one after another. The drain never depends on a timer registered *during* the
drain: PyFlink's process mode registers those through its mailbox only after
the final-watermark loop, when they no longer fire (an input parked then would be lost).

**State of a finished key.** When a key's work ends, its pending inputs, run
record and busy record are removed and its drain and poll timers deleted. Its
input counter (``next_seq``) is removed too, unless one of its actions stored a
long-term-memory item: the counter is part of every replay-stable item id
(observation id ``key@<incarnation>#seq#step``), so such a key keeps it for good (one
LONG), and beside it, once, the incarnation it counts in (one STRING,
:mod:`~flink_agents_ltm.runtime.incarnation`): a later submission of the job restored
from that state goes on in the key's line, one started without state begins a new one.
Whether a key stored items must survive a restore: the end of a step counts only
the items minted in this process, and a replayed recorded call mints none. So
each recorded durable result says whether its step had stored items by then
(:class:`~flink_agents_ltm.runtime.run_record.RecordedCall`), a key sets its
busy record's ``keeps_counter`` as soon as such a result is recorded, and a
restore reads it off the run record too; without that, the key's next input
would run at place 0 again and overwrite the replayed input's rows.
A key whose input finishes within the callback that received it writes no
engine state at all.
"""

from __future__ import annotations

import dataclasses
import logging
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from flink_agents_ltm.api.agent import Action
from flink_agents_ltm.api.errors import AgentActionError
from flink_agents_ltm.api.events import (
    Event,
    InputEvent,
    MemoryAccessEvent,
    MemoryEvent,
    memory_event_for,
)
from flink_agents_ltm.api.options import AgentsConfiguration, AgentsOptions
from flink_agents_ltm.api.resources import ResourceType
from flink_agents_ltm.api.submission import JobSubmission
from flink_agents_ltm.runtime.action_driver import (
    ActionDriver,
    ActionExecution,
    Progress,
    StepFailed,
)
from flink_agents_ltm.runtime.action_state.journal import (
    ActionJournal,
    StepJournal,
    input_fingerprint,
)
from flink_agents_ltm.runtime.action_state.store import RunTag
from flink_agents_ltm.runtime.durable import recordable
from flink_agents_ltm.runtime.event_log import NO_EVENT_LOG, EventLog
from flink_agents_ltm.runtime.incarnation import LEGACY, incarnation_of
from flink_agents_ltm.runtime.incarnation import observation_id as observation_id_of
from flink_agents_ltm.runtime.keyed_memory import KeyedMemoryStore
from flink_agents_ltm.runtime.lazy_memory import LazyActionMemory
from flink_agents_ltm.runtime.memory_access import MemoryEventKinds, access_events, observe
from flink_agents_ltm.runtime.metric_groups import ActionMetrics, RuntimeMetricGroup
from flink_agents_ltm.runtime.operator_metrics import OperatorStats
from flink_agents_ltm.runtime.protocols import (
    CallHandle,
    Clock,
    KeyedStates,
    MapState,
    Timers,
    WorkerPool,
)
from flink_agents_ltm.runtime.run_record import BusyKey, RunRecord
from flink_agents_ltm.runtime.runner_context_impl import RunnerContextImpl
from flink_agents_ltm.runtime.step import Step

log = logging.getLogger(__name__)

# Event-time timers at or above this fire only with the final watermark (Long.MAX_VALUE).
DRAIN_BASE = 2**63 - 1 - 2**40
DRAIN_ROUNDS_PER_INPUT = 4  # drain rounds per pending input: one per durable call, mostly


@dataclass(frozen=True)
class RetryPolicy:
    """``agents.error-handling: retry``: how often a failed step runs again, and after
    which wait (exponential backoff, capped)."""

    max_retries: int
    initial_ms: int
    multiplier: float
    max_ms: int

    def delay_ms(self, failures: int) -> int:
        """The wait before the attempt that follows the ``failures``-th failure (1-based)."""
        return int(min(self.initial_ms * self.multiplier ** (failures - 1), self.max_ms))

    @classmethod
    def of(cls, config: AgentsConfiguration) -> RetryPolicy | None:
        if config.get(AgentsOptions.ERROR_HANDLING) != "retry":
            return None
        return cls(max_retries=config.get(AgentsOptions.RETRY_MAX_RETRIES),
                   initial_ms=config.get(AgentsOptions.RETRY_INITIAL_BACKOFF_MS),
                   multiplier=config.get(AgentsOptions.RETRY_BACKOFF_MULTIPLIER),
                   max_ms=config.get(AgentsOptions.RETRY_MAX_BACKOFF_MS))


@dataclass(frozen=True)
class EngineSettings:
    agent_name: str
    timeout_s: float
    poll_ms: int
    fail_job: bool  # what a failure does once no retry is left: fail the job, or drop the run
    retain: bool
    incarnation: str  # of this submission: the line of runs of a key without state
    retry: RetryPolicy | None = None  # agents.error-handling: retry
    # short-term memory has a state TTL: its entries expire one by one, an object node
    # before its children maybe, so removing a subtree reads the whole map
    short_term_ttl: bool = False
    memory_events: MemoryEventKinds | None = None  # agents.memory-events.*: None, all off

    @classmethod
    def of(cls, agent_name: str, config: AgentsConfiguration,
           submission: JobSubmission) -> EngineSettings:
        """The settings the agents' configuration and the job's submission give: the
        operator and the harness both build theirs here, so that they run an agent alike."""
        retry = RetryPolicy.of(config)
        final = config.get(AgentsOptions.RETRY_THEN if retry is not None
                           else AgentsOptions.ERROR_HANDLING)
        return cls(agent_name=agent_name,
                   timeout_s=config.get(AgentsOptions.ASYNC_TIMEOUT_MS) / 1000,
                   poll_ms=config.get(AgentsOptions.ASYNC_POLL_INTERVAL_MS),
                   fail_job=final == "fail",
                   retain=config.get(AgentsOptions.RETAIN_ACTION_STATE),
                   incarnation=incarnation_of(submission.name),
                   retry=retry, memory_events=MemoryEventKinds.of(config),
                   short_term_ttl=config.get(AgentsOptions.SHORT_TERM_MEMORY_TTL_MS) is not None)


@dataclass
class _Run:
    """One input's run (operator-local; its record is what reaches Flink state)."""

    seq: int
    value: Any
    record: RunRecord
    events: deque[Event] = field(default_factory=deque)
    work: deque[tuple[Event, Action]] = field(default_factory=deque)
    step_index: int = 0
    execution: ActionExecution | None = None
    stored: bool = False  # its record is in keyed state
    journal_tag: RunTag | None = None  # the action-state store's run, found on first use
    retry_journal: StepJournal | None = None  # the failed attempt's, for the step's retry


@dataclass
class _KeyWork:
    """A key whose input is being run (operator-local)."""

    key: Any
    run: _Run
    next_seq: int
    keeps_counter: bool
    incarnation: str  # the line of runs its counter counts in
    incarnation_kept: bool  # ... is in state beside a counter kept for good (or legacy)
    stored: bool = False  # the key's work is in keyed state (busy, pending, next_seq)
    drain_rounds: int = 0
    waiting: int = 0  # inputs pending behind the run
    poll_at: int | None = None  # the processing-time timer registered to poll its call
    retry_timer: int | None = None  # the processing-time timer registered for its retry
    retry_due: float | None = None  # when that is, on the clock (set in this process only)
    record_dirty: bool = False
    busy_dirty: bool = False


# Events about memory: an action they trigger is suppressed (its memory operations raise no
# events of their own, so listeners cannot cascade). A tuple made once: asked on every step.
_MEMORY_EVENTS = (MemoryEvent, MemoryAccessEvent)


class _SensoryLayer:
    """Sensory memory of a run: kept in its record, gone with it."""

    def __init__(self, record: RunRecord):
        self._values = record.sensory

    def get(self, path: str) -> bytes | None:
        return self._values.get(path)

    def items(self) -> list[tuple[str, bytes]]:
        return list(self._values.items())

    def put(self, path: str, payload: bytes) -> None:
        self._values[path] = payload

    def remove(self, path: str) -> None:
        self._values.pop(path, None)


class _ShortTermLayer:
    """The key's short-term memory seen through the writes of the run's completed steps
    (applied to keyed state when the run completes)."""

    def __init__(self, state: MapState[str, bytes], record: RunRecord):
        self._state = state
        self._overlay = record.short_term

    def get(self, path: str) -> bytes | None:
        overlay = self._overlay
        return overlay[path] if path in overlay else self._state.get(path)

    def items(self) -> list[tuple[str, bytes]]:
        merged = dict(self._state.items())
        for path, payload in self._overlay.items():
            if payload is None:
                merged.pop(path, None)
            else:
                merged[path] = payload
        return list(merged.items())

    def put(self, path: str, payload: bytes) -> None:
        self._overlay[path] = payload

    def remove(self, path: str) -> None:
        self._overlay[path] = None


def _one_line(text: str, limit: int | None = None) -> str:
    line = " ".join(str(text).split())
    return line if limit is None or len(line) <= limit else line[:limit - 3] + "..."


class KeyedRunEngine:
    def __init__(self, *, actions: list[Action], states: KeyedStates, pool: WorkerPool[Any],
                 clock: Clock, settings: EngineSettings, memory: LazyActionMemory,
                 resources: Callable[[str, ResourceType | None], Any],
                 mailbox_check: Callable[[], None], stats: OperatorStats,
                 journal: ActionJournal | None = None, event_log: EventLog = NO_EVENT_LOG,
                 metrics: RuntimeMetricGroup | None = None):
        self._actions = actions
        self._states = states
        self._pool = pool
        self._clock = clock
        self._settings = settings
        self._memory = memory
        self._resources = resources
        self._check = mailbox_check
        self._stats = stats
        self._journal = journal  # the action-state store, None when off
        self._events = event_log
        self._metrics = metrics if metrics is not None else RuntimeMetricGroup()
        self._action_metrics_of: dict[str, ActionMetrics] = {}
        self._works: dict[Any, _KeyWork] = {}
        self._current: _KeyWork | None = None
        self._finished_seen = -1  # the pool's finished-call counter at resume_ready's last look
        self._next_retry_due: float | None = None  # the earliest retry_due of a waiting key
        self._driver = ActionDriver(pool, clock, stats, settings.timeout_s, self._enter,
                                    self._on_record)

    # ------------------------------------------------------------------ host callbacks

    def process_input(self, key: Any, value: Any, timers: Timers) -> list[Any]:
        """An input of the current key ``key``; answers the outputs to emit."""
        self._stats.inputs_received += 1
        work = self._works.get(key)
        if work is not None:  # parked: the input waits behind the run, in order
            self._enqueue(work, value, timers)
            return []
        # A busy record is only ever written beside the input counter (_store), so a key
        # without a counter has no work in state: one state read for most inputs.
        seq = self._states.next_seq.value()
        busy = None if seq is None else self._states.busy.value()
        if busy is not None:  # work restored from a checkpoint, not resumed yet
            work = self._restore(key, busy, seq)
            self._enqueue(work, value, timers)
        else:
            if seq is None:  # a new line of runs, in this submission
                incarnation = self._settings.incarnation
            else:  # a counter kept for good goes on in its own line (absent: legacy)
                incarnation = self._states.incarnation.value() or LEGACY
            work = _KeyWork(key, self._new_run(key, seq or 0, value, RunRecord(seq or 0)),
                            next_seq=(seq or 0) + 1, keeps_counter=seq is not None,
                            incarnation=incarnation, incarnation_kept=seq is not None)
            self._works[key] = work
        outputs: list[Any] = []
        self._advance_key(work, timers, outputs, None)
        return outputs

    def on_timer(self, key: Any, timestamp: int, event_time: bool,
                 timers: Timers) -> list[Any]:
        """A timer of the current key ``key`` fired; answers the outputs to emit."""
        drain_round = timestamp - DRAIN_BASE if event_time and timestamp >= DRAIN_BASE else None
        work = self._works.get(key)
        if work is None:
            busy = self._states.busy.value()
            if busy is None:  # the key's work already ended
                return []
            work = self._restore(key, busy)
        elif not event_time:
            if timestamp == work.poll_at:
                work.poll_at = None
            if timestamp == work.retry_timer:
                work.retry_timer = None
        if drain_round is not None:  # the input ended: progress by at least one call
            self._wait_for_own_call(work, timers)
        outputs: list[Any] = []
        self._advance_key(work, timers, outputs, drain_round)
        return outputs

    def resume_ready(self, enter_key: Callable[[Any], Timers]) -> list[Any]:
        """End of a host callback, whatever its key: advance every parked key whose
        durable call is done, each under its own key (``enter_key(key)`` makes ``key`` the
        current key of keyed state and timers and answers its timers; the host restores its
        callback's own key afterwards). Answers the outputs to emit.

        For hosts whose timers fire late: PyFlink's process mode fires a processing-time
        timer registered in a bundle only after that bundle, so a key's poll timer came
        ~25 ms after its call ended and each call held its slot that much longer. A key
        resumed here goes on exactly as its poll timer would have resumed it: the timer
        stays registered (and finds the key parked on its next call, or gone). A key whose
        retry is due (``agents.error-handling: retry``) starts it here too, instead of up to
        a bundle's time late."""
        outputs: list[Any] = []
        finished = self._pool.finished
        calls = finished != self._finished_seen  # a call finished since the last look
        if not calls and self._next_retry_due is None:  # the common case: one int compare
            return outputs
        now = self._clock.monotonic()
        if not calls and now < self._next_retry_due:  # type: ignore[operator]
            return outputs
        self._finished_seen = finished
        ready, next_due = [], None
        for work in self._works.values():
            due = work.retry_due
            if due is not None and work.run.execution is None:
                if due <= now:
                    ready.append(work)
                else:
                    next_due = due if next_due is None else min(next_due, due)
            elif calls and self._call_done(work):
                ready.append(work)
        for work in ready:  # a key's progress never touches another key's work
            self._advance_key(work, enter_key(work.key), outputs, None)
            due = work.retry_due  # still waiting (its clock and Flink's differ by a tick)
            if due is not None and work.key in self._works:
                next_due = due + 0.001 if next_due is None else min(next_due, due + 0.001)
        self._next_retry_due = next_due
        return outputs

    @property
    def has_parked_keys(self) -> bool:
        return bool(self._works)

    @staticmethod
    def _call_done(work: _KeyWork) -> bool:
        execution = work.run.execution
        return (execution is not None and execution.pending is not None
                and execution.pending.done)

    def refresh_gauges(self) -> None:
        """End of a host callback: copy the current levels into the stats."""
        stats = self._stats
        stats.keys_parked = len(self._works)
        stats.durable_calls_in_flight = self._pool.in_flight
        stats.durable_calls_abandoned = self._pool.abandoned

    def close(self, grace_s: float) -> list[CallHandle]:
        """Stop: wait up to ``grace_s`` for the calls still running, then release the
        long-term memory unless a worker thread may still be inside it. Answers the
        calls still running (their threads are left to finish on their own)."""
        for work in self._works.values():
            if work.run.execution is not None:
                self._driver.close(work.run.execution)
        self._works.clear()
        still_running = self._pool.close(grace_s)
        self.refresh_gauges()
        if not still_running:
            self._memory.close()
            if self._journal is not None:
                self._journal.close()
        return still_running

    def checkpoint_started(self, checkpoint_id: int) -> None:
        """The host snapshots keyed state for checkpoint ``checkpoint_id`` now."""
        if self._journal is not None:
            self._journal.checkpoint_started(checkpoint_id)

    def checkpoint_completed(self, checkpoint_id: int) -> int:
        """Checkpoint ``checkpoint_id`` completed: prune the action-state rows it covers
        (answers how many)."""
        return 0 if self._journal is None else self._journal.checkpoint_completed(checkpoint_id)

    # ------------------------------------------------------------------ keys with work

    def _restore(self, key: Any, busy: BusyKey, next_seq: int | None = None) -> _KeyWork:
        if next_seq is None:
            next_seq = self._states.next_seq.value()
        if next_seq is None:  # written with the busy record (_store): never the case
            raise RuntimeError(f"the keyed state of key {key!r} has a busy record but no "
                               "input counter (agent-next-seq)")
        stored = self._states.run.value()
        stored_record = stored is not None and stored.seq == busy.head
        record = stored if stored is not None and stored_record else RunRecord(busy.head)
        if stored_record and record.has_progress:
            log.info("replaying input #%d of key %r after recovery: %d step(s) done, %d "
                     "durable result(s) recorded", busy.head, key, len(record.steps),
                     len(record.calls))
        run = self._new_run(key, busy.head, self._states.pending.get(busy.head), record,
                            replayed=stored_record and record.has_progress)
        run.stored = stored_record
        # The replay answers recorded calls without running them, so their writes are not
        # counted again in this process: the record says whether they stored items.
        keeps_counter = busy.keeps_counter or (stored_record and record.calls_stored_items)
        work = _KeyWork(key, run, next_seq=next_seq, keeps_counter=keeps_counter,
                        incarnation=busy.incarnation, incarnation_kept=False,
                        stored=True, drain_rounds=busy.drain_rounds,
                        waiting=next_seq - busy.head - 1,
                        busy_dirty=keeps_counter != busy.keeps_counter,
                        # Flink restored the timer of a retry with the state that waits for it
                        retry_timer=record.retry_at)
        self._stats.inputs_waiting += work.waiting
        self._works[key] = work
        return work

    def _new_run(self, key: Any, seq: int, value: Any, record: RunRecord,
                 replayed: bool = False) -> _Run:
        self._events.input(key, seq, value, replayed)
        return _Run(seq, value, record, deque([InputEvent(value)]))

    def _enqueue(self, work: _KeyWork, value: Any, timers: Timers) -> None:
        seq = work.next_seq
        self._states.pending.put(seq, value)
        work.next_seq = seq + 1
        self._states.next_seq.update(work.next_seq)
        work.waiting += 1
        self._stats.inputs_waiting += 1
        self._add_drain_rounds(work, timers)

    def _add_drain_rounds(self, work: _KeyWork, timers: Timers) -> None:
        """Drain timers for the inputs pending now (registered before any final
        watermark, so that the drain never needs a timer registered during it)."""
        needed = DRAIN_ROUNDS_PER_INPUT * (work.next_seq - work.run.seq)
        if needed > work.drain_rounds:
            for round_ in range(work.drain_rounds, needed):
                timers.register_event_time_timer(DRAIN_BASE + round_)
            work.drain_rounds = needed
            work.busy_dirty = True
        if work.busy_dirty:
            self._write_busy(work)

    def _write_busy(self, work: _KeyWork) -> None:
        self._states.busy.update(BusyKey(work.run.seq, work.drain_rounds, work.keeps_counter,
                                         work.incarnation))
        work.busy_dirty = False

    def _store(self, work: _KeyWork, timers: Timers) -> None:
        """The key's input could not finish within its callback: from now on its work
        lives in keyed state."""
        self._states.pending.put(work.run.seq, work.run.value)
        self._states.next_seq.update(work.next_seq)
        work.stored = True
        work.busy_dirty = True
        self._add_drain_rounds(work, timers)

    def _advance_key(self, work: _KeyWork, timers: Timers, outputs: list[Any],
                     drain_round: int | None) -> None:
        """Run the key's inputs until one parks (or, on its last drain round, to the end)."""
        self._current = work
        try:
            while True:
                if self._advance_run(work, outputs, timers) == Progress.PARKED:
                    if not self._park(work, timers, drain_round):
                        return
                    self._wait_for_own_call(work, timers)
                    continue
                if not self._next_run(work):
                    self._end_work(work, timers)
                    return
        finally:
            self._current = None

    def _park(self, work: _KeyWork, timers: Timers, drain_round: int | None) -> bool:
        """Keep the parked run's progress in keyed state and arrange to come back;
        ``True`` if this is the key's last drain round, so it must finish now."""
        if not work.stored:
            self._store(work, timers)
        elif work.busy_dirty:
            self._write_busy(work)
        if work.record_dirty:
            self._write_record(work)
        if drain_round is not None:
            return drain_round + 1 >= work.drain_rounds
        retry_at = work.run.record.retry_at
        if work.run.execution is None and retry_at is not None:  # waits for its retry
            if work.retry_timer != retry_at:  # (again after a restore: one timer, as Flink's)
                work.retry_timer = retry_at
                timers.register_processing_time_timer(retry_at)
        elif work.poll_at is None:
            work.poll_at = timers.current_processing_time() + self._settings.poll_ms
            timers.register_processing_time_timer(work.poll_at)
        return False

    def _write_record(self, work: _KeyWork) -> None:
        record = work.run.record
        if not self._settings.retain:  # only completed steps: a replay calls again
            record = dataclasses.replace(record, calls=[])
        if record.steps or record.calls or record.failures:
            self._states.run.update(record)
            work.run.stored = True
        work.record_dirty = False

    def _next_run(self, work: _KeyWork) -> bool:
        """The run ended: start the next pending input of the key, if any."""
        seq = work.run.seq + 1
        if seq >= work.next_seq:
            return False
        work.run = self._new_run(work.key, seq, self._states.pending.get(seq), RunRecord(seq))
        work.waiting -= 1
        self._stats.inputs_waiting -= 1
        work.busy_dirty = True
        return True

    def _end_work(self, work: _KeyWork, timers: Timers) -> None:
        """The key's last pending input finished: leave no state and no timers behind,
        except the input counter of a key that stored long-term-memory items."""
        del self._works[work.key]
        states = self._states
        if work.stored:
            for round_ in range(work.drain_rounds):
                timers.delete_event_time_timer(DRAIN_BASE + round_)
            states.busy.clear()
            if not work.keeps_counter:
                states.next_seq.clear()
        elif work.keeps_counter:
            states.next_seq.update(work.next_seq)
        if work.keeps_counter and not work.incarnation_kept:
            states.incarnation.update(work.incarnation)  # once: the counter's line for good
        if work.poll_at is not None:
            timers.delete_processing_time_timer(work.poll_at)
        if work.retry_timer is not None:  # the retry ran in a drain round, before its timer
            timers.delete_processing_time_timer(work.retry_timer)

    def _wait_for_own_call(self, work: _KeyWork, timers: Timers) -> None:
        """At the end of a bounded input (processing-time timers no longer fire): wait
        (until its deadline) for the call the key's action awaits, if any, or for the time
        of its retry. The calls of the other keys run meanwhile, so a drain round waits
        about one call (or one backoff)."""
        execution = work.run.execution
        pending = execution.pending if execution is not None else None
        if pending is not None and not pending.done:
            self._pool.wait([pending], pending.deadline)
        retry_at = work.run.record.retry_at
        if execution is None and retry_at is not None:
            left_ms = retry_at - timers.current_processing_time()
            if left_ms > 0:
                self._pool.sleep(self._clock.monotonic() + left_ms / 1000)

    # ------------------------------------------------------------------ runs

    def _advance_run(self, work: _KeyWork, outputs: list[Any], timers: Timers) -> Progress:
        """Run steps until the run ends (``DONE``) or parks (``PARKED``: on a durable call,
        or waiting for the time of a failed step's retry)."""
        run = work.run
        try:
            while True:
                execution = run.execution
                if execution is not None:
                    if self._driver.resume(execution) == Progress.PARKED:
                        return Progress.PARKED
                    self._complete_step(work)
                    continue
                if not run.work:
                    if not run.events:
                        self._finish_run(work, outputs, completed=True)
                        return Progress.DONE
                    event = run.events.popleft()
                    run.work.extend((event, a) for a in self._actions
                                    if isinstance(event, a.listens_to))
                    continue
                event, action = run.work.popleft()
                if run.step_index < len(run.record.steps):  # done before a failure: skip it
                    run.events.extend(run.record.steps[run.step_index])
                    run.step_index += 1
                    continue
                retry_at = run.record.retry_at
                if retry_at is not None:  # a failed attempt of this step: retried when due
                    if timers.current_processing_time() < retry_at:
                        run.work.appendleft((event, action))
                        return Progress.PARKED
                    run.record.retry_at = None
                    work.retry_due = None
                    work.record_dirty = True
                run.execution = self._new_execution(work, event, action)
                self._stats.actions_started += 1
                if self._driver.start(run.execution) == Progress.PARKED:
                    return Progress.PARKED
                self._complete_step(work)
        except StepFailed as failed:
            if self._retry_later(work, failed.error, timers):
                return Progress.PARKED
            self._fail_run(work, failed.error)
            self._finish_run(work, outputs, completed=False)
            return Progress.DONE

    def _new_execution(self, work: _KeyWork, event: Event, action: Action) -> ActionExecution:
        run = work.run
        journal, run.retry_journal = run.retry_journal, None  # a retry goes on with its rows
        if journal is None and self._journal is not None:
            journal = StepJournal(self._journal, lambda: self._journal_tag(work, run),
                                  run.step_index)
        # The observation id names the step's input, so that its item ids are its own. With
        # the action-state store on, the store's run for the input: after a recovery the
        # key's inputs may arrive in another order, and an input whose recorded add is not
        # made again must not lend its place (and so its item ids) to a new input.
        observation_id = (observation_id_of(work.key, work.incarnation, run.seq,
                                            run.step_index) if journal is None
                          else journal.observation)
        step = Step(run.record.calls, self._count_replay,
                    lambda: self._memory.stored_items(observation_id))
        trace = self._events.step(work.key, run.seq, observation_id, action.name, event)
        sensory = KeyedMemoryStore(_SensoryLayer(run.record), self._check, "sensory memory")
        short_term = KeyedMemoryStore(_ShortTermLayer(self._states.short_term, run.record),
                                      self._check, "short-term memory",
                                      exact_tree=not self._settings.short_term_ttl)
        suppressed = isinstance(event, _MEMORY_EVENTS)
        if self._settings.memory_events is not None and not suppressed:
            observe(self._settings.memory_events, sensory, short_term)
        ctx = RunnerContextImpl(
            key=work.key, action_name=action.name, step=step, sensory=sensory,
            short_term=short_term, long_term=self._memory.get, resources=self._resources,
            mailbox_check=self._check, listened=self._listened, on_record=self._on_record,
            awaitable=action.is_async, journal=journal, trace=trace,
            metrics=self._action_metrics(action.name))
        return ActionExecution(action, event, ctx, step, observation_id,
                               suppressed, sensory, short_term,
                               journal=journal, trace=trace, started=self._clock.monotonic())

    def _action_metrics(self, name: str) -> ActionMetrics:
        metrics = self._action_metrics_of.get(name)
        if metrics is None:
            metrics = self._action_metrics_of[name] = ActionMetrics(self._metrics, name)
        return metrics

    def _journal_tag(self, work: _KeyWork, run: _Run) -> RunTag:
        """The store's run for ``run``'s input: after a recovery the key's inputs may
        arrive in another order, so its rows are found by the input, not by its place."""
        if run.journal_tag is None:
            assert self._journal is not None
            run.journal_tag = self._journal.run_of(str(work.key), work.incarnation, run.seq,
                                                   input_fingerprint(run.value))
        return run.journal_tag

    def _complete_step(self, work: _KeyWork) -> None:
        run = work.run
        execution = run.execution
        assert execution is not None
        step = execution.step
        try:
            step.check_replayed_all()
            if step.sent:  # they go into the run's record: one that cannot be stored fails here
                recordable(f"the events action '{execution.action.name}' sent", step.sent)
            execution.sensory.persist()
            execution.short_term.persist()
        except Exception as error:
            raise StepFailed(error) from error
        outcome = self._memory.end_action(execution.observation_id, completed=True)
        if outcome.items_added or execution.abandoned_calls:
            self._keep_counter(work)
        self._journal_step_done(work, execution)
        memory_events = [memory_event_for(o) for o in outcome.observations]
        if memory_events:
            self._stats.count_observations(outcome.observations)
            self._stats.memory_events_emitted += len(memory_events)
        sent = step.sent + memory_events
        if self._settings.memory_events is not None:  # short-term and sensory memory's
            sent[len(step.sent):len(step.sent)] = access_events(
                work.key, execution.sensory, execution.short_term)
        trace = execution.trace
        trace.memory(outcome.observations)
        trace.sent(sent, step.outputs)
        trace.end("completed", self._clock.monotonic() - execution.started)
        run.record.steps.append(sent)
        run.record.calls = []
        run.record.failures = 0
        run.record.outputs.extend(step.outputs)
        run.events.extend(sent)
        run.step_index += 1
        run.execution = None
        work.record_dirty = True
        self._stats.actions_completed += 1

    def _retry_later(self, work: _KeyWork, error: BaseException, timers: Timers) -> bool:
        """``agents.error-handling: retry``: if the failed step has retries left, drop the
        failed attempt and let the step wait for its backoff (``True``). The attempt's
        pending short-term and sensory writes, sent events, outputs and memory observations
        go with it; its recorded durable results stay, so the retry does not make those
        calls again (a call that raised was not recorded and runs again); its long-term
        memory writes stay in the store, and the retry, under the same observation id,
        writes the same items under the same ids (upserts)."""
        policy = self._settings.retry
        run = work.run
        execution = run.execution
        if policy is None or execution is None or run.record.failures >= policy.max_retries:
            return False
        run.execution = None
        self._driver.close(execution)
        if (self._memory.end_action(execution.observation_id, completed=False).items_added
                or execution.abandoned_calls):
            self._keep_counter(work)  # as a failed run's (see _fail_run)
        if execution.journal is not None and execution.journal.used:
            self._keep_counter(work)  # its rows answer the retry, under this observation id
        run.retry_journal = execution.journal
        run.record.failures += 1
        attempt = run.record.failures
        delay_ms = policy.delay_ms(attempt)
        run.record.retry_at = timers.current_processing_time() + delay_ms
        work.retry_due = self._clock.monotonic() + delay_ms / 1000
        if self._next_retry_due is None or work.retry_due < self._next_retry_due:
            self._next_retry_due = work.retry_due
        run.work.appendleft((execution.event, execution.action))
        work.record_dirty = True
        self._stats.action_retries += 1
        execution.trace.end("retrying", self._clock.monotonic() - execution.started, error,
                            attempt=attempt, retry_in_ms=delay_ms)
        log.warning("action '%s' of agent %s failed for key %r (input #%d, attempt %d of %d): "
                    "%s: %s; agents.error-handling is 'retry': it runs again in %d ms",
                    execution.action.name, self._settings.agent_name, work.key, run.seq,
                    attempt, policy.max_retries + 1, type(error).__name__,
                    _one_line(str(error), 300), delay_ms)
        return True

    def _fail_run(self, work: _KeyWork, error: BaseException) -> None:
        """A step failed: drop it (and, in ``ignore`` mode, the input's whole run);
        in ``fail`` mode raise :class:`AgentActionError`."""
        run = work.run
        execution, run.execution = run.execution, None
        self._stats.actions_failed += 1
        event_name = "InputEvent"
        action_name = "?"
        if execution is not None:
            self._driver.close(execution)
            # A call abandoned past its timeout may store items later, under this step's
            # ids: the key keeps its counter so that its next input never reuses them.
            if (self._memory.end_action(execution.observation_id, completed=False).items_added
                    or execution.abandoned_calls):
                self._keep_counter(work)
            self._journal_step_done(work, execution)
            execution.trace.end("failed", self._clock.monotonic() - execution.started, error)
            event_name = type(execution.event).__name__
            action_name = execution.action.name
        policy = self._settings.retry
        attempts = (f" after {run.record.failures + 1} attempts"
                    if policy is not None and execution is not None else "")
        failure = AgentActionError(
            f"action '{action_name}' of agent {self._settings.agent_name} failed for key "
            f"{work.key!r}{attempts} (input #{run.seq}: {_one_line(repr(run.value), 120)}, "
            f"{event_name}): {type(error).__name__}: {_one_line(str(error))}")
        if self._settings.fail_job:
            raise failure from error
        option = ("agents.error-handling.retry.then" if policy is not None
                  else "agents.error-handling")
        log.warning("%s; %s is 'ignore': the input's run is dropped", failure, option)

    def _finish_run(self, work: _KeyWork, outputs: list[Any], completed: bool) -> None:
        """The run ended: a completed one emits its outputs and applies its short-term
        writes; a failed one (``ignore`` mode) leaves nothing."""
        run = work.run
        self._events.run_end(work.key, run.seq, completed,
                             len(run.record.outputs) if completed else 0)
        if completed:
            for path, payload in run.record.short_term.items():
                if payload is None:
                    self._states.short_term.remove(path)
                else:
                    self._states.short_term.put(path, payload)
            outputs.extend(run.record.outputs)
        if run.stored:
            self._states.run.clear()
        if work.stored:
            self._states.pending.remove(run.seq)
        work.record_dirty = False

    def _journal_step_done(self, work: _KeyWork, execution: ActionExecution) -> None:
        """The step's action-state rows are done (pruned once a checkpoint covers the step's
        end). Until then they may answer its observation id: the key keeps its counter so
        that a later input never runs under that id again."""
        if execution.journal is not None and execution.journal.used:
            execution.journal.done()
            self._keep_counter(work)

    def _keep_counter(self, work: _KeyWork) -> None:
        if not work.keeps_counter:
            work.keeps_counter = True
            work.busy_dirty = work.stored

    # ------------------------------------------------------------------ action context

    def _listened(self, event: Event) -> bool:
        return any(isinstance(event, a.listens_to) for a in self._actions)

    def _enter(self, execution: ActionExecution) -> None:
        self._memory.enter(execution.ctx.key, execution.observation_id, execution.suppressed)

    def _on_record(self) -> None:
        """A durable result was recorded: into keyed state with the run's progress; if
        the step had stored items by then, the key keeps its input counter (the replay
        of a recorded call does not store them again, so no later count would say so)."""
        work = self._current
        if work is None:
            return
        execution = work.run.execution
        if execution is not None and execution.step.recorded_calls[-1].may_have_stored_items:
            self._keep_counter(work)
        if self._settings.retain:
            work.record_dirty = True

    def _count_replay(self) -> None:
        self._stats.durable_calls_replayed += 1

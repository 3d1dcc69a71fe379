"""Run an agent's keyed operator without Flink: in-memory state, manual time, a pool you steer.

In the spirit of Flink's ``KeyedOneInputStreamOperatorTestHarness``: the real
engine (:class:`~flink_agents_ltm.runtime.keyed_runs.KeyedRunEngine`) runs on
the test's thread; only its host is simulated, with Flink's rules:

* keyed state per key, stored pickled (what the engine writes is a copy, as in
  Flink), countable and snapshottable (:meth:`AgentHarness.snapshot`, then
  :meth:`AgentHarness.restore` into a fresh harness: recovery from a checkpoint;
  :meth:`AgentHarness.resume`: a new submission of the job from a savepoint; a new
  harness with the same job id: a new submission without state);
* timers per key and timestamp (registering twice is one timer), processing-time
  timers fired by :meth:`AgentHarness.advance` of the manual clock, event-time
  timers by :meth:`AgentHarness.process_watermark`. A timer registered while the
  watermark fires timers fires in the same watermark (thread mode), unless
  ``late_timers_fire=False`` (process mode: registered only after the loop);
* a worker pool whose calls complete when the test says (:class:`ManualWorkerPool`)
  or at once on the mailbox thread (``pool="sync"``).

.. code-block:: python

    harness = AgentHarness(MyAgent(), key_selector=lambda r: r["customer"])
    harness.process_element({"customer": "a", "text": "hi"})
    harness.pool.complete_all()
    harness.advance(0.01)          # the parked action's poll timer fires
    assert harness.outputs == [...]
"""

from __future__ import annotations

import copy
import heapq
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import cloudpickle

from flink_agents_ltm.api.agent import Agent
from flink_agents_ltm.api.memory.write_position import write_position
from flink_agents_ltm.api.options import AgentsConfiguration, AgentsOptions
from flink_agents_ltm.api.resources import ResourceType
from flink_agents_ltm.api.submission import JobSubmission
from flink_agents_ltm.runtime.action_state.journal import open_journal
from flink_agents_ltm.runtime.durable import DurableCall
from flink_agents_ltm.runtime.event_log import open_event_log
from flink_agents_ltm.runtime.incarnation import observation_id
from flink_agents_ltm.runtime.keyed_runs import EngineSettings, KeyedRunEngine
from flink_agents_ltm.runtime.lazy_memory import LazyActionMemory
from flink_agents_ltm.runtime.mailbox import MailboxThreadCheck
from flink_agents_ltm.runtime.memory.factories import build_long_term_memory
from flink_agents_ltm.runtime.metric_groups import RuntimeMetricGroup
from flink_agents_ltm.runtime.operator_metrics import OperatorStats
from flink_agents_ltm.runtime.protocols import KeyedStates
from flink_agents_ltm.runtime.resource_provider import ResourceProvider
from flink_agents_ltm.runtime.run_record import decode_busy, decode_run
from flink_agents_ltm.runtime.worker_pool import CallState, DurableCallsStuckError, stuck_message

MAX_WATERMARK = 2**63 - 1
STATE_NAMES = ("next_seq", "busy", "pending", "run", "short_term", "incarnation")
_RECORD_DECODERS: dict[str, Callable[[Any], Any]] = {"busy": decode_busy, "run": decode_run}


class ManualClock:
    """Seconds; only :meth:`advance` moves it."""

    def __init__(self, start: float = 1000.0):
        self.now = start

    def monotonic(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


# ---------------------------------------------------------------------- keyed state


class _KeyedBackend:
    """``{state name: {key: pickled value}}``, the current key, and how often each state
    was read and written (``ops[(name, "read" | "write")]``)."""

    def __init__(self, tables: dict[str, dict[Any, Any]] | None = None):
        # (a snapshot of a build with fewer states has no table for the newer ones)
        self.tables = {name: {} for name in STATE_NAMES} | (tables or {})
        self.current_key: Any = None
        self.ops: Counter[tuple[str, str]] = Counter()


class _ValueState:
    def __init__(self, backend: _KeyedBackend, name: str):
        self._backend = backend
        self._name = name
        self._table = backend.tables[name]

    def value(self) -> Any:
        self._backend.ops[self._name, "read"] += 1
        payload = self._table.get(self._backend.current_key)
        return None if payload is None else cloudpickle.loads(payload)

    def update(self, value: Any) -> None:
        self._backend.ops[self._name, "write"] += 1
        if value is None:
            self._table.pop(self._backend.current_key, None)
        else:
            self._table[self._backend.current_key] = cloudpickle.dumps(value)

    def clear(self) -> None:
        self._backend.ops[self._name, "write"] += 1
        self._table.pop(self._backend.current_key, None)


class _MapState:
    def __init__(self, backend: _KeyedBackend, name: str):
        self._backend = backend
        self._name = name
        self._table = backend.tables[name]

    def _map(self, create: bool = False) -> dict[Any, bytes]:
        key = self._backend.current_key
        self._backend.ops[self._name, "write" if create else "read"] += 1
        if create:
            return self._table.setdefault(key, {})
        return self._table.get(key, {})

    def get(self, key: Any) -> Any:
        payload = self._map().get(key)
        return None if payload is None else cloudpickle.loads(payload)

    def put(self, key: Any, value: Any) -> None:
        self._map(create=True)[key] = cloudpickle.dumps(value)

    def remove(self, key: Any) -> None:
        entries = self._map(create=True)
        entries.pop(key, None)
        if not entries:
            self._table.pop(self._backend.current_key, None)

    def contains(self, key: Any) -> bool:
        return key in self._map()

    def items(self) -> list[tuple[Any, Any]]:
        return [(k, cloudpickle.loads(v)) for k, v in self._map().items()]

    def is_empty(self) -> bool:
        return not self._map()

    def clear(self) -> None:
        self._backend.ops[self._name, "write"] += 1
        self._table.pop(self._backend.current_key, None)


# ---------------------------------------------------------------------- timers


@dataclass(frozen=True, order=True)
class Timer:
    timestamp: int
    order: int
    key: Any = field(compare=False)
    event_time: bool = field(compare=False)


class _TimerService:
    """Flink's ``TimerService`` of the current key over the harness's timer table."""

    def __init__(self, harness: AgentHarness, key: Any):
        self._harness = harness
        self._key = key

    def current_processing_time(self) -> int:
        return self._harness.processing_time()

    def register_processing_time_timer(self, timestamp: int) -> None:
        self._harness._register(self._key, timestamp, event_time=False)

    def register_event_time_timer(self, timestamp: int) -> None:
        self._harness._register(self._key, timestamp, event_time=True)

    def delete_processing_time_timer(self, timestamp: int) -> None:
        self._harness._delete(self._key, timestamp, event_time=False)

    def delete_event_time_timer(self, timestamp: int) -> None:
        self._harness._delete(self._key, timestamp, event_time=True)


# ---------------------------------------------------------------------- worker pool


class ManualCall(CallState):
    """A call on the :class:`ManualWorkerPool`; it runs when the test says."""

    def __init__(self, call: DurableCall, position: str, started: float, deadline: float):
        super().__init__(call, position, started, deadline)

    def __repr__(self) -> str:
        state = "done" if self.done else "timed out" if self.timed_out else "running"
        return f"ManualCall({self.call.name}, {state})"


class ManualWorkerPool:
    """Calls wait until the test completes them (:meth:`complete`, :meth:`run`,
    :meth:`complete_all`); or, with ``sync=True``, run at once when submitted.

    Where the real pool blocks the mailbox thread, this one lets time pass instead:
    ``wait`` and a ``submit`` to a full pool advance the clock to the deadline they
    would wait for (``run_on_wait=True``: run the awaited calls instead, except calls
    whose name is in ``hanging``: those never return)."""

    def __init__(self, clock: ManualClock, capacity: int, timeout_s: float,
                 max_abandoned: int | None = None, sync: bool = False,
                 run_on_wait: bool = False):
        self._clock = clock
        self._capacity = capacity
        self._timeout_s = timeout_s
        self._max_abandoned = capacity if max_abandoned is None else max_abandoned
        self.finished = 0  # calls finished so far (WorkerPool.finished)
        self.sync = sync
        self.run_on_wait = run_on_wait
        self.hanging: set[str] = set()
        self._running: dict[ManualCall, None] = {}  # insertion-ordered sets
        self._abandoned: dict[ManualCall, None] = {}
        self.submitted: list[ManualCall] = []
        self.slept: list[float] = []  # seconds of each sleep of the mailbox thread
        self.closed = False

    @property
    def in_flight(self) -> int:
        return len(self._running)

    @property
    def abandoned(self) -> int:
        return len(self._abandoned)

    def submit(self, call: DurableCall, position: str) -> ManualCall:
        if self.closed:
            raise RuntimeError("the worker pool is closed")
        while len(self._running) >= self._capacity:
            earliest = next(iter(self._running))  # the oldest: the earliest deadline
            if self.run_on_wait and earliest.call.name not in self.hanging:
                self.run(earliest)
            else:
                self._clock.now = max(self._clock.now, earliest.deadline)
                self.time_out(earliest)
        now = self._clock.monotonic()
        manual = ManualCall(call, position, now, now + self._timeout_s)
        self._running[manual] = None
        self.submitted.append(manual)
        try:  # a worker takes it at once: it starts (its started marker is written) ...
            with write_position(position):
                call.begin()
        except Exception as error:  # noqa: BLE001 - the action gets it, as on the pool
            return self._finish(manual, None, error)
        if self.sync and call.name not in self.hanging:  # ... and runs when the test says
            self.run(manual)
        return manual

    def time_out(self, handle: ManualCall) -> bool:
        if handle.done or handle.timed_out:
            return handle.timed_out
        del self._running[handle]
        handle.time_out()
        self._abandoned[handle] = None
        if len(self._abandoned) > self._max_abandoned:
            raise DurableCallsStuckError(stuck_message(
                handle, self._abandoned, self._timeout_s, self._max_abandoned,
                self._clock.monotonic()))
        return True

    def wait(self, handles: Iterable[ManualCall] | None, until: float) -> None:
        watched = list(self._running if handles is None else handles)
        if any(h.done or h.timed_out for h in watched) or not watched:
            return
        runnable = [h for h in watched if h.call.name not in self.hanging]
        if self.run_on_wait and runnable:
            for handle in runnable:
                self.run(handle)
            return
        self._clock.now = max(self._clock.now, until)

    def sleep(self, until: float) -> None:
        """The mailbox thread sleeps (only a drain round waiting for a retry): the clock
        jumps there; ``slept`` lists how long each sleep was."""
        self.slept.append(max(0.0, until - self._clock.now))
        self._clock.now = max(self._clock.now, until)

    def close(self, grace_s: float) -> list[ManualCall]:
        self.closed = True
        return self.pending()

    # ---- the test's side

    def pending(self) -> list[ManualCall]:
        """Calls started and not done (timed-out ones included), oldest first."""
        return sorted([*self._running, *self._abandoned], key=lambda c: c.started)

    def run(self, handle: ManualCall | None = None) -> ManualCall:
        """Run a call (the oldest pending one by default) on this thread, as a worker
        would: its write position set."""
        handle = handle or self._oldest()
        with write_position(handle.position):
            try:
                return self._finish(handle, handle.call.run(), None)
            except Exception as error:  # noqa: BLE001 - the action gets it, as on the pool
                return self._finish(handle, None, error)

    def complete(self, result: Any = None, handle: ManualCall | None = None,
                 error: BaseException | None = None) -> ManualCall:
        """Finish a call (the oldest pending one by default) without running it."""
        return self._finish(handle or self._oldest(), result, error)

    def complete_all(self) -> None:
        """Run every pending call (timed-out ones too: their threads return)."""
        for handle in self.pending():
            self.run(handle)

    def _oldest(self) -> ManualCall:
        candidates = [*self._abandoned]
        if self._running:
            candidates.append(next(iter(self._running)))  # running ones start in order
        return min(candidates, key=lambda c: c.started)

    def _finish(self, handle: ManualCall, result: Any, error: BaseException | None
                ) -> ManualCall:
        self._running.pop(handle, None)
        self._abandoned.pop(handle, None)
        handle.finish(result, error, self._clock.monotonic())
        self.finished += 1
        return handle


# ---------------------------------------------------------------------- the harness


@dataclass
class Snapshot:
    """Keyed state and timers as a checkpoint holds them."""

    tables: dict[str, dict[Any, Any]]
    timers: dict[tuple[Any, int, bool], int]
    processing_time_ms: int
    checkpoint_id: int = 0
    submission: JobSubmission | None = None  # of the run that took it


class AgentHarness:
    def __init__(self, agent: Agent, key_selector: Callable[[Any], Any] = lambda r: r[0],
                 config: dict[str, Any] | None = None, *,
                 memory: Callable[[], Any] | None = None,
                 resources: dict[str, tuple[ResourceType, Any]] | None = None,
                 sync: bool = False, run_on_wait: bool = False,
                 snapshot: Snapshot | None = None, clock: ManualClock | None = None,
                 submission: JobSubmission | None = None, first_attempt: bool | None = None,
                 resume_ready: bool = False):
        """``submission``: the run of the job this harness is (a new one by default; the
        snapshot's with ``snapshot``); ``first_attempt``: the operator opens in the job's
        first attempt (by default: without a snapshot; a JobManager failover is a first
        attempt on a snapshot); ``resume_ready``: after every callback, the parked keys
        whose calls are done go on, each under its own key, as the operator does in process
        mode (:meth:`KeyedRunEngine.resume_ready`)."""
        self.agent = agent
        self.resume_ready = resume_ready
        self.submission = submission or (snapshot.submission if snapshot else None) \
            or JobSubmission.new()
        self.key_selector = key_selector
        self.config = AgentsConfiguration(config or {})
        self.clock = clock or ManualClock()
        self.check = MailboxThreadCheck()
        self._backend = _KeyedBackend(copy.deepcopy(snapshot.tables) if snapshot else None)
        self._timers: dict[tuple[Any, int, bool], int] = dict(snapshot.timers) if snapshot \
            else {}
        self._processing_base_ms = (snapshot.processing_time_ms if snapshot else 0) - \
            int(self.clock.now * 1000)
        self._order = max(self._timers.values(), default=0)
        self._queues: dict[bool, list[tuple[int, int, Any]]] = {True: [], False: []}
        for (key, ts, et), order in self._timers.items():
            heapq.heappush(self._queues[et], (ts, order, key))
        self._late: list[tuple[bool, Any, int]] | None = None  # (register?, key, timestamp)
        self.outputs: list[Any] = []
        self.stats = OperatorStats()
        # The agent's metric group, in memory: ``metrics.values()`` reads every metric.
        self.metrics = RuntimeMetricGroup()
        timeout_s = self.config.get(AgentsOptions.ASYNC_TIMEOUT_MS) / 1000
        self.pool = ManualWorkerPool(self.clock, self.config.get(AgentsOptions.ASYNC_CAPACITY),
                                     timeout_s, sync=sync, run_on_wait=run_on_wait)
        self.resources = ResourceProvider(agent, self.check, resources)
        self.resources.open()
        self.memory = LazyActionMemory(memory or self.default_memory, "the harness's memory",
                                       self.check)
        states = KeyedStates.of_host_states(*(self._state(name) for name in STATE_NAMES))
        self.checkpoint_id = snapshot.checkpoint_id if snapshot else 0
        settings = EngineSettings.of(type(agent).__name__, self.config, self.submission)
        self.incarnation = settings.incarnation
        self.journal = open_journal(
            self.config, 0, checkpoints=True, incarnation=settings.incarnation,
            first_attempt=snapshot is None if first_attempt is None else first_attempt)
        if self.journal is not None:
            self.journal.restored(self.checkpoint_id)
        self.engine = KeyedRunEngine(
            actions=agent.actions(), states=states, pool=self.pool, clock=self.clock,
            settings=settings,
            memory=self.memory, resources=self.resources.get, mailbox_check=self.check,
            stats=self.stats, journal=self.journal,
            event_log=open_event_log(self.config, job=self.config.get(AgentsOptions.JOB_ID),
                                     agent=type(agent).__name__, subtask=0),
            metrics=self.metrics)

    def _state(self, name: str) -> Any:
        if name in ("pending", "short_term"):
            return _MapState(self._backend, name)
        return _ValueState(self._backend, name)

    def default_memory(self) -> Any:
        """The long-term memory the operator would build from this harness's config: the
        one ``agents.long-term-memory.factory`` names, Mem0 by default (``memory=``
        replaces it)."""
        return build_long_term_memory(
            self.config.get(AgentsOptions.LONG_TERM_MEMORY_FACTORY),
            self.config.get(AgentsOptions.JOB_ID), self.config, self.check,
            resources=self.resources.for_long_term_memory)

    # ------------------------------------------------------------------ driving

    def process_element(self, value: Any) -> list[Any]:
        """One input; answers (and collects) the outputs emitted by this callback."""
        key = self.key_selector(value)
        return self._call(key, lambda timers: self.engine.process_input(key, value, timers))

    def processing_time(self) -> int:
        return self._processing_base_ms + round(self.clock.now * 1000)

    def advance(self, seconds: float) -> list[Any]:
        """Let time pass, firing the processing-time timers that come due, in order."""
        self.clock.advance(seconds)
        emitted: list[Any] = []
        while True:
            timer = self._next_timer(event_time=False, until=self.processing_time())
            if timer is None:
                return emitted
            emitted += self._fire(timer)

    def process_watermark(self, watermark: int, late_timers_fire: bool = True) -> list[Any]:
        """Fire event-time timers up to ``watermark``. ``late_timers_fire=False``: a timer
        registered meanwhile is registered only after the loop, as PyFlink's process mode
        does, and does not fire in this watermark."""
        emitted = []
        self._late = None if late_timers_fire else []
        try:
            while True:
                timer = self._next_timer(event_time=True, until=watermark)
                if timer is None:
                    break
                emitted += self._fire(timer)
        finally:
            late, self._late = self._late, None
        for register, key, timestamp in late or ():
            if register:
                self._register(key, timestamp, event_time=True)
            else:
                self._delete(key, timestamp, event_time=True)
        return emitted

    def end_input(self, late_timers_fire: bool = True) -> list[Any]:
        """The bounded input ended: the final watermark."""
        return self.process_watermark(MAX_WATERMARK, late_timers_fire)

    def snapshot(self) -> Snapshot:
        """Keyed state and timers now: checkpoint ``checkpoint_id + 1`` is taken (see
        :meth:`notify_checkpoint_complete`)."""
        self.checkpoint_id += 1
        self.engine.checkpoint_started(self.checkpoint_id)
        return Snapshot(copy.deepcopy(self._backend.tables), dict(self._timers),
                        self.processing_time(), self.checkpoint_id, self.submission)

    def notify_checkpoint_complete(self, checkpoint_id: int | None = None) -> int:
        """The checkpoint (the latest snapshot by default) completed; answers how many
        action-state rows were pruned."""
        return self.engine.checkpoint_completed(checkpoint_id or self.checkpoint_id)

    @classmethod
    def restore(cls, snapshot: Snapshot, agent: Agent, **kwargs: Any) -> AgentHarness:
        """A fresh harness (new engine, new pool) on the state and timers of ``snapshot``:
        the same run of the job recovering from its checkpoint (a later attempt)."""
        return cls(agent, snapshot=snapshot, **kwargs)

    @classmethod
    def resume(cls, snapshot: Snapshot, agent: Agent, **kwargs: Any) -> AgentHarness:
        """A new run of the job started from ``snapshot`` as from a savepoint (``flink run
        -s``: a new submission, its first attempt, restoring)."""
        submission = JobSubmission(JobSubmission.new().name,
                                   restore_path=f"savepoint-{snapshot.checkpoint_id}")
        return cls(agent, snapshot=snapshot, submission=submission, first_attempt=True,
                   **kwargs)

    def observation_id(self, key: Any, seq: int, step: int = 0,
                       incarnation: str | None = None) -> str:
        """The observation id of step ``step`` of input ``seq`` of ``key`` in this run's
        line (or ``incarnation``'s), without the action-state store."""
        return observation_id(key, self.incarnation if incarnation is None else incarnation,
                              seq, step)

    def close(self) -> list[Any]:
        """Close as the operator does (without waiting); answers the calls still running."""
        still_running = self.engine.close(grace_s=0)
        self.resources.close()
        if self.journal is not None:
            self.journal.close()  # the manual pool's calls run only when the test says
        return still_running

    # ------------------------------------------------------------------ inspecting

    def state_entries(self) -> dict[str, int]:
        """Entries per state: one per key of a value state, one per map entry."""
        return {name: sum(len(v) if isinstance(v, dict) else 1 for v in table.values())
                for name, table in self._backend.tables.items()}

    def state_ops(self) -> Counter[tuple[str, str]]:
        """How often each state was read and written: ``{(name, "read"|"write"): n}``."""
        return Counter(self._backend.ops)

    def state_of(self, key: Any, name: str) -> Any:
        """What state ``name`` holds for ``key`` (a dict for map states), unpickled; the
        busy and run records as the engine reads them (decoded from their format version)."""
        payload = self._backend.tables[name].get(key)
        if payload is None:
            return None
        if isinstance(payload, dict):
            return {k: cloudpickle.loads(v) for k, v in payload.items()}
        value = cloudpickle.loads(payload)
        decode = _RECORD_DECODERS.get(name)
        return value if decode is None else decode(value)

    def timers(self, key: Any = None) -> list[Timer]:
        return [t for t in self._sorted_timers(None) if key is None or t.key == key]

    # ------------------------------------------------------------------ internals

    def _call(self, key: Any, call: Callable[[_TimerService], list[Any]]) -> list[Any]:
        self._backend.current_key = key
        try:
            emitted = call(_TimerService(self, key))
            if self.resume_ready:
                emitted.extend(self.engine.resume_ready(self._enter))
        finally:
            self._backend.current_key = key
            self.engine.refresh_gauges()
        self.outputs.extend(emitted)
        return emitted

    def _enter(self, key: Any) -> _TimerService:
        self._backend.current_key = key
        return _TimerService(self, key)

    def _fire(self, timer: Timer) -> list[Any]:
        del self._timers[(timer.key, timer.timestamp, timer.event_time)]
        return self._call(timer.key, lambda timers: self.engine.on_timer(
            timer.key, timer.timestamp, timer.event_time, timers))

    def _next_timer(self, event_time: bool, until: int) -> Timer | None:
        """The earliest live timer due by ``until`` (deleted ones are skipped lazily)."""
        queue = self._queues[event_time]
        while queue and queue[0][0] <= until:
            timestamp, order, key = queue[0]
            if self._timers.get((key, timestamp, event_time)) == order:
                return Timer(timestamp, order, key, event_time)
            heapq.heappop(queue)
        return None

    def _sorted_timers(self, event_time: bool | None) -> list[Timer]:
        return sorted(Timer(ts, order, key, et) for (key, ts, et), order in self._timers.items()
                      if event_time is None or et == event_time)

    def _register(self, key: Any, timestamp: int, event_time: bool) -> None:
        if event_time and self._late is not None:
            self._late.append((True, key, timestamp))
            return
        if (key, timestamp, event_time) not in self._timers:
            self._order += 1
            self._timers[(key, timestamp, event_time)] = self._order
            heapq.heappush(self._queues[event_time], (timestamp, self._order, key))

    def _delete(self, key: Any, timestamp: int, event_time: bool) -> None:
        if event_time and self._late is not None:
            self._late.append((False, key, timestamp))
            return
        self._timers.pop((key, timestamp, event_time), None)

"""The keyed operator that runs an agent: one PyFlink ``KeyedProcessFunction``.

Its processing thread is the *mailbox thread*: Flink calls
``process_element`` and ``on_timer`` there, with the current key set, so only
there is keyed state (inputs, action record, sensory and short-term memory)
read and written, and only there does the long-term memory ``switch_context``.

One input of a key is processed by a *run*: events are queued first in, first
out; each (event, listening action) pair is a *step*. An ``async`` action that
awaits ``ctx.durable_execute_async`` is *parked* in ``self._runs`` while its
call runs on the worker pool, and ``process_element`` returns: the mailbox goes
on with other keys. Later inputs of a parked key wait in its keyed ``inputs``
list, in order. A processing-time timer of the key polls the call and resumes
the action when it is done (Flink has set the key again by then).

End of a bounded input: processing-time timers stop firing, but the final
watermark (``Long.MAX_VALUE``) fires event-time timers, and Flink keeps firing
timers registered meanwhile at or below it. A parked key has an event-time
*drain* timer far in the future; when it fires and the call is still running,
the key re-registers at the next timestamp. The keys with work left are so
visited in rounds, all calls keep running in parallel, and the mailbox blocks
(on any call) only when a whole round made no progress. No input is dropped.

Exactly-once: the record of the run (steps done with the events they sent,
durable results of the current step) and the memories are written in the same
mailbox turn as the step completes, so a checkpoint sees whole steps. After a
restore, the run of the first pending input is replayed: done steps are
skipped, recorded durable calls return their results without running again.
Durable results reach Flink state as they arrive only when action state is
*retained* (``agents.action-state.retained``, the default); otherwise a replay
runs the interrupted step's calls again. ``ctx.chat`` children never persist
the caller's memories (read-through scope), so either way a replay repeats no
memory update.
"""

from __future__ import annotations

import importlib
import logging
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from pyflink.common import Types
from pyflink.datastream import KeyedProcessFunction, TimeDomain
from pyflink.datastream.state import (
    ListStateDescriptor,
    MapStateDescriptor,
    StateTtlConfig,
    ValueStateDescriptor,
)

from flink_agents_ltm.api.agent import Action, Agent
from flink_agents_ltm.api.events import (
    Event,
    InputEvent,
    MemoryEvent,
    memory_event_for,
)
from flink_agents_ltm.api.execution_environment import AgentsConfiguration, AgentsOptions
from flink_agents_ltm.api.memory.long_term_memory import BaseLongTermMemory
from flink_agents_ltm.api.resources import ResourceType
from flink_agents_ltm.runtime.durable import (
    DurableCall,
    DurableCallError,
    DurableCallTimeoutError,
    WorkerPool,
    describe,
    recordable,
)
from flink_agents_ltm.runtime.keyed_memory import KeyedMemoryStore
from flink_agents_ltm.runtime.mailbox import MailboxThreadCheck
from flink_agents_ltm.runtime.operator_metrics import OperatorMetrics, OperatorStats
from flink_agents_ltm.runtime.resource_provider import ResourceProvider
from flink_agents_ltm.runtime.runner_context_impl import RunnerContextImpl, Step
from flink_agents_ltm.runtime.task_info import execution_mode, number_of_subtasks, subtask_index

log = logging.getLogger(__name__)

# Event-time timers at or above this fire only with the final watermark (Long.MAX_VALUE).
DRAIN_BASE = 2**63 - 1 - 2**40


class AgentActionError(RuntimeError):
    """An action failed; the message names the action, the key and the input."""


@dataclass
class RunRecord:
    """Action state of a key, kept in Flink state until its input's run ends."""

    seq: int
    steps: list[list[Event]] = field(default_factory=list)  # events each done step sent
    calls: list[Any] = field(default_factory=list)  # durable results of the current step


@dataclass
class _Running:
    """An action execution in progress (operator-local, never checkpointed)."""

    action: Action
    event: Event
    step: Step
    observation_id: str
    suppressed: bool
    sensory: KeyedMemoryStore
    short_term: KeyedMemoryStore
    coroutine: Any = None
    call: DurableCall | None = None
    future: Any = None
    deadline: float = 0.0
    submitted: float = 0.0


@dataclass
class _Run:
    key: Any
    seq: int
    record: RunRecord
    queue: deque = field(default_factory=deque)
    work: deque = field(default_factory=deque)
    step_index: int = 0
    running: _Running | None = None


class _Parked(Exception):
    """Internal: the run waits for a durable call."""


class AgentOperator(KeyedProcessFunction):
    def __init__(self, agent: Agent, config: dict[str, Any],
                 resources: dict[str, tuple[ResourceType, Any]] | None = None):
        self._agent = agent
        self._config_values = config
        self._extra_resources = resources or {}

    # ------------------------------------------------------------------ lifecycle

    def open(self, runtime_context):
        config = AgentsConfiguration(self._config_values)
        self._config = config
        self._check = MailboxThreadCheck()
        self._actions = self._agent.actions()
        self._resources = ResourceProvider(self._agent, self._check, self._extra_resources)
        self._subtask = subtask_index(runtime_context)
        self._pool = WorkerPool(config.get(AgentsOptions.ASYNC_CAPACITY),
                                f"agents-durable-{self._subtask}")
        self._timeout_s = config.get(AgentsOptions.ASYNC_TIMEOUT_MS) / 1000
        self._poll_ms = config.get(AgentsOptions.ASYNC_POLL_INTERVAL_MS)
        self._fail_job = config.get(AgentsOptions.ERROR_HANDLING) == "fail"
        self._retain = config.get(AgentsOptions.RETAIN_ACTION_STATE)
        self._memory: BaseLongTermMemory | None = None
        self._context = (None, None, False)
        self._runs: dict[Any, _Run] = {}
        self._waiting: dict[Any, int] = {}  # inputs in state behind the run, per key with a run
        self._drain_round = 0
        self._progress = False
        pickled = Types.PICKLED_BYTE_ARRAY()
        self._inputs = runtime_context.get_list_state(ListStateDescriptor("agent-inputs", pickled))
        self._next_seq = runtime_context.get_state(ValueStateDescriptor("agent-next-seq",
                                                                        Types.LONG()))
        self._record = runtime_context.get_state(ValueStateDescriptor("agent-action-state",
                                                                      pickled))
        self._sensory_state = runtime_context.get_map_state(
            MapStateDescriptor("agent-sensory-memory", Types.STRING(), pickled))
        short_term = MapStateDescriptor("agent-short-term-memory", Types.STRING(), pickled)
        ttl_ms = config.get(AgentsOptions.SHORT_TERM_MEMORY_TTL_MS)
        if ttl_ms is not None:
            from pyflink.common.time import Time
            short_term.enable_time_to_live(StateTtlConfig.new_builder(Time.milliseconds(ttl_ms))
                                           .build())
        self._short_term_state = runtime_context.get_map_state(short_term)
        self.stats = OperatorStats()
        self._metrics = OperatorMetrics(runtime_context.get_metrics_group(), self.stats)
        log.info(
            "agent %s opened on subtask %d of %d (%s mode): job id %r, durable-async capacity "
            "%d, timeout %g s, poll %d ms, error handling %s, action state retained: %s, "
            "metrics in group '%s'", type(self._agent).__name__, self._subtask,
            number_of_subtasks(runtime_context), execution_mode(runtime_context),
            config.get(AgentsOptions.JOB_ID), config.get(AgentsOptions.ASYNC_CAPACITY),
            self._timeout_s, self._poll_ms, config.get(AgentsOptions.ERROR_HANDLING),
            self._retain, "flink_agents")

    def close(self):
        metrics = getattr(self, "_metrics", None)
        if metrics is not None:
            self.stats.keys_parked = len(self._runs)
            metrics.publish()
            log.info("agent %s closed on subtask %d: %s", type(self._agent).__name__,
                     self._subtask, self.stats.summary())
        self._pool.close()
        if self._memory is not None:
            close = getattr(self._memory, "close", None)
            if close is not None:
                close()

    # ------------------------------------------------------------------ Flink callbacks

    def process_element(self, value, ctx):
        self._check.rebind()  # Flink calls us on the mailbox thread, whichever it is
        self.stats.inputs_received += 1
        seq = self._next_seq.value() or 0
        self._next_seq.update(seq + 1)
        self._inputs.add((seq, value))
        key = ctx.get_current_key()
        if key in self._runs:  # waits behind the parked run of its key
            self._waiting[key] += 1
            self.stats.inputs_waiting += 1
            self._metrics.publish()
            return
        try:
            yield from self._run_key(key, ctx, None)
        finally:
            self._publish()

    def on_timer(self, timestamp, ctx):
        self._check.rebind()
        drain_round = None
        if timestamp >= DRAIN_BASE and ctx.time_domain() == TimeDomain.EVENT_TIME:
            drain_round = timestamp
            if timestamp > self._drain_round:  # a new round of the end-of-input drain
                if self._drain_round and not self._progress:
                    self._pool.wait_any(timeout=0.05)
                self._drain_round, self._progress = timestamp, False
        try:
            yield from self._run_key(ctx.get_current_key(), ctx, drain_round)
        finally:
            self._publish()

    def _publish(self) -> None:
        """End of a callback: every run left in ``self._runs`` is parked."""
        self.stats.keys_parked = len(self._runs)
        self._metrics.publish()

    # ------------------------------------------------------------------ runs

    def _run_key(self, key, ctx, drain_round: int | None):
        """Advance the key's work as far as it goes without waiting; yields the outputs
        of completed steps. ``drain_round``: the timestamp of the drain timer that fired."""
        while True:
            run = self._runs.get(key)
            if run is None:
                run = self._start_run(key)
                if run is None:
                    return
            outputs: list[Any] = []
            try:
                self._advance(run, outputs)
            except _Parked:
                yield from outputs
                timers = ctx.timer_service()
                if drain_round is not None:
                    timers.register_event_time_timer(drain_round + 1)
                    return
                timers.register_processing_time_timer(
                    timers.current_processing_time() + self._poll_ms)
                timers.register_event_time_timer(DRAIN_BASE)
                return
            except AgentActionError:
                if self._fail_job:
                    raise
                log.exception("dropping input #%d of key %r", run.seq, key)
            yield from outputs
            self._end_run(run)

    def _start_run(self, key) -> _Run | None:
        pending = list(self._inputs.get() or [])
        if not pending:
            return None
        seq, value = pending[0]
        record = self._record.value()
        if record is None or record.seq != seq:
            record = RunRecord(seq)
        elif record.steps or record.calls:
            log.info("replaying input #%d of key %r after recovery: %d step(s) done, %d "
                     "durable result(s) recorded", seq, key, len(record.steps), len(record.calls))
        run = _Run(key, seq, record, deque([InputEvent(value)]))
        self._runs[key] = run
        waiting = len(pending) - 1  # restored ones included
        self.stats.inputs_waiting += waiting - self._waiting.get(key, 0)
        self._waiting[key] = waiting
        return run

    def _end_run(self, run: _Run) -> None:
        del self._runs[run.key]
        pending = list(self._inputs.get() or [])
        self._inputs.update(pending[1:])
        if len(pending) <= 1:
            self.stats.inputs_waiting -= self._waiting.pop(run.key, 0)
        self._record.clear()
        self._sensory_state.clear()  # sensory memory lives for one input

    def _advance(self, run: _Run, outputs: list) -> None:
        """Run steps until the run ends (returns) or parks (raises ``_Parked``)."""
        while True:
            if run.running is not None:
                self._drive(run, outputs)
                continue
            if not run.work:
                if not run.queue:
                    return
                event = run.queue.popleft()
                run.work.extend((event, a) for a in self._actions
                                if isinstance(event, a.listens_to))
                continue
            event, action = run.work.popleft()
            if run.step_index < len(run.record.steps):  # done before a failure: skip it
                run.queue.extend(run.record.steps[run.step_index])
                run.step_index += 1
                continue
            self._start_step(run, event, action, outputs)

    def _start_step(self, run: _Run, event: Event, action: Action, outputs: list) -> None:
        step = Step(run.record.calls, self._count_replay)
        running = _Running(
            action, event, step, f"{run.key}#{run.seq}#{run.step_index}",
            isinstance(event, MemoryEvent),
            KeyedMemoryStore(self._sensory_state, self._check, "sensory memory"),
            KeyedMemoryStore(self._short_term_state, self._check, "short-term memory"))
        ctx = RunnerContextImpl(
            key=run.key, action_name=action.name, step=step, sensory=running.sensory,
            short_term=running.short_term, long_term=self._long_term_memory,
            resources=self._resources.get, mailbox_check=self._check,
            listened=lambda e: any(isinstance(e, a.listens_to) for a in self._actions),
            on_record=lambda: self._record_calls(run), awaitable=action.is_async)
        run.running = running
        self.stats.actions_started += 1
        self._enter(run.key, running)
        try:
            result = action.function(event, ctx)
        except Exception as error:
            self._fail_step(run, error)
        if action.is_async:
            running.coroutine = result
        else:
            self._complete_step(run, outputs)

    def _drive(self, run: _Run, outputs: list) -> None:
        """Resume the running async action until it completes or parks."""
        running = run.running
        send, throw = None, None
        if running.future is not None:
            stats = self.stats
            if not running.future.done():
                if time.monotonic() < running.deadline:
                    raise _Parked()
                stats.durable_calls_timed_out += 1
                throw = DurableCallTimeoutError(
                    f"durable call {describe(running.call.fn)} did not finish within "
                    f"{self._timeout_s:g} s (agents.durable-async.timeout-ms)")
            else:
                stats.durable_call_time_ms += int((time.monotonic() - running.submitted) * 1000)
            stats.durable_calls_in_flight -= 1
            self._progress = True
            if throw is None:
                error = running.future.exception()
                if error is not None:
                    stats.durable_calls_failed += 1
                    throw = DurableCallError(f"durable call {describe(running.call.fn)} failed: "
                                             f"{type(error).__name__}: {error}")
                    throw.__cause__ = error
                else:
                    stats.durable_calls_completed += 1
                    try:
                        send = recordable(running.call.fn, running.future.result())
                    except Exception as not_recordable:
                        throw = not_recordable
                    else:
                        running.step.record(send)
                        self._record_calls(run)
            running.future = running.call = None
        self._enter(run.key, running)  # other keys' actions ran while this one was parked
        while True:
            try:
                if throw is not None:
                    request = running.coroutine.throw(throw)
                else:
                    request = running.coroutine.send(send)
            except StopIteration:
                self._complete_step(run, outputs)
                return
            except Exception as error:
                self._fail_step(run, error)
            throw = None
            if not isinstance(request, DurableCall):
                running.coroutine.close()
                self._fail_step(run, TypeError(
                    f"an action awaited {request!r}; actions may only await "
                    "ctx.durable_execute_async(...)"))
            replayed, send = running.step.replay()
            if replayed:
                continue
            running.call = request
            running.future = self._pool.submit(request)
            running.submitted = time.monotonic()
            running.deadline = running.submitted + self._timeout_s
            self.stats.durable_calls_submitted += 1
            self.stats.durable_calls_in_flight += 1
            return  # the caller loops back here: parks unless the call is already done

    def _count_replay(self) -> None:
        self.stats.durable_calls_replayed += 1

    def _record_calls(self, run: _Run) -> None:
        """A durable result arrived: into Flink state now, unless action state is not
        retained (then only completed steps are, and a replay calls again)."""
        if self._retain:
            self._record.update(run.record)

    def _enter(self, key, running: _Running) -> None:
        """Make ``running`` the action in scope of the long-term memory, before it starts
        and each time it resumes: a set it obtains is bound to its own key."""
        self._context = (key, running.observation_id, running.suppressed)
        if self._memory is not None:
            self._memory.switch_context(*self._context)

    def _complete_step(self, run: _Run, outputs: list) -> None:
        running = run.running
        try:
            memory_events = self._observed_events(running.observation_id)
            sent = running.step.sent + memory_events
            recordable(running.action.function, sent)
            running.sensory.persist()
            running.short_term.persist()
        except Exception as error:
            self._fail_step(run, error)
        if memory_events:
            self.stats.count_observations(e.observation for e in memory_events)
            self.stats.memory_events_emitted += len(memory_events)
        outputs.extend(running.step.outputs)
        run.record.steps.append(sent)
        run.record.calls = []
        self._record.update(run.record)
        run.queue.extend(sent)
        run.step_index += 1
        run.running = None
        self.stats.actions_completed += 1

    def _observed_events(self, observation_id: str) -> list[Event]:
        if self._memory is None or not hasattr(self._memory, "drain_observations"):
            return []
        return [memory_event_for(o) for o in self._memory.drain_observations(observation_id)]

    def _fail_step(self, run: _Run, error: Exception):
        """Drop what the step did (memories, observations, events) and raise
        ``AgentActionError``; the caller decides between failing the job and going on."""
        running = run.running
        run.running = None
        self.stats.actions_failed += 1
        if running.future is not None:  # failed while its call runs: no longer waited for
            self.stats.durable_calls_in_flight -= 1
        if running.coroutine is not None:
            running.coroutine.close()
        if self._memory is not None and hasattr(self._memory, "discard_observations"):
            self._memory.discard_observations(running.observation_id)
        raise AgentActionError(
            f"action '{running.action.name}' of agent {type(self._agent).__name__} failed for "
            f"key {run.key!r} (input #{run.seq}, {type(running.event).__name__}): "
            f"{type(error).__name__}: {error}") from error

    # ------------------------------------------------------------------ long-term memory

    def _long_term_memory(self) -> BaseLongTermMemory:
        """Built on first use (Mem0 and its model load take seconds), then switched to
        the context of the running action."""
        if self._memory is None:
            self._check()
            factory = self._config.get(AgentsOptions.LONG_TERM_MEMORY_FACTORY)
            if factory is None:
                from flink_agents_ltm.runtime.memory.mem0_long_term_memory import (
                    Mem0LongTermMemory,
                )
                build = Mem0LongTermMemory.from_config
            else:
                module, _, name = factory.partition(":")
                build = getattr(importlib.import_module(module), name)
            self._memory = build(self._config.get(AgentsOptions.JOB_ID), self._config,
                                 self._check, resources=self._resources.for_long_term_memory)
            self._memory.switch_context(*self._context)
        return self._memory


def build_agent_stream(env, stream, key_selector, agent: Agent, config,
                       resources: dict[str, tuple[ResourceType, Any]] | None = None) -> Any:
    """``stream`` keyed by ``key_selector`` through the agent operator; ``resources``
    are declared on the environment, in addition to the agent's."""
    return stream.key_by(key_selector).process(
        AgentOperator(agent, config.to_dict(), resources), output_type=Types.PICKLED_BYTE_ARRAY())

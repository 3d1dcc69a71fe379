"""The coroutine driver: runs one action execution until it completes or parks.

An ``async def`` action is a coroutine the driver steps with ``send`` /
``throw`` on the mailbox thread. What it awaits reaches the driver:

* a :class:`~flink_agents_ltm.runtime.durable.DurableCall` is replayed from the
  step's record if it was recorded before a failure, else submitted to the
  worker pool; the action *parks* until the engine resumes it (the call done,
  failed or timed out);
* anything else fails the action with
  :class:`~flink_agents_ltm.runtime.durable.UnsupportedAwaitableError`. While the
  driver steps a coroutine, asyncio sees a running "event loop" that refuses
  every use, so ``await asyncio.sleep(1)``, ``gather`` or ``wait_for`` fail with
  that clear error instead of asyncio's "no running event loop".

Before the action starts and each time it resumes, ``enter`` switches the
long-term memory to the action's context. Mailbox thread only.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from flink_agents_ltm.api.agent import Action
from flink_agents_ltm.api.errors import FlinkAgentsLtmError
from flink_agents_ltm.api.events import Event
from flink_agents_ltm.runtime.action_state.journal import RESULT, STARTED, StepJournal
from flink_agents_ltm.runtime.durable import (
    DurableCall,
    DurableCallError,
    DurableCallTimeoutError,
    NonDeterministicReplayError,
    UnsupportedAwaitableError,
    recordable,
)
from flink_agents_ltm.runtime.event_log import NO_STEP, StepTrace
from flink_agents_ltm.runtime.keyed_memory import KeyedMemoryStore
from flink_agents_ltm.runtime.operator_metrics import OperatorStats
from flink_agents_ltm.runtime.protocols import CallHandle, Clock, WorkerPool
from flink_agents_ltm.runtime.runner_context_impl import RunnerContextImpl
from flink_agents_ltm.runtime.step import Step


class Progress(StrEnum):
    """Where a call into an action, or a run's steps, stopped: the end, or parked on a
    durable call that is still running."""

    DONE = "done"
    PARKED = "parked"


AWAIT_RULE = ("actions run on Flink's mailbox thread, not in an asyncio event loop: they may "
              "only await ctx.durable_execute_async(...) and ctx.chat(...). To wait, sleep "
              "inside a durable call; for calls side by side, let each key await its own.")


class StepFailed(FlinkAgentsLtmError):
    """Internal: the action raised (or misbehaved); ``error`` says how."""

    def __init__(self, error: BaseException):
        super().__init__(str(error))
        self.error = error


@dataclass
class ActionExecution:
    """One action execution in progress (operator-local, never checkpointed)."""

    action: Action
    event: Event
    ctx: RunnerContextImpl
    step: Step
    observation_id: str
    suppressed: bool
    sensory: KeyedMemoryStore
    short_term: KeyedMemoryStore
    coroutine: Coroutine[Any, Any, Any] | None = None
    pending: CallHandle | None = None
    # Calls left running past their timeout or their step's failure: their threads may
    # still store long-term-memory items under this step's observation id.
    abandoned_calls: int = 0
    # The action-state store (None when off).
    journal: StepJournal | None = None
    # The event log's view of the step (a no-op when the log is off), and when it started.
    trace: StepTrace = field(default=NO_STEP)
    started: float = 0.0


class _RefusingEventLoop:
    """What asyncio finds as the running loop while an action runs."""

    def __getattr__(self, name: str) -> Any:
        raise UnsupportedAwaitableError(
            f"the action used asyncio (event loop method '{name}', as asyncio.sleep, gather, "
            f"wait_for and tasks do): {AWAIT_RULE}")


_REFUSING_LOOP = _RefusingEventLoop()


def _refuse_event_loop() -> bool:
    """Make the refusing stand-in asyncio's running loop unless a real one runs; ``True`` when
    it did (then :func:`_restore_event_loop` undoes it). Two calls, no context manager: every
    step of every input comes here."""
    if asyncio._get_running_loop() is not None:
        return False
    # A stand-in, not an AbstractEventLoop: it refuses every method asyncio calls.
    asyncio._set_running_loop(_REFUSING_LOOP)  # type: ignore[arg-type]
    return True


def _restore_event_loop(refused: bool) -> None:
    if refused:
        asyncio._set_running_loop(None)


@contextmanager
def refusing_event_loop() -> Iterator[None]:
    refused = _refuse_event_loop()
    try:
        yield
    finally:
        _restore_event_loop(refused)


class ActionDriver:
    def __init__(self, pool: WorkerPool[Any], clock: Clock, stats: OperatorStats, timeout_s: float,
                 enter: Callable[[ActionExecution], None],
                 on_record: Callable[[], None]):
        self._pool = pool
        self._clock = clock
        self._stats = stats
        self._timeout_s = timeout_s
        self._enter = enter
        self._on_record = on_record

    def start(self, execution: ActionExecution) -> Progress:
        """Call the action; ``DONE`` or ``PARKED`` (async, on a durable call)."""
        self._enter(execution)
        refused = _refuse_event_loop()
        try:
            result = execution.action.function(execution.event, execution.ctx)
        except Exception as error:
            raise StepFailed(error) from error
        finally:
            _restore_event_loop(refused)
        if not execution.action.is_async:
            return Progress.DONE
        execution.coroutine = result
        return self._drive(execution, None, None)

    def resume(self, execution: ActionExecution) -> Progress:
        """A parked action: ``PARKED`` while its call runs and has time left, else go on
        with its outcome (the call's timeout thrown in once it is past its deadline)."""
        handle = execution.pending
        assert handle is not None
        if not handle.done:
            if self._clock.monotonic() < handle.deadline:
                return Progress.PARKED
            if self._pool.time_out(handle):
                execution.pending = None
                # Its started marker stays: the abandoned call may still have its effect, so
                # a replay (or a retry at this position) asks the reconciler; the late
                # result is not written (another start replaces the marker's token).
                execution.abandoned_calls += 1
                self._stats.durable_calls_timed_out += 1
                execution.trace.call(handle.call.name, handle.position, "timed_out",
                                     self._clock.monotonic() - handle.started)
                return self._drive(execution, None, DurableCallTimeoutError(
                    f"durable call {handle.call.name} did not finish within "
                    f"{self._timeout_s:g} s (agents.durable-async.timeout-ms)"))
            # it finished just before the pool could give up on it
        send, throw = self._outcome(execution, handle)
        return self._drive(execution, send, throw)

    def close(self, execution: ActionExecution) -> None:
        """The execution is abandoned (its step failed): a call it awaits runs on, dropped."""
        if execution.pending is not None and not execution.pending.done:
            execution.abandoned_calls += 1
        execution.pending = None
        if execution.coroutine is not None:
            execution.coroutine.close()

    def _outcome(self, execution: ActionExecution,
                 handle: CallHandle) -> tuple[Any, BaseException | None]:
        execution.pending = None
        stats = self._stats
        elapsed = handle.finished - handle.started
        stats.durable_call_time_ms += int(elapsed * 1000)
        handle.call.elapsed_s = elapsed
        result, error = handle.outcome()
        name = handle.call.name
        trace = execution.trace
        # A failed call keeps its started marker: it may have had its effect before it
        # raised, so a replay (or a retry at this position) asks its reconciler.
        if error is not None:
            stats.durable_calls_failed += 1
            trace.call(name, handle.position, "failed", elapsed, error)
            failure = DurableCallError(f"durable call {name} failed: "
                                       f"{type(error).__name__}: {error}")
            failure.__cause__ = error
            return None, failure
        stats.durable_calls_completed += 1
        try:
            value = recordable(name, result)
        except Exception as not_recordable:  # noqa: BLE001 - the action gets it
            trace.call(name, handle.position, "failed", elapsed, not_recordable)
            return None, not_recordable
        trace.call(name, handle.position, "completed", elapsed, result=value)
        execution.step.record(name, value)
        self._on_record()
        return value, None

    def _write_ahead(self, execution: ActionExecution, request: DurableCall) -> tuple[bool, Any]:
        """Action-state store on: ``(True, result)`` if the store holds the call's result
        (written by a process that failed before a checkpoint took it); else the started
        marker is written, the call will write its result ahead, and a call interrupted
        before it returned asks its reconciler first."""
        journal = execution.journal
        assert journal is not None
        position = execution.step.position
        state, value = journal.replay(position, request.name)
        if state == RESULT:
            # The call ran in a process that failed: whether it stored long-term-memory
            # items is unknown here, so the record says it may have.
            execution.trace.call(request.name, position, "recovered", result=value)
            request.replayed = True
            execution.step.record(request.name, value).stored_items = None
            self._stats.durable_calls_replayed += 1
            self._on_record()
            return True, value
        request.reconciling = state == STARTED
        _token, request.on_start, request.on_result = journal.start(position, request.name)
        return False, None

    def _drive(self, execution: ActionExecution, send: Any,
               throw: BaseException | None) -> Progress:
        coroutine = execution.coroutine
        assert coroutine is not None
        self._enter(execution)  # other keys' actions ran while this one was parked
        while True:
            try:
                with refusing_event_loop():
                    request = coroutine.throw(throw) if throw is not None else \
                        coroutine.send(send)
            except StopIteration:
                return Progress.DONE
            except Exception as error:
                raise StepFailed(error) from error
            send, throw = None, None
            if not isinstance(request, DurableCall):
                coroutine.close()
                what = "None (a bare yield, as asyncio.sleep(0) does)" if request is None \
                    else repr(request)
                raise StepFailed(UnsupportedAwaitableError(
                    f"the action awaited {what}, which is not a durable call: {AWAIT_RULE}"))
            try:
                position = execution.step.position
                replayed, send = execution.step.replay(request.name)
            except NonDeterministicReplayError as error:
                coroutine.close()
                raise StepFailed(error) from error
            if replayed:
                request.replayed = True
                execution.trace.call(request.name, position, "replayed", result=send)
                continue
            if execution.journal is not None:
                try:
                    written, send = self._write_ahead(execution, request)
                except NonDeterministicReplayError as error:
                    coroutine.close()
                    raise StepFailed(error) from error
                if written:
                    continue
            handle = self._pool.submit(request, execution.step.position)
            self._stats.durable_calls_submitted += 1
            execution.pending = handle
            if not handle.done:
                return Progress.PARKED
            send, throw = self._outcome(execution, handle)

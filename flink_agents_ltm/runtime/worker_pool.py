"""The worker pool of one operator subtask: durable async calls on daemon threads.

Threading: the mailbox thread submits, waits and times calls out; worker
threads only run calls and report their outcome under the pool's lock.

* At most ``capacity`` calls hold a *slot*. Submitting while all are taken
  blocks the mailbox thread (Flink back-pressure), but never past the earliest
  deadline of the running calls: at its deadline a call is *timed out*, which
  frees its slot.
* Python cannot interrupt a thread, so a timed-out call's thread is
  *abandoned*: it finishes the call on its own and its outcome is dropped. At
  most ``max_abandoned`` threads are abandoned at once; one more fails the job
  with :class:`DurableCallsStuckError` naming the calls, instead of letting
  stuck calls pile up threads.
* The mailbox thread waits in slices of ``WAIT_SLICE_S`` and gives up the moment
  the task is cancelled (:meth:`ThreadWorkerPool.cancel`, or the ``cancelled``
  check the operator gives, which in thread mode asks whether Flink interrupted
  the task thread): it raises :class:`TaskCancelledError`, and ``close`` waits
  no grace. The calls still running are abandoned; Flink's cancel must never
  wait for them (after 180 s it kills the whole TaskManager).
* Right before a worker thread starts a call it runs ``before_call`` (in a
  Python worker process: is the TaskManager still alive?); if that raises, the
  call never starts and gets the error as its outcome.
* Threads are daemons: a Python worker process whose job is gone can exit
  while a call is stuck. Each call runs in a copy of the submitter's
  ``contextvars`` context with its long-term-memory write position set.
"""

from __future__ import annotations

import contextvars
import queue
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any

from flink_agents_ltm.api.errors import DurableCallsStuckError, FlinkAgentsLtmError
from flink_agents_ltm.api.memory.write_position import write_position
from flink_agents_ltm.runtime.durable import DurableCall
from flink_agents_ltm.runtime.protocols import CallHandle, Clock

WAIT_SLICE_S = 0.1  # the mailbox thread checks for a cancel this often while it waits


class TaskCancelledError(FlinkAgentsLtmError, RuntimeError):
    """The task was cancelled (or is closing) while the mailbox thread waited for calls."""


def stuck_message(call: CallHandle, abandoned: Iterable[CallHandle], timeout_s: float,
                  max_abandoned: int, now: float) -> str:
    others = sorted((c for c in abandoned if c is not call), key=lambda c: c.started)
    held = ", ".join(f"{c.call.name} ({now - c.started:.0f} s)" for c in others)
    return (f"durable call {call.call.name} did not return within its timeout of "
            f"{timeout_s:g} s (agents.durable-async.timeout-ms), and {len(others)} earlier "
            f"timed-out call(s) still hold their threads: {held}. Python cannot interrupt a "
            f"thread; the operator abandons at most {max_abandoned} and fails the job rather "
            "than start more. Give the call a timeout of its own (an HTTP client timeout, "
            "say).")


class SystemClock:
    def monotonic(self) -> float:
        return time.monotonic()


class CallState:
    """What every pool keeps of one durable call (a :class:`CallHandle`): set on the
    mailbox thread at submit, its outcome by whoever ran it, through :meth:`finish`
    (the real pool calls it under its lock)."""

    __slots__ = ("call", "position", "started", "deadline", "finished", "_done", "_result",
                 "_error", "_timed_out")

    def __init__(self, call: DurableCall, position: str, started: float, deadline: float):
        self.call = call
        self.position = position
        self.started = started
        self.deadline = deadline
        self.finished = 0.0
        self._done = False
        self._result: Any = None
        self._error: BaseException | None = None
        self._timed_out = False

    @property
    def done(self) -> bool:
        return self._done

    @property
    def timed_out(self) -> bool:
        return self._timed_out

    def outcome(self) -> tuple[Any, BaseException | None]:
        return self._result, self._error

    def finish(self, result: Any, error: BaseException | None, at: float) -> None:
        self._result, self._error, self.finished = result, error, at
        self._done = True

    def time_out(self) -> None:
        self._timed_out = True


class PooledCall(CallState):
    """A call on the thread pool; it runs in a copy of the submitter's context."""

    __slots__ = ("context",)

    def __init__(self, call: DurableCall, position: str, started: float, deadline: float):
        super().__init__(call, position, started, deadline)
        self.context = contextvars.copy_context()

    def run(self) -> tuple[Any, BaseException | None]:
        """On a worker thread."""
        with write_position(self.position):
            try:
                return self.call.run(), None
            except BaseException as error:  # noqa: BLE001 - the action gets it, the worker lives
                return None, error


class ThreadWorkerPool:
    def __init__(self, capacity: int, timeout_s: float, name: str,
                 clock: Clock | None = None, max_abandoned: int | None = None,
                 cancelled: Callable[[], bool] | None = None,
                 before_call: Callable[[], None] | None = None):
        self._capacity = capacity
        self._timeout_s = timeout_s
        self._name = name
        self._clock = clock or SystemClock()
        self._max_abandoned = capacity if max_abandoned is None else max_abandoned
        self._lock = threading.Condition()
        self._running: set[PooledCall] = set()
        self._abandoned: set[PooledCall] = set()
        self._tasks: queue.SimpleQueue[PooledCall | None] = queue.SimpleQueue()
        self._idle = 0
        self._threads = 0
        self._closed = False
        self._cancelled = False
        self._cancelled_check = cancelled  # on the mailbox thread only
        self._before_call = before_call
        self._finished = 0  # calls finished so far (written under the lock)

    def cancel(self) -> None:
        """From any thread: the mailbox thread stops waiting for calls (it raises
        :class:`TaskCancelledError`) and ``close`` waits no grace."""
        with self._lock:
            self._cancelled = True
            self._lock.notify_all()

    @property
    def cancelled(self) -> bool:
        """On the mailbox thread: was the task cancelled (see :meth:`cancel`)?"""
        if not self._cancelled and self._cancelled_check is not None:
            try:
                self._cancelled = bool(self._cancelled_check())
            except Exception:  # noqa: BLE001 - a check that fails cannot tell: go on waiting
                self._cancelled_check = None
        return self._cancelled

    def _slice(self, left: float) -> None:
        """Wait for the lock's notification, ``left`` seconds at most, in one slice; raise
        :class:`TaskCancelledError` if the task is cancelled."""
        if self.cancelled:
            raise TaskCancelledError(
                f"worker pool {self._name}: the task was cancelled while the mailbox thread "
                f"waited for {len(self._running)} durable call(s); they are abandoned")
        self._lock.wait(min(left, WAIT_SLICE_S))

    @property
    def in_flight(self) -> int:
        return len(self._running)

    @property
    def abandoned(self) -> int:
        return len(self._abandoned)

    @property
    def finished(self) -> int:
        return self._finished

    def submit(self, call: DurableCall, position: str) -> PooledCall:
        with self._lock:
            while True:
                if self._closed:
                    raise RuntimeError(f"worker pool {self._name} is closed")
                if len(self._running) < self._capacity:
                    break
                earliest = min(self._running, key=lambda c: c.deadline)
                now = self._clock.monotonic()
                if now >= earliest.deadline:
                    self._time_out_locked(earliest)
                else:
                    self._slice(earliest.deadline - now)
            now = self._clock.monotonic()
            pooled = PooledCall(call, position, now, now + self._timeout_s)
            self._running.add(pooled)
            if self._idle:
                self._idle -= 1
            else:
                self._threads += 1
                threading.Thread(target=self._work, name=f"{self._name}-{self._threads}",
                                 daemon=True).start()
        self._tasks.put(pooled)
        return pooled

    def time_out(self, handle: PooledCall) -> bool:
        """``False`` if the call turned out to be done (it finished just now)."""
        with self._lock:
            if handle.done or handle.timed_out:
                return handle.timed_out
            self._time_out_locked(handle)
            return True

    def wait(self, handles: Iterable[PooledCall] | None, until: float) -> None:
        watched = None if handles is None else list(handles)
        with self._lock:
            while True:
                pending = self._running if watched is None else watched
                if any(h.done or h.timed_out for h in pending) or not pending:
                    return
                left = until - self._clock.monotonic()
                if left <= 0:
                    return
                self._slice(left)

    def sleep(self, until: float) -> None:
        with self._lock:
            while (left := until - self._clock.monotonic()) > 0:
                self._slice(left)  # raises TaskCancelledError once the task is cancelled

    def close(self, grace_s: float) -> list[PooledCall]:
        """Wait up to ``grace_s`` (none once cancelled) for the calls still running;
        answers those that still run (their threads are abandoned)."""
        deadline = self._clock.monotonic() + grace_s
        with self._lock:
            self._closed = True
            while self._running or self._abandoned:
                left = deadline - self._clock.monotonic()
                if left <= 0 or self.cancelled:
                    break
                self._lock.wait(min(left, WAIT_SLICE_S))
            still = sorted(self._running | self._abandoned, key=lambda c: c.started)
            idle, self._idle = self._idle, 0
        for _ in range(idle):
            self._tasks.put(None)
        return still

    def _time_out_locked(self, pooled: PooledCall) -> None:
        self._running.discard(pooled)
        pooled.time_out()
        self._abandoned.add(pooled)
        if len(self._abandoned) > self._max_abandoned:
            raise DurableCallsStuckError(stuck_message(
                pooled, self._abandoned, self._timeout_s, self._max_abandoned,
                self._clock.monotonic()))

    def _work(self) -> None:
        while True:
            pooled = self._tasks.get()
            if pooled is None:
                return
            result: Any = None
            error: BaseException | None = None
            try:
                if self._before_call is not None:
                    self._before_call()
            except BaseException as refused:  # noqa: BLE001 - the call never starts
                error = refused
            else:
                result, error = pooled.context.run(pooled.run)
            finished = self._clock.monotonic()
            with self._lock:
                pooled.finish(result, error, finished)
                self._finished += 1
                self._running.discard(pooled)
                self._abandoned.discard(pooled)
                self._lock.notify_all()
                if self._closed:
                    self._threads -= 1
                    return
                self._idle += 1

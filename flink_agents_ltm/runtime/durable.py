"""Durable calls: results recorded in action state, async ones on a bounded pool.

``ctx.durable_execute_async(fn, ...)`` returns a :class:`DurableCall`; awaiting
it hands the call to the operator, which runs it on the :class:`WorkerPool`
and parks the action until it is done, so the mailbox thread goes on with
other keys. The pool holds at most ``capacity`` calls in flight: submitting
to a full pool blocks the mailbox thread until one finishes, which is Flink
back-pressure (input stops being taken, nothing is dropped).
"""

from __future__ import annotations

import concurrent.futures as futures
import threading
from collections.abc import Callable
from typing import Any

import cloudpickle


class DurableCallError(RuntimeError):
    """A durable call raised; the cause is chained."""


class DurableCallTimeoutError(TimeoutError):
    """A durable async call did not finish within the configured timeout."""


class DurableResultNotSerializableError(TypeError):
    """A durable call returned a value that cannot be recorded in Flink state."""


def describe(fn: Callable[..., Any]) -> str:
    return getattr(fn, "__qualname__", None) or repr(fn)


def recordable(fn: Callable[..., Any], result: Any) -> Any:
    """``result`` if it can be stored in action state (pickled), else a clear error."""
    try:
        cloudpickle.dumps(result)
    except Exception as error:
        raise DurableResultNotSerializableError(
            f"durable call {describe(fn)} returned a {type(result).__name__}, which cannot be "
            f"recorded in Flink state ({type(error).__name__}: {error}); return plain data "
            "(str, numbers, lists, dicts, dataclasses) instead") from error
    return result


class DurableCall:
    """An awaitable durable call; only the agent runtime drives it."""

    def __init__(self, fn: Callable[..., Any], args: tuple, kwargs: dict):
        if not callable(fn):
            raise TypeError(f"durable_execute_async needs a callable, got {type(fn).__name__}")
        self.fn = fn
        self.args = args
        self.kwargs = kwargs

    def run(self) -> Any:
        return self.fn(*self.args, **self.kwargs)

    def __await__(self):
        return (yield self)


class WorkerPool:
    """At most ``capacity`` durable calls running at once, for one operator subtask."""

    def __init__(self, capacity: int, name: str):
        self._capacity = capacity
        self._executor = futures.ThreadPoolExecutor(capacity, thread_name_prefix=name)
        self._running: set[futures.Future] = set()
        self._lock = threading.Lock()

    def submit(self, call: DurableCall) -> futures.Future:
        """Start ``call``; blocks while ``capacity`` calls are running (back-pressure)."""
        while True:
            with self._lock:
                self._running = {f for f in self._running if not f.done()}
                if len(self._running) < self._capacity:
                    future = self._executor.submit(call.run)
                    self._running.add(future)
                    return future
                running = set(self._running)
            futures.wait(running, return_when=futures.FIRST_COMPLETED)

    def wait_any(self, timeout: float) -> None:
        """Block until a running call finishes, or ``timeout`` seconds."""
        with self._lock:
            running = {f for f in self._running if not f.done()}
        if running:
            futures.wait(running, timeout=timeout, return_when=futures.FIRST_COMPLETED)

    def close(self) -> None:
        """Stop taking calls; running ones finish on their own (threads cannot be killed)."""
        self._executor.shutdown(wait=False, cancel_futures=True)

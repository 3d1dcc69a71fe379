"""Durable calls: results recorded in action state under the call's name.

``ctx.durable_execute_async(fn, ...)`` returns a :class:`DurableCall`; awaiting
it hands the call to the operator, which runs it on its worker pool and parks
the action until it is done, so the mailbox thread goes on with other keys.
``ctx.durable_execute`` runs inline. Either way the result is recorded with the
call's name (:func:`call_name`, the function's qualified name), in call order:
a replay after recovery returns the recorded result only to a call of the same
name at the same index, and fails with :class:`NonDeterministicReplayError`
otherwise.
"""

from __future__ import annotations

import functools
import pickle
from collections.abc import Callable
from typing import Any

import cloudpickle

from flink_agents_ltm.api.errors import (  # noqa: F401 - defined in api, re-exported here
    DurableCallError,
    DurableCallTimeoutError,
    DurableResultNotSerializableError,
    NonDeterministicReplayError,
    UnsupportedAwaitableError,
)
from flink_agents_ltm.api.runner_context import CALL_AGAIN


def call_name(fn: Callable[..., Any]) -> str:
    """The identity of a call in action state: ``module.QualifiedName`` of the function
    (of the wrapped one for ``functools.partial``, of the class for a callable object)."""
    while isinstance(fn, functools.partial):
        fn = fn.func
    target = fn if hasattr(fn, "__qualname__") else type(fn)
    module = getattr(target, "__module__", None)
    qualname = getattr(target, "__qualname__", None) or repr(target)
    return f"{module}.{qualname}" if module else qualname


def describe(fn: Callable[..., Any]) -> str:
    """The short name of a function for messages (its qualified name)."""
    return getattr(fn, "__qualname__", None) or repr(fn)


# Builtin scalars: ``pickle`` writes them as ``cloudpickle`` would (cloudpickle only differs
# for functions and classes it pickles by value), and they can always be pickled.
_SCALARS = frozenset({int, float, str, bytes, bool, type(None)})


def is_plain(value: Any, depth: int = 2) -> bool:
    """``value`` is a builtin scalar, or a list, tuple or str-keyed dict of plain values
    (``depth`` levels down): picklable for sure, by ``pickle`` alone."""
    kind = type(value)
    if kind in _SCALARS:
        return True
    if depth <= 0:
        return False
    if kind is list or kind is tuple:
        return all(is_plain(item, depth - 1) for item in value)
    if kind is dict:
        return all(type(k) is str and is_plain(v, depth - 1) for k, v in value.items())
    return False


def dumps(value: Any) -> bytes:
    """``value`` pickled: by ``pickle`` if it is plain data (a counter, a text: the common
    short-term value; several times cheaper), else by ``cloudpickle``."""
    if is_plain(value):
        return pickle.dumps(value, cloudpickle.DEFAULT_PROTOCOL)
    return cloudpickle.dumps(value)


def recordable(name: str, result: Any) -> Any:
    """``result`` if it can be stored in action state (pickled), else a clear error."""
    if is_plain(result):
        return result
    try:
        cloudpickle.dumps(result)
    except Exception as error:
        raise DurableResultNotSerializableError(
            f"durable call {name} returned a {type(result).__name__}, which cannot be "
            f"recorded in Flink state ({type(error).__name__}: {error}); return plain data "
            "(str, numbers, lists, dicts, dataclasses) instead") from error
    return result


class DurableCall:
    """An awaitable durable call; only the agent runtime drives it.

    ``name`` identifies the call in action state (default: :func:`call_name` of
    ``fn``); ``ctx.chat`` names its model and tool calls after the model and tool.
    """

    def __init__(self, fn: Callable[..., Any], args: tuple, kwargs: dict,
                 name: str | None = None, reconciler: Callable[[], Any] | None = None):
        if not callable(fn):
            raise TypeError(f"durable_execute_async needs a callable, got {type(fn).__name__}")
        if reconciler is not None and not callable(reconciler):
            raise TypeError(f"durable_execute_async's reconciler must be callable, got "
                            f"{type(reconciler).__name__}")
        self.fn = fn
        self.args = args
        self.kwargs = kwargs
        self.name = name or call_name(fn)
        self.reconciler = reconciler
        # Set by the runtime (action-state store on): ask the reconciler before calling;
        # write the started marker just before the call and its result as soon as it is
        # known, both on the calling thread (a worker's, not the mailbox thread).
        self.reconciling = False
        self.on_start: Callable[[], None] | None = None
        self.on_result: Callable[[Any], None] | None = None
        # Set by the runtime once awaited: answered from a record without running
        # (``replayed``), or how long the call ran.
        self.replayed = False
        self.elapsed_s: float | None = None

    def begin(self) -> None:
        """The call starts: its started marker is written, once (``run`` begins it if its
        pool has not)."""
        on_start, self.on_start = self.on_start, None
        if on_start is not None:
            on_start()

    def run(self) -> Any:
        self.begin()
        result = CALL_AGAIN
        if self.reconciling and self.reconciler is not None:
            result = self.reconciler()
        if result is CALL_AGAIN:
            result = self.fn(*self.args, **self.kwargs)
        if self.on_result is not None:
            self.on_result(result)
        return result

    def __await__(self):
        return (yield self)

    def __repr__(self) -> str:
        return f"DurableCall({self.name})"

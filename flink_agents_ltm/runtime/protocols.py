"""What the keyed-run engine needs from its host, as small protocols.

The engine (:mod:`~flink_agents_ltm.runtime.keyed_runs`) never imports Flink.
The Flink adapter (:mod:`~flink_agents_ltm.runtime.agent_operator`) hands it
PyFlink's state handles and timer service, which fit these protocols as they
are; the test harness (:mod:`~flink_agents_ltm.runtime.harness`) hands it
in-memory ones with a manual clock and a controllable worker pool.

Keyed state and timers follow Flink's rule: they act on the key the host set
before calling the engine (the *current key*), and only on the mailbox thread.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

from flink_agents_ltm.runtime.durable import DurableCall
from flink_agents_ltm.runtime.run_record import (
    BusyKey,
    RunRecord,
    decode_busy,
    decode_run,
    encode_busy,
    encode_run,
)

T = TypeVar("T")
K = TypeVar("K")
V = TypeVar("V")


class ValueState(Protocol[T]):
    """One value of the current key (``None``: none)."""

    def value(self) -> T | None: ...

    def update(self, value: T) -> None: ...

    def clear(self) -> None: ...


class MapState(Protocol[K, V]):
    """A map of the current key."""

    def get(self, key: K) -> V | None: ...

    def put(self, key: K, value: V) -> None: ...

    def remove(self, key: K) -> None: ...

    def contains(self, key: K) -> bool: ...

    def items(self) -> Iterable[tuple[K, V]]: ...

    def is_empty(self) -> bool: ...

    def clear(self) -> None: ...


class EncodedValueState(Generic[T]):
    """A :class:`ValueState` of ``T`` kept in a host's value state in its persisted form:
    ``encode`` on the way in, ``decode`` (which reads and migrates every known format
    version) on the way out."""

    __slots__ = ("_state", "_encode", "_decode")

    def __init__(self, state: ValueState[Any], encode: Callable[[T], Any],
                 decode: Callable[[Any], T]):
        self._state = state
        self._encode = encode
        self._decode = decode

    def value(self) -> T | None:
        stored = self._state.value()
        return None if stored is None else self._decode(stored)

    def update(self, value: T) -> None:
        self._state.update(self._encode(value))

    def clear(self) -> None:
        self._state.clear()


@dataclass(frozen=True)
class KeyedStates:
    """The engine's keyed state, each handle scoped to the current key.

    * ``next_seq`` (LONG): the key's input counter. Present while the key has work,
      and for good once one of its actions stored a long-term-memory item (the
      counter is part of every replay-stable item id).
    * ``busy`` (a :class:`~flink_agents_ltm.runtime.run_record.BusyKey`, stored
      versioned): present while the key has work: the first pending input and the
      drain timers registered.
    * ``pending`` (LONG -> pickled input): the key's inputs not yet finished, by
      sequence number; the first one is the input being run.
    * ``run`` (a :class:`~flink_agents_ltm.runtime.run_record.RunRecord`, stored
      versioned): the progress of the first pending input's run, once it has any.
    * ``short_term`` (STRING -> pickled): short-term memory of the key.
    * ``incarnation`` (STRING): the incarnation the key's kept counter counts in
      (:mod:`~flink_agents_ltm.runtime.incarnation`), written once beside a counter kept
      for good; absent beside a counter of a build before incarnations (legacy).

    A host builds it with :meth:`of_host_states` from its own state handles, which hold
    the records in their persisted form (:mod:`~flink_agents_ltm.runtime.run_record`).
    """

    next_seq: ValueState[int]
    busy: ValueState[BusyKey]
    pending: MapState[int, Any]
    run: ValueState[RunRecord]
    short_term: MapState[str, bytes]
    incarnation: ValueState[str]

    @classmethod
    def of_host_states(cls, next_seq: ValueState[Any], busy: ValueState[Any],
                       pending: MapState[Any, Any], run: ValueState[Any],
                       short_term: MapState[Any, Any],
                       incarnation: ValueState[Any]) -> KeyedStates:
        """The engine's view of the host's handles: busy and run records are encoded
        with their format version, and decoded (migrated) from any readable one."""
        return cls(next_seq, EncodedValueState(busy, encode_busy, decode_busy), pending,
                   EncodedValueState(run, encode_run, decode_run), short_term, incarnation)


class Timers(Protocol):
    """Timers of the current key (PyFlink's ``TimerService`` fits as it is)."""

    def current_processing_time(self) -> int: ...

    def register_processing_time_timer(self, timestamp: int) -> None: ...

    def register_event_time_timer(self, timestamp: int) -> None: ...

    def delete_processing_time_timer(self, timestamp: int) -> None: ...

    def delete_event_time_timer(self, timestamp: int) -> None: ...


class Clock(Protocol):
    """Seconds on a monotonic clock: call deadlines and durations."""

    def monotonic(self) -> float: ...


class CallHandle(Protocol):
    """One durable call on the worker pool, as the engine sees it (mailbox thread)."""

    call: DurableCall
    position: str  # the call's write position in its step (call<k>)
    started: float  # clock time the call started
    deadline: float  # clock time after which it times out
    finished: float  # clock time it returned or raised (once done)

    @property
    def done(self) -> bool:
        """The call returned or raised."""

    @property
    def timed_out(self) -> bool:
        """The pool gave up waiting (its thread may still run it)."""

    def outcome(self) -> tuple[Any, BaseException | None]:
        """``(result, None)`` or ``(None, error)`` of a done call."""


Handle = TypeVar("Handle", bound=CallHandle)


class WorkerPool(Protocol[Handle]):
    """Runs durable calls off the mailbox thread, at most ``capacity`` at once.

    ``Handle`` is the pool's own kind of :class:`CallHandle`: a pool is only ever
    given back handles it made, so the engine holds a ``WorkerPool[Any]``.

    Every method runs on the mailbox thread. No method blocks past the earliest
    deadline of the calls it waits for: a call past its deadline is *timed out*:
    its slot is freed for new calls while its thread, which Python cannot
    interrupt, is *abandoned* until the call returns. Too many abandoned threads
    raise :class:`~flink_agents_ltm.runtime.worker_pool.DurableCallsStuckError`.
    """

    @property
    def in_flight(self) -> int:
        """Calls holding a slot."""

    @property
    def finished(self) -> int:
        """How many calls have finished so far (a counter: a host looks for calls that are
        done only when it moved)."""

    @property
    def abandoned(self) -> int:
        """Timed-out calls whose thread still runs."""

    def submit(self, call: DurableCall, position: str) -> Handle:
        """Start ``call`` with its long-term-memory write position set on the thread
        that runs it; while every slot is taken, waits for one (back-pressure)."""

    def time_out(self, handle: Handle) -> bool:
        """Give up on a call past its deadline: free its slot, abandon its thread.
        ``False`` if it turned out to be done."""

    def sleep(self, until: float) -> None:
        """The mailbox thread waits until ``until`` (monotonic seconds) while the calls
        run on; only at the end of a bounded input, for a retry's backoff."""

    def wait(self, handles: Iterable[Handle] | None, until: float) -> None:
        """Block until one of ``handles`` (any call if ``None``) is done, or ``until``."""

    def close(self, grace_s: float) -> list[Handle]:
        """Take no more calls; wait up to ``grace_s`` for the running ones; answer
        those still running."""

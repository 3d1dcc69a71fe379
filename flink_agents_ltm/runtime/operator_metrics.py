"""What the agent operator does, counted cheaply and published through Flink's metrics.

:class:`OperatorStats` is plain Python ints that the operator bumps on its
mailbox thread (an attribute increment per event, nothing allocated).
:class:`OperatorMetrics` registers the same numbers in a ``flink_agents``
metric group of the operator and copies them over at the end of each Flink
callback (``process_element``, ``on_timer``, ``close``): one comparison per
number, and a call into Flink only for the ones that changed. So they show in
the web UI, the REST API and every configured reporter.

Gauges never call back into Python from a Flink thread: in thread mode a
Python gauge would be evaluated by the reporter on a Java thread while the
mailbox thread runs Python. There the operator *sets* the gauge's value
instead (PyFlink's embedded ``distribution`` is exactly a settable
``Gauge<Long>``); in process mode PyFlink itself evaluates Python gauges in
the Python worker, so a callable is registered.
"""

from __future__ import annotations

import operator
from collections.abc import Iterable
from typing import Any

from flink_agents_ltm.api.memory.observation import MemoryObservation, MemoryOp

GROUP = "flink_agents"

# (attribute of OperatorStats, Flink counter name)
COUNTERS = (
    ("inputs_received", "inputsReceived"),
    ("actions_started", "actionsStarted"),
    ("actions_completed", "actionsCompleted"),
    ("actions_failed", "actionsFailed"),
    ("action_retries", "actionRetries"),
    ("durable_calls_submitted", "durableCallsSubmitted"),
    ("durable_calls_completed", "durableCallsCompleted"),
    ("durable_calls_failed", "durableCallsFailed"),
    ("durable_calls_timed_out", "durableCallsTimedOut"),
    ("durable_calls_replayed", "durableCallsReplayed"),
    ("durable_call_time_ms", "durableCallTimeMsTotal"),
    ("memory_events_emitted", "memoryEventsEmitted"),
)
# (attribute, value of the ``op`` group) of counter ``memoryOperations``
MEMORY_OPERATIONS = (
    ("memory_adds", MemoryOp.ADD.value),
    ("memory_gets", MemoryOp.GET.value),
    ("memory_searches", MemoryOp.SEARCH.value),
    ("memory_updates", MemoryOp.UPDATE.value),
    ("memory_deletes", MemoryOp.DELETE.value),
)
GAUGES = (
    ("durable_calls_in_flight", "durableCallsInFlight"),
    ("durable_calls_abandoned", "durableCallsAbandoned"),
    ("keys_parked", "keysParked"),
    ("inputs_waiting", "inputsWaiting"),
)


class OperatorStats:
    """Totals of one operator subtask since it opened, and four current levels."""

    __slots__ = tuple(a for a, _ in COUNTERS + MEMORY_OPERATIONS + GAUGES)
    # The slots above, declared for the type checker (all start at 0).
    inputs_received: int
    actions_started: int
    actions_completed: int
    actions_failed: int
    action_retries: int
    durable_calls_submitted: int
    durable_calls_completed: int
    durable_calls_failed: int
    durable_calls_timed_out: int
    durable_calls_replayed: int
    durable_call_time_ms: int
    memory_events_emitted: int
    memory_adds: int
    memory_gets: int
    memory_searches: int
    memory_updates: int
    memory_deletes: int
    durable_calls_in_flight: int
    durable_calls_abandoned: int
    keys_parked: int
    inputs_waiting: int

    def __init__(self) -> None:
        for attribute in self.__slots__:
            setattr(self, attribute, 0)

    def count_observations(self, observations: Iterable[MemoryObservation]) -> None:
        """Long-term memory operations of a completed action (its drained observations)."""
        for observation in observations:
            op = observation.op
            if op is MemoryOp.ADD:
                self.memory_adds += 1
            elif op is MemoryOp.SEARCH:
                self.memory_searches += 1
            elif op is MemoryOp.GET:
                self.memory_gets += 1
            elif op is MemoryOp.UPDATE:
                self.memory_updates += 1
            else:
                self.memory_deletes += 1

    def summary(self) -> str:
        """One line of totals, for the log when the operator closes."""
        return (
            f"{self.inputs_received} input(s); actions {self.actions_started} started, "
            f"{self.actions_completed} completed, {self.actions_failed} failed, "
            f"{self.action_retries} retried; durable calls "
            f"{self.durable_calls_submitted} submitted, {self.durable_calls_completed} completed, "
            f"{self.durable_calls_failed} failed, {self.durable_calls_timed_out} timed out, "
            f"{self.durable_calls_replayed} replayed, {self.durable_call_time_ms} ms in total; "
            f"memory operations {self.memory_adds} add, {self.memory_gets} get, "
            f"{self.memory_searches} search, {self.memory_updates} update, "
            f"{self.memory_deletes} delete; "
            f"{self.memory_events_emitted} memory event(s); left: "
            f"{self.durable_calls_in_flight} call(s) in flight, {self.durable_calls_abandoned} "
            f"abandoned, {self.keys_parked} key(s) parked, {self.inputs_waiting} input(s) "
            "waiting")

    def progress(self) -> str:
        """One short line of where the operator stands, for the periodic progress log."""
        return (
            f"{self.inputs_received} input(s) ({self.inputs_waiting} waiting, "
            f"{self.keys_parked} key(s) parked); actions {self.actions_completed} completed, "
            f"{self.actions_failed} failed; durable calls {self.durable_calls_completed} "
            f"completed, {self.durable_calls_in_flight} in flight, "
            f"{self.durable_calls_timed_out} timed out")


class OperatorMetrics:
    """``stats`` registered under ``<operator>.flink_agents``; :meth:`publish` copies
    what changed into Flink."""

    def __init__(self, metric_group: Any, stats: OperatorStats):
        self._stats = stats
        group = metric_group.add_group(GROUP)
        self.group = group  # where the user metric groups and token metrics go too
        self.settable_gauges = _is_embedded(group)
        self._counters = [(a, group.counter(name)) for a, name in COUNTERS]
        self._counters += [(a, group.add_group("op", op).counter("memoryOperations"))
                           for a, op in MEMORY_OPERATIONS]
        self._published = [0] * len(self._counters)
        # every counter's value in one call (the loop below then only looks at changes)
        self._counter_values = operator.attrgetter(*(a for a, _ in self._counters))
        self._last_counters = tuple(self._published)
        if self.settable_gauges:
            self._gauges = [(a, group.distribution(name)) for a, name in GAUGES]
            for _, gauge in self._gauges:
                gauge.update(0)
        else:
            self._gauges = []
            for attribute, name in GAUGES:
                group.gauge(name, lambda a=attribute: getattr(stats, a))
        self._gauge_values = [0] * len(self._gauges)

    def publish(self) -> None:
        """On the mailbox thread, at the end of a Flink callback."""
        stats, published = self._stats, self._published
        current = self._counter_values(stats)
        if current != self._last_counters:
            self._last_counters = current
            for i, value in enumerate(current):
                if value != published[i]:
                    self._counters[i][1].inc(value - published[i])
                    published[i] = value
        values = self._gauge_values
        for i, (attribute, gauge) in enumerate(self._gauges):
            value = getattr(stats, attribute)
            if value != values[i]:
                gauge.update(value)
                values[i] = value


def _is_embedded(group: Any) -> bool:
    """Thread mode: PyFlink's embedded metric group, backed by Java metrics through Pemja."""
    return type(group).__module__.startswith("pyflink.fn_execution.metrics.embedded")

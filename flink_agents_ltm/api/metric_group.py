"""User metrics of an agent: ``ctx.agent_metric_group`` and ``ctx.action_metric_group``.

The same names as upstream Flink Agents' ``flink_agents.api.metric_group``:

.. code-block:: python

    @action(InputEvent)
    def first_action(event, ctx):
        ctx.agent_metric_group.get_counter("numInputEvent").inc()
        ctx.agent_metric_group.get_meter("numInputEventPerSec").mark()
        ctx.action_metric_group.get_histogram("payloadChars").update(len(event.input))

The agent group is the operator's ``flink_agents`` group (where the runtime's own metrics
are); an action's group is its sub-group ``action.<action name>``. Asking twice for a
metric of one name answers the same metric. Use them on the mailbox thread (in the
action, not inside a durable call).

Flink's Python API has settable values of whole numbers only: a gauge's value reaches
Flink as an ``int``, and a histogram keeps its window's statistics in Python
(``get_mean`` / ``get_min`` / ``get_max``) and reports each value through Flink's
``distribution``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

__all__ = ["Counter", "Gauge", "Histogram", "Meter", "MetricGroup"]


class MetricGroup(ABC):
    """A named group of metrics; sub-groups nest."""

    @abstractmethod
    def get_sub_group(self, name: str, value: str | None = None) -> MetricGroup:
        """The sub-group ``name``, or with ``value`` the key-value sub-group
        ``name=value`` (a label in reporters that have labels)."""

    @abstractmethod
    def get_counter(self, name: str) -> Counter: ...

    @abstractmethod
    def get_meter(self, name: str) -> Meter: ...

    @abstractmethod
    def get_gauge(self, name: str) -> Gauge: ...

    @abstractmethod
    def get_histogram(self, name: str, window_size: int = 100) -> Histogram: ...


class Counter(ABC):
    @abstractmethod
    def inc(self, n: int = 1) -> None: ...

    @abstractmethod
    def dec(self, n: int = 1) -> None: ...

    @abstractmethod
    def get_count(self) -> int: ...


class Meter(ABC):
    """Events per second (over the last minute)."""

    @abstractmethod
    def mark(self, n: int = 1) -> None: ...

    @abstractmethod
    def get_rate(self) -> float: ...


class Histogram(ABC):
    """Statistics of the last ``window_size`` values."""

    @abstractmethod
    def update(self, value: int) -> None: ...

    @abstractmethod
    def get_mean(self) -> float: ...

    @abstractmethod
    def get_max(self) -> int: ...

    @abstractmethod
    def get_min(self) -> int: ...


class Gauge(ABC):
    """A value the action sets."""

    @abstractmethod
    def update(self, value: float) -> None: ...

    @abstractmethod
    def get_value(self) -> float: ...

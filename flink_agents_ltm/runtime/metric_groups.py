"""The metric groups actions get (``ctx.agent_metric_group``, ``ctx.action_metric_group``)
and the runtime's per-model token metrics, over a PyFlink metric group or none.

Every metric keeps its value in Python (so ``get_count`` and friends answer, on the
harness too) and, when the group has a PyFlink group behind it, forwards each change to
Flink: counters and meters as Flink's, a gauge as a settable value (thread mode: PyFlink's
embedded ``distribution``, which is a settable ``Gauge<Long>``; process mode: a Python
gauge PyFlink evaluates in the worker), a histogram's values through ``distribution``.
A metric is registered with Flink once: a second ask for the same name answers the same
object (PyFlink would register a second one under a colliding name, which Flink drops).

Mailbox thread only, like the rest of ``ctx``.
"""

from __future__ import annotations

import time
from collections import deque
from typing import Any

from flink_agents_ltm.api.metric_group import Counter, Gauge, Histogram, Meter, MetricGroup

__all__ = ["ActionMetrics", "RuntimeMetricGroup"]

METER_SPAN_S = 60.0


class _Registry:
    """The metrics created under one root, by (path, kind, name)."""

    def __init__(self, embedded: bool):
        self.embedded = embedded
        self.metrics: dict[tuple[tuple[str, ...], str, str], Any] = {}


class RuntimeMetricGroup(MetricGroup):
    """``flink_group``: PyFlink's metric group to forward to, or ``None`` (in memory)."""

    def __init__(self, flink_group: Any = None, *, _path: tuple[str, ...] = (),
                 _registry: _Registry | None = None):
        self._flink = flink_group
        self._path = _path
        self._registry = _registry or _Registry(_is_embedded(flink_group))
        self._groups: dict[tuple[str, str | None], RuntimeMetricGroup] = {}

    @property
    def path(self) -> tuple[str, ...]:
        return self._path

    def get_sub_group(self, name: str, value: str | None = None) -> RuntimeMetricGroup:
        _check_name(name, "sub-group")
        if value is None and "=" in name:
            raise ValueError(f"a sub-group name must not contain '=' (got {name!r}); use "
                             "get_sub_group(name, value) for a key-value group")
        found = self._groups.get((name, value))
        if found is None:
            flink = None
            if self._flink is not None:
                flink = self._flink.add_group(name) if value is None else \
                    self._flink.add_group(name, str(value))
            path = (*self._path, name) if value is None else (*self._path, name, str(value))
            found = RuntimeMetricGroup(flink, _path=path, _registry=self._registry)
            self._groups[(name, value)] = found
        return found

    def get_counter(self, name: str) -> _Counter:
        counter: _Counter = self._metric("counter", name, lambda: _Counter(
            None if self._flink is None else self._flink.counter(name)))
        return counter

    def get_meter(self, name: str) -> _Meter:
        meter: _Meter = self._metric("meter", name, lambda: _Meter(
            None if self._flink is None else self._flink.meter(name)))
        return meter

    def get_gauge(self, name: str) -> _Gauge:
        gauge: _Gauge = self._metric("gauge", name, lambda: _Gauge(self._flink, name,
                                                                   self._registry.embedded))
        return gauge

    def get_histogram(self, name: str, window_size: int = 100) -> _Histogram:
        if isinstance(window_size, bool) or not isinstance(window_size, int) or \
                window_size < 1:
            raise ValueError(f"a histogram's window_size must be a positive int, got "
                             f"{window_size!r}")
        histogram: _Histogram = self._metric("histogram", name, lambda: _Histogram(
            None if self._flink is None else self._flink.distribution(name), window_size))
        return histogram

    def values(self) -> dict[str, Any]:
        """``{"action.a.model.m.promptTokens": value, ...}`` of every metric created under
        this group (counters: the count; meters: the count marked; gauges: the value;
        histograms: the values in the window), names relative to this group."""
        found = {}
        for (path, _kind, name), metric in self._registry.metrics.items():
            if path[:len(self._path)] == self._path:
                found[".".join((*path[len(self._path):], name))] = metric.snapshot()
        return found

    def _metric(self, kind: str, name: str, build: Any) -> Any:
        _check_name(name, kind)
        key = (self._path, kind, name)
        metric = self._registry.metrics.get(key)
        if metric is None:
            clash = [k for k in self._registry.metrics if k[0] == self._path and k[2] == name]
            if clash:
                raise ValueError(f"metric '{name}' of this group is a {clash[0][1]}, not a "
                                 f"{kind}; give the {kind} another name")
            metric = build()
            self._registry.metrics[key] = metric
        return metric


class _Counter(Counter):
    def __init__(self, flink: Any):
        self._flink = flink
        self._count = 0

    def inc(self, n: int = 1) -> None:
        self._count += n
        if self._flink is not None:
            self._flink.inc(n)

    def dec(self, n: int = 1) -> None:
        self._count -= n
        if self._flink is not None:
            self._flink.dec(n)

    def get_count(self) -> int:
        return self._count

    def snapshot(self) -> int:
        return self._count


class _Meter(Meter):
    def __init__(self, flink: Any):
        self._flink = flink
        self._count = 0
        self._marks: deque[tuple[float, int]] = deque()
        self._since = time.monotonic()

    def mark(self, n: int = 1) -> None:
        now = time.monotonic()
        self._count += n
        self._marks.append((now, n))
        self._forget(now)
        if self._flink is not None:
            self._flink.mark_event(n)

    def get_rate(self) -> float:
        now = time.monotonic()
        self._forget(now)
        span = min(METER_SPAN_S, max(now - self._since, 1e-3))
        return sum(n for _, n in self._marks) / span

    def _forget(self, now: float) -> None:
        while self._marks and self._marks[0][0] < now - METER_SPAN_S:
            self._marks.popleft()

    def snapshot(self) -> int:
        return self._count


class _Gauge(Gauge):
    def __init__(self, flink_group: Any, name: str, embedded: bool):
        self._value: float = 0
        self._settable = None
        if flink_group is not None:
            if embedded:
                self._settable = flink_group.distribution(name)
                self._settable.update(0)
            else:
                flink_group.gauge(name, lambda: int(self._value))

    def update(self, value: float) -> None:
        self._value = value
        if self._settable is not None:
            self._settable.update(int(value))

    def get_value(self) -> float:
        return self._value

    def snapshot(self) -> float:
        return self._value


class _Histogram(Histogram):
    def __init__(self, flink: Any, window_size: int):
        self._flink = flink
        self._window: deque[int] = deque(maxlen=window_size)

    def update(self, value: int) -> None:
        self._window.append(value)
        if self._flink is not None:
            self._flink.update(int(value))

    def get_mean(self) -> float:
        return sum(self._window) / len(self._window) if self._window else 0.0

    def get_max(self) -> int:
        return max(self._window, default=0)

    def get_min(self) -> int:
        return min(self._window, default=0)

    def snapshot(self) -> list[int]:
        return list(self._window)


class ActionMetrics:
    """The runtime's metrics of one action: ``action.<name>`` of the agent group, and
    under it ``model.<chat model>`` with the token usage and latency of its model calls."""

    def __init__(self, agent_group: RuntimeMetricGroup, action_name: str):
        self._agent_group = agent_group
        self._action_name = action_name
        self._group: RuntimeMetricGroup | None = None

    @property
    def agent_group(self) -> RuntimeMetricGroup:
        return self._agent_group

    @property
    def group(self) -> RuntimeMetricGroup:
        if self._group is None:  # built on first use: most actions never ask
            self._group = self._agent_group.get_sub_group("action", self._action_name)
        return self._group

    def model_call(self, model: str, prompt_tokens: int | None,
                   completion_tokens: int | None, latency_ms: int | None) -> None:
        """A chat model answered (not a replayed answer): count its call, its tokens (when
        the model reported them) and its latency."""
        group = self.group.get_sub_group("model", model)
        group.get_counter("modelCalls").inc()
        if prompt_tokens is not None:
            group.get_counter("promptTokens").inc(prompt_tokens)
        if completion_tokens is not None:
            group.get_counter("completionTokens").inc(completion_tokens)
        if latency_ms is not None:
            group.get_counter("modelLatencyMsTotal").inc(latency_ms)


def _check_name(name: object, what: str) -> None:
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"a {what} name must be a non-empty str, got {name!r}")


def _is_embedded(group: Any) -> bool:
    """Thread mode: PyFlink's embedded metric group, backed by Java metrics through Pemja."""
    return group is not None and \
        type(group).__module__.startswith("pyflink.fn_execution.metrics.embedded")

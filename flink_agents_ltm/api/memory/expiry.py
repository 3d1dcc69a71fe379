"""Retention of long-term memory items: a time to live, and what "expired" means.

An item added or updated with a ``ttl`` (seconds, or a :class:`~datetime.timedelta`) carries
two fields in its stored metadata, written here and nowhere else:

* ``expires_at``: the absolute time it expires, seconds since the epoch (UTC), a number so
  that every store orders it natively;
* ``ttl_seconds``: the ttl it was given, so that a read can extend it (refresh on read).

Callers cannot set either (they are reserved metadata keys); reads return the expiry as
:attr:`MemorySetItem.expires_at` instead of inside ``metadata``. An item is expired once
``expires_at <= now``; from that moment no ``get``, ``search`` or ``update`` sees it, on every
store, because the base class adds :func:`visible_at` to the filter of every read: the same
filter language (:mod:`flink_agents_ltm.api.filters`) and the same path that caller filters
take. Expiry is then made erasure by a sweep (``BaseLongTermMemory.sweep_expired``), which
deletes expired rows for real, text included.

Time comes from the memory's clock (``time.time`` unless one is injected), so tests move a
manual clock instead of sleeping.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Final

from flink_agents_ltm.api.filters import AllOf, Condition, MetadataFilter, NoneOf, Operator

__all__ = [
    "DEFAULT_TTL",
    "EXPIRES_AT",
    "EXPIRY_FIELDS",
    "TTL_FIELD",
    "Clock",
    "Retention",
    "check_ttl",
    "expired_at",
    "expiry_fields",
    "split_expiry",
    "visible_at",
    "with_visibility",
]

EXPIRES_AT: Final = "expires_at"
TTL_FIELD: Final = "ttl_seconds"
EXPIRY_FIELDS: Final = frozenset({EXPIRES_AT, TTL_FIELD})

Clock = Callable[[], float]


class _DefaultTtl:
    """The ``ttl`` argument left out: the memory's default ttl applies (see
    :class:`Retention`); ``ttl=None`` says "never expires" instead."""

    _instance: _DefaultTtl | None = None

    def __new__(cls) -> _DefaultTtl:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "DEFAULT_TTL"

    def __reduce__(self) -> str:
        return "DEFAULT_TTL"


DEFAULT_TTL: Final = _DefaultTtl()


def check_ttl(ttl: Any, what: str = "ttl") -> float | None:
    """``ttl`` in seconds (``None``: never expires). Seconds are an int or float, or a
    ``timedelta``; anything else, zero, negative, NaN or infinite is refused naming ``what``."""
    if ttl is None:
        return None
    if isinstance(ttl, timedelta):
        seconds = ttl.total_seconds()
    elif isinstance(ttl, int | float) and not isinstance(ttl, bool):
        seconds = float(ttl)
    else:
        raise TypeError(f"{what} must be seconds (an int or float) or a timedelta, got "
                        f"{type(ttl).__name__}")
    if not math.isfinite(seconds) or seconds <= 0:
        raise ValueError(f"{what} must be a positive, finite number of seconds, got {ttl!r} "
                         "(None: the item never expires)")
    return seconds


@dataclass(frozen=True, slots=True)
class Retention:
    """How long items live when a write names no ``ttl`` (``default_ttl`` seconds, ``None``:
    forever) and whether a read extends the expiry of the items it returns by their own
    ttl (``refresh_on_read``, as LangGraph's ``TTLConfig.refresh_on_read``)."""

    default_ttl: float | None = None
    refresh_on_read: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "default_ttl",
                           check_ttl(self.default_ttl, "long-term-memory.ttl"))
        if not isinstance(self.refresh_on_read, bool):
            raise TypeError(f"refresh_on_read must be a bool, got "
                            f"{type(self.refresh_on_read).__name__}")

    def ttl_of(self, ttl: Any, what: str) -> float | None:
        """The ttl a write gets: its own, else the default."""
        return self.default_ttl if ttl is DEFAULT_TTL else check_ttl(ttl, what)


def expiry_fields(ttl: float | None, now: float) -> dict[str, float]:
    """The stored fields of an item that lives ``ttl`` seconds from ``now`` (none: forever)."""
    return {} if ttl is None else {EXPIRES_AT: now + ttl, TTL_FIELD: ttl}


def split_expiry(metadata: Mapping[str, Any]) -> tuple[dict[str, Any], float | None,
                                                       float | None]:
    """A stored item's metadata as the caller wrote it, its expiry and its ttl."""
    caller = {k: v for k, v in metadata.items() if k not in EXPIRY_FIELDS}
    expires, ttl = metadata.get(EXPIRES_AT), metadata.get(TTL_FIELD)
    number = (int, float)
    return (caller,
            float(expires) if isinstance(expires, number) and not isinstance(expires, bool)
            else None,
            float(ttl) if isinstance(ttl, number) and not isinstance(ttl, bool) else None)


def visible_at(now: float) -> MetadataFilter:
    """Items not expired at ``now``: no expiry, or one after ``now``."""
    return NoneOf((expired_at(now),))


def expired_at(now: float) -> Condition:
    """Items expired at ``now`` (what a sweep deletes)."""
    return Condition(EXPIRES_AT, Operator.LTE, now)


def with_visibility(filters: MetadataFilter | None, now: float) -> MetadataFilter:
    """A read's filter: the caller's (if any) and :func:`visible_at`."""
    visible = visible_at(now)
    return visible if filters is None else AllOf((filters, visible))

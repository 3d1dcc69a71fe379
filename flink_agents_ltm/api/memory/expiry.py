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
deletes the rows :func:`expired_at` names for real, text included. What a read returns comes
through :func:`read_back` (the expiry out of the metadata, refreshed on read when asked).

Time comes from the memory's clock (``time.time`` unless one is injected), so tests move a
manual clock instead of sleeping.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import timedelta
from typing import Any, Final, Protocol, TypeVar

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
    "read_back",
    "split_expiry",
    "updated_expiry",
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

    def update_ttl(self, ttl: Any) -> tuple[bool, float | None]:
        """Whether an update with ``ttl`` keeps the item's expiry (no ttl given and no
        default), and else the ttl it gets."""
        keep = ttl is DEFAULT_TTL and self.default_ttl is None
        return keep, None if keep else self.ttl_of(ttl, "update(ttl=...)")


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


def updated_expiry(stored: Mapping[str, Any], keep: bool, ttl: float | None,
                   now: float) -> tuple[dict[str, Any], dict[str, Any]]:
    """An item being updated: its metadata as the caller wrote it, and the expiry fields it
    is written with (its own when ``keep``, else those of ``ttl`` from ``now``)."""
    expiry = ({k: stored[k] for k in EXPIRY_FIELDS if k in stored} if keep
              else expiry_fields(ttl, now))
    return split_expiry(stored)[0], expiry


class _Stored(Protocol):
    """An item read from a store (a ``MemorySetItem``)."""

    @property
    def id(self) -> str: ...
    @property
    def metadata(self) -> Mapping[str, Any]: ...


_Item = TypeVar("_Item", bound=_Stored)


def read_back(found: Sequence[_Item], now: float,
              refresh_on_read: bool) -> tuple[list[_Item], dict[str, float]]:
    """Items as a read returns them: the expiry out of the metadata into ``expires_at``;
    with ``refresh_on_read``, each expiry moved to ``now`` plus the item's ttl. Also the
    new expiries (id -> time) the store must be told of."""
    refreshed: dict[str, float] = {}
    items = []
    for item in found:
        if EXPIRY_FIELDS.isdisjoint(item.metadata):  # written without a ttl
            items.append(item)
            continue
        caller, expires_at, ttl = split_expiry(item.metadata)
        if refresh_on_read and expires_at is not None and ttl is not None:
            expires_at = refreshed[item.id] = now + ttl
        items.append(replace(item, metadata=caller, expires_at=expires_at))  # type: ignore[type-var]
    return items, refreshed

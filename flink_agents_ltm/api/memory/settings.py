"""What the runtime sets on a long-term memory after building it, each with a default: its
size limits, its retention (default ttl, refresh on read), its clock, its audit log and the
reranker of ``search(..., rerank=True)``. Mixed into
:class:`~flink_agents_ltm.api.memory.long_term_memory.BaseLongTermMemory`."""

from __future__ import annotations

import time
from typing import Any

from flink_agents_ltm.api.memory.audit import MemoryAuditLog
from flink_agents_ltm.api.memory.expiry import Clock, Retention
from flink_agents_ltm.api.memory.validation import MemoryLimits
from flink_agents_ltm.api.rerankers import BaseReranker

__all__ = ["RERANKER_OPTION", "RERANK_CANDIDATES", "MemorySettings"]

RERANKER_OPTION = "long-term-memory.reranker"
RERANK_CANDIDATES = 4  # a reranked search orders this many candidates per result asked for


class MemorySettings:
    """A memory's settings. ``clock`` returns seconds since the epoch (``time.time`` unless
    a test injects one)."""

    def __init__(self, *, limits: MemoryLimits | None = None,
                 retention: Retention | None = None, clock: Clock | None = None):
        self._limits = limits or MemoryLimits()
        self._retention = retention or Retention()
        self._clock: Clock = clock or time.time
        self._audit_log: MemoryAuditLog | None = None
        self._reranker: BaseReranker | None = None
        self._rerank_candidates = RERANK_CANDIDATES

    @property
    def audit_log(self) -> MemoryAuditLog | None:
        """Where this memory records its operations (ids and times, never text), if
        anywhere; see :mod:`~flink_agents_ltm.api.memory.audit`."""
        return self._audit_log

    def set_audit_log(self, audit_log: MemoryAuditLog | None) -> None:
        """Record every later operation in ``audit_log`` (``None``: stop recording)."""
        if audit_log is not None and not isinstance(audit_log, MemoryAuditLog):
            raise TypeError(f"set_audit_log expects a MemoryAuditLog, got "
                            f"{type(audit_log).__name__}")
        self._audit_log = audit_log

    @property
    def reranker(self) -> BaseReranker | None:
        """What orders the candidates of ``search(..., rerank=True)``, if anything."""
        return self._reranker

    def set_reranker(self, reranker: BaseReranker | None,
                     candidates: int = RERANK_CANDIDATES) -> None:
        """Let ``search(..., rerank=True)`` fetch ``candidates`` times ``limit`` items of the
        set and return the ``limit`` that ``reranker`` scores highest (``None``: refuse
        ``rerank=True`` again)."""
        if reranker is not None and not isinstance(reranker, BaseReranker):
            raise TypeError(f"set_reranker expects a BaseReranker, got {type(reranker).__name__}")
        if isinstance(candidates, bool) or not isinstance(candidates, int) or candidates < 1:
            raise ValueError(f"rerank candidates must be a positive int, got {candidates!r}")
        self._reranker, self._rerank_candidates = reranker, candidates

    @property
    def limits(self) -> MemoryLimits:
        return self._limits

    @property
    def retention(self) -> Retention:
        """The default ttl and whether reads refresh expiries (``long-term-memory.ttl``)."""
        return self._retention

    def set_retention(self, retention: Retention) -> None:
        if not isinstance(retention, Retention):
            raise TypeError(f"set_retention expects a Retention, got {type(retention).__name__}")
        self._retention = retention

    def set_clock(self, clock: Clock) -> None:
        """Tell time with ``clock`` (seconds since the epoch) instead of ``time.time``: the
        seam through which tests move time without sleeping."""
        if not callable(clock):
            raise TypeError(f"set_clock expects a callable returning seconds, got "
                            f"{type(clock).__name__}")
        self._clock = clock

    def now(self) -> float:
        """This memory's time, seconds since the epoch: what expiries are measured against."""
        return float(self._clock())

    def _reranker_for(self, rerank: Any) -> BaseReranker | None:
        """The reranker a search with ``rerank`` uses: none for False, the configured one
        for True, refused when none is configured (a silent no-op would hide it)."""
        if not isinstance(rerank, bool):
            raise TypeError(f"search option rerank is True or False, got {rerank!r}")
        if rerank and self._reranker is None:
            raise ValueError(f"search(..., rerank=True) needs a reranker, and none is configured: "
                             f"set '{RERANKER_OPTION}' to the name of a declared reranker "
                             "(@reranker_setup)")
        return self._reranker if rerank else None

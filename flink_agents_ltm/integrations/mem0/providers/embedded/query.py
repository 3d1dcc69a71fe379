"""How the embedded store reads a filter: the scope it pins (the SQL lookup's key), the
expiry conditions SQL evaluates, the rest checked on each row with
:func:`~flink_agents_ltm.api.filters.matches`; and the ranking of scores."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from flink_agents_ltm.api.filters import (
    ORDERINGS,
    AllOf,
    Condition,
    FilterError,
    MetadataFilter,
    NoneOf,
    Operator,
    conjuncts,
    parse_filter,
)
from flink_agents_ltm.api.memory.expiry import EXPIRES_AT

SCOPE_FIELDS = ("user_id", "agent_id", "run_id")
_SQL_ORDERINGS = {Operator.GT: ">", Operator.GTE: ">=", Operator.LT: "<", Operator.LTE: "<="}


# Memory.search spells a top-level OR / NOT this way (Memory._process_metadata_filters).
_SEARCH_SPELLINGS = {"$or": "OR", "$not": "NOT"}


@dataclass(frozen=True, slots=True)
class StoreFilter:
    """A filter as this store applies it: ``scope``, the scope fields it pins to one text
    (the SQL lookup's key, so a scoped read touches only the scope's rows), and ``rest``,
    the remainder, checked on each of those rows with :func:`matches` (``None``: nothing
    left to check)."""

    scope: dict[str, str]
    rest: MetadataFilter | None
    expiry: tuple[tuple[str, float], ...] = ()  # SQL conditions on the expires_at column

    @classmethod
    def of(cls, filters: Mapping[str, Any] | None) -> StoreFilter:
        """Read ``filters`` in either spelling Mem0 hands over; anything outside the filter
        language raises :class:`FilterError` naming where, before a row is read."""
        if not filters:
            return cls({}, None)
        if not isinstance(filters, Mapping):
            raise FilterError(f"filters must be a dict, got {type(filters).__name__}")
        scope = {name: value for name in SCOPE_FIELDS
                 if isinstance(value := filters.get(name), str) and value not in ("", "*")}
        rest: list[MetadataFilter] = []
        expiry: list[tuple[str, float]] = []
        for key, value in filters.items():  # one at a time: a search may hold OR and $or
            if key not in scope:
                for part in conjuncts(parse_filter({_SEARCH_SPELLINGS.get(key, key): value})):
                    sql = _expiry_sql(part)
                    if sql is None:
                        rest.append(part)
                    else:
                        expiry.append(sql)
        return cls(scope, None if not rest else rest[0] if len(rest) == 1 else AllOf(
            tuple(rest)), tuple(expiry))


def joined(scores: Sequence[np.ndarray]) -> np.ndarray:
    return np.concatenate(scores) if scores else np.empty(0, dtype=np.float32)


def top(scores: np.ndarray, top_k: int) -> list[int]:
    """The positions of the ``top_k`` highest ``scores``, highest first; of equal scores the
    earlier first, and NaN last (what ``heapq.nlargest`` over the positions gave)."""
    ranked = np.where(np.isnan(scores), -np.inf, scores)
    if len(ranked) > top_k:
        threshold = np.partition(ranked, len(ranked) - top_k)[len(ranked) - top_k]
        candidates = np.flatnonzero(ranked >= threshold)  # every tie of the k-th, in order
    else:
        candidates = np.arange(len(ranked))
    order = np.argsort(-ranked[candidates], kind="stable")
    return candidates[order[:top_k]].tolist()


def _expiry_sql(part: MetadataFilter) -> tuple[str, float] | None:
    """``part`` as SQL on the expires_at column when it orders that field by a number
    (``expires_at <= t``) or negates one such ordering (``NOT``: also rows without it), the
    same verdict as :func:`matches` since the column holds the payload's number (NULL for
    anything else); ``None`` for any other part."""
    negated = isinstance(part, NoneOf) and len(part.parts) == 1
    condition = part.parts[0] if negated else part  # type: ignore[union-attr]
    if not (isinstance(condition, Condition) and condition.field == EXPIRES_AT
            and condition.op in ORDERINGS and expiry_column({EXPIRES_AT: condition.value})
            is not None):
        return None
    compared = f"expires_at {_SQL_ORDERINGS[condition.op]} ?"
    sql = f"(expires_at IS NULL OR NOT ({compared}))" if negated else compared
    return sql, float(condition.value)  # type: ignore[arg-type]


def expiry_column(payload: Mapping[str, Any]) -> float | None:
    value = payload.get(EXPIRES_AT)
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) \
        else None


def scope_columns(payload: Mapping[str, Any]) -> tuple[str, ...]:
    """The scope columns of a row: "" where the payload has no text there (Mem0 refuses
    empty ids, so no lookup ever pins "")."""
    return tuple(value if isinstance(value := payload.get(name), str) else ""
                 for name in SCOPE_FIELDS)


def payload_json(payload: Mapping[str, Any]) -> str:
    try:
        return json.dumps(payload, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as error:
        raise TypeError(f"the embedded store keeps JSON values only: {error}") from None

"""Pieces the backends build their native filters from (see :mod:`.filters`)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from flink_agents_ltm.api.filters import Condition, MetadataFilter, Operator

_PLAIN_FIELD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
Translate = Callable[[MetadataFilter], dict[str, Any] | None]
Row = TypeVar("Row")


def read_matching(read: Callable[[int], list[Row]], keep: Callable[[Row], bool] | None,
                  limit: int | None, first: int, most: int | None = None) -> list[Row]:
    """The first ``limit`` rows of ``read(k)`` that ``keep`` accepts (all of them for
    ``None``): a store's pushed filter is a superset, so rows it returns may be dropped
    here, and then ``k`` grows fourfold from ``first`` until ``limit`` are kept, the store
    returned fewer than asked (it has no more) or ``k`` reached ``most``."""
    k = first
    while True:
        rows = read(k)
        kept = rows if keep is None else [row for row in rows if keep(row)]
        if (len(rows) < k or (limit is not None and len(kept) >= limit)
                or (most is not None and k >= most)):
            return kept if limit is None else kept[:limit]
        k *= 4


@dataclass(frozen=True)
class NativeFilter:
    """What the store gets (``None``: no filter), and whether it is the whole filter:
    then most rows the store returns match, and asking for ``limit`` rows is enough."""

    condition: dict[str, Any] | None
    whole: bool


def plain(condition: Condition, reserved: frozenset[str]) -> bool:
    """Dotted names are paths in Qdrant; reserved keys are not metadata."""
    return bool(_PLAIN_FIELD.fullmatch(condition.field)) and condition.field not in reserved


def equality(condition: Condition, *, booleans: bool, lists: bool) -> dict[str, Any] | None:
    """``{field: "text"}``: every Mem0 store supports it (Mem0's own scoping does);
    booleans and the list shorthand for ``in`` only some."""
    value = condition.value
    if condition.op is Operator.EQ and (isinstance(value, str)
                                        or (booleans and isinstance(value, bool))):
        return {condition.field: value}
    if lists and condition.op is Operator.IN and isinstance(value, tuple) and all(
            isinstance(v, str) for v in value):
        return {condition.field: list(value)}
    return None


def equality_only(reserved: frozenset[str], *, lists: bool) -> Translate:
    def translate(part: MetadataFilter) -> dict[str, Any] | None:
        if not isinstance(part, Condition) or not plain(part, reserved):
            return None
        return equality(part, booleans=False, lists=lists)

    return translate


def merged(translations: list[dict[str, Any] | None], parts: int) -> NativeFilter:
    """One flat dict of the translated conjuncts (all keys must hold); a key seen twice
    stays with Python. Whole when every one of the ``parts`` conjuncts made it in."""
    translated = [t for t in translations if t is not None]
    condition: dict[str, Any] = {}
    for part in translated:
        if not set(part) & set(condition):
            condition.update(part)
    whole = len(translated) == parts and len(condition) == sum(map(len, translated))
    return NativeFilter(condition or None, whole)

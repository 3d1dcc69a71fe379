"""Which part of a filter a Mem0 store may evaluate itself.

Mem0's stores translate its filter dicts each in their own way, and not always
faithfully: pgvector compares ``payload->>key`` as text (``True`` becomes
``'True'`` under ``eq``, ``ne`` drops rows without the key, ``gt`` fails on a
non-numeric value), embedded Qdrant matches ``contains`` by whole, case-folded
words and tells ``1`` from ``1.0``, Chroma turns ``contains`` into equality, FAISS
understands equality only and filters just ``2 * top_k`` neighbours of a search.

So :class:`Mem0VectorStore` never relies on a store's verdict. It hands the
store a *superset* condition (every document that matches the filter also
matches it) built from the top-level parts the store is known to evaluate no
narrower than :func:`matches`, and checks every row that comes back with
:func:`matches`. The pushed part only makes fewer rows travel; correctness
never depends on it. Parts a store cannot take stay with Python, string
orderings always (pgvector casts to numeric, Qdrant reads ISO text as dates).
Long-term memory on Mem0 pushes the same parts through ``Memory.search`` and
``get_all``. Two stores get all of the filter, since they evaluate the language
itself: our own stores under Mem0 (:mod:`.mem0_adapter`) and the embedded
default (:mod:`flink_agents_ltm.integrations.mem0.embedded_store`) -- unless
the filter reads a reserved field, which the store holds but the caller's
check does not see.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from flink_agents_ltm.api.filters import (
    ORDERINGS,
    AllOf,
    AnyOf,
    Condition,
    MetadataFilter,
    Operator,
    conjuncts,
    field_names,
    to_mem0,
)
from flink_agents_ltm.integrations.mem0.embedded_store import PROVIDER as EMBEDDED_STORE
from flink_agents_ltm.integrations.vector_stores.mem0_adapter import PROVIDER as OUR_STORES

_PLAIN_FIELD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
Translate = Callable[[MetadataFilter], dict[str, Any] | None]


def _plain(condition: Condition, reserved: frozenset[str]) -> bool:
    """Dotted names are paths in Qdrant; reserved keys are not metadata."""
    return bool(_PLAIN_FIELD.fullmatch(condition.field)) and condition.field not in reserved


def _equality(condition: Condition, *, booleans: bool, lists: bool) -> dict[str, Any] | None:
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


def _qdrant(reserved: frozenset[str]) -> Translate:
    def translate(part: MetadataFilter) -> dict[str, Any] | None:
        if isinstance(part, AnyOf | AllOf):
            parts = [translate(p) for p in part.parts]
            if any(p is None for p in parts):
                return None
            return {"OR" if isinstance(part, AnyOf) else "AND": parts}
        if not isinstance(part, Condition) or not _plain(part, reserved):
            return None
        if part.op in ORDERINGS:
            # a number is a Range; a string would be a DatetimeRange (or an error), which
            # does not order as text
            return None if isinstance(part.value, str) else {part.field: {part.op.value:
                                                                          part.value}}
        return _equality(part, booleans=True, lists=True)

    return translate


def _pgvector(reserved: frozenset[str]) -> Translate:
    def condition(part: MetadataFilter) -> dict[str, Any] | None:
        if not isinstance(part, Condition) or not _plain(part, reserved):
            return None
        if part.op is Operator.CONTAINS:
            return {part.field: {"contains": part.value}}  # LIKE, escaped by Mem0
        return _equality(part, booleans=True, lists=True)

    def translate(part: MetadataFilter) -> dict[str, Any] | None:
        if isinstance(part, AnyOf):
            branches = [condition(p) for p in part.parts]
            return None if any(b is None for b in branches) else {"$or": branches}
        return condition(part)

    return translate


def _equality_only(reserved: frozenset[str], *, lists: bool) -> Translate:
    def translate(part: MetadataFilter) -> dict[str, Any] | None:
        if not isinstance(part, Condition) or not _plain(part, reserved):
            return None
        return _equality(part, booleans=False, lists=lists)

    return translate


def _merged(parts: list[dict[str, Any]]) -> dict[str, Any] | None:
    """One flat dict (all keys must hold); a key seen twice stays with Python."""
    merged: dict[str, Any] = {}
    for part in parts:
        if not set(part) & set(merged):
            merged.update(part)
    return merged or None


@dataclass(frozen=True)
class NativeFilter:
    """What the store gets (``None``: no filter), and whether it is the whole filter:
    then most rows the store returns match, and asking for ``limit`` rows is enough."""

    condition: dict[str, Any] | None
    whole: bool


def native_filter(provider: str, filter_: MetadataFilter | None, *, search: bool,
                  reserved: frozenset[str]) -> NativeFilter:
    """The superset condition to give Mem0's ``provider`` store for a ``search``
    (else a ``list``)."""
    if filter_ is None:
        return NativeFilter(None, True)
    if provider in (OUR_STORES, EMBEDDED_STORE) and not field_names(filter_) & reserved:
        everything = to_mem0(filter_)
        # Memory.search merges a top-level AND into the top level, where a second OR, NOT
        # or operator of one field overwrites the first; one level down it passes as is.
        return NativeFilter({"AND": [everything]} if search else everything, True)
    parts = conjuncts(filter_)
    if provider == "faiss" and search:
        return NativeFilter(None, False)  # it would filter only 2 * top_k neighbours
    if provider == "qdrant":
        translated = [t for t in map(_qdrant(reserved), parts) if t is not None]
        condition = (None if not translated else translated[0] if len(translated) == 1
                     else {"AND": translated})
        return NativeFilter(condition, len(translated) == len(parts))
    if provider == "pgvector":
        translate = _pgvector(reserved)
    else:  # FAISS's list() knows the list shorthand; other stores get equality on text
        translate = _equality_only(reserved, lists=provider == "faiss")
    translated = [t for t in map(translate, parts) if t is not None]
    condition = _merged(translated)
    whole = len(translated) == len(parts) and len(condition or {}) == sum(map(len, translated))
    return NativeFilter(condition, whole)

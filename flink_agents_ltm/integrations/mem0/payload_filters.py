"""Mem0's metadata filter language, evaluated on a stored payload (a JSON object).

Mem0 hands a vector store two spellings of one language. ``get_all`` passes the
caller's filters as given: ``{"field": value}``, ``{"field": {"op": value}}``
with ``eq ne in nin gt gte lt lte contains icontains``, ``{"field": "*"}`` and
``{"AND" | "OR" | "NOT": [filter, ...]}``. ``search`` first rewrites them
(``Memory._process_metadata_filters``): ``AND`` is merged into the top level,
``OR`` / ``NOT`` become ``$or`` / ``$not``. Both spellings are accepted here.

Semantics, chosen to agree with Mem0's server stores where they agree with each
other (pgvector, Qdrant): every top-level entry must hold; a plain value matches
equal values (``True`` never equals ``1``), a list value means ``in``; ``"*"``
matches any value but requires the field (pgvector's ``payload ? key``); ``ne``
and ``nin`` also require the field; ranges compare numbers, or ISO-8601 date
strings as datetimes; ``contains`` is a substring test, ``icontains`` ignores
case; several operators on one field must all hold; a list-valued field matches
when any element does (``ne`` / ``nin``: when none is excluded). ``NOT`` holds
when none of its filters holds. Unknown operators raise ``ValueError``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any

Payload = Mapping[str, Any]
PayloadFilter = Callable[[Payload], bool]

OPERATORS = frozenset({"eq", "ne", "gt", "gte", "lt", "lte", "in", "nin", "contains",
                       "icontains"})
_LOGICAL = {"AND": "AND", "$and": "AND", "OR": "OR", "$or": "OR", "NOT": "NOT", "$not": "NOT"}
_ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?"
                       r"(Z|[+-]\d{2}:?\d{2})?)?$")
_MISSING = object()


def compile_filter(filters: Mapping[str, Any] | None) -> PayloadFilter:
    """A predicate over payloads for ``filters`` (``None`` or ``{}`` match everything).
    Malformed filters raise ``ValueError`` here, before any row is read."""
    if not filters:
        return _always
    if not isinstance(filters, Mapping):
        raise ValueError(f"filters must be a dict, got {type(filters).__name__}")
    parts: list[PayloadFilter] = []
    seen_logical: set[str] = set()
    for key, value in filters.items():
        logical = _LOGICAL.get(key)
        if logical is None:
            parts.append(_field(key, value))
        elif logical not in seen_logical:  # search() may pass OR and $or for the same list
            seen_logical.add(logical)
            parts.append(_logical(logical, key, value))
    return lambda payload: all(part(payload) for part in parts)


def scope_equalities(filters: Mapping[str, Any] | None, fields: tuple[str, ...]
                     ) -> dict[str, str]:
    """The ``fields`` that ``filters`` pins to one text value at the top level: a store may
    look rows up by these (an index) before applying the whole filter."""
    if not filters:
        return {}
    return {name: value for name in fields
            if isinstance(value := filters.get(name), str) and value not in ("", "*")}


def _always(payload: Payload) -> bool:
    return True


def _logical(kind: str, key: str, value: Any) -> PayloadFilter:
    if not isinstance(value, list) or not value:
        raise ValueError(f"'{key}' takes a non-empty list of filters, got {value!r}")
    for index, item in enumerate(value):
        if not isinstance(item, Mapping):
            raise ValueError(f"'{key}' item {index} must be a dict of conditions, got "
                             f"{type(item).__name__}")
    subs = [compile_filter(item) for item in value]
    if kind == "AND":
        return lambda payload: all(sub(payload) for sub in subs)
    if kind == "OR":
        return lambda payload: any(sub(payload) for sub in subs)
    return lambda payload: not any(sub(payload) for sub in subs)


def _field(key: str, condition: Any) -> PayloadFilter:
    if isinstance(condition, Mapping):
        unknown = set(condition) - OPERATORS
        if unknown or not condition:
            raise ValueError(f"unsupported filter operator(s) {sorted(unknown)} for field "
                             f"'{key}'; supported: {', '.join(sorted(OPERATORS))}")
        tests = [_operator(key, op, operand) for op, operand in condition.items()]
        return lambda payload: all(test(payload.get(key, _MISSING)) for test in tests)
    if isinstance(condition, str) and condition == "*":
        return lambda payload: key in payload
    if isinstance(condition, list):
        return _field(key, {"in": condition})
    return _field(key, {"eq": condition})


def _operator(key: str, op: str, operand: Any) -> Callable[[Any], bool]:
    if op in ("in", "nin"):
        if not isinstance(operand, list):
            raise ValueError(f"filter operator '{op}' for field '{key}' takes a list, got "
                             f"{type(operand).__name__}")
        if op == "in":
            return _any_element(lambda v: any(_equal(v, o) for o in operand))
        return _none_element(lambda v: any(_equal(v, o) for o in operand))
    if op == "eq":
        return _any_element(lambda v: _equal(v, operand))
    if op == "ne":
        return _none_element(lambda v: _equal(v, operand))
    if op in ("contains", "icontains"):
        if not isinstance(operand, str):
            raise ValueError(f"filter operator '{op}' for field '{key}' takes a string, got "
                             f"{type(operand).__name__}")
        if op == "contains":
            return _any_element(lambda v: isinstance(v, str) and operand in v)
        folded = operand.casefold()
        return _any_element(lambda v: isinstance(v, str) and folded in v.casefold())
    return _range(key, op, operand)


def _range(key: str, op: str, operand: Any) -> Callable[[Any], bool]:
    compare: dict[str, Callable[[Any, Any], bool]] = {
        "gt": lambda a, b: a > b, "gte": lambda a, b: a >= b,
        "lt": lambda a, b: a < b, "lte": lambda a, b: a <= b}
    if _is_number(operand):
        return _any_element(lambda v: _is_number(v) and compare[op](v, operand))
    bound = _as_datetime(operand)
    if bound is None:
        raise ValueError(f"filter operator '{op}' for field '{key}' takes a number or an "
                         f"ISO-8601 date, got {operand!r}")

    def test(value: Any) -> bool:
        moment = _as_datetime(value)
        return moment is not None and compare[op](moment, bound)

    return _any_element(test)


def _any_element(test: Callable[[Any], bool]) -> Callable[[Any], bool]:
    def check(value: Any) -> bool:
        if value is _MISSING or value is None:
            return False
        if isinstance(value, list):
            return any(test(element) for element in value)
        return test(value)

    return check


def _none_element(test: Callable[[Any], bool]) -> Callable[[Any], bool]:
    def check(value: Any) -> bool:
        if value is _MISSING or value is None:
            return False
        if isinstance(value, list):
            return not any(test(element) for element in value)
        return not test(value)

    return check


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _equal(stored: Any, wanted: Any) -> bool:
    if isinstance(stored, bool) or isinstance(wanted, bool):
        return isinstance(stored, bool) and isinstance(wanted, bool) and stored == wanted
    if _is_number(stored) and _is_number(wanted):
        return stored == wanted
    return type(stored) is type(wanted) and stored == wanted


def _as_datetime(value: Any) -> datetime | None:
    if not isinstance(value, str) or not _ISO_DATE.match(value):
        return None
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)

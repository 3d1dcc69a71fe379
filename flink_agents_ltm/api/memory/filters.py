"""The metadata filter language of memory sets (Mem0's), checked up front and evaluable.

A filter is a dict whose entries must all hold::

    {"kind": "tea"}                           # equality
    {"kind": "*"}                             # the field is present, any value
    {"rating": {"gte": 3, "lt": 5}}           # operators: eq ne gt gte lt lte in nin
                                              #            contains icontains
    {"OR": [{"kind": "tea"}, {"kind": "coffee"}]}   # AND / OR / NOT over lists of filters
    {"NOT": [{"kind": "tea"}]}                # none of the listed filters holds

Why check it here: Mem0 passes unknown shapes on to the store, where an
operator it does not know is silently treated as a field name (a filter that
never matches) and a scope field nested in an ``OR`` would widen a read. So
:func:`check_filters` refuses anything outside the language, and
:func:`matches` evaluates it for stores that cannot filter natively (and as a
second line of defence behind those that can).

Semantics where stores differ, fixed here: a missing field fails every
condition except ``ne`` and ``nin``; ordering compares numbers with numbers and
strings with strings (anything else does not match); ``contains`` is a
substring test on strings (``icontains`` ignoring case).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from flink_agents_ltm.api.memory.validation import check_text, refuse_scope_fields

__all__ = ["LOGICAL", "OPERATORS", "check_filters", "matches"]

LOGICAL = ("AND", "OR", "NOT")
OPERATORS = ("eq", "ne", "gt", "gte", "lt", "lte", "in", "nin", "contains", "icontains")
WILDCARD = "*"
_SCALARS = (str, int, float, bool, type(None))


def check_filters(filters: Any, what: str = "filters") -> dict[str, Any] | None:
    """``filters`` if it is a valid filter (``None`` for no filter); raises naming the
    first problem otherwise."""
    if filters is None:
        return None
    if not isinstance(filters, Mapping):
        raise TypeError(f"{what} must be a dict, got {type(filters).__name__}")
    refuse_scope_fields(filters, what)
    _check_clauses(filters, what)
    return dict(filters)


def _check_clauses(filters: Mapping[str, Any], path: str) -> None:
    for field, condition in filters.items():
        if not isinstance(field, str) or not field:
            raise TypeError(f"{path}: a field name must be a non-empty str, got {field!r}")
        check_text(field, f"{path} field name")
        if field in LOGICAL:
            if not isinstance(condition, list) or not condition:
                raise ValueError(f"{path}.{field} takes a non-empty list of filters, got "
                                 f"{condition!r}")
            for index, inner in enumerate(condition):
                if not isinstance(inner, Mapping) or not inner:
                    raise ValueError(f"{path}.{field}[{index}] must be a non-empty dict filter")
                _check_clauses(inner, f"{path}.{field}[{index}]")
        elif isinstance(condition, Mapping):
            _check_operators(condition, f"{path}.{field}")
        else:
            _check_operand(condition, f"{path}.{field}", "eq")


def _check_operators(condition: Mapping[str, Any], path: str) -> None:
    if not condition:
        raise ValueError(f"{path} has an empty operator dict")
    for operator, operand in condition.items():
        if operator not in OPERATORS:
            raise ValueError(f"{path} uses unknown operator {operator!r}; supported: "
                             f"{', '.join(OPERATORS)} (and AND, OR, NOT over lists of filters)")
        _check_operand(operand, f"{path}.{operator}", operator)


def _check_operand(operand: Any, path: str, operator: str) -> None:
    if operator in ("in", "nin"):
        if not isinstance(operand, list) or not all(isinstance(v, _SCALARS) for v in operand):
            raise TypeError(f"{path} takes a list of str/number/bool values, got {operand!r}")
        for value in operand:
            if isinstance(value, str):
                check_text(value, path)
        return
    if operator in ("contains", "icontains"):
        if not isinstance(operand, str):
            raise TypeError(f"{path} takes a str, got {type(operand).__name__}")
    elif not isinstance(operand, _SCALARS):
        raise TypeError(f"{path} compares with a str, number, bool or None, got "
                        f"{type(operand).__name__} (use 'in' for a list of values)")
    elif operator in ("gt", "gte", "lt", "lte") and (
            operand is None or isinstance(operand, bool)):
        raise TypeError(f"{path} orders numbers or strings, got {operand!r}")
    if isinstance(operand, str):
        check_text(operand, path)


def matches(filters: Mapping[str, Any] | None, metadata: Mapping[str, Any]) -> bool:
    """Whether a row's metadata satisfies a filter checked by :func:`check_filters`."""
    if not filters:
        return True
    for field, condition in filters.items():
        if field == "AND":
            if not all(matches(inner, metadata) for inner in condition):
                return False
        elif field == "OR":
            if not any(matches(inner, metadata) for inner in condition):
                return False
        elif field == "NOT":
            if any(matches(inner, metadata) for inner in condition):
                return False
        elif isinstance(condition, Mapping):
            if not all(_holds(op, operand, field, metadata) for op, operand in condition.items()):
                return False
        elif condition == WILDCARD:
            if field not in metadata:
                return False
        elif not _holds("eq", condition, field, metadata):
            return False
    return True


def _same(value: Any, operand: Any) -> bool:
    # True == 1 in Python, but a JSON bool is not a number
    return isinstance(value, bool) is isinstance(operand, bool) and value == operand


def _holds(operator: str, operand: Any, field: str, metadata: Mapping[str, Any]) -> bool:
    if field not in metadata:
        return operator in ("ne", "nin")
    value = metadata[field]
    if operator == "eq":
        return _same(value, operand)
    if operator == "ne":
        return not _same(value, operand)
    if operator == "in":
        return any(_same(value, v) for v in operand)
    if operator == "nin":
        return not any(_same(value, v) for v in operand)
    if operator in ("contains", "icontains"):
        if not isinstance(value, str):
            return False
        if operator == "icontains":
            return operand.casefold() in value.casefold()
        return operand in value
    comparable = (isinstance(value, str) and isinstance(operand, str)) or (
        isinstance(value, (int, float)) and not isinstance(value, bool)
        and isinstance(operand, (int, float)))
    if not comparable:
        return False
    if operator == "gt":
        return bool(value > operand)
    if operator == "gte":
        return bool(value >= operand)
    if operator == "lt":
        return bool(value < operand)
    return bool(value <= operand)

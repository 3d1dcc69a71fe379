"""The filter language of the whole project: Mem0's, with one meaning on every store.

Long-term memory (``MemorySet.get``/``search``) and vector stores
(``BaseVectorStore.query``/``get``/``delete``) take the same filters, the ones
Mem0 documents for ``search``::

    {"topic": "billing"}                                # equality
    {"topic": ["billing", "refunds"]}                   # shorthand for "in" (as in Mem0)
    {"year": {"gte": 2020, "lt": 2025}}                 # operators, all must hold
    {"day": {"gte": "2024-01-01"}}                      # strings order as text (ISO dates)
    {"title": "*"}                                      # the field has a value
    {"OR": [{"topic": "billing"}, {"NOT": [{"year": {"lt": 2020}}]}]}

Operators: ``eq ne in nin gt gte lt lte contains icontains``; logic: ``AND``,
``OR``, ``NOT``, each over a non-empty list of filters (all, any, none of them
hold), nested at any depth. Several keys in one dict must all hold.

:func:`parse_filter` turns such a dict into a frozen tree and refuses anything
else with an error that names where the problem is
(``filters['OR'][1]['year']['gte']``). :func:`matches` is the reference
semantics every store is held to:

- values compare by kind: strings with strings, numbers (int and float) with
  numbers, booleans with booleans; ``1`` equals ``1.0`` but never ``True``;
- a field that is missing, ``None``, a list or a dict matches no comparison;
  ``ne`` and ``nin`` are the negations of ``eq`` and ``in``, so they match it;
- ``gt``/``gte``/``lt``/``lte`` order numbers with numbers and strings with
  strings (as text, so ISO dates order in time); anything else does not match;
- ``contains`` is a case-sensitive substring test on strings, ``icontains`` the
  same after case-folding both sides;
- ``"*"`` matches a field that is present with a value that is not ``None``.

``None`` is not an operand (``{"f": "*"}`` and ``{"NOT": [{"f": "*"}]}`` say
"has a value" and "has none"), and NUL characters and lone surrogates are
refused in field names and strings, as everywhere else. Scope fields
(``user_id``, ``agent_id``, ``run_id``) are ordinary fields here: long-term
memory refuses them in a step of its own, while Mem0 filters its scope through
our vector stores with them.

Stores translate what they evaluate faithfully and leave the rest to
:func:`matches`: never a string ordering, which Mem0's stores read as numbers or
dates.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, TypeAlias

from flink_agents_ltm.api.errors import FlinkAgentsLtmError
from flink_agents_ltm.api.text import check_text

__all__ = [
    "ORDERINGS",
    "AllOf",
    "AnyOf",
    "Condition",
    "FilterError",
    "MetadataFilter",
    "NoneOf",
    "Operator",
    "conjuncts",
    "field_names",
    "matches",
    "parse_filter",
    "to_mem0",
]

Scalar: TypeAlias = str | int | float | bool


class FilterError(FlinkAgentsLtmError, ValueError):
    """A filter that is not in the filter language; the message says where and why."""


class Operator(StrEnum):
    EQ = "eq"
    NE = "ne"
    IN = "in"
    NIN = "nin"
    GT = "gt"
    GTE = "gte"
    LT = "lt"
    LTE = "lte"
    CONTAINS = "contains"
    ICONTAINS = "icontains"
    EXISTS = "*"


ORDERINGS = frozenset({Operator.GT, Operator.GTE, Operator.LT, Operator.LTE})
_LISTS = frozenset({Operator.IN, Operator.NIN})
_TEXT = frozenset({Operator.CONTAINS, Operator.ICONTAINS})
_WRITTEN_OPERATORS = ", ".join(op.value for op in Operator if op is not Operator.EXISTS)
_LOGIC = ("AND", "OR", "NOT")


@dataclass(frozen=True)
class Condition:
    """``field op value``; ``value`` is a tuple for ``in``/``nin``, ``None`` for ``"*"``."""

    field: str
    op: Operator
    value: Scalar | tuple[Scalar, ...] | None = None


@dataclass(frozen=True)
class AllOf:
    parts: tuple[MetadataFilter, ...]


@dataclass(frozen=True)
class AnyOf:
    parts: tuple[MetadataFilter, ...]


@dataclass(frozen=True)
class NoneOf:
    """Mem0's ``NOT``: none of the parts holds."""

    parts: tuple[MetadataFilter, ...]


MetadataFilter: TypeAlias = Condition | AllOf | AnyOf | NoneOf


# ------------------------------------------------------------------ parsing


def parse_filter(filters: Mapping[str, Any] | MetadataFilter | None) -> MetadataFilter | None:
    """The validated tree of ``filters``; ``None`` or ``{}`` mean "no filter".
    An already parsed tree is returned as it is."""
    if filters is None or isinstance(filters, Condition | AllOf | AnyOf | NoneOf):
        return filters
    if not isinstance(filters, Mapping):
        raise FilterError(f"filters must be a dict, got {type(filters).__name__}")
    if not filters:
        return None
    return _parse_mapping(filters, "filters")


def _parse_mapping(filters: Mapping[Any, Any], where: str) -> MetadataFilter:
    parts: list[MetadataFilter] = []
    for key, value in filters.items():
        if not isinstance(key, str) or not key:
            raise FilterError(f"{where}: field names are non-empty strings, got {key!r}")
        _text(key, f"{where}: field name {key!r}")
        at = f"{where}[{key!r}]"
        if key in _LOGIC:
            parts.append(_parse_logic(key, value, at))
        elif key.startswith("$") or key.upper() in _LOGIC:
            raise FilterError(f"{at}: '{key}' is not part of the filter language; combine "
                              "filters with 'AND', 'OR' or 'NOT' (upper case), each taking "
                              "a list of filters")
        else:
            parts.extend(_parse_field(key, value, at))
    return parts[0] if len(parts) == 1 else AllOf(tuple(parts))


def _parse_logic(key: str, value: Any, where: str) -> MetadataFilter:
    if isinstance(value, Mapping):
        raise FilterError(f"{where}: '{key}' takes a non-empty list of filters, got a dict; "
                          f"write {{'{key}': [{_shown(value, bare=True)}]}}")
    if not isinstance(value, list | tuple) or not value:
        raise FilterError(f"{where}: '{key}' takes a non-empty list of filters, got "
                          f"{_shown(value)}")
    parts = []
    for index, item in enumerate(value):
        if not isinstance(item, Mapping) or not item:
            raise FilterError(f"{where}[{index}]: expected a non-empty filter dict, got "
                              f"{_shown(item)}")
        parts.append(_parse_mapping(item, f"{where}[{index}]"))
    if key == "AND":
        return parts[0] if len(parts) == 1 else AllOf(tuple(parts))
    if key == "OR":
        return AnyOf(tuple(parts))
    return NoneOf(tuple(parts))


def _parse_field(field: str, value: Any, where: str) -> list[Condition]:
    if isinstance(value, Mapping):
        if not value:
            raise FilterError(f"{where}: an operator dict needs at least one of "
                              f"{_WRITTEN_OPERATORS}")
        return [_condition(field, op, operand, f"{where}[{op!r}]")
                for op, operand in value.items()]
    if isinstance(value, list | tuple):
        return [_condition(field, Operator.IN.value, value, where)]
    if isinstance(value, str) and value == "*":
        return [Condition(field, Operator.EXISTS)]
    return [_condition(field, Operator.EQ.value, value, where)]


def _condition(field: str, op_name: Any, operand: Any, where: str) -> Condition:
    op = _operator(op_name)
    if op is None:
        raise FilterError(f"{where}: unknown operator {op_name!r}; supported: "
                          f"{_WRITTEN_OPERATORS}")
    if op in _LISTS:
        if not isinstance(operand, list | tuple) or not operand:
            raise FilterError(f"{where}: '{op}' takes a non-empty list of values, got "
                              f"{_shown(operand)}")
        return Condition(field, op, tuple(_scalar(field, v, f"{where}[{i}]")
                                          for i, v in enumerate(operand)))
    if op in ORDERINGS:
        if isinstance(operand, str):
            return Condition(field, op, _text(operand, where))
        if not _is_number(operand) or not math.isfinite(operand):
            raise FilterError(f"{where}: '{op}' orders numbers or strings, got "
                              f"{_shown(operand)}")
        return Condition(field, op, operand)
    if op in _TEXT:
        if not isinstance(operand, str) or not operand:
            raise FilterError(f"{where}: '{op}' takes a non-empty string, got "
                              f"{_shown(operand)}")
        return Condition(field, op, _text(operand, where))
    return Condition(field, op, _scalar(field, operand, where))


def _operator(name: Any) -> Operator | None:
    try:
        op = Operator(name)
    except ValueError:
        return None
    return None if op is Operator.EXISTS else op


def _scalar(field: str, value: Any, where: str) -> Scalar:
    if isinstance(value, str):
        return _text(value, where)
    if isinstance(value, bool | int) or (isinstance(value, float) and math.isfinite(value)):
        return value
    if value is None:
        raise FilterError(f"{where}: None is not a value to compare with; write "
                          f"{{{field!r}: '*'}} for a field that has a value, "
                          f"{{'NOT': [{{{field!r}: '*'}}]}} for one that has none")
    raise FilterError(f"{where}: expected a string, number or boolean, got {_shown(value)}")


def _text(value: str, where: str) -> str:
    try:
        check_text(value, where)
    except ValueError as error:
        raise FilterError(str(error)) from None
    return value


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _shown(value: Any, bare: bool = False) -> str:
    text = repr(value)
    text = f"{text[:60]}{'...' if len(text) > 60 else ''}"
    return text if bare else f"{type(value).__name__} {text}"


# ------------------------------------------------------------------ evaluation


def matches(filter_: MetadataFilter | None, metadata: Mapping[str, Any]) -> bool:
    """Whether ``metadata`` satisfies ``filter_`` (the reference semantics)."""
    if filter_ is None:
        return True
    if isinstance(filter_, AllOf):
        return all(matches(part, metadata) for part in filter_.parts)
    if isinstance(filter_, AnyOf):
        return any(matches(part, metadata) for part in filter_.parts)
    if isinstance(filter_, NoneOf):
        return not any(matches(part, metadata) for part in filter_.parts)
    return _holds(filter_, metadata.get(filter_.field))


def _holds(condition: Condition, value: Any) -> bool:
    op, operand = condition.op, condition.value
    if op is Operator.EXISTS:
        return value is not None
    if op is Operator.EQ:
        return _equal(value, operand)
    if op is Operator.NE:
        return not _equal(value, operand)
    if op in _LISTS:
        assert isinstance(operand, tuple)
        found = any(_equal(value, v) for v in operand)
        return found if op is Operator.IN else not found
    if op in _TEXT:
        assert isinstance(operand, str)
        if not isinstance(value, str):
            return False
        if op is Operator.ICONTAINS:
            return operand.casefold() in value.casefold()
        return operand in value
    return _ordered(op, value, operand)


def _ordered(op: Operator, value: Any, bound: Any) -> bool:
    """Numbers with numbers, strings with strings; any other pair does not match."""
    if not ((_is_number(value) and _is_number(bound))
            or (isinstance(value, str) and isinstance(bound, str))):
        return False
    if op is Operator.GT:
        return bool(value > bound)
    if op is Operator.GTE:
        return bool(value >= bound)
    if op is Operator.LT:
        return bool(value < bound)
    return bool(value <= bound)


def _equal(value: Any, expected: Any) -> bool:
    if isinstance(expected, bool) or isinstance(value, bool):
        return isinstance(value, bool) and isinstance(expected, bool) and value == expected
    if _is_number(expected):
        return _is_number(value) and bool(value == expected)
    return isinstance(value, str) and value == expected


# ------------------------------------------------------------------ rendering


def conjuncts(filter_: MetadataFilter | None) -> list[MetadataFilter]:
    """The parts that must all hold (a top-level ``AND`` flattened)."""
    if filter_ is None:
        return []
    if isinstance(filter_, AllOf):
        return [leaf for part in filter_.parts for leaf in conjuncts(part)]
    return [filter_]


def to_mem0(filter_: MetadataFilter) -> dict[str, Any]:
    """The filter written in Mem0's nested form (``parse_filter`` reads it back)."""
    if isinstance(filter_, Condition):
        if filter_.op is Operator.EXISTS:
            return {filter_.field: "*"}
        value = list(filter_.value) if isinstance(filter_.value, tuple) else filter_.value
        return {filter_.field: {filter_.op.value: value}}
    key = {AllOf: "AND", AnyOf: "OR", NoneOf: "NOT"}[type(filter_)]
    return {key: [to_mem0(part) for part in filter_.parts]}


def field_names(filter_: MetadataFilter | None) -> set[str]:
    """Every field the filter reads."""
    if filter_ is None:
        return set()
    if isinstance(filter_, Condition):
        return {filter_.field}
    names: set[str] = set()
    for part in filter_.parts:
        names |= field_names(part)
    return names


"""One validation for every key, set name, value, query and metadata, on every store.

Why here and not in a store: stores disagree about what they accept (a NUL
character works on embedded Qdrant and fails on PostgreSQL; a ``datetime`` in
metadata passes one store and breaks another; a lone surrogate is written and
then cannot be read back). Checking once, before anything reaches a store,
makes the same input behave the same everywhere and keeps bad input from
half-writing. Limits are a value object so that a memory carries its own.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from flink_agents_ltm.api.arguments import check_json
from flink_agents_ltm.api.text import check_text

__all__ = [
    "SCOPE_FIELDS",
    "MemoryLimits",
    "check_metadata",
    "check_name",
    "check_query",
    "check_text",
    "check_values",
    "refuse_scope_fields",
]

# The fields that carry a memory's scope in every store; callers may never set them.
SCOPE_FIELDS = frozenset({"user_id", "agent_id", "run_id"})


@dataclass(frozen=True, slots=True)
class MemoryLimits:
    """The largest inputs a long-term memory accepts, in characters (``metadata`` in
    characters of its JSON text). Bigger inputs are refused with an error naming the
    option to raise."""

    max_item_length: int = 32_768
    max_query_length: int = 8_192
    max_name_length: int = 512
    max_metadata_length: int = 16_384

    def __post_init__(self) -> None:
        for name in ("max_item_length", "max_query_length", "max_name_length",
                     "max_metadata_length"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise ValueError(f"{name} must be a positive int, got {value!r}")


def check_name(value: Any, what: str, limits: MemoryLimits, option: str) -> str:
    """A job id, partition key or set name: non-empty text within the name limit."""
    if not isinstance(value, str):
        raise TypeError(f"{what} must be a str, got {type(value).__name__}")
    if not value.strip():
        raise ValueError(f"{what} must not be empty or whitespace-only")
    check_text(value, what)
    if len(value) > limits.max_name_length:
        raise ValueError(f"{what} has {len(value)} characters, more than the "
                         f"{limits.max_name_length} allowed ({option})")
    return value


def check_values(memory_items: Any, limits: MemoryLimits, option: str) -> list[str]:
    """The items of an ``add``: ``str`` only, never empty, within the item limit."""
    items = [memory_items] if isinstance(memory_items, str) else memory_items
    if not isinstance(items, Sequence) or isinstance(items, (bytes, bytearray)):
        raise TypeError("long-term memory stores str values only; got "
                        f"{type(memory_items).__name__}. Encode other types (e.g. json.dumps) "
                        "before adding them")
    items = list(items)
    if not items:
        raise ValueError("add() got no items")
    for index, item in enumerate(items):
        if not isinstance(item, str):
            raise TypeError(f"long-term memory stores str values only; item {index} is "
                            f"{type(item).__name__}. Encode it (e.g. json.dumps) before adding")
        if not item.strip():
            raise ValueError(f"item {index} is empty: there is nothing to remember")
        check_text(item, f"item {index}")
        if len(item) > limits.max_item_length:
            raise ValueError(f"item {index} has {len(item)} characters, more than the "
                             f"{limits.max_item_length} allowed ({option}); split or summarize "
                             "it")
    return items


def check_query(query: Any, limits: MemoryLimits, option: str) -> str:
    if not isinstance(query, str):
        raise TypeError(f"search query must be a str, got {type(query).__name__}")
    if not query.strip():
        raise ValueError("search query is empty")
    check_text(query, "search query")
    if len(query) > limits.max_query_length:
        raise ValueError(f"search query has {len(query)} characters, more than the "
                         f"{limits.max_query_length} allowed ({option})")
    return query


def refuse_scope_fields(value: Any, what: str, path: str = "") -> None:
    """Raise ``ValueError`` if a filter tree, metadata or options name a scope field
    anywhere (an ``agent_id`` nested in an ``OR`` would otherwise widen a read)."""
    if isinstance(value, Mapping):
        for key, inner in value.items():
            if key in SCOPE_FIELDS:
                raise ValueError(
                    f"{what} may not set '{key}'{f' (at {path})' if path else ''}: the job id, "
                    "partition key and memory set name scope every operation and cannot be "
                    "overridden or widened")
            refuse_scope_fields(inner, what, f"{path}.{key}" if path else str(key))
    elif isinstance(value, (list, tuple)):
        for index, inner in enumerate(value):
            refuse_scope_fields(inner, what, f"{path}[{index}]")


def check_metadata(metadata: Any, what: str, reserved: frozenset[str],
                   limits: MemoryLimits, option: str) -> dict[str, Any]:
    """Metadata of one item: a dict of JSON values (str keys; str, int, finite float,
    bool, None, lists and dicts of those), naming no scope field and no field the
    store writes itself. Returns a copy."""
    if not isinstance(metadata, Mapping):
        raise TypeError(f"{what} must be a dict, got {type(metadata).__name__}")
    refuse_scope_fields(metadata, what)
    clash = reserved & set(metadata)
    if clash:
        raise ValueError(f"{what} uses key(s) {sorted(clash)} that the store writes itself; "
                         "rename them")
    copy: dict[str, Any]
    copy, size = check_json(metadata, what)
    if size > limits.max_metadata_length:
        raise ValueError(f"{what} is {size} characters as JSON, more than the "
                         f"{limits.max_metadata_length} allowed ({option})")
    return copy

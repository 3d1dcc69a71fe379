"""One validation for every key, set name, value, query and metadata, on every store.

Why here and not in a store: stores disagree about what they accept (a NUL
character works on embedded Qdrant and fails on PostgreSQL; a ``datetime`` in
metadata passes one store and breaks another; a lone surrogate is written and
then cannot be read back). Checking once, before anything reaches a store,
makes the same input behave the same everywhere and keeps bad input from
half-writing. Limits are a value object so that a memory carries its own; the option keys
that set them are named here, once (``api.options`` declares the options with these keys).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from flink_agents_ltm.api.arguments import check_json
from flink_agents_ltm.api.filters import MetadataFilter, parse_filter, to_mem0
from flink_agents_ltm.api.memory.errors import (
    EmptyPartitionKeyError,
    UnboundMemorySetError,
    empty_key_message,
    unbound_message,
)
from flink_agents_ltm.api.memory.expiry import EXPIRY_FIELDS
from flink_agents_ltm.api.text import check_text

__all__ = [
    "ITEM_OPTION",
    "METADATA_OPTION",
    "NAME_OPTION",
    "QUERY_OPTION",
    "RESERVED_METADATA",
    "SCOPE_FIELDS",
    "MemoryLimits",
    "check_filter",
    "check_key",
    "check_metadata",
    "check_name",
    "check_query",
    "check_search_options",
    "check_text",
    "check_update",
    "check_values",
    "metadata_per_item",
    "refuse_scope_fields",
]

# The fields that carry a memory's scope in every store; callers may never set them.
SCOPE_FIELDS = frozenset({"user_id", "agent_id", "run_id"})
# Fields a store writes into every row itself (Mem0's); caller metadata may not set them.
RESERVED_METADATA = SCOPE_FIELDS | {
    "actor_id", "role", "data", "hash", "created_at", "updated_at", "id",
    "text_lemmatized", "attributed_to", "expiration_date", "memory_type",
} | EXPIRY_FIELDS  # written from a write's ttl (see .expiry)
ITEM_OPTION = "long-term-memory.max-item-length"
QUERY_OPTION = "long-term-memory.max-query-length"
NAME_OPTION = "long-term-memory.max-name-length"
METADATA_OPTION = "long-term-memory.max-metadata-length"
_R = TypeVar("_R")


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


def check_key(key: str | None, operation: str, set_name: str | None,
              limits: MemoryLimits) -> str:
    """``key`` if it can scope an operation, else the error naming what is wrong."""
    if key is None:
        raise UnboundMemorySetError(unbound_message(operation, set_name))
    if not key.strip():
        raise EmptyPartitionKeyError(empty_key_message(operation, set_name))
    check_text(key, "partition key")
    if len(key) > limits.max_name_length:
        raise ValueError(f"partition key has {len(key)} characters, more than the "
                         f"{limits.max_name_length} allowed ({NAME_OPTION})")
    return key


def metadata_per_item(metadatas: Any, count: int, limits: MemoryLimits) -> list[dict[str, Any]]:
    """The checked metadata of each of ``count`` items added: one dict for all, one per
    item, or none."""
    if metadatas is None:
        return [{} for _ in range(count)]
    if isinstance(metadatas, Mapping):
        per_item: list[Any] = [metadatas] * count
    elif isinstance(metadatas, Sequence) and not isinstance(metadatas, (str, bytes)):
        per_item = list(metadatas)
        if len(per_item) != count:
            raise ValueError(f"got {len(per_item)} metadata dicts for {count} items: pass "
                             "one dict for all items or exactly one per item")
    else:
        raise TypeError(f"metadatas must be a dict or a list of dicts, got "
                        f"{type(metadatas).__name__}")
    return [check_metadata(m, f"metadata {index}", RESERVED_METADATA, limits, METADATA_OPTION)
            for index, m in enumerate(per_item)]


def check_update(item_id: Any, value: Any, metadata: Any,
                 limits: MemoryLimits) -> dict[str, Any] | None:
    """The arguments of an ``update``: one id, one value as :func:`check_values` wants it;
    returns the checked metadata (``None``: the item keeps its own)."""
    if not isinstance(item_id, str):
        raise TypeError(f"update() takes one item id (a str), got {type(item_id).__name__}")
    if not isinstance(value, str):
        raise TypeError(f"long-term memory stores str values only; update() got "
                        f"{type(value).__name__}. Encode it (e.g. json.dumps) first")
    if not value.strip():
        raise ValueError("update() got an empty value: there is nothing to remember "
                         "(delete the item instead)")
    check_values(value, limits, ITEM_OPTION)
    return None if metadata is None else check_metadata(
        metadata, "metadata", RESERVED_METADATA, limits, METADATA_OPTION)


def check_filter(filters: Any) -> MetadataFilter | None:
    """A caller's filter, parsed, naming no scope field at any depth (the scope is the
    set's; a filter on ``agent_id`` nested in an ``OR`` would widen a read)."""
    if isinstance(filters, Mapping):
        refuse_scope_fields(filters, "filters")
    parsed = parse_filter(filters)
    if parsed is not None and not isinstance(filters, Mapping):
        refuse_scope_fields(to_mem0(parsed), "filters")
    return parsed


def check_search_options(options: dict[str, Any], supported: frozenset[str],
                         reranker_for: Callable[[Any], _R]) -> _R:
    """A search's options besides ``limit`` and ``filters``: none naming a scope field,
    none the memory does not understand. Takes ``rerank`` out and returns what
    ``reranker_for`` makes of it (it checks it first)."""
    refuse_scope_fields(options, "search options")
    reranker = reranker_for(options.pop("rerank", False))
    unknown = set(options) - supported
    if unknown:
        names = ", ".join(["limit", "filters", *sorted(supported)])
        raise TypeError(f"unknown search option(s) {sorted(unknown)}; supported: {names}")
    return reranker

"""The values of vector stores (:mod:`flink_agents_ltm.api.vector_stores`): documents and
their metadata, queries, results, collection info, the errors a store raises, and the checks
that build them from a caller's arguments. A store's base class validates through these and
then calls its small abstract core."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from numbers import Real
from typing import Any

import numpy as np

from flink_agents_ltm.api.arguments import check_ids, check_json, check_limit
from flink_agents_ltm.api.errors import FlinkAgentsLtmError
from flink_agents_ltm.api.filters import MetadataFilter, parse_filter

__all__ = [
    "CollectionInfo",
    "CollectionNotFoundError",
    "DimensionMismatchError",
    "Document",
    "DocumentNotFoundError",
    "DuplicateDocumentError",
    "Metadata",
    "QueryResult",
    "VectorStoreQuery",
    "check_collection_name",
]


class DimensionMismatchError(FlinkAgentsLtmError, ValueError):
    """A vector (or a stored collection) does not have the store's dimension."""


class DuplicateDocumentError(FlinkAgentsLtmError, ValueError):
    """``add`` was given an id that is already stored (or twice in one call)."""


class DocumentNotFoundError(FlinkAgentsLtmError, LookupError):
    """``update`` was given an id that is not stored."""


class CollectionNotFoundError(FlinkAgentsLtmError, LookupError):
    """The collection does not exist in the store."""


# ------------------------------------------------------------------ values


def _plain(value: Any) -> Any:
    if isinstance(value, Metadata):
        return value.to_dict()
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    return value


class Metadata(Mapping[str, Any]):
    """An immutable JSON object: string keys, JSON values (lists become tuples)."""

    __slots__ = ("_items",)
    _items: dict[str, Any]

    def __init__(self, values: Mapping[str, Any] | None = None, where: str = "metadata"):
        if values is None:
            values = {}
        if not isinstance(values, Mapping):
            raise TypeError(f"{where} must be a dict, got {type(values).__name__}")
        if _flat(values):  # the common case, checked without a call per value
            object.__setattr__(self, "_items", dict(values))
            return
        # Lists become tuples, dicts Metadata; keys are non-empty, text is not checked.
        checked, _ = check_json(values, where, storable_text=False, empty_keys=False,
                                mapping=_frozen, sequence=tuple)
        object.__setattr__(self, "_items", checked._items)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("Metadata is immutable")

    def __getitem__(self, key: str) -> Any:
        return self._items[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __hash__(self) -> int:
        return hash(tuple(sorted(self._items.items(), key=lambda item: item[0])))

    def __repr__(self) -> str:
        return repr(self.to_dict())

    def __reduce__(self) -> tuple[Any, ...]:
        return (Metadata, (self.to_dict(),))

    def to_dict(self) -> dict[str, Any]:
        """A plain, mutable JSON copy."""
        return {key: _plain(value) for key, value in self._items.items()}


_NUMBER_TYPES = frozenset({float, int})
_SCALAR_TYPES = frozenset({str, int, bool, type(None)})


def _flat(values: Mapping[str, Any]) -> bool:
    """Whether ``values`` is valid metadata of non-empty str keys and scalar values (no
    float, which must be finite, no list or dict, which become immutable): copied as is.
    Checked by type sets, in C: this runs for every document read back."""
    return set(map(type, values.values())) <= _SCALAR_TYPES and set(map(type, values)) <= {
        str} and "" not in values


def _vector(value: Any, where: str) -> tuple[float, ...]:
    """A tuple of floats from any iterable of real numbers (a list, a numpy array).

    Vectors are long and checked on every call, so plain lists of floats take a path
    that stays in C; anything else gets the thorough check."""
    if isinstance(value, list | tuple) and value:
        if list(map(type, value)).count(float) == len(value):  # floats only
            if math.isfinite(sum(value)):
                return value if type(value) is tuple else tuple(value)
        elif set(map(type, value)) <= _NUMBER_TYPES and math.isfinite(sum(value)):
            return tuple(map(float, value))
    if isinstance(value, np.ndarray) and value.ndim == 1 and value.size and \
            value.dtype.kind in "fiu" and bool(np.isfinite(value).all()):
        return tuple(value.astype(np.float64).tolist())
    if isinstance(value, str | bytes | Mapping) or not isinstance(value, Iterable):
        raise TypeError(f"{where} must be a sequence of numbers, got {type(value).__name__}")
    values = list(value)
    if not values:
        raise ValueError(f"{where} is empty")
    for number in values:
        if isinstance(number, bool) or not isinstance(number, Real) or not math.isfinite(
                number):
            raise TypeError(f"{where} must hold finite numbers, found {number!r}")
    return tuple(float(number) for number in values)


def _document_id(value: Any, where: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{where}: a document id is a non-empty string, got {value!r}")
    return value


@dataclass(frozen=True)
class Document:
    """A piece of text with metadata; ``id`` and ``embedding`` are set by the store
    when not given, ``score`` (higher is more similar) only on query results."""

    content: str
    metadata: Mapping[str, Any] = field(default_factory=dict)
    id: str | None = None
    embedding: Sequence[float] | None = None
    score: float | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.content, str):
            raise TypeError(f"document content must be str, got {type(self.content).__name__}")
        object.__setattr__(self, "metadata", Metadata(self.metadata, "document metadata"))
        if self.id is not None:
            _document_id(self.id, "document id")
        if self.embedding is not None:
            object.__setattr__(self, "embedding", _vector(self.embedding, "document embedding"))
        if self.score is not None:
            if isinstance(self.score, bool) or not isinstance(self.score, int | float):
                raise TypeError(f"a score is a number, got {type(self.score).__name__}")
            object.__setattr__(self, "score", float(self.score))


def _frozen(values: dict[str, Any]) -> Metadata:
    """Metadata over ``values``, checked JSON in a dict made for it (not copied again)."""
    metadata = object.__new__(Metadata)
    object.__setattr__(metadata, "_items", values)
    return metadata


def _stored_metadata(values: dict[str, Any]) -> Metadata:
    """Metadata over ``values``, a dict the caller made for it and lets go of (not
    copied again when flat)."""
    if type(values) is dict and _flat(values):
        return _frozen(values)
    return Metadata(values, "stored metadata")


def _validated_document(content: str, metadata: Mapping[str, Any], document_id: str,
                        embedding: tuple[float, ...] | None, score: float | None = None
                        ) -> Document:
    """A Document from parts that are already checked (no second validation)."""
    document = object.__new__(Document)
    document.__dict__.update(content=content, metadata=metadata, id=document_id,
                             embedding=embedding, score=score)
    return document


@dataclass(frozen=True)
class VectorStoreQuery:
    """Find the ``limit`` documents nearest to ``text`` (embedded by the store) or to
    ``vector``, among those matching ``filters``."""

    text: str | None = None
    vector: Sequence[float] | None = None
    limit: int = 10
    filters: Mapping[str, Any] | MetadataFilter | None = None
    collection: str | None = None

    def __post_init__(self) -> None:
        _, vector, limit, filters, _ = _query_parts(self.text, self.vector, self.limit,
                                                    self.filters, self.collection)
        object.__setattr__(self, "vector", vector)
        object.__setattr__(self, "limit", limit)
        object.__setattr__(self, "filters", filters)


def _query_parts(text: Any, vector: Any, limit: Any, filters: Any, collection: Any
                 ) -> tuple[str | None, tuple[float, ...] | None, int, MetadataFilter | None,
                            str | None]:
    """A query's parts, checked: shared by :class:`VectorStoreQuery` and the keyword form
    of ``query``, which skips building one (a query of a small store takes a fraction of
    a millisecond, and this layer aims to add no more than 5 % to it)."""
    if (text is None) == (vector is None):
        raise ValueError("a query has either text or a vector (exactly one of them)")
    if text is not None and (not isinstance(text, str) or not text.strip()):
        raise ValueError(f"query text must be a non-empty str, got {text!r}")
    if collection is not None:
        check_collection_name(collection)
    return (text, None if vector is None else _vector(vector, "query vector"), check_limit(limit),
            parse_filter(filters), collection)


@dataclass(frozen=True)
class QueryResult:
    """The documents found, most similar first, each with its ``score``."""

    documents: tuple[Document, ...]

    def __iter__(self) -> Iterator[Document]:
        return iter(self.documents)

    def __len__(self) -> int:
        return len(self.documents)


@dataclass(frozen=True)
class CollectionInfo:
    """What a store says about a collection; ``details`` are store-specific."""

    name: str
    size: int
    dimensions: int | None
    details: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "details", Metadata(self.details, "collection details"))


_COLLECTION_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_-]{0,62}")


def check_collection_name(name: Any) -> str:
    """Collection names become table, folder and file names in the stores: 1 to 63
    letters, digits, ``_`` or ``-``, not starting with ``-``."""
    if not isinstance(name, str) or not _COLLECTION_NAME.fullmatch(name):
        raise ValueError(f"invalid collection name {name!r}: use 1 to 63 letters, digits, '_' "
                         "or '-' (not starting with '-')")
    return name


def _documents(documents: Any, operation: str) -> list[Document]:
    if isinstance(documents, Document):
        return [documents]
    if isinstance(documents, str | bytes | Mapping) or not isinstance(documents, Sequence):
        raise TypeError(f"{operation} takes a Document or a list of Documents, got "
                        f"{type(documents).__name__}")
    for index, document in enumerate(documents):
        if not isinstance(document, Document):
            raise TypeError(f"{operation}: item {index} is a {type(document).__name__}, not a "
                            "Document")
    return list(documents)


def _ids(ids: Any) -> list[str]:
    """The distinct document ids of ``ids``, in order."""
    return list(dict.fromkeys(_document_id(i, f"ids[{n}]")
                              for n, i in enumerate(check_ids(ids))))


def _refuse_repeated_ids(documents: Sequence[Document], operation: str) -> None:
    seen: set[str] = set()
    for document in documents:
        if document.id in seen:
            raise DuplicateDocumentError(f"{operation}: id {document.id!r} appears twice in "
                                         "one call")
        if document.id is not None:
            seen.add(document.id)

"""Vector stores as agent resources: documents in, documents with scores out.

.. code-block:: python

    class Librarian(Agent):
        @embedding_model_setup
        def embedder():
            return ResourceDescriptor(OllamaEmbeddingModelSetup, model="nomic-embed-text")

        @vector_store_setup
        def knowledge():
            return ResourceDescriptor(Mem0VectorStore, embedding_model="embedder",
                                      provider="qdrant", config={"path": "/data/qdrant"})

        @action(InputEvent)
        async def answer(event, ctx):
            store = ctx.get_resource("knowledge", ResourceType.VECTOR_STORE)
            hits = await ctx.durable_execute_async(store.query, event.input, limit=3,
                                                   filters={"lang": "en"})
            ...

A store embeds text through the embedding model resource named in its
descriptor (``embedding_model``), in batches; documents and queries may carry
precomputed vectors instead. Filters are the project's one filter language
(:mod:`flink_agents_ltm.api.filters`, Mem0's operators and ``AND`` /
``OR`` / ``NOT``); every store returns exactly what :func:`matches` accepts.

Threading: a store is built once per process and shared by every operator
subtask and worker thread of the job in it, so implementations are thread-safe;
embedding runs outside any lock an implementation holds. The public methods
validate their input and then call the small abstract ``_`` methods.
"""

from __future__ import annotations

import math
import re
import uuid
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from numbers import Real
from typing import Any, ClassVar

import numpy as np

from flink_agents_ltm.api.arguments import check_ids, check_json, check_limit
from flink_agents_ltm.api.chat_models import BaseEmbeddingModelSetup
from flink_agents_ltm.api.errors import FlinkAgentsLtmError
from flink_agents_ltm.api.filters import MetadataFilter, parse_filter
from flink_agents_ltm.api.resources import Resource, ResourceLookup, ResourceType

__all__ = [
    "BaseVectorStore",
    "CollectionInfo",
    "CollectionManageableVectorStore",
    "CollectionNotFoundError",
    "DimensionMismatchError",
    "Document",
    "DocumentNotFoundError",
    "DuplicateDocumentError",
    "Metadata",
    "QueryResult",
    "VectorStoreQuery",
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


# ------------------------------------------------------------------ stores


Embed = Callable[[list[str]], list[list[float]]]


class BaseVectorStore(Resource, ABC):
    """Documents with embeddings in collections; ``collection`` is the default one.

    ``embedding_model`` names the declared embedding model that embeds documents
    and query texts (``embedding_batch_size`` texts per call); ``dimensions`` is
    the vector length when no model is named (documents and queries then carry
    their vectors). Both are checked against each other and the stored collection
    when the resource opens, that is when the job starts.
    """

    resource_arguments: ClassVar[Mapping[str, ResourceType]] = {
        "embedding_model": ResourceType.EMBEDDING_MODEL}

    def __init__(self, *, embedding_model: str | None = None, dimensions: int | None = None,
                 collection: str = "flink_agents", embedding_batch_size: int = 32):
        if embedding_model is not None and (not isinstance(embedding_model, str)
                                            or not embedding_model.strip()):
            raise ValueError("embedding_model is the name of a declared embedding model, got "
                             f"{embedding_model!r}")
        if dimensions is not None and (isinstance(dimensions, bool)
                                       or not isinstance(dimensions, int) or dimensions < 1):
            raise ValueError(f"dimensions must be a positive int, got {dimensions!r}")
        if isinstance(embedding_batch_size, bool) or not isinstance(
                embedding_batch_size, int) or embedding_batch_size < 1:
            raise ValueError(f"embedding_batch_size must be a positive int, got "
                             f"{embedding_batch_size!r}")
        self.embedding_model = embedding_model
        self.collection = check_collection_name(collection)
        self.embedding_batch_size = embedding_batch_size
        self._dimensions = dimensions
        self._embed: Embed | None = None

    # ------------------------------------------------------------- lifecycle

    def open(self, get_resource: ResourceLookup) -> None:
        """Resolve the embedding model and learn the dimension (subclasses then connect)."""
        if self.embedding_model is None:
            if self._dimensions is None:
                raise ValueError(f"{type(self).__name__} needs embedding_model= (the name of a "
                                 "declared embedding model) or dimensions=")
            return
        model = get_resource(self.embedding_model, ResourceType.EMBEDDING_MODEL)
        embed, dimensions = self._embedder_for(model)
        if dimensions is None:
            dimensions = len(embed(["dimension probe"])[0])
        if self._dimensions is not None and self._dimensions != dimensions:
            raise DimensionMismatchError(
                f"{type(self).__name__} is configured for {self._dimensions}-dimensional "
                f"vectors but embedding model '{self.embedding_model}' produces {dimensions}")
        self._embed, self._dimensions = embed, dimensions

    def _embedder_for(self, model: Any) -> tuple[Embed, int | None]:
        """How to embed with ``model`` and its dimension if known without a call.
        Implementations may accept more kinds of models."""
        if not isinstance(model, BaseEmbeddingModelSetup):
            raise TypeError(f"embedding model '{self.embedding_model}' is a "
                            f"{type(model).__name__}, not a BaseEmbeddingModelSetup")
        return (lambda texts: model.embed(texts)), model.dimensions

    @property
    def dimensions(self) -> int:
        """The length of every vector in this store (known once opened)."""
        if self._dimensions is None:
            raise RuntimeError(f"{type(self).__name__} is not open yet: its dimension comes "
                               "from the embedding model when the job starts")
        return self._dimensions

    def embed(self, texts: Sequence[str]) -> list[tuple[float, ...]]:
        """Vectors for ``texts`` from the embedding model, ``embedding_batch_size`` at a time."""
        if self._embed is None:
            raise ValueError(f"{type(self).__name__} has no embedding model to embed text: "
                             "name one with embedding_model=... or give documents and queries "
                             "their vectors")
        vectors: list[tuple[float, ...]] = []
        for start in range(0, len(texts), self.embedding_batch_size):
            batch = list(texts[start:start + self.embedding_batch_size])
            answer = self._embed(batch)
            if len(answer) != len(batch):
                raise ValueError(f"embedding model '{self.embedding_model}' returned "
                                 f"{len(answer)} vectors for {len(batch)} texts")
            vectors.extend(self._checked(_vector(v, "an embedding"), "an embedding")
                           for v in answer)
        return vectors

    def _checked(self, vector: Any, what: str) -> tuple[float, ...]:
        values = vector if isinstance(vector, tuple) else _vector(vector, what)
        if len(values) != self.dimensions:
            raise DimensionMismatchError(f"{what} has {len(values)} dimensions; this store "
                                         f"holds {self.dimensions}-dimensional vectors")
        return values

    def _complete(self, documents: list[Document]) -> list[Document]:
        """Documents with an id and a checked embedding each (missing ones embedded)."""
        missing = [d.content for d in documents if d.embedding is None]
        vectors = iter(self.embed(missing)) if missing else iter(())
        complete = []
        for d in documents:
            embedding = next(vectors) if d.embedding is None else self._checked(
                d.embedding, f"the embedding of document {d.id!r}")
            complete.append(_validated_document(d.content, d.metadata,
                                                d.id or str(uuid.uuid4()), embedding))
        return complete

    def _collection(self, collection: str | None) -> str:
        return self.collection if collection is None else check_collection_name(collection)

    # ------------------------------------------------------------- documents

    def add(self, documents: Document | Sequence[Document], *,
            collection: str | None = None) -> list[str]:
        """Store new documents; returns their ids (generated where not given). An id that
        is already stored is refused (:class:`DuplicateDocumentError`) before anything is
        written; use :meth:`update` to change a document."""
        docs = _documents(documents, "add")
        _refuse_repeated_ids(docs, "add")
        name = self._collection(collection)
        if not docs:
            return []
        complete = self._complete(docs)
        given = [d.id for d in docs if d.id is not None]
        if given:
            taken = self._existing_ids(name, given)
            if taken:
                raise DuplicateDocumentError(f"add: id(s) {sorted(taken)} are already stored in "
                                             f"collection '{name}'; use update() to change them")
        self._add(name, complete)
        return [d.id for d in complete if d.id is not None]  # all: completed, each has one

    def query(self, query: VectorStoreQuery | str | None = None, *,
              vector: Sequence[float] | None = None, limit: int = 10,
              filters: Mapping[str, Any] | MetadataFilter | None = None,
              collection: str | None = None) -> QueryResult:
        """The ``limit`` documents nearest to the query, among those matching ``filters``.
        Call it with a :class:`VectorStoreQuery`, or with text (or ``vector=``) and
        keywords."""
        if isinstance(query, VectorStoreQuery):
            if vector is not None or limit != 10 or filters is not None or collection is not None:
                raise TypeError("pass either a VectorStoreQuery or text/vector with keywords, "
                                "not both")
            # Checked when it was made (parse_filter gives a parsed tree back as is).
            text, vector_, limit, filter_, collection = (
                query.text, query.vector, query.limit, parse_filter(query.filters),
                query.collection)
        else:
            text, vector_, limit, filter_, collection = _query_parts(query, vector, limit,
                                                                     filters, collection)
        if text is not None:  # a query has either text or a vector
            vector_ = self.embed([text])[0]
        else:
            vector_ = self._checked(vector_, "the query vector")
        found = self._query(self._collection(collection), vector_, limit, filter_)
        return QueryResult(tuple(found))

    def get(self, ids: str | Sequence[str] | None = None, *,
            filters: Mapping[str, Any] | MetadataFilter | None = None, limit: int | None = 100,
            collection: str | None = None) -> list[Document]:
        """Documents by id (in the order asked, missing ones left out; ``limit`` does not
        apply) or matching ``filters`` (at most ``limit``; ``None`` for all), or both."""
        wanted = None if ids is None else _ids(ids)
        filter_ = parse_filter(filters)
        if limit is not None:
            limit = check_limit(limit)
        name = self._collection(collection)
        if wanted is not None:
            return self._get(name, wanted, filter_, None) if wanted else []
        return self._get(name, None, filter_, limit)

    def delete(self, ids: str | Sequence[str] | None = None, *,
               filters: Mapping[str, Any] | MetadataFilter | None = None,
               collection: str | None = None) -> list[str]:
        """Delete documents by id, or those matching ``filters``, or the ids among them
        that match; returns the ids that were deleted. Use ``reset`` to empty a collection."""
        filter_ = parse_filter(filters)
        if ids is None and filter_ is None:
            raise ValueError("delete needs ids or filters; reset() empties a whole collection")
        name = self._collection(collection)
        wanted = None if ids is None else _ids(ids)
        if wanted == []:
            return []
        # Documents read back from the store always have an id.
        doomed = [d.id for d in self._get(name, wanted, filter_, None)
                  if d.id is not None]
        if doomed:
            self._delete(name, doomed)
        return doomed

    def update(self, documents: Document | Sequence[Document], *,
               collection: str | None = None) -> None:
        """Replace stored documents (content, metadata and vector; the vector is embedded
        again unless given). Every document needs an id that is stored, else nothing
        changes (:class:`DocumentNotFoundError`)."""
        docs = _documents(documents, "update")
        for index, document in enumerate(docs):
            if document.id is None:
                raise ValueError(f"update: document {index} has no id")
        _refuse_repeated_ids(docs, "update")
        name = self._collection(collection)
        if not docs:
            return
        ids = [d.id for d in docs if d.id is not None]  # all of them: checked above
        stored = self._existing_ids(name, ids)
        missing = [i for i in ids if i not in stored]
        if missing:
            raise DocumentNotFoundError(f"update: id(s) {missing} are not stored in collection "
                                        f"'{name}'; nothing was changed")
        self._update(name, self._complete(docs))

    def size(self, collection: str | None = None) -> int:
        """How many documents the collection holds."""
        return self._size(self._collection(collection))

    # ------------------------------------------------------------- implementation

    @staticmethod
    def _stored_document(content: str, metadata: dict[str, Any], document_id: str,
                         score: float | None = None) -> Document:
        """For implementations: the Document of a row read back from the store. Its parts
        were checked on the way in, so only the metadata is checked again (it becomes an
        immutable :class:`Metadata` over ``metadata``, a dict made for this document and
        not used afterwards); Document's other field checks cost more per row than a FAISS
        search of thousands of rows."""
        document = object.__new__(Document)
        object.__setattr__(document, "__dict__", {
            "content": content, "metadata": _stored_metadata(metadata), "id": document_id,
            "embedding": None, "score": score})
        return document

    @abstractmethod
    def _add(self, collection: str, documents: Sequence[Document]) -> None:
        """Insert documents that all have an id that is not stored and an embedding."""

    @abstractmethod
    def _query(self, collection: str, vector: tuple[float, ...], limit: int,
               filter_: MetadataFilter | None) -> list[Document]:
        """The nearest matching documents, most similar first, with scores."""

    @abstractmethod
    def _get(self, collection: str, ids: Sequence[str] | None, filter_: MetadataFilter | None,
             limit: int | None) -> list[Document]:
        """Stored documents among ``ids`` (in that order; all when ``None``) that match
        ``filter_``, at most ``limit`` (all when ``None``)."""

    @abstractmethod
    def _existing_ids(self, collection: str, ids: Sequence[str]) -> set[str]:
        """Which of ``ids`` are stored (none when the collection does not exist)."""

    @abstractmethod
    def _delete(self, collection: str, ids: Sequence[str]) -> None:
        """Delete stored documents."""

    @abstractmethod
    def _update(self, collection: str, documents: Sequence[Document]) -> None:
        """Replace stored documents (each has an id that is stored, and an embedding)."""

    @abstractmethod
    def _size(self, collection: str) -> int:
        """The number of documents in the collection."""


class CollectionManageableVectorStore(BaseVectorStore, ABC):
    """A store whose collections can be created, listed, inspected and dropped."""

    def get_or_create_collection(self, name: str) -> CollectionInfo:
        """The collection ``name``, created (for this store's dimension) if absent."""
        return self._get_or_create_collection(check_collection_name(name))

    def get_collection(self, name: str) -> CollectionInfo:
        """The collection ``name``; :class:`CollectionNotFoundError` if it does not exist."""
        return self._get_collection(check_collection_name(name))

    def delete_collection(self, name: str) -> None:
        """Drop the collection and its documents; :class:`CollectionNotFoundError` if it
        does not exist."""
        self._delete_collection(check_collection_name(name))

    def list_collections(self) -> list[str]:
        """The names of the collections in the store, sorted."""
        return sorted(self._list_collections())

    def reset(self, collection: str | None = None) -> None:
        """Remove every document of the collection (default: this store's); it stays."""
        self._reset(self._collection(collection))

    @abstractmethod
    def _get_or_create_collection(self, name: str) -> CollectionInfo: ...

    @abstractmethod
    def _get_collection(self, name: str) -> CollectionInfo: ...

    @abstractmethod
    def _delete_collection(self, name: str) -> None: ...

    @abstractmethod
    def _list_collections(self) -> list[str]: ...

    @abstractmethod
    def _reset(self, name: str) -> None: ...

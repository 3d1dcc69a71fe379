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
validate their input and then call the small abstract ``_`` methods. The values (documents,
queries, results, errors) are :mod:`flink_agents_ltm.api.vector_store_values`'; every name
stays importable from here.
"""

from __future__ import annotations

import uuid
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

from flink_agents_ltm.api.arguments import check_limit
from flink_agents_ltm.api.chat_models import BaseEmbeddingModelSetup
from flink_agents_ltm.api.filters import MetadataFilter, parse_filter
from flink_agents_ltm.api.resources import Resource, ResourceLookup, ResourceType
from flink_agents_ltm.api.vector_store_values import (
    CollectionInfo,
    CollectionNotFoundError,
    DimensionMismatchError,
    Document,
    DocumentNotFoundError,
    DuplicateDocumentError,
    Metadata,
    QueryResult,
    VectorStoreQuery,
    _documents,
    _ids,
    _query_parts,
    _refuse_repeated_ids,
    _stored_metadata,
    _validated_document,
    _vector,
    check_collection_name,
)

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

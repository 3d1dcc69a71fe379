"""The other direction: any of our vector stores as Mem0's vector store (design doc 004).

Long-term memory may name a declared vector store resource
(``LongTermMemoryOptions.VECTOR_STORE = "knowledge"``); when that resource is a
:class:`BaseVectorStore`, the memory factory builds Mem0 on a
:class:`FlinkAgentsMem0VectorStore` over it:

.. code-block:: python

    config = MemoryConfig(history_db_path=...)
    config.vector_store = mem0_vector_store_config(store, dimensions=embedder_dims)
    memory = Memory(config)

Mem0 hands over its own vectors, payloads and filters: a payload's ``data`` is
the document's content, the rest its metadata; filters arrive in Mem0's
processed form (``$or``/``$not``) and are read back into the project's filter
language (scope fields included), so the store evaluates them exactly. An
``insert`` under an id that is stored rewrites that row, as Qdrant's does: long-term
memory writes again under the same ids when Flink replays an action. Mem0's
entity store (used with ``infer=True``) lives in the collection
``<collection>_entities``, which needs a :class:`CollectionManageableVectorStore`.

The store is the resource provider's: Mem0 never closes it, and it is
thread-safe, so Mem0 calls it from any thread without a lock of ours.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from flink_agents_ltm.api.filters import parse_filter
from flink_agents_ltm.api.vector_stores import (
    BaseVectorStore,
    CollectionManageableVectorStore,
    DimensionMismatchError,
    Document,
)
from flink_agents_ltm.integrations.mem0.environment import import_mem0

import_mem0()
from mem0.utils.factory import VectorStoreFactory  # noqa: E402
from mem0.vector_stores.base import VectorStoreBase  # noqa: E402
from mem0.vector_stores.configs import VectorStoreConfig  # noqa: E402
from pydantic import BaseModel, ConfigDict  # noqa: E402

__all__ = ["PROVIDER", "FlinkAgentsMem0VectorStore", "mem0_vector_store_config"]

PROVIDER = "flink_agents"
CONTENT_KEY = "data"
_LOGIC = {"$or": "OR", "$not": "NOT", "$and": "AND"}


class OutputData(BaseModel):
    """A row as Mem0 reads it (``id``, ``score``, ``payload``)."""

    id: str | None
    score: float | None
    payload: dict[str, Any] | None


class FlinkAgentsVectorStoreConfig(BaseModel):
    """Mem0's vector store config for :data:`PROVIDER`: the live store and a collection.

    Mem0 deep-copies configs (for its entity store); a copy shares the store."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    vector_store: BaseVectorStore
    collection_name: str
    embedding_model_dims: int

    def __deepcopy__(self, memo: dict[int, Any] | None = None) -> FlinkAgentsVectorStoreConfig:
        return self.model_copy()


def mem0_vector_store_config(store: BaseVectorStore, dimensions: int,
                             collection: str | None = None) -> VectorStoreConfig:
    """What ``MemoryConfig.vector_store`` should be for long-term memory on ``store`` (an
    opened resource) with an embedder of ``dimensions``; refuses a mismatch up front."""
    if not isinstance(store, BaseVectorStore):
        raise TypeError(f"long-term memory can use a BaseVectorStore resource, got "
                        f"{type(store).__name__}")
    if store.dimensions != dimensions:
        raise DimensionMismatchError(
            f"the vector store {store!r} holds {store.dimensions}-dimensional vectors but "
            f"long-term memory's embedding model produces {dimensions}")
    config = FlinkAgentsVectorStoreConfig(vector_store=store,
                                          collection_name=collection or store.collection,
                                          embedding_model_dims=dimensions)
    return VectorStoreConfig.model_construct(provider=PROVIDER, config=config)


def _from_mem0(filters: Any) -> Any:
    """Mem0's processed filters (``$or``, ``$not``) in the project's language."""
    if isinstance(filters, Mapping):
        return {_LOGIC.get(k, k): _from_mem0(v) for k, v in filters.items()}
    if isinstance(filters, list):
        return [_from_mem0(v) for v in filters]
    return filters


def _row(document: Document, score: bool) -> OutputData:
    # Document.__post_init__ makes metadata a Metadata; the field is typed as given.
    payload = document.metadata.to_dict()  # type: ignore[attr-defined]
    payload[CONTENT_KEY] = document.content
    return OutputData(id=document.id, score=document.score if score else None, payload=payload)


class FlinkAgentsMem0VectorStore(VectorStoreBase):
    """Mem0's ``VectorStoreBase`` over a :class:`BaseVectorStore` resource, pinned to one
    collection (Mem0 makes one per collection)."""

    def __init__(self, vector_store: BaseVectorStore, collection_name: str,
                 embedding_model_dims: int, **_: Any):
        self.store = vector_store
        self.collection_name = collection_name
        self.embedding_model_dims = embedding_model_dims
        self.create_col(collection_name, embedding_model_dims, None)

    def _manageable(self, what: str) -> CollectionManageableVectorStore:
        if not isinstance(self.store, CollectionManageableVectorStore):
            raise NotImplementedError(
                f"Mem0 needs to {what}, which {type(self.store).__name__} cannot do (it is not "
                "a CollectionManageableVectorStore)")
        return self.store

    def create_col(self, name: str, vector_size: int | None, distance: Any) -> None:
        self.collection_name = name
        if name == self.store.collection:
            return
        self._manageable(f"use the collection '{name}'").get_or_create_collection(name)

    def insert(self, vectors: list[list[float]], payloads: list[dict[str, Any]] | None = None,
               ids: list[str] | None = None) -> None:
        """Store rows; an id that is already stored is rewritten, as Qdrant's insert does
        (long-term memory writes again under the same ids when Flink replays an action)."""
        payloads = payloads or [{} for _ in vectors]
        row_ids: list[str | None] = list(ids) if ids else [None] * len(vectors)
        documents = []
        for vector, payload, vector_id in zip(vectors, payloads, row_ids, strict=True):
            metadata = {k: v for k, v in payload.items() if k != CONTENT_KEY}
            documents.append(Document(str(payload.get(CONTENT_KEY, "")), metadata, vector_id,
                                      vector))
        given = [d.id for d in documents if d.id is not None]
        known = {d.id for d in self.store.get(given, collection=self.collection_name)
                 } if given else set()
        stored = [d for d in documents if d.id in known]
        if stored:
            self.store.update(stored, collection=self.collection_name)
        new = [d for d in documents if d.id not in known]
        if new:
            self.store.add(new, collection=self.collection_name)

    def search(self, query: str, vectors: list[float], top_k: int = 5,
               filters: dict[str, Any] | None = None) -> list[OutputData]:
        found = self.store.query(vector=vectors, limit=top_k,
                                 filters=parse_filter(_from_mem0(filters)),
                                 collection=self.collection_name)
        return [_row(d, score=True) for d in found]

    def keyword_search(self, query: str, top_k: int = 5,
                       filters: dict[str, Any] | None = None) -> None:
        """Not offered: Mem0 then ranks by vectors alone."""

    def delete(self, vector_id: str) -> None:
        self.store.delete(vector_id, collection=self.collection_name)

    def update(self, vector_id: str, vector: list[float] | None = None,
               payload: dict[str, Any] | None = None) -> None:
        """Replace the row; without ``vector`` the store embeds the content again (with its
        own embedding model: give it the one long-term memory uses)."""
        if payload is None:
            current = self.get(vector_id)
            if current is None:
                raise ValueError(f"no memory with id {vector_id} to update")
            payload = current.payload or {}
        metadata = {k: v for k, v in payload.items() if k != CONTENT_KEY}
        self.store.update(Document(str(payload.get(CONTENT_KEY, "")), metadata, vector_id,
                                   vector), collection=self.collection_name)

    def get(self, vector_id: str) -> OutputData | None:
        found = self.store.get(vector_id, collection=self.collection_name)
        return _row(found[0], score=False) if found else None

    def list_cols(self) -> list[str]:
        if isinstance(self.store, CollectionManageableVectorStore):
            return self.store.list_collections()
        return [self.store.collection]

    def delete_col(self) -> None:
        self._manageable(f"drop the collection '{self.collection_name}'").delete_collection(
            self.collection_name)

    def col_info(self) -> dict[str, Any]:
        info = self._manageable("describe a collection").get_collection(self.collection_name)
        return {"name": info.name, "count": info.size, "dimensions": info.dimensions}

    def list(self, filters: dict[str, Any] | None = None,
             top_k: int | None = 100) -> list[list[OutputData]]:
        found = self.store.get(filters=parse_filter(_from_mem0(filters)), limit=top_k,
                               collection=self.collection_name)
        return [[_row(d, score=False) for d in found]]

    def reset(self) -> None:
        self._manageable("reset a collection").reset(self.collection_name)


VectorStoreFactory.provider_to_class[PROVIDER] = f"{__name__}.FlinkAgentsMem0VectorStore"

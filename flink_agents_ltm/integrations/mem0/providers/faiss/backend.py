"""FAISS: Mem0's ``faiss`` keeps ``<path>/<collection>.faiss`` and ``.json`` per collection,
saved whole and private, with an insert that a failed save undoes and a one-pass
``delete_many`` (:mod:`~flink_agents_ltm.integrations.mem0.providers.faiss.files`). Not thread-safe:
concurrent calls lose saves."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from flink_agents_ltm.api.filters import MetadataFilter
from flink_agents_ltm.integrations.mem0 import private_api
from flink_agents_ltm.integrations.mem0.providers.base import StoreBackend
from flink_agents_ltm.integrations.mem0.providers.faiss import files as faiss_files
from flink_agents_ltm.integrations.mem0.providers.filter_parts import (
    NativeFilter,
    equality_only,
    merged,
)
from flink_agents_ltm.integrations.mem0.providers.pgvector.backend import Row


class FaissBackend(StoreBackend):
    provider: ClassVar[str] = "faiss"
    extra: ClassVar[str | None] = "faiss"

    def needs_lock(self, store: Any) -> bool:
        return True

    def upserts_on_insert(self, store: Any) -> bool:
        return False

    def native_filter(self, filter_: MetadataFilter, parts: list[MetadataFilter], *,
                      search: bool, reserved: frozenset[str]) -> NativeFilter:
        """A search would filter only ``2 * top_k`` neighbours: it gets none; ``list``
        knows equality and the list shorthand for ``in``."""
        if search:
            return NativeFilter(None, False)
        return merged(list(map(equality_only(reserved, lists=True), parts)), len(parts))

    def opened(self, vector_store: Any, connection: Any, dimensions: int) -> None:
        faiss_files.save_safely(vector_store)

    def prepare(self, store: Any, dimensions: int,
                settings: dict[str, Any] | None = None) -> None:
        faiss_files.save_safely(store)

    def collections(self, owner: Any) -> list[str]:
        return sorted(p.stem for p in Path(owner.path).glob("*.faiss"))

    def stored_dimensions(self, store: Any) -> int | None:
        return None if store.index is None else int(store.index.d)

    def count(self, store: Any) -> int | None:
        return 0 if store.index is None else len(store.docstore)

    def search(self, store: Any, vector: list[float], k: int,
               filters: dict[str, Any] | None) -> list[Any]:
        """Mem0's search (same index, same scores) without a pydantic object and a
        payload copy per row: a FAISS search takes a fraction of a millisecond, and a
        filtered query reads many more rows than it returns (no filter pushdown, see
        :meth:`native_filter`). With a filter, Mem0's own search."""
        if filters is not None or store.index is None:
            return super().search(store, vector, k, filters)
        import faiss

        k = min(k, store.index.ntotal)
        if k == 0:
            return []
        query = np.array([vector], dtype=np.float32)
        if private_api.faiss_normalizes(store):
            faiss.normalize_L2(query)
        distances, positions = store.index.search(query, k)
        euclidean = store.distance_strategy.lower() == "euclidean"
        rows: list[Row] = []
        for distance, position in zip(distances[0].tolist(), positions[0].tolist(),
                                      strict=True):
            vector_id = store.index_to_id.get(position)
            payload = None if vector_id is None else store.docstore.get(vector_id)
            if payload is not None:
                rows.append(Row(vector_id, payload,
                                1.0 / (1.0 + distance) if euclidean else distance))
        return rows

    def get_many(self, store: Any, ids: Sequence[str]) -> list[Any]:
        return [Row(i, store.docstore[i]) for i in ids if i in store.docstore]

    def delete_many(self, store: Any, ids: Sequence[str]) -> None:
        store.delete_many(list(ids))  # one pass, one save: faiss_files

    def close(self, owner: Any) -> None:
        """Nothing is held open: every write already saved the files."""

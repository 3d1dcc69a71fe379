"""Mem0's other stores (Milvus, Elasticsearch, ...), through ``VectorStoreBase`` alone."""

from __future__ import annotations

from typing import Any, ClassVar

from flink_agents_ltm.integrations.mem0.providers.base import StoreBackend


class GenericBackend(StoreBackend):
    """Any Mem0 store we have not tested: the defaults of :class:`StoreBackend`."""


class ChromaBackend(GenericBackend):
    """A local Chroma client shares one SQLite file: calls are serialized."""

    provider: ClassVar[str] = "chroma"
    server_keys: ClassVar[tuple[str, ...]] = ("host", "client", "api_key")

    def needs_lock(self, store: Any) -> bool:
        return True

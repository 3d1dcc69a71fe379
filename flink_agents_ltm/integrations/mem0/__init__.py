"""Mem0 wired for Flink: everything this project knows about Mem0, in one package.

* :mod:`.long_term_memory` -- long-term memory on Mem0 (``Mem0LongTermMemory``), opened
  by :mod:`.memory_factory` (one shared client per store);
* :mod:`.vector_store` -- every store Mem0 supports as an agent resource
  (``Mem0VectorStore``); the other direction, a vector store of ours as Mem0's store, is
  :mod:`.resource_store`;
* :mod:`.backends` -- one ``StoreBackend`` per store provider, owning every fact about it;
  Mem0's and qdrant-client's private members are reached through :mod:`.private_api`
  alone;
* the offline environment (:mod:`.environment`), the local embedder, the embedded store
  and pgvector's connection, preparation and self-check.

Import :func:`import_mem0` (or anything here) before ``mem0`` itself: Mem0
reads its telemetry switch and home folder at import time.
"""

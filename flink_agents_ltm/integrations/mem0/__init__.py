"""Mem0 wired for Flink: everything this project knows about Mem0, in one package.

* :mod:`.long_term_memory` -- long-term memory on Mem0 (``Mem0LongTermMemory``), opened
  by :mod:`.memory_factory` (one shared client per store);
* :mod:`.vector_store` -- every store Mem0 supports as an agent resource
  (``Mem0VectorStore``); the other direction, a vector store of ours as Mem0's store, is
  :mod:`.resource_store`;
* :mod:`.providers` -- one folder per store provider (``embedded``, ``pgvector``,
  ``faiss``, ``qdrant``; ``generic`` for Mem0's other stores) holding everything about it:
  its ``StoreBackend``, its store or search code, its connection, schema and self-check;
  Mem0's and qdrant-client's private members are reached through :mod:`.private_api`
  alone;
* the offline environment (:mod:`.environment`) and the local embedder.

Import :func:`import_mem0` (or anything here) before ``mem0`` itself: Mem0
reads its telemetry switch and home folder at import time.
"""

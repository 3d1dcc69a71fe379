"""Vector stores as agent resources (:class:`Mem0VectorStore`: every store Mem0 supports).
The other direction, any of them as Mem0's vector store, is
:mod:`flink_agents_ltm.integrations.mem0.resource_store`; this package builds on
:mod:`flink_agents_ltm.integrations.mem0` (its backends), never the other way round."""

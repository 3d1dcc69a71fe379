"""Vector stores as agent resources (:class:`Mem0VectorStore`: every store Mem0 supports),
and the other direction: any of them as Mem0's vector store (:mod:`.mem0_adapter`)."""

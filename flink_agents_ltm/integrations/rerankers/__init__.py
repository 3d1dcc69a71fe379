"""Rerankers the package ships (see :mod:`flink_agents_ltm.api.rerankers`): lexical BM25
(no model), a local cross-encoder (sentence-transformers) and an LLM through a declared chat
model; Mem0's own reranker providers are adapted in :mod:`..mem0.rerankers`."""

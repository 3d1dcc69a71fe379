"""Mem0's own reranker providers as a declared reranker.

.. code-block:: python

    @reranker_setup
    def reranker():
        return ResourceDescriptor(Mem0Reranker, provider="sentence_transformer",
                                  config={"model": "/models/ms-marco-MiniLM-L-6-v2"})

``provider`` and ``config`` are Mem0's (``mem0.utils.factory.RerankerFactory``:
``sentence_transformer``, ``huggingface``, ``llm_reranker``, ``cohere``,
``zero_entropy``);
the reranker is built in :meth:`open`, so a missing package or a model Mem0
would download fails the job at start. Hosted providers send the candidates'
text to their service and read an API key from ``config`` (masked in logs).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from flink_agents_ltm.api.rerankers import BaseReranker, RerankerError
from flink_agents_ltm.api.resources import Resource, ResourceLookup
from flink_agents_ltm.integrations.mem0.environment import import_mem0

__all__ = ["Mem0Reranker"]

_INDEX = "flink_agents_ltm_index"


class Mem0Reranker(Resource, BaseReranker):
    """``RerankerFactory.create(provider, config)``, scoring by its ``rerank_score``."""

    def __init__(self, provider: str, config: Mapping[str, Any] | None = None):
        if not isinstance(provider, str) or not provider.strip():
            raise ValueError(f"Mem0Reranker needs provider, one of Mem0's reranker providers; "
                             f"got {provider!r}")
        if config is not None and not isinstance(config, Mapping):
            raise TypeError(f"Mem0Reranker config is a dict, got {type(config).__name__}")
        self.provider, self.config = provider, dict(config or {})
        self._reranker: Any = None

    def open(self, get_resource: ResourceLookup) -> None:
        import_mem0()
        from mem0.utils.factory import RerankerFactory

        known = sorted(RerankerFactory.provider_to_class)
        if self.provider not in known:
            raise ValueError(f"Mem0Reranker provider '{self.provider}' is not one of Mem0's: "
                             f"{', '.join(known)}")
        self._reranker = RerankerFactory.create(self.provider, dict(self.config))

    def score(self, query: str, documents: Sequence[str]) -> list[float]:
        if self._reranker is None:
            raise RerankerError("Mem0Reranker is not open: declare it with @reranker_setup so "
                                "that the runtime opens it")
        rows = [{"memory": text, _INDEX: index} for index, text in enumerate(documents)]
        ranked = self._reranker.rerank(query, rows, top_k=None)
        scores = [float("-inf")] * len(documents)
        for row in ranked:
            scores[row[_INDEX]] = float(row.get("rerank_score", 0.0))
        low = min((s for s in scores if s != float("-inf")), default=0.0)
        return [low - 1.0 if s == float("-inf") else s for s in scores]

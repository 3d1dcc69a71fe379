"""Rerankers: a second, closer look at a search's candidates.

A search first asks the store for the items nearest to the query (cosine over
embeddings); with ``search(..., rerank=True)`` the long-term memory fetches
more candidates than asked for (``long-term-memory.rerank-candidates`` times
``limit``, of the set's own scope only) and a reranker orders them by how well
each answers the query. The reranker is a declared resource:

.. code-block:: python

    @reranker_setup
    def reranker():
        return ResourceDescriptor(
            "flink_agents_ltm.integrations.rerankers.lexical.LexicalReranker")

and the option ``long-term-memory.reranker: reranker`` names it. A reranker
implements :meth:`BaseReranker.score`; see ``docs/memory-reranking.md`` for the
ones the package ships (lexical BM25, a local cross-encoder, an LLM through a
declared chat model, Mem0's reranker providers).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence

from flink_agents_ltm.api.errors import FlinkAgentsLtmError

__all__ = ["BaseReranker", "RerankerError"]


class RerankerError(FlinkAgentsLtmError, RuntimeError):
    """A reranker could not score the candidates; the message says why."""


class BaseReranker(ABC):
    """Scores documents for a query, higher is more relevant. Any thread (searches run on
    worker threads too), so an implementation is thread-safe or serializes itself."""

    @abstractmethod
    def score(self, query: str, documents: Sequence[str]) -> list[float]:
        """One relevance score per document, in the documents' order."""

    def close(self) -> None:  # noqa: B027 (optional hook, nothing to release by default)
        """Release models or connections; the reranker is not called afterwards."""


def reranked_order(reranker: BaseReranker, query: str, documents: Sequence[str]) -> list[int]:
    """The documents' indices, most relevant first by ``reranker``; ties keep the store's
    order (a stable sort), so a reranker that cannot tell two items apart changes nothing."""
    if not documents:
        return []
    scores = list(reranker.score(query, list(documents)))
    if len(scores) != len(documents):
        raise RerankerError(f"{type(reranker).__name__}.score returned {len(scores)} scores for "
                            f"{len(documents)} documents; it must return one per document")
    for score in scores:
        if isinstance(score, bool) or not isinstance(score, int | float) or score != score:
            raise RerankerError(f"{type(reranker).__name__}.score returned {score!r}; scores "
                                "are numbers (not NaN)")
    return sorted(range(len(documents)), key=lambda index: -float(scores[index]))

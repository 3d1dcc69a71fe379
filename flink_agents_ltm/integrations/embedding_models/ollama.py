"""Embeddings from an Ollama server: ``POST {base_url}/api/embed``, over one pooled
httpx2 client per model, retried (see :mod:`~flink_agents_ltm.integrations.model_endpoint`)."""

from __future__ import annotations

from collections.abc import Sequence

import httpx2

from flink_agents_ltm.api.chat_models import BaseEmbeddingModelSetup
from flink_agents_ltm.integrations.embedding_models.vectors import vectors_of
from flink_agents_ltm.integrations.model_endpoint import ModelEndpoint, RetryingJsonClient


class OllamaEmbeddingModelSetup(BaseEmbeddingModelSetup):
    def __init__(self, model: str, base_url: str = "http://localhost:11434",
                 timeout_s: float = 60.0, dimensions: int | None = None, *,
                 connect_timeout_s: float = 10.0, max_retries: int = 2,
                 transport: httpx2.BaseTransport | None = None):
        self.endpoint = ModelEndpoint("ollama", base_url, model, timeout_s,
                                      connect_timeout_s=connect_timeout_s,
                                      max_retries=max_retries)
        self.dimensions = dimensions
        self._client = RetryingJsonClient(self.endpoint, transport)

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        path = "/api/embed"
        answer = self._client.post(path, {"model": self.endpoint.model, "input": list(texts)})
        return vectors_of(self.endpoint, self.endpoint.base_url + path, texts,
                          answer.get("embeddings"), self.dimensions)

    def close(self) -> None:
        """Close the connection pool; later calls fail with a clear error."""
        self._client.close()

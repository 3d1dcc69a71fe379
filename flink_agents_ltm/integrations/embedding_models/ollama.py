"""Embeddings from an Ollama server: ``POST {base_url}/api/embed``."""

from __future__ import annotations

from collections.abc import Sequence

from flink_agents_ltm.api.chat_models import BaseEmbeddingModelSetup
from flink_agents_ltm.integrations.embedding_models.vectors import vectors_of
from flink_agents_ltm.integrations.model_endpoint import ModelEndpoint


class OllamaEmbeddingModelSetup(BaseEmbeddingModelSetup):
    def __init__(self, model: str, base_url: str = "http://localhost:11434",
                 timeout_s: float = 60.0, dimensions: int | None = None):
        self.endpoint = ModelEndpoint("ollama", base_url, model, timeout_s)
        self.dimensions = dimensions

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        path = "/api/embed"
        answer = self.endpoint.post(path, {"model": self.endpoint.model, "input": list(texts)})
        return vectors_of(self.endpoint, path, texts, answer.get("embeddings"), self.dimensions)

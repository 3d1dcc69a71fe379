"""Embeddings from an OpenAI-compatible server: ``POST {base_url}/embeddings``."""

from __future__ import annotations

from collections.abc import Sequence

from flink_agents_ltm.api.chat_models import BaseEmbeddingModelSetup
from flink_agents_ltm.integrations.embedding_models.vectors import vectors_of
from flink_agents_ltm.integrations.model_endpoint import ModelEndpoint


class OpenAIEmbeddingModelSetup(BaseEmbeddingModelSetup):
    """``dimensions`` is also sent to the server (models that can shorten vectors do)."""

    def __init__(self, model: str, base_url: str = "https://api.openai.com/v1",
                 api_key_env: str | None = "OPENAI_API_KEY", timeout_s: float = 60.0,
                 dimensions: int | None = None):
        self.endpoint = ModelEndpoint("openai", base_url, model, timeout_s, api_key_env)
        self.dimensions = dimensions

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        body = {"model": self.endpoint.model, "input": list(texts)}
        if self.dimensions is not None:
            body["dimensions"] = self.dimensions
        path = "/embeddings"
        answer = self.endpoint.post(path, body)
        try:
            rows = sorted(answer["data"], key=lambda row: row["index"])
            vectors = [row["embedding"] for row in rows]
        except (KeyError, TypeError) as error:
            raise self.endpoint.error(
                f"malformed reply ({type(error).__name__}: {error}): {answer!r:.500}",
                self.endpoint.base_url + path, 200) from None
        return vectors_of(self.endpoint, path, texts, vectors, self.dimensions)

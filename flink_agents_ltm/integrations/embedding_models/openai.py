"""Embeddings from an OpenAI-compatible server or Azure OpenAI, through the official
``openai`` SDK: ``POST {base_url}/embeddings``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import httpx2

from flink_agents_ltm.api.chat_models import BaseEmbeddingModelSetup
from flink_agents_ltm.integrations.chat_models.openai import (
    OPENAI_URL,
    OpenAIConnection,
    openai_endpoint,
)
from flink_agents_ltm.integrations.embedding_models.vectors import vectors_of


class OpenAIEmbeddingModelSetup(BaseEmbeddingModelSetup):
    """``dimensions`` is also sent to the server (models that can shorten vectors do).
    Timeouts, retries, Azure and ``transport`` as for
    :class:`~flink_agents_ltm.integrations.chat_models.openai.OpenAIChatModelSetup`."""

    def __init__(self, model: str, base_url: str = OPENAI_URL,
                 api_key_env: str | None = "OPENAI_API_KEY", timeout_s: float = 60.0,
                 dimensions: int | None = None, *, connect_timeout_s: float = 10.0,
                 max_retries: int = 2, azure_api_version: str | None = None,
                 transport: httpx2.BaseTransport | None = None):
        self.endpoint = openai_endpoint(model, base_url, api_key_env, timeout_s,
                                        connect_timeout_s, max_retries, azure_api_version)
        self.dimensions = dimensions
        self._connection = OpenAIConnection(self.endpoint, azure_api_version, transport)

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        body: dict[str, Any] = {"model": self.endpoint.model, "input": list(texts),
                                "encoding_format": "float"}
        if self.dimensions is not None:
            body["dimensions"] = self.dimensions
        connection = self._connection
        answer, raw = connection.call(connection.client.embeddings.with_raw_response.create,
                                      **body)
        url = str(raw.http_response.request.url)
        try:
            rows = sorted(answer["data"], key=lambda row: row["index"])
            vectors = [row["embedding"] for row in rows]
        except (KeyError, TypeError) as error:
            raise self.endpoint.malformed(url, error, answer) from None
        return vectors_of(self.endpoint, url, texts, vectors, self.dimensions)

    def close(self) -> None:
        """Close the connection pool; later calls fail with a clear error."""
        self._connection.close()

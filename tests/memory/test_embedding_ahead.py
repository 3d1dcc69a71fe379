"""Embedding a batch chunk by chunk, one chunk ahead of its writer (the pgvector batch add)."""

import threading

import pytest

from flink_agents_ltm.integrations.mem0.embedding_ahead import embedded_chunks


def numbering(calls):
    def embed_batch(texts):
        calls.append(list(texts))
        return [[float(text)] for text in texts]
    return embed_batch


def test_chunks_come_in_input_order_and_cover_every_text_once():
    calls = []
    texts = [str(n) for n in range(70)]
    chunks = list(embedded_chunks(numbering(calls), texts, chunk=25))
    assert [len(c) for c in chunks] == [25, 25, 20]
    assert [v[0] for c in chunks for v in c] == [float(n) for n in range(70)]
    assert calls == [texts[:25], texts[25:50], texts[50:]]


def test_a_batch_no_larger_than_a_chunk_is_one_call_on_the_callers_thread():
    threads = []

    def embed_batch(texts):
        threads.append(threading.current_thread())
        return [[1.0]] * len(texts)

    assert list(embedded_chunks(embed_batch, ["a", "b"], chunk=2)) == [[[1.0], [1.0]]]
    assert threads == [threading.current_thread()]


def test_the_next_chunk_is_embedded_while_the_writer_still_holds_the_first():
    second_started = threading.Event()

    def embed_batch(texts):
        if texts[0] == "2":
            second_started.set()
        return [[0.0]] * len(texts)

    chunks = embedded_chunks(embed_batch, [str(n) for n in range(4)], chunk=2)
    next(chunks)  # the writer has chunk 1 and has not asked for chunk 2 yet
    assert second_started.wait(5)
    chunks.close()


def test_a_writer_that_stops_early_cancels_the_chunks_not_started():
    calls = []
    gate, running = threading.Event(), threading.Event()
    number = numbering(calls)

    def embed_batch(texts):
        if texts[0] == "2":
            running.set()
            gate.wait(5)  # chunk 2 is running when the writer stops
        return number(texts)

    chunks = embedded_chunks(embed_batch, [str(n) for n in range(6)], chunk=2)
    next(chunks)
    assert running.wait(5)  # without it, close() could come before chunk 2 started
    threading.Timer(0.2, gate.set).start()
    chunks.close()
    assert calls == [["0", "1"], ["2", "3"]]  # chunk 3 was never embedded


def test_a_chunk_size_below_one_is_refused():
    with pytest.raises(ValueError, match="chunk must be at least 1, got 0"):
        next(embedded_chunks(numbering([]), ["a"], chunk=0))

"""Local embedding: concurrent callers share encoder batches and each gets its own vectors
or its own error; MiniLM loads once per process, only when it is the configured embedder,
with one torch thread (two for a large batch); a missing extra is named. (No progress bar:
test_embedded_default.)"""

import json
import socket
import subprocess
import sys
import threading

import pytest

from flink_agents_ltm.integrations.extras import install_line
from flink_agents_ltm.integrations.mem0.encode_batcher import EncodeBatcher


class GatedEncoder:
    """Encodes a text as [its length, its batch's size]; the first batch waits for a gate,
    so that the test can queue callers behind it."""

    def __init__(self):
        self.gate = threading.Event()
        self.entered = threading.Event()
        self.batches: list[list[str]] = []

    def __call__(self, texts):
        self.batches.append(list(texts))
        if len(self.batches) == 1:
            self.entered.set()
            assert self.gate.wait(30)
        if any(text == "boom" for text in texts):
            raise ValueError("cannot encode 'boom'")
        return [[float(len(text)), float(len(texts))] for text in texts]


def run_callers(batcher, requests):
    results, threads = {}, []

    def call(name, texts):
        try:
            results[name] = batcher.encode(texts)
        except Exception as error:  # noqa: BLE001 - routed to this caller only
            results[name] = error

    for name, texts in requests.items():
        thread = threading.Thread(target=call, args=(name, texts))
        thread.start()
        threads.append(thread)
    return results, threads


def test_callers_arriving_while_the_model_is_busy_share_one_batch_and_get_their_own_vectors():
    encoder = GatedEncoder()
    batcher = EncodeBatcher(encoder, max_wait=0.005)
    first, first_threads = run_callers(batcher, {"first": ["a"]})
    assert encoder.entered.wait(30)
    requests = {f"key-{n}": ["x" * n, "y" * (n + 10)] for n in range(1, 9)}
    results, threads = run_callers(batcher, requests)
    while batcher._callers < 9:  # every caller has queued behind the busy model
        threading.Event().wait(0.01)
    encoder.gate.set()
    for thread in first_threads + threads:
        thread.join(30)
    assert first["first"] == [[1.0, 1.0]]
    assert len(encoder.batches) == 2  # the eight callers made one batch of 16 texts
    for n in range(1, 9):
        assert results[f"key-{n}"] == [[float(n), 16.0], [float(n + 10), 16.0]]


def test_a_failing_text_fails_only_its_own_caller():
    encoder = GatedEncoder()
    batcher = EncodeBatcher(encoder)
    _, first_threads = run_callers(batcher, {"first": ["a"]})
    assert encoder.entered.wait(30)
    results, threads = run_callers(batcher, {"good": ["fine"], "bad": ["boom"],
                                             "also good": ["ok", "yes"]})
    while batcher._callers < 4:
        threading.Event().wait(0.01)
    encoder.gate.set()
    for thread in first_threads + threads:
        thread.join(30)
    assert isinstance(results["bad"], ValueError) and "boom" in str(results["bad"])
    assert results["good"] == [[4.0, 1.0]]
    assert results["also good"] == [[2.0, 2.0], [3.0, 2.0]]


def test_a_lone_caller_does_not_wait_for_company():
    batcher = EncodeBatcher(lambda texts: [[1.0] for _ in texts], max_wait=600)
    done = threading.Event()
    threading.Thread(target=lambda: (batcher.encode(["alone"]), done.set())).start()
    assert done.wait(60)  # not the 600 s a batch may wait for callers already inside


@pytest.fixture(scope="module")
def minilm():
    from flink_agents_ltm.integrations.mem0.local_embedder import LocalMiniLmEmbedding

    return LocalMiniLmEmbedding()


def test_concurrent_minilm_embeddings_equal_one_at_a_time_and_share_one_model(minilm):
    from flink_agents_ltm.integrations.mem0.local_embedder import LocalMiniLmEmbedding

    texts = [f"customer {n} asks about order {n * 7}" for n in range(24)]
    alone = [minilm.embed(text) for text in texts]
    together = [None] * len(texts)

    def embed(index):
        together[index] = minilm.embed(texts[index])

    threads = [threading.Thread(target=embed, args=(i,)) for i in range(len(texts))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    for a, b in zip(alone, together, strict=True):
        assert max(abs(x - y) for x, y in zip(a, b, strict=True)) < 1e-4
    from flink_agents_ltm.integrations.mem0 import local_embedder

    shared = local_embedder.shared_batcher()
    LocalMiniLmEmbedding().embed("another instance")
    assert local_embedder.shared_batcher() is shared


def test_the_model_runs_with_one_torch_thread(minilm):
    import torch

    minilm.embed("warm")
    assert torch.get_num_threads() == 1


def test_a_large_batch_runs_with_the_batch_threads_and_single_texts_with_one(
        minilm, monkeypatch):
    import torch
    from sentence_transformers import SentenceTransformer

    from flink_agents_ltm.integrations.mem0.local_embedder import (
        LARGE_BATCH,
        torch_batch_threads,
    )

    seen = []
    real = SentenceTransformer.encode

    def watched(self, texts, *args, **kwargs):  # the real model runs; we note the threads
        seen.append((len(texts), torch.get_num_threads()))
        return real(self, texts, *args, **kwargs)

    monkeypatch.setattr(SentenceTransformer, "encode", watched)
    minilm.embed("one")
    minilm.embed_batch([f"text {n}" for n in range(LARGE_BATCH)])
    minilm.embed_batch(["a", "b"])
    assert seen == [(1, 1), (LARGE_BATCH, torch_batch_threads()), (2, 1)]
    assert torch.get_num_threads() == 1


def test_the_batch_threads_default_to_two_and_refuse_a_bad_value(monkeypatch):
    import os

    from flink_agents_ltm.integrations.mem0.local_embedder import (
        BATCH_THREADS_VARIABLE,
        torch_batch_threads,
    )

    monkeypatch.delenv(BATCH_THREADS_VARIABLE, raising=False)
    assert torch_batch_threads() == min(2, os.cpu_count() or 1)
    monkeypatch.setenv(BATCH_THREADS_VARIABLE, "4")
    assert torch_batch_threads() == 4
    monkeypatch.setenv(BATCH_THREADS_VARIABLE, "many")
    with pytest.raises(ValueError, match="FLINK_AGENTS_LTM_TORCH_BATCH_THREADS must be a "
                                         "positive number of threads, got 'many'"):
        torch_batch_threads()


def run_python(code, **env):
    import os

    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300, env={**os.environ, **env})


def test_a_configured_embedding_model_never_imports_torch(tmp_path):
    result = run_python(
        "import sys\n"
        "from mem0.configs.embeddings.base import BaseEmbedderConfig\n"
        "from flink_agents_ltm.integrations.mem0.hashing_embedder import HashingEmbedding\n"
        "from flink_agents_ltm.integrations.mem0.memory_factory import StoreSpec, "
        "acquire_memory\n"
        "mine = HashingEmbedding(BaseEmbedderConfig(embedding_dims=64))\n"
        "memory, release = acquire_memory(StoreSpec('job', embedder=mine))\n"
        "assert memory.embedding_model is mine\n"
        "print(sorted(m for m in ('torch', 'sentence_transformers') if m in sys.modules))\n"
        "release()\n", FLINK_AGENTS_LTM_HOME=str(tmp_path / "home"))
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.split() == ["[]"]


def test_without_the_extra_the_local_model_names_the_extra_to_install():
    result = run_python(
        "import sys\n"
        "sys.modules['torch'] = None\n"
        "from flink_agents_ltm.integrations.mem0.local_embedder import LocalMiniLmEmbedding\n"
        "LocalMiniLmEmbedding()\n")
    assert result.returncode != 0
    assert "MissingExtraError: the local embedding model (all-MiniLM-L6-v2) needs the " \
           f"'local-embedder' extra (torch not installed): {install_line('local-embedder')}" \
           in result.stderr


def test_a_store_that_cannot_open_fails_before_the_model_loads(tmp_path):
    """Mem0 builds its embedder before its store: the model loads at the first text, so a
    wrong password or a server down is reported without waiting for it."""
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    code = f"""
import json, time
from flink_agents_ltm.integrations.mem0 import local_embedder
from flink_agents_ltm.integrations.mem0.memory_factory import StoreSpec, acquire_memory
store = {{"provider": "pgvector", "config": {{"host": "127.0.0.1", "port": {port},
         "user": "u", "password": "wrong", "dbname": "d"}}}}
started = time.monotonic()
try:
    acquire_memory(StoreSpec("job", store, base_dir={str(tmp_path)!r}))
except Exception as error:
    print(json.dumps({{"error": type(error).__name__,
                      "loaded": local_embedder._batcher is not None,
                      "seconds": time.monotonic() - started}}))
"""
    result = run_python(code)
    assert result.returncode == 0, result.stderr
    outcome = json.loads(result.stdout.strip().splitlines()[-1])
    assert outcome["error"] == "ConnectionError" and outcome["loaded"] is False, outcome

"""Mem0VectorStore against the same Mem0 store used directly: query latency and batched
insert throughput, side by side in one run.

Both sides get the same precomputed vectors (so the embedding model, which dominates
real calls, is left out and only our layer is measured) and one collection each on the
same store and client, grown alike; raw and wrapped calls alternate so that load hits
both alike. Target: within 5 % of raw Mem0.

Queries by text are what an agent sends: the store embeds the text with its embedding
model (the local MiniLM here, as by default), and the raw side embeds it with the same
model before calling Mem0's search. That row is the latency a user sees; the rows by
vector isolate our layer's fixed cost, which is more than 5 % of a store whose own
query is sub-millisecond (FAISS on a few thousand rows).

Filtered queries compare equal answers: Mem0's FAISS filters only the ``2 * top_k``
nearest rows, so its raw side is asked again with a larger ``top_k`` (x4) until it
returns as many hits as were asked for or has seen every row, as a caller of raw Mem0
would have to; the stores that filter in the store answer at the first call. The last
column is the part of our time spent outside the store and the embedding model
(validation, conversion, filter checks), per call, and its share of raw Mem0's median
time: our layer's own cost, which the load on the machine hardly blurs.

    python -m bench.vector_store_overhead [--store qdrant|faiss|pgvector] [--rounds 60]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import tempfile
import time
import uuid
from contextlib import ExitStack
from functools import partial
from pathlib import Path

from flink_agents_ltm.api.vector_stores import Document
from flink_agents_ltm.integrations.mem0.hashing_embedder import hashed_bag_of_words
from flink_agents_ltm.integrations.mem0.local_embedder import LocalMiniLmEmbedding
from flink_agents_ltm.integrations.mem0.vector_store import (
    CONTENT_KEY,
    Mem0VectorStore,
)

DIMS = 384
TOPICS = ["tea", "parcel", "invoice", "grinder", "refund", "password", "delivery", "discount"]


def store_config(kind: str, stack: ExitStack, pgvector_config: str | None = None) -> dict:
    if kind == "pgvector" and pgvector_config:
        config = dict(json.loads(Path(pgvector_config).read_text())["config"])
        config.pop("collection_name", None)  # the bench names its own two tables
        return config
    if kind == "pgvector":
        from tests.pgvector.server import pgvector_server

        return dict(stack.enter_context(pgvector_server())[0]["config"])
    return {"path": stack.enter_context(tempfile.TemporaryDirectory()) + f"/{kind}"}


def vector(text: str) -> list[float]:
    return hashed_bag_of_words(text, DIMS)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--store", default="qdrant", choices=["qdrant", "faiss", "pgvector"])
    parser.add_argument("--rounds", type=int, default=60, help="insert batches per side")
    parser.add_argument("--batch", type=int, default=64, help="documents per insert")
    parser.add_argument("--queries", type=int, default=5, help="queries per side and round")
    parser.add_argument("--pgvector-config", metavar="FILE",
                        help="VECTOR_STORE JSON file of a running pgvector server (default: "
                        "start one with scripts/pgvector-server)")
    parser.add_argument("--text-queries", type=int, default=2,
                        help="queries by text per side and round (0 to skip the model)")
    args = parser.parse_args()
    rng = random.Random(7)

    with ExitStack() as stack:
        config = store_config(args.store, stack, args.pgvector_config)
        config["embedding_model_dims"] = DIMS
        embedder = LocalMiniLmEmbedding()
        ours = Mem0VectorStore(args.store, config, collection="wrapped",
                               embedding_model="minilm")
        ours.open(lambda name, kind: embedder)
        stack.callback(ours.close)
        ours.get_or_create_collection("raw")
        raw = ours._store("raw", create=False)  # the same Mem0 store class, client and lock
        vars(raw).pop("_save", None)  # FAISS: raw Mem0 saves its own way (faiss_files)

        operations = ("insert", "query", "filtered", "text")
        timings: dict[str, list[float]] = {f"{side} {operation}": [] for side in
                                           ("raw", "wrapped") for operation in operations}
        in_store = StoreClock(ours)
        own: dict[str, list[float]] = {operation: [] for operation in operations}
        stored = 0

        hits = {"raw": 0, "wrapped": 0}

        def timed(name, fn):
            in_store.spent = 0.0
            started = time.perf_counter()
            answer = fn()
            took = time.perf_counter() - started
            timings[name].append(took)
            side, operation = name.split(" ")
            if side == "wrapped":
                own[operation].append(took - in_store.spent)
            return answer

        def raw_filtered(query, topic):
            k = 5
            while True:
                found = raw.search(query="", vectors=query, top_k=k, filters={"topic": topic})
                if len(found) >= 5 or 2 * k >= stored:
                    return found[:5]
                k *= 4

        def batch(round_):
            texts = [f"note {round_}-{i} about the {TOPICS[rng.randrange(len(TOPICS))]}"
                     for i in range(args.batch)]
            return texts, [vector(t) for t in texts], [TOPICS[i % len(TOPICS)] for i in
                                                       range(args.batch)]

        def raw_insert(texts, vectors, topics):
            raw.insert(vectors=vectors, payloads=[{CONTENT_KEY: t, "topic": p}
                                                  for t, p in zip(texts, topics, strict=True)],
                       ids=[str(uuid.uuid4()) for _ in texts])

        def wrapped_insert(texts, vectors, topics):
            ours.add([Document(t, {"topic": p}, embedding=v)
                      for t, v, p in zip(texts, vectors, topics, strict=True)])

        print(f"{args.store}: {args.rounds} rounds of one {args.batch}-document insert and "
              f"{args.queries} + {args.queries} queries per side ...", flush=True)
        for round_ in range(args.rounds):
            data = batch(round_)
            first, second = ("raw", "wrapped") if round_ % 2 else ("wrapped", "raw")
            for side in (first, second):
                insert = raw_insert if side == "raw" else wrapped_insert
                timed(f"{side} insert", partial(insert, *data))
            stored += args.batch
            for q in range(args.queries):
                topic = TOPICS[(round_ + q) % len(TOPICS)]
                query = vector(f"what about the {topic}")
                for side in (first, second):
                    if side == "raw":
                        timed("raw query", partial(raw.search, query="", vectors=query, top_k=5))
                        hits["raw"] += len(timed("raw filtered",
                                                 partial(raw_filtered, query, topic)))
                    else:
                        timed("wrapped query", partial(ours.query, vector=query, limit=5))
                        hits["wrapped"] += len(timed("wrapped filtered", partial(
                            ours.query, vector=query, limit=5, filters={"topic": topic})))
            for q in range(args.text_queries):
                text = f"was the {TOPICS[(round_ + q) % len(TOPICS)]} any good"
                for side in (first, second):
                    if side == "raw":
                        timed("raw text", lambda t=text: raw.search(
                            query=t, vectors=embedder.embed(t, "search"), top_k=5))
                    else:
                        timed("wrapped text", partial(ours.query, text, limit=5))
            if (round_ + 1) % 20 == 0:
                print(f"  {round_ + 1}/{args.rounds} ({ours.size()} documents per side)",
                      flush=True)

    def ratio(name):
        return statistics.median(timings[f"wrapped {name}"]) / statistics.median(
            timings[f"raw {name}"])

    def own_share(name):
        return statistics.median(own[name]) / statistics.median(timings[f"raw {name}"])

    print(f"\n{'operation':<26}{'raw Mem0':>14}{'Mem0VectorStore':>18}{'ratio':>8}"
          f"{'ours outside store and model':>34}")
    insert_raw = args.batch / statistics.median(timings["raw insert"])
    insert_ours = args.batch / statistics.median(timings["wrapped insert"])
    print(f"{'insert (documents/s)':<26}{insert_raw:>14.0f}{insert_ours:>18.0f}"
          f"{ratio('insert'):>8.3f}"
          f"{statistics.median(own['insert']) * 1e6 / args.batch:>12.1f} µs/document"
          f"{own_share('insert'):>9.1%}")
    for name, label in (("query", "query, top 5 (ms)"), ("filtered", "filtered query (ms)"),
                        ("text", "query by text (ms)")):
        if not timings[f"raw {name}"]:
            continue
        raw_ms = statistics.median(timings[f"raw {name}"]) * 1000
        ours_ms = statistics.median(timings[f"wrapped {name}"]) * 1000
        print(f"{label:<26}{raw_ms:>14.2f}{ours_ms:>18.2f}{ratio(name):>8.3f}"
              f"{statistics.median(own[name]) * 1e6:>15.1f} µs/query{own_share(name):>9.1%}")
    print(f"filtered hits returned: raw {hits['raw']}, Mem0VectorStore {hits['wrapped']} (of "
          f"{5 * args.queries * args.rounds} asked for)")
    print("\nratio: time through Mem0VectorStore / time of raw Mem0 (throughput inverted); "
          "target <= 1.05")


class StoreClock:
    """Adds up the time ``store`` spends in its Mem0 store (its backend's insert and
    search) and its embedding model since ``spent`` was last reset; the rest of a call
    is our layer's own."""

    def __init__(self, store: Mem0VectorStore):
        self.spent = 0.0
        backend = store._backend
        for name in ("insert", "search"):
            setattr(backend, name, self._clocked(getattr(backend, name)))
        store._embed = self._clocked(store._embed)

    def _clocked(self, call):
        def clocked(*args, **kwargs):
            started = time.perf_counter()
            try:
                return call(*args, **kwargs)
            finally:
                self.spent += time.perf_counter() - started

        return clocked


if __name__ == "__main__":
    main()

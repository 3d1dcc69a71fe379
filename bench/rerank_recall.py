"""What reranking buys and costs: recall@5 and ms per query of ``search(limit=5)`` without
reranking and with each reranker, side by side in one run.

The labelled set is :mod:`bench._rerank_set` (2,000 support notes, 200 queries of three
kinds, each answered by one note), stored in one memory set of one key of the default
long-term memory (the embedded store, all-MiniLM-L6-v2). A reranked search fetches
``--candidates`` x 5 notes and reorders them. recall@5: the share of queries whose note is
among the 5 returned; the last row, recall@20 without reranking, is what any reranker of
the 20 candidates could reach at best. ms/query: wall time of the whole ``search`` call
(embedding the query, the store's search, the reranker), mean over the queries, after one
warm-up query; "of it rerank" is the part spent in the reranker's ``score``.

    python -m bench.rerank_recall [--candidates 4] [--items 2000] [--queries 200]
                                  [--cross-encoder FOLDER] [--dump FILE]

``--cross-encoder`` adds a sentence-transformers cross-encoder from a local folder (none
ships in a wheel; see docs/memory-reranking.md). ``--dump`` writes each query's candidates
(JSON lines: kind, query, candidates in the store's order, answer) to score a reranker that
runs elsewhere (another environment) on exactly the same candidates.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import tempfile
import time
from collections import defaultdict

from bench._rerank_set import make
from bench._results import add_json_argument, write_results
from flink_agents_ltm.api.memory.long_term_memory import LongTermMemoryOptions
from flink_agents_ltm.api.rerankers import BaseReranker
from flink_agents_ltm.integrations.mem0.long_term_memory import Mem0LongTermMemory
from flink_agents_ltm.integrations.rerankers.lexical import LexicalReranker

K = 5


def rerankers(args: argparse.Namespace) -> dict[str, BaseReranker | None]:
    found: dict[str, BaseReranker | None] = {"none": None, "lexical (BM25)": LexicalReranker()}
    if args.cross_encoder:
        from flink_agents_ltm.integrations.rerankers.cross_encoder import CrossEncoderReranker

        encoder = CrossEncoderReranker(args.cross_encoder)
        encoder.open(lambda *_: None)
        found["cross-encoder"] = encoder
    return found


def measure(memory_set, queries, rerank: bool, limit: int = K
            ) -> tuple[dict[str, float], float]:
    hits: dict[str, list[bool]] = defaultdict(list)
    memory_set.search(queries[0].text, limit=limit, rerank=rerank)  # warm-up
    started = time.perf_counter()
    for query in queries:
        found = memory_set.search(query.text, limit=limit, rerank=rerank)
        hit = query.answer_id in {item.id for item in found}
        hits[query.kind].append(hit)
        hits["all"].append(hit)
    elapsed = time.perf_counter() - started
    return ({kind: sum(h) / len(h) for kind, h in hits.items()},
            elapsed * 1000 / len(queries))


def dump(memory_set, labelled, notes, queries, candidates: int, path: str) -> None:
    with open(path, "w", encoding="utf-8") as out:
        for query, raw in zip(labelled, queries, strict=True):
            found = memory_set.search(query.text, limit=candidates)
            out.write(json.dumps({"kind": query.kind, "query": query.text,
                                  "candidates": [item.value for item in found],
                                  "answer": notes[raw.answer]}) + "\n")


class _Timed(BaseReranker):
    """The reranker, timed: the share of a search that reranking itself takes."""

    def __init__(self, inner: BaseReranker):
        self.inner, self.seconds = inner, 0.0

    def score(self, query, documents):
        started = time.perf_counter()
        try:
            return self.inner.score(query, documents)
        finally:
            self.seconds += time.perf_counter() - started


class _Labelled:
    def __init__(self, query, answer_id: str):
        self.kind, self.text, self.answer_id = query.kind, query.text, answer_id


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--candidates", type=int, default=4)
    parser.add_argument("--items", type=int, default=2000, help="notes stored (default 2000)")
    parser.add_argument("--queries", type=int, default=200, help="labelled queries (default 200)")
    parser.add_argument("--cross-encoder", metavar="FOLDER")
    parser.add_argument("--dump", metavar="FILE")
    add_json_argument(parser)
    args = parser.parse_args()
    notes, queries = make(items=args.items, queries=args.queries)
    home = tempfile.mkdtemp(prefix="bench-rerank-")
    os.chmod(home, 0o700)
    memory = Mem0LongTermMemory.from_config("bench-rerank", {
        LongTermMemoryOptions.BASE_DIR.key: home})
    try:
        memory.switch_context("customer-support", None)
        memory_set = memory.get_memory_set("notes")
        started = time.perf_counter()
        ids = []
        for first in range(0, len(notes), 250):
            ids += memory_set.add(notes[first:first + 250])
        print(f"stored {len(notes)} notes in {time.perf_counter() - started:.1f} s; "
              f"{len(queries)} queries; reranked searches order {args.candidates} x {K} "
              "candidates")
        labelled = [_Labelled(q, ids[q.answer]) for q in queries]
        kinds = ["all", *sorted({q.kind for q in queries})]
        print(f"{'reranker':<16}" + "".join(f"{'R@5 ' + k:>16}" for k in kinds)
              + f"{'ms/query':>10}{'of it rerank':>14}")
        if args.dump:
            dump(memory_set, labelled, notes, queries, args.candidates * K, args.dump)
        series: dict[str, list[tuple[str, float]]] = {}
        for name, reranker in rerankers(args).items():
            timed = None if reranker is None else _Timed(reranker)
            memory.set_reranker(timed, args.candidates)
            recall, ms = measure(memory_set, labelled, rerank=timed is not None)
            reranking = 0.0 if timed is None else timed.seconds * 1000 / (len(labelled) + 1)
            print(f"{name:<16}" + "".join(f"{recall[k]:>16.3f}" for k in kinds)
                  + f"{ms:>10.1f}{reranking:>14.2f}", flush=True)
            series[f"R@{K}, {name}"] = [(kind, recall[kind]) for kind in kinds]
        ceiling, ms = measure(memory_set, labelled, rerank=False, limit=args.candidates * K)
        print(f"{'R@' + str(args.candidates * K) + ' (ceiling)':<16}"
              + "".join(f"{ceiling[k]:>16.3f}" for k in kinds) + f"{ms:>10.1f}")
        series[f"R@{args.candidates * K}, no reranking (ceiling)"] = [
            (kind, ceiling[kind]) for kind in kinds]
        write_results(args.json, bench="rerank_recall", kind="bar", series=series,
                      title=f"Recall of search(limit={K}) with and without reranking "
                            f"({len(notes)} notes, {len(queries)} queries)",
                      x_label="queries", y_label="recall")
    finally:
        memory.close()
        shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    main()

"""One key's search on pgvector at scale: server time, client time and recall@5 per key size.

A table of ``--rows`` rows over ``--keys`` small keys plus a few large keys
(``--large-keys``, rows each, random vectors; ``--minilm-keys``, rows each, real-ish
MiniLM vectors), filled by the server itself, with Mem0's HNSW index and our scope index
built after the fill (as a long-lived store has them; ``maintenance_work_mem`` 1 GB, the
build time is printed). Random vectors: 384 numbers uniform in [-0.5, 0.5) (queries:
standard normal). MiniLM vectors: ``--sentences`` distinct template sentences ("Nora
cancelled the gym membership after the meeting since the old one broke.": 16 names x 12
verbs x 18 things x 8 times x 8 reasons, seeded) encoded by the package's local embedder
(all-MiniLM-L6-v2); the server makes each row from one of them (``hashint4(g)``) plus
Gaussian noise (sigma 0.025 a dimension, cosine ~0.9 to its sentence), normalized; queries
are 40 encoded questions ("What did Nora say about the gym membership?").
For one small key and each large key, over ``--queries`` query vectors:

- ``server``: Mem0's search statement, timed alone on the server (EXPLAIN ANALYZE's
  execution time), with the plan it took (``scope``: the key's rows through the scope
  index, ranked exactly; ``hnsw``: the HNSW index, approximate);
- ``ours``: the same for the statement the store really sent (recorded on its way; the store
  runs with ``min_recall`` 0, without recall checks, so that its HNSW path is measured);
- ``search``: the client's time through the store long-term memory searches on
  (``memory.vector_store.search``, top_k 60 as Mem0 asks), round trip included;
  ``client extra`` is ``search`` less ``ours``;
- ``pair``: what Mem0's ``Memory.search`` sends, a search then its keyword statement
  (``vector_store.keyword_search``), through our store (one statement) and through
  Mem0's own ``PGVector`` methods (``mem0 pair``: the vector as an ``ARRAY`` of floats,
  each in a transaction of its own);
- ``R@5``: the share of the exact top 5 (the key's rows ranked by cosine distance,
  without any vector index) that our search returned in its top 5, ``mem0 R@5`` the
  same for Mem0's statement with pgvector's defaults (HNSW, ``ef_search`` 40);
- ``exact``: the server time of that exact ranking (index scans off: the key's rows
  through a bitmap scan of the scope index, then a sort), and ``ef1000``: Mem0's
  statement's server time and R@5 with ``hnsw.ef_search = 1000``;
- ``side``: the server time and R@5 of the store's exact ranking of the key, the statement
  a key gets below ``exact_search_up_to`` or once the recall checks rank it exactly: through
  the side table (``<table>_exact``: scope, id, expiry, vector, kept by triggers);
- ``guarded``: what the store does with its defaults (bound 10,000, ``min_recall`` 0.9)
  after a key's first 8 searches (the recall checks): the plan its statement took (exact
  through the side table, or HNSW), its server time and R@5;
- ``cpu``: for those two, the server's CPU time for the statement (its backend's
  ``/proc/<pid>/schedstat``: the bench starts the server on this machine), which a loaded
  machine does not inflate as it does EXPLAIN ANALYZE's wall time.

The table's size and its side table's (``pg_total_relation_size``, indexes included) are
printed at the end.

    python -m bench.pgvector_key_search [--rows 500000] [--keys 5000]
        [--large-keys 5000 10000 50000] [--minilm-keys 5000 10000 50000]
        [--sentences 2000] [--pgvector-config FILE]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import time
from pathlib import Path
from typing import Any

import numpy as np
import psycopg2.extras

from bench._results import add_json_argument, write_results
from bench.scoped_search import fresh_pgvector_memory, pgvector_server
from flink_agents_ltm.integrations.mem0.providers.pgvector import search as pgvector_search
from flink_agents_ltm.integrations.mem0.providers.pgvector import side_table
from tests.pgvector.recording import recording

DIMS = 384
TOP_K = 60
EXACT = "SET LOCAL enable_indexscan = off; "  # the key's rows (bitmap scan), ranked exactly
EF_SEARCH = "SET LOCAL hnsw.ef_search = 1000; "
# pgvector's default: the store's own sessions run with HNSW_EF_SEARCH (200)
MEM0_DEFAULTS = "SET LOCAL hnsw.ef_search = 40; "
WORDS = 50  # row g's text holds the word 'wN', N = g % WORDS: a keyword query matches 2 %


NAMES = ["Alice", "Bob", "Carla", "Deepak", "Emma", "Farid", "Greta", "Hiro", "Ines", "Jonas",
         "Kemal", "Lena", "Mateo", "Nora", "Omar", "Priya"]
VERBS = ["prefers", "ordered", "complained about", "asked about", "returned", "loves",
         "cancelled", "renewed", "forgot", "recommended", "paid for", "reviewed"]
THINGS = ["green tea", "the premium plan", "a blue winter jacket", "the late delivery",
          "noise-cancelling headphones", "a vegetarian menu", "the hotel room upgrade",
          "flight tickets to Lisbon", "a yoga class", "the broken coffee machine",
          "an electric bike", "the quarterly invoice", "a birthday cake", "running shoes",
          "the gym membership", "a python course", "concert tickets", "a used car"]
WHEN = ["on Monday morning", "last week", "every weekend", "after the meeting",
        "during the holidays", "in March", "twice a month", "yesterday evening"]
WHY = ["because it was cheaper", "for a friend", "after reading reviews", "to save time",
       "since the old one broke", "as a gift", "for work", "without telling anyone"]
NOISE = 0.025  # per dimension, before normalizing: cosine ~0.9 to the sentence's vector


def sentences(count: int) -> tuple[list[str], list[str]]:
    """``count`` distinct notes and 40 questions about them (seeded)."""
    rng = random.Random(1)
    notes: set[str] = set()
    while len(notes) < count:
        notes.add(f"{rng.choice(NAMES)} {rng.choice(VERBS)} {rng.choice(THINGS)} "
                  f"{rng.choice(WHEN)} {rng.choice(WHY)}.")
    questions = [f"What did {rng.choice(NAMES)} say about {rng.choice(THINGS)}?"
                 for _ in range(40)]
    return sorted(notes), questions


def minilm_vectors(count: int) -> tuple[np.ndarray, np.ndarray]:
    """The notes' and the questions' all-MiniLM-L6-v2 vectors (the package's embedder)."""
    from flink_agents_ltm.integrations.mem0.local_embedder import _load_model

    notes, questions = sentences(count)
    encode = _load_model()
    return (np.asarray(encode(notes), dtype=np.float32),
            np.asarray(encode(questions), dtype=np.float32))


def scope(key: str) -> dict[str, str]:
    return {"user_id": "bench-job", "agent_id": key, "run_id": "notes"}


def literal(vector: list[float]) -> str:
    return "[" + ",".join(map(repr, vector)) + "]"


def recorded_search(memory: Any, vector: list[float], filters: dict[str, str]) -> str:
    """The statement ``memory``'s store sends for a search of ``vector`` with ``filters``
    (recorded on an untimed call of its own: recording costs client time)."""
    with recording(memory) as sent:
        memory.vector_store.search(query="q", vectors=vector, top_k=TOP_K, filters=filters)
    return sent[-1].text


class Table:
    def __init__(self, store_config: dict[str, Any]):
        self.memory, self.release = fresh_pgvector_memory(store_config)
        self.store = self.memory.vector_store
        self.pg = self.store.inner
        self.table = self.pg.collection_name
        self.indexes = self.query(
            "SELECT indexdef FROM pg_indexes WHERE tablename = %s AND indexname <> %s",
            (self.table, f"{self.table}_pkey"))
        for (definition,) in self.indexes:
            name = definition.split(" ON ")[0].split()[-1]
            self.execute(f"DROP INDEX {name}")

    def execute(self, statement: str, params: tuple = ()) -> None:
        with self.pg._get_cursor(commit=True) as cur:
            cur.execute(statement, params)

    def query(self, statement: str, params: tuple = ()) -> list[tuple]:
        with self.pg._get_cursor(commit=True) as cur:
            cur.execute(statement, params)
            return cur.fetchall()

    def fill(self, first: int, count: int, key: str) -> None:
        """``count`` rows; ``key`` is a key's name, or a SQL expression of the row number g."""
        self.execute(f"""SET LOCAL statement_timeout = 0;
            INSERT INTO "{self.table}" (id, vector, payload)
            SELECT gen_random_uuid(), v.vec::vector({DIMS}), jsonb_build_object(
                'user_id', 'bench-job', 'agent_id', {key}, 'run_id', 'notes',
                'data', 'note ' || g, 'text_lemmatized', 'note w' || (g %% {WORDS}),
                'hash', '-', 'role', 'user', 'created_at', '2026-01-01T00:00:00+00:00')
            FROM generate_series(%s, %s - 1) g,
                 LATERAL (SELECT array_agg(random() - 0.5) AS vec
                          FROM generate_series(1, {DIMS}) WHERE g >= 0) v""",
                     (first, first + count))

    def load_sentences(self, vectors: np.ndarray) -> None:
        self.execute(f'CREATE TABLE "{self.table}_sentences" (i int, v real[])')
        with self.pg._get_cursor(commit=True) as cur:
            psycopg2.extras.execute_values(cur, f'INSERT INTO "{self.table}_sentences" VALUES %s',
                                           [(i, v.tolist()) for i, v in enumerate(vectors)])
        self.sentences = len(vectors)

    def fill_minilm(self, first: int, count: int, key: str) -> None:
        """``count`` rows near the loaded sentences' vectors (see the module's doc)."""
        self.execute(f"""SET LOCAL statement_timeout = 0;
            INSERT INTO "{self.table}" (id, vector, payload)
            SELECT gen_random_uuid(), l2_normalize(v.vec::vector({DIMS})), jsonb_build_object(
                'user_id', 'bench-job', 'agent_id', {key}, 'run_id', 'notes',
                'data', 'note ' || g, 'text_lemmatized', 'note w' || (g %% {WORDS}),
                'hash', '-', 'role', 'user', 'created_at', '2026-01-01T00:00:00+00:00')
            FROM generate_series(%s, %s - 1) g,
                 LATERAL (SELECT array_agg(x + {NOISE} * sqrt(-2 * ln(1 - random()))
                                           * cos(2 * pi() * random()) ORDER BY n) AS vec
                          FROM "{self.table}_sentences", unnest(v) WITH ORDINALITY AS u(x, n)
                          WHERE i = (hashint4(g) & 2147483647) %% {self.sentences}) v""",
                     (first, first + count))

    def build_indexes(self, hnsw: bool = True) -> float:
        started = time.monotonic()
        for (definition,) in self.indexes:
            if not hnsw and "USING hnsw" in definition:
                continue  # no statement timeout: HNSW takes minutes
            self.execute("SET statement_timeout = 0; SET maintenance_work_mem = '1GB'; "
                         + definition)
        self.execute(f'ANALYZE "{self.table}"; ANALYZE "{side_table.name(self.table)}"')
        return time.monotonic() - started

    def sizes(self) -> tuple[int, int]:
        """Bytes of the main table and of its side table, indexes and TOAST included."""
        [(main, side)] = self.query(
            "SELECT pg_total_relation_size(to_regclass(quote_ident(%s))), "
            "pg_total_relation_size(to_regclass(quote_ident(%s)))",
            (self.table, side_table.name(self.table)))
        return int(main), int(side or 0)

    def exact_top(self, vector: list[float], key: str, k: int) -> list[str]:
        with self.pg._get_cursor(commit=True) as cur:
            cur.execute("SET LOCAL enable_indexscan = off")
            cur.execute(f"""SELECT id FROM "{self.table}" WHERE payload->>'user_id' = 'bench-job'
                AND payload->>'agent_id' = %s AND payload->>'run_id' = 'notes'
                ORDER BY vector <=> %s::vector LIMIT %s""", (key, literal(vector), k))
            return [str(row[0]) for row in cur.fetchall()]

    def statement(self) -> str:
        return f"""SELECT id, vector <=> %s::vector AS distance, payload FROM "{self.table}"
            WHERE payload->>'user_id' = 'bench-job' AND payload->>'agent_id' = %s
            AND payload->>'run_id' = 'notes' ORDER BY distance LIMIT %s"""

    def server_ms(self, vector: list[float], key: str, settings: str = MEM0_DEFAULTS
                  ) -> tuple[float, str]:
        """The search statement as Mem0 sends it, on a connection set up as the store's
        (``settings``: ``SET LOCAL`` statements before it)."""
        plan = self.query(f"{settings}EXPLAIN (ANALYZE, FORMAT JSON) {self.statement()}",
                          (literal(vector), key, TOP_K))[0][0][0]
        text = json.dumps(plan["Plan"])
        kind = "hnsw" if "hnsw_idx" in text else "scope" if "scope_idx" in text else "seq"
        return plan["Execution Time"], kind

    def sent_ms(self, statement: str) -> float:
        """Server time of a statement the store sent (as recorded)."""
        plan = self.query(f"EXPLAIN (ANALYZE, FORMAT JSON) {statement}")[0][0][0]
        return plan["Execution Time"]

    def cpu_ms(self, statement: str) -> float:
        """The server's CPU time for a statement the store sent (its backend's
        ``/proc/<pid>/schedstat``, the server being on this machine: on a loaded machine
        EXPLAIN ANALYZE's wall time counts the waits for a core too); NaN elsewhere."""
        with self.pg._get_cursor(commit=True) as cur:
            cur.execute("SELECT pg_backend_pid()")
            stat = Path(f"/proc/{cur.fetchone()[0]}/schedstat")
            try:
                before = int(stat.read_text().split()[0])
            except OSError:
                return float("nan")
            cur.execute(statement)
            cur.fetchall()
            return (int(stat.read_text().split()[0]) - before) / 1e6

    def top(self, vector: list[float], key: str, settings: str) -> list[str]:
        rows = self.query(settings + self.statement(), (literal(vector), key, TOP_K))
        return [str(row[0]) for row in sorted(rows, key=lambda row: row[1])[:5]]

    def close(self) -> None:
        self.execute(f'DROP TABLE "{self.table}"; DROP TABLE IF EXISTS "{self.table}_sentences"')
        self.release()


def measure(table: Table, key: str, rows: int, queries: int, query: Any) -> dict[str, Any]:
    """``query(n)``: the n-th query vector."""
    server, search, mem0_pair, our_pair, recall, kinds = [], [], [], [], [], set()
    exact_ms, ef_ms, ef_recall, sent_server, mem0_recall = [], [], [], [], []
    filters = scope(key)
    for n in range(queries + 1):
        vector = query(n)
        started = time.perf_counter()
        hits = table.store.search(query="q", vectors=vector, top_k=TOP_K, filters=filters)
        elapsed = time.perf_counter() - started
        ours = recorded_search(table.memory, vector, filters)
        words = f"w{n % WORDS}"
        started = time.perf_counter()
        table.store.search(query=words, vectors=vector, top_k=TOP_K, filters=filters)
        table.store.keyword_search(query=words, top_k=TOP_K, filters=filters)
        pair_elapsed = time.perf_counter() - started
        started = time.perf_counter()
        type(table.pg).search(table.pg, words, vector, TOP_K, filters)
        type(table.pg).keyword_search(table.pg, words, TOP_K, filters)
        mem0_elapsed = time.perf_counter() - started
        ms, kind = table.server_ms(vector, key)
        sent = table.sent_ms(ours)
        if n == 0:
            continue  # warm-up: first use of this key's pages
        assert len(hits) == min(TOP_K, rows), (key, len(hits))
        assert {hit.payload["agent_id"] for hit in hits} == {key}
        ranked = [str(h.id) for h in sorted(hits, key=lambda h: -(h.score or 0.0))][:5]
        exact = table.exact_top(vector, key, 5)
        recall.append(len(set(ranked) & set(exact)) / len(exact))
        mem0_recall.append(len(set(table.top(vector, key, MEM0_DEFAULTS)) & set(exact))
                           / len(exact))
        exact_ms.append(table.server_ms(vector, key, EXACT)[0])
        ef_ms.append(table.server_ms(vector, key, EF_SEARCH)[0])
        ef_recall.append(len(set(table.top(vector, key, EF_SEARCH)) & set(exact)) / len(exact))
        search.append(elapsed * 1000)
        mem0_pair.append(mem0_elapsed * 1000)
        our_pair.append(pair_elapsed * 1000)
        server.append(ms)
        sent_server.append(sent)
        kinds.add(kind)
    return {**side_and_guarded(table, key, queries, query),
            "rows": rows, "server": statistics.median(server), "plan": "+".join(sorted(kinds)),
            "search": statistics.median(search), "mem0 pair": statistics.median(mem0_pair),
            "pair": statistics.median(our_pair), "mem0 recall": statistics.mean(mem0_recall),
            "recall": statistics.mean(recall), "min recall": min(recall),
            "exact": statistics.median(exact_ms), "ef": statistics.median(ef_ms),
            "ef recall": statistics.mean(ef_recall), "sent": statistics.median(sent_server)}


def side_and_guarded(table: Table, key: str, queries: int, query: Any) -> dict[str, Any]:
    """The ``side`` and ``guarded`` columns (see the module's doc)."""
    filters = scope(key)
    ours = pgvector_search.attach(table.pg)
    side_ms, side_cpu, side_recall = [], [], []
    for n in range(1, queries + 1):
        vector = query(n)
        with recording(table.memory) as sent:
            rows = ours._statement_rows(table.pg, None, pgvector_search.vector_text(vector),
                                        TOP_K, filters, pgvector_search.EVERY_ROW)
        side_ms.append(table.sent_ms(sent[-1].text))
        side_cpu.append(table.cpu_ms(sent[-1].text))
        exact = table.exact_top(vector, key, 5)
        side_recall.append(len({str(r[0]) for r in rows[:5]} & set(exact)) / len(exact))
    guarded = pgvector_search.PgvectorSearch()  # the defaults: 10,000 rows, min_recall 0.9
    guarded.side = ours.side  # the side table is there (the store's prepare made it)
    for n in range(pgvector_search.RECALL_FIRST_CHECKS):
        guarded.nearest(table.pg, query(n), TOP_K, filters)
    guarded_ms, guarded_cpu, guarded_recall, plans = [], [], [], set()
    for n in range(1, queries + 1):
        vector = query(n)
        with recording(table.memory) as sent:
            hits = guarded.nearest(table.pg, vector, TOP_K, filters)
        statement = sent[-1].text
        plans.add("exact" if "SELECT true AS exact" in statement else "hnsw")
        guarded_ms.append(table.sent_ms(statement))
        guarded_cpu.append(table.cpu_ms(statement))
        exact = table.exact_top(vector, key, 5)
        guarded_recall.append(len({h.id for h in hits[:5]} & set(exact)) / len(exact))
    return {"side": statistics.median(side_ms), "side recall": statistics.mean(side_recall),
            "side cpu": statistics.median(side_cpu), "guarded cpu": statistics.median(guarded_cpu),
            "guarded": statistics.median(guarded_ms), "guarded plan": "+".join(sorted(plans)),
            "guarded recall": statistics.mean(guarded_recall)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=500_000,
                        help="rows in the table, large keys included")
    parser.add_argument("--keys", type=int, default=5000, help="small keys sharing the rest")
    parser.add_argument("--large-keys", type=int, nargs="*", default=[5000, 10000, 50000],
                        help="one key of each of these sizes, random vectors")
    parser.add_argument("--minilm-keys", type=int, nargs="*", default=[5000, 10000, 50000],
                        help="one key of each of these sizes, MiniLM vectors")
    parser.add_argument("--sentences", type=int, default=2000,
                        help="distinct sentences the MiniLM keys' rows are made from")
    parser.add_argument("--queries", type=int, default=20, help="per key")
    parser.add_argument("--no-hnsw", action="store_true",
                        help="leave Mem0's HNSW index out (its build takes over 10 min at 500k "
                        "rows on 2 cores): every plan is then the scope index's or a scan")
    parser.add_argument("--pgvector-config", metavar="FILE",
                        help="VECTOR_STORE JSON file of a running server (default: start one "
                        "with scripts/pgvector-server)")
    add_json_argument(parser)
    args = parser.parse_args()
    small_rows = args.rows - sum(args.large_keys) - sum(args.minilm_keys)
    if small_rows < args.keys:
        parser.error("--rows must leave at least one row per small key")
    rng = np.random.default_rng(7)
    began = time.monotonic()
    notes, questions = (minilm_vectors(args.sentences) if args.minilm_keys
                        else (np.zeros((0, DIMS)), np.zeros((0, DIMS))))
    if args.minilm_keys:
        print(f"encoded {len(notes)} sentences in {time.monotonic() - began:.0f} s", flush=True)
    with pgvector_server(args.pgvector_config) as server:
        # min_recall 0: the store's recall checks would rank a table whose random keys HNSW
        # misses exactly for every key (its MiniLM keys too): this measures HNSW itself
        table = Table({**server, "config": {**server["config"], "min_recall": 0}})
        try:
            print(f"filling {args.rows} rows ...", flush=True)
            step = 50_000
            for first in range(0, small_rows, step):
                table.fill(first, min(step, small_rows - first),
                           f"'customer-' || (g %% {args.keys})")
            for size in args.large_keys:
                for first in range(0, size, step):
                    table.fill(first, min(step, size - first), f"'large-{size}'")
            if args.minilm_keys:
                table.load_sentences(notes)
            for size in args.minilm_keys:
                for first in range(0, size, step):
                    table.fill_minilm(first, min(step, size - first), f"'minilm-{size}'")
            print(f"  filled in {time.monotonic() - began:.0f} s; building the indexes ...",
                  flush=True)
            build = table.build_indexes(not args.no_hnsw)
            print(f"  indexes built in {build:.0f} s", flush=True)

            def random_query(n: int) -> list[float]:
                return list(rng.standard_normal(DIMS).tolist())

            def minilm_query(n: int) -> list[float]:
                return list(questions[n % len(questions)].tolist())

            keys = [("customer-0", len(range(0, small_rows, args.keys)), "random",
                     random_query)]
            keys += [(f"large-{size}", size, "random", random_query)
                     for size in args.large_keys]
            keys += [(f"minilm-{size}", size, "minilm", minilm_query)
                     for size in args.minilm_keys]
            main_bytes, side_bytes = table.sizes()
            print(f"  sizes: table {main_bytes / 2**20:.0f} MB, side table "
                  f"{side_bytes / 2**20:.0f} MB ({side_bytes / main_bytes:.0%})", flush=True)
            results = []
            for key, rows, kind, query in keys:
                result = {**measure(table, key, rows, args.queries, query), "vectors": kind}
                results.append(result)
                print(f"  {rows}-row key ({kind}): {result}", flush=True)
        finally:
            table.close()

    print(f"\none key's search, {args.rows} rows, {args.keys} small keys + "
          f"{len(args.large_keys)} large random + {len(args.minilm_keys)} large MiniLM, "
          f"HNSW {'built in ' + format(build, '.0f') + ' s' if not args.no_hnsw else 'none'}, "
          f"top_k={TOP_K}, median ms over {args.queries} queries, "
          f"{time.monotonic() - began:.0f} s in all")
    print(f"{'key rows':>9}{'vectors':>8}{'plan':>7}{'server ms':>11}{'ours ms':>9}"
          f"{'search ms':>11}{'client extra':>14}{'pair ms':>9}{'mem0 pair':>11}"
          f"{'R@5':>7}{'min R@5':>9}{'mem0 R@5':>10}{'exact ms':>10}{'ef1000 ms':>11}"
          f"{'ef1000 R@5':>12}")
    for r in results:
        print(f"{r['rows']:>9}{r['vectors']:>8}{r['plan']:>7}{r['server']:>11.2f}"
              f"{r['sent']:>9.2f}{r['search']:>11.2f}{r['search'] - r['sent']:>14.2f}"
              f"{r['pair']:>9.2f}{r['mem0 pair']:>11.2f}{r['recall']:>7.3f}"
              f"{r['min recall']:>9.2f}{r['mem0 recall']:>10.3f}{r['exact']:>10.2f}"
              f"{r['ef']:>11.2f}{r['ef recall']:>12.3f}")
    print(f"\n{'key rows':>9}{'vectors':>8}{'side ms':>9}{'side cpu':>10}{'side R@5':>10}"
          f"{'guarded':>9}{'guarded ms':>12}{'guarded cpu':>13}{'guarded R@5':>13}")
    for r in results:
        print(f"{r['rows']:>9}{r['vectors']:>8}{r['side']:>9.2f}{r['side cpu']:>10.2f}"
              f"{r['side recall']:>10.3f}{r['guarded plan']:>9}{r['guarded']:>12.2f}"
              f"{r['guarded cpu']:>13.2f}{r['guarded recall']:>13.3f}")
    print(f"table {main_bytes / 2**20:.0f} MB, side table {side_bytes / 2**20:.0f} MB "
          f"(+{side_bytes / main_bytes:.0%})")
    write_results(args.json, bench="pgvector_key_search", series={
        f"{name} ({kind})": [(r["rows"], r[field]) for r in results if r["vectors"] == kind]
        for kind in ("random", "minilm")
        for name, field in (("Mem0's statement on the server", "server"),
                            ("the store's statement on the server", "sent"),
                            ("client search", "search"), ("search + keyword, ours", "pair"),
                            ("search + keyword, Mem0's", "mem0 pair"),
                            ("exact through the side table, on the server", "side"),
                            ("the store's defaults after the recall checks", "guarded"))},
        title=f"One key's search at {args.rows} rows, by the key's size",
        x_label="rows of the key", y_label="p50 ms")


if __name__ == "__main__":
    main()

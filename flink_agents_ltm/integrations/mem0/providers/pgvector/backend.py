"""pgvector: Mem0's ``pgvector`` store on a PostgreSQL server (see its ``store`` and
``connection``). Its psycopg2 pool raises instead of waiting when exhausted, so
calls are serialized (``serialized_store``); its ``insert`` is a plain ``INSERT``, so rows
are upserted here, chunk by chunk as the encoder delivers them."""

from __future__ import annotations

import collections
import contextlib
import functools
import itertools
import json
import logging
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, ClassVar, NamedTuple, TypeVar, cast

import numpy as np

from flink_agents_ltm.api.filters import ORDERINGS, AnyOf, Condition, MetadataFilter, Operator
from flink_agents_ltm.api.memory.expiry import EXPIRES_AT
from flink_agents_ltm.api.redaction import redact_text
from flink_agents_ltm.integrations.mem0 import private_api
from flink_agents_ltm.integrations.mem0.environment import import_mem0
from flink_agents_ltm.integrations.mem0.providers.base import (
    StoreBackend,
    StoreCheckError,
    Vector,
    inner,
)
from flink_agents_ltm.integrations.mem0.providers.filter_parts import (
    NativeFilter,
    Translate,
    equality,
    merged,
    plain,
)
from flink_agents_ltm.integrations.mem0.providers.pgvector import connection as pgvector_connection
from flink_agents_ltm.integrations.mem0.providers.pgvector import store as pgvector_store

import_mem0()
from mem0.configs.base import MemoryConfig  # noqa: E402

_log = logging.getLogger(__name__)
_Kept = TypeVar("_Kept")


def _table(config: dict[str, Any]) -> str:
    """The store's table: the config's ``collection_name``, else Mem0's default."""
    from mem0.configs.vector_stores.pgvector import PGVectorConfig

    default = PGVectorConfig.model_fields["collection_name"].default
    return str(config.get("collection_name") or default)


class Row(NamedTuple):
    """A row read from a store, shaped like Mem0's ``OutputData`` (made in C: a query
    makes one per hit). Its ``payload`` is read in place and never changed: for FAISS
    it is the docstore's own dict."""

    id: str
    payload: dict[str, Any]
    score: float | None = None


def vector_text(vector: Sequence[float]) -> str:
    """pgvector's text form of a vector, exactly the single-precision numbers the server
    stores: each number rounded to float32, then written with 9 significant digits (which
    read back as that very float32). psycopg2 would adapt a list of floats one number at
    a time, as an ``ARRAY`` (milliseconds for 384 of them); ``repr`` of each double takes
    ~3x longer than one ``%``-format of float32s."""
    values = np.asarray(vector, dtype=np.float32).tolist()
    return _text_format(len(values)) % tuple(values)


@functools.lru_cache(maxsize=8)
def _text_format(dimensions: int) -> str:
    return "[" + ",".join(["%.9g"] * dimensions) + "]"


def _translator(reserved: frozenset[str]) -> Translate:
    def condition(part: MetadataFilter) -> dict[str, Any] | None:
        if not isinstance(part, Condition) or not plain(part, reserved):
            return None
        if part.op is Operator.CONTAINS:
            return {part.field: {"contains": part.value}}  # LIKE, escaped by Mem0
        if (part.field == EXPIRES_AT and part.op in ORDERINGS
                and not isinstance(part.value, str)):
            # ::numeric, safe here alone: only long-term memory writes this field, a number
            return {part.field: {part.op.value: part.value}}
        return equality(part, booleans=True, lists=True)

    def translate(part: MetadataFilter) -> dict[str, Any] | None:
        if isinstance(part, AnyOf):
            branches = [condition(p) for p in part.parts]
            return None if any(b is None for b in branches) else {"$or": branches}
        return condition(part)

    return translate


class PgVectorBackend(StoreBackend):
    provider: ClassVar[str] = "pgvector"
    writes_in_chunks: ClassVar[bool] = True
    extra: ClassVar[str | None] = "pgvector"

    def needs_lock(self, store: Any) -> bool:
        return True

    def upserts_on_insert(self, store: Any) -> bool:
        return False

    def many_deleter(self, store: Any) -> None:
        return None

    def native_filter(self, filter_: MetadataFilter, parts: list[MetadataFilter], *,
                      search: bool, reserved: frozenset[str]) -> NativeFilter:
        return merged(list(map(_translator(reserved), parts)), len(parts))

    # ------------------------------------------------------------- long-term memory

    def connect(self, config: dict[str, Any]) -> pgvector_connection.PgvectorConnection:
        """Escaped credentials and timeouts: :mod:`.connection`."""
        pgvector_store.require_driver()
        return pgvector_connection.PgvectorConnection.from_config(config)

    def memory_config(self, store: dict[str, Any], connection: Any) -> MemoryConfig:
        """Mem0 validates the config as given (our timeout keys aside), then gets the
        connection string built for it."""
        MemoryConfig(vector_store={**store, "config": pgvector_connection.without_our_keys(
            store["config"])}, history_db_path=":memory:")
        return MemoryConfig(vector_store={**store, "config": connection.mem0_config(
            store["config"])}, history_db_path=":memory:")

    def open_error(self, error: Exception, store: dict[str, Any],
                   connection: Any) -> Exception | None:
        if type(error).__name__ != "OperationalError":
            return None
        timeout: Exception | None = connection.explain(error)
        if timeout is not None:
            return timeout
        return ConnectionError(f"cannot connect to the pgvector store at {connection.target}: "
                               f"{redact_text(str(error).strip())}")

    def opened(self, vector_store: Any, connection: Any, dimensions: int) -> None:
        connection.name_timeouts(vector_store)
        pgvector_store.prepare(vector_store, dimensions)
        pg = inner(vector_store)
        pg.search = functools.partial(_mem0_search, pg, connection.exact_search_up_to,
                                      connection.min_recall)
        pg.keyword_search = functools.partial(_mem0_keyword_search, pg,
                                              type(pg).keyword_search.__get__(pg))

    # ------------------------------------------------------------- the command line

    def missing_job(self, config: dict[str, Any], job_id: str, where: str) -> str | None:
        """The rows of every job share one table: a job has a store when the collection's
        table exists and holds a row of the job (a job whose every key was erased has
        none: there is nothing left to erase)."""
        from flink_agents_ltm.integrations.mem0.scope import mem0_id

        table = _table(config)
        found = pgvector_store.holds_user(config, table, mem0_id(job_id))
        if found is None:
            return (f"job {job_id!r} has no store in {where}: its table {table!r} does not "
                    "exist; check --job-id and the collection_name")
        if not found:
            return (f"job {job_id!r} has no memories in {where} (no row of this job; "
                    "nothing to erase); check --job-id")
        return None

    def compactor(self, config: dict[str, Any]) -> Callable[[], None]:
        """``VACUUM FULL`` of the collection's table (see :func:`.pgvector_store.vacuum_full`)."""
        settings, table = dict(config), _table(config)
        return lambda: pgvector_store.vacuum_full(settings, table)

    def self_check(self, config: dict[str, Any], dims: int) -> str:
        """:mod:`.selfcheck` on the server: the extension's code run on a
        scratch table (a build for another CPU dies there, not in a job)."""
        from flink_agents_ltm.integrations.mem0.providers.pgvector import (
            selfcheck as pgvector_selfcheck,
        )

        try:
            return pgvector_selfcheck.check_pgvector(config, dims=dims)
        except pgvector_selfcheck.PgvectorSelfCheckError as error:
            raise StoreCheckError(str(error)) from None

    def write_chunks(self, store: Any, ids: Sequence[str], first: Sequence[Vector],
                     rest: Iterable[Sequence[Vector]], payloads: Sequence[dict[str, Any]]
                     ) -> None:
        """One ``INSERT ... ON CONFLICT (id) DO UPDATE`` per chunk, all in one transaction,
        on the table Mem0 created (columns ``id``, ``vector``, ``payload``; a test pins
        that layout so a Mem0 upgrade that changes it fails loudly)."""
        from mem0.vector_stores import pgvector as mem0_pgvector

        pg = inner(store)
        private_api.pg_ensure_table(pg)
        upsert = ("INSERT INTO {} (id, vector, payload) VALUES %s ON CONFLICT (id) DO UPDATE "
                  "SET vector = EXCLUDED.vector, payload = EXCLUDED.payload")
        sql = mem0_pgvector.sql
        written = 0
        with private_api.pg_cursor(pg, commit=True) as cur:  # one transaction
            for chunk in itertools.chain([first], rest):
                rows = [(i, vector_text(v), json.dumps(p)) for i, v, p in zip(
                    ids[written:written + len(chunk)], chunk,
                    payloads[written:written + len(chunk)], strict=True)]
                if mem0_pgvector.PSYCOPG_VERSION == 3:
                    cur.executemany(sql.SQL(upsert.replace("%s", "(%s, %s::vector, %s)"))
                                    .format(private_api.pg_table(pg)), rows)
                else:
                    mem0_pgvector.execute_values(
                        cur, sql.SQL(upsert).format(private_api.pg_table(pg)), rows,
                        template="(%s, %s::vector, %s)", page_size=max(len(rows), 1))
                written += len(chunk)
            if written != len(ids):
                raise ValueError(f"{len(ids)} ids but {written} vectors")

    # ------------------------------------------------------------- Mem0VectorStore

    def connection_of(self, owner: Any) -> dict[str, Any]:
        return {"connection_pool": owner.connection_pool}

    def collections(self, owner: Any) -> list[str]:
        """Tables shaped like Mem0's (a ``vector`` column of type vector and a ``payload``),
        not every table of the schema."""
        with private_api.pg_cursor(owner) as cur:
            cur.execute("SELECT c.table_name FROM information_schema.columns c "
                        "JOIN information_schema.columns p ON p.table_schema = c.table_schema "
                        "AND p.table_name = c.table_name AND p.column_name = 'payload' "
                        "WHERE c.table_schema = 'public' AND c.column_name = 'vector' "
                        "AND c.udt_name = 'vector'")
            return [row[0] for row in cur.fetchall()]

    def prepare(self, store: Any, dimensions: int) -> None:
        """Creates the table now (safe against other processes doing the same); a table
        of another dimension is refused by :meth:`stored_dimensions`' caller."""
        with contextlib.suppress(ValueError):  # the caller reports it with the store's words
            pgvector_store.prepare(store, dimensions)

    def search(self, store: Any, vector: list[float], k: int,
               filters: dict[str, Any] | None) -> list[Any]:
        """Mem0's query, made to deliver ``k`` rows whenever the table has them.

        An HNSW index scan is approximate: by default it stops after ``hnsw.ef_search``
        (40) candidates, filtered or not, and it can miss a row the graph barely links
        (an outlier among near-duplicates). Fewer than ``k`` rows would then look like
        the end of the table. So the scan is told to go on (iterative scans, pgvector
        0.8; ``relaxed_order`` may swap neighbours, hence the sort; the settings ride in
        the query's round trip, on this store's own pool), and when it still returns
        fewer than ``k`` while more rows match, the query runs again exactly, without
        the index."""
        from psycopg2 import sql

        conditions, parameters = private_api.pg_filter_conditions(filters)
        where = sql.SQL("WHERE " + " AND ".join(conditions)) if conditions else sql.SQL("")
        table = sql.Identifier(store.collection_name)
        nearest = sql.SQL("SELECT id, vector <=> %s::vector AS distance, payload FROM {} {} "
                          "ORDER BY distance LIMIT %s").format(table, where)
        ef_search = sql.SQL("SET hnsw.iterative_scan = relaxed_order; SET hnsw.ef_search = {}; "
                            ).format(sql.Literal(min(max(k, 40), 1000)))
        literal = vector_text(vector)
        private_api.pg_ensure_table(store)
        with private_api.pg_cursor(store) as cur:
            cur.execute(ef_search + nearest, (literal, *parameters, k))
            rows = cur.fetchall()
            if len(rows) < k:
                cur.execute(sql.SQL("SELECT count(*) FROM {} {}").format(table, where),
                            parameters)
                if cur.fetchone()[0] > len(rows):
                    cur.execute(sql.SQL("SET LOCAL enable_indexscan = off; ") + nearest,
                                (literal, *parameters, k))
                    rows = cur.fetchall()
                    cur.connection.commit()  # ends SET LOCAL: later queries may use the index
        found = [Row(str(r[0]), r[2], max(0.0, 1.0 - float(r[1]))) for r in rows]
        return sorted(found, key=lambda row: -(row.score or 0.0))

    def insert(self, store: Any, ids: list[str], vectors: list[list[float]],
               payloads: list[dict[str, Any]]) -> None:
        """Mem0's insert, with vectors sent as text (see :func:`vector_text`)."""
        from psycopg2 import sql
        from psycopg2.extras import Json, execute_values

        private_api.pg_ensure_table(store)
        rows = [(i, vector_text(v), Json(p)) for i, v, p in zip(ids, vectors, payloads,
                                                                 strict=True)]
        with private_api.pg_cursor(store, commit=True) as cur:
            execute_values(cur, sql.SQL("INSERT INTO {} (id, vector, payload) VALUES %s").format(
                sql.Identifier(store.collection_name)), rows)

    def stored_dimensions(self, store: Any) -> int | None:
        with private_api.pg_cursor(store) as cur:
            cur.execute("SELECT atttypmod FROM pg_attribute WHERE attrelid = "
                        "to_regclass(quote_ident(%s)) AND attname = 'vector'",
                        (store.collection_name,))
            row = cur.fetchone()
        return row[0] if row is not None and row[0] > 0 else None

    def count(self, store: Any) -> int | None:
        return int(store.col_info()["count"])

    def get_many(self, store: Any, ids: Sequence[str]) -> list[Any]:
        from psycopg2 import sql

        with private_api.pg_cursor(store) as cur:
            cur.execute(sql.SQL("SELECT id, payload FROM {} WHERE id = ANY(%s::uuid[])").format(
                sql.Identifier(store.collection_name)), (list(ids),))
            found = {str(row[0]): row for row in cur.fetchall()}
        return [Row(i, found[i][1]) for i in ids if i in found]

    def delete_many(self, store: Any, ids: Sequence[str]) -> None:
        from psycopg2 import sql

        with private_api.pg_cursor(store, commit=True) as cur:
            cur.execute(sql.SQL("DELETE FROM {} WHERE id = ANY(%s::uuid[])").format(
                sql.Identifier(store.collection_name)), (list(ids),))

    def close(self, owner: Any) -> None:
        pgvector_store.close(owner)


HNSW_EF_SEARCH = pgvector_store.HNSW_EF_SEARCH
"""``hnsw.ef_search`` of a search above ``exact_search_up_to``: a setting of the store's
sessions (``pgvector_store.SESSION_SETTINGS``)."""

KEYWORD_SCORES_KEPT = 16
"""Searches whose keyword scores wait for Mem0's ``keyword_search`` (one per search in
flight; a search nobody asks the scores of, an ``add``'s duplicate check, is dropped
after this many more)."""


def _mem0_search(pg: Any, exact_up_to: int, min_recall: float, query: str,
                 vectors: Sequence[float], top_k: int = 5,
                 filters: dict[str, Any] | None = None) -> list[Row]:
    """Mem0's ``PGVector.search`` in one round trip, exact for keys up to ``exact_up_to``
    rows (the store config's ``exact_search_up_to``), with the query vector sent as text; it
    also scores the hits for Mem0's keyword statement (:func:`_mem0_keyword_search`).

    - Mem0 passes the vector as a list of floats, which psycopg2 adapts as an
      ``ARRAY[...]`` of 384 numbers, one at a time (~2 ms of client time per search, more
      than the server spends ranking a small key).
    - For a key holding more than a few % of the table, the planner walks the HNSW
      index (filtered iterative scan), which found 1 to 2 of a 5k-row key's 5 nearest
      rows at 120k rows (and took 40-100 ms), where ranking its rows through the scope
      index takes a few ms. So one statement counts the matching rows up to the fence
      and runs only one of two branches: the rows through the scope index, ranked
      exactly (``OFFSET 0`` keeps the planner from using HNSW for them), or Mem0's
      query above the fence, with ``hnsw.ef_search`` raised to :data:`HNSW_EF_SEARCH`
      for the store's sessions (set inside this statement, it missed some scans: see
      ``store``). The first search of a table served that way logs one
      warning, naming ``exact_search_up_to`` (:func:`_approximate_once`). A count is
      remembered for the next searches with the same filters (:class:`_FilterSizes`).
    - Whether the HNSW index finds the true nearest rows depends on the vectors (sentence
      embeddings: nearly all; vectors near random: one in ten). So some HNSW-served searches
      are run again exactly and the two top 5s compared (:class:`_RecallChecks`); the exact
      hits are returned. Below ``min_recall`` the table's searches are exact from then on.
    - Mem0 sends a keyword statement after every search (``ts_rank_cd`` over all of the
      key's rows) but only uses the scores of the search's hits. The statement scores the
      hits it returns instead, in the same round trip, and Mem0's ``keyword_search`` that
      follows with the same query gets them without a statement of its own.
    - Payloads are parsed with ``orjson`` when it is installed (PyFlink's Beam brings it):
      60 payloads took ~0.8 ms with ``json``, a quarter of that with ``orjson``.
    - psycopg2 opens a transaction before a statement (``BEGIN``, a round trip) and the
      pool rolls it back when the connection comes back (another); a read needs neither,
      so the statement runs in autocommit.
    """
    from mem0.utils.lemmatization import lemmatize_for_bm25

    private_api.pg_ensure_table(pg)
    checks = _recall_checks(pg, min_recall)
    sizes = _filter_sizes(pg)
    filter_key = _filter_key(filters)
    scope = filter_key if filters else None
    keywords = _lemmatized(lemmatize_for_bm25, query or "")
    search = functools.partial(_search_rows, pg, keywords, vector_text(vectors), top_k,
                               filters)
    above = None if checks.exact else sizes.above(scope)
    rows = search(EVERY_ROW if checks.exact or above is False
                  else SKIP_COUNT if above else exact_up_to)
    if rows and above is None and not checks.exact:
        sizes.counted(scope, above=not rows[0][4])
    if rows and not rows[0][4]:
        _approximate_once(pg, exact_up_to)
        if checks.due():
            exact = search(EVERY_ROW)
            checks.record(_found_share(rows, exact), pg)
            rows = exact
    hits = [Row(str(r[0]), r[2], max(0.0, 1.0 - float(r[1]))) for r in rows]
    matched = sorted((Row(str(r[0]), r[2], float(r[3])) for r in rows if r[3] is not None),
                     key=lambda row: -(row.score or 0.0))
    _keyword_scores(pg).keep((keywords, filter_key, top_k), matched)
    return hits


EVERY_ROW = 2**62
"""A fence no key reaches: the search ranks all matching rows exactly, without counting."""
SKIP_COUNT = -1
"""A fence every key is above: the HNSW branch, without counting."""
RECOUNT_EVERY = 64
"""Searches of a counted scope that skip the count before one counts again: a key that
crossed the fence since is served by the other branch for at most this many searches."""
SCOPE_SIZES_KEPT = 4096


def _search_rows(pg: Any, keywords: str, text: str, top_k: int,
                 filters: dict[str, Any] | None, exact_up_to: int) -> list[tuple[Any, ...]]:
    """The statement of :func:`_mem0_search` and its rows: id, distance, payload, keyword
    score and whether the rows were ranked exactly."""
    from mem0.vector_stores.pgvector import sql

    conditions, parameters = private_api.pg_filter_conditions(filters)
    where = "WHERE " + " AND ".join(conditions) if conditions else ""
    above = f"{where} AND" if conditions else "WHERE"
    counted = exact_up_to not in (EVERY_ROW, SKIP_COUNT)
    fence = (f"SELECT count(*) <= {exact_up_to:d} AS exact FROM (SELECT FROM {{table}} "
             f"{where} LIMIT {exact_up_to + 1:d}) matching" if counted
             else f"SELECT {'true' if exact_up_to == EVERY_ROW else 'false'} AS exact")
    statement = sql.SQL(
        f"WITH fence AS MATERIALIZED ({fence}), "
        "words AS MATERIALIZED (SELECT plainto_tsquery('simple', %s) AS query), "
        "near AS MATERIALIZED (SELECT %s::vector AS vector) "
        "SELECT id, distance, payload, CASE WHEN to_tsvector('simple', "
        "payload->>'text_lemmatized') @@ (SELECT query FROM words) THEN ts_rank_cd("
        "to_tsvector('simple', payload->>'text_lemmatized'), (SELECT query FROM words)) END, "
        "(SELECT exact FROM fence) FROM ((SELECT id, distance, payload FROM (SELECT id, "
        "vector <=> %s::vector AS "
        f"distance, payload FROM {{table}} {where} OFFSET 0) scoped WHERE (SELECT exact "
        "FROM fence) ORDER BY distance LIMIT %s) UNION ALL "
        "(SELECT id, vector <=> (SELECT vector FROM near) AS distance, payload FROM "
        f"{{table}} {above} NOT (SELECT exact FROM fence) ORDER BY distance LIMIT %s)) hits "
        "ORDER BY distance").format(table=private_api.pg_table(pg))
    with private_api.pg_cursor(pg) as cur, _autocommit(cur.connection):
        _fast_payloads(cur)
        cur.execute(statement, (*(parameters if counted else ()), keywords, text, text,
                                *parameters, top_k, *parameters, top_k))
        return list(cur.fetchall())


RECALL_TOP = 5
"""The recall checks compare the top this many hits (fewer when a search asks for fewer)."""
RECALL_FIRST_CHECKS = 8
"""HNSW-served searches of a table checked first (in a process), and the fewest checks the
recall is judged on: with sentence embeddings one search in ten or so misses one of its
nearest 5, and two such misses in three checks would read as a recall of 0.87."""
RECALL_CHECK_EVERY = 256
"""Then one such search in this many is checked (a check costs an exact ranking: ~50 ms for
a 50,000-row key, ~0.2 ms a search spread over 256)."""
RECALL_CHECKS_KEPT = 16


def _found_share(approximate: list[tuple[Any, ...]], exact: list[tuple[Any, ...]]) -> float:
    """The share of the exact ranking's top :data:`RECALL_TOP` that the HNSW-served
    search also returned in its top as many (rows are ordered by distance)."""
    truth = {row[0] for row in exact[:RECALL_TOP]}
    if not truth:
        return 1.0
    return len(truth & {row[0] for row in approximate[:len(truth)]}) / len(truth)


class _RecallChecks:
    """How well a table's HNSW-served searches find the true nearest rows, in this process:
    the first :data:`RECALL_FIRST_CHECKS` such searches are checked against the exact
    ranking, then one in :data:`RECALL_CHECK_EVERY`; once there are that many checks, the
    mean of the last :data:`RECALL_CHECKS_KEPT` below ``floor`` makes the table's searches
    exact (``exact``) for good, with one warning."""

    def __init__(self, floor: float):
        self.floor = floor
        self.exact = False
        self._served = 0
        self._found: collections.deque[float] = collections.deque(maxlen=RECALL_CHECKS_KEPT)
        self._lock = threading.Lock()

    def due(self) -> bool:
        """Whether this HNSW-served search is one to check."""
        with self._lock:
            self._served += 1
            return self.floor > 0 and (self._served <= RECALL_FIRST_CHECKS
                                       or self._served % RECALL_CHECK_EVERY == 0)

    def record(self, found: float, pg: Any) -> None:
        with self._lock:
            self._found.append(found)
            if (self.exact or len(self._found) < RECALL_FIRST_CHECKS
                    or sum(self._found) / len(self._found) >= self.floor):
                return
            self.exact = True
            mean = sum(self._found) / len(self._found)
        _log.warning(
            "searches of pgvector table %r through Mem0's HNSW index found %.0f%% of the "
            "true nearest %d rows in the last %d checks against the exact ranking, below "
            "the vector store config's '%s' (%g): from now on this process ranks the "
            "table's searches exactly (~1-2 us a row on the server); set '%s' above your "
            "largest key's rows to skip the checks, or '%s' to 0 to keep HNSW",
            pg.collection_name, 100 * mean, RECALL_TOP, len(self._found),
            pgvector_connection.MIN_RECALL, self.floor, pgvector_connection.EXACT_SEARCH_UP_TO,
            pgvector_connection.MIN_RECALL)


class _FilterSizes:
    """Whether the rows matching each search filter (a key's set, and the metadata
    conditions pushed to the store with it) numbered more than ``exact_search_up_to`` at
    their last count, and the searches left before they are counted again
    (:data:`RECOUNT_EVERY`); the :data:`SCOPE_SIZES_KEPT` most recently searched are kept.
    The count reads up to a fence's worth of the key's rows: 8 of a 50,000-row key's 11 ms
    on the server (HNSW took under 1), and 8 of a 10,000-row key's 14 ms (ranking its rows
    took 6)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._known: collections.OrderedDict[str, tuple[bool, int]] = (
            collections.OrderedDict())

    def above(self, scope: str | None) -> bool | None:
        """Whether ``scope``'s rows are above the fence, as last counted; ``None``: count
        them now."""
        if scope is None:
            return None
        with self._lock:
            above, left = self._known.pop(scope, (False, 0))
            if left <= 0:
                return None
            self._known[scope] = (above, left - 1)
            return above

    def counted(self, scope: str | None, *, above: bool) -> None:
        if scope is None:
            return
        with self._lock:
            self._known[scope] = (above, RECOUNT_EVERY)
            while len(self._known) > SCOPE_SIZES_KEPT:
                self._known.popitem(last=False)


def _filter_sizes(pg: Any) -> _FilterSizes:
    return _kept_on(pg, "filter_sizes", _FilterSizes)


def _recall_checks(pg: Any, floor: float) -> _RecallChecks:
    """The table's :class:`_RecallChecks` of this process (made on its first search)."""
    return _kept_on(pg, "recall_checks", lambda: _RecallChecks(floor))


def _approximate_once(pg: Any, exact_up_to: int) -> None:
    """One warning per table and process: a search matched more rows than are ranked
    exactly, so the HNSW index served it."""
    if pg.__dict__.get("_flink_agents_ltm_warned_approximate"):
        return
    pg.__dict__["_flink_agents_ltm_warned_approximate"] = True
    _log.warning(
        "a search of pgvector table %r matched more than %d rows (the vector store config's "
        "'%s'), so Mem0's HNSW index served it and its hits are approximate (close with "
        "sentence embeddings, far off with vectors near random: docs/vector-stores.md); "
        "raise '%s' to rank such searches exactly, at ~1-2 us a row on the server "
        "(logged once per table)", pg.collection_name, exact_up_to,
        pgvector_connection.EXACT_SEARCH_UP_TO, pgvector_connection.EXACT_SEARCH_UP_TO)


def _mem0_keyword_search(pg: Any, original: Any, query: str, top_k: int = 5,
                         filters: dict[str, Any] | None = None) -> list[Any] | None:
    """Mem0's ``keyword_search``: right after a search with the same (lemmatized) query,
    filters and ``top_k``, the keyword scores of that search's hits (the only rows whose
    scores Mem0 uses), with no statement; else Mem0's own statement."""
    scored = _keyword_scores(pg).take((query, _filter_key(filters), top_k))
    return scored if scored is not None else original(query, top_k=top_k, filters=filters)


@functools.lru_cache(maxsize=256)
def _lemmatized(lemmatize: Any, query: str) -> str:
    """Mem0's lemmatization of a query (with spaCy when installed: cached, as Mem0 has
    just lemmatized the same query itself)."""
    return str(lemmatize(query))


def _filter_key(filters: dict[str, Any] | None) -> str:
    return json.dumps(filters or {}, sort_keys=True, default=str)


class _KeywordScores:
    """Keyword scores of recent searches, each taken once, by the keyword statement Mem0
    sends after its search (maybe on another thread: Mem0's async search)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pending: collections.OrderedDict[tuple[str, str, int], list[Row]] = (
            collections.OrderedDict())

    def keep(self, key: tuple[str, str, int], rows: list[Row]) -> None:
        with self._lock:
            self._pending[key] = rows
            self._pending.move_to_end(key)
            while len(self._pending) > KEYWORD_SCORES_KEPT:
                self._pending.popitem(last=False)

    def take(self, key: tuple[str, str, int]) -> list[Row] | None:
        with self._lock:
            return self._pending.pop(key, None)


def _keyword_scores(pg: Any) -> _KeywordScores:
    return _kept_on(pg, "keyword_scores", _KeywordScores)


def _kept_on(pg: Any, name: str, make: Callable[[], _Kept]) -> _Kept:
    """What this process keeps on Mem0's store object ``pg`` (one per table) under
    ``name``, made on first use (two threads at once: one is kept, for both)."""
    kept = pg.__dict__.get(f"_flink_agents_ltm_{name}")
    if kept is None:
        kept = pg.__dict__.setdefault(f"_flink_agents_ltm_{name}", make())
    return cast(_Kept, kept)


@contextlib.contextmanager
def _autocommit(conn: Any) -> Iterator[None]:
    """Run the block's statements in autocommit when the connection is between
    transactions (it always is, fresh from the pool), and switch back after."""
    idle = not conn.autocommit and conn.info.transaction_status == _TRANSACTION_IDLE
    if idle:
        conn.autocommit = True
    try:
        yield
    finally:
        if idle:
            conn.autocommit = False


def _fast_payloads(cur: Any) -> None:
    """Make ``cur`` (psycopg2) parse ``jsonb`` with :data:`_PAYLOAD_LOADS`."""
    from mem0.vector_stores import pgvector as mem0_pgvector

    if mem0_pgvector.PSYCOPG_VERSION == 2 and _PAYLOAD_LOADS is not None:
        from psycopg2.extras import register_default_jsonb

        register_default_jsonb(cur, loads=_PAYLOAD_LOADS)


_PAYLOAD_LOADS: Callable[[str], Any] | None
try:
    from orjson import loads as _orjson_loads
except ImportError:  # pragma: no cover - PyFlink's apache-beam depends on it
    _PAYLOAD_LOADS = None
else:
    def _orjson_then_json(text: str) -> Any:
        try:
            return _orjson_loads(text)
        except ValueError:  # what orjson refuses (an integer beyond 64 bits) json reads
            return json.loads(text)

    _PAYLOAD_LOADS = _orjson_then_json

_TRANSACTION_IDLE = 0  # psycopg2.extensions.TRANSACTION_STATUS_IDLE, pq.TransactionStatus.IDLE

"""pgvector: one search of a table, for long-term memory (Mem0's ``PGVector.search``) and
for the vector-store resource (``Mem0VectorStore``) alike, so that ``exact_search_up_to``,
the recall checks (``min_recall``) and the side table (:mod:`.side_table`) serve both.

A :class:`PgvectorSearch` is made once per Mem0 ``PGVector`` object (one per table and
process, :func:`attach`) and holds what this process has learnt of the table: the sizes of
the scopes searched (:class:`FilterSizes`), how well HNSW finds each scope's nearest rows
(:class:`RecallChecks`) and the keyword scores waiting for Mem0's ``keyword_search``
(:class:`KeywordScores`). Nothing is kept on Mem0's object itself: the registry is a
``WeakKeyDictionary`` of this module's, so a store that is collected takes its search along.

One statement, one round trip:

- it counts the rows matching the filters up to the fence (``exact_search_up_to``, or not
  at all when the scope's size is remembered) and runs one of three branches: the key's rows
  in the side table ranked exactly, when the filters are the key's scope (and an expiry
  bound) and the side table is kept (its trigger exists); the matching rows of the main
  table through the scope index, ranked exactly (``OFFSET 0`` keeps the planner off HNSW);
  or Mem0's query above the fence, through the HNSW index (``hnsw.ef_search`` and iterative
  scans are settings of the store's sessions: ``store``).
- The side-table branch reads each hit's payload from the main table by id and checks the
  filters on it again there: a side table left stale (a table dropped and created again by
  another process) can lose hits, never show a row that is gone or of another scope.
- Some HNSW-served searches of each scope are run again exactly and the two top 5s compared;
  a scope whose HNSW searches find less than ``min_recall`` of the true nearest rows is
  ranked exactly from then on (random-like vectors), while a scope of sentence embeddings in
  the same table keeps HNSW.
- The statement scores its hits for Mem0's keyword statement (long-term memory only).
"""

from __future__ import annotations

import collections
import contextlib
import functools
import json
import logging
import threading
import weakref
from collections.abc import Callable, Iterator, Sequence
from typing import Any, NamedTuple

import numpy as np

from flink_agents_ltm.api.memory.expiry import EXPIRES_AT
from flink_agents_ltm.integrations.mem0 import private_api
from flink_agents_ltm.integrations.mem0.providers.pgvector import connection as pgvector_connection
from flink_agents_ltm.integrations.mem0.providers.pgvector import side_table

_log = logging.getLogger(__name__)


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


EVERY_ROW = 2**62
"""A fence no key reaches: the search ranks all matching rows exactly, without counting."""
SKIP_COUNT = -1
"""A fence every key is above: the HNSW branch, without counting."""
RECOUNT_EVERY = 64
"""Searches of a counted scope that skip the count before one counts again: a key that
crossed the fence since is served by the other branch for at most this many searches."""
SCOPE_SIZES_KEPT = 4096
"""Scopes whose size (and recall) a table's search remembers, the most recently searched."""
RECALL_TOP = 5
"""The recall checks compare the top this many hits (fewer when a search asks for fewer)."""
RECALL_FIRST_CHECKS = 8
"""HNSW-served searches of a scope checked first (in a process), and the fewest checks the
recall is judged on: with sentence embeddings one search in ten or so misses one of its
nearest 5, and two such misses in three checks would read as a recall of 0.87."""
RECALL_CHECK_EVERY = 256
"""Then one such search in this many is checked (a check costs an exact ranking: ~20 ms of
server CPU for a 50,000-row key through the side table, ~0.08 ms a search over 256)."""
RECALL_CHECKS_KEPT = 16
KEYWORD_SCORES_KEPT = 16
"""Searches whose keyword scores wait for Mem0's ``keyword_search`` (one per search in
flight; a search nobody asks the scores of, an ``add``'s duplicate check, is dropped
after this many more)."""
_SCOPE_FIELDS = ("user_id", "agent_id", "run_id")
_ORDERINGS = {"gt": ">", "gte": ">=", "lt": "<", "lte": "<="}


def side_conditions(filters: dict[str, Any] | None) -> tuple[list[str], list[Any]] | None:
    """The side table's conditions for ``filters`` when it can serve them (a key's scope,
    equality on text, and bounds on ``expires_at``), else ``None``."""
    if not filters:
        return None
    conditions: list[str] = []
    parameters: list[Any] = []
    for field, value in sorted(filters.items()):
        if field in _SCOPE_FIELDS and isinstance(value, str):
            conditions.append(f"{field} = %s")
            parameters.append(value)
        elif (field == EXPIRES_AT and isinstance(value, dict) and value
              and all(op in _ORDERINGS and isinstance(bound, (int, float))
                      and not isinstance(bound, bool) for op, bound in value.items())):
            for op, bound in sorted(value.items()):
                conditions.append(f"{EXPIRES_AT} {_ORDERINGS[op]} %s")
                parameters.append(float(bound))
        else:
            return None
    if not {"user_id", "agent_id"} <= set(filters):
        return None  # not a key's scope: the side table's index would not narrow it
    return conditions, parameters


class PgvectorSearch:
    """The searches of one table in this process (see the module's doc)."""

    def __init__(self, exact_up_to: int = pgvector_connection.DEFAULT_EXACT_SEARCH_UP_TO,
                 min_recall: float = pgvector_connection.DEFAULT_MIN_RECALL):
        self.exact_up_to = exact_up_to
        self.min_recall = min_recall
        self.sizes = FilterSizes()
        self.recall = RecallChecks(min_recall)
        self.keyword_scores = KeywordScores()
        self.side = False
        """Whether the table's side table exists (``store.prepare`` made or found it): the
        statement names it only then, and forgets it when the server says it is gone."""
        self._warned_approximate = False

    # ------------------------------------------------------------- long-term memory

    def mem0_search(self, pg: Any, query: str, vectors: Sequence[float], top_k: int = 5,
                    filters: dict[str, Any] | None = None) -> list[Row]:
        """Mem0's ``PGVector.search``: the hits, and their keyword scores kept for the
        ``keyword_search`` Mem0 sends next (:meth:`mem0_keyword_search`)."""
        from mem0.utils.lemmatization import lemmatize_for_bm25

        keywords = _lemmatized(lemmatize_for_bm25, query or "")
        rows = self.rows(pg, vectors, top_k, filters, keywords)
        hits = [Row(str(r[0]), r[2], max(0.0, 1.0 - float(r[1]))) for r in rows]
        matched = sorted((Row(str(r[0]), r[2], float(r[3])) for r in rows if r[3] is not None),
                         key=lambda row: -(row.score or 0.0))
        self.keyword_scores.keep((keywords, _filter_key(filters), top_k), matched)
        return hits

    def mem0_keyword_search(self, original: Any, query: str, top_k: int = 5,
                            filters: dict[str, Any] | None = None) -> list[Any] | None:
        """Mem0's ``keyword_search``: right after a search with the same (lemmatized) query,
        filters and ``top_k``, the keyword scores of that search's hits (the only rows whose
        scores Mem0 uses), with no statement; else Mem0's own statement."""
        scored = self.keyword_scores.take((query, _filter_key(filters), top_k))
        return scored if scored is not None else original(query, top_k=top_k, filters=filters)

    # ------------------------------------------------------------- the resource

    def nearest(self, pg: Any, vector: Sequence[float], k: int,
                filters: dict[str, Any] | None) -> list[Row]:
        """The ``k`` rows nearest ``vector`` among those matching ``filters``, best first."""
        rows = self.rows(pg, vector, k, filters, None)
        found = [Row(str(r[0]), r[2], max(0.0, 1.0 - float(r[1]))) for r in rows]
        return sorted(found, key=lambda row: -(row.score or 0.0))

    # ------------------------------------------------------------- both

    def rows(self, pg: Any, vector: Sequence[float], top_k: int,
             filters: dict[str, Any] | None, keywords: str | None) -> list[tuple[Any, ...]]:
        """Rows of the search: id, distance, payload, keyword score, ranked exactly."""
        private_api.pg_ensure_table(pg)
        scope = _filter_key(filters)  # unfiltered (the resource's): the table, "{}"
        sized = scope
        search = functools.partial(self._rows_once, pg, keywords, vector_text(vector),
                                   top_k, filters)
        exact = self.recall.exact(scope)
        above = None if exact else self.sizes.above(sized)
        rows = search(EVERY_ROW if exact or above is False
                      else SKIP_COUNT if above else self.exact_up_to)
        if rows and above is None and not exact:
            self.sizes.counted(sized, above=not rows[0][4])
        if rows and not rows[0][4]:
            self._approximate_once(pg)
            if self.recall.due(scope):
                checked = search(EVERY_ROW)
                self.recall.record(scope, found_share(rows, checked), pg)
                rows = checked
            elif len(rows) < top_k:  # HNSW gave up early: the rows are there
                rows = search(EVERY_ROW)
        return rows

    def _rows_once(self, pg: Any, keywords: str | None, text: str, top_k: int,
                   filters: dict[str, Any] | None, exact_up_to: int) -> list[tuple[Any, ...]]:
        """:meth:`_statement_rows`, again without the side table if it is gone (dropped
        with its collection by another store, or made into something else)."""
        side = self.side
        try:
            return self._statement_rows(pg, keywords, text, top_k, filters, exact_up_to)
        except Exception as error:
            code = getattr(error, "pgcode", None) or getattr(error, "sqlstate", None)
            if not side or code not in _NO_SIDE_TABLE:
                raise
        self.side = False
        _log.warning("pgvector: the side table %r of %r is gone; this process ranks the "
                     "table's keys through Mem0's table until a store opens it again",
                     side_table.name(pg.collection_name), pg.collection_name)
        return self._statement_rows(pg, keywords, text, top_k, filters, exact_up_to)

    def _statement_rows(self, pg: Any, keywords: str | None, text: str, top_k: int,
                        filters: dict[str, Any] | None, exact_up_to: int
                        ) -> list[tuple[Any, ...]]:
        from mem0.vector_stores.pgvector import sql

        conditions, parameters = private_api.pg_filter_conditions(filters)
        where = "WHERE " + " AND ".join(conditions) if conditions else ""
        above = f"{where} AND" if conditions else "WHERE"
        counted = exact_up_to not in (EVERY_ROW, SKIP_COUNT)
        fence = (f"SELECT count(*) <= {exact_up_to:d} AS exact FROM (SELECT FROM {{table}} "
                 f"{where} LIMIT {exact_up_to + 1:d}) matching" if counted
                 else f"SELECT {'true' if exact_up_to == EVERY_ROW else 'false'} AS exact")
        side = side_conditions(filters) if self.side and exact_up_to != SKIP_COUNT else None
        values: list[Any] = list(parameters if counted else ())
        ready = ""
        if side is not None:
            ready = f"side AS MATERIALIZED ({side_table.READY}), "
            values += side_table.ready_parameters(pg.collection_name)
        words = ""
        score = "NULL::real"
        if keywords is not None:
            words = "words AS MATERIALIZED (SELECT plainto_tsquery('simple', %s) AS query), "
            values.append(keywords)
            score = ("CASE WHEN to_tsvector('simple', payload->>'text_lemmatized') @@ (SELECT "
                     "query FROM words) THEN ts_rank_cd(to_tsvector('simple', "
                     "payload->>'text_lemmatized'), (SELECT query FROM words)) END")
        values.append(text)
        branches = []
        if side is not None:
            side_where, side_values = side
            main_where = " AND ".join(conditions)  # on main.payload: the side has none
            branches.append(
                "(SELECT main.id, nearest.distance, main.payload FROM (SELECT id, vector <=> "
                "(SELECT vector FROM near) AS distance FROM {side} WHERE "
                + " AND ".join(side_where) + " AND (SELECT exact FROM fence) AND (SELECT "
                "ready FROM side) ORDER BY distance LIMIT %s) nearest JOIN {table} main ON "
                f"main.id = nearest.id WHERE {main_where})")
            values += [*side_values, top_k, *parameters]
        not_side = " AND NOT (SELECT ready FROM side)" if side is not None else ""
        branches.append(
            "(SELECT id, distance, payload FROM (SELECT id, vector <=> %s::vector AS distance, "
            f"payload FROM {{table}} {where} OFFSET 0) scoped WHERE (SELECT exact FROM fence)"
            f"{not_side} ORDER BY distance LIMIT %s)")
        values += [text, *parameters, top_k]
        branches.append(
            "(SELECT id, vector <=> (SELECT vector FROM near) AS distance, payload FROM "
            f"{{table}} {above} NOT (SELECT exact FROM fence) ORDER BY distance LIMIT %s)")
        values += [*parameters, top_k]
        statement = sql.SQL(
            f"WITH fence AS MATERIALIZED ({fence}), {ready}{words}"
            "near AS MATERIALIZED (SELECT %s::vector AS vector) "
            f"SELECT id, distance, payload, {score}, (SELECT exact FROM fence) FROM ("
            + " UNION ALL ".join(branches) + ") hits ORDER BY distance").format(
                table=private_api.pg_table(pg),
                side=sql.Identifier(side_table.name(pg.collection_name)))
        with private_api.pg_cursor(pg) as cur, _autocommit(cur.connection):
            _fast_payloads(cur)
            cur.execute(statement, values)
            return list(cur.fetchall())

    def _approximate_once(self, pg: Any) -> None:
        """One warning per table and process: a search matched more rows than are ranked
        exactly, so the HNSW index served it."""
        if self._warned_approximate:
            return
        self._warned_approximate = True
        _log.warning(
            "a search of pgvector table %r matched more than %d rows (the vector store "
            "config's '%s'), so Mem0's HNSW index served it and its hits are approximate "
            "(close with sentence embeddings, far off with vectors near random: "
            "docs/vector-stores.md); raise '%s' to rank such searches exactly, at ~0.3-2 us "
            "a row on the server (logged once per table)", pg.collection_name,
            self.exact_up_to, pgvector_connection.EXACT_SEARCH_UP_TO,
            pgvector_connection.EXACT_SEARCH_UP_TO)


_SEARCHES: weakref.WeakKeyDictionary[Any, PgvectorSearch] = weakref.WeakKeyDictionary()
_SEARCHES_LOCK = threading.Lock()


def attach(pg: Any, exact_up_to: int | None = None, min_recall: float | None = None,
           side: bool | None = None) -> PgvectorSearch:
    """The search of Mem0's store ``pg`` (made on first use, with the config's bound and
    recall floor and whether the side table exists; a later call with them changes them)."""
    with _SEARCHES_LOCK:
        search = _SEARCHES.get(pg)
        if search is None:
            search = _SEARCHES[pg] = PgvectorSearch()
        if side is not None:
            search.side = side
        if exact_up_to is not None:
            search.exact_up_to = exact_up_to
        if min_recall is not None:
            search.min_recall = search.recall.floor = min_recall
        return search


def found_share(approximate: list[tuple[Any, ...]], exact: list[tuple[Any, ...]]) -> float:
    """The share of the exact ranking's top :data:`RECALL_TOP` that the HNSW-served
    search also returned in its top as many (rows are ordered by distance)."""
    truth = {row[0] for row in exact[:RECALL_TOP]}
    if not truth:
        return 1.0
    return len(truth & {row[0] for row in approximate[:len(truth)]}) / len(truth)


class RecallChecks:
    """How well HNSW-served searches find the true nearest rows, per scope (a key's filters),
    in this process: a scope's first :data:`RECALL_FIRST_CHECKS` such searches are checked
    against the exact ranking, then one in :data:`RECALL_CHECK_EVERY`; once there are that
    many checks, the mean of the last :data:`RECALL_CHECKS_KEPT` below ``floor`` makes the
    scope's searches exact for good (one warning per table)."""

    def __init__(self, floor: float):
        self.floor = floor
        self._scopes: collections.OrderedDict[str, _Recall] = collections.OrderedDict()
        self._lock = threading.Lock()
        self._warned = False

    def exact(self, scope: str) -> bool:
        with self._lock:
            recall = self._scopes.get(scope)
            return recall is not None and recall.exact

    def due(self, scope: str) -> bool:
        """Whether this HNSW-served search of ``scope`` is one to check."""
        with self._lock:
            recall = self._scopes.pop(scope, None) or _Recall()
            self._scopes[scope] = recall
            while len(self._scopes) > SCOPE_SIZES_KEPT:
                self._scopes.popitem(last=False)
            recall.served += 1
            return self.floor > 0 and (recall.served <= RECALL_FIRST_CHECKS
                                       or recall.served % RECALL_CHECK_EVERY == 0)

    def record(self, scope: str, found: float, pg: Any) -> None:
        with self._lock:
            recall = self._scopes.get(scope)
            if recall is None:
                return
            recall.found.append(found)
            if (recall.exact or len(recall.found) < RECALL_FIRST_CHECKS
                    or sum(recall.found) / len(recall.found) >= self.floor):
                return
            recall.exact = True
            mean = sum(recall.found) / len(recall.found)
            if self._warned:
                return
            self._warned = True
        _log.warning(
            "searches of a key of pgvector table %r through Mem0's HNSW index found %.0f%% of "
            "the true nearest %d rows in the last %d checks against the exact ranking, below "
            "the vector store config's '%s' (%g): from now on this process ranks that key's "
            "searches exactly (as any other key whose checks fall below it; logged once per "
            "table); set '%s' above your largest key's rows to skip the checks, or '%s' to 0 "
            "to keep HNSW", pg.collection_name, 100 * mean, RECALL_TOP, len(recall.found),
            pgvector_connection.MIN_RECALL, self.floor, pgvector_connection.EXACT_SEARCH_UP_TO,
            pgvector_connection.MIN_RECALL)


class _Recall:
    __slots__ = ("exact", "found", "served")

    def __init__(self) -> None:
        self.served = 0
        self.exact = False
        self.found: collections.deque[float] = collections.deque(maxlen=RECALL_CHECKS_KEPT)


class FilterSizes:
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


class KeywordScores:
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


@functools.lru_cache(maxsize=256)
def _lemmatized(lemmatize: Any, query: str) -> str:
    """Mem0's lemmatization of a query (with spaCy when installed: cached, as Mem0 has
    just lemmatized the same query itself)."""
    return str(lemmatize(query))


def _filter_key(filters: dict[str, Any] | None) -> str:
    return json.dumps(filters or {}, sort_keys=True, default=str)


@contextlib.contextmanager
def _autocommit(conn: Any) -> Iterator[None]:
    """Run the block's statements in autocommit when the connection is between
    transactions (it always is, fresh from the pool), and switch back after: psycopg2
    would open a transaction (``BEGIN``, a round trip) and the pool roll it back (another)."""
    idle = not conn.autocommit and conn.info.transaction_status == _TRANSACTION_IDLE
    if idle:
        conn.autocommit = True
    try:
        yield
    finally:
        if idle:
            conn.autocommit = False


def _fast_payloads(cur: Any) -> None:
    """Make ``cur`` (psycopg2) parse ``jsonb`` with :data:`_PAYLOAD_LOADS` (``orjson``: 60
    payloads took ~0.8 ms with ``json``, a quarter of that with ``orjson``)."""
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

_NO_SIDE_TABLE = {"42P01", "42703", "42809"}  # undefined table, column; wrong object type
_TRANSACTION_IDLE = 0  # psycopg2.extensions.TRANSACTION_STATUS_IDLE, pq.TransactionStatus.IDLE

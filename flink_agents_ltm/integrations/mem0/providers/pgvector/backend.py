"""pgvector: Mem0's ``pgvector`` store on a PostgreSQL server (see its ``store`` and
``connection``). Its psycopg2 pool raises instead of waiting when exhausted, so
calls are serialized (``serialized_store``); its ``insert`` is a plain ``INSERT``, so rows
are upserted here, chunk by chunk as the encoder delivers them."""

from __future__ import annotations

import contextlib
import functools
import itertools
import json
from collections.abc import Callable, Iterable, Sequence
from typing import Any, ClassVar

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
from flink_agents_ltm.integrations.mem0.providers.pgvector import search as pgvector_search
from flink_agents_ltm.integrations.mem0.providers.pgvector import (
    side_table as pgvector_side_table,
)
from flink_agents_ltm.integrations.mem0.providers.pgvector import store as pgvector_store
from flink_agents_ltm.integrations.mem0.providers.pgvector.search import Row, vector_text

import_mem0()
from mem0.configs.base import MemoryConfig  # noqa: E402


def _table(config: dict[str, Any]) -> str:
    """The store's table: the config's ``collection_name``, else Mem0's default."""
    from mem0.configs.vector_stores.pgvector import PGVectorConfig

    default = PGVectorConfig.model_fields["collection_name"].default
    return str(config.get("collection_name") or default)


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
        side = pgvector_store.prepare(vector_store, dimensions)
        pg = inner(vector_store)
        search = pgvector_search.attach(pg, connection.exact_search_up_to,
                                        connection.min_recall, side)
        pg.search = functools.partial(search.mem0_search, pg)
        pg.keyword_search = functools.partial(search.mem0_keyword_search,
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

    def own_settings(self, config: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        """``exact_search_up_to`` and ``min_recall`` are ours (checked here), not Mem0's."""
        own = {key: config[key] for key in pgvector_connection.SEARCH_KEYS if key in config}
        checked = pgvector_connection.PgvectorConnection.from_config(
            {**own, "connection_pool": object()})
        return ({key: value for key, value in config.items() if key not in own},
                {pgvector_connection.EXACT_SEARCH_UP_TO: checked.exact_search_up_to,
                 pgvector_connection.MIN_RECALL: checked.min_recall})

    def prepare(self, store: Any, dimensions: int,
                settings: dict[str, Any] | None = None) -> None:
        """Creates the table now (safe against other processes doing the same); a table
        of another dimension is refused by :meth:`stored_dimensions`' caller. The search
        takes the resource's ``settings`` (:meth:`own_settings`)."""
        side = None
        with contextlib.suppress(ValueError):  # the caller reports it with the store's words
            side = pgvector_store.prepare(store, dimensions)
        settings = settings or {}
        pgvector_search.attach(store, settings.get(pgvector_connection.EXACT_SEARCH_UP_TO),
                               settings.get(pgvector_connection.MIN_RECALL), side)

    def delete_collection(self, store: Any) -> None:
        """Mem0's ``delete_col``, and the side table with it."""
        store.delete_col()
        pgvector_side_table.drop(store)

    def search(self, store: Any, vector: list[float], k: int,
               filters: dict[str, Any] | None) -> list[Any]:
        """The search long-term memory runs too (:mod:`.search`): exact up to the config's
        ``exact_search_up_to``, through the side table for a key's scope, HNSW above it
        with the recall checks; ``k`` rows whenever the table has them."""
        return pgvector_search.attach(store).nearest(store, vector, k, filters)

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

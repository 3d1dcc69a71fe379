"""What differs between Mem0's vector stores beyond ``VectorStoreBase``.

Mem0's store interface covers one collection and leaves connections, counting,
listing collections and dimensions to each store (``list_cols`` returns a
response object from Qdrant, every public table from pgvector, the wrong folder
from FAISS). A :class:`Mem0Backend` fills those gaps per provider; stores we
have not tested get :class:`GenericBackend`, which relies only on the interface.

Embedded Qdrant admits one client per folder and process, and that client is
not thread-safe: every store on the same folder in this process shares one
client and one lock (:func:`shared_local_qdrant`).
"""

from __future__ import annotations

import contextlib
import logging
import threading
import warnings
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from flink_agents_ltm.integrations.mem0 import faiss_files, pgvector_store
from flink_agents_ltm.integrations.mem0.environment import import_mem0

import_mem0()
from mem0.vector_stores.base import VectorStoreBase  # noqa: E402

log = logging.getLogger(__name__)


def rows_of(listed: Any) -> list[Any]:
    """Mem0's ``list`` answers ``[rows]``, ``[[rows]]`` or ``(rows, next_page)``."""
    if isinstance(listed, tuple) or (isinstance(listed, list) and listed
                                     and isinstance(listed[0], list)):
        return list(listed[0] or [])
    return list(listed or [])


class Mem0Backend:
    """Defaults that rely on ``VectorStoreBase`` alone."""

    def connection_of(self, owner: VectorStoreBase) -> dict[str, Any]:
        """Config entries that let another collection reuse ``owner``'s connection."""
        return {}

    def collections(self, owner: VectorStoreBase) -> list[str]:
        return [str(getattr(c, "name", c)) for c in owner.list_cols()]

    def prepare(self, store: VectorStoreBase, dimensions: int) -> None:
        """Make sure the collection exists (``store`` was just made for it)."""

    def stored_dimensions(self, store: VectorStoreBase) -> int | None:
        """The vector length the collection holds, ``None`` when the store cannot say."""
        return None

    def count(self, store: VectorStoreBase) -> int | None:
        """The number of documents, ``None`` to count by listing."""
        return None

    def insert(self, store: VectorStoreBase, ids: list[str], vectors: list[list[float]],
               payloads: list[dict[str, Any]]) -> None:
        store.insert(vectors=vectors, payloads=payloads, ids=ids)

    def search(self, store: VectorStoreBase, vector: list[float], k: int,
               filters: dict[str, Any] | None) -> list[Any]:
        """The ``k`` nearest rows (fewer only when the store has no more)."""
        return list(store.search(query="", vectors=vector, top_k=k, filters=filters))

    def get_many(self, store: VectorStoreBase, ids: Sequence[str]) -> list[Any]:
        return [row for row in (store.get(vector_id=i) for i in ids)
                if row is not None and getattr(row, "id", None) is not None]

    def delete_many(self, store: VectorStoreBase, ids: Sequence[str]) -> None:
        for vector_id in ids:
            store.delete(vector_id=vector_id)

    def close(self, owner: VectorStoreBase) -> None:
        client = getattr(owner, "client", None)
        closer = getattr(client, "close", None)
        if callable(closer):
            closer()


# ------------------------------------------------------------------ Qdrant


@dataclass
class _LocalQdrant:
    client: Any
    lock: threading.RLock
    users: int = 0


_local_qdrants: dict[str, _LocalQdrant] = {}
_local_qdrants_lock = threading.Lock()


@contextlib.contextmanager
def _quiet_payload_indexes() -> Iterator[None]:
    """Mem0 asks any client it did not create for payload indexes; a local client
    warns that they have no effect."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*[Pp]ayload ind.*")
        yield


def shared_local_qdrant(path: str) -> tuple[Any, threading.RLock]:
    """The process's client (and lock) for the embedded Qdrant folder ``path``."""
    from qdrant_client import QdrantClient

    key = str(Path(path).expanduser().resolve())
    with _local_qdrants_lock:
        shared = _local_qdrants.get(key)
        if shared is None:
            Path(key).mkdir(mode=0o700, parents=True, exist_ok=True)
            try:
                client = QdrantClient(path=key)
            except RuntimeError as error:
                if "already accessed by another instance" in str(error):
                    raise RuntimeError(
                        f"the embedded Qdrant folder {key} is already open in another process "
                        "(or by long-term memory in this one); an embedded store serves one "
                        "client: use another path, or a Qdrant or pgvector server") from None
                raise
            shared = _LocalQdrant(client, threading.RLock())
            _local_qdrants[key] = shared
        shared.users += 1
        return shared.client, shared.lock


def release_local_qdrant(client: Any) -> None:
    with _local_qdrants_lock:
        for key, shared in list(_local_qdrants.items()):
            if shared.client is client:
                shared.users -= 1
                if shared.users == 0:
                    del _local_qdrants[key]
                    client.close()
                return


class QdrantBackend(Mem0Backend):
    def connection_of(self, owner: VectorStoreBase) -> dict[str, Any]:
        return {"client": owner.client}

    def collections(self, owner: VectorStoreBase) -> list[str]:
        return [c.name for c in owner.client.get_collections().collections]

    def stored_dimensions(self, store: VectorStoreBase) -> int | None:
        vectors = store.client.get_collection(store.collection_name).config.params.vectors
        if isinstance(vectors, dict):
            vectors = vectors.get("")
        return getattr(vectors, "size", None)

    def count(self, store: VectorStoreBase) -> int | None:
        return store.client.count(store.collection_name, exact=True).count

    def get_many(self, store: VectorStoreBase, ids: Sequence[str]) -> list[Any]:
        found = {str(r.id): r for r in store.client.retrieve(store.collection_name, ids=list(ids),
                                                             with_payload=True)}
        return [found[i] for i in ids if i in found]

    def delete_many(self, store: VectorStoreBase, ids: Sequence[str]) -> None:
        from qdrant_client.models import PointIdsList

        store.client.delete(store.collection_name, points_selector=PointIdsList(points=list(ids)))

    def close(self, owner: VectorStoreBase) -> None:
        owner.client.close()


# ------------------------------------------------------------------ pgvector


class PgVectorBackend(Mem0Backend):
    def connection_of(self, owner: VectorStoreBase) -> dict[str, Any]:
        return {"connection_pool": owner.connection_pool}

    def collections(self, owner: VectorStoreBase) -> list[str]:
        """Tables shaped like Mem0's (a ``vector`` column of type vector and a ``payload``),
        not every table of the schema."""
        with owner._get_cursor() as cur:
            cur.execute("SELECT c.table_name FROM information_schema.columns c "
                        "JOIN information_schema.columns p ON p.table_schema = c.table_schema "
                        "AND p.table_name = c.table_name AND p.column_name = 'payload' "
                        "WHERE c.table_schema = 'public' AND c.column_name = 'vector' "
                        "AND c.udt_name = 'vector'")
            return [row[0] for row in cur.fetchall()]

    def prepare(self, store: VectorStoreBase, dimensions: int) -> None:
        """Creates the table now (safe against other processes doing the same); a table
        of another dimension is refused by :meth:`stored_dimensions`' caller."""
        with contextlib.suppress(ValueError):  # the caller reports it with the store's words
            pgvector_store.prepare(store, dimensions)

    def search(self, store: VectorStoreBase, vector: list[float], k: int,
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
        from mem0.vector_stores.pgvector import _build_filter_conditions
        from psycopg2 import sql

        conditions, parameters = _build_filter_conditions(filters)
        where = sql.SQL("WHERE " + " AND ".join(conditions)) if conditions else sql.SQL("")
        table = sql.Identifier(store.collection_name)
        nearest = sql.SQL("SELECT id, vector <=> %s::vector AS distance, payload FROM {} {} "
                          "ORDER BY distance LIMIT %s").format(table, where)
        ef_search = sql.SQL("SET hnsw.iterative_scan = relaxed_order; SET hnsw.ef_search = {}; "
                            ).format(sql.Literal(min(max(k, 40), 1000)))
        literal = _vector_text(vector)
        store._ensure_collection()
        with store._get_cursor() as cur:
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
        found = [_Row(str(r[0]), r[2], max(0.0, 1.0 - float(r[1]))) for r in rows]
        return sorted(found, key=lambda row: -(row.score or 0.0))

    def insert(self, store: VectorStoreBase, ids: list[str], vectors: list[list[float]],
               payloads: list[dict[str, Any]]) -> None:
        """Mem0's insert, with vectors sent as text (see :func:`_vector_text`)."""
        from psycopg2 import sql
        from psycopg2.extras import Json, execute_values

        store._ensure_collection()
        rows = [(i, _vector_text(v), Json(p)) for i, v, p in zip(ids, vectors, payloads,
                                                                 strict=True)]
        with store._get_cursor(commit=True) as cur:
            execute_values(cur, sql.SQL("INSERT INTO {} (id, vector, payload) VALUES %s").format(
                sql.Identifier(store.collection_name)), rows)

    def stored_dimensions(self, store: VectorStoreBase) -> int | None:
        with store._get_cursor() as cur:
            cur.execute("SELECT atttypmod FROM pg_attribute WHERE attrelid = "
                        "to_regclass(quote_ident(%s)) AND attname = 'vector'",
                        (store.collection_name,))
            row = cur.fetchone()
        return row[0] if row is not None and row[0] > 0 else None

    def count(self, store: VectorStoreBase) -> int | None:
        return int(store.col_info()["count"])

    def get_many(self, store: VectorStoreBase, ids: Sequence[str]) -> list[Any]:
        from psycopg2 import sql

        with store._get_cursor() as cur:
            cur.execute(sql.SQL("SELECT id, payload FROM {} WHERE id = ANY(%s::uuid[])").format(
                sql.Identifier(store.collection_name)), (list(ids),))
            found = {str(row[0]): row for row in cur.fetchall()}
        return [_Row(i, found[i][1]) for i in ids if i in found]

    def delete_many(self, store: VectorStoreBase, ids: Sequence[str]) -> None:
        from psycopg2 import sql

        with store._get_cursor(commit=True) as cur:
            cur.execute(sql.SQL("DELETE FROM {} WHERE id = ANY(%s::uuid[])").format(
                sql.Identifier(store.collection_name)), (list(ids),))

    def close(self, owner: VectorStoreBase) -> None:
        pgvector_store.close(owner)


def _vector_text(vector: list[float]) -> str:
    """pgvector's text form of a vector: psycopg2 takes milliseconds to adapt a list of
    384 floats, the text is ready in microseconds."""
    return "[" + ",".join(map(repr, vector)) + "]"


class _Row(NamedTuple):
    """A row read from a store, shaped like Mem0's ``OutputData`` (made in C: a query
    makes one per hit). Its ``payload`` is read in place and never changed: for FAISS
    it is the docstore's own dict."""

    id: str
    payload: dict[str, Any]
    score: float | None = None


# ------------------------------------------------------------------ FAISS


class FaissBackend(Mem0Backend):
    """Mem0's FAISS keeps ``<path>/<collection>.faiss`` and ``.json`` per collection,
    saved whole and private, with an insert that a failed save undoes and a one-pass
    ``delete_many`` (:mod:`~flink_agents_ltm.integrations.mem0.faiss_files`)."""

    def prepare(self, store: VectorStoreBase, dimensions: int) -> None:
        faiss_files.save_safely(store)

    def collections(self, owner: VectorStoreBase) -> list[str]:
        return sorted(p.stem for p in Path(owner.path).glob("*.faiss"))

    def stored_dimensions(self, store: VectorStoreBase) -> int | None:
        return None if store.index is None else int(store.index.d)

    def count(self, store: VectorStoreBase) -> int | None:
        return 0 if store.index is None else len(store.docstore)

    def search(self, store: VectorStoreBase, vector: list[float], k: int,
               filters: dict[str, Any] | None) -> list[Any]:
        """Mem0's search (same index, same scores) without a pydantic object and a
        payload copy per row: a FAISS search takes a fraction of a millisecond, and a
        filtered query reads many more rows than it returns (FAISS gets no filter
        pushdown, see :mod:`.mem0_filters`). With a filter, Mem0's own search."""
        if filters is not None or store.index is None:
            return super().search(store, vector, k, filters)
        import faiss

        k = min(k, store.index.ntotal)
        if k == 0:
            return []
        query = np.array([vector], dtype=np.float32)
        if store._should_normalize():
            faiss.normalize_L2(query)
        distances, positions = store.index.search(query, k)
        euclidean = store.distance_strategy.lower() == "euclidean"
        rows: list[_Row] = []
        for distance, position in zip(distances[0].tolist(), positions[0].tolist(),
                                      strict=True):
            vector_id = store.index_to_id.get(position)
            payload = None if vector_id is None else store.docstore.get(vector_id)
            if payload is not None:
                rows.append(_Row(vector_id, payload,
                                 1.0 / (1.0 + distance) if euclidean else distance))
        return rows

    def get_many(self, store: VectorStoreBase, ids: Sequence[str]) -> list[Any]:
        return [_Row(i, store.docstore[i]) for i in ids if i in store.docstore]

    def delete_many(self, store: VectorStoreBase, ids: Sequence[str]) -> None:
        store.delete_many(list(ids))  # one pass, one save: faiss_files

    def close(self, owner: VectorStoreBase) -> None:
        """Nothing is held open: every write already saved the files."""


class GenericBackend(Mem0Backend):
    """Any other Mem0 store (Milvus, Elasticsearch, Chroma, ...), through its interface."""


def backend_for(provider: str) -> Mem0Backend:
    return {"qdrant": QdrantBackend, "pgvector": PgVectorBackend,
            "faiss": FaissBackend}.get(provider, GenericBackend)()

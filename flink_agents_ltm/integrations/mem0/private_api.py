"""Every use of Mem0's and qdrant-client's private members, in one file.

Long-term memory and the vector stores need a few things Mem0 and qdrant-client do not
offer publicly: Mem0's pgvector cursor and table bootstrap, its FAISS save and
normalization switch, its entity store and its table of config classes, qdrant-client's
local (embedded) client and its SQLite connection. The rest of the package calls the
functions here, never the members, so a Mem0 or qdrant-client upgrade that renames one
breaks here, with :class:`PrivateApiChangedError` naming the member and the installed
versions, instead of an ``AttributeError`` somewhere in a write (tests pin each member).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from importlib.metadata import PackageNotFoundError, version
from typing import Any

from flink_agents_ltm.api.errors import FlinkAgentsLtmError

__all__ = [
    "PrivateApiChangedError",
    "entity_store",
    "faiss_normalizes",
    "faiss_replace_save",
    "faiss_save",
    "pg_cursor",
    "pg_ensure_table",
    "pg_filter_conditions",
    "pg_forget_table",
    "pg_replace_cursor",
    "pg_table",
    "provider_config_classes",
    "qdrant_is_local",
    "qdrant_local_sqlite",
]


class PrivateApiChangedError(FlinkAgentsLtmError, RuntimeError):
    """A private member of Mem0 or qdrant-client that we rely on is gone (an upgrade)."""


def _versions() -> str:
    found = []
    for distribution in ("mem0ai", "qdrant-client"):
        try:
            found.append(f"{distribution} {version(distribution)}")
        except PackageNotFoundError:
            found.append(f"{distribution} not installed")
    return ", ".join(found)


def _member(owner: Any, name: str) -> Any:
    try:
        return getattr(owner, name)
    except AttributeError:
        kind = owner.__name__ if isinstance(owner, type) else type(owner).__name__
        raise PrivateApiChangedError(
            f"{kind} has no member {name!r} any more ({_versions()}); "
            "flink_agents_ltm/integrations/mem0/private_api.py must follow the upgrade"
        ) from None


# ------------------------------------------------------------- Mem0's Memory and configs


def entity_store(memory: Any) -> Any:
    """``Memory``'s store of entities (``infer=True``), ``None`` when it has none."""
    return _member(memory, "_entity_store")


def provider_config_classes() -> Mapping[str, str]:
    """Mem0's table of vector store providers and the names of their config classes."""
    from mem0.vector_stores.configs import VectorStoreConfig

    table: Mapping[str, str] = _member(_member(VectorStoreConfig, "_provider_configs"),
                                       "default")
    return table


# ------------------------------------------------------------- Mem0's pgvector store


def pg_cursor(pg: Any, commit: bool = False) -> Any:
    """``PGVector``'s cursor context manager (all its statements run through it)."""
    return _member(pg, "_get_cursor")(commit=commit)


def pg_replace_cursor(pg: Any, wrap: Callable[[Callable[..., Any]], Callable[..., Any]]) -> None:
    """Make ``pg``'s cursors come from ``wrap(original)``."""
    pg._get_cursor = wrap(_member(pg, "_get_cursor"))


def pg_ensure_table(pg: Any) -> None:
    """Create ``pg``'s table and index if this store has not done so yet."""
    _member(pg, "_ensure_collection")()


def pg_forget_table(pg: Any) -> None:
    """Make ``pg`` check its table again at the next :func:`pg_ensure_table`."""
    _member(pg, "_collection_ensured")
    pg._collection_ensured = False


def pg_table(pg: Any) -> Any:
    """The ``sql.Identifier`` of ``pg``'s table."""
    return _member(pg, "_col")()


def pg_filter_conditions(filters: Mapping[str, Any] | None) -> tuple[list[str], list[Any]]:
    """Mem0's pgvector ``WHERE`` conditions and parameters for its filter dict."""
    from mem0.vector_stores import pgvector

    conditions: tuple[list[str], list[Any]] = _member(pgvector, "_build_filter_conditions")(
        filters)
    return conditions


# ------------------------------------------------------------- Mem0's FAISS store


def faiss_replace_save(store: Any, save: Callable[[], None]) -> None:
    """Make ``store`` write its files with ``save``."""
    _member(store, "_save")
    store._save = save


def faiss_save(store: Any) -> None:
    _member(store, "_save")()


def faiss_normalizes(store: Any) -> bool:
    """Whether ``store`` normalizes vectors (cosine distance) before it searches."""
    return bool(_member(store, "_should_normalize")())


# ------------------------------------------------------------- qdrant-client


def _local(client: Any) -> Any:
    """qdrant-client's embedded engine behind ``client`` (``None`` for a server's)."""
    from qdrant_client.local.qdrant_local import QdrantLocal

    inner = getattr(client, "_client", None)
    return inner if isinstance(inner, QdrantLocal) else None


def qdrant_is_local(client: Any) -> bool:
    """Whether ``client`` is an embedded Qdrant (one folder, not thread-safe)."""
    return _local(client) is not None


def qdrant_local_sqlite(client: Any, collection: str) -> Any:
    """The SQLite connection embedded Qdrant keeps ``collection``'s points in, ``None``
    for a server or a collection in memory."""
    local = _local(client)
    found = getattr(local, "collections", {}).get(collection)
    return getattr(getattr(found, "storage", None), "storage", None)

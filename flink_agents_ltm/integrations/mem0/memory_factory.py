"""Build Mem0 ``Memory`` objects for jobs, one per store and process.

A Mem0 ``Memory`` owns its vector store client (its history database is replaced, see
``history``), so every operator subtask of a job that runs in this process shares one ``Memory``:
:func:`acquire_memory` hands out reference-counted shares and closes the client
with the last one. The default store (``embedded_store``, one SQLite file per
job) is shared by the processes of one machine; a server store (``pgvector``,
see ``pgvector_store``) by any number of processes and TaskManagers. An embedded
Qdrant folder, when configured, admits one process: a second one gets
:class:`EmbeddedStoreInUseError` instead of a corrupted store.
"""

from __future__ import annotations

import copy
import hashlib
import json
import logging
import re
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from flink_agents_ltm.api.redaction import redact, redact_text
from flink_agents_ltm.api.vector_stores import BaseVectorStore
from flink_agents_ltm.integrations.mem0 import (
    embedded_store,
    faiss_files,
    pgvector_connection,
    pgvector_store,
)
from flink_agents_ltm.integrations.mem0.environment import default_home, import_mem0
from flink_agents_ltm.integrations.mem0.history import without_history
from flink_agents_ltm.integrations.mem0.serialized_store import make_thread_safe
from flink_agents_ltm.integrations.vector_stores.mem0_adapter import mem0_vector_store_config

import_mem0()
from mem0 import Memory  # noqa: E402
from mem0.configs.base import MemoryConfig  # noqa: E402
from mem0.embeddings.configs import EmbedderConfig  # noqa: E402
from mem0.llms.configs import LlmConfig  # noqa: E402
from mem0.utils.factory import EmbedderFactory, LlmFactory  # noqa: E402
from mem0.vector_stores.configs import VectorStoreConfig  # noqa: E402
from pydantic import ValidationError  # noqa: E402

log = logging.getLogger(__name__)

COLLECTION = "flink_agents_ltm"
_LONGEST_FILE_NAME = 255  # bytes; the escaped name is ASCII
_PACKAGE = "flink_agents_ltm.integrations.mem0"
EMBEDDERS = {
    "minilm": (f"{_PACKAGE}.local_embedder.LocalMiniLmEmbedding", 384),
    "hashing": (f"{_PACKAGE}.hashing_embedder.HashingEmbedding", 384),
}
for _name, (_path, _dims) in EMBEDDERS.items():
    EmbedderFactory.provider_to_class[f"flink_agents_{_name}"] = _path
LlmFactory.register_provider("flink_agents_none", f"{_PACKAGE}.no_chat_model.NoChatModel")


class EmbeddedStoreInUseError(RuntimeError):
    """A configured embedded Qdrant folder is already open in another process."""


@dataclass(frozen=True)
class StoreSpec:
    """What a job's ``Memory`` is made of; equal specs share one ``Memory`` per process.

    ``vector_store`` is Mem0's own format (``{"provider": ..., "config": {...}}``),
    ``None`` for the embedded store under ``base_dir/<job>``. ``embedder`` names a
    built-in embedder (``"minilm"``, ``"hashing"``) or is a Mem0 ``EmbeddingBase``
    with ``config.embedding_dims`` set; ``llm`` a Mem0 ``LLMBase`` or ``None``.
    ``vector_store`` may also be a declared vector store of ours (a
    :class:`BaseVectorStore`, opened; the resource provider owns it).
    """

    job_id: str
    vector_store: Mapping[str, Any] | BaseVectorStore | None = None
    embedder: Any = "minilm"
    llm: Any = None
    base_dir: Path | None = None

    def __post_init__(self) -> None:  # a folder given as text is the same folder
        if self.base_dir is not None and not isinstance(self.base_dir, Path):
            object.__setattr__(self, "base_dir", Path(self.base_dir))

    def __repr__(self) -> str:  # the vector store config holds the password
        return (f"StoreSpec(job_id={self.job_id!r}, vector_store={redact(self.vector_store)!r}, "
                f"embedder={self.embedder!r}, llm={self.llm!r}, base_dir={self.base_dir!r})")

    def job_dir(self) -> Path:
        return (self.base_dir or default_home()) / _folder_name(self.job_id)

    def dimensions(self) -> int:
        if isinstance(self.embedder, str):
            if self.embedder not in EMBEDDERS:
                raise ValueError(f"unknown embedder '{self.embedder}'; built in: "
                                 f"{', '.join(EMBEDDERS)}")
            return EMBEDDERS[self.embedder][1]
        dims = getattr(getattr(self.embedder, "config", None), "embedding_dims", None)
        if not isinstance(dims, int) or dims <= 0:
            raise ValueError("the embedding model must declare config.embedding_dims")
        return dims

    def resolved_vector_store(self) -> dict[str, Any]:
        dims = self.dimensions()
        if isinstance(self.vector_store, BaseVectorStore):
            raise TypeError("a vector store resource is not a Mem0 config: build Mem0 on it "
                            "with mem0_vector_store_config")
        if self.vector_store is None:
            return {"provider": embedded_store.PROVIDER, "config": {
                "collection_name": COLLECTION, "embedding_model_dims": dims,
                "path": str(self.job_dir() / "vectors.sqlite3")}}
        store = copy.deepcopy(dict(self.vector_store))
        unknown = set(store) - {"provider", "config"}
        if unknown or not isinstance(store.get("provider"), str):
            raise ValueError('a vector store is given as {"provider": <name>, "config": {...}}; '
                             f"got keys {sorted(store)}")
        config = store.setdefault("config", {})
        if not isinstance(config, dict):
            raise ValueError("the vector store's 'config' must be a dict")
        declared = config.setdefault("embedding_model_dims", dims)
        if declared != dims:
            raise ValueError(f"vector store '{store['provider']}' is configured for {declared}-"
                             f"dimensional vectors but the embedding model produces {dims}")
        return store

    def identity(self) -> str:
        embedder = self.embedder if isinstance(self.embedder, str) else f"obj:{id(self.embedder)}"
        store = (f"resource:{id(self.vector_store)}"
                 if isinstance(self.vector_store, BaseVectorStore) else
                 self.resolved_vector_store())
        return json.dumps([store, embedder, id(self.llm)], sort_keys=True, default=str)


def private_dirs(folder: Path) -> None:
    """Create ``folder`` (and missing parents below the home) readable by us only: the
    embedded store holds every remembered text."""
    folder.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    folder.mkdir(mode=0o700, exist_ok=True)
    folder.chmod(0o700)


def private_files(folder: Path) -> None:
    """Make what a store created under ``folder`` private (0700 folders, 0600 files)."""
    for path in folder.rglob("*"):
        path.chmod(0o700 if path.is_dir() else 0o600)


def _folder_name(job_id: str) -> str:
    """The job id, escaped; one too long for a file name (255 bytes) is cut and ends in
    the hash of the whole id, so that every job keeps a folder of its own."""
    name = re.sub(r"[^A-Za-z0-9._-]", lambda m: f"%{ord(m.group()):02X}", job_id)
    if len(name) <= _LONGEST_FILE_NAME:
        return name
    digest = hashlib.sha256(job_id.encode("utf-8")).hexdigest()
    return f"{name[:_LONGEST_FILE_NAME - len(digest) - 1]}-{digest}"


@dataclass
class _Share:
    memory: Memory
    users: int


_shares: dict[str, _Share] = {}
_shares_lock = threading.Lock()


def acquire_memory(spec: StoreSpec) -> tuple[Memory, Callable[[], None]]:
    """A ``Memory`` for ``spec`` and the function that gives this share back."""
    identity = spec.identity()
    with _shares_lock:
        share = _shares.get(identity)
        if share is None:
            share = _Share(_build(spec), 0)
            _shares[identity] = share
        share.users += 1
    released = threading.Event()

    def release() -> None:
        if released.is_set():
            return
        released.set()
        with _shares_lock:
            share.users -= 1
            if share.users == 0:
                del _shares[identity]
                _close(share.memory)

    return share.memory, release


def _build(spec: StoreSpec) -> Memory:
    if isinstance(spec.vector_store, BaseVectorStore):
        return _build_on_resource(spec, spec.vector_store)
    started = time.monotonic()
    store = spec.resolved_vector_store()
    job_dir = spec.job_dir()
    private_dirs(job_dir)
    connection = None
    if store["provider"] == "pgvector":  # escaped credentials and timeouts: pgvector_connection
        pgvector_store.require_driver()
        connection = pgvector_connection.PgvectorConnection.from_config(store["config"])
    try:  # no history database on disk: see history.py
        if store["provider"] == embedded_store.PROVIDER:
            config = MemoryConfig(history_db_path=":memory:")
            config.vector_store = VectorStoreConfig.model_construct(
                provider=store["provider"],
                config=embedded_store.EmbeddedStoreConfig(**store["config"]))
        else:  # Mem0 validates the config as given (our timeout keys aside) ...
            config = MemoryConfig(vector_store=_without_our_keys(store), history_db_path=":memory:")
            if connection is not None:  # ... and gets the connection string built for it
                config = MemoryConfig(vector_store={**store, "config": connection.mem0_config(
                    store["config"])}, history_db_path=":memory:")
    except ValidationError as error:
        raise ValueError(f"invalid vector store configuration (provider "
                         f"'{store['provider']}', keys {sorted(store['config'])}): "
                         f"{_validation_errors(error)}") from None
    # A model object replaces Mem0's own below: build the cheap one meanwhile, not MiniLM.
    embedder = spec.embedder if isinstance(spec.embedder, str) else "hashing"
    config.embedder = EmbedderConfig.model_construct(
        provider=f"flink_agents_{embedder}", config={"embedding_dims": spec.dimensions()})
    config.llm = LlmConfig.model_construct(provider="flink_agents_none", config={"model": "none"})
    try:
        memory = Memory(config)
    except RuntimeError as error:
        if "already accessed by another instance" in str(error):
            raise EmbeddedStoreInUseError(
                f"the embedded Qdrant store in {store['config'].get('path')} is already open in "
                "another process. An embedded Qdrant folder serves one process: use the default "
                "embedded store (shared by the processes of one machine), run the job in thread "
                "mode (python.execution-mode: thread) or with parallelism 1, or use a server "
                "store such as pgvector for several TaskManagers."
            ) from None
        raise
    except Exception as error:
        if connection is not None and type(error).__name__ == "OperationalError":
            timeout = connection.explain(error)
            if timeout is not None:
                raise timeout from None
            raise ConnectionError(f"cannot connect to the pgvector store at {connection.target}: "
                                  f"{redact_text(str(error).strip())}") from None
        raise
    if connection is not None:
        connection.name_timeouts(memory.vector_store)
    without_history(memory)
    if not isinstance(spec.embedder, str):
        memory.embedding_model = spec.embedder
    if spec.llm is not None:
        memory.llm = spec.llm
    _check_collection_dimensions(memory, store, spec.dimensions())
    if store["provider"] == "faiss":
        faiss_files.save_safely(memory.vector_store)
    make_thread_safe(memory)
    private_files(job_dir)
    log.info("opened Mem0 for job '%s' on %s in %.1f s", spec.job_id,
             store["provider"], time.monotonic() - started)
    return memory


def _build_on_resource(spec: StoreSpec, store: BaseVectorStore) -> Memory:
    """Mem0 on a declared vector store of ours (see ``mem0_adapter``). The hook refuses a
    store of another dimension; the store keeps everything, so there is no folder of the
    job to make, and nothing to close here: the resource provider closes the store."""
    started = time.monotonic()
    config = MemoryConfig(history_db_path=":memory:")
    config.vector_store = mem0_vector_store_config(store, spec.dimensions())
    # a model object replaces the configured one below: configure one that loads nothing
    embedder = spec.embedder if isinstance(spec.embedder, str) else "hashing"
    config.embedder = EmbedderConfig.model_construct(
        provider=f"flink_agents_{embedder}", config={"embedding_dims": spec.dimensions()})
    config.llm = LlmConfig.model_construct(provider="flink_agents_none", config={"model": "none"})
    memory = Memory(config)
    without_history(memory)
    if not isinstance(spec.embedder, str):
        memory.embedding_model = spec.embedder
    if spec.llm is not None:
        memory.llm = spec.llm
    log.info("opened Mem0 for job '%s' on the vector store resource %r in %.1f s",
             spec.job_id, store, time.monotonic() - started)
    return memory


def _without_our_keys(store: dict[str, Any]) -> dict[str, Any]:
    if store["provider"] != "pgvector":
        return store
    return {**store, "config": pgvector_connection.without_timeouts(store["config"])}


def _validation_errors(error: ValidationError) -> str:
    """Pydantic's complaints without the input it echoes (the config holds the password)."""
    return "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}"
                     for e in error.errors(include_url=False, include_input=False,
                                           include_context=False))


def _check_collection_dimensions(memory: Memory, store: Mapping[str, Any], dims: int) -> None:
    if store["provider"] == "pgvector":
        try:
            pgvector_store.prepare(memory.vector_store, dims)
        except Exception:
            _close(memory)
            raise
        return
    if store["provider"] != "qdrant":
        return
    vs = memory.vector_store
    _overwrite_deleted_rows(vs)
    vectors = vs.client.get_collection(vs.collection_name).config.params.vectors
    size = getattr(vectors, "size", None)
    if size is not None and size != dims:
        _close(memory)
        raise ValueError(f"collection '{vs.collection_name}' holds {size}-dimensional vectors "
                         f"but the embedding model produces {dims}; use another collection or "
                         "base dir for this model")


def _overwrite_deleted_rows(vs: Any) -> None:
    """Embedded Qdrant keeps its points in SQLite, which leaves a deleted row's bytes (the
    remembered text) in free pages; ``secure_delete`` makes SQLite overwrite them, so a
    deleted item's text leaves the disk with it. Reaches into qdrant-client's local
    persistence: a test fails loudly if an upgrade moves it."""
    local = getattr(vs.client, "_client", None)
    collection = getattr(local, "collections", {}).get(vs.collection_name)
    storage = getattr(getattr(collection, "storage", None), "storage", None)
    if storage is not None:
        storage.execute("PRAGMA secure_delete = ON")


def _close(memory: Memory) -> None:
    memory.close()
    if isinstance(memory.vector_store, embedded_store.EmbeddedVectorStore):
        for store in (memory.vector_store, memory._entity_store):
            if store is not None:
                store.close()
        return
    if type(getattr(memory.vector_store, "inner", memory.vector_store)).__name__ == "PGVector":
        pgvector_store.close(memory.vector_store)
        return
    client = getattr(memory.vector_store, "client", None)
    if client is not None and hasattr(client, "close"):
        client.close()

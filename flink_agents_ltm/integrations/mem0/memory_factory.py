"""Build Mem0 ``Memory`` objects for jobs, one per store and process.

A Mem0 ``Memory`` owns its vector store client (its history database is replaced, see
``history``), so every operator subtask of a job that runs in this process shares one ``Memory``:
:func:`acquire_memory` hands out reference-counted shares and closes the client
with the last one. The default store (``providers/embedded``, one SQLite file per
job) is shared by the processes of one machine; a server store (``pgvector``,
see ``providers/pgvector``) by any number of processes and TaskManagers. An embedded
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

from flink_agents_ltm.api.configuration import ConfigurationError
from flink_agents_ltm.api.home import home
from flink_agents_ltm.api.redaction import redact
from flink_agents_ltm.api.vector_stores import BaseVectorStore
from flink_agents_ltm.integrations.mem0.environment import import_mem0
from flink_agents_ltm.integrations.mem0.history import without_history
from flink_agents_ltm.integrations.mem0.providers import StoreBackend, backend_for
from flink_agents_ltm.integrations.mem0.providers.embedded import store as embedded_store
from flink_agents_ltm.integrations.mem0.providers.qdrant.backend import EmbeddedStoreInUseError
from flink_agents_ltm.integrations.mem0.resource_store import mem0_vector_store_config
from flink_agents_ltm.integrations.mem0.serialized_store import make_thread_safe

import_mem0()
from mem0 import Memory  # noqa: E402
from mem0.configs.base import MemoryConfig  # noqa: E402
from mem0.embeddings.configs import EmbedderConfig  # noqa: E402
from mem0.llms.configs import LlmConfig  # noqa: E402
from mem0.utils.factory import EmbedderFactory, LlmFactory  # noqa: E402
from pydantic import ValidationError  # noqa: E402

__all__ = ["COLLECTION", "EMBEDDERS", "EmbeddedStoreInUseError", "StoreSpec", "acquire_memory",
           "private_dirs", "private_files"]

log = logging.getLogger(__name__)
# Mem0 tries spaCy (not a dependency) for its keyword lemmas and logs a WARNING per process
# when it is not installed, then goes on without it: nothing for a user to do, so only its
# errors show. The level of that one logger of Mem0's; no other logger, nor warnings filter.
SPACY_LOGGER = "mem0.utils.spacy_models"
logging.getLogger(SPACY_LOGGER).setLevel(logging.ERROR)

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
        return home(self.base_dir) / _folder_name(self.job_id)

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
    """Mem0 on the spec's store: every step that depends on the provider is its backend's."""
    if isinstance(spec.vector_store, BaseVectorStore):
        return _build_on_resource(spec, spec.vector_store)
    started = time.monotonic()
    store = spec.resolved_vector_store()
    backend = backend_for(store["provider"])
    job_dir = spec.job_dir()
    private_dirs(job_dir)
    connection = backend.connect(store["config"])
    config = _memory_config(backend, store, connection)
    _configure_models(config, spec)
    memory = _open(backend, config, store, connection)
    _use_models(memory, spec)
    _ready_store(backend, memory, connection, spec.dimensions())
    make_thread_safe(memory)
    private_files(job_dir)
    log.info("opened Mem0 for job '%s' on %s in %.1f s", spec.job_id,
             store["provider"], time.monotonic() - started)
    return memory


def _memory_config(backend: StoreBackend, store: dict[str, Any], connection: Any
                   ) -> MemoryConfig:
    """Mem0's config for the store (no history database on disk: see history.py)."""
    try:
        return backend.memory_config(store, connection)
    except ValidationError as error:
        raise ConfigurationError(f"invalid vector store configuration (provider "
                         f"'{store['provider']}', keys {sorted(store['config'])}): "
                         f"{_validation_errors(error)}") from None


def _configure_models(config: MemoryConfig, spec: StoreSpec) -> None:
    """Our embedder and no chat model; a model object replaces them after Mem0 is built
    (:func:`_use_models`), so configure the cheap embedder meanwhile, not MiniLM."""
    embedder = spec.embedder if isinstance(spec.embedder, str) else "hashing"
    config.embedder = EmbedderConfig.model_construct(
        provider=f"flink_agents_{embedder}", config={"embedding_dims": spec.dimensions()})
    config.llm = LlmConfig.model_construct(provider="flink_agents_none", config={"model": "none"})


def _open(backend: StoreBackend, config: MemoryConfig, store: dict[str, Any],
          connection: Any) -> Memory:
    """``Memory(config)``, with the backend's clear error for a failure it knows."""
    try:
        return Memory(config)
    except Exception as error:
        clear = backend.open_error(error, store, connection)
        if clear is None:
            raise
        raise clear from None


def _use_models(memory: Memory, spec: StoreSpec) -> None:
    """No history; the spec's model objects in place of the configured ones."""
    without_history(memory)
    if not isinstance(spec.embedder, str):
        memory.embedding_model = spec.embedder
    if spec.llm is not None:
        memory.llm = spec.llm


def _ready_store(backend: StoreBackend, memory: Memory, connection: Any, dims: int) -> None:
    """The backend readies the store Mem0 opened and checks its dimensions; Mem0 is
    closed again when it refuses."""
    try:
        backend.opened(memory.vector_store, connection, dims)
    except Exception:
        _close(memory)
        raise


def _build_on_resource(spec: StoreSpec, store: BaseVectorStore) -> Memory:
    """Mem0 on a declared vector store of ours (see ``resource_store``). The hook refuses a
    store of another dimension; the store keeps everything, so there is no folder of the
    job to make, and nothing to close here: the resource provider closes the store."""
    started = time.monotonic()
    config = MemoryConfig(history_db_path=":memory:")
    config.vector_store = mem0_vector_store_config(store, spec.dimensions())
    _configure_models(config, spec)
    memory = Memory(config)
    _use_models(memory, spec)
    log.info("opened Mem0 for job '%s' on the vector store resource %r in %.1f s",
             spec.job_id, store, time.monotonic() - started)
    return memory


def _validation_errors(error: ValidationError) -> str:
    """Pydantic's complaints without the input it echoes (the config holds the password)."""
    return "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}"
                     for e in error.errors(include_url=False, include_input=False,
                                           include_context=False))


def _close(memory: Memory) -> None:
    memory.close()
    backend_for(memory.config.vector_store.provider).close_memory(memory)

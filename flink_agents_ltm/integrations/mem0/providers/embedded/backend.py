"""The embedded default store (:mod:`~flink_agents_ltm.integrations.mem0.providers.embedded.store`):
thread-safe, upserting, deleting many ids in one transaction, and evaluating the whole
filter language itself."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

from flink_agents_ltm.api.filters import MetadataFilter, field_names, to_mem0
from flink_agents_ltm.integrations.mem0 import private_api
from flink_agents_ltm.integrations.mem0.environment import import_mem0
from flink_agents_ltm.integrations.mem0.providers.base import StoreBackend
from flink_agents_ltm.integrations.mem0.providers.embedded import file as embedded_file
from flink_agents_ltm.integrations.mem0.providers.embedded import store as embedded_store
from flink_agents_ltm.integrations.mem0.providers.filter_parts import NativeFilter
from flink_agents_ltm.integrations.mem0.resource_store import PROVIDER as RESOURCE_PROVIDER

import_mem0()
from mem0.configs.base import MemoryConfig  # noqa: E402
from mem0.vector_stores.configs import VectorStoreConfig  # noqa: E402


class WholeFilterBackend(StoreBackend):
    """A store of ours that evaluates the filter language itself: it gets all of a
    filter, unless the filter reads a reserved field, which the store holds but the
    caller's check does not see."""

    def upserts_on_insert(self, store: Any) -> bool:
        return True

    def native_filter(self, filter_: MetadataFilter, parts: list[MetadataFilter], *,
                      search: bool, reserved: frozenset[str]) -> NativeFilter:
        if field_names(filter_) & reserved:
            return super().native_filter(filter_, parts, search=search, reserved=reserved)
        everything = to_mem0(filter_)
        # Memory.search merges a top-level AND into the top level, where a second OR, NOT
        # or operator of one field overwrites the first; one level down it passes as is.
        return NativeFilter({"AND": [everything]} if search else everything, True)


class EmbeddedBackend(WholeFilterBackend):
    provider: ClassVar[str] = embedded_store.PROVIDER

    def memory_config(self, store: dict[str, Any], connection: Any) -> MemoryConfig:
        config = MemoryConfig(history_db_path=":memory:")
        config.vector_store = VectorStoreConfig.model_construct(
            provider=store["provider"],
            config=embedded_store.EmbeddedStoreConfig(**store["config"]))
        return config

    def close_memory(self, memory: Any) -> None:
        for store in (memory.vector_store, private_api.entity_store(memory)):
            if store is not None:
                store.close()

    def missing_job(self, config: dict[str, Any], job_id: str, where: str) -> str | None:
        """A job has a store when its folder under the base folder holds the store's file
        (the folders of the other jobs that have one are named, to catch a misspelling)."""
        file = Path(config["path"])
        if file.is_file():
            return None
        return (f"job {job_id!r} has no embedded store under {file.parent.parent} (no "
                f"{file.parent.name}/{file.name}); check --job-id and the base folder"
                f"{_jobs_in(file.parent.parent, file.name)}")

    def compactor(self, config: dict[str, Any]) -> Callable[[], None]:
        """``VACUUM`` of the job's file (see :func:`.file.vacuum`)."""
        file = config["path"]
        return lambda: embedded_file.vacuum(file)


def _jobs_in(base: Path, store_file: str) -> str:
    try:
        jobs = sorted(p.name for p in base.iterdir() if (p / store_file).is_file())
    except OSError:
        return ""
    if not jobs:
        return ""
    shown = ", ".join(jobs[:5]) + (f" and {len(jobs) - 5} more" if len(jobs) > 5 else "")
    return f" (stores there: {shown})"


class ResourceBackend(WholeFilterBackend):
    """A declared vector store of ours under Mem0 (:mod:`.resource_store`): the resource
    provider owns it, so nothing is closed here."""

    provider: ClassVar[str] = RESOURCE_PROVIDER

    def close(self, owner: Any) -> None:
        """The resource provider closes the store."""

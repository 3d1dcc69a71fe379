"""Long-term memory as agent authors see it: named memory sets of ``str`` items.

A :class:`MemorySet` is obtained inside an action with
``ctx.long_term_memory.get_memory_set(name)``. At that moment the long-term
memory stamps onto the set the partition key, observation id and suppression
flag of the action. Every item operation (``add``, ``get``, ``search``,
``delete``) takes its scope from the set, never from the memory's mutable
"current key", so a set handed to a worker thread
(``ctx.durable_execute_async``) stays on its own key while the operator runs
other keys' actions. A set therefore belongs to one action: obtain a new one
in each action instead of keeping it across actions.

Threading rules:

* ``get_memory_set`` / ``delete_memory_set`` read the key currently in scope,
  so they only run on the operator's mailbox thread (``MailboxThreadError``
  otherwise).
* ``add`` / ``get`` / ``search`` / ``delete`` run on any thread.

This module imports nothing from the runtime.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from flink_agents_ltm.api.configuration import ConfigOption

__all__ = [
    "BaseLongTermMemory",
    "EmptyPartitionKeyError",
    "LongTermMemoryError",
    "LongTermMemoryOptions",
    "MailboxThreadError",
    "MemorySet",
    "MemorySetItem",
    "UnboundMemorySetError",
]


class UnboundMemorySetError(ValueError):
    """The memory set carries no partition key (it was never bound to an action).

    Mem0 drops a missing ``agent_id`` from its filters, which would widen the
    operation to every key of the job, so the operation is refused instead.
    """


class EmptyPartitionKeyError(ValueError):
    """The partition key is the empty (or whitespace-only) string.

    ``""`` is a legal Flink key, but Mem0 cannot isolate it: an empty
    ``agent_id`` would widen the operation to every key of the job.
    """


class MailboxThreadError(RuntimeError):
    """A mailbox-only operation was called from another thread."""


class LongTermMemoryError(RuntimeError):
    """The memory backend failed during an operation; the message says what was undone."""


def _refused(operation: str, set_name: str | None) -> str:
    target = f"memory set '{set_name}'" if set_name is not None else "long-term memory"
    return f"{operation} on {target} refused: "


def unbound_message(operation: str, set_name: str | None) -> str:
    return _refused(operation, set_name) + (
        "no partition key is bound. A memory set is bound to the key of the action that "
        "obtained it; obtain it inside a keyed action with "
        "ctx.long_term_memory.get_memory_set(name) (after the operator switched context) "
        "instead of building, unpickling or keeping it across actions. Refusing rather than "
        "widening the operation to every key of the job."
    )


def empty_key_message(operation: str, set_name: str | None) -> str:
    return _refused(operation, set_name) + (
        "the partition key is empty or whitespace-only. Mem0 cannot isolate such a key (it "
        "would widen the operation to every key of the job), so long-term memory is not "
        "available for it. Key the stream on a non-empty value, for example map empty keys to "
        "a placeholder in the key selector."
    )


@dataclass(frozen=True, slots=True)
class MemorySetItem:
    """One stored ``str`` value with its metadata, as read back from a memory set.

    ``score`` is the similarity of a search hit (higher is closer) and ``None``
    for items read with ``get``.
    """

    memory_set_name: str
    id: str
    value: str
    metadata: Mapping[str, Any] = field(default_factory=dict)
    created_at: str | None = None
    updated_at: str | None = None
    score: float | None = None


class MemorySet(BaseModel):
    """A named collection of memory items, bound to the action that obtained it.

    Only ``name`` is serialized (pickle, ``model_dump``, JSON): the binding
    (``partition_key``, ``observation_id``, ``observation_suppressed``) and the
    back-reference to the long-term memory belong to one action, so a set
    restored from bytes is unbound and refuses every operation.
    """

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    name: str
    partition_key: str | None = Field(default=None, exclude=True)
    observation_id: str | None = Field(default=None, exclude=True)
    observation_suppressed: bool = Field(default=False, exclude=True)
    ltm: Any = Field(default=None, exclude=True, repr=False)

    def add(
        self,
        memory_items: str | Sequence[str],
        metadatas: Mapping[str, Any] | Sequence[Mapping[str, Any]] | None = None,
    ) -> list[str]:
        """Store items in this set; returns their ids. Any thread."""
        return self._memory("add").add(self, memory_items, metadatas)

    def get(
        self,
        ids: str | Sequence[str] | None = None,
        filters: Mapping[str, Any] | None = None,
        limit: int = 100,
    ) -> list[MemorySetItem]:
        """Items of this set by id (ids outside the set are not found), or all of them."""
        return self._memory("get").get(self, ids=ids, filters=filters, limit=limit)

    def search(
        self,
        query: str,
        limit: int = 10,
        filters: Mapping[str, Any] | None = None,
        **kwargs: Any,
    ) -> list[MemorySetItem]:
        """The items of this set most similar to ``query``, best first. Any thread."""
        return self._memory("search").search(self, query, limit=limit, filters=filters, **kwargs)

    def delete(self, ids: str | Sequence[str] | None = None) -> list[str]:
        """Delete items of this set by id, or all of them; returns the ids deleted."""
        return self._memory("delete").delete(self, ids=ids)

    def _memory(self, operation: str) -> BaseLongTermMemory:
        if self.ltm is None:
            raise UnboundMemorySetError(unbound_message(operation, self.name))
        return self.ltm

    def __reduce__(self):  # pickle carries only the name
        return (_restore_memory_set, (self.name,))

    def __copy__(self) -> MemorySet:
        return self  # frozen: a copy is the same binding

    def __deepcopy__(self, memo: dict[int, Any] | None = None) -> MemorySet:
        return self  # deep-copying the LTM back-reference would copy a whole store


def _restore_memory_set(name: str) -> MemorySet:
    return MemorySet(name=name)


class BaseLongTermMemory(ABC):
    """The long-term memory of one operator, shared by all of its keys.

    Memory-set management acts on the key currently in scope and is
    mailbox-thread only; item operations take every bit of scope from the set
    they are given and may run on any thread.
    """

    @abstractmethod
    def get_memory_set(self, name: str) -> MemorySet:
        """Get (or implicitly create) the set ``name`` of the key in scope, bound to
        the current action. Mailbox thread only."""

    @abstractmethod
    def delete_memory_set(self, name: str) -> bool:
        """Delete every item of set ``name`` of the key currently in scope.

        Mailbox thread only. Note it targets the *current* key, which may differ
        from the key bound to a same-named ``MemorySet`` obtained earlier;
        ``MemorySet.delete()`` deletes on the set's own key.
        Returns whether the set had any item.
        """

    @abstractmethod
    def add(
        self,
        memory_set: MemorySet,
        memory_items: str | Sequence[str],
        metadatas: Mapping[str, Any] | Sequence[Mapping[str, Any]] | None = None,
    ) -> list[str]:
        """Store ``str`` items; ``metadatas`` is one dict for all or one per item."""

    @abstractmethod
    def get(
        self,
        memory_set: MemorySet,
        ids: str | Sequence[str] | None = None,
        filters: Mapping[str, Any] | None = None,
        limit: int = 100,
    ) -> list[MemorySetItem]:
        """Items by id (only ids inside the set's scope are found), or up to ``limit``
        items matching ``filters``."""

    @abstractmethod
    def search(
        self,
        memory_set: MemorySet,
        query: str,
        limit: int = 10,
        filters: Mapping[str, Any] | None = None,
        **kwargs: Any,
    ) -> list[MemorySetItem]:
        """At most ``limit`` items most similar to ``query``, best first."""

    @abstractmethod
    def delete(
        self, memory_set: MemorySet, ids: str | Sequence[str] | None = None
    ) -> list[str]:
        """Delete items by id (ids outside the set's scope are never deleted), or all
        items of the set. Returns the ids deleted."""


class LongTermMemoryOptions:
    """Configuration of long-term memory, set through the agents' configuration."""

    CHAT_MODEL_SETUP = ConfigOption(
        "long-term-memory.chat-model-setup",
        str,
        None,
        "Name of a declared chat model setup that Mem0 uses to extract memories. "
        "Unset: items are stored as given (Mem0 infer=False).",
    )
    EMBEDDING_MODEL_SETUP = ConfigOption(
        "long-term-memory.embedding-model-setup",
        str,
        None,
        "Name of a declared embedding model setup. Unset: the local all-MiniLM-L6-v2 "
        "model shipped with the package (384 dimensions, offline).",
    )
    VECTOR_STORE = ConfigOption(
        "long-term-memory.vector-store",
        (dict, str),
        None,
        'A Mem0 vector store given inline ({"provider": ..., "config": {...}}) or the '
        "name of a declared vector store. Unset: an embedded Qdrant in a local folder "
        "(one process only; use a server store such as pgvector for several TaskManagers).",
    )
    BASE_DIR = ConfigOption(
        "long-term-memory.embedded.base-dir",
        str,
        None,
        "Folder holding one sub-folder per job for the embedded store and Mem0's history "
        "database. Unset: $FLINK_AGENTS_LTM_HOME, else ~/.flink-agents-ltm.",
    )
    INFER = ConfigOption(
        "long-term-memory.infer",
        bool,
        None,
        "Let Mem0's LLM extract memories from added items. Unset: on when a chat model is "
        "configured, off otherwise.",
    )
    MAX_ITEM_LENGTH = ConfigOption(
        "long-term-memory.max-item-length",
        int,
        32_768,
        "Largest item, in characters, that add() accepts.",
    )
    SEARCH_THRESHOLD = ConfigOption(
        "long-term-memory.search-threshold",
        float,
        0.0,
        "Lowest similarity a search hit may have (Mem0's threshold); per call: "
        "search(..., threshold=x).",
    )

    @classmethod
    def all(cls) -> tuple[ConfigOption, ...]:
        return tuple(v for v in vars(cls).values() if isinstance(v, ConfigOption))


"""Sensory and short-term memory: a tree of values in a Flink ``MapState``.

Each path (``"profile.name"``) is one map entry, holding a pickled value or an
object-node marker. An action works on a cache loaded from the state of its
key; the cache is written back when the action completes (:meth:`persist`)
and dropped when it fails, so a failed action leaves no trace and a
checkpoint never holds half an action. Every access runs the mailbox check:
keyed state belongs to the key Flink has set on the mailbox thread.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol

import cloudpickle

from flink_agents_ltm.api.runner_context import MemoryObject

OBJECT_NODE = _OBJECT = b"\x00object"  # marker of an object node; pickled values never equal it


class MemoryStore(Protocol):
    """What a :class:`KeyedMemoryObject` reads and writes: an action's cache over keyed
    state, or a read-through scope over one (a chat's, a subagent's)."""

    _what: str
    reads: list[tuple[str, bytes]] | None  # what the action read, when that is observed

    def entries(self) -> Mapping[str, Any]: ...

    def put(self, path: str, payload: bytes) -> None: ...

    def remove(self, path: str) -> None: ...


class KeyedMemoryStore:
    """The cache of one action over one ``MapState[str, bytes]``.

    ``writes`` / ``reads``: ``None`` unless the action's memory events are on
    (``agents.memory-events.*``, :mod:`~flink_agents_ltm.runtime.memory_access`); then
    the paths written or removed, and the (path, payload) of each value read, in order."""

    writes: list[str] | None = None
    reads: list[tuple[str, bytes]] | None = None

    def __init__(self, map_state: Any, mailbox_check: Callable[[], None], what: str):
        self._state = map_state
        self._check = mailbox_check
        self._what = what
        self._values: dict[str, bytes] | None = None
        self._written: set[str] = set()
        self._removed: set[str] = set()

    def entries(self) -> dict[str, bytes]:
        self._check()
        if self._values is None:
            self._values = dict(self._state.items())
        return self._values

    def put(self, path: str, payload: bytes) -> None:
        self.entries()[path] = payload
        self._written.add(path)
        self._removed.discard(path)
        if self.writes is not None:
            self.writes.append(path)

    def remove(self, path: str) -> None:
        if self.entries().pop(path, None) is not None:
            self._removed.add(path)
            self._written.discard(path)
            if self.writes is not None:
                self.writes.append(path)

    def persist(self) -> None:
        """Write this action's changes to the keyed state (mailbox thread, key in scope)."""
        self._check()
        if self._values is None:  # never loaded, so nothing was written or removed
            return
        for path in self._removed:
            self._state.remove(path)
        for path in self._written:
            self._state.put(path, self._values[path])
        self._written.clear()
        self._removed.clear()


class KeyedMemoryObject(MemoryObject):
    def __init__(self, store: MemoryStore, prefix: str = ""):
        self._store = store
        self._prefix = prefix

    def get(self, path: str, default: Any = None) -> Any:
        full = self._full(path)
        payload = self._store.entries().get(full)
        if payload is None:
            return default
        if payload == _OBJECT:
            return KeyedMemoryObject(self._store, full)
        reads = self._store.reads
        if reads is not None:
            reads.append((full, payload))
        return cloudpickle.loads(payload)  # a copy: mutating it changes nothing stored

    def set(self, path: str, value: Any) -> None:
        full = self._full(path)
        if isinstance(value, MemoryObject):
            raise TypeError(f"cannot store a MemoryObject at '{full}'; store plain values, or "
                            "use new_object() for a nested object")
        try:
            payload = cloudpickle.dumps(value)
        except Exception as error:
            raise TypeError(f"{self._store._what} value at '{full}' is not serializable "
                            f"({type(value).__name__}): {error}") from error
        self._make_parents(full)
        self._remove_tree(full)
        self._store.put(full, payload)

    def new_object(self, path: str, overwrite: bool = False) -> MemoryObject:
        full = self._full(path)
        if full in self._store.entries() and not overwrite:
            raise ValueError(f"'{full}' already exists in {self._store._what}; pass "
                             "overwrite=True to replace it")
        self._make_parents(full)
        self._remove_tree(full)
        self._store.put(full, _OBJECT)
        return KeyedMemoryObject(self._store, full)

    def is_exist(self, path: str) -> bool:
        return self._full(path) in self._store.entries()

    def get_field_names(self) -> list[str]:
        start = f"{self._prefix}." if self._prefix else ""
        return sorted(p[len(start):] for p in self._store.entries()
                      if p.startswith(start) and "." not in p[len(start):])

    def get_fields(self) -> dict[str, Any]:
        fields = {}
        for name in self.get_field_names():
            value = self.get(name)
            fields[name] = value.get_fields() if isinstance(value, KeyedMemoryObject) else value
        return fields

    def delete(self, path: str) -> bool:
        full = self._full(path)
        existed = full in self._store.entries()
        self._remove_tree(full)
        return existed

    def _full(self, path: str) -> str:
        if not isinstance(path, str) or not path or any(not p for p in path.split(".")):
            raise ValueError(f"memory path must be a non-empty dotted str like 'a.b', got "
                             f"{path!r}")
        return f"{self._prefix}.{path}" if self._prefix else path

    def _make_parents(self, full: str) -> None:
        entries = self._store.entries()
        parts = full.split(".")
        for depth in range(1, len(parts)):
            parent = ".".join(parts[:depth])
            payload = entries.get(parent)
            if payload is None:
                self._store.put(parent, _OBJECT)
            elif payload != _OBJECT:
                raise TypeError(f"cannot write '{full}' in {self._store._what}: '{parent}' "
                                "holds a value, not an object")

    def _remove_tree(self, full: str) -> None:
        below = f"{full}."
        for path in [p for p in self._store.entries() if p == full or p.startswith(below)]:
            self._store.remove(path)

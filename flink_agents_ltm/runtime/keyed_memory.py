"""Sensory and short-term memory: a tree of values in a Flink ``MapState``.

Each path (``"profile.name"``) is one map entry, holding a pickled value or an
object-node marker. An action works on a cache filled from the state of its
key as it reads (one entry at a time, the whole map only when it lists or
removes a subtree); the cache is written back when the action completes (:meth:`persist`)
and dropped when it fails, so a failed action leaves no trace and a
checkpoint never holds half an action. Every access runs the mailbox check:
keyed state belongs to the key Flink has set on the mailbox thread.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol

import cloudpickle

from flink_agents_ltm.api.runner_context import MemoryObject
from flink_agents_ltm.runtime.durable import dumps

OBJECT_NODE = _OBJECT = b"\x00object"  # marker of an object node; pickled values never equal it


class MemoryStore(Protocol):
    """What a :class:`KeyedMemoryObject` reads and writes: an action's cache over keyed
    state, or a read-through scope over one (a chat's, a subagent's)."""

    _what: str
    reads: list[tuple[str, bytes]] | None  # what the action read, when that is observed

    def lookup(self, path: str) -> Any: ...

    def contains(self, path: str) -> bool: ...

    def paths(self) -> list[str]: ...

    def subtree(self, path: str) -> list[str]: ...

    def entries(self) -> Mapping[str, Any]: ...

    def put(self, path: str, payload: bytes) -> None: ...

    def remove(self, path: str) -> None: ...


class KeyedMemoryStore:
    """The cache of one action over one layer of keyed state (a ``MapState[str, bytes]``
    seen through a run's pending writes).

    ``writes`` / ``reads``: ``None`` unless the action's memory events are on
    (``agents.memory-events.*``, :mod:`~flink_agents_ltm.runtime.memory_access`); then
    the paths written or removed, and the (path, payload) of each value read, in order.

    Reads are point reads (``layer.get``) until something needs the whole map (listing
    fields, removing an object's subtree): then the layer's entries are loaded once, under
    what this action already read and wrote. ``exact_tree``: the layer holds an entry under
    ``a.`` only while ``a`` is an object node (what :class:`KeyedMemoryObject` keeps), so a
    value or an absent entry has no subtree and ``set`` needs no scan; ``False`` with a state
    TTL, which expires an object node and its children one by one."""

    writes: list[str] | None = None
    reads: list[tuple[str, bytes]] | None = None

    def __init__(self, layer: Any, mailbox_check: Callable[[], None], what: str,
                 exact_tree: bool = True):
        self._state = layer
        self._check = mailbox_check
        self._what = what
        self._exact_tree = exact_tree
        self._known: dict[str, bytes | None] = {}  # read or written here (None: absent)
        self._complete = False  # _known holds every entry of the layer
        self._written: set[str] = set()
        self._removed: set[str] = set()

    def lookup(self, path: str) -> bytes | None:
        """The entry at ``path`` (``None``: absent)."""
        self._check()
        known = self._known
        if path in known:
            return known[path]
        if self._complete:
            return None
        payload = known[path] = self._state.get(path)
        return payload

    def contains(self, path: str) -> bool:
        return self.lookup(path) is not None

    def paths(self) -> list[str]:
        """Every path with an entry (the layer's entries are loaded once)."""
        self._check()
        known = self._known
        if not self._complete:
            for path, payload in self._state.items():
                if path not in known:
                    known[path] = payload
            self._complete = True
        return [path for path, payload in known.items() if payload is not None]

    def entries(self) -> dict[str, bytes]:
        """Every entry (loads the layer's entries once)."""
        return {path: self._known[path] for path in self.paths()}  # type: ignore[misc]

    def subtree(self, path: str) -> list[str]:
        """``path`` and the paths below it that have an entry."""
        payload = self.lookup(path)
        if self._exact_tree and not self._complete and payload != _OBJECT:
            return [] if payload is None else [path]
        below = f"{path}."
        return [p for p in self.paths() if p == path or p.startswith(below)]

    def put(self, path: str, payload: bytes) -> None:
        self._check()
        self._known[path] = payload
        self._written.add(path)
        self._removed.discard(path)
        if self.writes is not None:
            self.writes.append(path)

    def remove(self, path: str) -> None:
        if self.lookup(path) is not None:
            self._known[path] = None
            self._removed.add(path)
            self._written.discard(path)
            if self.writes is not None:
                self.writes.append(path)

    def persist(self) -> None:
        """Write this action's changes to the layer (mailbox thread, key in scope)."""
        if not self._written and not self._removed:
            return
        self._check()
        for path in self._removed:
            self._state.remove(path)
        for path in self._written:
            self._state.put(path, self._known[path])
        self._written.clear()
        self._removed.clear()


class KeyedMemoryObject(MemoryObject):
    def __init__(self, store: MemoryStore, prefix: str = ""):
        self._store = store
        self._prefix = prefix

    def get(self, path: str, default: Any = None) -> Any:
        full = self._full(path)
        payload = self._store.lookup(full)
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
            payload = dumps(value)
        except Exception as error:
            raise TypeError(f"{self._store._what} value at '{full}' is not serializable "
                            f"({type(value).__name__}): {error}") from error
        self._make_parents(full)
        self._remove_tree(full)
        self._store.put(full, payload)

    def new_object(self, path: str, overwrite: bool = False) -> MemoryObject:
        full = self._full(path)
        if self._store.contains(full) and not overwrite:
            raise ValueError(f"'{full}' already exists in {self._store._what}; pass "
                             "overwrite=True to replace it")
        self._make_parents(full)
        self._remove_tree(full)
        self._store.put(full, _OBJECT)
        return KeyedMemoryObject(self._store, full)

    def is_exist(self, path: str) -> bool:
        return self._store.contains(self._full(path))

    def get_field_names(self) -> list[str]:
        start = f"{self._prefix}." if self._prefix else ""
        return sorted(p[len(start):] for p in self._store.paths()
                      if p.startswith(start) and "." not in p[len(start):])

    def get_fields(self) -> dict[str, Any]:
        fields = {}
        for name in self.get_field_names():
            value = self.get(name)
            fields[name] = value.get_fields() if isinstance(value, KeyedMemoryObject) else value
        return fields

    def delete(self, path: str) -> bool:
        full = self._full(path)
        existed = self._store.contains(full)
        self._remove_tree(full)
        return existed

    def _full(self, path: str) -> str:
        # non-empty parts: no leading, trailing or doubled dot
        if not isinstance(path, str) or not path or path[0] == "." or path[-1] == "." \
                or ".." in path:
            raise ValueError(f"memory path must be a non-empty dotted str like 'a.b', got "
                             f"{path!r}")
        return f"{self._prefix}.{path}" if self._prefix else path

    def _make_parents(self, full: str) -> None:
        parts = full.split(".")
        for depth in range(1, len(parts)):
            parent = ".".join(parts[:depth])
            payload = self._store.lookup(parent)
            if payload is None:
                self._store.put(parent, _OBJECT)
            elif payload != _OBJECT:
                raise TypeError(f"cannot write '{full}' in {self._store._what}: '{parent}' "
                                "holds a value, not an object")

    def _remove_tree(self, full: str) -> None:
        for path in self._store.subtree(full):
            self._store.remove(path)

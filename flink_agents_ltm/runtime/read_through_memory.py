"""The memory scope of one ``ctx.chat`` call: reads through to the caller, writes stay here.

Why: the chat's child steps (model calls, tool calls) complete while the
calling action is still running. If they shared the caller's cache and
persisted it, a caller write not yet meant to be durable (a counter increment)
would reach keyed state early; a checkpoint taken while the caller then waits,
and a replay after recovery, would apply it twice.

So the scope keeps a local cache over the caller's store (the *parent*):

* the first read of a parent entry deep-copies it into the local cache; the
  parent's pending (unpersisted) writes are visible, nothing of the parent is
  flushed or changed;
* writes and removals are local, so later children of the same chat see them
  and the caller never does (nothing here writes to keyed state);
* :meth:`clear` hides the whole parent view; later local writes still count;
* a failing parent read or copy propagates: there is no fallback to sharing.

The reading and writing interface of
:class:`~flink_agents_ltm.runtime.keyed_memory.KeyedMemoryStore` (``lookup``, ``contains``,
``paths``, ``subtree``, ``put``, ``remove``; not ``persist``: it
never writes keyed state), so a ``KeyedMemoryObject`` works over either. Mailbox thread
only, like the parent (whose reads run the mailbox check).
"""

from __future__ import annotations

import copy
from collections.abc import Iterator, Mapping
from typing import Any

from flink_agents_ltm.runtime.keyed_memory import MemoryStore


class ReadThroughMemoryStore:
    reads: list[tuple[str, bytes]] | None = None  # a scope's reads raise no memory events

    def __init__(self, parent: MemoryStore):
        self._parent = parent
        self._what = f"{parent._what} (chat scope)"
        self._local: dict[str, Any] = {}
        self._hidden: set[str] = set()  # removed here: the parent's value is not seen
        self._cleared = False
        self._view = _View(self)

    def entries(self) -> Mapping[str, Any]:
        """The merged view: local entries over the parent's (copied on first read)."""
        return self._view

    def lookup(self, path: str) -> Any:
        """The entry at ``path`` (``None``: absent); a parent's entry is copied here on its
        first read."""
        if path in self._local:
            return self._local[path]
        if self._cleared or path in self._hidden:
            return None
        value = self._parent.lookup(path)
        if value is None:
            return None
        copied = copy.deepcopy(value)
        self._local[path] = copied
        return copied

    def contains(self, path: str) -> bool:
        return path in self._local or (
            not self._cleared and path not in self._hidden and self._parent.contains(path))

    def paths(self) -> list[str]:
        parent = [] if self._cleared else self._parent.paths()
        return [*self._local, *(p for p in parent
                                if p not in self._local and p not in self._hidden)]

    def subtree(self, path: str) -> list[str]:
        below = f"{path}."
        return [p for p in self.paths() if p == path or p.startswith(below)]

    def put(self, path: str, payload: Any) -> None:
        self._local[path] = payload
        self._hidden.discard(path)

    def remove(self, path: str) -> None:
        self._local.pop(path, None)
        self._hidden.add(path)

    def clear(self) -> None:
        """Forget local entries and stop seeing the parent's."""
        self._local.clear()
        self._hidden.clear()
        self._cleared = True


class _View(Mapping):
    def __init__(self, store: ReadThroughMemoryStore):
        self._store = store

    def __getitem__(self, path: str) -> Any:
        value = self._store.lookup(path)
        if value is None:
            raise KeyError(path)
        return value

    def __contains__(self, path: object) -> bool:
        return isinstance(path, str) and self._store.contains(path)

    def __iter__(self) -> Iterator[str]:
        yield from self._store.paths()

    def __len__(self) -> int:
        return len(self._store.paths())

"""Sensory and short-term memory as an action sees them: a tree of values under dotted
paths. Its own module so that tools (which see the calling action's memories) and the
runner context both name it without importing each other; ``api.runner_context``
re-exports it, where users import it from."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

__all__ = ["MemoryObject"]


class MemoryObject(ABC):
    """A tree of values addressed by dotted paths; an object node is itself a
    :class:`MemoryObject`."""

    @abstractmethod
    def get(self, path: str, default: Any = None) -> Any:
        """The value at ``path`` (a copy), a ``MemoryObject`` for an object
        node, or ``default``."""

    @abstractmethod
    def set(self, path: str, value: Any) -> None:
        """Store a copy of ``value`` at ``path``, creating parent objects."""

    @abstractmethod
    def new_object(self, path: str, overwrite: bool = False) -> MemoryObject:
        """Create an empty object node at ``path``."""

    @abstractmethod
    def is_exist(self, path: str) -> bool: ...

    @abstractmethod
    def get_field_names(self) -> list[str]:
        """Names of the direct children of this node."""

    @abstractmethod
    def get_fields(self) -> dict[str, Any]:
        """Direct children; object nodes appear as nested dicts."""

    @abstractmethod
    def delete(self, path: str) -> bool:
        """Remove ``path`` and everything under it; whether it existed."""

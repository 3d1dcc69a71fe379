"""Mem0 without a history database: deleted text must not survive anywhere.

Mem0 records every add, update and delete, with the full old and new text, in
a SQLite history database (``history.db``, created 0644), and keeps the recent
messages of each session there for its LLM. A deleted item's text therefore
stayed on disk after the item left the vector store. Long-term memory keeps no
history: the factory points Mem0 at an in-memory database and replaces it with
:class:`NoHistory`, which stores nothing. ``Memory.history(id)`` reads ``[]``,
and with ``infer=True`` Mem0's LLM gets no recent-message context beyond the
messages of the call.

Mem0 calls these methods on its ``db``; :data:`MEM0_HISTORY_METHODS` lists them
so that a test fails loudly when a Mem0 upgrade adds one.
"""

from __future__ import annotations

from typing import Any

MEM0_HISTORY_METHODS = frozenset({
    "add_history", "batch_add_history", "get_history", "save_messages", "get_last_messages",
    "reset", "close",
})


class NoHistory:
    """Stands in for Mem0's ``SQLiteManager``: every write is dropped, every read empty."""

    def add_history(self, *args: Any, **kwargs: Any) -> None:
        return None

    def batch_add_history(self, records: Any) -> None:
        return None

    def get_history(self, memory_id: str) -> list[dict[str, Any]]:
        return []

    def save_messages(self, messages: Any, session_scope: str) -> None:
        return None

    def get_last_messages(self, session_scope: str, limit: int = 10) -> list[dict[str, Any]]:
        return []

    def reset(self) -> None:
        return None

    def close(self) -> None:
        return None


def without_history(memory: Any) -> None:
    """Close a ``mem0.Memory``'s history database and put :class:`NoHistory` in its place."""
    db = getattr(memory, "db", None)
    if isinstance(db, NoHistory):
        return
    if db is not None:
        db.close()
    memory.db = NoHistory()

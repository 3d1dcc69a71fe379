"""How a memory set's binding becomes Mem0's ``user_id`` / ``agent_id`` / ``run_id``.

Job id -> ``user_id``, partition key -> ``agent_id``, set name -> ``run_id``. Mem0
strips surrounding whitespace from ids and refuses inner whitespace, which
would merge the keys ``"a"`` and ``" a"`` and refuse ``"John Smith"``. Ids are
therefore passed through :func:`mem0_id`: the identity on every text without
whitespace or ``%`` (the key reaches Mem0 as its own text), percent-encoding
those characters otherwise, which keeps distinct keys distinct.

Caller filters and metadata can never name a scope field: a filter on
``agent_id`` nested in an ``OR`` could otherwise widen a read to other keys.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

SCOPE_FIELDS = frozenset({"user_id", "agent_id", "run_id"})
# Fields Mem0 writes into every stored row; caller metadata must not overwrite them.
RESERVED_METADATA = SCOPE_FIELDS | {
    "actor_id", "role", "data", "hash", "created_at", "updated_at", "id",
    "text_lemmatized", "attributed_to", "expiration_date", "memory_type",
}
_NEEDS_ESCAPE = re.compile(r"[%\s]")


def mem0_id(text: str) -> str:
    return _NEEDS_ESCAPE.sub(lambda m: "".join(f"%{b:02X}" for b in m.group().encode()), text)


@dataclass(frozen=True, slots=True)
class Mem0Scope:
    user_id: str
    agent_id: str
    run_id: str

    def filters(self, extra: Mapping[str, Any] | None = None) -> dict[str, Any]:
        scoped = dict(extra) if extra else {}
        scoped.update(user_id=self.user_id, agent_id=self.agent_id, run_id=self.run_id)
        return scoped

    def owns(self, row: Mapping[str, Any] | None) -> bool:
        """The row provably lies in this scope (for lookups by id, which Mem0 does not scope)."""
        return (row is not None and row.get("user_id") == self.user_id
                and row.get("agent_id") == self.agent_id and row.get("run_id") == self.run_id)

    def admits(self, row: Mapping[str, Any]) -> bool:
        """A row of a scoped read names no other scope (a second line of defence behind the
        store's own filter, which already required these fields)."""
        return all(row.get(field, value) == value for field, value in
                   (("user_id", self.user_id), ("agent_id", self.agent_id),
                    ("run_id", self.run_id)))


def refuse_scope_fields(value: Any, what: str, path: str = "") -> None:
    """Raise ``ValueError`` if a filter tree or metadata names a scope field anywhere."""
    if isinstance(value, Mapping):
        for key, inner in value.items():
            if key in SCOPE_FIELDS:
                raise ValueError(
                    f"{what} may not set '{key}'{f' (at {path})' if path else ''}: the job id, "
                    "partition key and memory set name scope every operation and cannot be "
                    "overridden or widened")
            refuse_scope_fields(inner, what, f"{path}.{key}" if path else str(key))
    elif isinstance(value, (list, tuple)):
        for index, inner in enumerate(value):
            refuse_scope_fields(inner, what, f"{path}[{index}]")

"""How a memory scope becomes Mem0's ``user_id`` / ``agent_id`` / ``run_id``.

Job id -> ``user_id``, partition key -> ``agent_id``, set name -> ``run_id``.
Mem0 strips surrounding whitespace from ids and refuses inner whitespace,
which would merge the keys ``"a"`` and ``" a"`` and refuse ``"John Smith"``;
and every store Mem0 drives reads the value ``"*"`` as "any value", which
would turn the key ``"*"`` into a wildcard over every key (the row filter
behind it keeps foreign rows out, but they use up the limit and the key's own
rows go missing). Ids therefore pass through :func:`mem0_id`: the identity on
every text but those, percent-encoding whitespace, ``%`` and a lone ``*``
otherwise — one-to-one, so distinct keys stay distinct, and every other key
reaches Mem0 as its own text.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

_NEEDS_ESCAPE = re.compile(r"[%\s]")
WILDCARD = "*"


def mem0_id(text: str) -> str:
    if text == WILDCARD:
        return "%2A"
    return _NEEDS_ESCAPE.sub(lambda m: "".join(f"%{b:02X}" for b in m.group().encode()), text)


def text_of(mem0_text: str) -> str:
    """The key or set name behind a Mem0 id (the inverse of :func:`mem0_id`: every ``%``
    of the text was encoded, so decoding every escape gives it back)."""
    return unquote(mem0_text)


@dataclass(frozen=True, slots=True)
class Mem0Scope:
    user_id: str
    agent_id: str
    run_id: str | None  # None: every set of the key (erasure)

    def filters(self, extra: Mapping[str, Any] | None = None) -> dict[str, Any]:
        scoped = dict(extra) if extra else {}
        scoped.update(user_id=self.user_id, agent_id=self.agent_id)
        if self.run_id is not None:
            scoped["run_id"] = self.run_id
        return scoped

    def owns(self, row: Mapping[str, Any] | None) -> bool:
        """The row provably lies in this scope (for lookups by id, which Mem0 does not scope)."""
        return (row is not None and row.get("user_id") == self.user_id
                and row.get("agent_id") == self.agent_id
                and (self.run_id is None or row.get("run_id") == self.run_id))

    def admits(self, row: Mapping[str, Any]) -> bool:
        """A row of a scoped read names no other scope (a second line of defence behind the
        store's own filter, which already required these fields)."""
        return (row.get("user_id", self.user_id) == self.user_id
                and row.get("agent_id", self.agent_id) == self.agent_id
                and (self.run_id is None or row.get("run_id", self.run_id) == self.run_id))

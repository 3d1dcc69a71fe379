"""What an action-state store answers for a call (its own module: the stores import it, and
``store`` imports the SQLite store when a job names it, so neither imports the other)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Lookup:
    """What the store holds for a call: its name, and its pickled result (``None``: it
    was started and never returned)."""

    name: str
    result: bytes | None

"""The value objects an action-state store takes and answers (their own module: the
stores import them, and ``store`` imports the SQLite store when a job names it, so
neither imports the other)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class RunTag:
    """Which input a run's rows serve: the key's line of runs (``key@<incarnation>``,
    :mod:`~flink_agents_ltm.runtime.incarnation`), the run id the rows are under (its
    place ``<line>#<seq>``, or an alias when another input's rows hold that place), the
    run's place in the key's sequence, and the fingerprint of its input. ``has_rows``: the store
    may hold rows of the run written before a failure (``False``: a new run, whose calls
    need no lookup)."""

    key: str
    run: str
    seq: int
    fingerprint: str
    has_rows: bool = True


@dataclass(frozen=True)
class Lookup:
    """What the store holds for a call: its name, and its pickled result (``None``: it
    was started and never returned)."""

    name: str
    result: bytes | None

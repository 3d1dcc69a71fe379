"""The store protocol, and how a job names its store (``agents.action-state.store``).

A store keeps one row per durable call: ``(job, observation, position)`` → the
call's name, a token (one per start, so that a late result of an abandoned
attempt never lands on a later call), its pickled result once it returned, and a
*done mark* once its step ended. Only the engine reads results; nothing here logs
a result or an argument.

An observation is ``<run>#<step>``; a row also names the input it serves
(:class:`RunTag`: the key, the run, the run's place in the key's sequence and a
fingerprint of its input) and which process *claimed* the run. After a recovery
the inputs of a key may arrive in another order than before the failure (two
upstream subtasks interleave anew), so a run's place in the sequence does not say
which input it is: the engine finds a replayed input's rows by its fingerprint
(:meth:`ActionStateStore.runs_of`) and claims them, so that no other input reads
them.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from importlib.metadata import entry_points
from typing import Any, Protocol

from flink_agents_ltm.api.options import AgentsConfiguration
from flink_agents_ltm.runtime.action_state.lookup import Lookup, RunTag


class ActionStateStore(Protocol):
    """Thread-safe: started markers and results are written from the worker threads (at
    once, from as many threads as calls run), the rest from the mailbox thread."""

    def started(self, subtask: int, observation: str, position: str, name: str,
                token: str, tag: RunTag, claim: str, at: float) -> None:
        """Record that the call is about to run (replaces an earlier row of the position),
        for the input ``tag`` names, claimed by ``claim``, at wall-clock time ``at``."""

    def completed(self, observation: str, position: str, token: str, result: bytes) -> None:
        """Record the call's result, if the row is still this attempt's (``token``)."""


    def lookup(self, observation: str, position: str) -> Lookup | None: ...

    def run_state(self, run: str) -> tuple[str, str | None] | None:
        """``(fingerprint, claim)`` of the input whose rows are under ``run``, if any."""

    def runs_of(self, key: str, fingerprint: str, min_seq: int, owner: str) -> list[str]:
        """The runs of ``key`` at place ``min_seq`` or later whose rows serve an input with
        ``fingerprint`` and that ``owner`` did not claim, earliest place first."""

    def claim(self, run: str, owner: str) -> None:
        """The rows under ``run`` now serve ``owner``'s run of their input."""

    def steps_done(self, observations: Sequence[str], owner: str, mark: int,
                   at: float) -> None:
        """The steps ended (by wall-clock time ``at``): their rows become ``owner``'s,
        pruned by ``prune(owner, m)`` with ``m >= mark`` or by ``prune_older`` past ``at``.
        One statement for all of them where the store can."""

    def prune(self, owner: str, mark: int) -> int:
        """Drop ``owner``'s done rows with a mark at or below ``mark``; answers how many."""

    def prune_older(self, at: float) -> int:
        """Drop every done row whose step ended before ``at``; answers how many."""

    def prune_unfinished(self, at: float) -> int:
        """Drop every row whose step never ended and whose call started before ``at``
        (left by a run of the job that no restore took up); answers how many."""

    def has_rows(self, subtask: int, line_suffix: str) -> bool:
        """The subtask left rows of runs whose key's line (:attr:`RunTag.key`) ends with
        ``line_suffix`` (this run of the job's own: a JobManager failover restarts it at
        attempt 0, with calls to look up)."""

    def row_count(self) -> int: ...

    def close(self) -> None: ...


StoreFactory = Callable[[str, AgentsConfiguration], ActionStateStore]


def _sqlite(job_id: str, config: AgentsConfiguration) -> ActionStateStore:
    from flink_agents_ltm.runtime.action_state.sqlite import SqliteActionStateStore
    return SqliteActionStateStore.for_job(job_id, config)


_FACTORIES: dict[str, StoreFactory] = {"sqlite": _sqlite}
NONE = "none"
# Stores of integrations (``postgres``) and of other packages register under this group.
ENTRY_POINT_GROUP = "flink_agents_ltm.action_state_store"


def register_action_state_store(name: str, factory: StoreFactory) -> None:
    """Make ``agents.action-state.store=<name>`` build stores with ``factory(job_id,
    config)`` (an integration registers its own, e.g. a PostgreSQL store)."""
    if not name or name == NONE or ":" in name:
        raise ValueError(f"an action-state store name must be a plain non-empty word other "
                         f"than '{NONE}', got {name!r}")
    _FACTORIES[name] = factory


def open_action_state_store(name: str, job_id: str,
                            config: AgentsConfiguration) -> ActionStateStore | None:
    """The store ``name`` names (``None`` for ``none``): a registered name, an entry point
    of :data:`ENTRY_POINT_GROUP` (``postgres``), or ``module:callable``, called as
    ``callable(job_id, config)``."""
    if name == NONE:
        return None
    factory = _FACTORIES.get(name)
    if factory is None:
        found = entry_points(group=ENTRY_POINT_GROUP, name=name)
        if found:
            factory = next(iter(found)).load()
    if factory is None and ":" in name:
        module_name, _, attribute = name.partition(":")
        try:
            factory = getattr(importlib.import_module(module_name), attribute)
        except (ImportError, AttributeError) as error:
            raise ValueError(f"agents.action-state.store '{name}' cannot be loaded: "
                             f"{type(error).__name__}: {error}") from None
    if factory is None:
        installed = (entry.name for entry in entry_points(group=ENTRY_POINT_GROUP))
        known = ", ".join(sorted({NONE, *_FACTORIES, *installed}))
        raise ValueError(f"agents.action-state.store '{name}' is not a known store (known: "
                         f"{known}, or 'module:callable')")
    store: Any = factory(job_id, config)
    return store

"""The engine's side of the action-state store: write ahead, look up, mark done, prune.

One journal per operator subtask (per engine). ``checkpoints=True``: the host
reports checkpoints (``checkpoint_started`` at the snapshot, ``checkpoint_completed``
once it completed; the harness does, as a Java operator would); a step's rows are
marked with the next checkpoint's id and pruned when a checkpoint at least that
new completes. ``checkpoints=False`` (PyFlink's Python operator, which is told of
no checkpoint): rows are pruned ``retention_s`` after their step ended.

What the mailbox thread pays per input is kept small, since each store operation may be
a round trip to a server: a call's started marker and its result are written by the
worker thread that runs the call (just before and just after it, so the marker still
precedes any side effect); a new run (no rows of an earlier attempt) looks nothing up;
and the done marks of ended steps are written in batches (:data:`MARKS_BATCH` steps, or
the steps of :data:`MARKS_DELAY_S`), always before a snapshot and before a prune. A
mark not yet written when the process dies only delays the pruning of its rows: a
replayed step marks them again, and those of a step the restored checkpoint covers stay
until ``agents.action-state.unfinished-retention-ms`` after their call started (at most
one batch per failure).
"""

from __future__ import annotations

import hashlib
import logging
import time
import uuid
from collections.abc import Callable
from typing import Any

import cloudpickle

from flink_agents_ltm.api.options import AgentsConfiguration, AgentsOptions
from flink_agents_ltm.runtime.action_state.store import (
    ActionStateStore,
    RunTag,
    open_action_state_store,
)
from flink_agents_ltm.runtime.durable import NonDeterministicReplayError
from flink_agents_ltm.runtime.incarnation import LEGACY, run_line, run_place

MISSING = "missing"  # the store holds nothing for the call
STARTED = "started"  # started, never returned: a crash (or a kill) interrupted it
RESULT = "result"

log = logging.getLogger(__name__)

PRUNE_EVERY_S = 1.0  # retention mode: prune at most this often
MARKS_BATCH = 64  # done marks written in one statement at most this many steps apart
MARKS_DELAY_S = 0.2  # ... or this long after the first step of the batch ended


class ActionJournal:
    def __init__(self, store: ActionStateStore, subtask: int, *, checkpoints: bool,
                 retention_s: float, wall_clock: Callable[[], float] = time.time,
                 recovered: bool = True, incarnation: str = LEGACY,
                 unfinished_retention_s: float = 30 * 24 * 3600.0):
        self.store = store
        self._subtask = subtask
        self._incarnation = incarnation  # this run of the job's
        self._unfinished_retention_s = unfinished_retention_s
        self._owner = uuid.uuid4().hex  # this process's marks: a dead one's are not ours
        self._checkpoints = checkpoints
        self._retention_s = retention_s
        self._wall = wall_clock
        self._last_checkpoint = 0
        self._next_prune = 0.0
        # per key, the earliest place in its sequence run in this process: rows at earlier
        # places belong to inputs the restored checkpoint covers, never to a replay
        self._first_seq: dict[str, int] = {}
        # False: no row of this run of the job is left from an earlier attempt (rows of
        # another run serve keys restored from its state, in their own lines: looked up)
        self._recovered = recovered
        # done marks not yet written: (observation, mark), and when the first and the last
        # of those steps ended
        self._marks: list[tuple[str, int]] = []
        self._marks_first = 0.0
        self._marks_last = 0.0

    # ---- runs

    def run_of(self, key: str, incarnation: str, seq: int, fingerprint: str) -> RunTag:
        """The run whose rows serve the input (``fingerprint``) at place ``seq`` of ``key``'s
        line in ``incarnation``, claimed for this process. Its own place if its rows are
        there (the input arrived where it did before the failure) or nothing is; else the
        earliest unclaimed run of the same input in the line since the key's first run here
        (it arrived elsewhere before the failure); else a new run beside the other input's
        rows at its place. The store knows a run by its line (:attr:`RunTag.key`), so an
        input of another submission of the job never answers this one's."""
        line = run_line(key, incarnation)
        place = run_place(key, incarnation, seq)
        if incarnation == self._incarnation and not self._recovered:  # no row can be there
            return RunTag(line, place, seq, fingerprint, has_rows=False)
        min_seq = self._first_seq.setdefault(line, seq)
        state = self.store.run_state(place)
        if state is not None and state[0] == fingerprint and state[1] != self._owner:
            run = place  # where it was before the failure
        else:
            earlier = self.store.runs_of(line, fingerprint, min_seq, self._owner)
            if not earlier:  # a new input: its own place, or beside another input's rows
                return RunTag(line, place if state is None else f"{place}.{self._owner[:12]}",
                              seq, fingerprint, has_rows=False)
            run = earlier[0]
        self.store.claim(run, self._owner)  # rows of the failed attempt, now this run's
        return RunTag(line, run, seq, fingerprint)

    # ---- calls

    def replay(self, observation: str, position: str, name: str) -> tuple[str, Any]:
        """``(RESULT, value)``, ``(STARTED, None)`` or ``(MISSING, None)``."""
        found = self.store.lookup(observation, position)
        if found is None:
            return MISSING, None
        if found.name != name:
            raise NonDeterministicReplayError(
                f"durable call at {position} of this step was written ahead as {found.name}, "
                f"but the replayed action now calls {name}: after a restore an action must "
                "make the same durable calls in the same order as before the failure")
        if found.result is None:
            return STARTED, None
        return RESULT, cloudpickle.loads(found.result)

    def start(self, tag: RunTag, observation: str, position: str,
              name: str) -> tuple[str, Callable[[], None], Callable[[Any], None]]:
        """A call's write-ahead: its token, the writer of its started marker (called on
        the thread that runs the call, just before it) and the writer of its result
        (called on that thread once it returned, before the action goes on)."""
        token = uuid.uuid4().hex

        def write_started() -> None:
            self.store.started(self._subtask, observation, position, name, token, tag,
                               self._owner, self._wall())

        def write_result(result: Any) -> None:
            try:
                payload = cloudpickle.dumps(result)
            except Exception:  # noqa: BLE001 - the engine fails the call with a clear error
                return
            self.store.completed(observation, position, token, payload)

        return token, write_started, write_result

    # ---- steps and checkpoints

    def step_done(self, observation: str) -> None:
        """The step ended: its rows are marked done (in the next batch) with the next
        checkpoint's id, so that the checkpoint that covers the step prunes them."""
        now = self._wall()
        if self._marks and now - self._marks_first >= MARKS_DELAY_S:
            self.flush_marks()
        if not self._marks:
            self._marks_first = now
        self._marks.append((observation, self._last_checkpoint + 1))
        self._marks_last = now
        if len(self._marks) >= MARKS_BATCH:
            self.flush_marks()
        if not self._checkpoints and now >= self._next_prune:
            self._next_prune = now + PRUNE_EVERY_S
            self.flush_marks()
            self.store.prune_older(now - self._retention_s)
            self.store.prune_unfinished(now - self._unfinished_retention_s)

    def flush_marks(self) -> None:
        """Write the pending done marks, one statement per mark (almost always one); each
        row's done time is the end of the batch's last step (its rows stay at least the
        retention after their own step ended)."""
        marks, self._marks = self._marks, []
        by_mark: dict[int, list[str]] = {}
        for observation, mark in marks:
            by_mark.setdefault(mark, []).append(observation)
        for mark, observations in by_mark.items():
            self.store.steps_done(observations, self._owner, mark, self._marks_last)

    def checkpoint_started(self, checkpoint_id: int) -> None:
        self.flush_marks()  # the steps this snapshot covers are marked for its completion
        self._last_checkpoint = max(self._last_checkpoint, checkpoint_id)

    def checkpoint_completed(self, checkpoint_id: int) -> int:
        """Prune what the checkpoint covers (and what dead processes left long ago)."""
        self.flush_marks()
        now = self._wall()
        return (self.store.prune(self._owner, checkpoint_id)
                + self.store.prune_older(now - self._retention_s)
                + self.store.prune_unfinished(now - self._unfinished_retention_s))

    def restored(self, checkpoint_id: int) -> None:
        """The engine starts from checkpoint ``checkpoint_id``: later marks are newer."""
        self._last_checkpoint = max(self._last_checkpoint, checkpoint_id)

    def close(self) -> None:
        try:
            self.flush_marks()
        finally:
            self.store.close()


def open_journal(config: AgentsConfiguration, subtask: int, *, first_attempt: bool,
                 incarnation: str, checkpoints: bool = False) -> ActionJournal | None:
    """The journal ``agents.action-state.store`` asks for (``None`` when off), for the run
    of the job ``incarnation`` names.

    Rows are kept per run of the job (their lines, :mod:`~flink_agents_ltm.runtime.incarnation`),
    and whether this start restores a savepoint or checkpoint of an earlier run is not
    known here (``flink run -s`` does not tell the client): a key restored from an earlier
    run's state goes on in that run's line, and its runs look its rows up. A run of this
    job's own looks up only after a later attempt or when the subtask holds rows of this run
    (a JobManager failover restarts the job at attempt 0 from its last checkpoint). Rows of
    calls whose action never ended go ``agents.action-state.unfinished-retention-ms`` after
    their call started (no restore took them up)."""
    store = open_action_state_store(config.get(AgentsOptions.ACTION_STATE_STORE),
                                    config.get(AgentsOptions.JOB_ID), config)
    if store is None:
        return None
    unfinished_s = config.get(AgentsOptions.ACTION_STATE_UNFINISHED_RETENTION_MS) / 1000
    store.prune_unfinished(time.time() - unfinished_s)
    recovered = not first_attempt or store.has_rows(subtask, run_line("", incarnation))
    return ActionJournal(store, subtask, checkpoints=checkpoints,
                         retention_s=config.get(AgentsOptions.ACTION_STATE_RETENTION_MS) / 1000,
                         recovered=recovered, incarnation=incarnation,
                         unfinished_retention_s=unfinished_s)


def input_fingerprint(value: Any) -> str:
    """What identifies an input across a recovery: a digest of its pickled value."""
    try:
        payload = cloudpickle.dumps(value)
    except Exception:  # noqa: BLE001 - an input Flink delivered pickles; repr otherwise
        payload = repr(value).encode("utf-8", "replace")
    return hashlib.sha256(payload).hexdigest()[:32]


class StepJournal:
    """The journal seen by one step (step ``step`` of a run, whose :class:`RunTag`
    ``run_tag()`` finds on first use); ``used``: the step wrote or read a row, so its
    key keeps its input counter (observation ids are never reused while rows may answer
    them) and its rows are marked done when it ends."""

    def __init__(self, journal: ActionJournal, run_tag: Callable[[], RunTag], step: int):
        self._journal = journal
        self._run_tag = run_tag
        self._step = step
        self.used = False

    @property
    def observation(self) -> str:
        return f"{self._run_tag().run}#{self._step}"

    def replay(self, position: str, name: str) -> tuple[str, Any]:
        if not self._run_tag().has_rows:  # a new run: nothing of it was written before
            return MISSING, None
        state, value = self._journal.replay(self.observation, position, name)
        if state != MISSING:
            self.used = True
            # names and positions only: results and arguments stay out of logs
            log.info("durable call %s at %s of %s: %s", name, position, self.observation,
                     "its result written ahead answers it, without calling" if state == RESULT
                     else "started before a failure and never returned: it asks its "
                     "reconciler, if it has one, else runs again")
        return state, value

    def start(self, position: str,
              name: str) -> tuple[str, Callable[[], None], Callable[[Any], None]]:
        self.used = True
        return self._journal.start(self._run_tag(), self.observation, position, name)

    def done(self) -> None:
        if self.used:
            self._journal.step_done(self.observation)

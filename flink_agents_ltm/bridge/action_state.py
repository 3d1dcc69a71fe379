"""What Java's agent operator calls through Pemja for the action-state store.

A Java durable call is written ahead to the same store as a Python one, through the same
:class:`~flink_agents_ltm.runtime.action_state.journal.ActionJournal` (one rule per fact:
the stores, their rows, run tags and pruning are Python's only). Java's operator opens one
journal per subtask (:func:`open_action_state`) and drives it with plain values:

* on the mailbox thread: :func:`run_of` (the run whose rows serve an input), :func:`replay`
  (what the store holds for a call), :func:`start` (a call's write-ahead, answering a token),
  :func:`step_done`, and the checkpoint notices :func:`checkpoint_started`,
  :func:`checkpoint_completed` and :func:`restored`;
* on the thread that runs the call: :func:`started` (the marker, just before the call) and
  :func:`completed` (the result, just after it returned) or :func:`abandoned` (the call
  raised: its marker stays, so a replay asks the reconciler, as in Python).

Results are Java-serialized bytes, opaque here. Answers are the envelopes of
:mod:`~flink_agents_ltm.bridge.java_gateway` (``[result]`` or an error dict); nothing here
logs a result, an argument or a configuration value.
"""

from __future__ import annotations

import itertools
import json
import threading
from collections.abc import Callable, Mapping
from typing import Any

from flink_agents_ltm.api.flink_options import read_agent_options
from flink_agents_ltm.api.options import AgentsConfiguration, AgentsOptions
from flink_agents_ltm.bridge.java_gateway import _answer, _plain
from flink_agents_ltm.runtime.action_state.journal import ActionJournal, open_journal
from flink_agents_ltm.runtime.action_state.lookup import RunTag

__all__ = ["abandoned", "checkpoint_completed", "checkpoint_started", "close_action_state",
           "completed", "open_action_state", "replay", "restored", "run_of", "start",
           "started", "step_done"]

_journals: dict[str, JavaActionState] = {}
_lock = threading.Lock()
_handles = itertools.count(1)
SOURCE = "the Java agent's options (Flink configuration and withLongTermMemory's config)"


class JavaActionState:
    """One Java operator subtask's journal, and the write-ahead of its calls in flight."""

    def __init__(self, journal: ActionJournal):
        self.journal = journal
        self._calls: dict[str, tuple[Callable[[], None], Callable[[Any], None]]] = {}
        self._calls_lock = threading.Lock()

    def start(self, tag: RunTag, observation: str, position: str, name: str) -> str:
        token, write_started, write_result = self.journal.start(tag, observation, position,
                                                                name)
        with self._calls_lock:
            self._calls[token] = (write_started, write_result)
        return token

    def writers(self, token: str, *, last: bool) -> tuple[Callable[[], None],
                                                          Callable[[Any], None]]:
        with self._calls_lock:
            return self._calls.pop(token) if last else self._calls[token]


def _configuration(options: Mapping[str, Any] | None) -> AgentsConfiguration:
    """The options as text (Java hands everything over as Flink does: text; a vector store
    as JSON text), parsed by each option's type; unknown keys are refused."""
    text: dict[str, str] = {}
    for key, value in (_plain(options) or {}).items():
        value = _plain(value)
        text[str(key)] = json.dumps(value) if isinstance(value, (dict, list)) else str(value)
    config = AgentsConfiguration()
    read_agent_options(text, into=config, source=SOURCE)
    return config


def _journal(handle: str) -> JavaActionState:
    with _lock:
        found = _journals.get(handle)
    if found is None:
        raise LookupError(f"no open action-state store '{handle}' (it was closed)")
    return found


def open_action_state(options: Mapping[str, Any] | None, subtask: int, first_attempt: bool,
                      incarnation: str) -> Any:
    """``[handle]`` of the journal ``agents.action-state.store`` asks for, ``[None]`` when
    it is ``none``. The job id is ``agents.job-id`` (Java sets it to the long-term memory's
    job id). Checkpoints are reported (a Java operator is told of them)."""
    def call():
        config = _configuration(options)
        journal = open_journal(config, int(subtask), first_attempt=bool(first_attempt),
                               incarnation=str(incarnation), checkpoints=True)
        if journal is None:
            return None
        handle = f"action-state-{next(_handles)}"
        with _lock:
            _journals[handle] = JavaActionState(journal)
        return handle
    return _answer(call)


def store_name(options: Mapping[str, Any] | None) -> Any:
    """``[name]``: the store the options name (checks them as :func:`open_action_state` would,
    without opening anything): the client refuses a bad option before submitting."""
    return _answer(lambda: _configuration(options).get(AgentsOptions.ACTION_STATE_STORE))


def run_of(handle: str, key: str, incarnation: str, seq: int, fingerprint: str) -> Any:
    """``[[line, run, has_rows]]``: the run whose rows serve the input (fingerprint) at
    place ``seq`` of ``key``'s line, claimed for this process."""
    def call():
        tag = _journal(handle).journal.run_of(str(key), str(incarnation), int(seq),
                                              str(fingerprint))
        return [tag.key, tag.run, bool(tag.has_rows)]
    return _answer(call)


def replay(handle: str, observation: str, position: str, name: str) -> Any:
    """``[["result", bytes]]``, ``[["started", None]]`` or ``[["missing", None]]``; a call
    written ahead under another name fails (``NonDeterministicReplayError``)."""
    def call():
        state, value = _journal(handle).journal.replay(str(observation), str(position),
                                                      str(name))
        return [state, value]
    return _answer(call)


def start(handle: str, line: str, run: str, seq: int, fingerprint: str, observation: str,
          position: str, name: str) -> Any:
    """``[token]``: the call's write-ahead, its marker and result written by
    :func:`started` and :func:`completed` on the thread that runs it."""
    def call():
        tag = RunTag(str(line), str(run), int(seq), str(fingerprint))
        return _journal(handle).start(tag, str(observation), str(position), str(name))
    return _answer(call)


def started(handle: str, token: str) -> Any:
    """The call is about to run: its started marker is written (before any side effect)."""
    def call():
        write_started, _ = _journal(handle).writers(str(token), last=False)
        write_started()
    return _answer(call)


def completed(handle: str, token: str, result: bytes) -> Any:
    """The call returned: its (Java-serialized) result is written ahead."""
    def call():
        _, write_result = _journal(handle).writers(str(token), last=True)
        write_result(bytes(result))
    return _answer(call)


def abandoned(handle: str, token: str) -> Any:
    """The call raised (or never ran): its marker stays, nothing more is written."""
    def call():
        with _lock:
            found = _journals.get(handle)
        if found is not None:
            with found._calls_lock:
                found._calls.pop(str(token), None)
    return _answer(call)


def step_done(handle: str, observation: str) -> Any:
    return _answer(lambda: _journal(handle).journal.step_done(str(observation)))


def checkpoint_started(handle: str, checkpoint_id: int) -> Any:
    return _answer(lambda: _journal(handle).journal.checkpoint_started(int(checkpoint_id)))


def checkpoint_completed(handle: str, checkpoint_id: int) -> Any:
    """``[n]``: the rows the completed checkpoint let go."""
    return _answer(lambda: _journal(handle).journal.checkpoint_completed(int(checkpoint_id)))


def restored(handle: str, checkpoint_id: int) -> Any:
    return _answer(lambda: _journal(handle).journal.restored(int(checkpoint_id)))


def close_action_state(handle: str) -> Any:
    """Write the pending done marks and close the store; closing twice is a no-op."""
    def call():
        with _lock:
            found = _journals.pop(handle, None)
        if found is not None:
            found.journal.close()
        return found is not None
    return _answer(call)

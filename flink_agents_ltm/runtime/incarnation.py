"""Which run of a job a key's inputs belong to: the *incarnation* in every observation id.

A replay-stable item id derives from the observation id of the step that wrote it, and
the observation id from the key and the key's input counter (Flink keyed state). A new
submission of a job without its state (``flink run`` again, a stateless upgrade) starts
every counter at 0 again; were the id ``key#seq#step`` alone, the new run's items would
take the ids of the last run's and be upserted over them. So a key whose counter starts
in this submission names the submission too:

* the **submission** is named on the client, once per job: Flink's
  ``$internal.pipeline.job-id`` where the deployment fixes the job id (the Kubernetes
  operator does, keeping it for a last-state upgrade and renewing it otherwise), else a
  fresh UUID (:mod:`~flink_agents_ltm.api.submission`);
* the **incarnation** is a short digest of it (:func:`incarnation_of`);
* a key's **run place** is ``key@<incarnation>#<seq>`` (:func:`run_place`), its
  observation ids ``<place>#<step>``.

The incarnation is kept beside the key's counter (``agent-incarnation`` and the busy
record): a key restored from a checkpoint or a savepoint goes on under the incarnation
its counter was counted in, so a replayed input gets its earlier ids back, and a key
without state starts a new line under this submission's. Keys restored from state
written before incarnations existed have the *legacy* incarnation (:data:`LEGACY`),
whose places are ``key#seq`` as they were then.

The Java runtime (``runtime/agent/Incarnation.java``) follows the same rule, character
for character; a test checks the two against each other.
"""

from __future__ import annotations

import hashlib
from typing import Any

LEGACY = ""  # state written before incarnations existed: places are ``key#seq``
LENGTH = 16  # hex digits of the digest


def incarnation_of(submission: str) -> str:
    """The incarnation of the submission named ``submission``."""
    if not submission:
        raise ValueError("a job submission needs a non-empty name")
    return hashlib.sha256(submission.encode("utf-8")).hexdigest()[:LENGTH]


def run_line(key: Any, incarnation: str) -> str:
    """The key's line of runs in the incarnation: ``key@<incarnation>`` (legacy: ``key``)."""
    return f"{key}" if incarnation == LEGACY else f"{key}@{incarnation}"


def run_place(key: Any, incarnation: str, seq: int) -> str:
    """The place of input ``seq`` of ``key``: ``key@<incarnation>#<seq>``."""
    return f"{run_line(key, incarnation)}#{seq}"


def observation_id(key: Any, incarnation: str, seq: int, step: int) -> str:
    """The observation id of step ``step`` of input ``seq``: ``<place>#<step>``."""
    return f"{run_place(key, incarnation, seq)}#{step}"

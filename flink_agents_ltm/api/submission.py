"""A submission of a job: the name that tells this run of the job from the last one.

Long-term memory outlives a job's runs, so the ids of the items a run writes must not be
those of the last run's (see :mod:`~flink_agents_ltm.runtime.incarnation`). Flink does
not tell a Python operator which submission it belongs to, so the client names it once,
when the job is built (:meth:`JobSubmission.of`), and the operator carries it:

* Flink's ``$internal.pipeline.job-id`` when the deployment fixes the job id: the
  Kubernetes operator sets it, keeping it for a last-state upgrade (the job goes on
  from its HA checkpoint: the same submission) and renewing it for a stateless or
  savepoint upgrade; ``-D$internal.pipeline.job-id=<32 hex>`` on ``flink run`` does the same;
* a fresh UUID otherwise (each ``flink run`` or ``python job.py`` is a new submission).

``restore_path`` is Flink's ``execution.savepoint.path`` (``flink run -s``): the job
starts from that savepoint or retained checkpoint, so it goes on where that state left
off rather than starting afresh.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass

__all__ = ["JOB_ID_KEY", "RESTORE_PATH_KEY", "JobSubmission"]

JOB_ID_KEY = "$internal.pipeline.job-id"
RESTORE_PATH_KEY = "execution.savepoint.path"


@dataclass(frozen=True)
class JobSubmission:
    """``name``: what tells this submission from others; ``restore_path``: the savepoint
    or checkpoint it starts from (``None``: it starts without state)."""

    name: str
    restore_path: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.strip():
            raise ValueError(f"a job submission needs a non-empty name, got {self.name!r}")

    @classmethod
    def of(cls, flink_configuration: Mapping[str, str]) -> JobSubmission:
        """The submission Flink's configuration of the job describes."""
        job_id = (flink_configuration.get(JOB_ID_KEY) or "").strip()
        restore = (flink_configuration.get(RESTORE_PATH_KEY) or "").strip()
        return cls(job_id or uuid.uuid4().hex, restore or None)

    @classmethod
    def new(cls) -> JobSubmission:
        """A submission of its own (tests, the harness): a fresh UUID, no restore."""
        return cls(uuid.uuid4().hex)

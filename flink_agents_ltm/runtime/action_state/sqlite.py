"""The embedded action-state store: one SQLite file per job, on this machine.

The file is ``<home>/<job folder>/action-state.sqlite``, next to the job's
embedded vector store (home: ``long-term-memory.embedded.base-dir``, else
``$FLINK_AGENTS_LTM_HOME``, else ``~/.flink-agents-ltm``; the job folder is the
escaped job id). The folder is 0700, the file 0600. Write-ahead logging lets the
subtasks of a job (threads or Python processes of one machine) share it.
"""

from __future__ import annotations

import hashlib
import os
import re
import sqlite3
import threading
from pathlib import Path

from flink_agents_ltm.api.memory.long_term_memory import LongTermMemoryOptions
from flink_agents_ltm.api.options import AgentsConfiguration
from flink_agents_ltm.runtime.action_state.lookup import Lookup

FILE_NAME = "action-state.sqlite"
HOME_VARIABLE = "FLINK_AGENTS_LTM_HOME"
_LONGEST_FILE_NAME = 255

_SCHEMA = """
CREATE TABLE IF NOT EXISTS durable_calls (
    job TEXT NOT NULL,
    observation TEXT NOT NULL,
    position TEXT NOT NULL,
    subtask INTEGER NOT NULL,
    name TEXT NOT NULL,
    token TEXT NOT NULL,
    result BLOB,
    owner TEXT,
    done_mark INTEGER,
    done_at REAL,
    PRIMARY KEY (job, observation, position)
);
CREATE INDEX IF NOT EXISTS durable_calls_done ON durable_calls (job, owner, done_mark);
CREATE INDEX IF NOT EXISTS durable_calls_done_at ON durable_calls (job, done_at);
"""


def job_folder(job_id: str) -> str:
    """The job id as a folder name, escaped as the embedded vector store escapes it."""
    name = re.sub(r"[^A-Za-z0-9._-]", lambda m: f"%{ord(m.group()):02X}", job_id)
    if len(name) <= _LONGEST_FILE_NAME:
        return name
    digest = hashlib.sha256(job_id.encode("utf-8")).hexdigest()
    return f"{name[:_LONGEST_FILE_NAME - len(digest) - 1]}-{digest}"


def default_path(job_id: str, config: AgentsConfiguration) -> Path:
    base = config.get(LongTermMemoryOptions.BASE_DIR) or os.environ.get(HOME_VARIABLE)
    home = Path(base).expanduser() if base else Path.home() / ".flink-agents-ltm"
    return home / job_folder(job_id) / FILE_NAME


class SqliteActionStateStore:
    def __init__(self, path: Path, job_id: str):
        self.path = path
        self._job = job_id
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        os.chmod(path.parent, 0o700)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)  # sqlite keeps the file's mode
        os.close(fd)
        os.chmod(path, 0o600)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(path, timeout=30, isolation_level=None,
                                   check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")  # WAL: durable across process crashes
        self._db.executescript(_SCHEMA)

    @classmethod
    def for_job(cls, job_id: str, config: AgentsConfiguration) -> SqliteActionStateStore:
        return cls(default_path(job_id, config), job_id)

    def _run(self, sql: str, *params: object) -> sqlite3.Cursor:
        with self._lock:
            return self._db.execute(sql, params)

    def started(self, subtask: int, observation: str, position: str, name: str,
                token: str) -> None:
        self._run("INSERT OR REPLACE INTO durable_calls (job, observation, position, subtask, "
                  "name, token) VALUES (?, ?, ?, ?, ?, ?)",
                  self._job, observation, position, subtask, name, token)

    def completed(self, observation: str, position: str, token: str, result: bytes) -> None:
        self._run("UPDATE durable_calls SET result = ? WHERE job = ? AND observation = ? "
                  "AND position = ? AND token = ?", result, self._job, observation, position,
                  token)


    def lookup(self, observation: str, position: str) -> Lookup | None:
        row = self._run("SELECT name, result FROM durable_calls WHERE job = ? AND "
                        "observation = ? AND position = ?", self._job, observation,
                        position).fetchone()
        return None if row is None else Lookup(row[0], row[1])

    def step_done(self, observation: str, owner: str, mark: int, at: float) -> None:
        self._run("UPDATE durable_calls SET owner = ?, done_mark = ?, done_at = ? WHERE "
                  "job = ? AND observation = ?", owner, mark, at, self._job, observation)

    def prune(self, owner: str, mark: int) -> int:
        return self._run("DELETE FROM durable_calls WHERE job = ? AND owner = ? AND "
                         "done_mark <= ?", self._job, owner, mark).rowcount

    def prune_older(self, at: float) -> int:
        return self._run("DELETE FROM durable_calls WHERE job = ? AND done_at < ?",
                         self._job, at).rowcount

    def clear_subtask(self, subtask: int) -> int:
        return self._run("DELETE FROM durable_calls WHERE job = ? AND subtask = ?",
                         self._job, subtask).rowcount

    def row_count(self) -> int:
        return int(self._run("SELECT COUNT(*) FROM durable_calls WHERE job = ?",
                             self._job).fetchone()[0])

    def close(self) -> None:
        with self._lock:
            self._db.close()


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
import time
from collections.abc import Sequence
from pathlib import Path

from flink_agents_ltm.api.home import home
from flink_agents_ltm.api.options import AgentsConfiguration, LongTermMemoryOptions
from flink_agents_ltm.runtime.action_state.lookup import Lookup, RunTag

FILE_NAME = "action-state.sqlite"
_LONGEST_FILE_NAME = 255

# v2: rows name the input they serve (a file of v1 keeps its old table, unread)
TABLE = "durable_calls_v2"
_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS {TABLE} (
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
    input_key TEXT NOT NULL,
    run TEXT NOT NULL,
    seq INTEGER NOT NULL,
    fingerprint TEXT NOT NULL,
    claim TEXT,
    started_at REAL,
    PRIMARY KEY (job, observation, position)
);
CREATE INDEX IF NOT EXISTS {TABLE}_done ON {TABLE} (job, owner, done_mark);
CREATE INDEX IF NOT EXISTS {TABLE}_done_at ON {TABLE} (job, done_at);
CREATE INDEX IF NOT EXISTS {TABLE}_run ON {TABLE} (job, run);
CREATE INDEX IF NOT EXISTS {TABLE}_input ON {TABLE} (job, input_key, fingerprint, seq);
"""


def job_folder(job_id: str) -> str:
    """The job id as a folder name, escaped as the embedded vector store escapes it."""
    name = re.sub(r"[^A-Za-z0-9._-]", lambda m: f"%{ord(m.group()):02X}", job_id)
    if len(name) <= _LONGEST_FILE_NAME:
        return name
    digest = hashlib.sha256(job_id.encode("utf-8")).hexdigest()
    return f"{name[:_LONGEST_FILE_NAME - len(digest) - 1]}-{digest}"


def default_path(job_id: str, config: AgentsConfiguration) -> Path:
    return home(config.get(LongTermMemoryOptions.BASE_DIR)) / job_folder(job_id) / FILE_NAME


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
        columns = {row[1] for row in self._db.execute(f"PRAGMA table_info({TABLE})")}
        if "started_at" not in columns:  # a file of a build before started_at: its rows
            self._db.execute(f"ALTER TABLE {TABLE} ADD COLUMN started_at REAL")  # age from now
        self._db.execute(f"UPDATE {TABLE} SET started_at = ? WHERE started_at IS NULL",
                         (time.time(),))

    @classmethod
    def for_job(cls, job_id: str, config: AgentsConfiguration) -> SqliteActionStateStore:
        return cls(default_path(job_id, config), job_id)

    def _run(self, sql: str, *params: object) -> sqlite3.Cursor:
        with self._lock:
            return self._db.execute(sql, params)

    def started(self, subtask: int, observation: str, position: str, name: str,
                token: str, tag: RunTag, claim: str, at: float) -> None:
        self._run(f"INSERT OR REPLACE INTO {TABLE} (job, observation, position, subtask, "
                  "name, token, input_key, run, seq, fingerprint, claim, started_at) VALUES "
                  "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                  self._job, observation, position, subtask, name, token, tag.key, tag.run,
                  tag.seq, tag.fingerprint, claim, at)

    def completed(self, observation: str, position: str, token: str, result: bytes) -> None:
        self._run(f"UPDATE {TABLE} SET result = ? WHERE job = ? AND observation = ? "
                  "AND position = ? AND token = ?", result, self._job, observation, position,
                  token)


    def lookup(self, observation: str, position: str) -> Lookup | None:
        row = self._run(f"SELECT name, result FROM {TABLE} WHERE job = ? AND "
                        "observation = ? AND position = ?", self._job, observation,
                        position).fetchone()
        return None if row is None else Lookup(row[0], row[1])

    def run_state(self, run: str) -> tuple[str, str | None] | None:
        row = self._run(f"SELECT fingerprint, claim FROM {TABLE} WHERE job = ? AND run = ? "
                        "LIMIT 1", self._job, run).fetchone()
        return None if row is None else (row[0], row[1])

    def runs_of(self, key: str, fingerprint: str, min_seq: int, owner: str) -> list[str]:
        rows = self._run(f"SELECT run, MIN(seq) FROM {TABLE} WHERE job = ? AND input_key = ? "
                         "AND fingerprint = ? AND seq >= ? AND (claim IS NULL OR claim != ?) "
                         "GROUP BY run ORDER BY MIN(seq), run", self._job, key, fingerprint,
                         min_seq, owner).fetchall()
        return [row[0] for row in rows]

    def claim(self, run: str, owner: str) -> None:
        self._run(f"UPDATE {TABLE} SET claim = ? WHERE job = ? AND run = ?", owner, self._job,
                  run)

    def steps_done(self, observations: Sequence[str], owner: str, mark: int,
                   at: float) -> None:
        with self._lock, self._db:  # one transaction (autocommit otherwise)
            self._db.execute("BEGIN")
            self._db.executemany(f"UPDATE {TABLE} SET owner = ?, done_mark = ?, done_at = ? "
                                 "WHERE job = ? AND observation = ?",
                                 [(owner, mark, at, self._job, observation)
                                  for observation in observations])

    def prune(self, owner: str, mark: int) -> int:
        return self._run(f"DELETE FROM {TABLE} WHERE job = ? AND owner = ? AND "
                         "done_mark <= ?", self._job, owner, mark).rowcount

    def prune_older(self, at: float) -> int:
        return self._run(f"DELETE FROM {TABLE} WHERE job = ? AND done_at < ?",
                         self._job, at).rowcount

    def prune_unfinished(self, at: float) -> int:
        return self._run(f"DELETE FROM {TABLE} WHERE job = ? AND done_at IS NULL AND "
                         "started_at < ?", self._job, at).rowcount

    def has_rows(self, subtask: int, line_suffix: str) -> bool:
        return self._run(f"SELECT 1 FROM {TABLE} WHERE job = ? AND subtask = ? AND "
                         "substr(input_key, -?) = ? LIMIT 1", self._job, subtask,
                         len(line_suffix), line_suffix).fetchone() is not None

    def row_count(self) -> int:
        return int(self._run(f"SELECT COUNT(*) FROM {TABLE} WHERE job = ?",
                             self._job).fetchone()[0])

    def close(self) -> None:
        with self._lock:
            self._db.close()


"""An audit trail of long-term-memory operations that never holds what was remembered.

One JSON object per line, appended to a private file (0600, in a 0700 folder): the
operation, the job, the key, the memory set, the item ids, the observation id of the action
and the time, and for an erasure how many items went. Never the value, the query, the
metadata or a filter: the log answers "was key K erased, and when" without keeping what was
forgotten. Erasing a key's memory keeps the key's audit records, the erasure's own record
included; :meth:`MemoryAuditLog.erase_key` removes a key's records for the cases where even
its ids must go, and leaves one record of that removal naming the key only by its SHA-256.

Several processes of one machine may append to the same file: each record is one
``write`` under an exclusive ``flock`` of the file, and an appender reopens the file when an
erasure has replaced it, so no record is written into a file that is already gone
(:class:`~flink_agents_ltm.api.jsonl_file.JsonLinesFile`).

A long-term memory records through :func:`record_operation`, :func:`record_erasure` and
:func:`record_expired`: a log that cannot be written fails the operation's caller with a
:class:`~flink_agents_ltm.api.memory.errors.LongTermMemoryError` (the operation itself has
happened).
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from flink_agents_ltm.api.errors import FlinkAgentsLtmError
from flink_agents_ltm.api.jsonl_file import JsonLinesFile
from flink_agents_ltm.api.memory.errors import LongTermMemoryError
from flink_agents_ltm.api.memory.items import MemoryScope, SweptItem

#: Operations a record can name.
OPERATIONS = ("add", "get", "search", "update", "delete", "delete_memory_set", "erase_key",
              "erase_audit", "expire")
#: Operations recorded only when reads are audited.
READS = frozenset({"get", "search"})
#: The file's name inside the audit folder.
FILE_NAME = "memory-audit.jsonl"


class AuditLogError(FlinkAgentsLtmError, RuntimeError):
    """The audit log cannot be written or read (its file named, never its content)."""


class MemoryAuditLog:
    """The append-only audit file at ``path``; ``reads`` also records gets and searches.

    ``clock`` returns seconds since the epoch (a test passes a manual one)."""

    def __init__(self, path: str | os.PathLike[str], *, reads: bool = False,
                 clock: Any = time.time):
        self._path = Path(path).expanduser()
        self._reads = bool(reads)
        self._clock = clock
        self._file = JsonLinesFile(self._path, "the memory audit log", AuditLogError)

    @property
    def path(self) -> Path:
        return self._path

    @property
    def records_reads(self) -> bool:
        return self._reads

    def wants(self, operation: str) -> bool:
        """Whether ``operation`` is recorded by this log."""
        return self._reads or operation not in READS

    def record(self, operation: str, job_id: str, partition_key: str | None,
               set_name: str | None = None, ids: Sequence[str] = (),
               observation_id: str | None = None, count: int | None = None) -> None:
        """Append one record (nothing when ``operation`` is a read and reads are not
        audited). Raises :class:`AuditLogError` when the file cannot be written."""
        if operation not in OPERATIONS:
            raise ValueError(f"unknown audit operation {operation!r}; known: {OPERATIONS}")
        if not self.wants(operation):
            return
        entry: dict[str, Any] = {"time": self._now(), "op": operation, "job": job_id,
                                 "key": partition_key}
        if set_name is not None:
            entry["set"] = set_name
        entry["ids"] = list(ids)
        if observation_id:
            entry["observation_id"] = observation_id
        if count is not None:
            entry["count"] = count
        self._append([entry])

    def records(self, job_id: str | None = None,
                partition_key: str | None = None) -> list[dict[str, Any]]:
        """The records, oldest first, of ``job_id`` and ``partition_key`` when given."""
        if not self._path.exists():
            return []
        with self._locked(fcntl.LOCK_SH) as handle:
            lines = handle.read().splitlines()
        found = [json.loads(line) for line in lines if line.strip()]
        return [r for r in found if (job_id is None or r.get("job") == job_id)
                and (partition_key is None or r.get("key") == partition_key)]

    def erase_key(self, job_id: str, partition_key: str) -> int:
        """Remove every record of ``partition_key`` of ``job_id`` (ids included) from the
        file, rewritten in place of the old one, and append one ``erase_audit`` record that
        names the key by its SHA-256 only. Returns how many records were removed."""
        removed = 0
        with self._locked(fcntl.LOCK_EX) as handle:
            kept: list[str] = []
            for line in handle.read().splitlines():
                if not line.strip():
                    continue
                entry = json.loads(line)
                if entry.get("job") == job_id and entry.get("key") == partition_key:
                    removed += 1
                else:
                    kept.append(line)
            kept.append(json.dumps({
                "time": self._now(), "op": "erase_audit", "job": job_id, "key": None,
                "key_sha256": hashlib.sha256(partition_key.encode()).hexdigest(),
                "ids": [], "count": removed}, ensure_ascii=False))
            replacement = self._path.with_name(f".{self._path.name}.{os.getpid()}.tmp")
            descriptor = os.open(replacement, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            try:
                os.write(descriptor, ("\n".join(kept) + "\n").encode())
                os.fsync(descriptor)
            finally:
                os.close(descriptor)
            os.replace(replacement, self._path)  # appenders see the new inode and reopen
        return removed

    # ------------------------------------------------------------ internals

    def _now(self) -> str:
        moment = datetime.fromtimestamp(self._clock(), tz=UTC)
        return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")

    def _append(self, entries: list[dict[str, Any]]) -> None:
        self._file.append(entries)

    def _locked(self, mode: int, append: bool = False) -> Any:
        return self._file.locked(mode, append)


def record_operation(audit_log: MemoryAuditLog | None, operation: str, scope: MemoryScope,
                     ids: Sequence[str]) -> None:
    """Record an item operation of ``scope`` in ``audit_log`` (if any, and if it wants it)."""
    if audit_log is not None and audit_log.wants(operation):
        _audit_call(lambda: audit_log.record(operation, scope.job_id, scope.partition_key,
                                             scope.set_name, ids, scope.observation_id))


def record_erasure(audit_log: MemoryAuditLog | None, job_id: str, partition_key: str,
                   count: int) -> None:
    """Record that ``count`` items of ``partition_key`` were erased."""
    if audit_log is not None:
        _audit_call(lambda: audit_log.record("erase_key", job_id, partition_key, count=count))


def record_expired(audit_log: MemoryAuditLog | None, job_id: str,
                   swept: Sequence[SweptItem]) -> None:
    """Record a sweep: one ``expire`` record per set it swept items of."""
    if audit_log is None:
        return
    groups: dict[tuple[str, str], list[str]] = defaultdict(list)
    for item in swept:
        groups[(item.partition_key, item.set_name)].append(item.id)
    for (key, set_name), ids in groups.items():
        _audit_call(lambda k=key, n=set_name, i=ids: audit_log.record(  # type: ignore[misc]
            "expire", job_id, k, n, i))


def _audit_call(write: Callable[[], None]) -> None:
    """Write an audit record; a log that cannot be written fails the operation's caller
    with a :class:`LongTermMemoryError` (the store operation itself has happened)."""
    try:
        write()
    except AuditLogError as error:
        raise LongTermMemoryError(f"{error}; the operation itself was done") from None

"""The embedded store's file on disk: created private, vacuumed on demand, its pages'
unused space searched for copies of erased rows, and the schema migration of files
written before expiry existed."""

from __future__ import annotations

import mmap
import os
import sqlite3
from collections.abc import Sequence
from pathlib import Path

from flink_agents_ltm.api.memory.expiry import EXPIRES_AT

BUSY_TIMEOUT_MS = 60_000
EXPIRY_INDEX = ("CREATE INDEX IF NOT EXISTS vectors_expiry ON vectors (collection, expires_at) "
                "WHERE expires_at IS NOT NULL")


SCHEMA = """
CREATE TABLE IF NOT EXISTS collections (
    name TEXT PRIMARY KEY,
    dimensions INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS vectors (
    collection TEXT NOT NULL,
    user_id TEXT NOT NULL,
    agent_id TEXT NOT NULL,
    run_id TEXT NOT NULL,
    id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    vector BLOB NOT NULL,
    payload TEXT NOT NULL,
    expires_at REAL,
    PRIMARY KEY (collection, user_id, agent_id, run_id, id)
) WITHOUT ROWID;
CREATE UNIQUE INDEX IF NOT EXISTS vectors_id ON vectors (collection, id);
"""
# The payload's expires_at, a column so that SQL drops expired rows (no payload is parsed for
# it) and a sweep finds them by index; files written before it get it added (NULL: no expiry).


class WriteTransaction:
    """``BEGIN IMMEDIATE`` ... ``COMMIT`` (``ROLLBACK`` on error): a writer takes the file's
    write lock up front, so it waits (``busy_timeout``) instead of failing mid-way."""

    def __init__(self, conn: sqlite3.Connection):
        self.conn = conn

    def __enter__(self) -> sqlite3.Connection:
        self.conn.execute("BEGIN IMMEDIATE")
        return self.conn

    def __exit__(self, kind: type[BaseException] | None, *_: object) -> None:
        self.conn.execute("COMMIT" if kind is None else "ROLLBACK")


def add_expiry_column(conn: sqlite3.Connection) -> None:
    """Give a file written before expiry existed its column (and index); its rows have none."""
    columns = {row[1] for row in conn.execute("PRAGMA table_info(vectors)")}
    if EXPIRES_AT not in columns:
        try:
            conn.execute("ALTER TABLE vectors ADD COLUMN expires_at REAL")
        except sqlite3.OperationalError as error:  # another process added it meanwhile
            if "duplicate column" not in str(error):
                raise
    conn.execute(EXPIRY_INDEX)


def vacuum(path: str | Path) -> None:
    """``VACUUM`` the store file at ``path`` (which must exist) and truncate its log: the
    file is rebuilt without its free pages (which ``secure_delete`` already zeroed), so it
    shrinks to the rows it holds. Waits for the write lock like any writer; a job may keep
    running on the file."""
    file = Path(path)
    if not file.is_file():
        raise FileNotFoundError(f"no embedded store at {file}")
    conn = sqlite3.connect(file, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None)
    try:
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        conn.execute("PRAGMA secure_delete = ON")
        conn.execute("VACUUM")
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        conn.close()


def in_unallocated_space(path: Path, texts: Sequence[bytes]) -> list[bool]:
    """For each of ``texts``: whether it lies in the unallocated space of a b-tree page of
    the SQLite file at ``path`` (between a page's cell pointers and its cells), where a page
    rebuilt by a b-tree balance keeps copies of rows it no longer holds. Free pages and
    deleted rows ``secure_delete`` zeroed; overflow and free-list pages are skipped. Reads
    one header per page and searches the unallocated spans in place (about 1 ms per MB)."""
    found = [False] * len(texts)
    with open(path, "rb") as file:
        size = os.fstat(file.fileno()).st_size
        if size < 512 or not texts:
            return found
        with mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ) as data:
            page_size = int.from_bytes(data[16:18], "big")
            page_size = 65_536 if page_size == 1 else page_size
            for base in range(0, size - page_size + 1, page_size):
                header = base + (100 if base == 0 else 0)
                kind = data[header]
                if kind not in (2, 5, 10, 13):
                    continue
                cells = int.from_bytes(data[header + 3:header + 5], "big")
                content = int.from_bytes(data[header + 5:header + 7], "big") or 65_536
                start = header + (8 if kind in (10, 13) else 12) + 2 * cells
                end = base + min(content, page_size)
                if start < end:
                    for n, text in enumerate(texts):
                        if not found[n] and data.find(text, start, end) >= 0:
                            found[n] = True
    return found


def create_private(path: Path) -> None:
    """Create the folder (0700) and the file (0600) before SQLite does, so that SQLite's
    journal files, which copy the file's mode, are private too."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    descriptor = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    os.close(descriptor)

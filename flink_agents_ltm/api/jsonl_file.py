"""A private JSON-lines file that several processes of one machine append to safely.

Created 0600 in a 0700 folder. Each append is one ``write`` of whole lines under an
exclusive ``flock`` of the file, so lines of concurrent writers never interleave; a
writer that finds the file replaced (a rewrite moved a new file into its place) between
its open and its lock opens it again, so no line goes into a file that is already gone.
The memory audit log (:mod:`~flink_agents_ltm.api.memory.audit`) and the runtime's event
log write through it.
"""

from __future__ import annotations

import fcntl
import json
import os
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

__all__ = ["JsonLinesFile"]


class JsonLinesFile:
    """The file at ``path``; ``what`` names it in errors (``"the memory audit log"``), and
    ``error`` is the exception type raised when it cannot be used (file named, never its
    content)."""

    def __init__(self, path: str | os.PathLike[str], what: str,
                 error: Callable[[str], Exception] = OSError):
        self.path = Path(path).expanduser()
        self._what = what
        self._error = error
        self._lock = threading.Lock()

    def append(self, entries: Iterable[dict[str, Any]]) -> None:
        """Append one JSON object per line, in one write."""
        data = "".join(json.dumps(e, ensure_ascii=False) + "\n" for e in entries).encode()
        self.append_text(data)

    def append_text(self, data: bytes) -> None:
        """Append whole lines (``data`` ends with a newline), in one write."""
        with self.locked(fcntl.LOCK_EX, append=True) as handle:
            os.write(handle.fileno(), data)

    def read_lines(self) -> list[str]:
        """The file's lines (under a shared lock); none when it does not exist."""
        if not self.path.exists():
            return []
        with self.locked(fcntl.LOCK_SH) as handle:
            lines: list[str] = handle.read().splitlines()
        return lines

    @contextmanager
    def locked(self, mode: int, append: bool = False) -> Iterator[Any]:
        """The file, opened (created 0600 in a 0700 folder) and locked with ``mode``; opened
        again when it was replaced between the open and the lock."""
        try:
            with self._lock:
                folder = self.path.parent
                if not folder.exists():
                    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
                while True:
                    flags = (os.O_WRONLY | os.O_APPEND if append else os.O_RDONLY) | os.O_CREAT
                    descriptor = os.open(self.path, flags, 0o600)
                    handle = os.fdopen(descriptor, "ab" if append else "r", encoding=None
                                       if append else "utf-8")
                    try:
                        fcntl.flock(handle.fileno(), mode)
                        if os.fstat(handle.fileno()).st_ino != _inode(self.path):
                            continue  # replaced while we waited: open again
                        yield handle
                        return
                    finally:
                        handle.close()
        except OSError as error:
            raise self._error(f"{self._what} {self.path} cannot be used: "
                              f"{error.strerror or type(error).__name__}") from None


def _inode(path: Path) -> int:
    try:
        return os.stat(path).st_ino
    except FileNotFoundError:
        return -1

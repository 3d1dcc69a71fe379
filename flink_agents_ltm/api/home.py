"""The project's home folder, one rule for every file it writes by default.

Embedded stores, the action-state store's SQLite file, the event log, the memory
audit log and the traces of failed jobs live under the *home*: the job's
``agents.long-term-memory.base-dir`` when it sets one, else ``$FLINK_AGENTS_LTM_HOME``,
else ``~/.flink-agents-ltm``. Each of them asks :func:`home` and nothing else.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["DEFAULT_HOME", "HOME_VARIABLE", "home", "home_source"]

HOME_VARIABLE = "FLINK_AGENTS_LTM_HOME"
DEFAULT_HOME = "~/.flink-agents-ltm"


def home(base_dir: str | os.PathLike[str] | None = None) -> Path:
    """``base_dir`` when given (not empty), else ``$FLINK_AGENTS_LTM_HOME`` when set (not
    empty), else ``~/.flink-agents-ltm``; ``~`` expanded. Read at each call, so a
    variable set after import counts."""
    chosen = base_dir or os.environ.get(HOME_VARIABLE) or DEFAULT_HOME
    return Path(chosen).expanduser()


def home_source(base_dir: str | os.PathLike[str] | None = None) -> str:
    """Which of the three rules :func:`home` followed, for messages."""
    if base_dir:
        return "the configured base-dir"
    return f"${HOME_VARIABLE}" if os.environ.get(HOME_VARIABLE) else "the default"

"""Options of the runtime's event log, read the same way by the operator and the CLI.

The log itself is :mod:`flink_agents_ltm.runtime.event_log`; what a line holds is in
``docs/operations-event-log.md``. Levels are Python's (``DEBUG``, ``INFO``, ``WARNING``,
``ERROR``) plus ``OFF``; a type's level is the level its records are written at.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from flink_agents_ltm.api.home import home

__all__ = ["EVENT_LOGGER", "FILE_NAME", "LEVELS", "OFF", "SINKS", "default_file",
           "parse_level", "parse_levels"]

#: The logger the ``logging`` sink writes to (outside the console's handler).
EVENT_LOGGER = "flink_agents_ltm.event_log"
FILE_NAME = "events.jsonl"
OFF = logging.CRITICAL + 10  # above every level: never written
LEVELS = {"DEBUG": logging.DEBUG, "INFO": logging.INFO, "WARNING": logging.WARNING,
          "ERROR": logging.ERROR, "OFF": OFF}
SINKS = ("off", "logging", "file")


def parse_level(text: object, where: str) -> int:
    """The level ``text`` names (any case); a clear error naming ``where`` otherwise."""
    level = LEVELS.get(str(text).strip().upper()) if isinstance(text, str) else None
    if level is None:
        raise ValueError(f"{where}: {text!r} is not an event log level; one of "
                         f"{', '.join(LEVELS)}")
    return level


def parse_levels(text: str | None, where: str) -> dict[str, int]:
    """``"InputEvent:INFO,ChatRequestEvent:DEBUG"`` as ``{type name: level}``; a type is
    the event's class name or its ``module.QualifiedName``."""
    levels: dict[str, int] = {}
    for entry in (text or "").split(","):
        if not entry.strip():
            continue
        name, sep, level = entry.partition(":")
        if not sep or not name.strip():
            raise ValueError(f"{where}: {entry.strip()!r} is not TYPE:LEVEL (e.g. "
                             "'InputEvent:INFO,ChatRequestEvent:DEBUG')")
        levels[name.strip()] = parse_level(level, f"{where} for {name.strip()}")
    return levels


def default_file(base_dir: str | None) -> Path:
    """Where the ``file`` sink writes when ``agents.event-log.file`` is unset:
    ``event-log/events.jsonl`` under the embedded base-dir, else $FLINK_AGENTS_LTM_HOME,
    else ~/.flink-agents-ltm (next to the memory audit log)."""
    return home(base_dir) / "event-log" / FILE_NAME


def configured_file(config: Mapping[str, Any] | Any, file_key: str, base_key: str) -> Path:
    """The event log file a configuration (or a mapping of option keys) names."""
    file = config.get(file_key)
    return Path(file).expanduser() if file else default_file(config.get(base_key))

"""What the operator tells a person: INFO lines on the console, progress while it works.

On PyFlink's local mini-cluster the Python logging of an operator ends up in
Flink's log file (inside the venv unless ``FLINK_LOG_DIR`` says otherwise), so
a user sees neither the settings a subtask opened with nor its totals. The
operator therefore gives the package's logger (``flink_agents_ltm``) a console
handler (see :func:`log_to_console`), unless someone configured that logger
already: lines reach the console of a local job and the ``.out`` file of a
TaskManager. They still propagate to the root logger (Flink's log file).

:class:`ProgressLog` writes one line every ``agents.progress-interval-ms`` while
the operator works; it runs at the end of Flink callbacks on the mailbox
thread (no thread of its own: a subtask that gets no callbacks does not work).
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable
from typing import TextIO

from flink_agents_ltm.runtime.protocols import Clock

PACKAGE_LOGGER = "flink_agents_ltm"
FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


class _ConsoleHandler(logging.StreamHandler):
    """Writes to whatever ``sys.<name>`` is when a line is logged (PyFlink's workers
    replace the streams after start-up)."""

    def __init__(self, name: str) -> None:
        super().__init__()
        self._name = name
        self.setFormatter(logging.Formatter(FORMAT))

    @property
    def stream(self) -> TextIO:
        stream: TextIO = getattr(sys, self._name)
        return stream

    @stream.setter
    def stream(self, _value: TextIO) -> None:
        pass


def log_to_console(execution_mode: str) -> None:
    """Give the package's logger a console handler at INFO, once per process, unless
    it has handlers of someone else's.

    Thread mode writes to standard output: the operator runs inside the JVM, whose
    standard error PyFlink's local gateway captures in a pipe it reads only when the
    JVM fails to start (lines there are lost, and a full pipe would block the mailbox
    thread), while its standard output is the client's. Process mode writes to
    standard error: the client's own on the local mini-cluster; on a cluster PyFlink's
    worker turns its standard streams into logging calls, so no handler is added there
    (the lines reach Flink's log through the root logger anyway)."""
    logger = logging.getLogger(PACKAGE_LOGGER)
    if logger.handlers:
        return
    name = "stdout" if execution_mode == "thread" else "stderr"
    stream = getattr(sys, name)
    if getattr(stream.write, "__self__", None) is not stream:
        return  # a cluster's Python worker sends the stream to logging: lines are there
    logger.addHandler(_ConsoleHandler(name))
    if logger.level == logging.NOTSET:
        logger.setLevel(logging.INFO)


class ProgressLog:
    def __init__(self, log: logging.Logger, clock: Clock, interval_s: float,
                 line: Callable[[], str]):
        self._log = log
        self._clock = clock
        self._interval_s = interval_s
        self._line = line
        self._next = clock.monotonic() + interval_s

    def tick(self) -> None:
        """End of a callback: log a progress line if the interval has passed."""
        now = self._clock.monotonic()
        if now >= self._next:
            self._next = now + self._interval_s
            self._log.info("%s", self._line())

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

When an action fails the job, the client prints the error once, as its last line
(:mod:`~flink_agents_ltm.api.job_errors`). The console therefore does not repeat
it: the operator's ERROR line of that failure shows on the console as a short
pointer (the full line stays in Flink's log, through the root logger), and in a
local process-mode job, whose Python worker runs inside the client's process,
the traceback Beam's worker prints to standard error for every failed bundle is
held back (:class:`_QuietWorkerTraces`; Beam also logs it, in full, to Flink's
log, and it travels in the exception to the client). ``FLINK_AGENTS_LTM_VERBOSE=1``
keeps both on the console.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

from flink_agents_ltm.api.event_log import EVENT_LOGGER
from flink_agents_ltm.api.job_errors import verbose
from flink_agents_ltm.runtime.protocols import Clock

PACKAGE_LOGGER = "flink_agents_ltm"
OPERATOR_LOGGER = "flink_agents_ltm.runtime.agent_operator"
FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
BEAM_WORKER = ("apache_beam", "runners", "worker", "sdk_worker.py")


def _job_failure_pointer(record: logging.LogRecord) -> logging.LogRecord:
    """The console's copy of the operator's ERROR line (the error that fails the job, which
    the client prints as its last line): a pointer to it. Other records as they are."""
    if record.name != OPERATOR_LOGGER or record.levelno < logging.ERROR or verbose():
        return record
    kind = _error_type(record)
    pointer = logging.makeLogRecord(record.__dict__)
    pointer.msg = (f"an action failed{'' if kind is None else f' with {kind}'}: the job fails "
                   "(the client's last line says why) or Flink restarts it; the full error "
                   "is in Flink's log")
    pointer.args = ()
    return pointer


def _error_type(record: logging.LogRecord) -> str | None:
    args: Any = record.args
    if isinstance(args, tuple):
        for arg in args:
            if isinstance(arg, BaseException):
                return type(arg).__name__
        if len(args) >= 3 and isinstance(args[2], str):  # "agent %s failed on %d: %s: %s"
            return args[2]
    return None


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

    def emit(self, record: logging.LogRecord) -> None:
        if record.name == EVENT_LOGGER:
            return  # the event log's lines go to Flink's log only (the root logger)
        super().emit(_job_failure_pointer(record))


class _QuietWorkerTraces:
    """Standard error of a process whose Python worker is Beam's, minus the traceback that
    worker prints for each failed bundle (Beam logs the same text to Flink's log, and it
    reaches the client inside the job's exception). Everything else passes through."""

    def __init__(self, stream: Any):
        self._stream = stream

    def write(self, text: str) -> int:
        caller = sys._getframe(1)
        if caller.f_code.co_name == "_execute" and \
                Path(caller.f_code.co_filename).parts[-len(BEAM_WORKER):] == BEAM_WORKER:
            return len(text)
        written: int = self._stream.write(text)
        return written

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def quiet_worker_traces() -> None:
    """Hold back Beam's worker tracebacks on this process's standard error (once; not with
    ``FLINK_AGENTS_LTM_VERBOSE``, nor where the stream is not a plain one)."""
    stream: Any = sys.stderr
    if stream is None or verbose() or isinstance(stream, _QuietWorkerTraces) or \
            getattr(stream.write, "__self__", None) is not stream:
        return
    sys.stderr = _QuietWorkerTraces(stream)


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
    if execution_mode != "thread":
        quiet_worker_traces()
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

"""When a job fails, the client says why in one line: the project's own error.

PyFlink raises ``py4j.protocol.Py4JJavaError`` whose text is Flink's whole Java
chain (hundreds of lines, the Python worker's traceback inside it, often twice)
and Python prints it all. The error the job failed with (an
``AgentActionError``, ``LongTermMemoryError``, ``MissingExtraError``, a
configuration error) sits somewhere inside. This module finds it
(:func:`find_job_error`) and turns the Py4J error into :class:`JobFailedError`:

- it *is* a ``Py4JJavaError`` (``except Py4JJavaError`` and ``.java_exception``
  keep working), its text is that one line, ``error_type`` names the project's
  exception class and ``message`` holds its message;
- nothing is lost: the full trace (the client's Python frames and the Java chain,
  credentials masked) is written to a 0600 file under ``<home>/logs/`` (a 0700
  folder; home is the job's ``ltm.base-dir``, else ``$FLINK_AGENTS_LTM_HOME``,
  else ``~/.flink-agents-ltm``), named by ``trace_file``, and kept in ``trace``.

:func:`install_excepthook` makes a script that does not catch it print two lines
on standard error: where the full trace is, then the error, last.
``FLINK_AGENTS_LTM_VERBOSE=1`` prints the full trace there as well (and keeps
the workers' own failure lines on the console, and the traceback of a thread ended
by a cancelled gRPC stream: :func:`_quiet_cancelled_streams`).

Only the text of the error is used here, never its classes: this module lives in
``api`` and imports nothing of the runtime or the integrations.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
import tempfile
import threading
import time
import traceback
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

from py4j.protocol import Py4JJavaError  # type: ignore[import-untyped]

from flink_agents_ltm.api.errors import FlinkAgentsLtmError
from flink_agents_ltm.api.home import home as project_home
from flink_agents_ltm.api.redaction import redact_text

__all__ = ["COLLECT_RESTORE_ERROR", "VERBOSE_VARIABLE", "CollectFromSavepointWarning",
           "JobError", "JobFailedError", "JobFailureShaper", "find_job_error",
           "install_excepthook", "missing_java_line", "verbose"]

VERBOSE_VARIABLE = "FLINK_AGENTS_LTM_VERBOSE"
PACKAGE = "flink_agents_ltm"

# The project's exception as Python prints it last in a traceback (process mode, inside
# the Java chain) and as Pemja wraps it (thread mode).
_PROJECT_PYTHON = re.compile(rf"^({PACKAGE}(?:\.\w+)+): (.*)$", re.M)
_PEMJA = re.compile(r"PythonException: <class '([\w.]+)'>: (.*)$", re.M)
_TRACEBACK = "Traceback (most recent call last):"
_PYTHON_EXCEPTION_LINE = re.compile(r"^([A-Za-z_][\w.]*)(?:: (.*))?$")
_JAVA_CAUSE = re.compile(r"^Caused by: ([\w.$]+)(?:: (.*))?$", re.M)


def verbose() -> bool:
    """``FLINK_AGENTS_LTM_VERBOSE`` is set to a true value (1, true, yes, on)."""
    return os.environ.get(VERBOSE_VARIABLE, "").strip().lower() in ("1", "true", "yes", "on")


@dataclass(frozen=True)
class JobError:
    """The error a job failed with: its exception's qualified class name and message."""

    type_name: str
    message: str

    @property
    def short_type(self) -> str:
        return self.type_name.rsplit(".", 1)[-1]

    @property
    def line(self) -> str:
        return f"{self.short_type}: {self.message}" if self.message else self.short_type


# Flink's own errors whose text misleads a user, by a phrase of it: what the user did.
COLLECT_RESTORE_ERROR = JobError(
    "CollectSinkRestoreError",
    "execute_and_collect() cannot go on from a savepoint: the restored collect sink expects "
    "a client that read its earlier results (Flink says 'userVisibleTail should not be "
    "larger than offset'); write the outputs to a sink that resumes (FileSink, Kafka, ...) "
    "for a job you stop with a savepoint and resume, or start it without one")
_KNOWN_FLINK_ERRORS = (("userVisibleTail should not be larger than offset",
                        COLLECT_RESTORE_ERROR),)


def find_job_error(text: str) -> JobError | None:
    """The error a failed job's trace ``text`` is about: the project's own exception
    (the outermost one: Python prints it last; several copies are one error), else a
    Flink error known to mislead (:data:`_KNOWN_FLINK_ERRORS`: what the user did and what
    to do), else the last exception of a Python traceback in it, else the root cause of
    the Java chain."""
    known = next((error for phrase, error in _KNOWN_FLINK_ERRORS if phrase in text), None)
    project = [m for pattern in (_PROJECT_PYTHON, _PEMJA) for m in pattern.finditer(text)
               if m.group(1).startswith(PACKAGE + ".")]
    if project:
        last = max(project, key=lambda m: m.start())
        return JobError(last.group(1), " ".join(last.group(2).split()))
    if known is not None:
        return known
    python = _last_python_exception(text)
    if python is not None:
        return python
    causes = list(_JAVA_CAUSE.finditer(text))
    if causes:
        cause = causes[-1]
        return JobError(cause.group(1), " ".join((cause.group(2) or "").split()))
    return None


def _last_python_exception(text: str) -> JobError | None:
    found: JobError | None = None
    pemja = list(_PEMJA.finditer(text))
    if pemja:
        found = JobError(pemja[-1].group(1), " ".join(pemja[-1].group(2).split()))
    in_traceback = False
    for line in text.splitlines():
        if line.endswith(_TRACEBACK):
            in_traceback = True
            continue
        if in_traceback and line and not line[0].isspace():
            match = _PYTHON_EXCEPTION_LINE.match(line)
            if match:
                found = JobError(match.group(1), " ".join((match.group(2) or "").split()))
            in_traceback = False
    return found


class JobFailedError(FlinkAgentsLtmError, Py4JJavaError):  # type: ignore[misc]
    """A job failed. ``str()`` is one line: the error it failed with (``error_type``'s
    short name and ``message``); ``trace`` is the full trace and ``trace_file`` where it
    was written. Chained to PyFlink's original ``Py4JJavaError`` (``__cause__``)."""

    def __init__(self, original: Py4JJavaError, error: JobError, trace: str,
                 trace_file: Path | None):
        super().__init__(original.errmsg, original.java_exception)
        self.error_type = error.type_name
        self.message = error.message
        self.line = error.line
        self.trace = trace
        self.trace_file = trace_file

    def __str__(self) -> str:
        return str(self.line)

    def __reduce__(self) -> tuple[Any, ...]:  # the Java object does not pickle
        return (RuntimeError, (str(self.line),))


class CollectFromSavepointWarning(UserWarning):
    """A job read with ``execute_and_collect`` starts from a savepoint."""


class JobFailureShaper:
    """Turns the ``Py4JJavaError`` of a failed job into :class:`JobFailedError`, writing its
    full trace under ``<home>/logs``; wraps PyFlink's methods that run a job."""

    def __init__(self, job_id: str, home: str | Path | None):
        self._job_id = job_id
        self._home = project_home(home)

    @property
    def logs(self) -> Path:
        return self._home / "logs"

    def job_failed(self, original: Py4JJavaError) -> JobFailedError:
        if isinstance(original, JobFailedError):
            return original
        try:
            text = "".join(traceback.format_exception(original))
        except Exception as unreadable:  # noqa: BLE001 - the gateway may be gone
            text = f"{original.errmsg} (the Java trace could not be read: {unreadable})\n"
        text = redact_text(text)
        error = find_job_error(text) or JobError(type(original).__name__,
                                                 " ".join(str(original.errmsg).split()))
        failed = JobFailedError(original, error, text, self._write(text))
        failed.__cause__ = original
        return failed

    @contextlib.contextmanager
    def shaping(self) -> Iterator[None]:
        """Inside: a ``Py4JJavaError`` leaves as :class:`JobFailedError`."""
        try:
            yield
        except JobFailedError:
            raise
        except Py4JJavaError as original:
            raise self.job_failed(original) from original

    def wrap(self, method: Callable[..., Any]) -> Callable[..., Any]:
        """``method`` (``execute`` of an environment) raising :class:`JobFailedError`."""
        if getattr(method, "_shaped_job_errors", False):
            return method

        def run(*args: Any, **kwargs: Any) -> Any:
            with self.shaping():
                return method(*args, **kwargs)

        run._shaped_job_errors = True  # type: ignore[attr-defined]
        run.__doc__ = method.__doc__
        return run

    def wrap_collect(self, method: Callable[..., Any],
                     restoring_from: str | None = None) -> Callable[..., Any]:
        """``execute_and_collect`` of a stream: its iterator raises :class:`JobFailedError`
        (a job's failure surfaces while its results are read). ``restoring_from``: the job
        starts from that savepoint, which a collect sink cannot resume from: a warning
        says so before the job runs."""
        if getattr(method, "_shaped_job_errors", False):
            return method

        def execute_and_collect(*args: Any, **kwargs: Any) -> Any:
            if restoring_from is not None:
                warnings.warn(
                    f"this job starts from the savepoint {redact_text(restoring_from)} but "
                    "reads its outputs with execute_and_collect(), whose sink cannot resume "
                    "from a savepoint: write them to a sink that resumes (FileSink, Kafka, "
                    "...)", CollectFromSavepointWarning, stacklevel=2)
            with self.shaping():
                result = method(*args, **kwargs)
            return result if isinstance(result, list) else _ShapedIterator(result, self)

        execute_and_collect._shaped_job_errors = True  # type: ignore[attr-defined]
        execute_and_collect.__doc__ = method.__doc__
        return execute_and_collect

    def _write(self, text: str) -> Path | None:
        stamp = time.strftime("%Y%m%d-%H%M%S")
        name = f"{re.sub(r'[^A-Za-z0-9_.-]', '_', self._job_id)}-{stamp}-{os.getpid()}"
        try:
            self.logs.mkdir(mode=0o700, parents=True, exist_ok=True)
            for attempt in range(100):
                path = self.logs / f"{name}{'' if not attempt else f'-{attempt}'}.trace"
                try:
                    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
                except FileExistsError:
                    continue
                with os.fdopen(fd, "w", encoding="utf-8") as file:
                    file.write(text)
                return path
        except OSError:
            pass
        try:  # the home cannot be written: a private temp file still keeps the trace
            fd, other = tempfile.mkstemp(prefix=f"{name}-", suffix=".trace")
            with os.fdopen(fd, "w", encoding="utf-8") as file:
                file.write(text)
            return Path(other)
        except OSError:
            return None


class _ShapedIterator:
    """PyFlink's ``CloseableIterator`` whose reads raise :class:`JobFailedError`."""

    def __init__(self, iterator: Any, shaper: JobFailureShaper):
        self._iterator = iterator
        self._shaper = shaper

    def __iter__(self) -> _ShapedIterator:
        return self

    def __next__(self) -> Any:
        with self._shaper.shaping():
            return next(self._iterator)

    def next(self) -> Any:
        return self.__next__()

    def close(self) -> None:
        with self._shaper.shaping():
            self._iterator.close()

    def __enter__(self) -> _ShapedIterator:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._iterator, name)


_hook_lock = threading.Lock()
_installed: list[JobFailureShaper | None] = []


def missing_java_line(error: BaseException) -> str | None:
    """One line for PyFlink failing to start its JVM for want of ``java`` (the raw
    ``FileNotFoundError: 'java'`` of its gateway launch), ``None`` for any other error."""
    if not isinstance(error, FileNotFoundError):
        return None
    name = str(error.filename or "")
    if name != "java" and not name.endswith(("/bin/java", "\\bin\\java.exe")):
        return None
    where = f"JAVA_HOME={os.environ['JAVA_HOME']}" if os.environ.get("JAVA_HOME") else "the PATH"
    return (f"JavaNotFoundError: PyFlink could not start Java: no {name} from {where}; install "
            "Java 17 and put it on the PATH or set JAVA_HOME (flink-agents-ltm doctor checks "
            "the set-up)")


def install_excepthook(shaper: JobFailureShaper | None = None) -> None:
    """A script that lets an error escape prints one line for the errors this package knows:
    a failed job's (``shaper``: where the full trace is, then the error's one line, last) and
    a missing ``java`` (:func:`missing_java_line`). Installed once per process, only over
    Python's default hook (a hook of someone else's is left alone); other exceptions go to
    the hook that was there. ``None`` installs it without a job's shaper (on import, so a
    missing ``java`` at the script's first line is caught too)."""
    with _hook_lock:
        if _installed:
            if shaper is not None:
                _installed[0] = shaper
            return
        if sys.excepthook is not sys.__excepthook__:
            return
        _installed.append(shaper)
        previous = sys.excepthook

        def hook(kind: type[BaseException], value: BaseException,
                 tb: TracebackType | None) -> None:
            java = missing_java_line(value)
            if java is not None:
                sys.stderr.write(java + "\n")
                sys.stderr.flush()
                return
            current = _installed[0]
            if isinstance(value, JobFailedError):
                failed = value
            elif isinstance(value, Py4JJavaError) and current is not None:
                failed = current.job_failed(value)
            else:
                previous(kind, value, tb)
                return
            script = "".join(traceback.format_exception(kind, value, tb, chain=False))
            if failed.trace_file is not None:
                with contextlib.suppress(OSError), open(failed.trace_file, "a",
                                                        encoding="utf-8") as file:
                    file.write("\nWhere the script was when the job failed:\n"
                               + redact_text(script))
            err = sys.stderr
            if verbose():
                err.write(failed.trace + "\n" + redact_text(script))
            where = (f"in {failed.trace_file}" if failed.trace_file is not None else
                     f"not written (set {VERBOSE_VARIABLE}=1 to print it here)")
            err.write(f"The job failed; its full trace (Python and Java) is {where}\n")
            err.write(failed.line + "\n")
            err.flush()

        sys.excepthook = hook
        _quiet_cancelled_streams()


def _cancelled_stream(error: BaseException | None) -> bool:
    """A gRPC stream cancelled under a thread reading it: PyFlink's Python worker (Beam's
    data plane) when the job ends, failed or not, as its gRPC channels close."""
    return (error is not None and type(error).__module__.split(".")[0] == "grpc"
            and "StatusCode.CANCELLED" in str(error))


def _quiet_cancelled_streams() -> None:
    """A thread that dies of a cancelled gRPC stream prints nothing (its traceback, with
    :func:`verbose`): in a local run the Python worker is in this process, and when the job
    failed its reader thread's ~20 lines came between the job's lines on standard error.
    Installed only over Python's default thread hook; other threads' errors go to it."""
    if threading.excepthook is not threading.__excepthook__:
        return
    previous = threading.excepthook

    def thread_hook(args: threading.ExceptHookArgs) -> None:
        if _cancelled_stream(args.exc_value) and not verbose():
            return
        previous(args)

    threading.excepthook = thread_hook

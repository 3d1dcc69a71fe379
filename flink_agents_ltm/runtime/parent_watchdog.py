"""A Python worker process ends as soon as the TaskManager that started it dies.

In process mode a TaskManager starts each Python worker through a shell script
(``TaskManager JVM -> bash pyflink-udf-runner.sh -> python``). When the
TaskManager is killed (``kill -9``, an OOM kill), the script and the worker
live on: the worker's durable calls go on writing to long-term memory for
minutes while Flink already replays the same inputs elsewhere.

So the operator, when it opens in a worker process, and the key selector, when
it first runs in one (it runs in the worker of the operators before the agent),
start one watchdog per process: it finds the nearest ancestor that is a JVM,
and ends the process (``os._exit``, no cleanup that could still write) the
moment that JVM is gone.
It waits on a Linux pidfd (woken by the kernel when the JVM exits); where
pidfds are not available it checks every 50 ms. A worker with no JVM among its
ancestors (PyFlink's local mini-cluster runs process-mode functions in the
client process itself) starts none, and neither does thread mode (Python runs
inside the TaskManager's JVM).

The watchdog thread alone leaves a window: after the JVM died, the worker's
other threads still run until the watchdog is scheduled (measured: ~0.3 s and
4-6 durable calls begun). So the worker pool also asks
:func:`check_task_manager` right before each durable call starts, and the
operator before each Flink callback (where the mailbox thread writes to the
store): a poll of the JVM's pidfd with no timeout, about a microsecond.
"""

from __future__ import annotations

import contextlib
import logging
import os
import select
import threading
import time

from flink_agents_ltm.api.errors import FlinkAgentsLtmError

log = logging.getLogger(__name__)

_started = False
_lock = threading.Lock()
_guard: ParentGuard | None = None
POLL_S = 0.05


class ParentGoneError(FlinkAgentsLtmError, RuntimeError):
    """The process this one depends on (its TaskManager) is gone: nothing more may start."""


def _stat(pid: int) -> tuple[int, int] | None:
    """``(parent pid, start time in clock ticks)`` of ``pid``, or ``None`` if it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return int(fields[1]), int(fields[19])


def _is_jvm(pid: int) -> bool:
    try:
        return os.path.basename(os.readlink(f"/proc/{pid}/exe")) == "java"
    except OSError:
        return False


def jvm_ancestor() -> tuple[int, int] | None:
    """``(pid, start time)`` of the nearest ancestor JVM of this process, if any."""
    pid = os.getppid()
    while pid > 1:
        stat = _stat(pid)
        if stat is None:
            return None
        if _is_jvm(pid):
            return pid, stat[1]
        pid = stat[0]
    return None


def _alive(pid: int, start_time: int) -> bool:
    stat = _stat(pid)
    return stat is not None and stat[1] == start_time


class ParentGuard:
    """Answers, cheaply and from any thread, whether process ``pid`` (started at
    ``start_time`` clock ticks, so a reused pid is not taken for it) still lives."""

    def __init__(self, pid: int, start_time: int):
        self.pid = pid
        self._start_time = start_time
        self._pidfd: int | None = None
        self._pollers = threading.local()  # a poll object serves one thread at a time
        try:
            pidfd = os.pidfd_open(pid)
        except (AttributeError, OSError):
            return
        if _alive(pid, start_time):  # the pidfd is of the process we mean
            self._pidfd = pidfd
        else:
            os.close(pidfd)

    @classmethod
    def of_parent(cls) -> ParentGuard:
        pid = os.getppid()
        stat = _stat(pid)
        return cls(pid, stat[1] if stat is not None else -1)

    def alive(self) -> bool:
        if self._pidfd is None:
            return _alive(self.pid, self._start_time)
        poller = getattr(self._pollers, "poller", None)
        if poller is None:  # this thread's own: one poll object polled by two threads at
            poller = self._pollers.poller = select.poll()  # once raises RuntimeError
            poller.register(self._pidfd, select.POLLIN)
        return not poller.poll(0)  # readable once the process has exited

    def check(self) -> None:
        """Raise :class:`ParentGoneError` if the process is gone."""
        if not self.alive():
            raise ParentGoneError(f"process {self.pid}, on which this process (pid "
                                  f"{os.getpid()}) depends, is gone: nothing more starts")


def check_task_manager() -> None:
    """In a Python worker process whose TaskManager is gone: end the process now, before
    anything else starts. A no-op where no TaskManager is watched (thread mode, local)."""
    guard = _guard
    if guard is not None and not guard.alive():
        _die(guard.pid)


def _die(pid: int) -> None:
    """Straight to the file descriptor: PyFlink's worker turns ``sys.stderr`` into logging
    calls that go to the dead TaskManager and may block."""
    with contextlib.suppress(OSError):
        os.write(2, f"flink-agents-ltm: the TaskManager (pid {pid}) of this Python worker "
                    f"(pid {os.getpid()}) is gone; the worker stops now\n".encode())
    os._exit(70)


def _watch(pid: int, start_time: int) -> None:
    try:
        pidfd = os.pidfd_open(pid)
    except (AttributeError, OSError):
        pidfd = None
    if pidfd is not None and _alive(pid, start_time):
        poller = select.poll()
        poller.register(pidfd, select.POLLIN)
        while not poller.poll():
            pass
        _die(pid)
    while _alive(pid, start_time):
        time.sleep(POLL_S)
    _die(pid)


def watch_task_manager() -> int | None:
    """Start this process's watchdog (once); answers the pid of the watched JVM."""
    global _started, _guard
    with _lock:
        if _started:
            return None
        _started = True
        if _is_jvm(os.getpid()):  # thread mode: Python runs inside the TaskManager itself
            return None
        ancestor = jvm_ancestor()
        if ancestor is None:
            return None
        pid, start_time = ancestor
        _guard = ParentGuard(pid, start_time)
    threading.Thread(target=_watch, args=(pid, start_time), name="taskmanager-watchdog",
                     daemon=True).start()
    log.info("watching the TaskManager (pid %d): this Python worker (pid %d) stops when it "
             "is gone", pid, os.getpid())
    return pid

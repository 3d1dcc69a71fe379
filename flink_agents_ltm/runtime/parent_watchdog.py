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
"""

from __future__ import annotations

import contextlib
import logging
import os
import select
import threading
import time

log = logging.getLogger(__name__)

_started = False
_lock = threading.Lock()
POLL_S = 0.05


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
    global _started
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
    threading.Thread(target=_watch, args=(pid, start_time), name="taskmanager-watchdog",
                     daemon=True).start()
    log.info("watching the TaskManager (pid %d): this Python worker (pid %d) stops when it "
             "is gone", pid, os.getpid())
    return pid

"""The mailbox thread: its rule lives with the memory contract (``api.memory.mailbox``);
here, how the mailbox thread learns that Flink cancelled its task.

In thread mode the mailbox thread is the Flink task thread itself (Python runs in
the TaskManager's JVM through Pemja). Flink cancels a task by interrupting that
thread, which Python never notices: a wait for durable calls would go on until their
deadline, and after 180 s Flink declares the TaskManager broken and stops it. The
check below asks the JVM whether the current thread was interrupted (one JNI call;
the waits ask it once a slice), leaving the flag set for Flink.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from flink_agents_ltm.api.memory.mailbox import MailboxThreadCheck

__all__ = ["MailboxThreadCheck", "task_thread_interrupted"]

log = logging.getLogger(__name__)


def task_thread_interrupted(mode: str) -> Callable[[], bool] | None:
    """A check for the mailbox thread, ``True`` once Flink interrupted the task thread;
    ``None`` outside thread mode (a process-mode worker has no Java thread: its task's
    cancel ends the worker) or where the JVM cannot be asked."""
    if mode != "thread":
        return None
    try:
        from pemja import findClass  # type: ignore[import-untyped]

        java_thread = findClass("java.lang.Thread")
    except Exception as error:  # noqa: BLE001 - not inside a JVM after all
        log.warning("cannot ask the JVM about interrupts (%s: %s): a cancel waits for the "
                    "durable calls until their timeout", type(error).__name__, error)
        return None

    def interrupted() -> bool:
        return bool(java_thread.currentThread().isInterrupted())

    return interrupted

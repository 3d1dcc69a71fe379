"""Task facts from a PyFlink ``RuntimeContext``, in both execution modes.

PyFlink 2.3.0's thread-mode ``RuntimeContext`` still calls Java methods that
Flink 2.0 moved to ``getTaskInfo()`` (``get_index_of_this_subtask`` and friends
raise ``AttributeError``); read them from the Java ``TaskInfo`` instead.
"""

from __future__ import annotations

from typing import Any


def subtask_index(runtime_context: Any) -> int:
    try:
        return runtime_context.get_index_of_this_subtask()
    except AttributeError:  # thread mode, PyFlink 2.3.0
        return runtime_context._runtime_context.getTaskInfo().getIndexOfThisSubtask()


def attempt_number(runtime_context: Any) -> int:
    try:
        return runtime_context.get_attempt_number()
    except AttributeError:  # thread mode, PyFlink 2.3.0
        return runtime_context._runtime_context.getTaskInfo().getAttemptNumber()


def number_of_subtasks(runtime_context: Any) -> int:
    try:
        return runtime_context.get_number_of_parallel_subtasks()
    except AttributeError:  # thread mode, PyFlink 2.3.0
        return runtime_context._runtime_context.getTaskInfo().getNumberOfParallelSubtasks()


def execution_mode(runtime_context: Any) -> str:
    """``thread`` (the UDF runs embedded in the TaskManager's JVM) or ``process``."""
    return "thread" if ".embedded." in type(runtime_context).__module__ else "process"

"""Every difference between the Apache Flink versions the package runs on, in one place.

Supported: apache-flink 1.20.x (the LTS line) and 2.0.x, 2.1.x, 2.2.x, 2.3.x (the default,
pinned by ``make install``). What differs and is handled here:

* Thread mode's ``RuntimeContext`` on Flink 2.x still calls Java methods that Flink 2.0
  moved to ``getTaskInfo()`` (``get_index_of_this_subtask`` and friends raise
  ``AttributeError``); 1.20 and process mode answer them directly. The task facts below try
  the Python method first and fall back to the Java ``TaskInfo``.
* The jars' names carry the version (``flink-dist-<v>.jar``, ``opt/flink-python-<v>.jar``,
  ``flink-metrics-prometheus-<v>.jar``) and the log4j jars the bundled log4j's: found by
  pattern, never spelled.
* The state-TTL API: PyFlink's ``StateTtlConfig.new_builder`` takes ``pyflink.common.time.Time``
  on every supported version (the Java side's ``Duration`` is converted by PyFlink), so one
  builder call serves all.

What is the same everywhere (checked by the smoke set of each version, ``make test-flink``):
the Python ``open(runtime_context)`` of a ``KeyedProcessFunction`` (the ``OpenContext`` vs
``Configuration`` split is Java's: the Java bridge's operator overrides the no-argument
``open()`` of ``AbstractStreamOperator``, which both lines have), keyed state descriptors,
``Types``, timers, the metric group, Pemja 0.5.7 and cloudpickle 2.2.x.

Any other version fails with one line naming what is installed and what is supported
(:func:`require_supported_flink`).
"""

from __future__ import annotations

import re
from importlib import metadata
from pathlib import Path
from typing import Any

from flink_agents_ltm.api.errors import UnsupportedFlinkVersionError  # re-exported

DISTRIBUTION = "apache-flink"
#: (major, minor) lines the package runs on; the last is the default.
SUPPORTED_LINES: tuple[tuple[int, int], ...] = ((1, 20), (2, 0), (2, 1), (2, 2), (2, 3))
DEFAULT_VERSION = "2.3.0"
SUPPORTED_TEXT = "1.20.x, 2.0.x, 2.1.x, 2.2.x or 2.3.x"


def installed_version() -> str | None:
    """The installed apache-flink's version, ``None`` if there is none."""
    try:
        return metadata.version(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return None


def version_line(version: str) -> tuple[int, int] | None:
    """``(major, minor)`` of a version string such as ``1.20.5`` or ``2.3.0``."""
    found = re.match(r"(\d+)\.(\d+)", version)
    return (int(found.group(1)), int(found.group(2))) if found else None


def unsupported_reason(version: str | None) -> str | None:
    """One line saying why ``version`` cannot run the package, ``None`` when it can."""
    if version is None:
        return (f"flink-agents-ltm needs {DISTRIBUTION} {SUPPORTED_TEXT}, and none is installed: "
                f"pip install '{DISTRIBUTION}=={DEFAULT_VERSION}'")
    if version_line(version) not in SUPPORTED_LINES:
        return (f"flink-agents-ltm runs on {DISTRIBUTION} {SUPPORTED_TEXT}, not {version}: "
                f"pip install '{DISTRIBUTION}=={DEFAULT_VERSION}'")
    return None


def require_supported_flink(version: str | None = None) -> str:
    """The installed (or given) apache-flink version; raises
    :class:`UnsupportedFlinkVersionError` with one line when the package cannot run on it."""
    found = installed_version() if version is None else version
    reason = unsupported_reason(found)
    if reason is not None:
        raise UnsupportedFlinkVersionError(reason)
    assert found is not None
    return found


# ------------------------------------------------------------------ jars of an install


def versioned_jar(folder: Path, stem: str) -> Path | None:
    """``folder/<stem>-<version>.jar`` whatever the version (``None`` if absent)."""
    jars = sorted(folder.glob(f"{stem}-[0-9]*.jar"))
    return jars[0] if jars else None


def flink_python_jar(pyflink_home: Path) -> Path | None:
    """``opt/flink-python-<version>.jar`` of a PyFlink install (it holds Pemja)."""
    return versioned_jar(pyflink_home / "opt", "flink-python")


def prometheus_reporter_jar(pyflink_home: Path) -> Path | None:
    return versioned_jar(pyflink_home / "plugins" / "metrics-prometheus",
                         "flink-metrics-prometheus")


# ------------------------------------------------------------------ task facts


def _task_fact(runtime_context: Any, python_method: str, java_method: str) -> int:
    """A fact of the task: PyFlink's method, else (thread mode on Flink 2.x, where that
    method raises ``AttributeError``) the Java ``TaskInfo``'s."""
    try:
        return int(getattr(runtime_context, python_method)())
    except AttributeError:
        return int(getattr(runtime_context._runtime_context.getTaskInfo(), java_method)())


def subtask_index(runtime_context: Any) -> int:
    return _task_fact(runtime_context, "get_index_of_this_subtask", "getIndexOfThisSubtask")


def attempt_number(runtime_context: Any) -> int:
    return _task_fact(runtime_context, "get_attempt_number", "getAttemptNumber")


def number_of_subtasks(runtime_context: Any) -> int:
    return _task_fact(runtime_context, "get_number_of_parallel_subtasks",
                      "getNumberOfParallelSubtasks")


def execution_mode(runtime_context: Any) -> str:
    """``thread`` (the UDF runs embedded in the TaskManager's JVM) or ``process``."""
    return "thread" if ".embedded." in type(runtime_context).__module__ else "process"


# ------------------------------------------------------------------ state


def ttl_config(ttl_ms: int) -> Any:
    """A ``StateTtlConfig`` expiring state ``ttl_ms`` after its last write."""
    from pyflink.common.time import Time
    from pyflink.datastream.state import StateTtlConfig

    return StateTtlConfig.new_builder(Time.milliseconds(ttl_ms)).build()


# ------------------------------------------------------------------ the current key


class StateKeySwitch:
    """Process mode only: make another key the current key of the operator's keyed state
    and timers between Flink's callbacks, and give the callback's own key back.

    PyFlink has no public way to do this; it rests on private API, checked against
    apache-flink 2.3.0's ``pyflink/fn_execution`` (older lines' ``operations.py`` make the
    same calls; where the members are missing, :func:`state_key_switch` answers ``None``
    and poll timers alone resume parked keys, as before):

    * ``StreamingRuntimeContext._keyed_state_backend`` (``datastream/process/
      runtime_context.py``): the operator's ``RemoteKeyedStateBackend``
      (``state_impl.py``), which every state handle and the timer service
      (``datastream/process/timerservice_impl.py``) read the current key from;
    * its ``set_current_key(Row(key))`` / ``get_current_key()``: what the keyed-process
      operation itself calls before ``process_element`` (``state_key_selector`` is
      ``Row(normal_data[0])``, ``datastream/process/operations.py``) and ``on_timer``.
      Switching keeps the writes of the key left (its internal state goes to the backend's
      cache, committed at the end of the bundle, as when PyFlink switches per element).

    Thread mode's state lives in the JVM: :func:`state_key_switch` answers ``None`` there.
    """

    __slots__ = ("_backend", "_row")

    def __init__(self, backend: Any):
        from pyflink.common import Row

        self._backend = backend
        self._row = Row

    def current(self) -> Any:
        """The backend's current key, as it is (give it back to :meth:`restore`)."""
        return self._backend.get_current_key()

    def enter(self, key: Any) -> None:
        """Make the user key ``key`` (what ``ctx.get_current_key()`` answers) current."""
        self._backend.set_current_key(self._row(key))

    def restore(self, current: Any) -> None:
        self._backend.set_current_key(current)


def state_key_switch(runtime_context: Any) -> StateKeySwitch | None:
    """The operator's :class:`StateKeySwitch` in process mode, ``None`` in thread mode (or
    if this PyFlink lacks the private members it needs)."""
    if execution_mode(runtime_context) != "process":
        return None
    backend = getattr(runtime_context, "_keyed_state_backend", None)
    if backend is None or not all(hasattr(backend, name)
                                  for name in ("set_current_key", "get_current_key")):
        return None
    return StateKeySwitch(backend)

"""What the JUnit tests look at inside the embedded Python (put on the path by surefire).

``thread_states`` counts CPython's thread states of Pemja, one per open
interpreter (MULTI_THREAD mode) plus Pemja's main thread: it shows whether an interpreter
was really finalized, not only forgotten by Java. ``track``/``alive`` watch a
long-term memory's gateway object through a weak reference, to show that no
interpreter keeps it after its memory was closed.
"""

from __future__ import annotations

import ctypes
import gc
import threading
import weakref

from flink_agents_ltm.bridge import java_gateway

_api = ctypes.pythonapi
_api.PyInterpreterState_Get.restype = ctypes.c_void_p
_api.PyInterpreterState_ThreadHead.restype = ctypes.c_void_p
_api.PyInterpreterState_ThreadHead.argtypes = [ctypes.c_void_p]
_api.PyThreadState_Next.restype = ctypes.c_void_p
_api.PyThreadState_Next.argtypes = [ctypes.c_void_p]

_tracked: dict[str, weakref.ref] = {}


def _all_thread_states() -> int:
    count = 0
    state = _api.PyInterpreterState_ThreadHead(_api.PyInterpreterState_Get())
    while state:
        count += 1
        state = _api.PyThreadState_Next(state)
    return count


def _started_by_python() -> int:
    return sum(1 for thread in threading.enumerate()
               if not isinstance(thread, threading._DummyThread)
               and thread is not threading.main_thread())


def thread_states() -> int:
    """The thread states of Pemja's interpreters (and Pemja's main thread): all of CPython's
    thread states but those of threads Python started (tqdm's monitor, pools of libraries).
    Measured until two readings agree, so a Python thread starting or ending between the
    two counts does not show."""
    previous = None
    while True:
        reading = _all_thread_states() - _started_by_python()
        if reading == previous:
            return reading
        previous = reading


def track(handle: str) -> None:
    """Start watching the gateway of an open memory."""
    _tracked[handle] = weakref.ref(java_gateway.gateway(handle))


def alive(handle: str) -> bool:
    """Whether anything still references the watched gateway."""
    gc.collect()
    return _tracked[handle]() is not None


"""An opt-in profile of the operator's Flink callbacks: where the time per event goes.

``FLINK_AGENTS_LTM_PROFILE=/some/dir/prefix`` in the environment of the Python workers (the
bench's job runs in the interpreter that submits it; a cluster's TaskManagers need it in
theirs) makes each agent subtask run ``cProfile`` around every ``process_element`` and
``on_timer`` it gets, and write ``prefix.<pid>.<subtask>.pstats`` (0600) when it closes::

    python -m pstats prefix.123.0.pstats   # then: sort tottime, stats 25

Only the time inside the callbacks is counted: what PyFlink spends around them (decoding
the input, encoding the outputs, Beam's bundles) is not, and is what is left of an event's
time when the callbacks' total is taken off. Unset (the default), nothing is profiled and the
cost is one ``None`` check per callback.
"""

from __future__ import annotations

import cProfile
import logging
import os
from collections.abc import Callable
from typing import TypeVar

ENV = "FLINK_AGENTS_LTM_PROFILE"

log = logging.getLogger(__name__)

T = TypeVar("T")


class CallbackProfile:
    """A ``cProfile.Profile`` switched on only while a callback runs."""

    def __init__(self, path: str):
        self.path = path
        self.callbacks = 0
        self._profile = cProfile.Profile()

    @classmethod
    def from_env(cls, subtask: int) -> CallbackProfile | None:
        prefix = os.environ.get(ENV, "").strip()
        if not prefix:
            return None
        return cls(f"{prefix}.{os.getpid()}.{subtask}.pstats")

    def run(self, call: Callable[[], T]) -> T:
        self.callbacks += 1
        self._profile.enable()
        try:
            return call()
        finally:
            self._profile.disable()

    def dump(self) -> None:
        """Write the stats (0600); a failure to write is logged, never raised."""
        try:
            descriptor = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            os.close(descriptor)
            self._profile.dump_stats(self.path)
        except OSError as error:
            log.warning("%s: could not write the callback profile to %s: %s (set it to a "
                        "writable path prefix)", ENV, self.path, error)
            return
        log.info("callback profile of %d callback(s) written to %s", self.callbacks, self.path)

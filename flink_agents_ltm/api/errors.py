"""The root of this project's errors, and the errors a job's author meets and may catch.

Every exception class of the package derives from :class:`FlinkAgentsLtmError` and keeps
its standard base (``class LongTermMemoryError(FlinkAgentsLtmError, RuntimeError)``), so
``except FlinkAgentsLtmError`` catches what this project raised and ``except RuntimeError``
still catches what it caught before; ``tests/test_error_root.py`` walks the package and
checks every class.

The errors below are the ones a user's code names: an action that failed, a durable call
that failed, timed out or cannot be replayed, durable calls that hang, a key selector that
raised, an unsupported apache-flink. The runtime raises them (and re-exports them from
the modules that raise them, their old homes); they are defined here so that a user's code
names them without importing the runtime. This module imports nothing of the package.
"""

from __future__ import annotations

__all__ = [
    "AgentActionError",
    "DurableCallError",
    "DurableCallTimeoutError",
    "DurableCallsStuckError",
    "DurableResultNotSerializableError",
    "FlinkAgentsLtmError",
    "KeySelectorError",
    "NonDeterministicReplayError",
    "UnsupportedAwaitableError",
    "UnsupportedFlinkVersionError",
]


class FlinkAgentsLtmError(Exception):
    """The root of every error this project defines (each also keeps its standard base)."""


class AgentActionError(FlinkAgentsLtmError, RuntimeError):
    """An action failed; the one-line message names the action, agent, key and input."""


class DurableCallError(FlinkAgentsLtmError, RuntimeError):
    """A durable call raised; the cause is chained."""


class DurableCallTimeoutError(FlinkAgentsLtmError, TimeoutError):
    """A durable async call did not finish within the configured timeout."""


class DurableCallsStuckError(FlinkAgentsLtmError, RuntimeError):
    """More durable calls hang past their timeout than the operator abandons threads."""


class DurableResultNotSerializableError(FlinkAgentsLtmError, TypeError):
    """A durable call returned a value that cannot be recorded in Flink state."""


class NonDeterministicReplayError(FlinkAgentsLtmError, RuntimeError):
    """A replayed action made a durable call other than the one recorded at its index."""


class UnsupportedAwaitableError(FlinkAgentsLtmError, TypeError):
    """An action awaited something that is not a durable call (``asyncio.sleep``, ...)."""


class KeySelectorError(FlinkAgentsLtmError, RuntimeError):
    """The key selector given to ``from_datastream`` raised (or returned ``None``)."""


class UnsupportedFlinkVersionError(FlinkAgentsLtmError, RuntimeError):
    """The installed apache-flink is not one of ``flink_compat.SUPPORTED_LINES`` (or is
    missing)."""

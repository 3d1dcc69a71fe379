"""The errors a job's author meets and may catch: an action that failed, a durable call that
timed out, durable calls that hang. The runtime raises them (and re-exports them from the
modules that raise them); they are defined here so that a user's code names them without
importing the runtime."""

from __future__ import annotations

__all__ = ["AgentActionError", "DurableCallTimeoutError", "DurableCallsStuckError"]


class AgentActionError(RuntimeError):
    """An action failed; the one-line message names the action, agent, key and input."""


class DurableCallTimeoutError(TimeoutError):
    """A durable async call did not finish within the configured timeout."""


class DurableCallsStuckError(RuntimeError):
    """More durable calls hang past their timeout than the operator abandons threads."""

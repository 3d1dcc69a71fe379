"""What the operator calls on its long-term memory: the runtime side of the contract.

``BaseLongTermMemory`` implements it, so a memory built by any factory fits.
Threading: all three methods run on the operator's mailbox thread.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from flink_agents_ltm.api.memory.observation import ActionMemoryOutcome


@runtime_checkable
class ActionMemory(Protocol):
    def switch_context(self, partition_key: Any, observation_id: str | None = None,
                       observation_suppressed: bool = False) -> None:
        """Before an action starts or resumes: sets it obtains are bound to this context."""

    def end_action(self, observation_id: str, completed: bool) -> ActionMemoryOutcome:
        """The action ended: its observations if it completed (dropped if it failed), and
        how many items it stored either way. Forgets the action."""

    def close(self) -> None:
        """The operator closes: give back shared clients."""

"""Memory as agent authors see it."""

from typing import TYPE_CHECKING, Any

from flink_agents_ltm.api.memory.errors import (
    EmptyPartitionKeyError,
    LongTermMemoryError,
    MailboxThreadError,
    UnboundMemorySetError,
)
from flink_agents_ltm.api.memory.items import MemorySetItem
from flink_agents_ltm.api.memory.long_term_memory import BaseLongTermMemory, MemorySet
from flink_agents_ltm.api.memory.observation import MemoryObservation, MemoryOp

if TYPE_CHECKING:  # its home is api.options, which imports this package: read on first use
    from flink_agents_ltm.api.options import LongTermMemoryOptions

__all__ = [
    "BaseLongTermMemory",
    "EmptyPartitionKeyError",
    "LongTermMemoryError",
    "LongTermMemoryOptions",
    "MailboxThreadError",
    "MemoryObservation",
    "MemoryOp",
    "MemorySet",
    "MemorySetItem",
    "UnboundMemorySetError",
]


def __getattr__(name: str) -> Any:
    """``LongTermMemoryOptions`` (declared in :mod:`flink_agents_ltm.api.options`)."""
    if name == "LongTermMemoryOptions":
        from flink_agents_ltm.api.options import LongTermMemoryOptions

        return LongTermMemoryOptions
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

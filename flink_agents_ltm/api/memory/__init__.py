"""Memory as agent authors see it."""

from flink_agents_ltm.api.memory.long_term_memory import (
    BaseLongTermMemory,
    EmptyPartitionKeyError,
    LongTermMemoryError,
    LongTermMemoryOptions,
    MailboxThreadError,
    MemorySet,
    MemorySetItem,
    UnboundMemorySetError,
)
from flink_agents_ltm.api.memory.observation import MemoryObservation, MemoryOp

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

"""The errors of long-term memory, and the two refusal messages Java repeats word for word."""

from __future__ import annotations

from flink_agents_ltm.api.errors import FlinkAgentsLtmError
from flink_agents_ltm.api.redaction import MaskedError

__all__ = [
    "EmptyPartitionKeyError",
    "LongTermMemoryError",
    "MailboxThreadError",
    "UnboundMemorySetError",
    "empty_key_message",
    "unbound_message",
]


class UnboundMemorySetError(FlinkAgentsLtmError, ValueError):
    """The memory set carries no partition key (it was never bound to an action).

    Mem0 drops a missing ``agent_id`` from its filters, which would widen the
    operation to every key of the job, so the operation is refused instead.
    """


class EmptyPartitionKeyError(FlinkAgentsLtmError, ValueError):
    """The partition key is the empty (or whitespace-only) string.

    ``""`` is a legal Flink key, but Mem0 cannot isolate it: an empty
    ``agent_id`` would widen the operation to every key of the job.
    """


class MailboxThreadError(FlinkAgentsLtmError, RuntimeError):
    """A mailbox-only operation was called from another thread."""


class LongTermMemoryError(MaskedError, RuntimeError):
    """The memory backend failed during an operation; the message says what was undone.
    Credentials in the message are masked when the error is built (:class:`MaskedError`)."""


def _refused(operation: str, set_name: str | None) -> str:
    target = f"memory set '{set_name}'" if set_name is not None else "long-term memory"
    return f"{operation} on {target} refused: "


def unbound_message(operation: str, set_name: str | None) -> str:
    return _refused(operation, set_name) + (
        "no partition key is bound. A memory set is bound to the key of the action that "
        "obtained it; obtain it inside a keyed action with "
        "ctx.long_term_memory.get_memory_set(name) (after the operator switched context) "
        "instead of building, unpickling or keeping it across actions. Refusing rather than "
        "widening the operation to every key of the job."
    )


def empty_key_message(operation: str, set_name: str | None) -> str:
    return _refused(operation, set_name) + (
        "the partition key is empty or whitespace-only. Mem0 cannot isolate such a key (it "
        "would widen the operation to every key of the job), so long-term memory is not "
        "available for it. Key the stream on a non-empty value, for example map empty keys to "
        "a placeholder in the key selector."
    )

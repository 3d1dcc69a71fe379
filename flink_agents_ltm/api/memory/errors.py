"""The errors of long-term memory, the two refusal messages Java repeats word for word, and
:func:`store_call`, which turns a store's failure into a :class:`LongTermMemoryError`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from flink_agents_ltm.api.errors import FlinkAgentsLtmError
from flink_agents_ltm.api.redaction import MaskedError, chainable

__all__ = [
    "EmptyPartitionKeyError",
    "LongTermMemoryError",
    "MailboxThreadError",
    "UnboundMemorySetError",
    "empty_key_message",
    "store_call",
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


def store_call(what: str, core: Callable[[], Any]) -> Any:
    """Run ``core``; a store failure becomes a :class:`LongTermMemoryError` saying ``what``
    failed, with secrets masked (the failure is chained only if its text holds none)."""
    try:
        return core()
    except LongTermMemoryError:
        raise
    except Exception as error:  # noqa: BLE001 - raised again as LongTermMemoryError
        raise LongTermMemoryError(
            f"{what} failed: {type(error).__name__}: {error}"
        ) from chainable(error)

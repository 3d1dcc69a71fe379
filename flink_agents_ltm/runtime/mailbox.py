"""The mailbox-thread rule lives with the memory contract (``api.memory.mailbox``)."""

from flink_agents_ltm.api.memory.mailbox import MailboxThreadCheck

__all__ = ["MailboxThreadCheck"]

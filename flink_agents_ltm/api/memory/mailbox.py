"""The mailbox-thread rule, written down and enforced.

Like Flink's ``TaskMailbox``, an operator has one thread that processes its
inputs and owns "the key currently in scope". Anything that reads that key
(obtaining or deleting a memory set, resolving resources, keyed state) must run
on that thread; work submitted to a worker pool must carry what it needs
instead. :class:`MailboxThreadCheck` is the callable the runtime hands to the
components that enforce the rule.
"""

from __future__ import annotations

import threading

from flink_agents_ltm.api.memory.errors import MailboxThreadError


class MailboxThreadCheck:
    """Raises :class:`MailboxThreadError` when called off the mailbox thread.

    The mailbox thread is the one that created the check, unless
    :meth:`rebind` moves it (PyFlink may open an operator on one thread and
    process on another).
    """

    def __init__(self) -> None:
        self._owner = threading.current_thread()
        self._ident = self._owner.ident

    @property
    def owner(self) -> threading.Thread:
        return self._owner

    def rebind(self) -> None:
        """Make the calling thread the mailbox thread."""
        self._owner = threading.current_thread()
        self._ident = self._owner.ident

    def is_mailbox_thread(self) -> bool:
        return threading.get_ident() == self._ident

    def __call__(self) -> None:
        if threading.get_ident() == self._ident:  # on every state access: the cheap test
            return
        raise MailboxThreadError(
            "memory-set management (get_memory_set, delete_memory_set) and resource lookup "
            f"must run on the operator's mailbox thread '{self._owner.name}', but were called "
            f"from '{threading.current_thread().name}'. Obtain the memory set in the action "
            "and pass the set to the worker: its add/get/search/delete run on any thread."
        )

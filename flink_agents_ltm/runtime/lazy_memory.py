"""The operator's long-term memory: built on first use, kept in the running action's context.

Building Mem0 and its embedding model takes seconds, so an agent that never
touches ``ctx.long_term_memory`` never builds it. Whatever builds it (the
default Mem0 memory, or ``agents.long-term-memory.factory``) must implement
:class:`~flink_agents_ltm.runtime.memory.action_memory.ActionMemory`; the
operator calls it on the mailbox thread only: ``switch_context`` before each
action starts and each time it resumes, ``end_action`` when a step ends, and
``items_stored_by`` (optional; ``BaseLongTermMemory`` has it) when a durable result
is recorded.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from flink_agents_ltm.api.memory.long_term_memory import BaseLongTermMemory
from flink_agents_ltm.api.memory.observation import ActionMemoryOutcome
from flink_agents_ltm.runtime.memory.action_memory import ActionMemory

_NOTHING = ActionMemoryOutcome()


class LazyActionMemory:
    def __init__(self, build: Callable[[], Any], source: str,
                 mailbox_check: Callable[[], None]):
        self._build = build
        self._source = source  # names the builder in messages
        self._check = mailbox_check
        self._memory: ActionMemory | None = None
        self._context: tuple[Any, str | None, bool] = (None, None, False)

    @property
    def built(self) -> bool:
        return self._memory is not None

    def enter(self, key: Any, observation_id: str, suppressed: bool) -> None:
        """An action starts or resumes: sets it obtains from now on are bound to it."""
        self._context = (key, observation_id, suppressed)
        if self._memory is not None:
            self._memory.switch_context(*self._context)

    def get(self) -> BaseLongTermMemory:
        if self._memory is None:
            self._check()
            memory = self._build()
            if not isinstance(memory, ActionMemory):
                raise TypeError(
                    f"the long-term memory built by {self._source} is a "
                    f"{type(memory).__qualname__}, which does not implement ActionMemory "
                    "(switch_context, end_action, close; see "
                    "flink_agents_ltm.runtime.memory.action_memory)")
            memory.switch_context(*self._context)
            self._memory = memory
        # Factories build BaseLongTermMemory subclasses; ActionMemory is what was checked.
        return self._memory  # type: ignore[return-value]

    def end_action(self, observation_id: str, completed: bool) -> ActionMemoryOutcome:
        """A step ended: its observations (if it completed) and the items it stored."""
        if self._memory is None:
            return _NOTHING
        return self._memory.end_action(observation_id, completed)

    def stored_items(self, observation_id: str) -> bool:
        """Whether the action with this observation id stored items so far (before it
        ends). A memory that cannot say (no ``items_stored_by``) is taken to have stored
        some: the key then keeps its input counter, which is always safe."""
        if self._memory is None:
            return False
        stored_by = getattr(self._memory, "items_stored_by", None)
        return True if not callable(stored_by) else stored_by(observation_id) > 0

    def close(self) -> None:
        if self._memory is not None:
            memory, self._memory = self._memory, None
            memory.close()

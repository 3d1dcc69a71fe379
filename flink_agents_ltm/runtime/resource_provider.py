"""Declared resources, built once per process and resolved by name.

Several operator subtasks of one job share a process in thread mode; building
a resource once per (agent class, name, descriptor) lets them share it too,
which matters for long-term memory: equal Mem0 providers share one Mem0
client, and an embedded store admits only one client per process.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from flink_agents_ltm.api.agent import Agent
from flink_agents_ltm.api.resources import (
    MissingResourceError,
    ResourceDescriptor,
    ResourceType,
)

_built: dict[tuple[str, str, str], Any] = {}
_lock = threading.Lock()


class ResourceProvider:
    """The agent's declared resources plus ``extra`` ones declared on the environment
    (``AgentsExecutionEnvironment.add_resource``); a name may be declared once."""

    def __init__(self, agent: Agent, mailbox_check: Callable[[], None],
                 extra: dict[str, tuple[ResourceType, ResourceDescriptor]] | None = None):
        self._agent_name = type(agent).__qualname__
        self._declared = agent.resources()
        for name, declared in (extra or {}).items():
            if name in self._declared:
                raise ValueError(f"resource '{name}' is declared both on agent "
                                 f"{self._agent_name} and on the environment; rename one")
            self._declared[name] = declared
        self._mailbox_check = mailbox_check

    def open(self) -> None:
        """The operator opens (mailbox thread): build and check what must fail at job start."""

    def close(self) -> None:
        """The operator closes: give back what :meth:`open` and lookups acquired."""

    def get(self, name: str, resource_type: ResourceType | str | None = None) -> Any:
        """The resource ``name`` (mailbox thread only: resources are not shared with
        worker threads unless the action hands them over)."""
        self._mailbox_check()
        return self.resolve(name, resource_type)

    def resolve(self, name: str, resource_type: ResourceType | str | None = None) -> Any:
        declared = self._declared.get(name)
        wanted = ResourceType(resource_type) if resource_type is not None else None
        if declared is None or (wanted is not None and declared[0] is not wanted):
            kind = wanted.value.replace("_", " ") if wanted else "resource"
            known = ", ".join(f"{n} ({t.value})" for n, (t, _) in self._declared.items())
            raise MissingResourceError(
                f"no {kind} named '{name}' is declared on agent {self._agent_name}; declared: "
                f"{known or 'none'}. Declare it with @chat_model_setup, "
                "@embedding_model_setup or @vector_store_setup, or with "
                "agents_env.add_resource(...)")
        _, descriptor = declared
        cache_key = (self._agent_name, name, repr(descriptor))
        with _lock:
            if cache_key not in _built:
                try:
                    _built[cache_key] = descriptor.build()
                except Exception as error:
                    raise RuntimeError(f"building resource '{name}' from {descriptor!r} failed: "
                                       f"{type(error).__name__}: {error}") from error
            return _built[cache_key]

    def for_long_term_memory(self, kind: str, name: str) -> Any:
        """The resource ``name`` of ``kind`` for the long-term memory factory, which adapts it
        to its store (any thread: the memory is built where it is first used)."""
        return self.resolve(name, ResourceType(kind))

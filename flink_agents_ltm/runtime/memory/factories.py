"""Which long-term memory an operator builds: registered factories, by name.

``agents.long-term-memory.factory`` names a registered factory (``mem0``, the
default, or ``in-memory``), an entry point of the group
``flink_agents_ltm.long_term_memory`` that another package registers, or
``module:callable``. A factory is called as
``factory(job_id, config, mailbox_check, resources=...)`` and must return a
:class:`~flink_agents_ltm.api.memory.long_term_memory.BaseLongTermMemory`
(which implements what the operator calls, :class:`ActionMemory`): every
guard of the contract then holds for it. Factories are looked up by import
path, so the runtime does not import the integrations that provide them.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from importlib.metadata import entry_points
from typing import Any

from flink_agents_ltm.api.memory.long_term_memory import BaseLongTermMemory, LongTermMemoryOptions

ENTRY_POINT_GROUP = "flink_agents_ltm.long_term_memory"
DEFAULT = "mem0"
REGISTERED = {
    "mem0": "flink_agents_ltm.integrations.mem0.long_term_memory:Mem0LongTermMemory.from_config",
    "in-memory": (
        "flink_agents_ltm.runtime.memory.in_memory_long_term_memory:"
        "InMemoryLongTermMemory.from_config"),
}


def resolve_factory(name: str | None) -> Callable[..., Any]:
    """The factory ``name`` stands for (the default when ``None``); raises ``ValueError``
    naming the registered ones when it stands for nothing."""
    name = name or DEFAULT
    target = REGISTERED.get(name)
    if target is None:
        found = entry_points(group=ENTRY_POINT_GROUP, name=name)
        if found:
            return next(iter(found)).load()
        target = name
    module_name, _, attribute = target.partition(":")
    if not module_name or not attribute:
        known = ", ".join(sorted(REGISTERED))
        raise ValueError(f"long-term memory factory {name!r} is neither registered ({known}, "
                         f"or an entry point of group '{ENTRY_POINT_GROUP}') nor "
                         "'module:callable'")
    try:
        found_object: Any = importlib.import_module(module_name)
        for part in attribute.split("."):
            found_object = getattr(found_object, part)
    except (ImportError, AttributeError) as error:
        raise ValueError(f"long-term memory factory {name!r} cannot be loaded: "
                         f"{type(error).__name__}: {error}") from error
    return found_object


def build_long_term_memory(name: str | None, job_id: str, config: Any,
                           mailbox_check: Callable[[], None],
                           resources: Callable[[str, str], Any] | None) -> BaseLongTermMemory:
    """Build the memory ``name`` stands for and check it fits the contract."""
    memory = resolve_factory(name)(job_id, config, mailbox_check, resources=resources)
    if not isinstance(memory, BaseLongTermMemory):
        raise TypeError(f"long-term memory factory {name or DEFAULT!r} returned a "
                        f"{type(memory).__name__}, not a BaseLongTermMemory: subclass it so "
                        "that every guard of the memory contract holds")
    memory.set_audit_log(LongTermMemoryOptions.audit_log(config))  # every factory's alike
    return memory

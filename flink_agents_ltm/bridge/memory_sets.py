"""Rebuild a Java ``MemorySet`` on the Python side, binding included.

Java's ``getMemorySet`` never enters Python: it stamps the action context on a
Java object. Each forwarded call rebuilds the Python set from all four fields,
so the Python guards see exactly what Java bound. ``partition_key`` has no
default: a Java wrapper that forgets it fails loudly instead of sending an
unbound set.
"""

from __future__ import annotations

from flink_agents_ltm.api.memory.long_term_memory import BaseLongTermMemory, MemorySet


def to_python_memory_set(
    name: str,
    partition_key: str | None,
    observation_id: str | None = "",
    observation_suppressed: bool = False,
    ltm: BaseLongTermMemory | None = None,
) -> MemorySet:
    return MemorySet(
        name=name,
        partition_key=partition_key,
        observation_id=observation_id,
        observation_suppressed=bool(observation_suppressed),
        ltm=ltm,
    )

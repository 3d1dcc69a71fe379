"""The Python side of the Java bridge: what Java's LTM wrapper calls through Pemja."""

from flink_agents_ltm.bridge.memory_sets import to_python_memory_set

__all__ = ["to_python_memory_set"]

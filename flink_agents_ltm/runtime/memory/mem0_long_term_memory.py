"""The public path of :class:`Mem0LongTermMemory` named by the design contract.

The implementation lives with the rest of Mem0 in
``flink_agents_ltm.integrations.mem0.long_term_memory``; this module keeps the
contract's import path working. It is the one place where ``runtime`` imports
``integrations`` (the layering test allows exactly this import).
"""

from flink_agents_ltm.integrations.mem0.long_term_memory import Mem0LongTermMemory

__all__ = ["Mem0LongTermMemory"]

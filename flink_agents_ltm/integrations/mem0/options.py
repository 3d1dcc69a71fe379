"""The options the Mem0 long-term memory reads, as one group beside it: :data:`Mem0Options`.

They are declared in :mod:`flink_agents_ltm.api.options`, as
``LongTermMemoryOptions.Mem0``, and not here: a job's configuration
(``AgentsConfiguration``, in the api) knows and type-checks every key before any
integration is loaded, and the api imports no integration. This module is where the Mem0
implementation takes them from; the neutral options it also reads (limits, ttl, base folder,
vector store) stay :class:`~flink_agents_ltm.api.options.LongTermMemoryOptions`'.
"""

from __future__ import annotations

from flink_agents_ltm.api.options import LongTermMemoryOptions

__all__ = ["Mem0Options"]

#: ``CHAT_MODEL_SETUP``, ``EMBEDDING_MODEL_SETUP``, ``INFER``, ``SEARCH_THRESHOLD`` and
#: ``VECTOR_STORE`` (the neutral option of that name, under Apache Flink Agents' Mem0 name).
Mem0Options = LongTermMemoryOptions.Mem0

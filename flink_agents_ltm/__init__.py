"""Event-driven agents in PyFlink keyed operators, with memory they can trust."""

__version__ = "0.1.0"

from typing import Any as _Any

from flink_agents_ltm.api.operator_seam import register_stream_builder as _register
from flink_agents_ltm.api.redaction import mask_logs as _mask_logs

# Every log record of ours and Mem0's has its credentials masked (api/redaction.py).
_mask_logs()


def _runtime_stream(*args: _Any) -> _Any:
    """The runtime's agent operator, imported when a job is built (PyFlink is heavy)."""
    from flink_agents_ltm.runtime.agent_operator import build_agent_stream

    return build_agent_stream(*args)


# The api builds operators through this seam and never imports the runtime.
_register(_runtime_stream)

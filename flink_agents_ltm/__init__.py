"""Event-driven agents in PyFlink keyed operators, with memory they can trust."""

__version__ = "0.1.0"

from flink_agents_ltm.api.redaction import mask_logs as _mask_logs

# Every log record of ours and Mem0's has its credentials masked (api/redaction.py).
_mask_logs()

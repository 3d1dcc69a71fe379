"""The LLM Mem0 gets when no chat model is configured.

Mem0 insists on an LLM at construction (its default, OpenAI, fails without a
key). With ``infer=False`` it never calls it; if something does, the error
says what to configure instead of trying the network.
"""

from __future__ import annotations

from flink_agents_ltm.integrations.mem0.environment import import_mem0

import_mem0()
from mem0.llms.base import LLMBase  # noqa: E402


class NoChatModel(LLMBase):
    def generate_response(self, messages, tools=None, tool_choice="auto", **kwargs):
        raise RuntimeError(
            "long-term memory has no chat model: set "
            "LongTermMemoryOptions.CHAT_MODEL_SETUP to let Mem0 extract memories "
            "(infer=True); without one, items are stored as given (infer=False)"
        )

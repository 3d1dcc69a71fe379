"""The scripted model of react_mcp_job (a module of its own: the TaskManagers' workers
import it by name; the job ships this folder with `flink run -pyfs`)."""

import re


def respond(messages, tools):
    """Ask for ``lookup_order`` of the order the question names, then answer with the
    question and the tool's answer: ``"c3 O-15 => {...}"``."""
    question = next(m.content for m in messages if m.role == "user")
    last = messages[-1]
    if last.role == "tool":
        return f"{question} => {last.content}"
    order = re.search(r"\bO-\d+\b", question).group(0)
    return {"tool_calls": [{"name": "lookup_order", "arguments": {"order_id": order}}]}

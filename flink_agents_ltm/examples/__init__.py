"""Runnable examples, each ``python -m flink_agents_ltm.examples.<name>``: first_agent (the
first agent of docs/quickstart.md), customer_memory (``make demo``), support_chat
(``ctx.chat`` with tools on the scripted model), recovery (one injected failure)."""

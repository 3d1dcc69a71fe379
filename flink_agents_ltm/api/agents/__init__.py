"""Built-in agents: :class:`~flink_agents_ltm.api.agents.react_agent.ReActAgent`."""

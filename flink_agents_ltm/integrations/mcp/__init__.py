"""MCP servers as tool and prompt sources (the ``mcp`` extra): see :mod:`.server`."""

from flink_agents_ltm.integrations.mcp.server import (
    MCPServer,
    MCPServerError,
    MCPTool,
    MCPToolError,
    MCPToolNotFoundError,
)

__all__ = ["MCPServer", "MCPServerError", "MCPTool", "MCPToolError", "MCPToolNotFoundError"]

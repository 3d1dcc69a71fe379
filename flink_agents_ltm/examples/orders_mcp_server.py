"""A small MCP server for the MCP examples and tests: an order-lookup tool that counts
its calls, and a prompt.

.. code-block:: console

    python -m flink_agents_ltm.examples.orders_mcp_server               # stdio
    python -m flink_agents_ltm.examples.orders_mcp_server --http 8765   # http://127.0.0.1:8765/mcp

Tools: ``lookup_order(order_id)`` (the order's status; each call appends a line
to the count file, so a test counts the calls the server executed, across
restarts), ``slow(seconds)`` (sleeps: a hanging tool), ``fail(message)`` (a tool
error, open to all) and ``server_pid()``. Prompt: ``order_reply(order_id, tone)``.

With ``--token-env NAME`` every tool call must carry ``Authorization: Bearer
<token>`` (HTTP), the token read from the variable ``NAME`` (never from argv);
the server answers whether the header it saw matched, never the header. Needs
the ``mcp`` extra: ``pip install 'flink-agents-ltm[mcp]'``.
"""

# No `from __future__ import annotations`: the SDK reads the tools' annotations, and
# Context is imported inside build_server (the module imports without the SDK).

import argparse
import hmac
import os
import time
from pathlib import Path
from typing import Any

ORDERS: dict[str, dict[str, Any]] = {
    "A-1001": {"status": "shipped", "carrier": "DHL", "eta": "2026-12-09"},
    "A-1002": {"status": "packing", "carrier": None, "eta": "2026-12-11"},
    "A-1003": {"status": "delivered", "carrier": "UPS", "eta": None},
}


def build_server(count_file: str | None = None, token: str | None = None) -> Any:
    from mcp.server.mcpserver import Context, MCPServer
    from mcp.server.mcpserver.exceptions import ToolError
    from mcp.server.mcpserver.prompts.base import AssistantMessage, Message, UserMessage

    server = MCPServer("orders", instructions="Order lookups for the support agent.",
                       log_level="WARNING")

    def authorize(ctx: Context) -> None:
        if token is None:
            return
        seen = (ctx.headers or {}).get("authorization", "")
        if not hmac.compare_digest(seen.encode(), f"Bearer {token}".encode()):
            raise ToolError("unauthorized: this server wants Authorization: Bearer "
                                  "<token>")

    def count(order_id: str) -> None:
        if count_file is not None:  # private (0600), appended by one write per call
            fd = os.open(count_file, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            try:
                os.write(fd, (order_id + "\n").encode())
            finally:
                os.close(fd)

    @server.tool()
    def lookup_order(order_id: str, ctx: Context) -> dict[str, Any]:
        """The status, carrier and expected delivery date of an order."""
        authorize(ctx)
        count(order_id)
        order = ORDERS.get(order_id)
        if order is None:
            return {"order_id": order_id, "status": "unknown"}
        return {"order_id": order_id, **order}

    @server.tool()
    def slow(seconds: float, ctx: Context) -> str:
        """Sleep for a while (a tool that hangs)."""
        authorize(ctx)
        time.sleep(seconds)
        return f"slept {seconds:g} s"

    @server.tool()
    def fail(message: str) -> str:
        """Always fails with the message."""
        raise ToolError(message)

    @server.tool()
    def server_pid() -> int:
        """The server's process id."""
        return os.getpid()

    @server.prompt()
    def order_reply(order_id: str, tone: str = "friendly") -> list[Message]:
        """How to answer a customer asking about an order."""
        return [UserMessage(f"Answer in a {tone} tone. The customer asks about order "
                            f"{order_id}; look it up with lookup_order first."),
                AssistantMessage("I will look the order up before I answer.")]

    return server


def count_calls(count_file: str | Path, order_id: str | None = None) -> int:
    """How many ``lookup_order`` calls the server executed (of ``order_id``)."""
    try:
        lines = Path(count_file).read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        return 0
    return sum(1 for line in lines if order_id is None or line == order_id)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--http", type=int, metavar="PORT",
                        help="serve streamable HTTP on 127.0.0.1:PORT/mcp (default: stdio)")
    parser.add_argument("--count-file", help="append each lookup_order call to this file")
    parser.add_argument("--token-env", metavar="NAME",
                        help="require Authorization: Bearer <the value of variable NAME>")
    options = parser.parse_args(argv)
    token = os.environ.get(options.token_env) if options.token_env else None
    if options.token_env and not token:
        parser.error(f"--token-env {options.token_env}: the variable is not set")
    server = build_server(options.count_file, token)
    if options.http is None:
        server.run("stdio")
    else:
        server.run("streamable-http", host="127.0.0.1", port=options.http)


if __name__ == "__main__":
    main()

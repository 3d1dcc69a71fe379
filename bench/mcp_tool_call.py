"""Cost of one MCP tool call made by an action, against the example order server
(``flink_agents_ltm.examples.orders_mcp_server``) as a real process, over stdio and over
streamable HTTP on 127.0.0.1, side by side in one run:

* ``SDK direct``: the ``mcp`` SDK's own session, awaited in one event loop (the floor);
* ``MCPServer.call_tool``: the resource from a plain thread (the loop-thread bridge);
* ``durable, 1 per input``: an action on the in-memory harness (the real engine) that
  makes the call with ``ctx.durable_execute_async``: the call runs, is recorded in action
  state and the action goes on; one input per key, so the input's own cost (its run
  record, state, output) is in it;
* ``durable, 10 per input``: the same action making 10 calls in a row, per call: the
  durable call's own cost.

Each path runs ``--rounds`` times in turn (a session of its own each round, its start
not timed) and the median round counts, so load that comes and goes falls on all three.
The ratio is each row's time per call over the SDK's.

    python -m bench.mcp_tool_call [--calls 300] [--rounds 3] [--transports stdio http]
"""

from __future__ import annotations

import argparse
import asyncio
import socket
import statistics
import subprocess
import sys
import time
from functools import partial
from typing import Any

from flink_agents_ltm.api.agent import Agent, action
from flink_agents_ltm.api.events import InputEvent, OutputEvent
from flink_agents_ltm.api.resources import ResourceDescriptor, ResourceType
from flink_agents_ltm.integrations.mcp import MCPServer
from flink_agents_ltm.runtime.harness import AgentHarness

CALLS = 300
SERVER = [sys.executable, "-m", "flink_agents_ltm.examples.orders_mcp_server"]
ARGUMENTS = {"order_id": "A-1001"}


class LookupAgent(Agent):
    @action(InputEvent)
    async def look_up(event, ctx):
        _, calls = event.input
        orders = ctx.get_resource("orders", ResourceType.MCP_SERVER)
        found = ""
        for _ in range(calls):
            found = await ctx.durable_execute_async(orders.call_tool, "lookup_order",
                                                    ARGUMENTS)
        ctx.send_event(OutputEvent(len(found)))


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_http() -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    process = subprocess.Popen([*SERVER, "--http", str(port)], stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return process, f"http://127.0.0.1:{port}/mcp"
        except OSError:
            time.sleep(0.05)
    process.kill()
    raise RuntimeError("the order server did not listen within 60 s")


def sdk_direct_ms(arguments: dict[str, Any], calls: int) -> float:
    from mcp import ClientSession, StdioServerParameters, stdio_client
    from mcp.client.streamable_http import streamable_http_client

    async def run() -> float:
        if "endpoint" in arguments:
            transport = streamable_http_client(arguments["endpoint"])
        else:
            transport = stdio_client(StdioServerParameters(command=arguments["command"],
                                                           args=arguments["args"]))
        async with transport as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            for _ in range(min(20, calls)):
                await session.call_tool("lookup_order", ARGUMENTS)
            started = time.perf_counter()
            for _ in range(calls):
                await session.call_tool("lookup_order", ARGUMENTS)
            return (time.perf_counter() - started) / calls * 1000

    return asyncio.run(run())


def resource_ms(arguments: dict[str, Any], calls: int) -> float:
    with MCPServer(**arguments) as orders:
        for _ in range(min(20, calls)):
            orders.call_tool("lookup_order", ARGUMENTS)
        started = time.perf_counter()
        for _ in range(calls):
            orders.call_tool("lookup_order", ARGUMENTS)
        return (time.perf_counter() - started) / calls * 1000


def harness_ms(arguments: dict[str, Any], calls: int, per_input: int = 1) -> float:
    harness = AgentHarness(
        LookupAgent(), key_selector=lambda r: r[0], sync=True,
        resources={"orders": (ResourceType.MCP_SERVER,
                              ResourceDescriptor(MCPServer, **arguments))})
    try:
        for n in range(min(20, calls)):
            harness.process_element((f"warm-{n}", 1))
        inputs = max(1, calls // per_input)
        started = time.perf_counter()
        for n in range(inputs):
            harness.process_element((f"key-{n}", per_input))
        elapsed = time.perf_counter() - started
        assert len(harness.outputs) == min(20, calls) + inputs, harness.outputs[-3:]
        return elapsed / (inputs * per_input) * 1000
    finally:
        harness.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=CALLS, help="timed calls per row")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of each path, in turn")
    parser.add_argument("--transports", nargs="+", default=["stdio", "http"],
                        choices=["stdio", "http"])
    args = parser.parse_args()
    print(f"{args.calls} calls of lookup_order to the example order server, median of "
          f"{args.rounds} rounds")
    print(f"{'transport':<10}{'path':<24}{'ms/call':>10}{'vs SDK':>9}")
    for transport in args.transports:
        process = None
        if transport == "http":
            process, endpoint = start_http()
            arguments: dict[str, Any] = {"endpoint": endpoint}
        else:
            arguments = {"command": SERVER[0], "args": SERVER[1:]}
        try:
            paths = {"SDK direct": sdk_direct_ms, "MCPServer.call_tool": resource_ms,
                     "durable, 1 per input": harness_ms,
                     "durable, 10 per input": partial(harness_ms, per_input=10)}
            rounds: dict[str, list[float]] = {path: [] for path in paths}
            for _ in range(args.rounds):
                for path, timed in paths.items():
                    rounds[path].append(timed(arguments, args.calls))
            rows = {path: statistics.median(times) for path, times in rounds.items()}
        finally:
            if process is not None:
                process.kill()
                process.wait()
        base = rows["SDK direct"]
        for path, ms in rows.items():
            print(f"{transport:<10}{path:<24}{ms:>10.2f}{ms / base:>8.2f}x")


if __name__ == "__main__":
    main()

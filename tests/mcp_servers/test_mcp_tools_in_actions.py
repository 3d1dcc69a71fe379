"""MCP tools called by ``ctx.chat`` in an agent on the in-memory harness (the real engine),
against the example order server as a real process: each tool call is a durable call,
recorded in action state, so a restored run does not call the tool again (counted by the
server); with the action-state store on, neither does a run restored from a checkpoint
taken before the call. Errors and a hanging tool fail the action with one line naming
the server and the tool, and the operator goes on with other keys."""

import logging
import re
import threading

import pytest

from flink_agents_ltm.api.agent import Agent, action
from flink_agents_ltm.api.events import InputEvent, OutputEvent
from flink_agents_ltm.api.resources import ResourceDescriptor, ResourceType
from flink_agents_ltm.examples.orders_mcp_server import count_calls
from flink_agents_ltm.integrations.chat_models.scripted import ScriptedChatModelSetup
from flink_agents_ltm.integrations.mcp import MCPServer
from flink_agents_ltm.runtime.keyed_runs import AgentActionError
from flink_agents_ltm.runtime.resource_provider import ResourceError
from flink_agents_ltm.testing import AgentHarness
from tests.mcp_servers.conftest import TOKEN, free_port, order_id, stdio_arguments


def respond(messages, tools):
    """The model: look the order up with the tool the user names, then quote its answer."""
    last = messages[-1]
    if last.role == "tool":
        return f"Here is what I found: {last.content}"
    tool, argument = re.fullmatch(r"(\w+) (.+)", last.content).groups()
    arguments = {"seconds": float(argument)} if tool == "slow" else \
        {"message": argument} if tool == "fail" else {"order_id": argument}
    return {"tool_calls": [{"name": tool, "arguments": arguments}]}


class OrdersAgent(Agent):
    @action(InputEvent)
    async def answer(event, ctx):
        key, question = event.input
        orders = ctx.get_resource("orders", ResourceType.MCP_SERVER)
        reply = await ctx.chat(question, model="assistant", tools=orders.tools())
        ctx.send_event(OutputEvent((key, reply.content)))


def resources(server_arguments):
    return {"orders": (ResourceType.MCP_SERVER,
                       ResourceDescriptor(MCPServer, **server_arguments)),
            "assistant": (ResourceType.CHAT_MODEL,
                          ResourceDescriptor(ScriptedChatModelSetup, respond=respond))}


def harness(server_arguments, config=None, snapshot=None, **kwargs):
    return AgentHarness(OrdersAgent(), key_selector=lambda r: r[0], config=config,
                        resources=resources(server_arguments), snapshot=snapshot, **kwargs)


def step(h):
    """Run the oldest pending call, and let the parked action go on."""
    h.pool.run()
    h.advance(0.01)


def finish(h):
    for _ in range(10):
        if not h.pool.pending():
            break
        step(h)
    return h.outputs


@pytest.fixture(params=["stdio", "http"])
def server(request, count_file):
    """MCPServer arguments of either transport, and the file its server counts calls in."""
    if request.param == "stdio":
        return {**stdio_arguments(count_file), "timeout": 20}, count_file
    http = request.getfixturevalue("http_server")
    return {"endpoint": http.endpoint, "bearer_token": TOKEN, "timeout": 20}, http.count_file


def test_a_run_restored_after_the_tool_call_replays_it_without_calling_the_server(server):
    arguments, calls = server
    wanted = order_id()
    first = harness(arguments)
    first.process_element(("alice", f"lookup_order {wanted}"))
    step(first)  # the model asks for the tool
    step(first)  # the tool runs on the server: recorded
    assert [c.call.name for c in first.pool.pending()] == ["chat model 'assistant'"]
    snapshot = first.snapshot()  # the checkpoint; then the process dies
    first.close()
    assert count_calls(calls, wanted) == 1

    restored = harness(arguments, snapshot=snapshot)
    restored.advance(0.01)
    outputs = finish(restored)
    restored.close()
    assert count_calls(calls, wanted) == 1  # the server saw one call, not two
    assert outputs == [("alice", "Here is what I found: {\n"
                                 f'  "order_id": "{wanted}",\n  "status": "unknown"\n}}')]
    assert restored.stats.durable_calls_replayed == 2  # the first model call and the tool


@pytest.mark.parametrize("store", ["sqlite", "none"])
def test_with_the_action_state_store_a_tool_call_after_the_checkpoint_is_not_made_again(
        count_file, tmp_path, store):
    arguments = {**stdio_arguments(count_file), "timeout": 20}
    config = {"agents.action-state.store": store, "agents.job-id": "orders-job",
              "long-term-memory.embedded.base-dir": str(tmp_path)}
    wanted = order_id()
    first = harness(arguments, config)
    snapshot = first.snapshot()  # the checkpoint, taken before the input arrives
    first.process_element(("bob", f"lookup_order {wanted}"))
    assert len(finish(first)) == 1
    first.close()  # the process dies before the next checkpoint
    restored = harness(arguments, config, snapshot=snapshot)
    restored.process_element(("bob", f"lookup_order {wanted}"))  # the source replays it
    outputs = finish(restored)
    restored.close()
    assert len(outputs) == 1 and wanted in outputs[0][1]
    assert count_calls(count_file, wanted) == (1 if store == "sqlite" else 2)


def test_a_tool_error_fails_the_action_naming_server_and_tool_and_other_keys_go_on(
        server, caplog):
    arguments, _ = server
    config = {"agents.error-handling": "ignore", "agents.job-id": "orders-errors"}
    h = harness(arguments, config)
    h.process_element(("carol", "fail the warehouse is closed"))
    with caplog.at_level(logging.WARNING):
        finish(h)
    assert h.outputs == []
    assert ("tool 'fail' of MCP server 'orders' called by chat model 'assistant' failed: "
            "MCPToolError: MCP server 'orders' tool 'fail' answered an error: Error executing "
            "tool fail: the warehouse is closed") in caplog.text
    wanted = order_id()
    h.process_element(("dave", f"lookup_order {wanted}"))
    assert len(finish(h)) == 1 and h.outputs[0][0] == "dave"
    h.close()
    assert TOKEN not in caplog.text


def test_a_hanging_tool_hits_the_durable_timeout_naming_server_and_tool(count_file):
    arguments = {**stdio_arguments(count_file), "timeout": 20}
    h = harness(arguments, {"agents.durable-async.timeout-ms": 1000})
    h.process_element(("erin", "slow 3"))
    step(h)  # the model asks for the hanging tool
    [hanging] = h.pool.pending()
    worker = threading.Thread(target=h.pool.run, args=(hanging,))
    worker.start()  # the call runs on "its worker thread", as on the operator's pool
    with pytest.raises(AgentActionError) as failed:
        h.advance(1.5)  # past the durable timeout while the server still sleeps
    worker.join(10)
    assert str(failed.value).endswith(
        "ToolCallTimeoutError: tool 'slow' of MCP server 'orders' called by chat model "
        "'assistant' timed out: durable call tool 'slow' did not finish within 1 s "
        "(agents.durable-async.timeout-ms)")
    assert "\n" not in str(failed.value)
    h.close()


def test_a_server_down_at_open_fails_the_operator_at_open_in_one_line():
    endpoint = f"http://127.0.0.1:{free_port()}/mcp"
    with pytest.raises(ResourceError) as failed:
        harness({"endpoint": endpoint, "bearer_token": TOKEN, "timeout": 5})
    message = str(failed.value)
    assert message.startswith("opening resource 'orders' of agent OrdersAgent from "
                              f"ResourceDescriptor({MCPServer.__module__}.MCPServer, ")
    assert message.endswith(f"failed: MCPServerError: MCP server {endpoint} cannot be reached: "
                            "ConnectError: All connection attempts failed")
    assert "bearer_token='***'" in message and TOKEN not in message and "\n" not in message


def test_with_connect_at_open_off_a_server_down_at_open_fails_each_action_until_it_is_up(
        tmp_path, caplog):
    from tests.mcp_servers.conftest import HttpServer

    server = HttpServer(free_port(), tmp_path / "calls")
    arguments = {"endpoint": server.endpoint, "bearer_token": TOKEN, "timeout": 20,
                 "connect_at_open": False}
    h = harness(arguments, {"agents.error-handling": "ignore", "agents.job-id": "down-at-open"})
    with caplog.at_level(logging.WARNING):
        h.process_element(("frank", "lookup_order A-1001"))  # opened while the server is down
        finish(h)
    assert h.outputs == []
    assert (f"MCP server {server.endpoint} cannot be reached: ConnectError: All connection "
            f"attempts failed (wanted: its tools)") in caplog.text
    server.start()
    try:
        h.process_element(("grace", "lookup_order A-1001"))
        assert len(finish(h)) == 1 and h.outputs[0][0] == "grace"
    finally:
        h.close()
        server.kill()
    assert count_calls(server.count_file, "A-1001") == 1
    assert TOKEN not in caplog.text


def test_a_react_agent_offers_an_mcp_servers_tools_by_its_name_and_calls_each_once(
        count_file, tmp_path):
    """``ReActAgent(tools=["orders"])``: the declared server's tools, looked up when the
    action runs (they do not travel with the agent), called once per input even when the
    run is restored from a checkpoint taken before the call (action-state store on)."""
    from flink_agents_ltm.api.agents.react_agent import ReActAgent

    def react(snapshot=None):
        return AgentHarness(
            ReActAgent(chat_model="assistant", tools=["orders"]), key_selector=lambda r: r,
            config={"agents.action-state.store": "sqlite", "agents.job-id": "react-orders",
                    "long-term-memory.embedded.base-dir": str(tmp_path)},
            resources=resources({**stdio_arguments(count_file), "timeout": 20}),
            snapshot=snapshot)

    wanted = order_id()
    first = react()
    snapshot = first.snapshot()
    first.process_element(f"lookup_order {wanted}")
    [answer] = finish(first)
    first.close()
    assert answer.startswith("Here is what I found") and wanted in answer
    restored = react(snapshot)
    restored.process_element(f"lookup_order {wanted}")  # the source replays it
    assert finish(restored) == [answer]
    restored.close()
    assert count_calls(count_file, wanted) == 1


def test_a_react_agent_refuses_a_tool_name_given_twice():
    from flink_agents_ltm.api.agents.react_agent import ReActAgent

    with pytest.raises(ValueError, match=r"names MCP servers by non-empty, distinct names"):
        ReActAgent(chat_model="assistant", tools=["orders", "orders"])

"""An MCP server as a resource, against the example order server as a real process, over
stdio and over streamable HTTP on 127.0.0.1: its tools and prompts, calls with arguments,
its errors (one line naming the server and the tool, no secret), and its secrets."""

import logging
import os
import signal
import sys
import threading
import time

import pytest

from flink_agents_ltm.api.chat_models import MessageRole
from flink_agents_ltm.api.prompts import Prompt, PromptPlaceholderError
from flink_agents_ltm.api.resources import ResourceDescriptor
from flink_agents_ltm.api.tools import Tool
from flink_agents_ltm.examples.orders_mcp_server import count_calls
from flink_agents_ltm.integrations.mcp import (
    MCPServer,
    MCPServerError,
    MCPToolError,
    MCPToolNotFoundError,
)
from tests.mcp_servers.conftest import TOKEN, free_port, order_id, stdio_arguments


@pytest.fixture(params=["stdio", "http"])
def server(request, count_file):
    """An open MCPServer over either transport, and the file its server counts calls in."""
    if request.param == "stdio":
        opened = MCPServer(**stdio_arguments(count_file), timeout=20)
        calls = count_file
    else:
        http = request.getfixturevalue("http_server")
        opened = MCPServer(endpoint=http.endpoint, bearer_token=TOKEN, timeout=20)
        calls = http.count_file
    opened.open()
    yield opened, calls
    opened.close()


def test_its_tools_are_tools_with_the_servers_names_descriptions_and_schemas(server):
    orders, _ = server
    tools = orders.tools()
    assert [t.name for t in tools] == ["lookup_order", "slow", "fail", "server_pid"]
    lookup = orders.tool("lookup_order")
    assert isinstance(lookup, Tool) and lookup.origin == "MCP server 'orders'"
    assert lookup.description == "The status, carrier and expected delivery date of an order."
    assert lookup.parameters["properties"]["order_id"]["type"] == "string"
    assert lookup.parameters["required"] == ["order_id"]
    assert [t.name for t in orders.tools(["fail", "slow"])] == ["fail", "slow"]
    with pytest.raises(MCPToolNotFoundError, match="MCP server 'orders' has no tool 'nope'; "
                                                   "its tools: lookup_order, slow, fail"):
        orders.tool("nope")


def test_a_call_with_arguments_runs_on_the_server_once_and_answers_its_text(server):
    orders, calls = server
    wanted = order_id()
    answer = orders.tool("lookup_order").invoke({"order_id": wanted})
    assert '"status": "unknown"' in answer and wanted in answer
    assert '"carrier": "DHL"' in orders.call_tool("lookup_order", {"order_id": "A-1001"})
    assert count_calls(calls, wanted) == 1


def test_arguments_that_do_not_fit_the_schema_are_refused_before_the_call(server):
    orders, _ = server
    lookup = orders.tool("lookup_order")
    assert lookup.argument_error({"order_id": 7}) == (
        "bad arguments for tool 'lookup_order': argument 'order_id': 7 is not of type 'string'")
    assert "'order_id' is a required property" in lookup.argument_error({})
    with pytest.raises(ValueError, match="not of type 'string'"):
        lookup.invoke({"order_id": 7})
    assert lookup.argument_error({"order_id": "A-1"}) is None


def test_a_prompt_with_arguments_becomes_a_prompt_whose_missing_arguments_are_placeholders(
        server):
    orders, _ = server
    assert orders.prompt_names() == ["order_reply"]
    reply = orders.prompt("order_reply", tone="formal")
    assert isinstance(reply, Prompt) and reply.name == "order_reply"
    assert reply.placeholders == ("order_id",)
    messages = reply.format_messages(order_id="A-1002")
    assert [m.role for m in messages] == [MessageRole.USER, MessageRole.ASSISTANT]
    assert messages[0].content == ("Answer in a formal tone. The customer asks about order "
                                   "A-1002; look it up with lookup_order first.")
    with pytest.raises(PromptPlaceholderError, match=r"\{order_id\}"):
        reply.format_messages()
    rendered = orders.prompt("order_reply", order_id="A-1", tone="terse")
    assert rendered.placeholders == ()
    assert "terse tone" in rendered.format_string()


def test_a_tool_error_is_one_line_naming_the_server_and_the_tool(server):
    orders, _ = server
    with pytest.raises(MCPToolError) as failed:
        orders.call_tool("fail", {"message": "the warehouse is closed"})
    assert str(failed.value) == ("MCP server 'orders' tool 'fail' answered an error: Error "
                                 "executing tool fail: the warehouse is closed")
    assert orders.call_tool("server_pid").isdigit()  # the session goes on


def test_a_hanging_tool_is_bounded_by_the_servers_timeout_and_the_session_goes_on(count_file):
    with MCPServer(**stdio_arguments(count_file), timeout=1.5) as orders:
        started = time.monotonic()
        with pytest.raises(MCPServerError, match=r"^MCP server 'orders' tool 'slow' did not "
                                                 r"answer within 1.5 s \(MCPServer timeout=\)$"):
            orders.call_tool("slow", {"seconds": 30})
        assert time.monotonic() - started < 5
        assert orders.call_tool("server_pid").isdigit()


def test_a_stdio_server_killed_mid_call_fails_the_call_and_the_next_call_starts_it_again(
        count_file):
    with MCPServer(**stdio_arguments(count_file), timeout=20) as orders:
        pid = int(orders.call_tool("server_pid"))
        threading.Timer(0.5, os.kill, (pid, signal.SIGKILL)).start()
        with pytest.raises(MCPServerError) as failed:
            orders.call_tool("slow", {"seconds": 10})
        assert str(failed.value) == ("MCP server 'orders' tool 'slow' failed: the connection "
                                     "broke (MCPError: Connection closed); the next call "
                                     "connects again")
        assert int(orders.call_tool("server_pid")) != pid


def test_an_http_server_killed_mid_call_fails_the_call_and_a_restarted_one_serves_again(
        own_http_server):
    with MCPServer(endpoint=own_http_server.endpoint, bearer_token=TOKEN, timeout=20) as orders:
        threading.Timer(0.5, own_http_server.kill).start()
        with pytest.raises(MCPServerError) as failed:
            orders.call_tool("slow", {"seconds": 10})
        message = str(failed.value)
        assert message.startswith("MCP server 'orders' tool 'slow' failed: the connection "
                                  "broke (")
        assert "\n" not in message and TOKEN not in message
        own_http_server.start()
        assert orders.call_tool("server_pid").isdigit()


def test_a_server_down_at_open_is_one_line_naming_it():
    endpoint = f"http://127.0.0.1:{free_port()}/mcp"
    down = MCPServer(endpoint=endpoint, bearer_token=TOKEN, timeout=5)
    with pytest.raises(MCPServerError) as failed:
        down.open()
    assert str(failed.value) == (f"MCP server {endpoint} cannot be reached: ConnectError: All "
                                 "connection attempts failed")
    down.close()
    exits = MCPServer(command=sys.executable, args=["-c", "import sys; sys.exit(3)"],
                      timeout=10, name="orders")
    with pytest.raises(MCPServerError, match=r"^MCP server 'orders' cannot be reached \(command "
                                             r"python[0-9.]*\): [A-Za-z]+Error: "):
        exits.open()
    exits.close()


def test_the_bearer_token_reaches_the_server_and_nothing_prints_it(http_server, caplog):
    caplog.set_level(logging.DEBUG)
    wanted = order_id()
    descriptor = ResourceDescriptor(MCPServer, endpoint=http_server.endpoint,
                                    bearer_token=TOKEN, timeout=20)
    with descriptor.build() as orders:
        orders.call_tool("lookup_order", {"order_id": wanted})  # the server checks it
        shown = [repr(descriptor), repr(orders), repr(orders.tool("lookup_order"))]
    assert count_calls(http_server.count_file, wanted) == 1
    wrong = MCPServer(endpoint=http_server.endpoint, headers={"Authorization": "Bearer x"
                                                              + TOKEN}, timeout=20)
    with wrong, pytest.raises(MCPToolError) as refused:
        wrong.call_tool("lookup_order", {"order_id": wanted})
    assert "unauthorized" in str(refused.value)
    assert count_calls(http_server.count_file, wanted) == 1
    shown += [str(refused.value), repr(wrong), caplog.text]
    assert "bearer_token='***'" in shown[0]
    for text in shown:
        assert TOKEN not in text


def test_an_api_key_goes_in_its_header_and_is_masked_in_errors(http_server):
    key = "k3y-" + TOKEN
    # The server's error repeats the key (as a careless server might): the error masks it.
    with MCPServer(endpoint=http_server.endpoint, api_key=key, timeout=20) as orders:
        assert orders._headers == {"X-API-Key": key}
        with pytest.raises(MCPToolError) as refused:
            orders.call_tool("fail", {"message": f"echo {key}"})
    assert "echo ***" in str(refused.value) and key not in str(refused.value)
    assert "api_key='***'" in repr(ResourceDescriptor(MCPServer, endpoint="http://h/mcp",
                                                      api_key=key))


def test_refresh_reads_the_lists_again_and_close_ends_the_stdio_server(count_file):
    orders = MCPServer(**stdio_arguments(count_file), timeout=20)
    orders.open()
    pid = int(orders.call_tool("server_pid"))
    orders.refresh()
    assert "lookup_order" in [t.name for t in orders.tools()]
    orders.close()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.05)
    else:
        pytest.fail("the stdio server still runs after close")
    with pytest.raises(MCPServerError, match="MCP server 'orders' is closed"):
        orders.call_tool("server_pid")


def test_arguments_are_checked_when_the_resource_is_built():
    with pytest.raises(ValueError, match="either endpoint= .* or command="):
        MCPServer()
    with pytest.raises(ValueError, match="endpoint must be an http"):
        MCPServer(endpoint="ftp://user:pw@host/mcp")
    with pytest.raises(ValueError, match="a stdio server .* gets secrets through env="):
        MCPServer(command="srv", bearer_token=TOKEN)


def test_an_mcp_server_in_the_agents_yaml_reads_its_token_from_the_environment(
        http_server, tmp_path, monkeypatch):
    from flink_agents_ltm.api.execution_environment import AgentsExecutionEnvironment
    from flink_agents_ltm.api.resources import ResourceType

    path = tmp_path / "agents.yaml"
    path.write_text(f"mcp_servers:\n  - name: orders\n    clazz: mcp\n"
                    f"    endpoint: {http_server.endpoint}\n"
                    f"    bearer_token_env: ORDERS_MCP_TOKEN\n")
    env = AgentsExecutionEnvironment.get_execution_environment(env=object()).load_yaml(path)
    kind, descriptor = env.resources["orders"]
    assert kind is ResourceType.MCP_SERVER and descriptor.clazz is MCPServer
    with pytest.raises(ValueError, match="bearer_token_env='ORDERS_MCP_TOKEN': the environment "
                                         "variable is not set"):
        descriptor.build()
    monkeypatch.setenv("ORDERS_MCP_TOKEN", TOKEN)
    wanted = order_id()
    with descriptor.build() as orders:
        orders.call_tool("lookup_order", {"order_id": wanted})
    assert count_calls(http_server.count_file, wanted) == 1

"""A ReActAgent in a job on the mini-cluster: a record per input fills the prompt, the
model (a scripted OpenAI-compatible server on 127.0.0.1) calls the tool, and every
input gives one validated result; the model got the schema natively and was asked
exactly twice per input."""

import json

import pytest
from chat.scripted_server import ScriptedServer, openai_reply
from pyflink.common import Types

from flink_agents_ltm.api.agents.react_agent import ReActAgent
from flink_agents_ltm.api.chat_models import ChatMessage
from flink_agents_ltm.api.execution_environment import AgentsExecutionEnvironment
from flink_agents_ltm.api.prompts import Prompt
from flink_agents_ltm.api.resources import ResourceDescriptor, ResourceType
from flink_agents_ltm.integrations.chat_models.openai import OpenAIChatModelSetup
from runtime.react_agents_for_tests import Availability, stock_of

pytestmark = pytest.mark.cluster

INPUTS = [("a", "teapot"), ("b", "kettle"), ("a", "kettle"), ("c", "teapot")]


def model(request):
    """Asks for the stock of the item in the user's message, then answers from it."""
    messages = request.body["messages"]
    item = messages[-1]["content"].split()[-1] if messages[-1]["role"] == "user" else None
    if item is not None:
        return openai_reply(tool_calls=[("1", "stock_of", {"item": item})])
    asked = json.loads(messages[-2]["tool_calls"][0]["function"]["arguments"])["item"]
    return openai_reply(json.dumps({"item": asked,
                                    "in_stock": int(messages[-1]["content"]) > 0}))


def test_every_input_gives_one_validated_result_from_the_tool_loop(flink_env):
    with ScriptedServer(model) as server:
        env = flink_env()
        agents_env = AgentsExecutionEnvironment.get_execution_environment(env=env)
        agents_env.add_resource("assistant", ResourceType.CHAT_MODEL, ResourceDescriptor(
            OpenAIChatModelSetup, model="scripted", base_url=server.url, api_key_env=None))
        agent = ReActAgent(
            chat_model="assistant", output_schema=Availability, tools=[stock_of],
            prompt=Prompt.from_messages([ChatMessage("system", "You answer for {shop}."),
                                         ChatMessage("user", "Do you have a {item}")]))
        stream = env.from_collection(
            [{"customer": c, "shop": "Acme", "item": i} for c, i in INPUTS],
            type_info=Types.MAP(Types.STRING(), Types.STRING()))
        out = agents_env.from_datastream(stream, key_selector=lambda r: r["customer"])
        results = list(out.apply(agent).to_datastream().execute_and_collect())
    assert sorted(results, key=lambda r: (r.item, r.in_stock)) == sorted(
        [Availability(item=i, in_stock=i == "teapot") for _, i in INPUTS],
        key=lambda r: (r.item, r.in_stock))
    assert len(server.requests) == 2 * len(INPUTS)
    assert all(r.body["response_format"]["type"] == "json_schema" for r in server.requests)

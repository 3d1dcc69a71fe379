"""Flink's web UI, REST API and metric scopes name the agent's operator after the agent,
as Flink names its sources and sinks, and a name the user gives the stream wins."""

import json

import pytest
from pyflink.datastream import StreamExecutionEnvironment

from flink_agents_ltm.api.agent import Agent, action
from flink_agents_ltm.api.events import InputEvent, OutputEvent
from flink_agents_ltm.api.execution_environment import AgentsExecutionEnvironment


class OrderDesk(Agent):
    @action(InputEvent)
    def answer(event, ctx):
        ctx.send_event(OutputEvent(event.input))


def operators(env):
    return [node["type"] for node in json.loads(env.get_execution_plan())["nodes"]]


@pytest.fixture
def env():
    return StreamExecutionEnvironment.get_execution_environment()


def agent_stream(env):
    agents = AgentsExecutionEnvironment.get_execution_environment(env)
    return (agents.from_datastream(env.from_collection(["a"]), key_selector=lambda r: r)
            .apply(OrderDesk()).to_datastream())


def test_the_operator_is_named_after_the_agent(env):
    agent_stream(env).print()
    [agent_operator] = [name for name in operators(env) if "Map" in name]
    assert agent_operator.startswith("Agent: OrderDesk")
    assert not any("KEYED PROCESS" in name for name in operators(env))


def test_a_name_given_to_the_stream_wins(env):
    agent_stream(env).name("order desk v2").print()
    assert any(name.startswith("order desk v2") for name in operators(env))

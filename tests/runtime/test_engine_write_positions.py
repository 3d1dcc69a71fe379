"""Every durable call of a step runs at its write position ``call<k>`` (k: its index among the
step's durable calls, the index replay uses), on the thread that runs it; the action's own
code stays at ``body``. On the in-memory harness, with ctx.chat against a scripted model."""


from chat.scripted_server import ScriptedServer, openai_reply

from flink_agents_ltm.api.agent import Agent, action
from flink_agents_ltm.api.chat_models import ToolContext, tool
from flink_agents_ltm.api.events import InputEvent, OutputEvent
from flink_agents_ltm.api.memory.write_position import current_write_position
from flink_agents_ltm.api.resources import ResourceDescriptor, ResourceType
from flink_agents_ltm.integrations.chat_models.openai import OpenAIChatModelSetup
from flink_agents_ltm.testing import AgentHarness


def where():
    return current_write_position()


class PositionsAgent(Agent):
    @action(InputEvent)
    async def act(event, ctx):
        seen = [("body", current_write_position())]
        seen.append(("inline", ctx.durable_execute(where)))
        seen.append(("async", await ctx.durable_execute_async(where)))
        seen.append(("inline", ctx.durable_execute(where)))
        seen.append(("body", current_write_position()))
        ctx.send_event(OutputEvent(seen))


def test_inline_and_async_durable_calls_run_at_their_index_and_the_body_at_body():
    harness = AgentHarness(PositionsAgent(), run_on_wait=True)
    harness.process_element(("k", 0))
    harness.end_input()
    assert harness.outputs == [[("body", "body"), ("inline", "call0"), ("async", "call1"),
                                ("inline", "call2"), ("body", "body")]]


@tool
def inline_tool(ctx: ToolContext) -> str:
    """Reports where it runs (a tool with ctx runs inline on the mailbox thread)."""
    return current_write_position()


@tool
def pooled_tool() -> str:
    """Reports where it runs (a tool without ctx runs on the worker pool)."""
    return current_write_position()


class ChattingAgent(Agent):
    @action(InputEvent)
    async def chat(event, ctx):
        reply = await ctx.chat("where do you run?", model="scripted",
                               tools=[inline_tool, pooled_tool])
        ctx.send_event(OutputEvent(reply.content))


def test_chat_model_and_tool_calls_take_the_next_indices_of_the_step():
    answers = [openai_reply(tool_calls=[("1", "inline_tool", {}), ("2", "pooled_tool", {})]),
               openai_reply("done")]
    with ScriptedServer(answers) as server:
        harness = AgentHarness(ChattingAgent(), run_on_wait=True, resources={
            "scripted": (ResourceType.CHAT_MODEL, ResourceDescriptor(
                OpenAIChatModelSetup, model="m", base_url=server.url, api_key_env=None))})
        harness.process_element(("k", 0))
        harness.end_input()
    tool_results = [m["content"] for m in server.requests[1].body["messages"]
                    if m["role"] == "tool"]
    assert tool_results == ["call1", "call2"]  # the model's first answer was call0
    assert [h.position for h in harness.pool.submitted] == ["call0", "call2", "call3"]
    assert [h.call.name for h in harness.pool.submitted] == [
        "chat model 'scripted'", "tool 'pooled_tool'", "chat model 'scripted'"]
    assert harness.outputs == ["done"]

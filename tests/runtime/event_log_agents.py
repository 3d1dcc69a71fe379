"""Agents of the event-log and model-metric tests (a module: the cluster job pickles them
by reference)."""

from dataclasses import dataclass

from flink_agents_ltm.api.agent import Agent, action
from flink_agents_ltm.api.chat_models import ToolContext, tool
from flink_agents_ltm.api.events import Event, InputEvent, OutputEvent
from flink_agents_ltm.api.resources import ResourceDescriptor, chat_model_setup
from flink_agents_ltm.integrations.chat_models.scripted import ScriptedChatModelSetup

SECRET = "sk-do-not-log-1234"
STORED_TEXT = "the customer's passport number is 123"
QUERY = "what is the passport number"


@dataclass
class Greeted(Event):
    text: str


def echo(value):
    return value


def broken():
    raise ConnectionError("the service is down")


@tool
def lookup(ctx: ToolContext, order: str) -> str:
    """The status of an order."""
    return f"order {order} shipped"


class TracedAgent(Agent):
    """Input ``(key, what)``: ``call`` echoes a payload with a secret and a long text
    through a durable call, ``inline`` does it inline, ``memory`` adds and searches a
    memory set and sends ``Greeted``, ``chat`` asks the scripted model (one tool call),
    ``fail`` awaits a call that raises, ``two`` awaits two calls."""

    @chat_model_setup
    def assistant():
        return ResourceDescriptor(ScriptedChatModelSetup, answers=[
            {"tool_calls": [{"name": "lookup", "arguments": {"order": "7"}}]},
            "order 7 has shipped",
        ])

    @action(InputEvent)
    async def handle(event, ctx):
        key, what = event.input
        if what == "call":
            echoed = await ctx.durable_execute_async(echo, {"api_key": SECRET,
                                                            "text": "x" * 1000})
            ctx.send_event(OutputEvent(len(echoed["text"])))
        elif what == "inline":
            ctx.send_event(OutputEvent(ctx.durable_execute(echo, f"password={SECRET}")))
        elif what == "memory":
            notes = ctx.long_term_memory.get_memory_set("notes")
            notes.add(STORED_TEXT, metadatas={"source": "metadata value"})
            notes.search(QUERY, limit=1)
            ctx.send_event(Greeted(f"hello {key}"))
        elif what == "chat":
            reply = await ctx.chat("where is order 7", model="assistant", tools=[lookup])
            ctx.send_event(OutputEvent(reply.content))
        elif what == "fail":
            await ctx.durable_execute_async(broken)
        elif what == "two":
            first = await ctx.durable_execute_async(echo, "first")
            second = await ctx.durable_execute_async(echo, "second")
            ctx.send_event(OutputEvent([first, second]))

    @action(Greeted)
    def greeted(event, ctx):
        ctx.send_event(OutputEvent(event.text))


class MeteredChatAgent(Agent):
    """Chats with the scripted model, and keeps user metrics of each input
    ``(key, text)`` in the agent's and the action's metric groups."""

    @chat_model_setup
    def assistant():
        return ResourceDescriptor(ScriptedChatModelSetup, answers=[
            {"tool_calls": [{"name": "lookup", "arguments": {"order": "7"}}]},
            "order 7 has shipped",
        ])

    @action(InputEvent)
    async def answer(event, ctx):
        _, text = event.input
        ctx.agent_metric_group.get_counter("numInputs").inc()
        ctx.agent_metric_group.get_meter("numInputsPerSec").mark()
        ctx.action_metric_group.get_histogram("textChars").update(len(text))
        ctx.action_metric_group.get_gauge("lastTextChars").update(len(text))
        reply = await ctx.chat(text, model="assistant", tools=[lookup])
        ctx.send_event(OutputEvent(reply.content))


class ClusterTracedAgent(Agent):
    """Input ``(key, release_file)``: counts it in a user counter, chats with the scripted
    model (one tool call), adds a memory item, then waits on a durable call until the test
    has read the metrics and creates ``release_file``."""

    @chat_model_setup
    def assistant():
        return ResourceDescriptor(ScriptedChatModelSetup, answers=[
            {"tool_calls": [{"name": "lookup", "arguments": {"order": "7"}}]},
            "order 7 has shipped",
        ])

    @action(InputEvent)
    async def answer(event, ctx):
        from runtime.metrics_agents import wait_for_file

        _, release_file = event.input
        ctx.agent_metric_group.get_counter("numInputs").inc()
        ctx.action_metric_group.get_gauge("lastQuestionWords").update(4)
        reply = await ctx.chat(QUESTION_7, model="assistant", tools=[lookup])
        ctx.long_term_memory.get_memory_set("notes").add(STORED_TEXT)
        await ctx.durable_execute_async(wait_for_file, release_file)
        ctx.send_event(OutputEvent(reply.content))


QUESTION_7 = "where is order 7"

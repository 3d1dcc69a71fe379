"""ctx.chat's model/tool loop on a real runner context, with the model a scripted
server on 127.0.0.1. The operator's part (running durable calls, recording them)
is played by ``drive``: it runs each awaited call inline and records its result
the way the operator does. The cluster tests run the real operator."""

import json

import pytest

from chat.scripted_server import ScriptedServer, anthropic_reply, openai_reply
from chat.test_read_through_memory import DictMapState
from flink_agents_ltm.api.agent import Agent
from flink_agents_ltm.api.chat_models import (
    ChatMessage,
    ChatTurnsExceededError,
    ToolCallError,
    ToolContext,
    tool,
)
from flink_agents_ltm.api.resources import MissingResourceError, ResourceDescriptor, ResourceType
from flink_agents_ltm.integrations.chat_models.anthropic import AnthropicChatModelSetup
from flink_agents_ltm.integrations.chat_models.openai import OpenAIChatModelSetup
from flink_agents_ltm.runtime.durable import DurableCall, DurableCallError, recordable
from flink_agents_ltm.runtime.keyed_memory import KeyedMemoryStore
from flink_agents_ltm.runtime.mailbox import MailboxThreadCheck
from flink_agents_ltm.runtime.resource_provider import ResourceProvider
from flink_agents_ltm.runtime.runner_context_impl import RunnerContextImpl
from flink_agents_ltm.runtime.step import Step


@tool
def remember(fact: str, ctx: ToolContext) -> dict:
    """Note a fact in this chat; say what was noted before."""
    before = ctx.short_term_memory.get("fact")
    ctx.short_term_memory.set("fact", fact)
    return {"before": before, "pending_count": ctx.short_term_memory.get("count")}


@tool
def explode() -> str:
    """Always fails."""
    raise ConnectionError("the inventory service is down")


class NoDeclarations(Agent):
    pass


class Harness:
    def __init__(self, server, model_class=OpenAIChatModelSetup):
        self.check = MailboxThreadCheck()
        descriptor = ResourceDescriptor(model_class, model="m", base_url=server.url,
                                        api_key_env=None)
        self.resources = ResourceProvider(NoDeclarations(), self.check,
                                          {f"model-{server.url}": (ResourceType.CHAT_MODEL,
                                                                   descriptor)})
        self.model = f"model-{server.url}"
        self.short_term_state = DictMapState()
        self.recorded = []

    def context(self, recorded=None):
        self.step = Step(self.recorded if recorded is None else recorded)
        store = lambda state, what: KeyedMemoryStore(state, self.check, what)  # noqa: E731
        self.short_term = store(self.short_term_state, "short-term memory")
        return RunnerContextImpl(
            key="k", action_name="act", step=self.step,
            sensory=store(DictMapState(), "sensory memory"), short_term=self.short_term,
            long_term=lambda: None, resources=self.resources.get, listened=lambda e: True,
            mailbox_check=self.check, on_record=lambda: None)


def drive(coroutine, step):
    """Play the operator: run awaited durable calls inline, replaying recorded ones,
    and throw a failed call's error back in as a DurableCallError."""
    send, throw = None, None
    while True:
        try:
            call = coroutine.throw(throw) if throw else coroutine.send(send)
        except StopIteration as done:
            return done.value
        assert isinstance(call, DurableCall)
        send, throw = None, None
        replayed, send = step.replay(call.name)
        if replayed:
            continue
        try:
            send = recordable(call.name, call.run())
        except Exception as error:  # noqa: BLE001 - thrown into the action, as the runtime does
            throw = DurableCallError(f"durable call failed: {error}")
            throw.__cause__ = error
            continue
        step.record(call.name, send)


def script(*answers):
    return ScriptedServer([openai_reply(**a) if isinstance(a, dict) else a for a in answers])


def test_tools_share_the_chat_scope_and_the_caller_keeps_its_own_memory():
    answers = [{"tool_calls": [("1", "remember", {"fact": "likes tea"}),
                               ("2", "remember", {"fact": "likes jazz"})]},
               {"content": "noted"}]
    with script(*answers) as server:
        harness = Harness(server)
        ctx = harness.context()
        ctx.short_term_memory.set("count", 5)  # pending: the action has not completed
        reply = drive(ctx.chat("remember things", model=harness.model, tools=[remember]),
                      harness.step)
    assert reply.content == "noted"
    tool_results = [json.loads(m["content"]) for m in server.requests[1].body["messages"]
                    if m["role"] == "tool"]
    assert tool_results == [{"before": None, "pending_count": 5},
                            {"before": "likes tea", "pending_count": 5}]
    assert ctx.short_term_memory.get("fact") is None
    assert harness.short_term_state.values == {}  # nothing flushed


def test_separate_chat_calls_of_one_action_do_not_see_each_other_s_writes():
    one_chat = [{"tool_calls": [("1", "remember", {"fact": "x"})]}, {"content": "ok"}]
    with script(*one_chat, *one_chat) as server:
        harness = Harness(server)
        ctx = harness.context()
        for _ in range(2):
            drive(ctx.chat("go", model=harness.model, tools=[remember]), harness.step)
    befores = [json.loads(r.body["messages"][-1]["content"])["before"]
               for r in server.requests[1::2]]
    assert befores == [None, None]


def test_a_replay_returns_recorded_model_answers_and_tool_results_without_calling():
    answers = [{"tool_calls": [("1", "remember", {"fact": "likes tea"})]}, {"content": "done"}]
    with script(*answers) as server:
        harness = Harness(server)
        first = harness.context()
        drive(first.chat("go", model=harness.model, tools=[remember]), harness.step)
        asked = len(server.requests)
        replay = harness.context(recorded=list(harness.recorded))
        reply = drive(replay.chat("go", model=harness.model, tools=[remember]), harness.step)
    assert reply.content == "done"
    assert asked == 2 and len(server.requests) == 2
    assert len(harness.recorded) == 3  # model answer, tool result, model answer


def test_model_mistakes_go_back_to_the_model_as_tool_results():
    answers = [{"tool_calls": [("1", "forget", {}), ("2", "remember", {"facts": "x"}),
                               ("3", "remember", {"fact": ["x"]})]},
               {"content": "sorry"}]
    with script(*answers) as server:
        harness = Harness(server)
        reply = drive(harness.context().chat("go", model=harness.model, tools=[remember]),
                      harness.step)
    assert reply.content == "sorry"
    results = [m["content"] for m in server.requests[1].body["messages"] if m["role"] == "tool"]
    assert results[0] == "error: there is no tool named 'forget'; tools: remember"
    assert results[1].startswith("error: bad arguments for tool 'remember'")
    assert results[2] == "error: bad arguments for tool 'remember': argument 'fact': Input " \
                         "should be a valid string (got ['x'])"


def test_an_anthropic_model_runs_the_loop_with_results_paired_to_its_tool_use_ids():
    answers = [anthropic_reply(tool_uses=[("toolu_1", "remember", {"fact": "likes tea"})]),
               anthropic_reply("noted")]
    with ScriptedServer(answers) as server:
        harness = Harness(server, AnthropicChatModelSetup)
        reply = drive(harness.context().chat("remember tea", model=harness.model,
                                             tools=[remember]), harness.step)
    assert reply.content == "noted"
    assert server.requests[1].body["messages"][1:] == [
        {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1",
                                           "name": "remember", "input": {"fact": "likes tea"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1",
                                      "content": '{"before": null, "pending_count": null}'}]}]


def test_a_failing_tool_fails_the_chat_naming_the_tool_and_the_cause():
    with script({"tool_calls": [("1", "explode", {})]}) as server:
        harness = Harness(server)
        with pytest.raises(ToolCallError, match="tool 'explode' called by chat model .* failed: "
                                                "ConnectionError: the inventory service is down"):
            drive(harness.context().chat("go", model=harness.model, tools=[explode]),
                  harness.step)


def test_a_model_that_keeps_asking_for_tools_stops_at_max_turns():
    loop = {"tool_calls": [("1", "remember", {"fact": "again"})]}
    with script(loop, loop) as server:
        harness = Harness(server)
        with pytest.raises(ChatTurnsExceededError, match="after max_turns=2 model calls"):
            drive(harness.context().chat("go", model=harness.model, tools=[remember],
                                         max_turns=2), harness.step)
    assert len(server.requests) == 2


def test_bad_chat_arguments_are_refused_before_any_call():
    with script() as server:
        harness = Harness(server)
        ctx = harness.context()
        with pytest.raises(MissingResourceError, match="no chat model named 'gpt'"):
            ctx.chat("hi", model="gpt")
        with pytest.raises(TypeError, match="a str or a non-empty sequence of ChatMessage"):
            ctx.chat([{"role": "user", "content": "hi"}], model=harness.model)
        with pytest.raises(ValueError, match="max_turns must be a positive int"):
            ctx.chat("hi", model=harness.model, max_turns=0)
        with pytest.raises(ValueError, match="two tools of one name"):
            ctx.chat("hi", model=harness.model, tools=[remember, remember])
    assert server.requests == []


def test_a_plain_function_is_accepted_as_a_tool():
    def shout(text: str) -> str:
        """Upper-case the text."""
        return text.upper()

    answers = [{"tool_calls": [("1", "shout", {"text": "hi"})]}, {"content": "HI it is"}]
    with script(*answers) as server:
        harness = Harness(server)
        drive(harness.context().chat([ChatMessage("user", "shout hi")], model=harness.model,
                                     tools=[shout]), harness.step)
    assert server.requests[0].body["tools"][0]["function"]["description"] == \
        "Upper-case the text."
    assert server.requests[1].body["messages"][-1]["content"] == "HI"

"""ctx.chat(..., output_schema=...): a validated value back, the schema sent natively to
providers that have structured output (asserted on what the scripted provider on
127.0.0.1 receives), an answer that does not fit sent back with what was wrong, then a
one-line error without the answer's text; a replay validates the recorded answers
again and calls no model."""

import json

import pytest
from pydantic import BaseModel

from chat.scripted_server import ScriptedServer, anthropic_reply, ollama_reply, openai_reply
from chat.test_chat_loop import drive
from chat.test_read_through_memory import DictMapState
from flink_agents_ltm.api.agent import Agent, action
from flink_agents_ltm.api.chat_models import BaseChatModelSetup, ChatMessage, tool
from flink_agents_ltm.api.errors import FlinkAgentsLtmError
from flink_agents_ltm.api.events import InputEvent, OutputEvent
from flink_agents_ltm.api.resources import ResourceDescriptor, ResourceType
from flink_agents_ltm.api.structured_output import StructuredOutputError
from flink_agents_ltm.integrations.chat_models.anthropic import AnthropicChatModelSetup
from flink_agents_ltm.integrations.chat_models.ollama import OllamaChatModelSetup
from flink_agents_ltm.integrations.chat_models.openai import OpenAIChatModelSetup
from flink_agents_ltm.runtime.keyed_memory import KeyedMemoryStore
from flink_agents_ltm.runtime.keyed_runs import AgentActionError
from flink_agents_ltm.runtime.mailbox import MailboxThreadCheck
from flink_agents_ltm.runtime.resource_provider import ResourceProvider
from flink_agents_ltm.runtime.runner_context_impl import RunnerContextImpl
from flink_agents_ltm.runtime.step import Step
from flink_agents_ltm.testing import AgentHarness


class Triage(BaseModel):
    urgent: bool
    team: str


TRIAGE_SCHEMA = Triage.model_json_schema()
VALID = '{"urgent": true, "team": "billing"}'
SECRET_TEXT = "card 4111 1111 1111 1111"  # what an invalid answer may echo from the user


class NoDeclarations(Agent):
    pass


class Context:
    """A runner context over one chat model (the durable calls are played by ``drive``)."""

    def __init__(self, descriptor):
        self.check = MailboxThreadCheck()
        self.resources = ResourceProvider(NoDeclarations(), self.check, {
            "model": (ResourceType.CHAT_MODEL, descriptor)})
        self.recorded = []

    def chat(self, *args, recorded=None, **kwargs):
        step = Step(self.recorded if recorded is None else recorded)
        store = lambda what: KeyedMemoryStore(DictMapState(), self.check, what)  # noqa: E731
        ctx = RunnerContextImpl(
            key="k", action_name="act", step=step, sensory=store("sensory memory"),
            short_term=store("short-term memory"), long_term=lambda: None,
            resources=self.resources.get, listened=lambda e: True, mailbox_check=self.check,
            on_record=lambda: None)
        return drive(ctx.chat(*args, model="model", **kwargs), step)


def openai(server):
    return Context(ResourceDescriptor(OpenAIChatModelSetup, model="m", base_url=server.url,
                                      api_key_env=None))


def test_a_valid_answer_comes_back_as_an_instance_of_the_model_class():
    with ScriptedServer([openai_reply(VALID)]) as server:
        reply = openai(server).chat("my invoice is wrong", output_schema=Triage)
    assert reply.structured == Triage(urgent=True, team="billing")
    assert reply.content == VALID
    assert len(server.requests) == 1


def test_openai_compatible_servers_get_the_schema_as_a_json_schema_response_format():
    with ScriptedServer([openai_reply(VALID)]) as server:
        openai(server).chat("my invoice is wrong", output_schema=Triage)
    body = server.requests[0].body
    assert body["response_format"] == {"type": "json_schema", "json_schema": {
        "name": "Triage", "schema": TRIAGE_SCHEMA}}
    assert [m["role"] for m in body["messages"]] == ["user"]  # no schema text added


def test_anthropic_gets_the_schema_as_a_tool_it_is_forced_to_use():
    answer = anthropic_reply(tool_uses=[("toolu_1", "Triage", {"urgent": False,
                                                               "team": "shipping"})])
    with ScriptedServer([answer]) as server:
        reply = Context(ResourceDescriptor(AnthropicChatModelSetup, model="m",
                                           base_url=server.url, api_key_env=None)
                        ).chat("where is my parcel", output_schema=Triage)
    assert reply.structured == Triage(urgent=False, team="shipping")
    body = server.requests[0].body
    assert body["tools"] == [{"name": "Triage", "input_schema": TRIAGE_SCHEMA,
                              "description": "Give the final answer: its input is the answer."}]
    assert body["tool_choice"] == {"type": "tool", "name": "Triage"}


@tool
def lookup(order_id: str) -> str:
    """The order's status."""
    return "shipped"


def test_anthropic_with_tools_must_use_a_tool_and_may_still_call_the_real_ones():
    answers = [anthropic_reply(tool_uses=[("toolu_1", "lookup", {"order_id": "7"})]),
               anthropic_reply(tool_uses=[("toolu_2", "Triage", {"urgent": False,
                                                                 "team": "shipping"})])]
    with ScriptedServer(answers) as server:
        reply = Context(ResourceDescriptor(AnthropicChatModelSetup, model="m",
                                           base_url=server.url, api_key_env=None)
                        ).chat("where is order 7", tools=[lookup], output_schema=Triage)
    assert reply.structured == Triage(urgent=False, team="shipping")
    assert [b["tool_choice"] for b in (r.body for r in server.requests)] == [
        {"type": "any"}, {"type": "any"}]
    assert [t["name"] for t in server.requests[0].body["tools"]] == ["lookup", "Triage"]


def test_ollama_gets_the_schema_as_its_format():
    with ScriptedServer([ollama_reply(VALID)]) as server:
        reply = Context(ResourceDescriptor(OllamaChatModelSetup, model="m",
                                           base_url=server.url)
                        ).chat("my invoice is wrong", output_schema=Triage)
    assert reply.structured == Triage(urgent=True, team="billing")
    assert server.requests[0].body["format"] == TRIAGE_SCHEMA


def test_an_invalid_answer_goes_back_once_with_what_was_wrong_then_the_valid_one_is_used():
    with ScriptedServer([openai_reply('{"urgent": "maybe"}'), openai_reply(VALID)]) as server:
        reply = openai(server).chat("my invoice is wrong", output_schema=Triage)
    assert reply.structured == Triage(urgent=True, team="billing")
    second = server.requests[1].body["messages"]
    assert [m["role"] for m in second] == ["user", "assistant", "user"]
    assert second[1]["content"] == '{"urgent": "maybe"}'
    assert second[2]["content"] == (
        "Your answer does not fit the JSON schema 'Triage': urgent: Input should be a valid "
        "boolean, unable to interpret input; team: Field required. Answer again with one "
        "JSON object that fits it, and nothing else.")


def test_an_answer_invalid_twice_is_a_one_line_error_naming_model_and_schema_not_the_text():
    answers = [openai_reply(f"Sure! {SECRET_TEXT}"), openai_reply(json.dumps(
        {"urgent": True, "team": SECRET_TEXT, "extra": 1}) + " trailing")]
    with ScriptedServer(answers) as server, pytest.raises(StructuredOutputError) as failure:
        openai(server).chat("my invoice is wrong", output_schema=Triage)
    message = str(failure.value)
    assert message == (
        "chat model 'model' answered no valid 'Triage' after 2 attempt(s) (action 'act', key "
        "'k'): the answer is not JSON (Extra data at line 1 column 66); raise "
        "output_retries, or simplify the schema or the prompt")
    assert SECRET_TEXT not in message and "\n" not in message
    assert failure.value.raw_answer.endswith(" trailing")
    assert isinstance(failure.value, FlinkAgentsLtmError)
    assert len(server.requests) == 2


def test_output_retries_zero_fails_at_the_first_invalid_answer():
    with ScriptedServer([openai_reply("{}"), openai_reply(VALID)]) as server, \
            pytest.raises(StructuredOutputError, match="after 1 attempt"):
        openai(server).chat("hi", output_schema=Triage, output_retries=0)
    assert len(server.requests) == 1


def test_a_json_schema_dict_gives_a_validated_dict():
    schema = {"title": "Ticket", "type": "object", "required": ["priority"],
              "properties": {"priority": {"type": "integer", "minimum": 1}}}
    answers = [openai_reply('```json\n{"priority": 0}\n```'), openai_reply('{"priority": 2}')]
    with ScriptedServer(answers) as server:
        reply = openai(server).chat("hi", output_schema=schema)
    assert reply.structured == {"priority": 2}
    assert server.requests[0].body["response_format"]["json_schema"]["name"] == "Ticket"
    assert "priority: fails 'minimum' (1)" in server.requests[1].body["messages"][-1]["content"]


class PlainModel(BaseChatModelSetup):
    """A model written before structured output: no output_schema parameter."""

    def __init__(self, answer):
        self.answer = answer

    def chat(self, messages, tools=None, *, json_mode=False):
        seen.append((list(messages), json_mode))
        return ChatMessage("assistant", self.answer)


seen = []


def test_a_model_without_native_structured_output_is_told_the_schema_and_asked_for_json():
    seen.clear()
    context = Context(ResourceDescriptor(PlainModel, answer=VALID))
    reply = context.chat([ChatMessage("system", "You triage."), ChatMessage("user", "hi")],
                         output_schema=Triage)
    assert reply.structured == Triage(urgent=True, team="billing")
    [(messages, json_mode)] = seen
    assert json_mode is True
    assert [m.role.value for m in messages] == ["system", "system", "user"]
    assert messages[1].content == ("Answer with one JSON object and nothing else. It must fit "
                                   "this JSON schema: " + json.dumps(TRIAGE_SCHEMA,
                                                                     separators=(",", ":")))


@pytest.mark.parametrize(("kwargs", "error", "message"), [
    ({"output_schema": int}, TypeError, "output_schema is a pydantic model class or a JSON"),
    ({"output_schema": {"type": 12}}, ValueError, "output_schema is not a valid JSON schema"),
    ({"output_schema": Triage, "output_retries": -1}, ValueError,
     "output_retries must be an int >= 0"),
])
def test_a_bad_schema_or_retry_count_is_refused_before_any_call(kwargs, error, message):
    with ScriptedServer([]) as server, pytest.raises(error, match=message):
        openai(server).chat("hi", **kwargs)
    assert server.requests == []


# ------------------------------------------------------------------ replay after a failure


def nap():
    return None


class TriageAgent(Agent):
    @action(InputEvent)
    async def triage(event, ctx):
        reply = await ctx.chat(event.input[1], model="model", output_schema=Triage)
        await ctx.durable_execute_async(nap)
        ctx.send_event(OutputEvent(reply.structured))


def test_a_restored_run_validates_the_recorded_answers_again_without_calling_the_model():
    with ScriptedServer([openai_reply('{"urgent": 3}'), openai_reply(VALID)]) as server:
        resources = {"model": (ResourceType.CHAT_MODEL, ResourceDescriptor(
            OpenAIChatModelSetup, model="m", base_url=server.url, api_key_env=None))}
        first = AgentHarness(TriageAgent(), resources=resources)
        first.process_element(("a", "my invoice is wrong"))
        first.pool.run()  # the invalid answer
        first.advance(0.01)  # validated, sent back: the second model call is submitted
        first.pool.run()  # the valid answer
        first.advance(0.01)  # validated; the action waits on nap
        assert len(server.requests) == 2 and first.outputs == []
        snapshot = first.snapshot()
        first.close()  # the process fails here

        restored = AgentHarness.restore(snapshot, TriageAgent(), resources=resources,
                                        run_on_wait=True)
        restored.end_input()
        restored.close()
    assert restored.outputs == [Triage(urgent=True, team="billing")]
    assert len(server.requests) == 2  # the provider got no request on replay


def test_a_restored_run_whose_answers_never_fit_fails_again_without_calling_the_model():
    with ScriptedServer([openai_reply("no"), openai_reply("still no")]) as server:
        resources = {"model": (ResourceType.CHAT_MODEL, ResourceDescriptor(
            OpenAIChatModelSetup, model="m", base_url=server.url, api_key_env=None))}
        first = AgentHarness(TriageAgent(), resources=resources)
        first.process_element(("a", "hi"))
        first.pool.run()
        first.advance(0.01)
        snapshot = first.snapshot()  # one answer recorded, the second call not yet sent
        first.close()

        restored = AgentHarness.restore(snapshot, TriageAgent(), resources=resources,
                                        run_on_wait=True)
        with pytest.raises(AgentActionError, match="StructuredOutputError: chat model "
                                                   "'model' answered no valid 'Triage'"):
            restored.end_input()
        restored.close()
    # the recorded answer was replayed, not asked again; the second call was made once
    assert [r.body["messages"][-1]["content"][:8] for r in server.requests] == [
        "hi", "Your ans"]


def test_anthropic_wraps_a_schema_that_is_not_an_object_and_unwraps_the_answer():
    schema = {"title": "Scores", "type": "array", "items": {"type": "integer"}}
    answer = anthropic_reply(tool_uses=[("toolu_1", "Scores", {"answer": [3, 1]})])
    with ScriptedServer([answer]) as server:
        reply = Context(ResourceDescriptor(AnthropicChatModelSetup, model="m",
                                           base_url=server.url, api_key_env=None)
                        ).chat("rate these", output_schema=schema)
    assert reply.structured == [3, 1]
    assert server.requests[0].body["tools"][0]["input_schema"] == {
        "type": "object", "properties": {"answer": schema}, "required": ["answer"]}

"""Prompts are resources: declared with @prompt, added on the environment or listed in the
YAML resources file, found by ctx.get_resource, and filled and sent by ctx.chat; a
placeholder left without a value fails the action naming it, before any model call."""

import textwrap

import pytest

from flink_agents_ltm.api.agent import Agent, action
from flink_agents_ltm.api.agents_yaml import AgentsYamlError
from flink_agents_ltm.api.chat_models import ChatMessage
from flink_agents_ltm.api.events import InputEvent, OutputEvent
from flink_agents_ltm.api.execution_environment import AgentsExecutionEnvironment
from flink_agents_ltm.api.prompts import Prompt
from flink_agents_ltm.api.resources import (
    ResourceDescriptor,
    ResourceType,
    chat_model_setup,
    prompt,
)
from flink_agents_ltm.integrations.chat_models.scripted import ScriptedChatModelSetup
from flink_agents_ltm.runtime.keyed_runs import AgentActionError
from flink_agents_ltm.testing import AgentHarness


def echo(messages, tools):
    """The scripted model's answer: every message it was sent, as role: content lines."""
    return "\n".join(f"{m.role.value}: {m.content}" for m in messages)


class TriageAgent(Agent):
    @prompt
    def triage():
        return Prompt.from_messages([ChatMessage("system", "You triage for {shop}."),
                                     ChatMessage("user", "{input}")])

    @prompt
    def short():
        return Prompt.from_text("Summarize: {input}")

    @chat_model_setup
    def assistant():
        return ResourceDescriptor(ScriptedChatModelSetup, respond=echo)

    @action(InputEvent)
    async def answer(event, ctx):
        _key, text, which = event.input
        if which == "lookup":
            found = ctx.get_resource("triage", ResourceType.PROMPT)
            ctx.send_event(OutputEvent(found.placeholders))
            return
        if which == "both":
            reply = await ctx.chat("and keep it short", prompt=Prompt.from_text(
                "Summarize: {input}"), values={"input": text}, model="assistant")
            ctx.send_event(OutputEvent(reply.content))
            return
        values = {"input": text} if which == "missing" else {"input": text, "shop": "Acme"}
        reply = await ctx.chat(prompt=which if which != "missing" else "triage",
                               values=values, model="assistant")
        ctx.send_event(OutputEvent(reply.content))


@pytest.fixture
def harness():
    made = AgentHarness(TriageAgent(), sync=True)
    yield made
    made.close()


def test_a_declared_prompt_is_a_resource_named_after_its_method(harness):
    assert harness.process_element(("a", "", "lookup")) == [("shop", "input")]
    assert TriageAgent.resources()["triage"][0] is ResourceType.PROMPT


def test_ctx_chat_fills_a_message_prompt_and_keeps_its_roles(harness):
    assert harness.process_element(("a", "my parcel is late", "triage")) == [
        "system: You triage for Acme.\nuser: my parcel is late"]


def test_a_text_prompt_is_sent_as_one_user_message(harness):
    assert harness.process_element(("a", "long text", "short")) == [
        "user: Summarize: long text"]


def test_a_missing_placeholder_fails_the_action_naming_it(harness):
    with pytest.raises(AgentActionError, match=r"prompt 'triage' has no value for "
                                               r"placeholder \{shop\}"):
        harness.process_element(("a", "hi", "missing"))


def test_a_prompt_value_and_messages_go_together_prompt_first(harness):
    assert harness.process_element(("a", "long text", "both")) == [
        "user: Summarize: long text\nuser: and keep it short"]


def test_a_prompt_method_returning_something_else_is_refused_by_name():
    class Broken(Agent):
        @prompt
        def triage():
            return "Answer {input}"

    with pytest.raises(TypeError, match="prompt 'triage' must be a Prompt"):
        Broken.resources()


def test_a_prompt_is_added_on_the_environment_as_itself():
    env = AgentsExecutionEnvironment.get_execution_environment(env=object())
    env.add_resource("greet", ResourceType.PROMPT, Prompt.from_text("Hello {name}"))
    resource_type, descriptor = env.resources["greet"]
    assert resource_type is ResourceType.PROMPT
    assert descriptor.build() == Prompt.from_text("Hello {name}", name="greet")


def test_prompts_in_the_yaml_file_are_text_or_messages(tmp_path):
    path = tmp_path / "agents.yaml"
    path.write_text(textwrap.dedent("""
        prompts:
          - name: short
            text: "Summarize: {input}"
          - name: triage
            messages:
              - {role: system, content: "You triage for {shop}."}
              - {role: user, content: "{input}"}
        """))
    env = AgentsExecutionEnvironment.get_execution_environment(env=object()).load_yaml(path)
    built = {name: d.build() for name, (t, d) in env.resources.items()
             if t is ResourceType.PROMPT}
    assert built == {
        "short": Prompt.from_text("Summarize: {input}", name="short"),
        "triage": Prompt.from_messages([ChatMessage("system", "You triage for {shop}."),
                                        ChatMessage("user", "{input}")], name="triage")}


@pytest.mark.parametrize(("entry", "message"), [
    ("{name: p}", "a prompt has either 'text' or 'messages'"),
    ("{name: p, text: a, messages: []}", "a prompt has either 'text' or 'messages'"),
    ("{name: p, text: [1]}", "'text' must be a string"),
    ("{name: p, messages: [{role: boss, content: x}]}", "unknown message role 'boss'"),
    ("{name: p, messages: [{content: x}]}", "message 0 must be a map of 'role' and 'content'"),
    ("{name: p, messages: []}", "needs at least one message"),
])
def test_a_malformed_prompt_entry_is_refused_naming_it(tmp_path, entry, message):
    path = tmp_path / "agents.yaml"
    path.write_text(f"prompts: [{entry}]\n")
    env = AgentsExecutionEnvironment.get_execution_environment(env=object())
    with pytest.raises(AgentsYamlError, match=r"prompts\[0\] \('p'\): .*" + message):
        env.load_yaml(path)

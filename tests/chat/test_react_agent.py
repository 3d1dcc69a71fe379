"""The built-in ReActAgent on the in-memory harness, with the scripted chat model: the
input becomes the conversation, the model calls tools through ctx.chat's loop, the
validated result is the output; a restored run repeats no tool call and writes no
memory twice."""

import json
import re

import pytest
from pydantic import BaseModel

from flink_agents_ltm.api.agents.react_agent import ReActAgent
from flink_agents_ltm.api.chat_models import ChatMessage, MessageRole, tool
from flink_agents_ltm.api.execution_environment import AgentsExecutionEnvironment
from flink_agents_ltm.api.prompts import Prompt
from flink_agents_ltm.api.resources import ResourceDescriptor
from flink_agents_ltm.integrations.chat_models.scripted import ScriptedChatModelSetup
from flink_agents_ltm.runtime.keyed_runs import AgentActionError
from flink_agents_ltm.runtime.memory.in_memory_long_term_memory import InMemoryLongTermMemory
from flink_agents_ltm.testing import AgentHarness

LOOKUPS = []  # every order_status call that ran


@tool
def order_status(order_id: str) -> str:
    """The shipping status of an order."""
    LOOKUPS.append(order_id)
    return {"7": "shipped", "8": "lost"}.get(order_id, "unknown")


class Answer(BaseModel):
    order_id: str
    status: str


def support(messages, tools):
    """Ask for the order's status, then answer with it as JSON (or as text without the
    tool); every message the model saw is echoed in ``seen``."""
    results = [m.content for m in messages if m.role is MessageRole.TOOL]
    order = re.search(r"order (\d+)", messages[-1].content if not results else
                      next(m.content for m in messages if m.role is MessageRole.USER))
    if not tools:
        return " | ".join(f"{m.role.value}: {m.content}" for m in messages)
    if not results:
        return {"tool_calls": [{"name": "order_status",
                                "arguments": {"order_id": order.group(1)}}]}
    return json.dumps({"order_id": order.group(1), "status": results[0]})


MODEL = ResourceDescriptor(ScriptedChatModelSetup, respond=support)
PROMPT = Prompt.from_messages([ChatMessage("system", "You help the customers of {shop}."),
                               ChatMessage("user", "{text}")])


@pytest.fixture(autouse=True)
def no_lookups_yet():
    LOOKUPS.clear()


@pytest.fixture
def harnesses():
    made = []
    yield made
    for harness in made:
        harness.close()


def agent(**kwargs):
    return ReActAgent(chat_model=MODEL, **kwargs)


def test_a_record_fills_the_prompt_the_model_calls_the_tool_and_the_result_is_validated(
        harnesses):
    harness = AgentHarness(agent(prompt=PROMPT, output_schema=Answer, tools=[order_status]),
                           key_selector=lambda r: r["customer"], sync=True)
    harnesses.append(harness)
    out = harness.process_element({"customer": "a", "shop": "Acme",
                                   "text": "where is order 7?"})
    assert out == [Answer(order_id="7", status="shipped")]
    assert LOOKUPS == ["7"]


def test_a_text_input_is_the_user_message_and_the_answer_text_the_output(harnesses):
    harness = AgentHarness(agent(), key_selector=lambda r: "a", sync=True)
    harnesses.append(harness)
    assert harness.process_element("hello") == ["user: hello"]


def test_a_text_input_fills_the_prompt_s_input_placeholder(harnesses):
    harness = AgentHarness(agent(prompt=Prompt.from_text("Translate: {input}")),
                           key_selector=lambda r: "a", sync=True)
    harnesses.append(harness)
    assert harness.process_element("hallo") == ["user: Translate: hallo"]


def test_a_record_without_a_prompt_fails_the_action_saying_what_to_give(harnesses):
    harness = AgentHarness(agent(), key_selector=lambda r: r["customer"], sync=True)
    harnesses.append(harness)
    with pytest.raises(AgentActionError, match="a ReActAgent without a prompt takes str, "
                                               "number or bool inputs, got a dict"):
        harness.process_element({"customer": "a", "text": "hi"})


def test_a_record_missing_a_placeholder_fails_the_action_naming_it(harnesses):
    harness = AgentHarness(agent(prompt=PROMPT), key_selector=lambda r: r["customer"],
                           sync=True)
    harnesses.append(harness)
    with pytest.raises(AgentActionError, match=r"placeholder \{shop\}"):
        harness.process_element({"customer": "a", "text": "hi"})


def test_a_restored_run_repeats_no_tool_call(harnesses):
    react = agent(prompt=PROMPT, output_schema=Answer, tools=[order_status])
    first = AgentHarness(react, key_selector=lambda r: r["customer"])
    harnesses.append(first)
    first.process_element({"customer": "a", "shop": "Acme", "text": "where is order 8?"})
    first.pool.run()  # the model asks for order_status
    first.advance(0.01)
    first.pool.run()  # the tool runs
    first.advance(0.01)  # its result recorded; the second model call is submitted
    assert LOOKUPS == ["8"] and first.outputs == []
    snapshot = first.snapshot()  # the process fails after this checkpoint

    restored = AgentHarness.restore(snapshot, react, key_selector=lambda r: r["customer"],
                                    run_on_wait=True)
    harnesses.append(restored)
    restored.end_input()
    assert restored.outputs == [Answer(order_id="8", status="lost")]
    assert LOOKUPS == ["8"]  # replayed, not called again


def test_with_memory_the_key_s_memories_are_recalled_and_the_answer_remembered(harnesses):
    memory = InMemoryLongTermMemory("react-test")
    harness = AgentHarness(agent(memory=True), key_selector=lambda r: r[0], sync=True,
                           memory=lambda: memory)
    harnesses.append(harness)
    assert harness.process_element("a: my order 7 is late") == ["user: a: my order 7 is late"]
    second = harness.process_element("a: and order 7 again?")
    assert second == ["system: What you remember of this conversation partner:\n"
                      "- a: my order 7 is late -> user: a: my order 7 is late | "
                      "user: a: and order 7 again?"]
    assert harness.process_element("b: order 7?") == ["user: b: order 7?"]  # b's own memory


def process_memory(stored):
    """A process's long-term memory over ``stored``, the items a store server keeps (they
    outlive the process; what the memory object counts dies with it)."""
    memory = InMemoryLongTermMemory("react-test")
    memory._sets = stored
    return memory


def test_with_memory_a_restored_run_writes_the_answer_once(harnesses):
    stored = {}
    memory = process_memory(stored)
    react = agent(memory="support")
    first = AgentHarness(react, key_selector=lambda r: r[0], memory=lambda: memory)
    harnesses.append(first)
    first.process_element("a: hello")
    first.pool.run()  # recall: nothing yet
    first.advance(0.01)
    first.pool.run()  # the answer
    first.advance(0.01)
    first.pool.run()  # remembered, but the run has not completed
    snapshot = first.snapshot()  # the process fails after this checkpoint

    memory = process_memory(stored)
    restored = AgentHarness.restore(snapshot, react, key_selector=lambda r: r[0],
                                    memory=lambda: memory, run_on_wait=True)
    harnesses.append(restored)
    restored.end_input()
    assert restored.outputs == ["user: a: hello"]
    memory.switch_context("a", "check", False)
    assert [i.value for i in memory.get_memory_set("support").get()] == [
        "a: hello -> user: a: hello"]


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"chat_model": 3}, "chat_model=\\) is a ResourceDescriptor of a chat model"),
    ({"chat_model": "m", "prompt": 3}, "prompt=\\) is a Prompt or the name"),
    ({"chat_model": "m", "output_schema": int}, "output_schema is a pydantic model class"),
    ({"chat_model": "m", "tools": order_status}, "tools=\\) is a list of tools"),
    ({"chat_model": "m", "memory": 3}, "memory=\\) is True, False or the name"),
    ({"chat_model": "m", "max_turns": 0}, "max_turns=\\) must be an int >= 1"),
])
def test_a_bad_configuration_is_refused_when_the_agent_is_made(kwargs, message):
    with pytest.raises((TypeError, ValueError), match=message):
        ReActAgent(**kwargs)


def test_a_react_agent_is_applied_like_any_agent():
    env = AgentsExecutionEnvironment.get_execution_environment(env=object())
    builder = env.from_datastream(object(), key_selector=lambda r: r)
    assert builder.apply(agent()) is builder


def test_a_pyflink_row_fills_the_prompt_by_field_name(harnesses):
    from pyflink.common import Row

    harness = AgentHarness(agent(prompt=PROMPT, output_schema=Answer, tools=[order_status]),
                           key_selector=lambda r: "a", sync=True)
    harnesses.append(harness)
    assert harness.process_element(Row(shop="Acme", text="where is order 8?")) == [
        Answer(order_id="8", status="lost")]


def finish(harness):
    """Let every call run and every parked action go on."""
    for _ in range(6):
        harness.pool.complete_all()
        harness.advance(0.01)
    return harness.outputs


@pytest.mark.parametrize(("store", "lookups"), [("sqlite", ["7"]), ("none", ["7", "7"])])
def test_with_the_action_state_store_a_tool_call_completed_after_the_checkpoint_is_not_repeated(
        harnesses, tmp_path, store, lookups):
    config = {"agents.action-state.store": store, "agents.job-id": "react-store",
              "long-term-memory.embedded.base-dir": str(tmp_path)}
    react = agent(prompt=PROMPT, output_schema=Answer, tools=[order_status])
    first = AgentHarness(react, key_selector=lambda r: "a", config=config)
    harnesses.append(first)
    first.process_element({"shop": "Acme", "text": "where is order 7?"})
    snapshot = first.snapshot()  # the model call in flight: nothing recorded in Flink state
    assert finish(first) == [Answer(order_id="7", status="shipped")]
    assert LOOKUPS == ["7"]  # the process dies before the next checkpoint

    restored = AgentHarness.restore(snapshot, react, key_selector=lambda r: "a", config=config)
    harnesses.append(restored)
    assert finish(restored) == [Answer(order_id="7", status="shipped")]
    assert lookups == LOOKUPS  # with the store: the tool's result is read back, not redone

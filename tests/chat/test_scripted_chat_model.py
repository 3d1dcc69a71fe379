"""The scripted chat model: the same script for every chat, answers from a list or a
function, bad scripts refused when the model is built."""

import pickle
import threading

import pytest

from flink_agents_ltm.api.chat_models import ChatMessage, MessageRole, ToolCall, tool
from flink_agents_ltm.integrations.chat_models.scripted import (
    ScriptedChatModelSetup,
    ScriptExhaustedError,
)


@tool
def order_status(order_id: str) -> str:
    """The status of an order."""
    return "shipped"


def user(text):
    return ChatMessage("user", text)


def test_the_nth_answer_replies_to_the_nth_model_call_of_each_chat():
    model = ScriptedChatModelSetup(answers=[
        {"tool_calls": [{"name": "order_status", "arguments": {"order_id": "7"}}]},
        "It has shipped.",
    ])
    first = model.chat([user("Where is order 7?")], [order_status])
    assert first == ChatMessage(MessageRole.ASSISTANT, "", (
        ToolCall("call-0-0", "order_status", {"order_id": "7"}),))
    history = [user("Where is order 7?"), first,
               ChatMessage("tool", "shipped", tool_call_id="call-0-0", name="order_status")]
    assert model.chat(history, [order_status]).content == "It has shipped."
    # another chat (another key, another thread) starts the script again
    assert model.chat([user("And order 8?")], [order_status]) == first


def test_a_chat_asking_for_more_answers_than_the_script_has_is_told_so():
    model = ScriptedChatModelSetup(answers=[{"tool_calls": [{"name": "t"}]}])
    with pytest.raises(ScriptExhaustedError, match="has 1 answer.* asks for answer 2"):
        model.chat([user("hi"), model.chat([user("hi")])])


def respond_with_the_question_length(messages, tools):
    return f"{len(messages[-1].content)} characters, {len(tools)} tool(s)"


def test_a_function_answers_from_the_conversation_and_the_model_pickles_by_reference():
    model = ScriptedChatModelSetup(respond=respond_with_the_question_length)
    copy = pickle.loads(pickle.dumps(model))
    assert copy.chat([user("four")], [order_status]).content == "4 characters, 1 tool(s)"


def test_answers_given_as_messages_keep_their_tool_call_ids():
    call = ToolCall("mine", "order_status", {"order_id": "1"})
    model = ScriptedChatModelSetup(answers=[ChatMessage("assistant", tool_calls=(call,))])
    assert model.chat([user("x")]).tool_calls == (call,)


def test_the_model_keeps_no_state_so_threads_share_it():
    model = ScriptedChatModelSetup(answers=["a", "b"])
    seen = []
    threads = [threading.Thread(target=lambda: seen.append(model.chat([user("q")]).content))
               for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert seen == ["a"] * 8


@pytest.mark.parametrize("arguments, error, message", [
    ({}, ValueError, "either answers=.* or respond=function"),
    ({"answers": ["a"], "respond": respond_with_the_question_length}, ValueError, "not both"),
    ({"answers": []}, ValueError, "must not be empty"),
    ({"answers": "hello"}, TypeError, "must be a list of answers"),
    ({"respond": "hello"}, TypeError, "respond must be a function"),
    ({"answers": [42]}, TypeError, "answer 1 must be text, a ChatMessage or a mapping"),
    ({"answers": ["ok", {"text": "x"}]}, ValueError, r"answer 2 has unknown field\(s\)"),
    ({"answers": [{"tool_calls": [{"arguments": {}}]}]}, ValueError,
     "tool call 1 of answer 1 must be a mapping with a name"),
    ({"answers": [{"tool_calls": [{"name": "t", "arguments": [1]}]}]}, ValueError,
     "arguments of tool call 't' in answer 1 must be a mapping"),
    ({"answers": [ChatMessage("user", "x")]}, ValueError, "answer 1 is a user message"),
])
def test_a_malformed_script_is_refused_when_the_model_is_built(arguments, error, message):
    with pytest.raises(error, match=message):
        ScriptedChatModelSetup(**arguments)

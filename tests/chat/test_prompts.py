"""A prompt fills its named placeholders, leaves every other brace as written,
and refuses to be sent with a placeholder left empty."""

import dataclasses
import pickle

import pytest

from flink_agents_ltm.api.chat_models import ChatMessage, MessageRole
from flink_agents_ltm.api.errors import FlinkAgentsLtmError
from flink_agents_ltm.api.prompts import Prompt, PromptPlaceholderError

TRIAGE = Prompt.from_messages(
    [ChatMessage("system", 'You answer for {shop}. Reply like {"urgent": true}.'),
     ChatMessage("user", "{input}")],
    name="triage")


def test_placeholders_are_named_in_order_of_first_appearance():
    assert TRIAGE.placeholders == ("shop", "input")
    assert Prompt.from_text("{a} {b} {a} {1x} {a-b}").placeholders == ("a", "b")


def test_messages_keep_their_roles_and_json_braces_pass_through():
    messages = TRIAGE.format_messages(shop="Acme", input="where is my order?")
    assert messages == [
        ChatMessage("system", 'You answer for Acme. Reply like {"urgent": true}.'),
        ChatMessage("user", "where is my order?")]


def test_values_come_from_a_mapping_or_keywords_and_keywords_win():
    assert (TRIAGE.format_string({"shop": "A", "input": 1}, shop="B")
            == 'system: You answer for B. Reply like {"urgent": true}.\nuser: 1')


def test_a_value_holding_a_placeholder_is_not_filled_again():
    [message] = Prompt.from_text("{a}{b}").format_messages(a="{b}", b="x")
    assert message.content == "{b}x"


def test_a_text_prompt_is_one_message_of_the_role_asked_for():
    assert (Prompt.from_text("hi {name}").format_messages(role=MessageRole.USER, name="Ann")
            == [ChatMessage("user", "hi Ann")])
    assert Prompt.from_text("x").format_messages()[0].role is MessageRole.SYSTEM


def test_a_missing_placeholder_is_an_error_naming_it_and_the_prompt():
    with pytest.raises(PromptPlaceholderError) as raised:
        TRIAGE.format_messages(shop="Acme")
    assert str(raised.value) == ("prompt 'triage' has no value for placeholder {input}; "
                                 "give input= when formatting it")
    assert isinstance(raised.value, FlinkAgentsLtmError)


def test_a_prompt_is_a_value():
    assert pickle.loads(pickle.dumps(TRIAGE)) == TRIAGE
    assert Prompt.from_text("a") == Prompt.from_text("a")
    with pytest.raises(dataclasses.FrozenInstanceError):
        TRIAGE.name = "other"  # type: ignore[misc]


@pytest.mark.parametrize("bad, error", [
    (lambda: Prompt.from_messages("text"), "Prompt.from_text"),
    (lambda: Prompt.from_messages([]), "at least one message"),
    (lambda: Prompt.from_messages([{"role": "user"}]), "ChatMessage values, got dict"),
    (lambda: Prompt.from_text(3), "takes a str, got int"),
    (lambda: TRIAGE.format_messages(["shop"]), "mapping of placeholder names, got list"),
])
def test_bad_input_is_refused_with_a_reason(bad, error):
    with pytest.raises((TypeError, ValueError), match=error):
        bad()

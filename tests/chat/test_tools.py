"""Tools: the schema a model is shown comes from the signature; ``ctx`` is injected,
never shown; arguments that do not fit are explained, not executed."""

from typing import Literal

import pytest

from flink_agents_ltm.api.chat_models import ChatMessage, ToolContext, tool


@tool
def find_orders(customer: str, status: Literal["open", "shipped"] = "open",
                limit: int | None = None, tags: list[str] = (), ctx: ToolContext = None) -> dict:
    """Orders of a customer.

    Longer notes that the model does not need."""
    return {"customer": customer, "status": status, "seen": ctx.key if ctx else None}


def test_the_schema_comes_from_the_signature_and_hides_the_injected_context():
    assert find_orders.name == "find_orders"
    assert find_orders.description == "Orders of a customer."
    assert find_orders.parameters == {
        "type": "object",
        "properties": {"customer": {"type": "string"}, "status": {"enum": ["open", "shipped"]},
                       "limit": {"type": "integer"},
                       "tags": {"type": "array", "items": {"type": "string"}}},
        "required": ["customer"]}
    assert find_orders.wants_context


def test_a_name_and_description_can_be_given():
    renamed = tool(name="lookup", description="Look it up.")(lambda q: q)
    assert (renamed.name, renamed.description, renamed.wants_context) == ("lookup", "Look it up.",
                                                                         False)


@pytest.mark.parametrize("arguments, problem", [
    ({}, "missing a required argument: 'customer'"),
    ({"customer": "c", "colour": "red"}, "unexpected keyword argument 'colour'"),
    ({"customer": "c", "ctx": "forged"}, "'ctx' is not an argument of tool 'find_orders'"),
    (["c"], "must be a JSON object"),
])
def test_arguments_that_do_not_fit_are_explained(arguments, problem):
    assert problem in find_orders.argument_error(arguments)


def test_a_result_reaches_the_model_as_text_json_unless_it_is_a_str():
    assert find_orders.invoke({"customer": "c"}) == \
        '{"customer": "c", "status": "open", "seen": null}'
    assert tool(lambda: "plain").invoke({}) == "plain"


def test_a_parameter_type_a_model_cannot_be_told_about_is_refused():
    def bad(message: ChatMessage) -> str: ...
    with pytest.raises(TypeError, match="cannot describe parameter type .*ChatMessage"):
        tool(bad)


def test_varargs_are_refused():
    def bad(*words: str) -> str: ...
    with pytest.raises(TypeError, match="'words' must be a plain named parameter"):
        tool(bad)


def test_an_unknown_role_is_refused_by_name():
    with pytest.raises(ValueError, match="unknown message role 'bot'"):
        ChatMessage("bot", "hi")

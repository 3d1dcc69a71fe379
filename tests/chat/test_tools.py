"""Tools: the schema a model is shown comes from the signature; ``ctx`` is injected,
never shown; arguments that do not fit are explained, not executed."""

from typing import Annotated, Literal

import cloudpickle
import pytest
from pydantic import BaseModel, Field

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


@pytest.mark.parametrize("arguments, problem", [
    ({"customer": "c", "limit": "ten"},
     "argument 'limit': Input should be a valid integer, unable to parse string as an integer "
     "(got 'ten')"),
    ({"customer": "c", "status": "lost"},
     "argument 'status': Input should be 'open' or 'shipped' (got 'lost')"),
    ({"customer": "c", "tags": ["a", ["b"]]},
     "argument 'tags[1]': Input should be a valid string (got ['b'])"),
    ({"customer": "c", "colour": "red"},
     "unexpected keyword argument 'colour' (the arguments are: customer, status, limit, tags)"),
])
def test_arguments_of_the_wrong_type_or_name_are_explained_precisely(arguments, problem):
    assert find_orders.argument_error(arguments) == \
        f"bad arguments for tool 'find_orders': {problem}"


def test_every_problem_of_one_call_is_named_at_once():
    problem = find_orders.argument_error({"limit": "ten", "colour": "red"})
    assert "missing a required argument: 'customer'" in problem
    assert "argument 'limit'" in problem and "'colour'" in problem


def test_arguments_that_fit_are_accepted():
    assert find_orders.argument_error({"customer": "c", "limit": None, "tags": ["a"]}) is None


def test_the_tool_is_called_with_the_validated_values_and_its_own_defaults():
    received = {}

    @tool
    def plan(order_id: str, days: int, stops: tuple[str, ...] = ("depot",)) -> str:
        """Plan a delivery."""
        received.update(order_id=order_id, days=days, stops=stops)
        return "planned"

    assert plan.invoke({"order_id": 42, "days": "3"}) == "planned"
    assert received == {"order_id": "42", "days": 3, "stops": ("depot",)}


def test_invoke_refuses_arguments_that_do_not_fit_without_calling_the_tool():
    calls = []
    counted = tool(lambda n: calls.append(n), name="counted")
    with pytest.raises(ValueError, match="bad arguments for tool 'counted': missing a required "
                                         "argument: 'n'"):
        counted.invoke({})
    assert calls == []


def test_annotated_constraints_and_descriptions_reach_the_schema_and_the_validation():
    @tool
    def top(limit: Annotated[int, Field(ge=1, description="How many orders.")] = 10) -> list:
        """The newest orders."""
        return []

    assert top.parameters["properties"] == {
        "limit": {"type": "integer", "minimum": 1, "description": "How many orders."}}
    assert top.parameters["required"] == []
    assert "argument 'limit': Input should be greater than or equal to 1 (got 0)" in \
        top.argument_error({"limit": 0})


class Address(BaseModel):
    city: str
    zip_code: str | None = None


def test_a_pydantic_model_parameter_is_described_and_arrives_as_the_model():
    @tool
    def ship(address: Address) -> str:
        """Ship an order."""
        assert isinstance(address, Address)
        return address.city

    schema = ship.parameters
    assert schema["required"] == ["address"]
    assert schema["$defs"]["Address"]["properties"]["city"] == {"type": "string"}
    assert ship.invoke({"address": {"city": "Berlin"}}) == "Berlin"
    assert "argument 'address.city': Field required" in ship.argument_error({"address": {}})


def test_parameters_named_like_pydantic_attributes_work():
    @tool
    def lookup(json: str, model_config: int, schema: bool = False) -> dict:
        """Look something up."""
        return {"json": json, "model_config": model_config, "schema": schema}

    assert set(lookup.parameters["properties"]) == {"json", "model_config", "schema"}
    assert lookup.invoke({"json": "j", "model_config": 2}) == \
        '{"json": "j", "model_config": 2, "schema": false}'


def test_a_tool_ships_without_its_arguments_model_and_rebuilds_it_after_shipping():
    local = tool(lambda customer, ctx=None: customer.upper(), name="shout")
    shipped = cloudpickle.dumps(local)
    assert local.argument_error({}) is not None  # builds and caches the arguments model
    assert cloudpickle.dumps(local) == shipped  # a class made at run time is not shipped
    copy = cloudpickle.loads(shipped)
    assert copy.invoke({"customer": "c"}) == "C"
    assert copy.argument_error({"customer": "c", "x": 1}).startswith(
        "bad arguments for tool 'shout': unexpected keyword argument 'x'")


def test_a_tool_shipped_by_value_checks_its_arguments_where_its_annotation_names_are_missing(
        tmp_path, monkeypatch):
    """A job's tool travels to the TaskManager by value (cloudpickle), which keeps only the
    globals its code uses: ``ctx: ToolContext`` cannot be resolved there."""
    import pickle
    import sys

    import cloudpickle

    (tmp_path / "shipped_tools.py").write_text(
        "from __future__ import annotations\n"
        "from flink_agents_ltm.api.tools import ToolContext, tool\n"
        "@tool\n"
        "def lookup(order: int, ctx: ToolContext) -> str:\n"
        "    return f'order {order}'\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import shipped_tools

    cloudpickle.register_pickle_by_value(shipped_tools)
    try:
        shipped = cloudpickle.dumps(shipped_tools.lookup)
    finally:
        cloudpickle.unregister_pickle_by_value(shipped_tools)
    del sys.modules["shipped_tools"]
    arrived = pickle.loads(shipped)
    assert arrived.argument_error({"order": 3}) is None
    assert "valid integer" in arrived.argument_error({"order": "x"})

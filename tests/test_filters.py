"""The one filter language of the project (long-term memory and vector stores): Mem0's
operators, validated with errors that say where, and the reference semantics every store
is held to."""

import pytest

from flink_agents_ltm.api.filters import (
    AllOf,
    AnyOf,
    Condition,
    FilterError,
    NoneOf,
    Operator,
    conjuncts,
    field_names,
    matches,
    parse_filter,
    to_mem0,
)

ROW = {"topic": "billing", "year": 2021, "score": 0.5, "vip": True, "title": "Late Fee Policy",
       "tags": ["a", "b"], "empty": None, "day": "2024-03-05", "user_id": "u1"}


@pytest.mark.parametrize("filters, expected", [
    ({"topic": "billing"}, True),
    ({"topic": "shipping"}, False),
    ({"topic": {"eq": "billing"}}, True),
    ({"topic": {"ne": "billing"}}, False),
    ({"missing": {"ne": "x"}}, True),                 # ne is "not eq": absent fields match
    ({"empty": {"ne": "x"}}, True),                   # ... and so do None values
    ({"year": 2021.0}, True),                          # numbers compare as numbers
    ({"vip": True}, True),
    ({"vip": {"ne": False}}, True),
    ({"vip": 1}, False),                               # ... but never with booleans
    ({"year": True}, False),
    ({"year": "2021"}, False),                         # nor with strings
    ({"topic": ["billing", "refunds"]}, True),         # list shorthand for "in"
    ({"topic": ["refunds", "shipping"]}, False),
    ({"topic": {"in": ["refunds"]}}, False),
    ({"topic": {"nin": ["refunds"]}}, True),
    ({"missing": {"nin": ["x"]}}, True),
    ({"year": {"gte": 2021, "lt": 2022}}, True),       # operators of one field all hold
    ({"year": {"gt": 2021}}, False),
    ({"score": {"lte": 0.5}}, True),
    ({"vip": {"gt": 0}}, False),                       # booleans are not numbers
    ({"topic": {"gt": 0}}, False),                     # a string is not above a number
    ({"year": {"gt": "2020"}}, False),                 # ... nor a number above a string
    ({"day": {"gte": "2024-01-01"}}, True),            # strings order as text: ISO dates
    ({"day": {"lt": "2024-03-05T00:00"}}, True),       # ... as text, not as dates
    ({"day": {"gt": "2024-03"}}, True),
    ({"topic": {"lt": "c", "gt": "b"}}, True),
    ({"topic": {"gte": "c"}}, False),
    ({"missing": {"lt": "z"}}, False),
    ({"empty": {"lt": "z"}}, False),
    ({"title": {"contains": "Fee"}}, True),
    ({"title": {"contains": "fee"}}, False),
    ({"title": {"icontains": "FEE POL"}}, True),
    ({"year": {"contains": "20"}}, False),             # substring tests read strings only
    ({"tags": "a"}, False),                            # lists and dicts match no comparison
    ({"tags": {"ne": "a"}}, True),
    ({"title": "*"}, True),
    ({"empty": "*"}, False),                           # "*": present and not None
    ({"missing": "*"}, False),
    ({"NOT": [{"empty": "*"}]}, True),                 # ... so NOT "*" finds absent values
    ({"NOT": [{"title": "*"}]}, False),
    ({"topic": {"eq": "*"}}, False),                   # only the shorthand is "present"
    ({"topic": "billing", "year": 2020}, False),
    ({"OR": [{"topic": "shipping"}, {"year": 2021}]}, True),
    ({"OR": [{"topic": "shipping"}, {"year": 2020}]}, False),
    ({"AND": [{"topic": "billing"}, {"year": 2021}]}, True),
    ({"AND": [{"topic": "billing"}, {"year": 2020}]}, False),
    ({"NOT": [{"topic": "shipping"}, {"year": 2020}]}, True),   # none of them
    ({"NOT": [{"topic": "shipping"}, {"year": 2021}]}, False),
    ({"AND": [{"topic": "billing"}, {"OR": [{"vip": False}, {"NOT": [{"year": {"lt": 2000}}]}]}]},
     True),
    ({"user_id": "u1"}, True),                         # scope fields are ordinary fields here
    ({"OR": [{"user_id": "u2"}, {"agent_id": "a"}]}, False),
])
def test_a_filter_matches_exactly_what_the_reference_semantics_say(filters, expected):
    assert matches(parse_filter(filters), ROW) is expected


@pytest.mark.parametrize("filters, message", [
    ("topic", "filters must be a dict, got str"),
    ({"year": {"between": [1, 2]}}, r"filters\['year'\]\['between'\]: unknown operator "
                                    r"'between'; supported: eq, ne, in, nin, gt"),
    ({"year": {}}, r"filters\['year'\]: an operator dict needs at least one of"),
    ({"year": {"gt": None}}, "'gt' orders numbers or strings, got NoneType None"),
    ({"year": {"gt": True}}, "'gt' orders numbers or strings, got bool"),
    ({"year": {"lte": [2020]}}, "'lte' orders numbers or strings, got list"),
    ({"year": {"gt": float("nan")}}, "'gt' orders numbers or strings"),
    ({"topic": {"in": "billing"}}, "'in' takes a non-empty list of values, got str"),
    ({"topic": {"nin": []}}, "'nin' takes a non-empty list"),
    ({"topic": []}, "'in' takes a non-empty list"),
    ({"topic": {"in": ["a", None]}}, r"filters\['topic'\]\['in'\]\[1\]: None is not a value "
                                     "to compare with"),
    ({"topic": None}, r"filters\['topic'\]: None is not a value to compare with; write "
                      r"\{'topic': '\*'\} for a field that has a value, \{'NOT': "
                      r"\[\{'topic': '\*'\}\]\} for one that has none"),
    ({"topic": {"eq": None}}, r"filters\['topic'\]\['eq'\]: None is not a value"),
    ({"topic": {"ne": None}}, r"filters\['topic'\]\['ne'\]: None is not a value"),
    ({"topic": {"eq": {"nested": 1}}}, "expected a string, number or boolean, got dict"),
    ({"topic": {"ne": [1]}}, "expected a string, number or boolean, got list"),
    ({"title": {"contains": ""}}, "'contains' takes a non-empty string"),
    ({"title": {"icontains": 3}}, "'icontains' takes a non-empty string, got int"),
    ({"OR": []}, r"filters\['OR'\]: 'OR' takes a non-empty list of filters"),
    ({"AND": "topic"}, r"filters\['AND'\]: 'AND' takes a non-empty list of filters, got str"),
    ({"NOT": {"topic": "x"}}, r"filters\['NOT'\]: 'NOT' takes a non-empty list of filters, got "
                              r"a dict; write \{'NOT': \[\{'topic': 'x'\}\]\}"),
    ({"OR": {"topic": "x"}}, r"'OR' takes a non-empty list of filters, got a dict"),
    ({"AND": {"topic": "x"}}, r"'AND' takes a non-empty list of filters, got a dict"),
    ({"NOT": ["topic"]}, r"filters\['NOT'\]\[0\]: expected a non-empty filter dict, got str"),
    ({"NOT": [{}]}, r"filters\['NOT'\]\[0\]: expected a non-empty filter dict, got dict"),
    ({"OR": [{"year": {"gte": None}}]}, r"filters\['OR'\]\[0\]\['year'\]\['gte'\]"),
    ({"$or": [{"a": 1}]}, "'\\$or' is not part of the filter language; combine filters with "
                          "'AND', 'OR' or 'NOT'"),
    ({"or": [{"a": 1}]}, "'or' is not part of the filter language"),
    ({"": 1}, "field names are non-empty strings"),
    ({3: 1}, "field names are non-empty strings, got 3"),
    ({"topic": "*", "x": {"*": 1}}, r"unknown operator '\*'"),
])
def test_a_filter_outside_the_language_is_refused_naming_where(filters, message):
    with pytest.raises(FilterError, match=message):
        parse_filter(filters)


@pytest.mark.parametrize("filters, where", [
    ({"to\x00pic": "a"}, r"filters: field name 'to\\x00pic'"),
    ({"OR": [{"\ud800": "a"}]}, r"filters\['OR'\]\[0\]: field name '\\ud800'"),
    ({"topic": "a\x00"}, r"filters\['topic'\]"),
    ({"topic": {"ne": "\udfff"}}, r"filters\['topic'\]\['ne'\]"),
    ({"topic": ["ok", "b\x00"]}, r"filters\['topic'\]\[1\]"),
    ({"topic": {"nin": ["\ud800"]}}, r"filters\['topic'\]\['nin'\]\[0\]"),
    ({"day": {"gte": "2024\x00"}}, r"filters\['day'\]\['gte'\]"),
    ({"title": {"icontains": "x\udc00"}}, r"filters\['title'\]\['icontains'\]"),
])
def test_nul_characters_and_lone_surrogates_are_refused_in_names_and_strings(filters, where):
    with pytest.raises(FilterError, match=f"{where} contains (a NUL character|a lone "
                                          "surrogate)"):
        parse_filter(filters)


def test_no_filter_is_none_and_a_parsed_filter_passes_through_unchanged():
    assert parse_filter(None) is None
    assert parse_filter({}) is None
    parsed = parse_filter({"a": 1})
    assert parse_filter(parsed) is parsed
    assert matches(None, {"anything": 1})


def test_the_tree_is_frozen_and_keeps_every_condition():
    parsed = parse_filter({"year": {"gte": 1, "lt": 5}, "OR": [{"a": "x"}, {"b": ["y"]}],
                           "NOT": [{"c": "*"}], "d": {"gt": "2024"}})
    assert parsed == AllOf((
        Condition("year", Operator.GTE, 1), Condition("year", Operator.LT, 5),
        AnyOf((Condition("a", Operator.EQ, "x"), Condition("b", Operator.IN, ("y",)))),
        NoneOf((Condition("c", Operator.EXISTS),)), Condition("d", Operator.GT, "2024")))
    with pytest.raises(AttributeError):
        parsed.parts = ()
    assert len(conjuncts(parsed)) == 5
    assert field_names(parsed) == {"year", "a", "b", "c", "d"}


def test_the_mem0_form_reads_back_to_the_same_tree():
    parsed = parse_filter({"year": {"gte": 1}, "tags": ["a", "b"], "t": "*",
                           "day": {"lt": "2024-01-01"},
                           "OR": [{"a": "x"}, {"AND": [{"b": 1}, {"c": 2}]}],
                           "NOT": [{"d": {"icontains": "q"}}]})
    assert parse_filter(to_mem0(parsed)) == parsed

"""The filter language: Mem0's operators, validated with errors that say where, and the
reference semantics every store is held to."""

import pytest

from flink_agents_ltm.api.metadata_filters import (
    AllOf,
    AnyOf,
    Condition,
    FilterError,
    NoneOf,
    Operator,
    conjuncts,
    matches,
    parse_filter,
    to_mem0,
)

ROW = {"topic": "billing", "year": 2021, "score": 0.5, "vip": True, "title": "Late Fee Policy",
       "tags": ["a", "b"], "empty": None}


@pytest.mark.parametrize("filters, expected", [
    ({"topic": "billing"}, True),
    ({"topic": "shipping"}, False),
    ({"topic": {"eq": "billing"}}, True),
    ({"topic": {"ne": "billing"}}, False),
    ({"missing": {"ne": "x"}}, True),                 # ne is "not eq": absent fields match
    ({"year": 2021.0}, True),                          # numbers compare as numbers
    ({"vip": True}, True),
    ({"vip": {"ne": False}}, True),
    ({"vip": 1}, False),                               # ... but never with booleans
    ({"year": True}, False),
    ({"year": "2021"}, False),                         # nor with strings
    ({"topic": ["billing", "refunds"]}, True),         # list shorthand for "in"
    ({"topic": {"in": ["refunds"]}}, False),
    ({"topic": {"nin": ["refunds"]}}, True),
    ({"missing": {"nin": ["x"]}}, True),
    ({"year": {"gte": 2021, "lt": 2022}}, True),       # operators of one field all hold
    ({"year": {"gt": 2021}}, False),
    ({"score": {"lte": 0.5}}, True),
    ({"vip": {"gt": 0}}, False),                       # booleans are not numbers
    ({"topic": {"gt": 0}}, False),
    ({"title": {"contains": "Fee"}}, True),
    ({"title": {"contains": "fee"}}, False),
    ({"title": {"icontains": "FEE POL"}}, True),
    ({"year": {"contains": "20"}}, False),             # substring tests read strings only
    ({"tags": "a"}, False),                            # lists and dicts match no comparison
    ({"tags": {"ne": "a"}}, True),
    ({"title": "*"}, True),
    ({"empty": "*"}, False),                           # None is absence
    ({"missing": "*"}, False),
    ({"topic": "billing", "year": 2020}, False),
    ({"OR": [{"topic": "shipping"}, {"year": 2021}]}, True),
    ({"OR": [{"topic": "shipping"}, {"year": 2020}]}, False),
    ({"NOT": [{"topic": "shipping"}, {"year": 2020}]}, True),   # none of them
    ({"NOT": [{"topic": "shipping"}, {"year": 2021}]}, False),
    ({"AND": [{"topic": "billing"}, {"OR": [{"vip": False}, {"NOT": [{"year": {"lt": 2000}}]}]}]},
     True),
])
def test_a_filter_matches_exactly_what_the_reference_semantics_say(filters, expected):
    assert matches(parse_filter(filters), ROW) is expected


@pytest.mark.parametrize("filters, message", [
    ("topic", "filters must be a dict, got str"),
    ({"year": {"between": [1, 2]}}, r"filters\['year'\]\['between'\]: unknown operator "
                                    r"'between'; supported: eq, ne, in, nin, gt"),
    ({"year": {}}, r"filters\['year'\]: an operator dict needs at least one of"),
    ({"year": {"gt": "2020"}}, r"'gt' compares numbers, got str '2020'"),
    ({"year": {"gt": True}}, "'gt' compares numbers, got bool"),
    ({"year": {"gt": float("nan")}}, "'gt' compares numbers"),
    ({"topic": {"in": "billing"}}, "'in' takes a non-empty list of values, got str"),
    ({"topic": {"nin": []}}, "'nin' takes a non-empty list"),
    ({"topic": {"in": ["a", None]}}, r"filters\['topic'\]\['in'\]\[1\]: None cannot be "
                                     "compared"),
    ({"topic": None}, r"filters\['topic'\]: None cannot be compared"),
    ({"topic": {"eq": {"nested": 1}}}, "expected a string, number or boolean, got dict"),
    ({"title": {"contains": ""}}, "'contains' takes a non-empty string"),
    ({"title": {"icontains": 3}}, "'icontains' takes a non-empty string, got int"),
    ({"OR": []}, r"filters\['OR'\]: 'OR' takes a non-empty list of filters"),
    ({"NOT": ["topic"]}, r"filters\['NOT'\]\[0\]: expected a non-empty filter dict, got str"),
    ({"OR": [{"year": {"gte": "x"}}]}, r"filters\['OR'\]\[0\]\['year'\]\['gte'\]"),
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


def test_no_filter_is_none_and_a_parsed_filter_passes_through_unchanged():
    assert parse_filter(None) is None
    assert parse_filter({}) is None
    parsed = parse_filter({"a": 1})
    assert parse_filter(parsed) is parsed
    assert matches(None, {"anything": 1})


def test_the_tree_is_frozen_and_keeps_every_condition():
    parsed = parse_filter({"year": {"gte": 1, "lt": 5}, "OR": [{"a": "x"}, {"b": ["y"]}],
                           "NOT": {"c": "*"}})
    assert parsed == AllOf((
        Condition("year", Operator.GTE, 1), Condition("year", Operator.LT, 5),
        AnyOf((Condition("a", Operator.EQ, "x"), Condition("b", Operator.IN, ("y",)))),
        NoneOf((Condition("c", Operator.EXISTS),))))
    with pytest.raises(AttributeError):
        parsed.parts = ()
    assert len(conjuncts(parsed)) == 4


def test_the_mem0_form_reads_back_to_the_same_tree():
    parsed = parse_filter({"year": {"gte": 1}, "tags": ["a", "b"], "t": "*",
                           "OR": [{"a": "x"}, {"AND": [{"b": 1}, {"c": 2}]}],
                           "NOT": [{"d": {"icontains": "q"}}]})
    assert parse_filter(to_mem0(parsed)) == parsed

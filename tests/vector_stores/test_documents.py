"""Documents, queries and results are frozen values that refuse bad input by name, and
travel through pickle (durable call results are kept in Flink state)."""

import pickle

import numpy as np
import pytest

from flink_agents_ltm.api.filters import Condition, FilterError, Operator
from flink_agents_ltm.api.vector_stores import (
    CollectionInfo,
    Document,
    Metadata,
    QueryResult,
    VectorStoreQuery,
)


def test_a_document_is_frozen_down_to_its_nested_metadata():
    document = Document("text", {"tags": ["a", "b"], "author": {"name": "x"}}, "id-1",
                        [1, 2.5])
    assert document.embedding == (1.0, 2.5)
    assert document.metadata["tags"] == ("a", "b")
    with pytest.raises(AttributeError):
        document.content = "other"
    with pytest.raises(TypeError):
        document.metadata["tags"] = ()
    with pytest.raises(AttributeError):
        document.metadata["author"]._items = {}
    assert document.metadata.to_dict() == {"tags": ["a", "b"], "author": {"name": "x"}}


def test_documents_queries_and_results_survive_pickling_equal_to_themselves():
    document = Document("text", {"tags": ["a"], "n": {"m": 1}}, "id-1", [0.5], 0.9)
    result = QueryResult((document,))
    query = VectorStoreQuery(text="q", filters={"n": {"gte": 1}})
    assert pickle.loads(pickle.dumps(result)) == result
    assert pickle.loads(pickle.dumps(query)) == query
    assert hash(pickle.loads(pickle.dumps(document))) == hash(document)


@pytest.mark.parametrize("build, error, message", [
    (lambda: Document(None), TypeError, "content must be str, got NoneType"),
    (lambda: Document("x", {"when": object()}), TypeError,
     "document metadata at 'when' is a object; metadata values must be JSON"),
    (lambda: Document("x", {"n": float("inf")}), ValueError, "at 'n' is inf; JSON has no NaN"),
    (lambda: Document("x", {1: "a"}), TypeError, "has a key of type int; metadata keys are str"),
    (lambda: Document("x", {"": "a"}), TypeError, "has the key ''; metadata keys are non-empty"),
    (lambda: Document("x", ["a"]), TypeError, "metadata must be a dict, got list"),
    (lambda: Document("x", id=""), ValueError, "a document id is a non-empty string"),
    (lambda: Document("x", id=7), ValueError, "a document id is a non-empty string, got 7"),
    (lambda: Document("x", embedding=[]), ValueError, "document embedding is empty"),
    (lambda: Document("x", embedding="1,2"), TypeError, "must be a sequence of numbers, got str"),
    (lambda: Document("x", embedding=[1, None]), TypeError, "finite numbers, found None"),
    (lambda: Document("x", embedding=[True]), TypeError, "finite numbers, found True"),
    (lambda: Document("x", score="high"), TypeError, "a score is a number, got str"),
    (lambda: VectorStoreQuery(), ValueError, "either text or a vector"),
    (lambda: VectorStoreQuery(text="a", vector=[1.0]), ValueError, "either text or a vector"),
    (lambda: VectorStoreQuery(text="  "), ValueError, "query text must be a non-empty str"),
    (lambda: VectorStoreQuery(text="a", limit=0), ValueError, "limit must be a positive int"),
    (lambda: VectorStoreQuery(text="a", limit=True), ValueError, "limit must be a positive int"),
    (lambda: VectorStoreQuery(text="a", filters={"n": {"like": 1}}), FilterError,
     "unknown operator 'like'"),
    (lambda: VectorStoreQuery(text="a", collection="no/slashes"), ValueError,
     "invalid collection name 'no/slashes'"),
])
def test_bad_values_are_refused_naming_what_is_wrong(build, error, message):
    with pytest.raises(error, match=message):
        build()


def test_flat_metadata_is_a_copy_that_later_changes_of_the_dict_do_not_reach():
    values = {"kind": "tea", "year": 2024, "organic": True, "origin": None}
    metadata = Metadata(values)
    values["kind"] = "coffee"
    assert metadata == {"kind": "tea", "year": 2024, "organic": True, "origin": None}


def test_a_numpy_vector_is_accepted_as_floats():
    query = VectorStoreQuery(vector=np.array([0.25, 0.5], dtype=np.float32))
    assert query.vector == (0.25, 0.5) and all(type(v) is float for v in query.vector)


def test_a_query_holds_its_filter_parsed():
    query = VectorStoreQuery(text="a", filters={"year": {"gt": 3}})
    assert query.filters == Condition("year", Operator.GT, 3)


def test_metadata_and_collection_info_are_plain_to_read():
    info = CollectionInfo("docs", 3, 384, {"provider": "qdrant"})
    assert info.details == {"provider": "qdrant"} and isinstance(info.details, Metadata)
    assert repr(Metadata({"a": [1]})) == "{'a': [1]}"
    assert len(QueryResult((Document("x"),))) == 1

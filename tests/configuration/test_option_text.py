"""Options written as text (config.yaml, -D, YAML) are parsed by their option's type."""

import pytest

from flink_agents_ltm.api.configuration import UnknownConfigKeyError
from flink_agents_ltm.api.execution_environment import AgentsConfiguration, AgentsOptions
from flink_agents_ltm.api.memory.long_term_memory import LongTermMemoryOptions


def test_numbers_flags_and_text_are_parsed_by_the_options_type():
    config = AgentsConfiguration()
    config.set_string("agents.durable-async.capacity", "32")
    config.set_string("agents.action-state.retained", "FALSE")
    config.set_string("long-term-memory.search-threshold", "0.25")
    config.set_string("agents.job-id", "32")
    config.set_string("long-term-memory.reranker", "cross_encoder")
    config.set_string("long-term-memory.rerank-candidates", "8")
    assert config.get(AgentsOptions.ASYNC_CAPACITY) == 32
    assert config.get(AgentsOptions.RETAIN_ACTION_STATE) is False
    assert config.get(LongTermMemoryOptions.SEARCH_THRESHOLD) == 0.25
    assert config.get(AgentsOptions.JOB_ID) == "32"
    assert config.get(LongTermMemoryOptions.RERANKER) == "cross_encoder"
    assert config.get(LongTermMemoryOptions.RERANK_CANDIDATES) == 8


@pytest.mark.parametrize("text, millis", [
    ("1500", 1500), ("500 ms", 500), ("30 s", 30_000), ("2min", 120_000), ("1 h", 3_600_000),
    ("1 day", 86_400_000),
])
def test_a_duration_option_takes_milliseconds_or_a_duration_with_its_unit(text, millis):
    config = AgentsConfiguration().set_string(AgentsOptions.ASYNC_TIMEOUT_MS, text)
    assert config.get(AgentsOptions.ASYNC_TIMEOUT_MS) == millis


def test_a_vector_store_is_a_json_object_or_the_name_of_a_declared_store():
    config = AgentsConfiguration()
    config.set_string(LongTermMemoryOptions.VECTOR_STORE, '{"provider": "pgvector"}')
    assert config.get(LongTermMemoryOptions.VECTOR_STORE) == {"provider": "pgvector"}
    config.set_string(LongTermMemoryOptions.VECTOR_STORE, "shared_store")
    assert config.get(LongTermMemoryOptions.VECTOR_STORE) == "shared_store"
    with pytest.raises(ValueError, match="'long-term-memory.vector-store' is text starting "
                                         "with '{' but not a valid JSON object"):
        config.set_string(LongTermMemoryOptions.VECTOR_STORE, "{provider: x")


@pytest.mark.parametrize("key, text, expected", [
    ("agents.durable-async.capacity", "many", "expects an integer, got 'many'"),
    ("agents.durable-async.capacity", "0", "must be positive, got 0"),
    ("agents.action-state.retained", "yes", "expects true or false, got 'yes'"),
    ("agents.durable-async.timeout-ms", "3 fortnights",
     "expects milliseconds or a duration such as '500 ms'"),
    ("long-term-memory.search-threshold", "high", "expects a number, got 'high'"),
    ("long-term-memory.rerank-candidates", "many", "expects an integer, got 'many'"),
    ("agents.error-handling", "skip", "is one of fail, ignore, retry, got 'skip'"),
    ("agents.error-handling.retry.max-retries", "-1", "must be at least 0, got -1"),
    ("agents.error-handling.retry.initial-backoff-ms", "soon", "expects milliseconds"),
    ("agents.error-handling.retry.backoff-multiplier", "0.5", "must be at least 1, got 0.5"),
    ("agents.error-handling.retry.max-backoff-ms", "0", "must be positive, got 0"),
    ("agents.error-handling.retry.then", "retry", "is one of fail, ignore, got 'retry'"),
])
def test_text_that_does_not_fit_the_option_is_refused_naming_the_option(key, text, expected):
    config = AgentsConfiguration()
    with pytest.raises(ValueError, match=expected):
        config.set_string(key, text)
    assert not config.contains(key)


def test_an_unknown_key_is_refused_with_the_closest_known_one():
    with pytest.raises(UnknownConfigKeyError) as refused:
        AgentsConfiguration().set_string("agents.durable-async.capcity", "8")
    assert str(refused.value) == (
        "unknown configuration key 'agents.durable-async.capcity'; did you mean "
        "'agents.durable-async.capacity'?")


def test_a_misspelt_long_term_memory_key_gets_one_short_line_naming_the_right_one():
    with pytest.raises(UnknownConfigKeyError) as refused:
        AgentsConfiguration({"long-term-memory.vectorstore": "x"})
    assert str(refused.value).strip("'\"") == (
        "unknown configuration key 'long-term-memory.vectorstore'; did you mean "
        "'long-term-memory.vector-store'?")


def test_an_unknown_key_far_from_every_known_one_gets_the_list_only():
    with pytest.raises(KeyError) as refused:
        AgentsConfiguration().set("agents.zzz", 1)
    assert str(refused.value).startswith(
        "unknown configuration key 'agents.zzz'. Known keys: agents.action-state.retained, ")
    assert ", long-term-memory." not in str(refused.value)  # only the keys of its first part


def test_a_key_missing_its_middle_part_is_found_by_its_last_part():
    with pytest.raises(KeyError, match="did you mean 'agents.durable-async.capacity'"):
        AgentsConfiguration().set("agents.capacity", 8)

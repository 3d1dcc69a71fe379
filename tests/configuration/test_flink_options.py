"""Agent options in Flink's configuration, merged under what the program sets."""

import pytest

from flink_agents_ltm.api.execution_environment import (
    AgentsConfiguration,
    AgentsExecutionEnvironment,
    AgentsOptions,
)
from flink_agents_ltm.api.flink_options import read_agent_options
from flink_agents_ltm.api.memory.long_term_memory import LongTermMemoryOptions

SOURCE = "Flink configuration"


def read(text):
    config = AgentsConfiguration()
    read_agent_options(text, config, SOURCE)
    return config


def test_agent_keys_are_parsed_and_other_flink_keys_are_left_alone():
    config = read({"agents.durable-async.capacity": "4", "agents.error-handling": "ignore",
                   "parallelism.default": "2", "python.execution-mode": "thread"})
    assert config.to_dict() == {"agents.durable-async.capacity": 4,
                                "agents.error-handling": "ignore"}


def test_a_vector_store_written_as_nested_yaml_keys_is_put_back_together():
    config = read({"long-term-memory.vector-store.provider": "pgvector",
                   "long-term-memory.vector-store.config.host": "127.0.0.1",
                   "long-term-memory.vector-store.config.port": "5433"})
    assert config.get(LongTermMemoryOptions.VECTOR_STORE) == {
        "provider": "pgvector", "config": {"host": "127.0.0.1", "port": "5433"}}


def test_a_vector_store_given_both_whole_and_as_nested_keys_is_refused():
    with pytest.raises(ValueError, match="given both as a value and as nested keys"):
        read({"long-term-memory.vector-store": "shared",
              "long-term-memory.vector-store.provider": "pgvector"})


@pytest.mark.parametrize("key", ["agents.job-idd", "long-term-memory.max-item-lenght"])
def test_an_unknown_agent_key_is_refused_with_a_suggestion_naming_the_source(key):
    with pytest.raises(ValueError, match=f"^{SOURCE}: unknown configuration key '{key}'; "
                                         "did you mean"):
        read({key: "1"})


def test_a_value_that_does_not_parse_names_the_source_and_the_option():
    with pytest.raises(ValueError, match=f"^{SOURCE}: option 'agents.durable-async.capacity' "
                                         "expects an integer, got 'lots'"):
        read({"agents.durable-async.capacity": "lots"})


@pytest.mark.cluster
def test_the_program_wins_over_the_jobs_configuration_which_wins_over_config_yaml(
        tmp_path, monkeypatch):
    from pyflink.common import Configuration
    from pyflink.datastream import StreamExecutionEnvironment
    from pyflink.java_gateway import get_gateway

    get_gateway()  # launched (or reused) with the session's own FLINK_CONF_DIR
    (tmp_path / "config.yaml").write_text(
        "agents:\n  job-id: from-config-yaml\n  durable-async:\n    capacity: 3\n"
        "  error-handling: ignore\n")
    monkeypatch.setenv("FLINK_CONF_DIR", str(tmp_path))
    job = Configuration()
    job.set_string("agents.durable-async.capacity", "5")
    job.set_string("agents.job-id", "from-job-configuration")
    env = StreamExecutionEnvironment.get_execution_environment(job)
    agents_env = AgentsExecutionEnvironment.get_execution_environment(env=env)
    agents_env.get_config().set(AgentsOptions.JOB_ID, "from-the-program")

    effective = agents_env.effective_config()
    assert effective.get(AgentsOptions.JOB_ID) == "from-the-program"
    assert effective.get(AgentsOptions.ASYNC_CAPACITY) == 5
    assert effective.get(AgentsOptions.ERROR_HANDLING) == "ignore"
    assert agents_env.get_config().to_dict() == {"agents.job-id": "from-the-program"}


@pytest.mark.cluster
def test_a_vector_store_nested_in_config_yaml_arrives_as_the_dict_mem0_takes(
        tmp_path, monkeypatch):
    from pyflink.java_gateway import get_gateway

    from flink_agents_ltm.api.flink_options import flink_configuration_text

    gateway = get_gateway()
    (tmp_path / "config.yaml").write_text(
        "long-term-memory:\n  vector-store:\n    provider: pgvector\n"
        "    config: {host: 127.0.0.1, port: 5433, dbname: mem0}\n")
    monkeypatch.setenv("FLINK_CONF_DIR", str(tmp_path))
    text = flink_configuration_text(gateway.jvm.org.apache.flink.configuration.Configuration())
    assert read(text).get(LongTermMemoryOptions.VECTOR_STORE) == {
        "provider": "pgvector", "config": {"host": "127.0.0.1", "port": "5433",
                                           "dbname": "mem0"}}


@pytest.mark.cluster
def test_a_misspelt_option_in_the_jobs_configuration_fails_to_datastream_before_any_job():
    from pyflink.common import Configuration
    from pyflink.datastream import StreamExecutionEnvironment

    from flink_agents_ltm.api.agent import Agent, action
    from flink_agents_ltm.api.events import InputEvent

    class Echo(Agent):
        @action(InputEvent)
        def echo(event, ctx):
            pass

    job = Configuration()
    job.set_string("agents.durable-async.capcity", "8")
    env = StreamExecutionEnvironment.get_execution_environment(job)
    agents_env = AgentsExecutionEnvironment.get_execution_environment(env=env)
    builder = agents_env.from_datastream(env.from_collection([1]), key_selector=lambda x: x)
    with pytest.raises(ValueError, match=r"^Flink configuration \(config.yaml, -D or the "
                                         r"job's Configuration\): unknown configuration key "
                                         "'agents.durable-async.capcity'; did you mean "
                                         "'agents.durable-async.capacity'"):
        builder.apply(Echo()).to_datastream()

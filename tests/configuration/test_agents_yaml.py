"""An agent's options and resources from a YAML file: applied whole, or refused whole with
an error naming the file and the entry."""

import textwrap

import pytest

from flink_agents_ltm.api.agents_yaml import AgentsYamlError
from flink_agents_ltm.api.execution_environment import AgentsExecutionEnvironment, AgentsOptions
from flink_agents_ltm.api.memory.long_term_memory import LongTermMemoryOptions
from flink_agents_ltm.api.resources import ResourceType
from flink_agents_ltm.integrations.chat_models.ollama import OllamaChatModelSetup
from flink_agents_ltm.integrations.chat_models.scripted import ScriptedChatModelSetup
from flink_agents_ltm.integrations.embedding_models.openai import OpenAIEmbeddingModelSetup


def agents_env():
    # load_yaml does not touch the Flink environment
    return AgentsExecutionEnvironment.get_execution_environment(env=object())


def write(tmp_path, text):
    path = tmp_path / "agents.yaml"
    path.write_text(textwrap.dedent(text))
    return path


def test_options_flat_or_nested_and_typed_or_text_are_set_on_the_environment(tmp_path):
    env = agents_env().load_yaml(write(tmp_path, """
        config:
          agents.job-id: support-bot
          agents:
            durable-async:
              capacity: 8
              timeout-ms: 30 s
          long-term-memory:
            vector-store: {provider: pgvector, config: {host: 127.0.0.1, port: 5433}}
            infer: false
        """))
    config = env.get_config()
    assert config.get(AgentsOptions.JOB_ID) == "support-bot"
    assert config.get(AgentsOptions.ASYNC_CAPACITY) == 8
    assert config.get(AgentsOptions.ASYNC_TIMEOUT_MS) == 30_000
    assert config.get(LongTermMemoryOptions.VECTOR_STORE) == {
        "provider": "pgvector", "config": {"host": "127.0.0.1", "port": 5433}}
    assert config.get(LongTermMemoryOptions.INFER) is False


def test_resources_are_built_from_aliases_class_paths_and_mem0_store_specs(tmp_path):
    env = agents_env().load_yaml(write(tmp_path, """
        chat_model_setups:
          - {name: local, clazz: ollama, model: "qwen3:8b", base_url: "http://localhost:11434"}
          - name: offline
            clazz: flink_agents_ltm.integrations.chat_models.scripted.ScriptedChatModelSetup
            answers: [hello]
        embedding_model_setups:
          - name: embedder
            clazz: flink_agents_ltm.integrations.embedding_models.openai:OpenAIEmbeddingModelSetup
            model: m
            dimensions: 8
            api_key_env: null
        vector_stores:
          - {name: shared, provider: pgvector, config: {host: 127.0.0.1}}
        rerankers:
          - {name: bm25, clazz: lexical, k1: 1.5}
        """))
    resources = env.resources
    assert {name: kind for name, (kind, _) in resources.items()} == {
        "local": ResourceType.CHAT_MODEL, "offline": ResourceType.CHAT_MODEL,
        "embedder": ResourceType.EMBEDDING_MODEL, "shared": ResourceType.VECTOR_STORE,
        "bm25": ResourceType.RERANKER}
    assert resources["bm25"][1].build().k1 == 1.5
    assert isinstance(resources["local"][1].build(), OllamaChatModelSetup)
    offline = resources["offline"][1].build()
    assert isinstance(offline, ScriptedChatModelSetup)
    assert offline.chat([]).content == "hello"
    assert isinstance(resources["embedder"][1].build(), OpenAIEmbeddingModelSetup)
    assert resources["shared"][1].build() == {"provider": "pgvector",
                                              "config": {"host": "127.0.0.1"}}


@pytest.mark.parametrize("text, message", [
    ("chat_models: []", "unknown section 'chat_models'; did you mean 'chat_model_setups'?"),
    ("config: {agents.job-idd: x}", "unknown configuration key 'agents.job-idd'; did you "
                                   "mean 'agents.job-id'?"),
    ("config: {agents.durable-async.capacity: lots}",
     "option 'agents.durable-async.capacity' expects an integer, got 'lots'"),
    ("config: {agents.durable-async.capacity: 0}", "must be positive, got 0"),
    ("chat_model_setups: [{clazz: ollama}]", r"chat_model_setups\[0\]: 'name' must be a "
                                             "non-empty string, got None"),
    ("chat_model_setups: [{name: m}]", r"chat_model_setups\[0\] \('m'\): 'clazz' is required"),
    ("chat_model_setups: [{name: m, clazz: nope}]", "'nope' is neither an alias"),
    ("chat_model_setups: [{name: m, clazz: no.such.Module}]", "cannot import 'no.such.Module'"),
    ("chat_model_setups: [{name: m, clazz: openai}, {name: m, clazz: ollama}]",
     "resource 'm' is declared twice"),
    ("embedding_model_setups: [{name: e, clazz: scripted}]", "'scripted' is neither an alias"),
    ("embedding_model_setups: [{name: e, clazz: "
     "flink_agents_ltm.integrations.chat_models.ollama.OllamaChatModelSetup}]",
     "is not a subclass of BaseEmbeddingModelSetup"),
    ("rerankers: [{name: r, clazz: flink_agents_ltm.integrations.chat_models.ollama."
     "OllamaChatModelSetup}]", "is not a subclass of BaseReranker"),
    ("- a list", "the top level must be a map of sections"),
    ("config: [1", "is not valid YAML"),
])
def test_a_malformed_file_is_refused_whole_naming_the_problem(tmp_path, text, message):
    env = agents_env()
    path = write(tmp_path, "config: {agents.job-id: first}\n" if "config" not in text else "")
    env.load_yaml(path)
    broken = write(tmp_path, text)
    with pytest.raises(AgentsYamlError, match=message) as refused:
        env.load_yaml(broken)
    assert str(broken) in str(refused.value)
    assert env.resources == {}


def test_a_file_that_does_not_exist_is_named():
    with pytest.raises(AgentsYamlError, match="cannot read agents YAML /no/such/agents.yaml"):
        agents_env().load_yaml("/no/such/agents.yaml")


def test_a_resource_already_on_the_environment_is_refused_and_nothing_is_applied(tmp_path):
    env = agents_env().load_yaml(write(tmp_path, """
        chat_model_setups: [{name: assistant, clazz: scripted, answers: [one]}]
        """))
    with pytest.raises(ValueError, match=r"resource\(s\) \['assistant'\] are already added"):
        env.load_yaml(write(tmp_path, """
            config: {agents.job-id: second}
            chat_model_setups: [{name: assistant, clazz: scripted, answers: [two]}]
            """))
    assert env.get_config().get(AgentsOptions.JOB_ID) == "flink-agents"
    assert env.resources["assistant"][1].build().chat([]).content == "one"


def test_what_the_program_sets_after_loading_the_file_wins(tmp_path):
    env = agents_env().load_yaml(write(tmp_path, "config: {agents.job-id: from-yaml}"))
    env.get_config().set(AgentsOptions.JOB_ID, "from-code")
    assert env.get_config().get(AgentsOptions.JOB_ID) == "from-code"

"""Apache Flink Agents' option keys (``UPSTREAM_KEYS`` in api/options.py): the ones with a
meaning here set our options, wherever options are written (the program, Flink's
configuration and its ``agent:`` section, a YAML file), in upstream's value forms; one
option under two keys with different values is refused naming both; the keys with no
equivalent are refused saying why, or, when they only change how the job is observed,
ignored with a warning. No value is ever shown."""

from __future__ import annotations

import logging
import re
import textwrap
from pathlib import Path

import pytest

from flink_agents_ltm.api.agents_yaml import AgentsYamlError, read_agents_yaml
from flink_agents_ltm.api.configuration import ForeignKey, KeyAlias
from flink_agents_ltm.api.flink_options import read_agent_options
from flink_agents_ltm.api.options import (
    UPSTREAM_KEYS,
    AgentsConfiguration,
    AgentsOptions,
    LongTermMemoryOptions,
)

SOURCE = "Flink configuration"
DOCS_PAGE = Path(__file__).resolve().parents[2] / "docs" / "coming-from-flink-agents.md"

# Every key of Apache Flink Agents' option classes (api/.../AgentConfigOptions.java,
# AgentExecutionOptions.java, MemoryEventOptions.java, memory/LongTermMemoryOptions.java;
# python/flink_agents/api/core_options.py, memory/long_term_memory.py), main at 8ad3a32
# (2026-08-21) and releases 0.2.1 to 0.3.1; event-log.type.<EVENT_TYPE>.level is a pattern.
UPSTREAM = [
    "long-term-memory.mem0.chat-model-setup", "long-term-memory.mem0.embedding-model-setup",
    "long-term-memory.mem0.vector-store",
    "long-term-memory.backend", "long-term-memory.external-vector-store-name",
    "long-term-memory.async-compaction", "long-term-memory.async-compaction.thread-count",
    "eventLoggerType", "action.trigger-condition.evaluate-failure-strategy", "baseLogDir",
    "prettyPrint", "actionStateStoreBackend", "kafkaBootstrapServers", "kafkaActionStateTopic",
    "kafkaActionStateTopicNumPartitions", "kafkaActionStateTopicReplicationFactor",
    "flussBootstrapServers", "flussActionStateDatabase", "flussActionStateTable",
    "flussActionStateTableBuckets", "flussSecurityProtocol", "flussSaslMechanism",
    "flussSaslJaasConfig", "flussSaslUsername", "flussSaslPassword", "job-identifier",
    "event-log.level", "event-log.trace.enabled", "event-log.standard.max-string-length",
    "event-log.standard.max-array-elements", "event-log.standard.max-depth",
    "event-log.type.ChatRequestEvent.level", "event-listeners",
    "error-handling-strategy", "max-retries", "retry-wait-interval", "num-async-threads",
    "chat.async", "tool-call.async", "rag.async", "agent-run.begin-event",
    "short-term-memory.state-ttl.ms", "short-term-memory.state-ttl.update-type",
    "short-term-memory.state-ttl.visibility",
    "memory.generate-event", "memory.generate-event.short-term-write",
    "memory.generate-event.short-term-read", "memory.generate-event.sensory-write",
    "memory.generate-event.sensory-read", "memory.generate-event.long-term-update",
    "memory.generate-event.long-term-get", "memory.generate-event.long-term-search",
]

# (upstream key, value as upstream's users write it, our option, the value it gets)
ALIASES = [
    ("long-term-memory.mem0.chat-model-setup", "assistant",
     LongTermMemoryOptions.CHAT_MODEL_SETUP, "assistant"),
    ("long-term-memory.mem0.embedding-model-setup", "embedder",
     LongTermMemoryOptions.EMBEDDING_MODEL_SETUP, "embedder"),
    ("long-term-memory.mem0.vector-store", "shared", LongTermMemoryOptions.VECTOR_STORE, "shared"),
    ("job-identifier", "support-bot", AgentsOptions.JOB_ID, "support-bot"),
    ("num-async-threads", "8", AgentsOptions.ASYNC_CAPACITY, 8),
    ("error-handling-strategy", "ignore", AgentsOptions.ERROR_HANDLING, "ignore"),
    ("error-handling-strategy", "FAIL", AgentsOptions.ERROR_HANDLING, "fail"),
    ("error-handling-strategy", "ErrorHandlingStrategy.IGNORE", AgentsOptions.ERROR_HANDLING,
     "ignore"),
    ("error-handling-strategy", "retry", AgentsOptions.ERROR_HANDLING, "retry"),
    ("max-retries", "5", AgentsOptions.RETRY_MAX_RETRIES, 5),
    ("retry-wait-interval", "2", AgentsOptions.RETRY_INITIAL_BACKOFF_MS, 2000),
    ("short-term-memory.state-ttl.ms", "60000", AgentsOptions.SHORT_TERM_MEMORY_TTL_MS, 60_000),
    ("short-term-memory.state-ttl.ms", "10 min", AgentsOptions.SHORT_TERM_MEMORY_TTL_MS,
     600_000),
    ("memory.generate-event.short-term-write", "true",
     AgentsOptions.MEMORY_EVENTS_SHORT_TERM_WRITE, True),
    ("memory.generate-event.short-term-read", "TRUE",
     AgentsOptions.MEMORY_EVENTS_SHORT_TERM_READ, True),
    ("memory.generate-event.sensory-write", "true", AgentsOptions.MEMORY_EVENTS_SENSORY_WRITE,
     True),
    ("memory.generate-event.sensory-read", "false", AgentsOptions.MEMORY_EVENTS_SENSORY_READ,
     False),
]
IDS = [f"{key}={text}" for key, text, _, _ in ALIASES]


def from_flink(text: dict[str, str]) -> AgentsConfiguration:
    config = AgentsConfiguration()
    read_agent_options(text, config, SOURCE)
    return config


def from_yaml(tmp_path: Path, document: str) -> AgentsConfiguration:
    path = tmp_path / "agents.yaml"
    path.write_text(textwrap.dedent(document))
    config = AgentsConfiguration()
    read_agents_yaml(path, into=config)
    return config


# ------------------------------------------------------------------ aliases set our options


@pytest.mark.parametrize(("key", "text", "option", "expected"), ALIASES, ids=IDS)
def test_an_upstream_key_set_as_text_in_the_program_sets_our_option(key, text, option, expected):
    config = AgentsConfiguration().set_string(key, text)
    assert config.get(option) == expected
    assert config.to_dict() == {option.key: expected}


@pytest.mark.parametrize(("key", "text", "option", "expected"), ALIASES, ids=IDS)
def test_an_upstream_key_under_flink_agents_agent_section_of_config_yaml_sets_our_option(
        key, text, option, expected):
    assert from_flink({f"agent.{key}": text, "parallelism.default": "1"}).to_dict() == {
        option.key: expected}


@pytest.mark.parametrize(("key", "text", "option", "expected"), ALIASES, ids=IDS)
def test_an_upstream_key_in_the_config_section_of_an_agents_yaml_sets_our_option(
        tmp_path, key, text, option, expected):
    config = from_yaml(tmp_path, f"config:\n  {key}: '{text}'\n")
    assert config.to_dict() == {option.key: expected}


def test_upstream_keys_nested_as_upstream_writes_config_yaml_and_typed_by_yaml_are_read(
        tmp_path):
    config = from_yaml(tmp_path, """
        config:
          job-identifier: support-bot
          num-async-threads: 4
          short-term-memory:
            state-ttl:
              ms: 0
          long-term-memory:
            mem0:
              chat-model-setup: assistant
              vector-store: shared
          chat:
            async: true
        """)
    assert config.to_dict() == {
        "agents.job-id": "support-bot", "agents.durable-async.capacity": 4,
        "agents.short-term-memory.ttl-ms": None,
        "long-term-memory.chat-model-setup": "assistant",
        "long-term-memory.vector-store": "shared"}


def test_the_mem0_keys_need_no_agent_section_in_flinks_configuration_as_ours_do():
    config = from_flink({"long-term-memory.mem0.vector-store": "shared",
                         "long-term-memory.mem0.chat-model-setup": "assistant"})
    assert config.get(LongTermMemoryOptions.VECTOR_STORE) == "shared"
    assert config.get(LongTermMemoryOptions.CHAT_MODEL_SETUP) == "assistant"


def test_a_zero_short_term_memory_ttl_is_upstreams_off_and_leaves_ours_unset():
    config = AgentsConfiguration().set("short-term-memory.state-ttl.ms", 0)
    assert config.get(AgentsOptions.SHORT_TERM_MEMORY_TTL_MS) is None
    with pytest.raises(ValueError, match=r"^option 'short-term-memory.state-ttl.ms' must be 0 "
                                         r"\(no TTL\) or positive, got -1$"):
        config.set("short-term-memory.state-ttl.ms", -1)


def test_upstreams_option_names_and_setters_of_its_config_snippet_work():
    config = AgentsConfiguration()
    config.set(LongTermMemoryOptions.Mem0.CHAT_MODEL_SETUP, "my_chat_model")
    config.set(LongTermMemoryOptions.Mem0.EMBEDDING_MODEL_SETUP, "my_embedding_model")
    config.set(LongTermMemoryOptions.Mem0.VECTOR_STORE, "my_vector_store")
    config.set_int("num-async-threads", 16)
    config.set_str("job-identifier", "my_job")
    assert config.to_dict() == {
        "long-term-memory.chat-model-setup": "my_chat_model",
        "long-term-memory.embedding-model-setup": "my_embedding_model",
        "long-term-memory.vector-store": "my_vector_store",
        "agents.durable-async.capacity": 16, "agents.job-id": "my_job"}
    assert config.get("long-term-memory.mem0.vector-store") == "my_vector_store"


def test_a_value_of_the_wrong_form_names_the_upstream_key_it_was_given_under():
    with pytest.raises(ValueError, match="^option 'num-async-threads' expects an integer"):
        AgentsConfiguration().set_string("num-async-threads", "many")
    with pytest.raises(ValueError, match=r"must be positive, got 0 \(given as "
                                         r"'num-async-threads'\)$"):
        AgentsConfiguration().set("num-async-threads", 0)
    with pytest.raises(ValueError, match="^option 'error-handling-strategy' is FAIL, IGNORE or "
                                         "RETRY; its value is not shown"):
        AgentsConfiguration().set("error-handling-strategy", "skip")


def test_retry_is_taken_with_upstreams_retry_keys():
    config = AgentsConfiguration().set_string("error-handling-strategy",
                                              "ErrorHandlingStrategy.RETRY")
    config.set("max-retries", 2).set("retry-wait-interval", 3)
    assert config.to_dict() == {"agents.error-handling": "retry",
                                "agents.error-handling.retry.max-retries": 2,
                                "agents.error-handling.retry.initial-backoff-ms": 3000}
    with pytest.raises(ValueError,
                       match="must be at least 0, got -1 \\(given as 'max-retries'\\)$"):
        AgentsConfiguration().set("max-retries", -1)
    # upstream's interval is whole seconds: a duration would be read as milliseconds
    with pytest.raises(ValueError, match="^option 'retry-wait-interval' expects an integer, "
                                         "got '2 s'$"):
        AgentsConfiguration().set_string("retry-wait-interval", "2 s")
    with pytest.raises(ValueError, match="^option 'retry-wait-interval' must be 0 or more "
                                         "seconds, got -1$"):
        AgentsConfiguration().set_string("retry-wait-interval", "-1")


def test_a_misspelt_upstream_key_is_refused_suggesting_the_upstream_key():
    with pytest.raises(KeyError, match="did you mean 'long-term-memory.mem0.vector-store'"):
        AgentsConfiguration().set("long-term-memory.mem0.vector-stor", "shared")
    with pytest.raises(ValueError, match=f"^{SOURCE}: unknown configuration key "
                                         "'agent.job-identifer'; did you mean 'job-identifier'"):
        from_flink({"agent.job-identifer": "x"})


# ------------------------------------------------------------------ one option, two keys


def test_one_option_under_upstreams_key_and_ours_with_different_values_is_refused_naming_both():
    config = AgentsConfiguration().set("job-identifier", "a")
    with pytest.raises(ValueError, match=r"^options 'job-identifier' and 'agents.job-id' are one "
                                         "option, set to different values; keep one$"):
        config.set(AgentsOptions.JOB_ID, "b")
    assert config.get(AgentsOptions.JOB_ID) == "a"


def test_one_option_under_both_keys_with_the_same_value_is_fine_and_ours_may_be_reset():
    config = AgentsConfiguration().set(AgentsOptions.JOB_ID, "a").set("job-identifier", "a")
    assert config.get(AgentsOptions.JOB_ID) == "a"
    config = AgentsConfiguration().set(AgentsOptions.JOB_ID, "a").set(AgentsOptions.JOB_ID, "b")
    assert config.get(AgentsOptions.JOB_ID) == "b"


def test_values_that_differ_only_in_upstreams_form_are_the_same_value():
    config = AgentsConfiguration({"agents.error-handling": "ignore",
                                  "error-handling-strategy": "IGNORE",
                                  "agents.short-term-memory.ttl-ms": 60_000})
    config.set_string("short-term-memory.state-ttl.ms", "1 min")
    assert config.get(AgentsOptions.ERROR_HANDLING) == "ignore"
    assert config.get(AgentsOptions.SHORT_TERM_MEMORY_TTL_MS) == 60_000


def test_one_option_under_both_keys_in_flinks_configuration_is_refused_naming_both():
    # (read in key order: agent.* before agents.*)
    with pytest.raises(ValueError, match=f"^{SOURCE}: options 'job-identifier' and "
                                         "'agents.job-id' are one option, set to different "
                                         "values; keep one$"):
        from_flink({"agent.job-identifier": "a", "agents.job-id": "b"})


def test_one_option_under_both_keys_in_a_yaml_file_is_refused_naming_both(tmp_path):
    with pytest.raises(AgentsYamlError, match="options 'long-term-memory.vector-store' and "
                                              "'long-term-memory.mem0.vector-store' are one "
                                              "option"):
        from_yaml(tmp_path, """
            config:
              long-term-memory.vector-store: one
              long-term-memory.mem0.vector-store: another
            """)


def test_one_key_in_the_agent_section_and_outside_it_is_refused_naming_both():
    with pytest.raises(ValueError, match=f"^{SOURCE}: 'agent.long-term-memory.mem0.vector-store' "
                                         "and 'long-term-memory.mem0.vector-store' are one key"):
        from_flink({"agent.long-term-memory.mem0.vector-store": "a",
                    "long-term-memory.mem0.vector-store": "a"})


def test_a_later_layer_replaces_a_value_given_under_the_other_key():
    # Flink's configuration, then the program (or a YAML file loaded after a set): the
    # later layer wins, whichever key each used (effective_config, load_yaml).
    config = from_flink({"agent.job-identifier": "from-config-yaml"})
    config.update(AgentsConfiguration().set(AgentsOptions.JOB_ID, "from-the-program").to_dict())
    assert config.get(AgentsOptions.JOB_ID) == "from-the-program"


# ------------------------------------------------------------------ keys with no equivalent


@pytest.mark.parametrize(("key", "text", "reason"), [
    ("actionStateStoreBackend", "kafka", "agents.action-state.store"),
    ("kafkaBootstrapServers", "localhost:9092", "agents.action-state.store"),
    ("event-listeners", "com.example.Listener", "no event listeners"),
    ("memory.generate-event", "true", "every long-term memory operation"),
    ("memory.generate-event.long-term-search", "false", "every long-term memory operation"),
    ("memory.generate-event", "false", "agents.memory-events"),
    ("chat.async", "false", "worker pool"),
    ("short-term-memory.state-ttl.update-type", "ON_READ_AND_WRITE", "last write"),
    ("short-term-memory.state-ttl.visibility", "RETURN_EXPIRED_IF_NOT_CLEANED_UP",
     "never returned"),
    ("long-term-memory.external-vector-store-name", "store", "Flink Agents 0.2"),
])
def test_a_key_that_would_change_what_the_job_does_is_refused_saying_why(key, text, reason):
    with pytest.raises(ValueError, match=f"^{SOURCE}: option '{re.escape(key)}' has no "
                                         "equivalent in flink-agents-ltm") as raised:
        from_flink({f"agent.{key}": text})
    assert reason in str(raised.value)


@pytest.mark.parametrize(("key", "value"), [
    ("chat.async", True), ("tool-call.async", "true"), ("rag.async", "TRUE"),
    ("agent-run.begin-event", False), ("memory.generate-event.long-term-update", "true"),
    ("short-term-memory.state-ttl.update-type", "on_create_and_write"),
    ("short-term-memory.state-ttl.visibility", "NEVER_RETURN_EXPIRED"),
    ("prettyPrint", "false"),
])
def test_a_value_that_asks_for_what_this_runtime_does_anyway_is_taken_with_no_effect(
        key, value, caplog):
    caplog.set_level(logging.DEBUG)
    config = AgentsConfiguration().set(key, value)
    assert config.to_dict() == {}
    assert caplog.records == []


@pytest.mark.parametrize(("key", "text"), [
    ("eventLoggerType", "FILE"), ("baseLogDir", "/var/log/agents"), ("prettyPrint", "true"),
    ("event-log.level", "VERBOSE"), ("event-log.standard.max-depth", "3"),
    ("event-log.type.ChatRequestEvent.level", "OFF"),
    ("action.trigger-condition.evaluate-failure-strategy", "FAIL"),
])
def test_a_key_that_only_changes_how_the_job_is_observed_is_ignored_with_a_warning(
        key, text, caplog):
    caplog.set_level(logging.WARNING)
    config = from_flink({f"agent.{key}": text})
    assert config.to_dict() == {}
    assert [record.getMessage() for record in caplog.records] == [
        f"option '{key}' has no effect in flink-agents-ltm and is ignored: "
        + next(a.note for a in UPSTREAM_KEYS
               if isinstance(a, ForeignKey) and a.matches(key))]
    # the messages, not caplog.text: its "file:line" prefix may hold the text ("3")
    assert text not in "\n".join(record.getMessage() for record in caplog.records)


def test_an_ignored_key_holding_a_secret_shows_it_nowhere(caplog):
    marker = "marker-password-7f3c"
    caplog.set_level(logging.DEBUG)
    config = from_flink({"agent.baseLogDir": f"/logs/user:{marker}@host"})
    assert config.to_dict() == {}
    assert caplog.records and marker not in caplog.text


def test_an_unknown_key_in_the_agent_section_is_refused_as_ours_are():
    with pytest.raises(ValueError, match=f"^{SOURCE}: unknown configuration key "
                                         "'agent.my-own-setting'"):
        from_flink({"agent.my-own-setting": "x"})


# ------------------------------------------------------------------ the table is whole


@pytest.mark.parametrize("key", UPSTREAM)
def test_every_key_of_upstreams_option_classes_is_known(key):
    assert AgentsConfiguration().knows(key)
    assert any((isinstance(a, ForeignKey) and a.matches(key)) or a.key == key
               for a in UPSTREAM_KEYS)


def test_the_coming_from_flink_agents_page_lists_every_upstream_key_with_what_it_becomes():
    rows = {}
    for line in DOCS_PAGE.read_text().splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if line.startswith("| `") and len(cells) >= 2:
            for key in re.findall(r"`([^`]+)`", cells[0]):
                rows[key] = cells[1]
    for alias in UPSTREAM_KEYS:
        listed = [key for key in rows if key == alias.key
                  or (isinstance(alias, ForeignKey) and alias.prefix and alias.matches(key))]
        assert listed, f"{alias.key} is not in {DOCS_PAGE.name}"
        becomes = rows[listed[0]]
        if isinstance(alias, KeyAlias):
            assert becomes.startswith(f"`{alias.option.key}`"), alias.key
        else:
            assert becomes.startswith(("refused", "ignored", "accepted")), alias.key

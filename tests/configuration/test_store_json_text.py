"""A vector store written as JSON text (the only form ``-D`` can carry) is the inline store
it spells, wherever a name may go: set, set_string, or Flink's configuration. Its password
(a unique marker) never shows up in an error, its causes, its traceback or a log record,
neither when the store fails to connect nor when the JSON is malformed."""

from __future__ import annotations

import json
import logging
import traceback
import uuid

import pytest

from flink_agents_ltm.api.agent import Agent
from flink_agents_ltm.api.execution_environment import AgentsConfiguration
from flink_agents_ltm.api.flink_options import flink_configuration_text, read_agent_options
from flink_agents_ltm.api.memory.long_term_memory import LongTermMemoryOptions
from flink_agents_ltm.integrations.mem0.long_term_memory import Mem0LongTermMemory
from flink_agents_ltm.runtime.resource_provider import ResourceProvider

MARKER = f"wrong-password-{uuid.uuid4().hex}"
STORE = LongTermMemoryOptions.VECTOR_STORE
# A pgvector store on a closed loopback port: it fails to connect, its password rides along.
SPEC = {"provider": "pgvector", "config": {"host": "127.0.0.1", "port": 1, "user": "mem0",
                                           "password": MARKER, "dbname": "mem0"}}
SPEC_TEXT = json.dumps(SPEC)
MALFORMED = SPEC_TEXT[:-2]  # the closing braces cut off: the password is in the text


def by_set(text: str) -> AgentsConfiguration:
    return AgentsConfiguration().set(STORE, text)


def by_set_string(text: str) -> AgentsConfiguration:
    return AgentsConfiguration().set_string(STORE, text)


def by_flink_configuration(text: str) -> AgentsConfiguration:
    """As ``-Dlong-term-memory.vector-store=...`` on ``flink run`` hands it over: a value of
    the job's Flink configuration, read as the operator reads it."""
    from pyflink.common import Configuration as FlinkConfiguration

    flink = FlinkConfiguration()
    flink.set_string(STORE.key, text)
    config = AgentsConfiguration()
    read_agent_options(flink_configuration_text(flink._j_configuration), config,
                       "Flink configuration")
    return config


WAYS = {"set": by_set, "set_string": by_set_string, "-D": by_flink_configuration}


def everything_said(error: BaseException, caplog) -> str:
    return "".join(traceback.format_exception(error)) + "\n".join(
        record.getMessage() + (record.exc_text or "") for record in caplog.records)


class NoResources(Agent):
    """Declares nothing: a name given for the store would not be found."""


@pytest.mark.parametrize("way", WAYS)
def test_a_vector_store_given_as_json_text_is_the_inline_store_it_spells(way):
    assert WAYS[way](SPEC_TEXT).get(STORE) == SPEC


@pytest.mark.parametrize("way", WAYS)
def test_a_store_given_as_json_text_fails_as_that_store_and_never_shows_its_password(
        way, tmp_path, caplog):
    caplog.set_level(logging.DEBUG)
    config = WAYS[way](SPEC_TEXT).set(LongTermMemoryOptions.BASE_DIR, str(tmp_path))
    provider = ResourceProvider(NoResources(), lambda: None)
    try:
        with pytest.raises(Exception) as raised:  # noqa: PT011 - its text is checked
            Mem0LongTermMemory.from_config("secrets", config,
                                           resources=provider.for_long_term_memory)
    finally:
        provider.close()

    assert "Connection refused" in str(raised.value)  # it tried the store, not a name
    assert "is declared" not in str(raised.value)
    assert MARKER not in everything_said(raised.value, caplog)


@pytest.mark.parametrize("way", WAYS)
def test_malformed_store_json_is_refused_by_where_it_breaks_without_echoing_it(way, caplog):
    caplog.set_level(logging.DEBUG)
    with pytest.raises(ValueError) as raised:  # noqa: PT011 - its whole text is checked
        WAYS[way](MALFORMED)

    assert "'long-term-memory.vector-store' is text starting with '{' but not a valid JSON " \
           "object (Expecting ',' delimiter at line 1 column" in str(raised.value)
    assert MARKER not in everything_said(raised.value, caplog)


@pytest.mark.parametrize("way", WAYS)
def test_a_store_name_that_holds_a_credential_is_refused_without_echoing_it(way, caplog):
    caplog.set_level(logging.DEBUG)
    with pytest.raises(ValueError) as raised:  # noqa: PT011 - its whole text is checked
        WAYS[way](f"postgresql://mem0:{MARKER}@127.0.0.1:5432/mem0")

    assert "is text that holds a credential (a connection URL or password=...), not a " \
           "name" in str(raised.value)
    assert MARKER not in everything_said(raised.value, caplog)


def test_a_missing_resource_named_by_a_secret_is_reported_with_the_secret_masked():
    provider = ResourceProvider(NoResources(), lambda: None)
    try:
        with pytest.raises(KeyError) as raised:
            provider.resolve(f"postgresql://mem0:{MARKER}@db/mem0", "vector_store")
    finally:
        provider.close()
    assert "no vector store named 'postgresql://mem0:***@db/mem0' is declared" in str(
        raised.value)
    assert MARKER not in "".join(traceback.format_exception(raised.value))


def test_text_given_to_a_number_option_is_shown_masked_and_cut_short():
    with pytest.raises(ValueError) as raised:  # noqa: PT011 - its whole text is checked
        AgentsConfiguration().set_string("agents.durable-async.capacity",
                                         f"password={MARKER}")
    assert str(raised.value) == ("option 'agents.durable-async.capacity' expects an integer, "
                                 "got 'password=***'")

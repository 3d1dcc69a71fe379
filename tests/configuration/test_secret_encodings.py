"""A store's configuration in every encoding a tool chain makes of it (a ``-D`` or YAML value
quoted once too often, JSON encoded twice, backslash-escaped quotes, URL-encoded): it is used
as the configuration, never taken as a store's name; broken, it is refused with an error that
shows no value; and its marker password reaches no message, ``str()``/``repr()`` of an
error, traceback or log record, whatever the encoding."""

from __future__ import annotations

import json
import logging
import traceback
import urllib.parse
import uuid

import pytest

from flink_agents_ltm.api.configuration import ConfigurationError, spec_or_name
from flink_agents_ltm.api.execution_environment import AgentsConfiguration
from flink_agents_ltm.api.memory.long_term_memory import LongTermMemoryOptions
from flink_agents_ltm.api.redaction import redact_text
from flink_agents_ltm.api.resources import MissingResourceError
from tests.configuration.test_no_secret_in_bad_configurations import (
    CLOSED,
    everything_said,
    files_holding,
    open_memory,
    pgvector,
)

STORE = LongTermMemoryOptions.VECTOR_STORE
# A marker with what encodings change: a quote, a backslash, '@', '/', ':', '%', '&', a space.
MARKERS = [f"marker{uuid.uuid4().hex[:12]}",
           f'mk"r\\{uuid.uuid4().hex[:8]}@x/y:z%&w v']
SPEC = pgvector(password="<marker>", **CLOSED)


def encodings(text: str) -> dict[str, str]:
    once = json.dumps(text)
    return {
        "JSON": text,
        "JSON quoted once too often": once,
        "JSON quoted twice too often": json.dumps(once),
        "backslash-escaped quotes": once[1:-1],
        "YAML single-quoted": "'" + text.replace("'", "''") + "'",
        "URL-encoded": urllib.parse.quote(text, safe=""),
        "URL-encoded, plus for space": urllib.parse.quote_plus(text),
        "URL-encoded JSON string": urllib.parse.quote(once, safe=""),
    }


def spec_text(marker: str) -> str:
    return json.dumps(SPEC).replace("<marker>", json.dumps(marker)[1:-1])


def spec(marker: str) -> dict:
    return json.loads(spec_text(marker))


def all_forms(marker: str) -> list[str]:
    escaped = json.dumps(marker)[1:-1]
    return [marker, escaped, json.dumps(escaped)[1:-1], urllib.parse.quote(marker, safe=""),
            urllib.parse.quote_plus(marker), marker.split('"')[0][:10]]


def assert_nowhere(marker: str, text: str) -> None:
    for form in all_forms(marker):
        assert form not in text, f"{form!r} in {text!r}"


@pytest.mark.parametrize("marker", MARKERS, ids=["plain marker", "marker with punctuation"])
@pytest.mark.parametrize("encoding", encodings("{}"))
def test_a_store_spec_in_any_encoding_is_the_spec_set_or_parsed(encoding, marker):
    text = encodings(spec_text(marker))[encoding]

    assert AgentsConfiguration().set_string(STORE.key, text).get(STORE) == spec(marker)
    assert AgentsConfiguration({STORE.key: text}).get(STORE) == spec(marker)
    assert AgentsConfiguration().set_string("long-term-memory.mem0.vector-store",
                                            text).get(STORE) == spec(marker)


@pytest.mark.parametrize("encoding", encodings("{}"))
def test_a_store_spec_in_any_encoding_opens_that_store_and_no_error_shows_its_password(
        encoding, tmp_path, caplog):
    marker = MARKERS[1]
    caplog.set_level(logging.DEBUG)
    with pytest.raises(Exception) as raised:  # noqa: PT011 - its text is checked
        open_memory({STORE.key: encodings(spec_text(marker))[encoding]}, tmp_path)

    assert not isinstance(raised.value, MissingResourceError)  # not taken as a store name
    assert "127.0.0.1:1" in str(raised.value)  # the store of the spec, at its closed port
    said = everything_said(raised.value, caplog.records) + repr(raised.value)
    assert_nowhere(marker, said)
    assert files_holding(marker, tmp_path) == []


@pytest.mark.parametrize("marker", MARKERS, ids=["plain marker", "marker with punctuation"])
@pytest.mark.parametrize("encoding", encodings("{}"))
def test_a_broken_store_spec_in_any_encoding_is_refused_showing_no_value(encoding, marker,
                                                                          caplog):
    caplog.set_level(logging.DEBUG)
    broken = spec_text(marker)[:-2]  # its closing braces lost
    with pytest.raises(ConfigurationError) as raised:
        AgentsConfiguration().set_string(STORE.key, encodings(broken)[encoding])

    message = str(raised.value)
    assert "long-term-memory.vector-store" in message
    assert "not shown" in message
    assert "\n" not in message
    assert_nowhere(marker, everything_said(raised.value, caplog.records) + repr(raised.value))


@pytest.mark.parametrize("text", ["{provider=pgvector, config={password=<m>}}",
                                  'provider: pgvector, password: "<m>"',
                                  "host=db password=<m>", "%7Bbroken<m>",
                                  '[{"provider": "pgvector", "config": {"user": "<m>"}}]',
                                  "provider: pgvector <m>", '"\\"<m>'])
def test_text_that_looks_like_a_configuration_but_is_none_is_refused_showing_no_value(text):
    marker = MARKERS[0]
    with pytest.raises(ConfigurationError, match="its text is not shown") as raised:
        AgentsConfiguration().set_string(STORE.key, text.replace("<m>", marker))
    assert_nowhere(marker, str(raised.value) + repr(raised.value))


@pytest.mark.parametrize("text", ["shared_store", "store-2", "vector.store"])
def test_a_store_name_stays_a_name_also_quoted_once_too_often(text):
    assert AgentsConfiguration().set_string(STORE.key, text).get(STORE) == text
    assert spec_or_name(json.dumps(text), "option 'x'") == text
    assert spec_or_name(f"'{text}'", "option 'x'") == text


@pytest.mark.parametrize("marker", MARKERS, ids=["plain marker", "marker with punctuation"])
@pytest.mark.parametrize("encoding", encodings("{}"))
def test_redaction_masks_a_password_in_any_encoding_in_errors_and_logs(encoding, marker,
                                                                       caplog):
    caplog.set_level(logging.DEBUG)
    text = encodings(spec_text(marker))[encoding]
    masked = redact_text(text)
    assert_nowhere(marker, masked)
    assert redact_text(masked) == masked  # masking masked text changes nothing

    error = MissingResourceError(f"no vector store named '{text}' is declared")
    assert_nowhere(marker, str(error) + repr(error))
    logging.getLogger("flink_agents_ltm.test").error("store %s failed", text)
    try:
        raise ConnectionError(f"cannot use {text}")
    except ConnectionError:
        logging.getLogger("mem0.vector_stores.pgvector").exception("failed")
    assert_nowhere(marker, caplog.text + "".join(traceback.format_exception(error)))
    assert_nowhere(marker, "\n".join(record.exc_text or "" for record in caplog.records))


@pytest.mark.parametrize("quoting", [json.dumps, lambda text: json.dumps(json.dumps(text)),
                                     lambda text: urllib.parse.quote(text, safe=""),
                                     lambda text: urllib.parse.quote(json.dumps(text), safe="")],
                         ids=["JSON string", "JSON twice", "URL-encoded", "URL-encoded JSON"])
def test_redaction_masks_an_encoded_connection_url_and_libpq_text(quoting):
    marker = MARKERS[0]
    for text in (f"postgresql://mem0:{marker}@db:5432/mem0",
                 f"host=db password={marker} dbname=mem0"):
        masked = redact_text(f"cannot connect: {quoting(text)}")
        assert_nowhere(marker, masked)
        assert redact_text(masked) == masked


@pytest.mark.parametrize("levels", [1, 2])
def test_a_short_password_behind_escaped_quotes_is_masked_by_the_pattern_itself(levels):
    """The decoding net leaves values under four characters to the patterns, which read
    quotes behind backslashes (JSON encoded once or twice more)."""
    text = json.dumps({"password": "pw1"})
    for _ in range(levels):
        text = json.dumps(text)
    expected = json.dumps({"password": "***"})
    for _ in range(levels):
        expected = json.dumps(expected)
    assert redact_text(text) == expected  # still the same JSON, its value masked

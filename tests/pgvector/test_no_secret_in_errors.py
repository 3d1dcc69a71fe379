"""A deliberately wrong password (a unique marker) in every configuration error we can
trigger: it never shows up in the exception's text, its causes, its traceback or a log
record. Real Mem0, a real pgvector server, a real closed port."""

from __future__ import annotations

import copy
import logging
import traceback
import uuid

import pytest

from flink_agents_ltm.api.memory.long_term_memory import LongTermMemoryOptions
from flink_agents_ltm.bridge import java_gateway
from flink_agents_ltm.integrations.mem0.memory_factory import StoreSpec
from flink_agents_ltm.runtime.memory.mem0_long_term_memory import Mem0LongTermMemory

MARKER = f"wrong-password-{uuid.uuid4().hex}"
STORE = LongTermMemoryOptions.VECTOR_STORE.key


def server(pgvector_session, **changes) -> dict:
    cfg = copy.deepcopy(pgvector_session[0]["config"])
    cfg.update(changes)
    return {key: value for key, value in cfg.items() if value is not None}


CASES = {
    # (config of the pgvector store, what the error says instead)
    "wrong password": (lambda s: server(s, password=MARKER),
                       "password authentication failed"),
    "wrong password with URL characters": (
        lambda s: server(s, password=f"x@{MARKER}:1/y#z"), "password authentication failed"),
    "misspelt key holding the password": (
        lambda s: server(s, password=None, pasword=MARKER), "Extra fields not allowed: pasword"),
    "no host or port": (lambda s: {"user": "mem0", "password": MARKER},
                        "Both 'host' and 'port' must be provided"),
    "port of the wrong type": (lambda s: server(s, port="five", password=MARKER),
                               "vector_store.port: Input should be a valid integer"),
    "closed port": (lambda s: server(s, port=1, password=MARKER), "Connection refused"),
    "connection string, wrong password": (
        lambda s: {"connection_string": f"postgresql://mem0:{MARKER}@127.0.0.1:"
                                        f"{s[0]['config']['port']}/mem0"},
        "password authentication failed"),
    "connection string, bad port": (
        lambda s: {"connection_string": f"postgresql://mem0:{MARKER}@127.0.0.1:five/mem0"},
        'invalid integer value "five" for connection option "port"'),
    "connection string, unknown option": (
        lambda s: {"connection_string": f"host=127.0.0.1 password={MARKER} colour=blue"},
        "'connection_string' is not a valid PostgreSQL connection string"),
    "connection string, not a string": (
        lambda s: {"connection_string": [MARKER]}, "'connection_string' must be a str"),
    "bad timeout": (lambda s: server(s, password=MARKER, connect_timeout_s="ten"),
                    "'connect_timeout_s' must be a number of seconds"),
    "wrong dimensions": (lambda s: server(s, password=MARKER, embedding_model_dims=7),
                         "configured for 7-dimensional vectors"),
}


def everything_said(error: BaseException, caplog) -> str:
    return "".join(traceback.format_exception(error)) + "\n".join(
        record.getMessage() + (record.exc_text or "") for record in caplog.records)


@pytest.mark.parametrize("case", CASES)
def test_a_password_never_reaches_a_configuration_error_or_a_log_record(
        pgvector_session, tmp_path, caplog, case):
    make_config, expected = CASES[case]
    caplog.set_level(logging.DEBUG)
    with pytest.raises(Exception) as raised:  # noqa: PT011 - any error; its text is checked
        Mem0LongTermMemory.from_config("secrets", {
            STORE: {"provider": "pgvector", "config": make_config(pgvector_session)},
            LongTermMemoryOptions.BASE_DIR.key: str(tmp_path)})

    assert expected in str(raised.value)
    assert MARKER not in everything_said(raised.value, caplog)


def test_an_option_of_the_wrong_type_is_refused_without_echoing_it():
    with pytest.raises(TypeError) as raised:
        Mem0LongTermMemory.from_config("secrets", {STORE: ["pgvector", {"password": MARKER}]})
    assert str(raised.value) == ("option 'long-term-memory.vector-store' expects dict or str, "
                                 "got list")


def test_a_store_spec_prints_without_its_password():
    spec = StoreSpec("secrets", vector_store={"provider": "pgvector", "config": {
        "password": MARKER, "connection_string": f"postgresql://u:{MARKER}@h/db"}})
    assert MARKER not in repr(spec) and MARKER not in str(spec)
    assert "'password': '***'" in repr(spec)


def test_malformed_vector_store_json_from_java_is_refused_without_echoing_it(tmp_path):
    answer = java_gateway.open_long_term_memory("secrets", {
        LongTermMemoryOptions.BASE_DIR.key: str(tmp_path),
        STORE: '{"provider": "pgvector", "config": {"password": "' + MARKER + '"'})
    assert answer["error"] == "value"
    assert "is not valid JSON" in answer["message"]
    assert MARKER not in str(answer)

"""A battery of bad configurations, each carrying a unique marker password: the marker is in
no error message, no traceback (``traceback.format_exception``, causes included), no log
record (ours, Mem0's) and no file written under the test's folder. Errors are masked where
they are built (``MaskedError``: every ``LongTermMemoryError`` and configuration error) and
log records where they are made (``mask_logs``), not at each call site. No server: pgvector
stores point at a closed loopback port, so these run in a second or two."""

from __future__ import annotations

import json
import logging
import traceback
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from flink_agents_ltm.api.agent import Agent
from flink_agents_ltm.api.configuration import ConfigurationError
from flink_agents_ltm.api.execution_environment import AgentsConfiguration
from flink_agents_ltm.api.memory.long_term_memory import LongTermMemoryError, LongTermMemoryOptions
from flink_agents_ltm.api.redaction import mask_record
from flink_agents_ltm.integrations.mem0.long_term_memory import Mem0LongTermMemory
from flink_agents_ltm.runtime.memory.in_memory_long_term_memory import InMemoryLongTermMemory
from flink_agents_ltm.runtime.resource_provider import ResourceProvider

MARKER = f"marker-{uuid.uuid4().hex}"
STORE = LongTermMemoryOptions.VECTOR_STORE
UPSTREAM_STORE = "long-term-memory.mem0.vector-store"
CLOSED = {"host": "127.0.0.1", "port": 1, "user": "mem0", "dbname": "mem0"}


def pgvector(**config: Any) -> dict[str, Any]:
    return {"provider": "pgvector", "config": config}


def url(password: str) -> dict[str, Any]:
    return pgvector(connection_string=f"postgresql://mem0:{password}@127.0.0.1:1/mem0")


class NoResources(Agent):
    """Declares nothing: a store given by name is not found."""


def open_memory(config: AgentsConfiguration | dict[str, Any], folder: Path) -> None:
    """Open Mem0 as the operator does, with a resource provider for names."""
    if isinstance(config, dict):
        config = AgentsConfiguration(config)
    config.set(LongTermMemoryOptions.BASE_DIR, str(folder))
    provider = ResourceProvider(NoResources(), lambda: None)
    try:
        Mem0LongTermMemory.from_config("secrets", config, resources=provider.for_long_term_memory)
    finally:
        provider.close()


def with_store(value: Any) -> Callable[[Path], None]:
    return lambda folder: open_memory({STORE.key: value}, folder)


def set_string(key: str, text: str) -> Callable[[Path], None]:
    return lambda folder: open_memory(AgentsConfiguration().set_string(key, text), folder)


SPEC_TEXT = json.dumps(pgvector(password=MARKER, **CLOSED))
# (how the bad configuration is given, what its error says instead of the password)
CASES: dict[str, tuple[Callable[[Path], None], str]] = {
    "store as JSON text (set)": (with_store(SPEC_TEXT), "Connection refused"),
    "store as JSON text (set_string)": (set_string(STORE.key, SPEC_TEXT), "Connection refused"),
    "malformed store JSON (set)": (with_store(SPEC_TEXT[:-2]), "not a valid JSON object"),
    "malformed store JSON (set_string)": (set_string(STORE.key, SPEC_TEXT[:-2]),
                                          "not a valid JSON object"),
    "store JSON text with a trailing comma": (with_store(SPEC_TEXT[:-2] + ",}}"),
                                              "not a valid JSON object"),
    "a name that is a connection URL": (
        with_store(f"postgresql://mem0:{MARKER}@127.0.0.1:1/mem0"), "holds a credential"),
    "a name that is password=... text": (with_store(f"host=db password={MARKER}"),
                                         "holds a credential"),
    "password of a URL with an unencoded '@'": (with_store(url(f"x@{MARKER}")),
                                                "percent-encode"),
    "password of a URL with a ':'": (with_store(url(f"x:{MARKER}")), "Connection refused"),
    "password of a URL with an unencoded '/'": (with_store(url(f"{MARKER}/x")),
                                                "percent-encode"),
    "password of a URL with '@', ':' and '/'": (with_store(url(f"a:b@{MARKER}/c")),
                                                "percent-encode"),
    "port of the wrong type": (with_store(pgvector(password=MARKER, **{**CLOSED, "port": "x"})),
                               "Input should be a valid integer"),
    "store as a list": (with_store(["pgvector", {"password": MARKER}]), "expects dict or str"),
    "store as a number option's text": (
        set_string("agents.durable-async.capacity", f"password={MARKER}"),
        "expects an integer"),
    "unknown key in the store's config": (
        with_store(pgvector(pasword=MARKER, **CLOSED)), "Extra fields not allowed: pasword"),
    "unknown option holding the store": (
        lambda folder: open_memory({"long-term-memory.vektor-store": SPEC_TEXT}, folder),
        "did you mean 'long-term-memory.vector-store'"),
    "unknown option named by a URL": (
        lambda folder: open_memory({f"postgresql://mem0:{MARKER}@db/mem0": 1}, folder),
        "unknown"),
    "host holding user info": (
        with_store(pgvector(password="p", **{**CLOSED, "host": f"mem0:{MARKER}@127.0.0.1"})),
        "holds an '@'"),
    "timeout of the wrong type": (
        with_store(pgvector(password=MARKER, connect_timeout_s="ten", **CLOSED)),
        "must be a number of seconds"),
    "exact-search bound of the wrong type": (
        with_store(pgvector(password=MARKER, exact_search_up_to="all", **CLOSED)),
        "'exact_search_up_to' must be a whole number of rows"),
    "connection string of the wrong type": (with_store(pgvector(connection_string=[MARKER])),
                                            "must be a str"),
    # Apache Flink Agents' keys (api/options.py UPSTREAM_KEYS)
    "store as JSON text under Flink Agents' key": (set_string(UPSTREAM_STORE, SPEC_TEXT),
                                                   "Connection refused"),
    "malformed store JSON under Flink Agents' key": (set_string(UPSTREAM_STORE, SPEC_TEXT[:-2]),
                                                     "not a valid JSON object"),
    "a connection URL under Flink Agents' key": (
        lambda folder: open_memory(
            {UPSTREAM_STORE: f"postgresql://mem0:{MARKER}@127.0.0.1:1/mem0"}, folder),
        "holds a credential"),
    "one store under Flink Agents' key and ours, different": (
        lambda folder: open_memory(AgentsConfiguration().set(STORE, SPEC_TEXT).set_string(
            UPSTREAM_STORE, SPEC_TEXT.replace(MARKER, MARKER + "x")), folder),
        "set to different values"),
    "Flink Agents' Fluss SASL password": (
        lambda folder: open_memory({"flussSaslPassword": MARKER}, folder), "no equivalent"),
    "Flink Agents' Fluss JAAS text": (
        set_string("flussSaslJaasConfig", "org.apache.fluss.security.auth.sasl.plain."
                   f'PlainLoginModule required username="u" password="{MARKER}";'),
        "no equivalent"),
}


def everything_said(error: BaseException, records: list[logging.LogRecord]) -> str:
    formatter = logging.Formatter("%(name)s %(message)s")
    return "".join(traceback.format_exception(error)) + "\n".join(
        formatter.format(record) for record in records)


def files_holding(marker: str, folder: Path) -> list[Path]:
    return [path for path in folder.rglob("*")
            if path.is_file() and marker.encode() in path.read_bytes()]


@pytest.mark.parametrize("case", CASES)
def test_a_bad_configuration_never_shows_its_password(case, tmp_path, caplog):
    configure, expected = CASES[case]
    caplog.set_level(logging.DEBUG)
    with pytest.raises(Exception) as raised:  # noqa: PT011 - any error; its text is checked
        configure(tmp_path)

    assert expected in str(raised.value)
    assert MARKER not in everything_said(raised.value, caplog.records)
    assert files_holding(MARKER, tmp_path) == []


# ------------------------------------------------------------ the two places that mask


class FailingDeletes(InMemoryLongTermMemory):
    """Its store's delete fails quoting the connection string, password included."""

    def _delete(self, scope, ids):
        raise ConnectionError(f"lost postgresql://mem0:{MARKER}@10.0.0.7/mem0")


def test_a_store_error_in_delete_memory_set_is_wrapped_with_its_password_masked(caplog):
    caplog.set_level(logging.DEBUG)
    ltm = FailingDeletes("secrets")
    ltm.switch_context("k1", "obs-1", False)
    with pytest.raises(LongTermMemoryError) as raised:
        ltm.delete_memory_set("notes")

    assert str(raised.value) == ("delete_memory_set on memory set 'notes' of key 'k1' failed: "
                                 "ConnectionError: lost postgresql://mem0:***@10.0.0.7/mem0")
    assert MARKER not in everything_said(raised.value, caplog.records)


@pytest.mark.parametrize("error_type", [LongTermMemoryError, ConfigurationError])
def test_an_error_of_ours_masks_its_text_when_it_is_built(error_type):
    error = error_type(f"cannot open host=db password={MARKER}")
    assert str(error) == "cannot open host=db password=***"


@pytest.mark.parametrize("logger", ["flink_agents_ltm.runtime.agent_operator",
                                    "mem0.vector_stores.pgvector", "flink_agents_ltm", "mem0"])
def test_a_log_record_of_ours_or_of_mem0_is_masked_message_and_traceback(logger, caplog):
    caplog.set_level(logging.DEBUG)
    try:
        raise ConnectionError(f"cannot reach postgresql://mem0:{MARKER}@10.0.0.7/mem0")
    except ConnectionError:
        logging.getLogger(logger).exception("store %s failed", f"password={MARKER}")

    [record] = caplog.records
    assert record.getMessage() == "store password=*** failed"
    assert "cannot reach postgresql://mem0:***@10.0.0.7/mem0" in (record.exc_text or "")
    assert MARKER not in everything_said(RuntimeError(), caplog.records)


def test_another_librarys_log_records_are_left_as_they_are(caplog):
    caplog.set_level(logging.DEBUG)
    logging.getLogger("someone.else").info("password=%s", MARKER)
    [record] = caplog.records
    assert record.getMessage() == f"password={MARKER}"


def test_a_record_whose_arguments_do_not_fit_its_message_is_left_for_logging_to_report():
    record = logging.LogRecord("flink_agents_ltm.x", logging.INFO, __file__, 1, "%d items",
                               ("many",), None)
    mask_record(record)
    assert (record.msg, record.args) == ("%d items", ("many",))


def test_a_record_copied_with_make_log_record_keeps_its_masked_text():
    """``logging.makeLogRecord`` (the operator's console copy of its ERROR line) builds the
    record with no name before it fills it in: the masking factory must let it through."""
    original = logging.LogRecord("flink_agents_ltm.x", logging.ERROR, __file__, 1,
                                 "store %s failed", (f"password={MARKER}",), None)
    mask_record(original)  # as the masking factory (installed by the package's import) did
    copy = logging.makeLogRecord(original.__dict__)
    assert (copy.name, copy.getMessage()) == ("flink_agents_ltm.x", "store password=*** failed")

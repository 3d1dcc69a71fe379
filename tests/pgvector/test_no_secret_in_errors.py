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
from flink_agents_ltm.integrations.mem0.long_term_memory import Mem0LongTermMemory
from flink_agents_ltm.integrations.mem0.memory_factory import StoreSpec

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
    "connection string, unencoded '@' in the password": (
        lambda s: {"connection_string": f"postgresql://mem0:x@{MARKER}@127.0.0.1:"
                                        f"{s[0]['config']['port']}/mem0"},
        "'connection_string' does not parse into a host, port and database"),
    "connection string, unencoded '/' in the password": (
        lambda s: {"connection_string": f"postgresql://mem0:{MARKER}/x@127.0.0.1:"
                                        f"{s[0]['config']['port']}/mem0"},
        "percent-encode a user name or password holding '@'"),
    "host holding user info": (lambda s: server(s, host=f"mem0:{MARKER}@127.0.0.1"),
                               "the pgvector config's 'host' holds an '@'"),
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


@pytest.fixture
def own_server():
    """A pgvector server of this test alone (it is made to refuse work, then stopped)."""
    from tests.pgvector.server import pgvector_server

    with pgvector_server() as (store, folder, _):
        yield store, folder


def test_a_password_in_a_store_error_during_an_operation_is_masked_in_the_error_and_the_logs(
        own_server, tmp_path, caplog):
    """The memory is open and working; then the server refuses its work with errors whose
    text quotes the connection string, password included (server-side code may say
    anything: here a login hook and a trigger do), and at last the server stops. Every
    operation fails with a ``LongTermMemoryError`` that names it, carries the server's words
    with the password masked, and neither it, its causes nor any log record holds the
    password."""
    import psycopg2

    from flink_agents_ltm.api.memory.long_term_memory import LongTermMemoryError
    from tests.pgvector.server import run_script

    store, folder = own_server
    cfg = dict(store["config"], collection_name="notes")
    password = cfg["password"]
    dsn_text = (f"postgresql://{cfg['user']}:{password}@{cfg['host']}:{cfg['port']}/"
                f"{cfg['dbname']}")
    ltm = Mem0LongTermMemory.from_config("secrets", {
        STORE: {"provider": "pgvector", "config": cfg},
        LongTermMemoryOptions.EMBEDDING_MODEL_SETUP.key: None,
        LongTermMemoryOptions.BASE_DIR.key: str(tmp_path)})
    admin = psycopg2.connect(host=cfg["host"], port=cfg["port"], dbname=cfg["dbname"],
                             user=cfg["user"], password=password)
    admin.autocommit = True
    caplog.set_level(logging.DEBUG)
    failures: list[tuple[str, LongTermMemoryError]] = []

    def fails(operation, call):
        with pytest.raises(LongTermMemoryError) as raised:
            call()
        failures.append((operation, raised.value))
        return str(raised.value)

    try:
        ltm.switch_context("k1", "obs-1", False)
        notes = ltm.get_memory_set("notes")
        [kept] = notes.add("green tea")
        with admin.cursor() as cur:  # writes refused by a trigger quoting the password
            cur.execute("CREATE FUNCTION refuse_writes() RETURNS trigger LANGUAGE plpgsql AS $$ "
                        "BEGIN RAISE EXCEPTION 'writes are frozen; replicate from %%', %s; "
                        "END $$", (dsn_text,))
            cur.execute("CREATE TRIGGER frozen BEFORE INSERT OR DELETE ON notes "
                        "FOR EACH ROW EXECUTE FUNCTION refuse_writes()")
        for operation, call in [("add", lambda: notes.add("black coffee")),
                                ("add", lambda: notes.add(["oolong", "sencha"])),
                                ("delete", lambda: notes.delete(kept))]:
            message = fails(operation, call)
            assert "writes are frozen; replicate from postgresql://mem0:***@" in message
        with admin.cursor() as cur:  # logins refused, the open connections dropped
            cur.execute("DROP TRIGGER frozen ON notes")
            cur.execute("CREATE FUNCTION refuse_logins() RETURNS event_trigger LANGUAGE "
                        "plpgsql AS $$ BEGIN RAISE EXCEPTION 'restoring; use host=%% "
                        "password=%%', %s, %s; END $$", (cfg["host"], password))
            cur.execute("CREATE EVENT TRIGGER restoring ON login "
                        "EXECUTE FUNCTION refuse_logins()")
            cur.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                        "WHERE pid <> pg_backend_pid() AND usename = current_user")
        fails("search", lambda: notes.search("tea"))  # the connection the server dropped
        for operation, call in [("search", lambda: notes.search("tea")),
                                ("get", lambda: notes.get(kept)),
                                ("get", lambda: notes.get()),
                                ("add", lambda: notes.add("black coffee")),
                                ("delete", lambda: notes.delete(kept)),
                                ("erase_key", lambda: ltm.erase_key("k1"))]:
            message = fails(operation, call)
            assert f"restoring; use host={cfg['host']} password=***" in message
        with admin.cursor() as cur:
            cur.execute("DROP EVENT TRIGGER restoring")
        assert [i.value for i in notes.search("tea")] == ["green tea"]  # nothing was lost
        run_script("pgvector-server", "stop", "--dir", str(folder))
        fails("search", lambda: notes.search("tea"))
    finally:
        admin.close()
        ltm.close()

    for operation, error in failures:
        where = "of key 'k1'" if operation == "erase_key" else "set 'notes' of key 'k1'"
        assert str(error).startswith(f"{operation} ") and f"{where} failed" in str(error)
        assert password not in everything_said(error, caplog), operation
    assert len(failures) == 11


def test_a_mem0_pgvector_log_record_with_a_traceback_is_masked(pgvector_store, caplog):
    """Mem0's pgvector store on psycopg 3 logs its driver errors with their traceback."""
    from flink_agents_ltm.integrations.mem0.memory_factory import acquire_memory

    memory, release = acquire_memory(StoreSpec("secrets", vector_store=pgvector_store,
                                               embedder="hashing"))
    release()
    caplog.set_level(logging.DEBUG)
    caplog.clear()  # opening the store may log (a new table's index): only Mem0's record counts
    try:
        raise ConnectionError(f"cannot reach postgresql://mem0:{MARKER}@10.0.0.7/mem0")
    except ConnectionError:
        logging.getLogger(type(memory.vector_store.inner).__module__).error(
            "Error in cursor context (psycopg3)", exc_info=True)
    [record] = caplog.records
    assert "ConnectionError: cannot reach postgresql://mem0:***@10.0.0.7/mem0" in (
        record.exc_text or "")
    assert MARKER not in caplog.text and MARKER not in everything_said(
        RuntimeError(), caplog)

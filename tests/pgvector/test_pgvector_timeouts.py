"""Bounded waits on a pgvector server, and connection settings that survive any password:
a server that accepts connections but never answers, a statement stuck behind another
session's lock, passwords full of URL characters. Real sockets, a real PostgreSQL."""

from __future__ import annotations

import copy
import socket
import threading
import traceback
import uuid

import psycopg2
import pytest

from flink_agents_ltm.api.memory.long_term_memory import LongTermMemoryError
from flink_agents_ltm.integrations.mem0.long_term_memory import Mem0LongTermMemory
from flink_agents_ltm.integrations.mem0.memory_factory import StoreSpec, acquire_memory
from flink_agents_ltm.integrations.mem0.providers.pgvector.connection import PgvectorTimeoutError


class SilentServer:
    """Accepts TCP connections on 127.0.0.1 and never sends a byte."""

    def __init__(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.accepted: list[socket.socket] = []
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    def _accept(self) -> None:
        while True:
            try:
                connection, _ = self.listener.accept()
            except OSError:
                return
            self.accepted.append(connection)

    def close(self) -> None:
        self.listener.close()
        for connection in self.accepted:
            connection.close()


def in_thread(work, guard_s: float = 120):
    """Run ``work`` in a thread, waiting at most ``guard_s`` (a hang guard, not a timing
    assertion); returns what it raised, or the thread if it still hangs."""
    outcome: list[BaseException | None] = []

    def run():
        try:
            work()
            outcome.append(None)
        except BaseException as error:  # noqa: BLE001 - handed to the test
            outcome.append(error)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(guard_s)
    return outcome[0] if outcome else thread


def every_text(error: BaseException) -> str:
    return "".join(traceback.format_exception(error))


def connect(cfg: dict):
    return psycopg2.connect(host=cfg["host"], port=cfg["port"], dbname=cfg["dbname"],
                            user=cfg["user"], password=cfg["password"])


def test_a_server_that_accepts_but_never_answers_fails_the_first_use_naming_it(tmp_path):
    silent = SilentServer()
    marker = f"pw-{uuid.uuid4().hex}"
    store = {"provider": "pgvector", "config": {
        "host": "127.0.0.1", "port": silent.port, "dbname": "mem0", "user": "mem0",
        "password": marker, "connect_timeout_s": 2}}
    try:
        error = in_thread(lambda: Mem0LongTermMemory.from_config("silent", {
            "long-term-memory.vector-store": store,
            "long-term-memory.embedded.base-dir": str(tmp_path)}))
    finally:
        silent.close()

    assert isinstance(error, PgvectorTimeoutError), error
    assert silent.accepted  # it really connected, and then nothing came back
    assert str(error) == (
        f"the pgvector store at 127.0.0.1:{silent.port}/mem0 did not complete a connection "
        "within 2 s (it accepts connections but does not answer, or the network drops them); "
        "check the server, or raise 'connect_timeout_s' in the vector store config")
    assert marker not in every_text(error)


@pytest.fixture
def locked_store(pgvector_store):
    store = copy.deepcopy(pgvector_store)
    store["config"]["statement_timeout_s"] = 1
    memory, release = acquire_memory(StoreSpec("locks", vector_store=store, embedder="hashing"))
    yield Mem0LongTermMemory("locks", memory), store["config"]
    release()


def test_a_statement_stuck_behind_a_lock_is_cancelled_naming_the_server_and_the_key(
        locked_store):
    ltm, cfg = locked_store
    ltm.switch_context("k", "obs", False)
    notes = ltm.get_memory_set("notes")
    [kept] = notes.add("stays stored")
    holder = connect(cfg)
    try:
        with holder.cursor() as cur:
            cur.execute(f'LOCK TABLE "{cfg["collection_name"]}" IN ACCESS EXCLUSIVE MODE')
            failures = {name: in_thread(operation) for name, operation in {
                "add": lambda: notes.add("blocked"),
                "get": lambda: notes.get(),
                "search": lambda: notes.search("stays"),
                "delete": lambda: notes.delete([kept]),
            }.items()}
    finally:
        holder.rollback()
        holder.close()

    for name, error in failures.items():
        assert isinstance(error, LongTermMemoryError), (name, error)
        assert isinstance(error.__cause__, PgvectorTimeoutError), name
        assert (f"the pgvector store at 127.0.0.1:{cfg['port']}/{cfg['dbname']} did not "
                "finish a statement within 1 s and cancelled it") in str(error), name
        assert "raise 'statement_timeout_s' in the vector store config" in str(error), name
        assert cfg["password"] not in every_text(error), name
    assert "none of its 1 items is stored" in str(failures["add"])
    assert [item.value for item in notes.get()] == ["stays stored"]  # nothing lost
    assert notes.add("after the lock") != []  # and the store works again


def settings_of(ltm: Mem0LongTermMemory) -> tuple[str, str]:
    pg = ltm.memory.vector_store.inner
    with pg._get_cursor() as cur:
        cur.execute("SHOW statement_timeout")
        statement = cur.fetchone()[0]
        connect_timeout = cur.connection.get_dsn_parameters()["connect_timeout"]
    return statement, connect_timeout


@pytest.mark.parametrize(("extra", "expected"), [
    ({}, ("30s", "10")),
    ({"statement_timeout_s": 1.5, "connect_timeout_s": 4}, ("1500ms", "4")),
    ({"statement_timeout_s": 0}, ("0", "10")),
], ids=["defaults", "given", "no statement timeout"])
def test_the_timeouts_reach_the_server_on_every_connection(pgvector_store, extra, expected):
    store = copy.deepcopy(pgvector_store)
    store["config"].update(extra)
    memory, release = acquire_memory(StoreSpec("settings", vector_store=store,
                                               embedder="hashing"))
    try:
        assert settings_of(Mem0LongTermMemory("settings", memory)) == expected
    finally:
        release()


def test_a_connection_string_gets_the_timeouts_too(pgvector_store):
    cfg = pgvector_store["config"]
    store = {"provider": "pgvector", "config": {
        "connection_string": f"postgresql://{cfg['user']}:{cfg['password']}@{cfg['host']}:"
                             f"{cfg['port']}/{cfg['dbname']}?application_name=mine",
        "collection_name": cfg["collection_name"], "statement_timeout_s": 2,
        "connect_timeout_s": 3}}
    memory, release = acquire_memory(StoreSpec("uri", vector_store=store, embedder="hashing"))
    try:
        assert settings_of(Mem0LongTermMemory("uri", memory)) == ("2s", "3")
    finally:
        release()


@pytest.mark.parametrize(("key", "value"), [
    ("connect_timeout_s", -1), ("connect_timeout_s", "10"), ("connect_timeout_s", 2.5),
    ("statement_timeout_s", True), ("statement_timeout_s", float("nan")),
    ("exact_search_up_to", -1), ("exact_search_up_to", "10000"), ("exact_search_up_to", 1e4),
    ("exact_search_up_to", True),
])
def test_a_bad_timeout_or_search_bound_is_refused_naming_the_key(pgvector_store, key, value):
    store = copy.deepcopy(pgvector_store)
    store["config"][key] = value
    with pytest.raises(ValueError, match=f"the pgvector config's '{key}'"):
        acquire_memory(StoreSpec("bad", vector_store=store, embedder="hashing"))


def test_a_password_full_of_url_characters_logs_in(pgvector_store):
    """Mem0 pastes the password into a URL unescaped: '@' sent libpq to a host named after
    the rest of the password. The connection string is built with libpq's quoting."""
    cfg = pgvector_store["config"]
    role = f"r_{uuid.uuid4().hex[:10]}"
    password = "p@ss:w/rd#?&= 'quoted' \\ end"
    admin = connect(cfg)
    admin.autocommit = True
    with admin.cursor() as cur:
        cur.execute(f'CREATE ROLE "{role}" LOGIN PASSWORD %s', (password,))
        cur.execute(f'GRANT ALL ON SCHEMA public TO "{role}"')
    store = {"provider": "pgvector", "config": {**cfg, "user": role, "password": password}}
    with pytest.raises(psycopg2.Error):  # the URL Mem0 would build: '@' ends the password
        psycopg2.connect(f"postgresql://{role}:{password}@{cfg['host']}:{cfg['port']}/"
                         f"{cfg['dbname']}", connect_timeout=3).close()
    try:
        memory, release = acquire_memory(StoreSpec("url-chars", vector_store=store,
                                                   embedder="hashing"))
        try:
            ltm = Mem0LongTermMemory("url-chars", memory)
            ltm.switch_context("k", "obs", False)
            ltm.get_memory_set("notes").add("logged in")
            assert [i.value for i in ltm.get_memory_set("notes").get()] == ["logged in"]
        finally:
            release()
    finally:
        with admin.cursor() as cur:
            cur.execute(f'DROP TABLE IF EXISTS "{cfg["collection_name"]}"')
            cur.execute(f'DROP OWNED BY "{role}"')
            cur.execute(f'DROP ROLE "{role}"')
        admin.close()

"""The PostgreSQL action-state store outlives a restart of its server: an idle connection the
server closed is replaced before the next statement, a statement whose connection is cut
while it runs is sent again on a new one, an operation while the server is down fails with
one line naming host:port/db (never the password) and the next one works, and the writer
thread survives all of it. A job whose PostgreSQL restarts keeps answering calls and runs no
side effect twice."""

from __future__ import annotations

import copy
import logging
import threading
import uuid

import pytest

from flink_agents_ltm.api.options import AgentsConfiguration, AgentsOptions
from flink_agents_ltm.runtime.action_state.lookup import RunTag
from flink_agents_ltm.runtime.action_state.store import open_action_state_store
from flink_agents_ltm.testing import AgentHarness
from runtime.test_action_state_postgres import drop_rows
from runtime.test_action_state_store import MailAgent, finish, harness, sent
from tests.pgvector.server import pgvector_server, run_script
from tests.pgvector.test_pgvector_reconnect import terminate_the_waiter
from tests.pgvector.test_pgvector_server import connect

TABLE = "ltm_action_state_v2"


@pytest.fixture(autouse=True)
def nothing_sent_yet():
    sent.clear()
    yield
    sent.clear()


@pytest.fixture(scope="module")
def own_server():
    """A server of this module's own, restarted by its tests (not the session's)."""
    with pgvector_server() as (store, folder, _):
        yield copy.deepcopy(store), folder


def restart(folder, store) -> None:
    run_script("pgvector-server", "stop", "--dir", str(folder))
    start(folder, store)


def start(folder, store) -> None:
    run_script("pgvector-server", "start", "--dir", str(folder), "--port",
               str(store["config"]["port"]))


def job_config(store) -> dict:
    return {"agents.action-state.store": "postgres",
            "agents.job-id": f"restart-{uuid.uuid4().hex[:8]}",
            "long-term-memory.vector-store": copy.deepcopy(store)}


def open_store(config):
    settings = AgentsConfiguration(config)
    return open_action_state_store(settings.get(AgentsOptions.ACTION_STATE_STORE),
                                   config["agents.job-id"], settings)


def start_call(store, n: int) -> None:
    store.started(0, f"k{n}#0#0", "call0", "send", f"t{n}", RunTag(f"k{n}", f"k{n}#0", 0, "fp"),
                  "owner", 0.0)


def writer_alive(store) -> bool:
    return store._writer._thread.is_alive()


def test_after_a_server_restart_every_operation_of_the_store_works_at_once(own_server):
    server, folder = own_server
    store = open_store(job_config(server))
    try:
        start_call(store, 1)
        store.completed("k1#0#0", "call0", "t1", b"one")
        store.prune("nobody", 0)  # waits for the writer's queue
        assert store.lookup("k1#0#0", "call0").result == b"one"

        restart(folder, server)

        # Both connections (the mailbox's and the writer's) were closed by the restart while
        # idle: each is replaced before its next statement, so nothing fails.
        assert store.lookup("k1#0#0", "call0").result == b"one"
        start_call(store, 2)
        store.completed("k2#0#0", "call0", "t2", b"two")
        assert store.prune("nobody", 0) == 0  # waits for the writer's queue
        assert store.lookup("k2#0#0", "call0").result == b"two"
        assert store.runs_of("k2", "fp", 0, "someone") == ["k2#0"]
        assert writer_alive(store)
    finally:
        drop_rows(store)
        store.close()


def test_an_operation_while_the_server_is_down_fails_in_one_line_naming_it_and_the_next_works(
        own_server, caplog):
    server, folder = own_server
    password = server["config"]["password"]
    where = f"127.0.0.1:{server['config']['port']}/{server['config']['dbname']}"
    store = open_store(job_config(server))
    try:
        start_call(store, 1)
        run_script("pgvector-server", "stop", "--dir", str(folder))
        try:
            with pytest.raises(ConnectionError) as looked_up:
                store.lookup("k1#0#0", "call0")
            with pytest.raises(ConnectionError) as started:
                start_call(store, 2)
            with caplog.at_level(logging.WARNING):
                store.completed("k1#0#0", "call0", "t1", b"lost")  # nobody waits for it
                with pytest.raises(ConnectionError):
                    store.prune("nobody", 0)  # behind the result in the writer's queue
        finally:
            start(folder, server)

        for error in (looked_up.value, started.value):
            message = str(error)
            assert f"the PostgreSQL action-state store at {where}" in message
            assert "\n" not in message
            assert password not in message and password not in repr(error)
            assert error.__cause__ is None and error.__suppress_context__
        assert f"could not write a result: PgvectorUnavailableError: the PostgreSQL " \
            f"action-state store at {where}" in caplog.text or \
            f"could not write a result: ConnectionError: cannot connect to the PostgreSQL " \
            f"action-state store at {where}" in caplog.text
        assert password not in caplog.text

        assert writer_alive(store)
        assert store.lookup("k1#0#0", "call0").result is None  # the started marker is kept
        start_call(store, 2)
        assert store.lookup("k2#0#0", "call0") is not None
    finally:
        drop_rows(store)
        store.close()


def test_a_statement_whose_session_is_cut_while_it_runs_is_sent_again_on_a_new_connection(
        pgvector_session):
    server = pgvector_session[0]
    store = open_store(job_config(server))
    try:
        start_call(store, 1)
        store.completed("k1#0#0", "call0", "t1", b"one")
        store.prune("nobody", 0)
        blocker = connect(server)
        answers: list = []
        try:
            with blocker.cursor() as cur:
                cur.execute(f"LOCK TABLE {TABLE} IN ACCESS EXCLUSIVE MODE")
            terminator = terminate_the_waiter(server, TABLE)
            looking = threading.Thread(
                target=lambda: answers.append(store.lookup("k1#0#0", "call0")), daemon=True)
            looking.start()
            terminator.join(30)
            assert not terminator.is_alive()
        finally:
            blocker.rollback()  # the lookup, sent again, now gets its row
            blocker.close()
        looking.join(30)
        assert [answer.result for answer in answers] == [b"one"]
    finally:
        drop_rows(store)
        store.close()


def test_a_job_whose_postgres_restarts_keeps_answering_and_runs_no_call_twice(own_server):
    server, folder = own_server
    config = job_config(server)
    first = harness(MailAgent(), config)
    first.process_element(("a", 1))
    assert finish(first) == [("a", "sent #1")]
    first.process_element(("b", 2))  # its call starts (the marker is written), then parks
    snapshot = first.snapshot()

    restart(folder, server)

    assert finish(first) == [("a", "sent #1"), ("b", "sent #2")]  # its result: a new link
    first.process_element(("c", 3))  # a new input after the restart
    assert finish(first)[-1] == ("c", "sent #3")
    assert sent == [1, 2, 3]
    first.close()

    # The process dies; the job restores the snapshot taken before the restart: b's call
    # completed after it, and its result, written through the new connection, answers it.
    restored = AgentHarness.restore(snapshot, MailAgent(), key_selector=lambda r: r[0],
                                    config=config)
    finish(restored)
    restored.close()
    assert ("b", "sent #2") in restored.outputs
    assert sent == [1, 2, 3]
    cleanup = AgentHarness(MailAgent(), config=config)  # a fresh start clears the job's rows
    cleanup.close()

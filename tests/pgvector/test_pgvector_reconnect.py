"""Long-term memory on a pgvector server that restarts: an operation while it is down fails
with a LongTermMemoryError that says so (host:port, restarting or recovering), and the next
operation once it is back connects again instead of failing on the dead connection
(``InterfaceError: connection already closed`` from Mem0's rollback)."""

from __future__ import annotations

import copy
import threading
import time
import uuid

import pytest

from flink_agents_ltm.api.memory.long_term_memory import LongTermMemoryError, LongTermMemoryOptions
from flink_agents_ltm.integrations.mem0.long_term_memory import Mem0LongTermMemory
from tests.pgvector.server import pgvector_server, run_script
from tests.pgvector.test_pgvector_server import connect


@pytest.fixture
def own_server():
    with pgvector_server() as (store, folder, _):
        yield copy.deepcopy(store), folder


def memory_set(store: dict):
    store = copy.deepcopy(store)
    store["config"]["collection_name"] = f"t_{uuid.uuid4().hex[:12]}"
    ltm = Mem0LongTermMemory.from_config(
        "reconnect-job", {LongTermMemoryOptions.VECTOR_STORE.key: store})
    ltm.switch_context("alice", "obs-1", False)
    return ltm, ltm.get_memory_set("notes")


def test_an_operation_while_the_server_restarts_fails_saying_so_and_the_next_reconnects(
        own_server):
    store, folder = own_server
    port = store["config"]["port"]
    ltm, notes = memory_set(store)
    try:
        notes.add("alice drinks green tea")
        run_script("pgvector-server", "stop", "--dir", str(folder))

        with pytest.raises(LongTermMemoryError) as raised:
            notes.search("what does alice drink", limit=1)

        message = str(raised.value)
        assert f"the pgvector store at 127.0.0.1:{port}/mem0 is restarting or recovering" \
            in message
        assert "the next one connects again" in message
        assert "InterfaceError" not in message
        assert store["config"]["password"] not in message

        run_script("pgvector-server", "start", "--dir", str(folder), "--port", str(port))
        assert [item.value for item in notes.search("what does alice drink", limit=1)] == [
            "alice drinks green tea"]
    finally:
        ltm.close()


def test_a_session_the_server_ended_is_replaced_at_the_next_operation(pgvector_session):
    ltm, notes = memory_set(pgvector_session[0])
    try:
        notes.add("alice owns a dog")
        admin = connect(pgvector_session[0])
        try:
            with admin.cursor() as cur:  # every other session of the database, ours included
                cur.execute("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                            "WHERE datname = current_database() AND pid <> pg_backend_pid() "
                            "AND backend_type = 'client backend'")
                assert cur.fetchone()[0] >= 1
        finally:
            admin.close()

        assert [item.value for item in notes.get()] == ["alice owns a dog"]
    finally:
        ltm.close()


def terminate_the_waiter(store: dict, table: str) -> threading.Thread:
    """A thread that waits until a session waits on a lock of ``table``, then ends that
    session with pg_terminate_backend (as a fast restart ends every session)."""

    def run() -> None:
        admin = connect(store)
        admin.autocommit = True
        try:
            with admin.cursor() as cur:
                for _ in range(2000):  # a hang guard, not a timing assertion
                    cur.execute("SELECT pid FROM pg_locks WHERE NOT granted AND relation = "
                                "to_regclass(%s)", (f'"{table}"',))
                    row = cur.fetchone()
                    if row is not None:
                        cur.execute("SELECT pg_terminate_backend(%s)", row)
                        return
                    time.sleep(0.01)
        finally:
            admin.close()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def test_an_operation_whose_session_is_ended_midway_fails_saying_so_and_the_next_works(
        pgvector_session):
    store = pgvector_session[0]
    ltm, notes = memory_set(store)
    inner = getattr(ltm.memory.vector_store, "inner", ltm.memory.vector_store)
    try:
        notes.add("alice likes jazz")
        blocker = connect(store)
        try:
            with blocker.cursor() as cur:
                cur.execute(f'LOCK TABLE "{inner.collection_name}" IN ACCESS EXCLUSIVE MODE')
            terminator = terminate_the_waiter(store, inner.collection_name)
            with pytest.raises(LongTermMemoryError) as raised:
                notes.get()
            terminator.join(30)
        finally:
            blocker.rollback()
            blocker.close()

        message = str(raised.value)
        assert f"the pgvector store at 127.0.0.1:{store['config']['port']}/mem0 is restarting " \
            "or recovering, or stopped: it " in message
        assert "InterfaceError" not in message
        assert [item.value for item in notes.get()] == ["alice likes jazz"]
    finally:
        ltm.close()

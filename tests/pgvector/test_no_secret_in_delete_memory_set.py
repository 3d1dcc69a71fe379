"""``delete_memory_set`` goes through the same error wrapper as every other operation: a
store error raised mid-operation (a trigger on the set's table whose text quotes the
connection string, password included) reaches the caller as a ``LongTermMemoryError`` that
names the operation, with the password masked in it, its causes, its traceback and the
logs. Real Mem0, the session's real pgvector server, a table of this test's own."""

from __future__ import annotations

import logging
import traceback

import pytest

from flink_agents_ltm.api.memory.long_term_memory import (
    LongTermMemoryError,
    LongTermMemoryOptions,
)
from flink_agents_ltm.integrations.mem0.long_term_memory import Mem0LongTermMemory


def everything_said(error: BaseException, caplog) -> str:
    return "".join(traceback.format_exception(error)) + "\n".join(
        record.getMessage() + (record.exc_text or "") for record in caplog.records)


@pytest.fixture
def frozen_table(pgvector_store):
    """``(admin connection, dsn text)``; drops the trigger and its function afterwards."""
    import psycopg2

    cfg = pgvector_store["config"]
    admin = psycopg2.connect(host=cfg["host"], port=cfg["port"], dbname=cfg["dbname"],
                             user=cfg["user"], password=cfg["password"])
    admin.autocommit = True
    function = f"refuse_{cfg['collection_name']}"
    try:
        yield admin, function
    finally:
        with admin.cursor() as cur:
            cur.execute(f'DROP TRIGGER IF EXISTS frozen ON "{cfg["collection_name"]}"')
            cur.execute(f"DROP FUNCTION IF EXISTS {function}()")
            cur.execute(f'DROP TABLE IF EXISTS "{cfg["collection_name"]}"')
        admin.close()


def test_a_store_error_in_delete_memory_set_is_wrapped_and_its_password_masked(
        pgvector_store, frozen_table, tmp_path, caplog):
    admin, function = frozen_table
    cfg = pgvector_store["config"]
    password = cfg["password"]
    dsn_text = (f"postgresql://{cfg['user']}:{password}@{cfg['host']}:{cfg['port']}/"
                f"{cfg['dbname']}")
    ltm = Mem0LongTermMemory.from_config("secrets", {
        LongTermMemoryOptions.VECTOR_STORE.key: pgvector_store,
        LongTermMemoryOptions.EMBEDDING_MODEL_SETUP.key: None,
        LongTermMemoryOptions.BASE_DIR.key: str(tmp_path)})
    try:
        ltm.switch_context("k1", "obs-1", False)
        ltm.get_memory_set("notes").add(["green tea", "black coffee"])
        with admin.cursor() as cur:  # deletes refused by a trigger quoting the password
            cur.execute(f"CREATE FUNCTION {function}() RETURNS trigger LANGUAGE plpgsql AS $$ "
                        "BEGIN RAISE EXCEPTION 'deletes are frozen; replicate from %%', %s; "
                        "END $$", (dsn_text,))
            cur.execute(f'CREATE TRIGGER frozen BEFORE DELETE ON "{cfg["collection_name"]}" '
                        f"FOR EACH ROW EXECUTE FUNCTION {function}()")
        caplog.set_level(logging.DEBUG)
        with pytest.raises(LongTermMemoryError) as raised:
            ltm.delete_memory_set("notes")
        with admin.cursor() as cur:
            cur.execute(f'DROP TRIGGER frozen ON "{cfg["collection_name"]}"')
        kept = sorted(item.value for item in ltm.get_memory_set("notes").get())
    finally:
        ltm.close()

    message = str(raised.value)
    assert message.startswith("delete_memory_set on memory set 'notes' of key 'k1' failed")
    assert "deletes are frozen; replicate from postgresql://mem0:***@" in message
    assert password not in everything_said(raised.value, caplog)
    assert kept == ["black coffee", "green tea"]  # the refused delete lost nothing

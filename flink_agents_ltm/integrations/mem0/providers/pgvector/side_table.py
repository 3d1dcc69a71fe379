"""pgvector: the side table that ranks a large key's rows exactly (``<table>_exact``).

Ranking a key exactly reads each of its rows' vectors. In Mem0's table a row holds the
payload beside the vector, and past ~2 kB PostgreSQL moves the vector out of line (TOAST):
each distance then costs a lookup in the TOAST table. The side table holds only what an
exact ranking reads (the key's scope, the id, the expiry and the vector, kept in line), with
an index on the scope: a 50,000-row key is ranked in 0.6x the time, 0.5x for a 10,000-row
key (docs/benchmarks.md, on a loaded machine with a small buffer cache). The search
(:mod:`.search`) uses it when a search's filters are a key's scope (and an expiry bound),
and takes the payloads of the hits from the main table.

It is kept by triggers on the main table (statement triggers with transition tables: one
statement per write statement, not per row), in the transaction of the write. That covers
every write path whatever sends it: Mem0's ``insert``/``update``/``delete``, our upserts
and deletes, erasure, another process on the previous release, or a person with ``psql``.
Writes from the application in the same transaction would miss the writes Mem0 sends
itself, and those of processes that do not know the side table.

What a trigger cannot see is the table being dropped (Mem0's ``reset``/``delete_col``); the
triggers go with it, and the side table is rebuilt by the next :func:`ensure`. Until then
a search sees no trigger (:data:`READY`, in its statement) and ranks the main table's rows,
and the side-table branch checks each hit's scope on the main table anyway.

:func:`ensure` (run by ``store.prepare``) builds the side table when the triggers are
missing: a store made by the previous release, or a table made again. It locks the main
table against writes while it copies (readers go on), so no write falls between the copy
and the triggers. Without the privileges to create it, searches keep the main table.
The trigger function runs as its owner (``SECURITY DEFINER``, with the search path it was
made with), so a role that may write Mem0's table but not the side table still can write.
"""

from __future__ import annotations

import logging
from typing import Any

from flink_agents_ltm.api.redaction import redact_text
from flink_agents_ltm.integrations.mem0 import private_api

log = logging.getLogger(__name__)

SUFFIX = "_exact"
READY = ("SELECT EXISTS (SELECT FROM pg_trigger WHERE tgrelid = to_regclass(quote_ident(%s)) "
         "AND tgname = %s AND tgenabled <> 'D') AS ready")
"""Whether the side table is kept (its delete trigger exists: all four are made at once)."""
_EVENTS = {"ins": ("INSERT", "REFERENCING NEW TABLE AS new_rows"),
           "upd": ("UPDATE", "REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows"),
           "del": ("DELETE", "REFERENCING OLD TABLE AS old_rows"),
           "trunc": ("TRUNCATE", "")}
_COLUMNS = "id, user_id, agent_id, run_id, expires_at, vector"
_VALUES = ("id, payload->>'user_id', payload->>'agent_id', payload->>'run_id', CASE WHEN "
           "jsonb_typeof(payload->'expires_at') = 'number' THEN "
           "(payload->>'expires_at')::numeric END, vector")
_UPSERT = ("INSERT INTO {side} (" + _COLUMNS + ") SELECT " + _VALUES + " FROM new_rows "
           "ON CONFLICT (id) DO UPDATE SET user_id = EXCLUDED.user_id, agent_id = "
           "EXCLUDED.agent_id, run_id = EXCLUDED.run_id, expires_at = EXCLUDED.expires_at, "
           "vector = EXCLUDED.vector;")
_FUNCTION = (
    "CREATE OR REPLACE FUNCTION {function}() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER "
    "SET search_path FROM CURRENT AS $sync$ "
    "BEGIN IF TG_OP = 'TRUNCATE' THEN TRUNCATE {side}; "
    "ELSIF TG_OP = 'DELETE' THEN DELETE FROM {side} s USING old_rows o WHERE s.id = o.id; "
    "ELSE IF TG_OP = 'UPDATE' THEN DELETE FROM {side} s USING old_rows o WHERE s.id = o.id "
    "AND NOT EXISTS (SELECT FROM new_rows n WHERE n.id = o.id); END IF; " + _UPSERT
    + " END IF; RETURN NULL; END $sync$")


def name(table: str) -> str:
    return f"{table}{SUFFIX}"


def _trigger(table: str, event: str) -> str:
    return f"{name(table)}_{event}"


def ready_parameters(table: str) -> list[Any]:
    """The parameters of :data:`READY` for the main table ``table``."""
    return [table, _trigger(table, "del")]


def ensure(pg: Any) -> bool:
    """Make the side table of Mem0's store ``pg`` and its triggers if they are missing
    (built from the main table's rows); ``False`` (one warning) when the server refuses."""
    table = pg.collection_name
    try:
        with private_api.pg_cursor(pg, commit=True) as cur:
            cur.execute(READY, ready_parameters(table))
            if cur.fetchone()[0]:
                return True
            copied = _build(cur, pg, table)
    except Exception as error:  # noqa: BLE001 - privileges, an old server: keep the main table
        log.warning("pgvector: could not make the side table %r of table %r (%s); large keys "
                    "are ranked exactly through the main table, ~2x slower", name(table),
                    table, redact_text(str(error).strip().splitlines()[0]))
        return False
    log.info("pgvector: built the side table %r of %r (%d rows) and its triggers",
             name(table), table, copied)
    return True


def _build(cur: Any, pg: Any, table: str) -> int:
    """In the caller's transaction: lock the main table against writes, then (re)make the
    side table from its rows and the triggers that keep it."""
    from mem0.vector_stores.pgvector import sql

    main = private_api.pg_table(pg)
    cur.execute(sql.SQL("LOCK TABLE {} IN SHARE ROW EXCLUSIVE MODE").format(main))
    cur.execute(READY, ready_parameters(table))
    if cur.fetchone()[0]:
        return 0  # another process built it while this one waited for the lock
    cur.execute("SET LOCAL statement_timeout = 0")  # the copy of a large table takes seconds
    cur.execute("SELECT format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = "
                "to_regclass(quote_ident(%s)) AND attname = 'vector'", (table,))
    vector_type = cur.fetchone()[0]
    names = {"side": sql.Identifier(name(table)), "main": main,
             "index": sql.Identifier(f"{name(table)}_scope_idx"),
             "function": sql.Identifier(f"{name(table)}_sync")}
    cur.execute(sql.SQL(
        "DROP TABLE IF EXISTS {side}; "
        f"CREATE TABLE {{side}} (id uuid PRIMARY KEY, user_id text, agent_id text, run_id text, "
        f"expires_at numeric, vector {vector_type}); "
        "ALTER TABLE {side} ALTER COLUMN vector SET STORAGE MAIN; "
        "CREATE INDEX {index} ON {side} (user_id, agent_id, run_id); "
        f"INSERT INTO {{side}} ({_COLUMNS}) SELECT {_VALUES} FROM {{main}}").format(**names))
    copied = int(cur.rowcount)
    cur.execute(sql.SQL(_FUNCTION).format(**names))
    for event, (operation, transition) in _EVENTS.items():
        trigger = sql.Identifier(_trigger(table, event))
        cur.execute(sql.SQL(
            "DROP TRIGGER IF EXISTS {trigger} ON {main}; CREATE TRIGGER {trigger} AFTER "
            f"{operation} ON {{main}} {transition} FOR EACH STATEMENT EXECUTE FUNCTION "
            "{function}()").format(trigger=trigger, **names))
    cur.execute(sql.SQL("ANALYZE {side}").format(**names))
    return copied


def drop(pg: Any) -> None:
    """Drop the side table of ``pg`` (its main table is being dropped)."""
    from mem0.vector_stores.pgvector import sql

    with private_api.pg_cursor(pg, commit=True) as cur:
        cur.execute(sql.SQL("DROP TABLE IF EXISTS {}").format(
            sql.Identifier(name(pg.collection_name))))

"""Does this server's pgvector run on this machine? A short self-check on a scratch table.

Why: a ``vector.so`` compiled for another CPU (``-march=native`` on an AVX-512 host) loads
fine and answers ``SELECT 1``, then kills the backend with SIGILL at the first HNSW build,
cast or ``<=>``, and the server loops through crash recovery. Only running the extension's
code finds it, so the check does what Mem0 and long-term memory do on a table like Mem0's:
rows cast from float arrays, an HNSW index (``vector_cosine_ops``, Mem0's), the scope index
the project adds (:mod:`.store`), an insert into the indexed table, and an ordered
``<=>`` query through the scope index and one through HNSW.

Everything runs in one transaction on a temporary table that is dropped and rolled back at
the end, so the check leaves nothing behind, even when it fails half-way.

:data:`STEPS` is plain SQL, run here through psycopg2 (:func:`check_pgvector`, for
``flink-agents-ltm doctor``) and by ``scripts/pgvector-server start`` through ``psql``
(that script loads this file by path, so it imports nothing beyond the standard library
at module level, except the package's error root when the package is there).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

try:  # scripts/pgvector-server loads this file by path, where the package may not be found
    from flink_agents_ltm.api.errors import FlinkAgentsLtmError
except ImportError:  # pragma: no cover - only in that script
    class FlinkAgentsLtmError(Exception):  # type: ignore[no-redef]
        """Stands in for the package's error root where the package is not importable."""

__all__ = ["DEFAULT_ROWS", "PgvectorSelfCheckError", "check_pgvector", "cpu_summary",
           "crash_cause", "steps"]

DEFAULT_ROWS = 2000
TABLE = "flink_agents_ltm_selfcheck"
# The probe row's id; the scoped query must rank it first (distance 0, an exact search).
PROBE_ID = "00000000-0000-0000-0000-00000000c0de"
SCOPE = ("selfcheck-job", "key-3", "selfcheck-set")


class PgvectorSelfCheckError(FlinkAgentsLtmError, RuntimeError):
    """The pgvector self-check failed; the message (one line) names the cause."""


def steps(dims: int = 384, rows: int = DEFAULT_ROWS) -> list[tuple[str, str]]:
    """``(step, sql)`` pairs, run in order inside one transaction (the caller opens and
    rolls it back). A step that finds a wrong answer raises an error naming it."""
    if not (isinstance(dims, int) and 1 <= dims <= 2000):
        raise ValueError(f"dims must be a whole number from 1 to 2000, got {dims!r}")
    vector = (f"(SELECT array_agg(sin(g * 7919 + d)::real ORDER BY d) "
              f"FROM generate_series(1, {dims}) d)::vector({dims})")
    probe = (f"(SELECT array_agg(cos(d)::real ORDER BY d) "
             f"FROM generate_series(1, {dims}) d)::vector({dims})")
    user, agent, run = SCOPE
    scoped = (f"payload->>'user_id' = '{user}' AND payload->>'agent_id' = '{agent}' "
              f"AND payload->>'run_id' = '{run}'")
    return [
        ("create the vector extension",
         "CREATE EXTENSION IF NOT EXISTS vector"),
        ("create a scratch table like Mem0's",
         f"CREATE TEMP TABLE {TABLE} (id uuid PRIMARY KEY, vector vector({dims}), "
         "payload jsonb)"),
        (f"insert {rows} {dims}-dim rows cast from float arrays",
         f"INSERT INTO {TABLE} SELECT md5(g::text)::uuid, {vector}, jsonb_build_object("
         f"'user_id', '{user}', 'agent_id', 'key-' || (g % 20), 'run_id', '{run}') "
         f"FROM generate_series(1, {rows}) g"),
        ("HNSW index build",
         f"CREATE INDEX {TABLE}_hnsw_idx ON {TABLE} USING hnsw (vector vector_cosine_ops)"),
        ("scope index build",
         f"CREATE INDEX {TABLE}_scope_idx ON {TABLE} ((payload->>'user_id'), "
         f"(payload->>'agent_id'), (payload->>'run_id')); ANALYZE {TABLE}"),
        ("insert into the HNSW-indexed table",
         f"INSERT INTO {TABLE} VALUES ('{PROBE_ID}', {probe}, jsonb_build_object("
         f"'user_id', '{user}', 'agent_id', '{agent}', 'run_id', '{run}'))"),
        # Exact: the planner may not take HNSW (index scans off), so it reads the key's rows
        # through the scope index (a bitmap scan) and sorts them by distance.
        ("ordered <=> query through the scope index",
         "SET LOCAL enable_seqscan = off; SET LOCAL enable_indexscan = off; "
         "DO $check$ DECLARE nearest uuid; distance float8; BEGIN "
         f"SELECT id, vector <=> {probe} INTO nearest, distance FROM {TABLE} "
         f"WHERE {scoped} ORDER BY vector <=> {probe} LIMIT 1; "
         f"IF nearest IS DISTINCT FROM '{PROBE_ID}' OR distance > 1e-5 THEN RAISE EXCEPTION "
         "'pgvector self-check: the scoped query ranked % first at distance %, not the probe "
         "row at 0', nearest, distance; END IF; END $check$; "
         "SET LOCAL enable_seqscan = on; SET LOCAL enable_indexscan = on"),
        ("ordered <=> query through the HNSW index",
         "SET LOCAL enable_seqscan = off; "
         "DO $check$ DECLARE found int; unordered int; BEGIN "
         "SELECT count(*), count(*) FILTER (WHERE d < lag_d) INTO found, unordered FROM ("
         "SELECT d, lag(d) OVER (ORDER BY n) AS lag_d FROM (SELECT row_number() OVER () AS n, "
         f"d FROM (SELECT vector <=> {probe} AS d FROM {TABLE} ORDER BY vector <=> {probe} "
         "LIMIT 10) nearest) numbered) pairs; "
         "IF found <> 10 OR unordered > 0 THEN RAISE EXCEPTION 'pgvector self-check: the HNSW "
         "query returned % rows (10 expected), % out of order', found, unordered; END IF; "
         "END $check$; SET LOCAL enable_seqscan = on"),
        ("drop the scratch table",
         f"DROP TABLE {TABLE}"),
    ]


# --------------------------------------------------------------------------- the CPU

def cpu_flags(cpuinfo: str | Path = "/proc/cpuinfo") -> set[str] | None:
    """The flags of the first CPU in ``/proc/cpuinfo``; ``None`` where there is none."""
    try:
        text = Path(cpuinfo).read_text()
    except OSError:
        return None
    for line in text.splitlines():
        name, _, value = line.partition(":")
        if name.strip() == "flags":
            return set(value.split())
    return None


def cpu_summary(cpuinfo: str | Path = "/proc/cpuinfo") -> str:
    """``"this CPU has avx2 and no avx512f"`` (the flags a pgvector build may assume)."""
    flags = cpu_flags(cpuinfo)
    if flags is None:
        return "this CPU's flags are unknown (no /proc/cpuinfo)"
    has = [flag for flag in ("avx2", "avx512f") if flag in flags]
    lacks = [flag for flag in ("avx2", "avx512f") if flag not in flags]
    return "this CPU has " + (" and ".join(has) or "neither avx2 nor avx512f") + (
        f" and no {' or '.join(lacks)}" if has and lacks else "")


def crash_cause(step: str, signal_number: int | None) -> str:
    """One line: the vector extension crashed the server during ``step``, by which signal,
    on which CPU."""
    import signal

    if signal_number is None:
        how = "a backend died (the connection was lost; the server log names the signal)"
    else:
        try:
            name = signal.Signals(signal_number).name
            meaning = (signal.strsignal(signal_number) or "").lower()
        except ValueError:
            name, meaning = f"signal {signal_number}", ""
        how = (f"a backend was terminated by signal {signal_number} ({name}"
               + (f", {meaning}" if meaning else "") + ")")
    hint = ("; an illegal instruction means its vector.so was compiled for another CPU "
            "(-march=native), use a portable build" if signal_number == 4 else "")
    return (f"the vector extension crashed the server during the self-check step '{step}': "
            f"{how}; {cpu_summary()}{hint}")


# --------------------------------------------------------------------------- psycopg2

def check_pgvector(config: Mapping[str, Any], *, dims: int = 384,
                   rows: int = DEFAULT_ROWS) -> str:
    """Run :func:`steps` on the server of a Mem0 pgvector ``config`` (``host``/``port``/
    ``user``/``password``/``dbname`` or ``connection_string``; our timeout keys apply).
    Returns a one-line summary; raises :class:`PgvectorSelfCheckError` with a one-line
    message naming the cause (never the password)."""
    from flink_agents_ltm.api.redaction import redact_text
    from flink_agents_ltm.integrations.mem0.providers.pgvector.connection import PgvectorConnection

    try:
        connection = PgvectorConnection.from_config(config)
    except ValueError as error:
        raise PgvectorSelfCheckError(f"pgvector self-check: {error}") from None
    if connection.dsn is None:
        raise PgvectorSelfCheckError("pgvector self-check: a 'connection_pool' config cannot "
                                     "be checked; give host/port/... or connection_string")
    import psycopg2

    def first_line(error: BaseException) -> str:
        text = redact_text(str(error).strip()).splitlines()
        return text[0] if text else type(error).__name__

    began = time.monotonic()
    try:
        conn = psycopg2.connect(connection.dsn)
    except psycopg2.Error as error:
        raise PgvectorSelfCheckError(f"pgvector self-check: cannot connect to the pgvector "
                                     f"store at {connection.target}: {first_line(error)}"
                                     ) from None
    step = "read the server's version"
    try:
        with conn.cursor() as cur:
            cur.execute("SHOW server_version")
            server_version = _one(cur)
            for name, sql in steps(dims, rows):
                step = name  # named in the error if this one fails
                cur.execute(sql)
            cur.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
            extension = _one(cur)
        conn.rollback()
    except psycopg2.Error as error:
        if conn.closed:
            raise PgvectorSelfCheckError(
                f"pgvector self-check on {connection.target}: "
                f"{crash_cause(step, None)} ({first_line(error)})") from None
        raise PgvectorSelfCheckError(
            f"pgvector self-check on {connection.target} failed at '{step}': "
            f"{first_line(error)}") from None
    finally:
        conn.close()
    return (f"pgvector {extension} on PostgreSQL {server_version} at {connection.target}: "
            f"HNSW build of {rows} {dims}-dim rows, an insert into it and ordered <=> queries "
            f"(scope index, HNSW) passed in {time.monotonic() - began:.1f} s")


def _one(cursor: Any) -> Any:
    row = cursor.fetchone()
    return None if row is None else row[0]

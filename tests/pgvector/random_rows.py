"""A table of random rows made by the server itself (one statement: thousands of rows in a
second), for tests that need a key large enough for the planner to walk the HNSW index."""

from __future__ import annotations

from typing import Any

from tests.pgvector.test_pgvector_server import connect

ROWS = 4000  # in the filled_store fixture's table (tests/pgvector/conftest.py)
BIG_SHARE = 0.6  # of them belong to key "big"; the rest to 100 small keys
FENCE = int(ROWS * BIG_SHARE) - 1  # an exact_search_up_to that key "big" is one row above


def fill_random_rows(store: dict[str, Any], rows: int, big: int, small_keys: int) -> None:
    """``rows`` random 384-dim rows in ``store``'s (prepared) table, scope ``job``/``notes``:
    the first ``big`` of key ``big``, the rest spread over keys ``k0``..``k<small_keys - 1>``;
    Mem0's HNSW index is built after the rows (once, not row by row), then the table analyzed."""
    table = store["config"]["collection_name"]
    with connect(store) as conn, conn.cursor() as cur:
        cur.execute(f'DROP INDEX "{table}_hnsw_idx"')
        cur.execute(f"""
            INSERT INTO "{table}" (id, vector, payload)
            SELECT gen_random_uuid(), v.vec::vector(384), jsonb_build_object(
                'user_id', 'job', 'run_id', 'notes', 'data', 'note ' || g, 'agent_id',
                CASE WHEN g < %s THEN 'big' ELSE 'k' || (g %% %s) END)
            FROM generate_series(0, %s - 1) g,
                 LATERAL (SELECT array_agg(random() - 0.5) AS vec
                          FROM generate_series(1, 384) WHERE g >= 0) v""",
                    (big, small_keys, rows))
        cur.execute("SET maintenance_work_mem = '256MB'")
        cur.execute(f'CREATE INDEX "{table}_hnsw_idx" ON "{table}" '
                    "USING hnsw (vector vector_cosine_ops)")
        cur.execute(f'ANALYZE "{table}"')
    conn.close()

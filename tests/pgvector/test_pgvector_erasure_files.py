"""Erased text on the real PostgreSQL server, read from the table's own files under the
server's data folder (the tests run as root and may read them): a plain ``VACUUM`` after
``erase-key`` leaves it in the heap and index files; ``erase-key --compact`` (``VACUUM
FULL``) leaves it in none of them."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psycopg2
import pytest

from flink_agents_ltm.integrations.mem0.memory_factory import StoreSpec
from flink_agents_ltm.integrations.mem0.providers.pgvector.store import vacuum_full
from tests.cli.test_erase_key import VECTOR_STORE, remember, run_cli, values_of


@contextmanager
def statements(store: dict) -> Iterator[Any]:
    """A cursor of an autocommit session (VACUUM and CHECKPOINT run outside transactions)."""
    cfg = store["config"]
    conn = psycopg2.connect(host=cfg["host"], port=cfg["port"], dbname=cfg["dbname"],
                            user=cfg["user"], password=cfg["password"])
    try:
        conn.autocommit = True
        with conn.cursor() as cur:
            yield cur
    finally:
        conn.close()


def table_files(store: dict, data_dir: Path) -> list[Path]:
    """Every file of the store's table on disk: its heap, its TOAST table, all their
    indexes (HNSW, Mem0's GIN text index, the scope index), every fork and segment;
    written out first (``CHECKPOINT``)."""
    table = store["config"]["collection_name"]
    with statements(store) as cur:
        cur.execute("CHECKPOINT")
        cur.execute(
            "WITH rels AS (SELECT c.oid FROM pg_class c WHERE c.oid = to_regclass(%s) "
            "  UNION SELECT c.reltoastrelid FROM pg_class c "
            "  WHERE c.oid = to_regclass(%s) AND c.reltoastrelid <> 0) "
            "SELECT pg_relation_filepath(oid) FROM rels "
            "UNION SELECT pg_relation_filepath(i.indexrelid) FROM pg_index i "
            "  JOIN rels ON i.indrelid = rels.oid",
            (f'"{table}"', f'"{table}"'))
        relative = [row[0] for row in cur.fetchall()]
    assert len(relative) >= 4  # heap, TOAST, its index, the HNSW and scope indexes
    files = []
    for path in relative:
        main = data_dir / path
        files += [p for p in main.parent.glob(f"{main.name}*")
                  if p.name == main.name or p.name[len(main.name)] in "._"]
    return files


def mentioning(files: list[Path], text: str) -> list[str]:
    needle = text.encode()
    return [p.name for p in files if p.is_file() and needle in p.read_bytes()]


@pytest.fixture
def erased_table(pgvector_store, pgvector_session, tmp_path):
    """A table holding a marker text of key 7 and a note of key 8, and how to erase key 7
    with the command; dropped at the end."""
    data_dir = pgvector_session[1] / "data"
    assert (data_dir / "PG_VERSION").is_file()
    job = f"erase-files-{uuid.uuid4().hex[:8]}"
    marker = f"passport-{uuid.uuid4().hex}"
    spec = StoreSpec(job, vector_store=pgvector_store, embedder="hashing", base_dir=tmp_path)
    remember(job, spec, {("7", "profile"): [f"{marker} is the passport", f"{marker} again"],
                         ("8", "profile"): ["eight keeps this note"]})
    assert mentioning(table_files(pgvector_store, data_dir), marker)  # the grep sees it

    def erase(*options: str):
        return run_cli("erase-key", "--job-id", job, "--key", "7", *options,
                       env={"FLINK_AGENTS_LTM_CONFIG": json.dumps({VECTOR_STORE: pgvector_store})})

    try:
        yield erase, marker, data_dir, (job, spec)
    finally:
        with statements(pgvector_store) as cur:
            cur.execute(f'DROP TABLE IF EXISTS "{pgvector_store["config"]["collection_name"]}"')


def test_a_plain_vacuum_after_erase_key_leaves_the_erased_text_in_the_tables_files(
        erased_table, pgvector_store):
    erase, marker, data_dir, _ = erased_table

    erased = erase()
    with statements(pgvector_store) as cur:
        cur.execute(f'VACUUM "{pgvector_store["config"]["collection_name"]}"')

    assert erased.returncode == 0, erased.stderr
    assert erased.stdout.startswith("erased 2 items of key '7'")
    assert mentioning(table_files(pgvector_store, data_dir), marker)


def test_erase_key_with_compact_leaves_the_erased_text_in_no_file_of_the_table(
        erased_table, pgvector_store):
    erase, marker, data_dir, (job, spec) = erased_table
    before = table_files(pgvector_store, data_dir)

    erased = erase("--compact")

    assert erased.returncode == 0, erased.stderr
    where = (f"the pgvector store at 127.0.0.1:{pgvector_store['config']['port']}, "
             f"collection '{pgvector_store['config']['collection_name']}'")
    assert erased.stdout.splitlines() == [
        f"erased 2 items of key '7' of job '{job}' from {where}", f"compacted {where}"]
    after = table_files(pgvector_store, data_dir)
    assert mentioning(after + before, marker) == []
    assert set(after).isdisjoint(before)  # VACUUM FULL wrote the table to new files
    assert mentioning(after, "eight keeps this note")  # the grep reads the new files
    assert values_of(job, spec, "8", "profile") == ["eight keeps this note"]
    assert pgvector_store["config"]["password"] not in erased.stdout + erased.stderr


def test_vacuum_full_of_a_missing_table_fails_naming_the_table_and_not_the_password(
        pgvector_store):
    with pytest.raises(RuntimeError, match="VACUUM FULL of table 'no_such_table' at "
                                           "127.0.0.1:.* failed: .*does not exist") as raised:
        vacuum_full(pgvector_store["config"], "no_such_table")
    assert pgvector_store["config"]["password"] not in str(raised.value)

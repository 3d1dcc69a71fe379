"""``flink-agents-ltm erase-key --compact`` on the embedded store (``VACUUM`` of the job's
file) and where it is refused; on pgvector see tests/pgvector/test_pgvector_erasure_files.py."""

from __future__ import annotations

import sqlite3
import uuid
from pathlib import Path

from flink_agents_ltm.integrations.mem0.memory_factory import StoreSpec
from tests.cli.test_erase_key import BASE_DIR, VECTOR_STORE, private_config, remember, run_cli


def free_pages(folder: Path) -> int:
    [path] = folder.rglob("*.sqlite3")
    with sqlite3.connect(path) as probe:
        return probe.execute("PRAGMA freelist_count").fetchone()[0]


def erased_store(tmp_path: Path, *options: str):
    store_dir = tmp_path / "ltm"
    spec = StoreSpec("compact-job", embedder="hashing", base_dir=store_dir)
    remember("compact-job", spec, {
        ("7", "notes"): [f"note {n} {uuid.uuid4().hex}" for n in range(60)],
        ("8", "notes"): ["eight keeps this"]})
    config = private_config(tmp_path, {BASE_DIR: str(store_dir)})
    return run_cli("erase-key", "--job-id", "compact-job", "--key", "7", "--config",
                   str(config), *options), store_dir


def test_erase_key_with_compact_vacuums_the_embedded_store_leaving_no_free_pages(tmp_path):
    erased, store_dir = erased_store(tmp_path, "--compact")

    assert erased.returncode == 0, erased.stderr
    assert erased.stdout.splitlines() == [
        f"erased 60 items of key '7' of job 'compact-job' from the embedded store of job "
        f"'compact-job' under {store_dir}",
        f"compacted the embedded store of job 'compact-job' under {store_dir}"]
    assert free_pages(store_dir) == 0


def test_erase_key_without_compact_leaves_the_erased_rows_pages_free_in_the_file(tmp_path):
    erased, store_dir = erased_store(tmp_path)

    assert erased.returncode == 0, erased.stderr
    assert free_pages(store_dir) > 0


def test_compact_on_a_store_it_cannot_compact_is_refused_before_anything_is_erased(tmp_path):
    store = {"provider": "qdrant", "config": {"path": str(tmp_path / "q"),
                                              "collection_name": "c"}}
    config = private_config(tmp_path, {VECTOR_STORE: store})

    refused = run_cli("erase-key", "--job-id", "j", "--key", "7", "--config", str(config),
                      "--compact")

    assert refused.returncode == 2
    assert refused.stderr == ("flink-agents-ltm erase-key: error: --compact works on the "
                              "embedded store and on pgvector, not on the 'qdrant' store\n")
    assert not (tmp_path / "q").exists()


def test_the_help_of_compact_says_it_locks_the_table():
    shown = run_cli("erase-key", "--help")

    assert shown.returncode == 0
    assert "takes an exclusive lock on the table for its whole duration" in \
        " ".join(shown.stdout.split())

"""``flink-agents-ltm sweep``, run as the installed console script on the embedded store in a
folder: expired items go for real, batch by batch, and every other item stays."""

from __future__ import annotations

import json
import time
import uuid

from flink_agents_ltm.integrations.mem0.long_term_memory import Mem0LongTermMemory
from flink_agents_ltm.integrations.mem0.memory_factory import StoreSpec, acquire_memory
from tests.cli.test_erase_key import BASE_DIR, files_mentioning, private_config, run_cli


def remember_expired(job: str, spec: StoreSpec, marker: str) -> None:
    """Five items that expired an hour ago (written under a clock two hours back, ttl one
    hour) in two keys, and two that live: one without ttl, one with a day left."""
    memory, release = acquire_memory(spec)
    try:
        ltm = Mem0LongTermMemory(job, memory, clock=lambda: time.time() - 7200)
        for key, count in (("customer 7", 3), ("customer-8", 2)):
            ltm.switch_context(key, None, False)
            ltm.get_memory_set("notes").add([f"{marker} {key} {n}" for n in range(count)],
                                            ttl=3600)
        ltm.switch_context("customer-8", None, False)
        ltm.get_memory_set("notes").add("kept forever")
        ltm.get_memory_set("notes").add("kept a day", ttl=86_400 + 7200)
    finally:
        release()


def values_left(job: str, spec: StoreSpec) -> list[str]:
    memory, release = acquire_memory(spec)
    try:
        found = memory.get_all(filters={"user_id": job}, top_k=100)["results"]
        return sorted(row["memory"] for row in found)
    finally:
        release()


def test_sweep_deletes_the_expired_items_in_batches_and_no_file_keeps_their_text(tmp_path):
    store_dir = tmp_path / "ltm"
    marker = f"passport-{uuid.uuid4().hex}"
    spec = StoreSpec("sweep-job", embedder="hashing", base_dir=store_dir)
    remember_expired("sweep-job", spec, marker)
    assert files_mentioning(store_dir, marker)  # the grep sees the text while it is stored
    config = private_config(tmp_path, {BASE_DIR: str(store_dir)})

    swept = run_cli("sweep", "--job-id", "sweep-job", "--batch", "2", "--config", str(config))

    assert swept.returncode == 0, swept.stderr
    where = f"the embedded store of job 'sweep-job' under {store_dir}"
    assert swept.stdout.splitlines() == [
        "batch 1: deleted 2 expired items (2 so far)",
        "batch 2: deleted 2 expired items (4 so far)",
        "batch 3: deleted 1 expired item (5 so far)",
        f"swept 5 expired items of job 'sweep-job' from {where}"]
    assert files_mentioning(store_dir, marker) == []
    assert values_left("sweep-job", spec) == ["kept a day", "kept forever"]

    again = run_cli("sweep", "--job-id", "sweep-job", "--json", "--config", str(config))
    assert again.returncode == 0, again.stderr
    assert [json.loads(line) for line in again.stdout.splitlines()] == [
        {"job_id": "sweep-job", "swept": 0, "complete": True, "store": where}]


def test_sweep_refuses_a_job_without_a_store_and_a_bad_batch(tmp_path):
    config = private_config(tmp_path, {BASE_DIR: str(tmp_path / "ltm")})
    missing = run_cli("sweep", "--job-id", "no-such-job", "--config", str(config))
    assert missing.returncode == 2
    assert "job 'no-such-job' has no embedded store" in missing.stderr
    bad = run_cli("sweep", "--job-id", "no-such-job", "--batch", "0", "--config", str(config))
    assert (bad.returncode, bad.stderr.strip()) == (
        2, "flink-agents-ltm sweep: error: --batch and --max-batches must be positive numbers")

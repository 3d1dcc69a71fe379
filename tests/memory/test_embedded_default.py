"""The default with no configuration: MiniLM from its wheel, the embedded SQLite store,
offline, infer off."""

import os
import stat
import subprocess
import sys

import pytest

from flink_agents_ltm.integrations.mem0.long_term_memory import Mem0LongTermMemory
from flink_agents_ltm.integrations.mem0.memory_factory import (
    EmbeddedStoreInUseError,
    StoreSpec,
    acquire_memory,
)


@pytest.fixture(scope="module")
def base_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("ltm-home")


@pytest.fixture(scope="module")
def default_ltm(base_dir):
    ltm = Mem0LongTermMemory.from_config(
        "support bot/1", {"long-term-memory.embedded.base-dir": str(base_dir)})
    yield ltm
    ltm.close()


def test_the_default_finds_related_memories_by_meaning(default_ltm):
    default_ltm.switch_context("customer-7", "obs-1", False)
    notes = default_ltm.get_memory_set("profile")
    notes.add(["My dog Rex needs a new lead", "I pay by bank transfer",
               "The parcel arrived damaged"])
    [best] = notes.search("what kind of pet does the customer have", limit=1)
    assert best.value == "My dog Rex needs a new lead"
    assert 0 < best.score <= 1


def test_without_a_chat_model_items_are_stored_exactly_as_given(default_ltm):
    default_ltm.switch_context("customer-8", "obs-1", False)
    notes = default_ltm.get_memory_set("profile")
    text = "  Prefers e-mail,   never phone calls. "
    [item_id] = notes.add(text)
    assert [item.value for item in notes.get(item_id)] == [text]


def test_each_job_gets_its_own_private_folder_under_the_base_dir_and_no_history(
        default_ltm, base_dir):
    job_dir = base_dir / "support%20bot%2F1"
    assert (job_dir / "vectors.sqlite3").is_file()
    assert not (job_dir / "history.db").exists()  # deleted text must not survive in a history
    modes = {path.name: stat.S_IMODE(path.stat().st_mode)
             for path in [job_dir, *job_dir.rglob("*")]}
    assert {name for name, mode in modes.items() if mode & 0o077} == set(), modes
    assert os.environ["MEM0_TELEMETRY"] == "false"


def test_operators_of_one_process_share_the_embedded_store(default_ltm, base_dir):
    second = Mem0LongTermMemory.from_config(
        "support bot/1", {"long-term-memory.embedded.base-dir": str(base_dir)})
    try:
        assert second.memory is default_ltm.memory
        second.switch_context("customer-7", "obs-2", False)
        assert second.get_memory_set("profile").get() != []
    finally:
        second.close()
    default_ltm.switch_context("customer-7", "obs-3", False)
    assert default_ltm.get_memory_set("profile").get() != []  # still open for the first


def test_a_second_process_shares_the_open_embedded_store_both_ways(default_ltm, base_dir):
    default_ltm.switch_context("customer-9", "obs-1", False)
    notes = default_ltm.get_memory_set("profile")
    [mine] = notes.add("Ships to the office on Fridays")
    script = (
        "from flink_agents_ltm.integrations.mem0.long_term_memory import Mem0LongTermMemory\n"
        "ltm = Mem0LongTermMemory.from_config('support bot/1', "
        f"{{'long-term-memory.embedded.base-dir': {str(base_dir)!r}}})\n"
        "ltm.switch_context('customer-9', 'obs-2', False)\n"
        "notes = ltm.get_memory_set('profile')\n"
        "print(sorted(item.id for item in notes.get()))\n"
        "print(notes.add('Prefers a phone call before delivery')[0])\n"
        "ltm.close()\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            timeout=180)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "Loading weights" not in result.stderr  # no progress bar in a job's log
    seen, theirs = result.stdout.splitlines()[-2:]
    assert seen == str([mine])  # the other process reads what this one wrote ...
    assert [i.value for i in notes.get(theirs)] == ["Prefers a phone call before delivery"]


def test_a_second_process_on_a_configured_embedded_qdrant_gets_a_clear_error(tmp_path):
    store = {"provider": "qdrant", "config": {"path": str(tmp_path / "q"), "on_disk": True}}
    spec = StoreSpec("job", embedder="hashing", vector_store=store, base_dir=tmp_path)
    _, release = acquire_memory(spec)
    script = (
        "from pathlib import Path\n"
        "from flink_agents_ltm.integrations.mem0.memory_factory import StoreSpec, acquire_memory\n"
        f"acquire_memory(StoreSpec('job', embedder='hashing', vector_store={store!r},\n"
        f"                         base_dir=Path({str(tmp_path)!r})))\n"
    )
    try:
        result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                                timeout=120)
    finally:
        release()
    assert result.returncode != 0
    assert EmbeddedStoreInUseError.__name__ in result.stderr
    assert f"the embedded Qdrant store in {tmp_path}/q is already open in another" in (
        result.stderr)


def test_a_vector_store_of_the_wrong_dimension_is_refused_when_opened(tmp_path):
    with pytest.raises(ValueError, match="1536-dimensional vectors but the embedding model "
                                         "produces 384"):
        Mem0LongTermMemory.from_config("job", {
            "long-term-memory.embedded.base-dir": str(tmp_path),
            "long-term-memory.vector-store": {"provider": "qdrant", "config": {
                "path": str(tmp_path / "q"), "embedding_model_dims": 1536}}})


def test_an_existing_collection_of_another_dimension_is_refused_when_opened(tmp_path):
    from mem0.configs.embeddings.base import BaseEmbedderConfig

    from flink_agents_ltm.integrations.mem0.hashing_embedder import HashingEmbedding

    _, release = acquire_memory(StoreSpec("job", embedder="hashing", base_dir=tmp_path))
    release()  # the folder now holds a 384-dimensional collection
    smaller = HashingEmbedding(BaseEmbedderConfig(embedding_dims=128))
    with pytest.raises(ValueError, match="holds 384-dimensional vectors but the embedding model "
                                         "produces 128"):
        acquire_memory(StoreSpec("job", embedder=smaller, base_dir=tmp_path))
    _, release = acquire_memory(StoreSpec("job", embedder="hashing", base_dir=tmp_path))
    release()  # the refused open closed its client: the folder is free again

"""Update, beyond the conformance kit: the update part of the contract
(:mod:`flink_agents_ltm.testing.conformance.update`) runs on every implementation through
test_contract.py; here, what only a store's own rows and files show (the old text is gone
from them) and what a memory written before update does."""

import uuid

import pytest

from flink_agents_ltm.api.memory.long_term_memory import BaseLongTermMemory
from flink_agents_ltm.integrations.mem0.long_term_memory import Mem0LongTermMemory
from flink_agents_ltm.integrations.mem0.memory_factory import StoreSpec, acquire_memory
from flink_agents_ltm.runtime.memory.in_memory_long_term_memory import InMemoryLongTermMemory
from flink_agents_ltm.testing.conformance.core import bound
from tests.memory.contracts import implementation
from tests.memory.test_mem0_rows import files_mentioning

# ------------------------------------------------------------------ the old text is gone


def test_after_an_update_the_old_text_is_in_no_row_of_pgvector(pgvector_session):
    marker = f"passport-{uuid.uuid4().hex}"
    with implementation("mem0-pgvector", pgvector=pgvector_session[0]) as impl:
        notes = bound(impl.ltm, "customer-7")
        [item] = notes.add(f"{marker} number one", {"kind": "id"})
        store = impl.ltm.memory.vector_store
        pg = getattr(store, "inner", store)

        def rows_mentioning(text):
            with pg._get_cursor() as cur:
                cur.execute(f"SELECT id FROM {pg.collection_name} "  # our own table
                            "WHERE payload::text LIKE %s", (f"%{text}%",))
                return [str(row[0]) for row in cur.fetchall()]

        assert rows_mentioning(marker) == [item]  # the check sees the text while stored
        notes.update(item, "a number that is no secret")
        assert rows_mentioning(marker) == []
        assert rows_mentioning("a number that is no secret") == [item]


def test_after_an_update_the_old_text_is_in_no_file_of_the_embedded_store(tmp_path):
    memory, release = acquire_memory(StoreSpec(job_id="erasure", embedder="hashing",
                                               base_dir=tmp_path))
    try:
        ltm = Mem0LongTermMemory("erasure", memory)
        marker = f"passport-{uuid.uuid4().hex}"
        notes = bound(ltm, "customer-7")
        [item] = notes.add(f"{marker} number one")
        bound(ltm, "customer-8").add("someone else's note")
        assert files_mentioning(tmp_path, marker)  # the check sees the text while stored

        bound(ltm, "customer-7").update(item, "a number that is no secret")
        assert files_mentioning(tmp_path, marker) == []
        assert files_mentioning(tmp_path, "someone else's note")
    finally:
        release()


class _WrittenBeforeUpdate(InMemoryLongTermMemory):
    """A memory whose author wrote no ``_update`` (it predates update)."""

    _update = BaseLongTermMemory._update


def test_a_memory_without_update_still_builds_and_refuses_an_update_naming_itself():
    ltm = _WrittenBeforeUpdate("old-job")
    notes = bound(ltm, "k")
    [item_id] = notes.add("kept as it was")

    with pytest.raises(Exception, match="_WrittenBeforeUpdate does not implement update"):
        notes.update(item_id, "never written")
    assert [item.value for item in notes.get([item_id])] == ["kept as it was"]

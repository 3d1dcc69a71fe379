"""FAISS collections are saved whole and private: a process killed mid-save leaves the last
complete collection, the files are 0600, a failed write raises instead of a warning
and leaves the collection as it was, on disk and in the process, and a collection whose
index is ahead of its docstore drops those vectors with a warning that says so."""

import logging
import os
import signal
import stat
import subprocess
import sys
import time

import pytest

from flink_agents_ltm.api.vector_stores import Document
from flink_agents_ltm.integrations.mem0.hashing_embedder import hashed_bag_of_words
from flink_agents_ltm.integrations.mem0.vector_store import Mem0VectorStore

WRITER = r"""
import sys
from flink_agents_ltm.api.vector_stores import Document
from flink_agents_ltm.integrations.mem0.hashing_embedder import hashed_bag_of_words
from flink_agents_ltm.integrations.mem0.vector_store import Mem0VectorStore

store = Mem0VectorStore("faiss", {"path": sys.argv[1], "embedding_model_dims": 64},
                        collection="notes")
store.open(lambda name, kind: None)
stored = store.size()
while True:
    batch = [Document(f"note {stored + n}: " + "a long text to make the docstore big " * 20,
                      {"n": stored + n}, embedding=hashed_bag_of_words(f"note {n}", 64))
             for n in range(50)]
    store.add(batch)
    stored += len(batch)
    print(stored, flush=True)
"""


def opened(path):
    store = Mem0VectorStore("faiss", {"path": str(path), "embedding_model_dims": 64},
                            collection="notes")
    store.open(lambda name, kind: None)
    return store


def test_a_writer_killed_mid_save_leaves_every_document_it_had_saved(tmp_path):
    for kill in range(3):
        writer = subprocess.Popen([sys.executable, "-c", WRITER, str(tmp_path)],
                                  stdout=subprocess.PIPE, text=True)
        saved = 0
        for line in writer.stdout:  # its last saves take tens of ms: most kills land in one
            saved = int(line)
            if saved >= 1000 * (kill + 1):
                break
        time.sleep(0.005 * kill)
        writer.send_signal(signal.SIGKILL)
        writer.wait(30)
        store = opened(tmp_path)
        try:
            assert store.size() >= saved, f"kill {kill}: {store.size()} of {saved} documents"
            assert store.get(["missing"]) == []
        finally:
            store.close()


def test_a_new_collections_files_are_private_before_its_first_write(tmp_path):
    old = os.umask(0o022)  # Mem0 creates them with the umask: 0644 here
    try:
        opened(tmp_path).close()
    finally:
        os.umask(old)
    assert {p.name: stat.S_IMODE(p.stat().st_mode) for p in tmp_path.iterdir()} == {
        "notes.faiss": 0o600, "notes.json": 0o600}


def test_the_collection_files_are_private_and_reopen_with_every_document(tmp_path):
    store = opened(tmp_path)
    store.add([Document(f"note {n}", {"n": n}, f"id-{n}",
                        hashed_bag_of_words(f"note {n}", 64)) for n in range(20)])
    store.close()
    files = sorted(p.name for p in tmp_path.iterdir())
    assert files == ["notes.faiss", "notes.json"]  # no temporary file is left behind
    assert {stat.S_IMODE(os.stat(tmp_path / f).st_mode) for f in files} == {0o600}
    again = opened(tmp_path)
    try:
        assert again.size() == 20
        assert [d.metadata["n"] for d in again.get(["id-3", "id-17"])] == [3, 17]
        assert [d.id for d in again.query(vector=hashed_bag_of_words("note 5", 64),
                                          limit=1)] == ["id-5"]
    finally:
        again.close()


def test_a_failed_write_raises_and_leaves_the_collection_as_it_was(tmp_path, monkeypatch):
    import faiss

    store = opened(tmp_path)
    store.add([Document("kept", id="kept", embedding=hashed_bag_of_words("kept", 64))])
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}

    def disk_full(index, path):
        with open(path, "wb") as partial:
            partial.write(b"half an index")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(faiss, "write_index", disk_full)
    with pytest.raises(OSError, match="No space left on device"):
        store.add([Document("lost", id="lost", embedding=hashed_bag_of_words("lost", 64))])
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before
    # nor does the process see it: the failed rows left the index and the docstore again
    assert store.size() == 1 and store.get(["lost"]) == []
    monkeypatch.undo()
    store.add([Document("next", id="next", embedding=hashed_bag_of_words("next", 64))])
    assert {d.id for d in store.query(vector=hashed_bag_of_words("lost", 64), limit=5)} == {
        "kept", "next"}
    assert store._store("notes", create=False).index.ntotal == 2  # no vector left behind
    store.close()
    again = opened(tmp_path)
    try:
        assert sorted(d.id for d in again.get(["kept", "lost", "next"])) == ["kept", "next"]
    finally:
        again.close()


def test_long_term_memory_on_faiss_saves_its_collection_the_same_way(tmp_path):
    from flink_agents_ltm.integrations.mem0.long_term_memory import Mem0LongTermMemory
    from flink_agents_ltm.integrations.mem0.memory_factory import StoreSpec, acquire_memory

    folder = tmp_path / "faiss"
    spec = StoreSpec("faiss-job", vector_store={"provider": "faiss", "config": {
        "path": str(folder), "collection_name": "memories"}}, embedder="hashing",
        base_dir=tmp_path)
    memory, release = acquire_memory(spec)
    ltm = Mem0LongTermMemory("faiss-job", memory, on_close=release)
    try:
        ltm.switch_context("k1", "obs-1", False)
        ltm.get_memory_set("notes").add(["green tea", "black coffee"])
    finally:
        ltm.close()
    assert sorted(p.name for p in folder.iterdir()) == ["memories.faiss", "memories.json"]
    assert {stat.S_IMODE(p.stat().st_mode) for p in folder.iterdir()} == {0o600}
    memory, release = acquire_memory(spec)
    again = Mem0LongTermMemory("faiss-job", memory, on_close=release)
    try:
        again.switch_context("k1", "obs-2", False)
        assert sorted(i.value for i in again.get_memory_set("notes").get()) == [
            "black coffee", "green tea"]
    finally:
        again.close()


def test_deleting_many_documents_keeps_every_other_document_found_by_its_own_vector(tmp_path):
    import random

    rng = random.Random(7)
    vectors = {f"id-{n}": [rng.gauss(0, 1) for _ in range(64)] for n in range(30)}
    store = opened(tmp_path)
    store.add([Document(f"note {i}", id=i, embedding=v) for i, v in vectors.items()])
    doomed = [f"id-{n}" for n in (0, 3, 4, 5, 17, 29)]
    store.delete([*doomed, "never-stored"])
    kept = [i for i in vectors if i not in doomed]

    def each_found_by_its_own_vector(s):
        return [[d.id for d in s.query(vector=vectors[i], limit=1)] for i in kept] == [
            [i] for i in kept]

    assert store.size() == len(kept) and store.get(doomed) == []
    assert each_found_by_its_own_vector(store)
    store.close()
    again = opened(tmp_path)
    try:
        assert again.size() == len(kept) and each_found_by_its_own_vector(again)
    finally:
        again.close()


def test_an_insert_cut_between_its_two_files_is_dropped_when_the_collection_opens(
        tmp_path, caplog):
    store = opened(tmp_path)
    store.add([Document("first", id="first", embedding=hashed_bag_of_words("first", 64))])
    docstore_before = (tmp_path / "notes.json").read_bytes()
    store.add([Document(t, id=t, embedding=hashed_bag_of_words(t, 64))
               for t in ("second", "fourth")])
    store.close()
    # a writer killed between its two renames: the new index, the old docstore
    (tmp_path / "notes.json").write_bytes(docstore_before)
    caplog.set_level(logging.WARNING)
    again = opened(tmp_path)
    try:
        assert [(r.levelno, r.getMessage()) for r in caplog.records
                if r.name.endswith("faiss.files")] == [(
            logging.WARNING, f"FAISS collection 'notes' in {tmp_path}: dropped 2 vectors of an "
            "insert that did not complete (its process stopped between saving the index and "
            "the docstore)")]
        assert again.size() == 1
        assert [d.id for d in again.query(vector=hashed_bag_of_words("second", 64),
                                          limit=2)] == ["first"]
        again.add([Document("third", id="third", embedding=hashed_bag_of_words("third", 64))])
        assert [d.id for d in again.query(vector=hashed_bag_of_words("third", 64),
                                          limit=1)] == ["third"]
    finally:
        again.close()


def test_a_delete_cut_between_its_two_files_is_refused_when_the_collection_opens(tmp_path):
    from flink_agents_ltm.integrations.mem0.providers.faiss.files import TornCollectionError

    store = opened(tmp_path)
    store.add([Document(t, id=t, embedding=hashed_bag_of_words(t, 64)) for t in ("a", "b")])
    docstore_before = (tmp_path / "notes.json").read_bytes()
    store.delete(["a"])
    store.close()
    # the renumbered index, the docstore from before the delete
    (tmp_path / "notes.json").write_bytes(docstore_before)
    with pytest.raises(TornCollectionError, match=r"FAISS collection 'notes' in .* is torn: "
                                                  r"its index holds 1 vectors but its "
                                                  r"docstore names 2 positions"):
        opened(tmp_path)  # when the store opens, that is when the job starts


def test_long_term_memory_on_faiss_undoes_a_failed_add_and_deletes_in_one_save(
        tmp_path, monkeypatch):
    import faiss

    from flink_agents_ltm.api.memory.long_term_memory import LongTermMemoryError
    from flink_agents_ltm.integrations.mem0.long_term_memory import Mem0LongTermMemory
    from flink_agents_ltm.integrations.mem0.memory_factory import StoreSpec, acquire_memory

    spec = StoreSpec("faiss-undo", vector_store={"provider": "faiss", "config": {
        "path": str(tmp_path / "faiss"), "collection_name": "memories"}}, embedder="hashing",
        base_dir=tmp_path)
    memory, release = acquire_memory(spec)
    ltm = Mem0LongTermMemory("faiss-undo", memory, on_close=release)
    try:
        ltm.switch_context("k1", "obs-1", False)
        notes = ltm.get_memory_set("notes")
        kept = notes.add(["green tea", "black coffee", "oolong"])
        real_write_index = faiss.write_index

        def disk_full(index, path):
            raise OSError(28, "No space left on device")

        monkeypatch.setattr(faiss, "write_index", disk_full)
        with pytest.raises(LongTermMemoryError):
            notes.add(["lost one", "lost two"])
        monkeypatch.setattr(faiss, "write_index", real_write_index)
        assert sorted(i.value for i in notes.get()) == ["black coffee", "green tea", "oolong"]
        saves = []
        real_save = memory.vector_store.inner._save
        monkeypatch.setattr(memory.vector_store.inner, "_save",
                            lambda: (saves.append(1), real_save()))
        assert sorted(notes.delete(kept[:2])) == sorted(kept[:2])
        assert len(saves) == 1  # both ids in one pass and one save
        assert [i.value for i in notes.get()] == ["oolong"]
    finally:
        ltm.close()

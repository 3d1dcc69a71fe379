"""A store is shared by every operator and worker thread of a process: concurrent calls
neither fail nor lose writes, also on stores that are not thread-safe themselves."""

from concurrent.futures import ThreadPoolExecutor

from flink_agents_ltm.api.vector_stores import Document
from flink_agents_ltm.integrations.mem0.serialized_store import is_thread_safe

THREADS, ROUNDS = 8, 12


def work(store, thread):
    written = []
    for round_ in range(ROUNDS):
        ids = [f"t{thread}-r{round_}-{i}" for i in range(2)]
        store.add([Document(f"thread {thread} round {round_} note {i}", {"thread": thread}, id_)
                   for i, id_ in enumerate(ids)])
        written.extend(ids)
        hits = store.query(f"thread {thread} round {round_}", limit=3,
                           filters={"thread": {"in": [thread]}})
        assert all(d.metadata["thread"] == thread for d in hits)
        if round_ % 3 == 2:
            store.update(Document(f"thread {thread} updated", {"thread": thread}, ids[0]))
    return written


def test_many_threads_adding_querying_and_updating_lose_nothing(store):
    with ThreadPoolExecutor(THREADS) as pool:
        written = [i for ids in pool.map(lambda t: work(store, t), range(THREADS)) for i in ids]
    assert store.size() == THREADS * ROUNDS * 2
    assert {d.id for d in store.get(limit=None)} == set(written)
    for thread in range(THREADS):
        assert len(store.get(filters={"thread": thread}, limit=None)) == ROUNDS * 2


def test_two_stores_on_one_embedded_qdrant_folder_share_its_client_and_lock(tmp_path, hashing):
    from flink_agents_ltm.integrations.mem0.vector_store import Mem0VectorStore
    from tests.vector_stores.conftest import lookup

    config = {"path": str(tmp_path / "qdrant")}
    stores = [Mem0VectorStore("qdrant", config, embedding_model="e", collection=name)
              for name in ("one", "two")]
    for store in stores:
        store.open(lookup(e=hashing))
    try:
        assert stores[0]._shared_client is stores[1]._shared_client
        assert not is_thread_safe(stores[0]._owner)
        with ThreadPoolExecutor(THREADS) as pool:
            list(pool.map(lambda t: work(stores[t % 2], t), range(THREADS)))
        assert [s.size() for s in stores] == [THREADS * ROUNDS, THREADS * ROUNDS]
    finally:
        for store in stores:
            store.close()
    reopened = Mem0VectorStore("qdrant", config, embedding_model="e", collection="one")
    reopened.open(lookup(e=hashing))  # the folder was released with the last store
    assert reopened.size() == THREADS * ROUNDS
    reopened.close()

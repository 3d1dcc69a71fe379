"""Mem0VectorStore, each method on each real store (embedded Qdrant, pgvector, FAISS)."""

import os
import stat
import uuid
from pathlib import Path

import pytest
from mem0.configs.embeddings.base import BaseEmbedderConfig

from flink_agents_ltm.api.vector_stores import (
    CollectionNotFoundError,
    DimensionMismatchError,
    Document,
    DocumentNotFoundError,
    DuplicateDocumentError,
    VectorStoreQuery,
)
from flink_agents_ltm.integrations.mem0.hashing_embedder import (
    HashingEmbedding,
    hashed_bag_of_words,
)
from flink_agents_ltm.integrations.mem0.vector_store import Mem0VectorStore
from tests.vector_stores.conftest import lookup

TEAS = [Document("green tea from japan", {"kind": "tea"}, "sencha"),
        Document("black coffee from brazil", {"kind": "coffee"}, "santos"),
        Document("oolong tea from taiwan", {"kind": "tea"}, "oolong")]


class CountingEmbedder(HashingEmbedding):
    """The hashing embedder, recording each batch it is given."""

    def __init__(self):
        super().__init__()
        self.batches = []

    def embed_batch(self, texts, memory_action="add"):
        self.batches.append(list(texts))
        return [self.embed(t) for t in texts]


def test_added_documents_come_back_by_id_with_content_and_metadata(store):
    assert store.add(TEAS) == ["sencha", "santos", "oolong"]
    assert store.get(["oolong", "missing", "sencha"]) == [
        Document("oolong tea from taiwan", {"kind": "tea"}, "oolong"),
        Document("green tea from japan", {"kind": "tea"}, "sencha")]
    assert store.size() == 3


def test_documents_read_back_are_as_frozen_and_comparable_as_documents_made_by_hand(store):
    import pickle

    nested = Document("nested", {"tags": ["a", "b"], "who": {"name": "x"}, "n": 2.5}, "d1")
    store.add([nested, *TEAS])
    [found] = store.get(["d1"])
    [hit] = store.query("nested", limit=1)
    for document in (found, hit):
        assert document.metadata["tags"] == ("a", "b")
        with pytest.raises(TypeError):
            document.metadata["tags"] = ()
        with pytest.raises(AttributeError):
            document.content = "other"
    assert found == nested and hash(found) == hash(nested)
    assert pickle.loads(pickle.dumps(hit)) == hit and isinstance(hit.score, float)


def test_documents_without_an_id_get_one_and_any_string_is_a_valid_id(store):
    ids = store.add([Document("no id here"), Document("odd id", id="Ünïcode id / with spaces"),
                     Document("a uuid", id="0b6d3e0e-3b4e-4d0c-9d5e-1c2f3a4b5c6d")])
    assert len(set(ids)) == 3 and ids[1:] == ["Ünïcode id / with spaces",
                                              "0b6d3e0e-3b4e-4d0c-9d5e-1c2f3a4b5c6d"]
    assert [d.content for d in store.get(ids)] == ["no id here", "odd id", "a uuid"]


def test_ids_that_spell_the_same_uuid_differently_stay_different_documents(store):
    canonical = "0b6d3e0e-3b4e-4d0c-9d5e-1c2f3a4b5c6d"
    spellings = [canonical, canonical.upper(), "{" + canonical + "}", canonical.replace("-", "")]
    store.add([Document(f"doc {n}", id=i) for n, i in enumerate(spellings)])
    assert [(d.id, d.content) for d in store.get(spellings)] == [
        (i, f"doc {n}") for n, i in enumerate(spellings)]
    assert store.size() == 4


def test_a_query_ranks_by_similarity_with_scores_highest_first(store):
    store.add(TEAS)
    found = store.query("tea from taiwan", limit=2)
    assert [d.id for d in found] == ["oolong", "sencha"]
    assert found.documents[0].score > found.documents[1].score
    assert all(d.metadata["kind"] == "tea" for d in found)


def test_a_query_by_vector_and_a_query_object_answer_like_a_query_by_text(store):
    store.add(TEAS)
    by_text = store.query("coffee", limit=1)
    by_vector = store.query(vector=hashed_bag_of_words("coffee", 384), limit=1)
    by_object = store.query(VectorStoreQuery(text="coffee", limit=1))
    assert [d.id for d in by_text] == [d.id for d in by_vector] == [d.id for d in by_object] == [
        "santos"]


def test_precomputed_embeddings_are_stored_as_given(store):
    far = [0.0] * 383 + [1.0]
    store.add([Document("text that would embed elsewhere", id="given", embedding=far), *TEAS])
    assert [d.id for d in store.query(vector=far, limit=1)] == ["given"]


def test_texts_are_embedded_in_batches_of_the_configured_size(make_store):
    embedder = CountingEmbedder()
    store = make_store(embedder=embedder, embedding_batch_size=2)
    embedder.batches.clear()
    store.add([Document(f"text {i}") for i in range(5)])
    assert [len(batch) for batch in embedder.batches] == [2, 2, 1]


def test_an_id_already_stored_is_refused_and_nothing_of_the_call_is_written(store):
    store.add(TEAS[:1])
    with pytest.raises(DuplicateDocumentError, match=r"\['sencha'\] are already stored in "
                                                     "collection 'docs'; use update"):
        store.add([Document("new", id="fresh"), Document("again", id="sencha")])
    with pytest.raises(DuplicateDocumentError, match="'twice' appears twice in one call"):
        store.add([Document("a", id="twice"), Document("b", id="twice")])
    assert store.get(["fresh", "twice"]) == []
    assert store.get("sencha")[0].content == "green tea from japan"


def test_update_replaces_content_metadata_and_vector(store):
    store.add(TEAS)
    store.update(Document("espresso from italy", {"kind": "coffee", "roast": "dark"}, "sencha"))
    assert store.get("sencha") == [Document("espresso from italy",
                                            {"kind": "coffee", "roast": "dark"}, "sencha")]
    assert store.query("espresso italy", limit=1).documents[0].id == "sencha"
    assert store.size() == 3


def test_update_of_an_id_that_is_not_stored_changes_nothing(store):
    store.add(TEAS)
    with pytest.raises(DocumentNotFoundError, match=r"\['ghost'\] are not stored .* nothing "
                                                    "was changed"):
        store.update([Document("changed", id="sencha"), Document("boo", id="ghost")])
    with pytest.raises(ValueError, match="document 0 has no id"):
        store.update(Document("no id"))
    assert store.get("sencha")[0].content == "green tea from japan"


def test_delete_by_id_returns_what_was_deleted_and_needs_ids_or_filters(store):
    store.add(TEAS)
    assert store.delete(["santos", "nobody"]) == ["santos"]
    assert store.delete("santos") == []
    assert {d.id for d in store.get()} == {"sencha", "oolong"}
    assert store.delete(["sencha", "oolong"], filters={"kind": "coffee"}) == []
    with pytest.raises(ValueError, match="delete needs ids or filters; reset"):
        store.delete()
    assert store.size() == 2


def test_get_without_ids_honours_the_limit_and_none_means_all(store):
    store.add([Document(f"note {i}", {"n": i}) for i in range(300)])
    assert len(store.get(limit=7)) == 7
    assert len(store.get(limit=None)) == 300
    assert len(store.get(filters={"n": {"gte": 100}}, limit=None)) == 200
    assert store.size() == 300


def test_metadata_keys_that_hold_content_and_id_are_reserved(store):
    with pytest.raises(ValueError, match=r"\['data'\] are reserved"):
        store.add(Document("x", {"data": "y"}))
    with pytest.raises(ValueError, match=r"reserved key\(s\) \['flink_agents_id'\]"):
        store.get(filters={"flink_agents_id": "x"})


def test_a_vector_of_another_dimension_is_refused_before_anything_is_written(store):
    with pytest.raises(DimensionMismatchError, match="has 3 dimensions; this store holds "
                                                     "384-dimensional vectors"):
        store.add([Document("fine"), Document("short", embedding=[1.0, 2.0, 3.0])])
    with pytest.raises(DimensionMismatchError, match="query vector has 2 dimensions"):
        store.query(vector=[1.0, 2.0])
    assert store.size() == 0


def test_collections_are_created_listed_inspected_reset_and_dropped(store):
    store.add(TEAS)
    assert store.list_collections() == ["docs"]
    info = store.get_or_create_collection("archive")
    assert (info.name, info.size, info.dimensions) == ("archive", 0, 384)
    assert info.details["provider"] == store.provider
    store.add(Document("old tea", id="old"), collection="archive")
    assert store.list_collections() == ["archive", "docs"]
    assert store.get_collection("archive").size == 1
    assert store.get_or_create_collection("archive").size == 1  # already there: kept
    assert [d.id for d in store.query("tea", collection="archive")] == ["old"]
    assert store.get("old") == []  # collections do not mix

    store.reset("archive")
    assert store.get_collection("archive").size == 0
    store.reset()
    assert store.size() == 0 and store.list_collections() == ["archive", "docs"]

    store.delete_collection("archive")
    assert store.list_collections() == ["docs"]
    with pytest.raises(CollectionNotFoundError, match="collection 'archive' does not exist"):
        store.get_collection("archive")
    with pytest.raises(CollectionNotFoundError):
        store.query("tea", collection="archive")
    with pytest.raises(CollectionNotFoundError):
        store.delete_collection("archive")
    store.add(Document("adding creates it"), collection="archive")
    assert store.get_collection("archive").size == 1


def test_collection_names_that_would_escape_a_folder_or_a_table_are_refused(store):
    for name in ("../etc", "a b", "", "x" * 64, "-dash"):
        with pytest.raises(ValueError, match="invalid collection name"):
            store.get_or_create_collection(name)


def test_a_second_store_on_the_same_place_sees_the_same_documents(make_store):
    first = make_store()
    first.add(TEAS)
    second = make_store()
    assert {d.id for d in second.get()} == {"sencha", "santos", "oolong"}


def test_a_collection_of_another_dimension_is_refused_when_the_store_opens(
        provider, store_config, make_store):
    make_store(collection="small").add(Document("x"))

    store = Mem0VectorStore(provider, store_config, embedding_model="embedder",
                            collection="small")
    with pytest.raises(DimensionMismatchError, match=f"collection 'small' of the {provider} "
                                                     "vector store holds 384-dimensional .* 8"):
        store.open(lookup(embedder=HashingEmbedding(BaseEmbedderConfig(embedding_dims=8))))
    store.close()


def test_a_closed_store_refuses_work(make_store):
    store = make_store()
    store.close()
    with pytest.raises(RuntimeError, match="not open"):
        store.query("tea")


@pytest.mark.parametrize("provider", ["qdrant", "faiss"])
def test_an_embedded_store_without_a_path_lives_privately_under_the_home(provider, hashing):
    home = Path(os.environ["FLINK_AGENTS_LTM_HOME"])
    store = Mem0VectorStore(provider, embedding_model="embedder", collection=f"home_{provider}")
    store.open(lookup(embedder=hashing))
    try:
        store.add(Document("kept at home"))
        folder = home / "vector_stores" / provider
        assert folder.is_dir() and stat.S_IMODE(folder.stat().st_mode) == 0o700
        assert f"home_{provider}" in store.list_collections()
    finally:
        store.close()


@pytest.mark.parametrize("provider", ["qdrant", "faiss"])
def test_every_folder_an_embedded_store_creates_on_its_path_is_private(tmp_path, provider,
                                                                       hashing):
    store = Mem0VectorStore(provider, {"path": str(tmp_path / "stores" / "kb" / provider)},
                            embedding_model="embedder", collection="private")
    store.open(lookup(embedder=hashing))
    store.close()
    made = [tmp_path / "stores", tmp_path / "stores" / "kb", tmp_path / "stores" / "kb" / provider]
    assert [stat.S_IMODE(f.stat().st_mode) for f in made] == [0o700] * 3


@pytest.mark.parametrize("distance", ["euclidean", "cosine", "inner_product"])
def test_faiss_queries_rank_and_score_as_mem0s_own_faiss_search_does(tmp_path, hashing, distance):
    from mem0.vector_stores.faiss import FAISS

    store = Mem0VectorStore("faiss", {"path": str(tmp_path), "distance_strategy": distance},
                            embedding_model="embedder", collection="ranked")
    store.open(lookup(embedder=hashing))
    try:
        texts = [f"{adjective} tea number {n}" for n in range(40)
                 for adjective in ("green", "black", "smoky")]
        store.add([Document(t, id=str(uuid.uuid5(uuid.NAMESPACE_URL, t))) for t in texts])
        query = [3 * x for x in hashed_bag_of_words("smoky black tea number 7", 384)]
        found = store.query(vector=query, limit=7).documents
    finally:
        store.close()
    mem0s = FAISS("ranked", path=str(tmp_path), distance_strategy=distance,
                  embedding_model_dims=384).search(query="", vectors=query, top_k=7)
    assert [d.id for d in found] == [r.id for r in mem0s]
    assert [d.score for d in found] == pytest.approx([r.score for r in mem0s], abs=1e-6)
    assert len({round(d.score, 6) for d in found}) > 1

"""The long-term-memory options of the README's table doing what its rows say, on the
default memory (Mem0 over the embedded store, MiniLM) built from the options as an
operator builds it."""

import hashlib

import pytest

from flink_agents_ltm.integrations.mem0.long_term_memory import Mem0LongTermMemory

BASE_DIR = "long-term-memory.embedded.base-dir"
QUESTION = "what kind of pet does the customer have"


def remembered(ltm):
    ltm.switch_context("customer-7", None, True)
    return [item.value for item in ltm.get_memory_set("profile").get()]


def test_a_job_id_longer_than_max_name_length_is_refused_before_its_store_is_made(tmp_path):
    base_dir = tmp_path / "ltm"
    for job_id, options, allowed in [("j" * 513, {}, 512),
                                     ("j" * 9, {"long-term-memory.max-name-length": 8}, 8)]:
        with pytest.raises(ValueError, match=rf"job_id has {len(job_id)} characters, more than "
                                             rf"the {allowed} allowed \(long-term-memory\."
                                             r"max-name-length\)"):
            Mem0LongTermMemory.from_config(job_id, {BASE_DIR: str(base_dir), **options})
    assert not base_dir.exists()  # refused before anything was written


def test_job_ids_as_long_as_max_name_length_each_get_a_store_of_their_own(tmp_path):
    # Escaped for a folder name, such an id is far longer than a file name may be.
    first, second = (("support bot/ü-" * 40)[:511] + end for end in "12")
    stored = {}
    for job_id in (first, second):
        ltm = Mem0LongTermMemory.from_config(job_id, {BASE_DIR: str(tmp_path)})
        try:
            ltm.switch_context("customer-7", "obs-1", False)
            ltm.get_memory_set("profile").add(f"note of job {job_id[-1]}")
            stored[job_id] = remembered(ltm)
        finally:
            ltm.close()
    assert stored == {first: ["note of job 1"], second: ["note of job 2"]}
    folders = {f.name[-64:]: f for f in tmp_path.iterdir()}  # cut, ending in the id's hash
    assert set(folders) == {hashlib.sha256(j.encode()).hexdigest() for j in (first, second)}
    assert all(f.name.startswith("support%20bot%2F%FC-support") and len(f.name) == 255
               and (f / "vectors.sqlite3").is_file() for f in folders.values())


@pytest.fixture
def pet_notes(tmp_path):
    """The default memory holding a note about a pet and one that is not, and the scores
    a search about pets gives them without a threshold."""
    ltm = Mem0LongTermMemory.from_config("threshold-job", {BASE_DIR: str(tmp_path)})
    ltm.switch_context("customer-7", "obs-1", False)
    ltm.get_memory_set("profile").add(["My dog Rex needs a new lead", "I pay by bank transfer"])
    ltm.switch_context("customer-7", None, True)
    hits = ltm.get_memory_set("profile").search(QUESTION)
    yield ltm, {hit.value: hit.score for hit in hits}
    ltm.close()


def test_a_search_threshold_drops_the_hits_scoring_below_it(pet_notes, tmp_path):
    ltm, scores = pet_notes
    assert list(scores) == ["My dog Rex needs a new lead", "I pay by bank transfer"]
    high, low = scores.values()
    assert 0 < low < high  # without a threshold (0.0, the default) the weak hit comes back
    threshold = (low + high) / 2
    strict = Mem0LongTermMemory.from_config("threshold-job", {
        BASE_DIR: str(tmp_path), "long-term-memory.search-threshold": threshold})
    try:
        strict.switch_context("customer-7", None, True)
        assert [hit.value for hit in strict.get_memory_set("profile").search(QUESTION)] == [
            "My dog Rex needs a new lead"]
    finally:
        strict.close()
    ltm.switch_context("customer-7", None, True)
    assert [hit.value for hit in ltm.get_memory_set("profile").search(
        QUESTION, threshold=threshold)] == ["My dog Rex needs a new lead"]  # or per call

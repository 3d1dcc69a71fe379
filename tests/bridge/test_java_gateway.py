"""The gateway Java calls through Pemja: plain values in, envelopes out."""

import threading

import pytest

from flink_agents_ltm.api.memory.long_term_memory import empty_key_message, unbound_message
from flink_agents_ltm.bridge import java_gateway
from flink_agents_ltm.bridge.java_gateway import JavaLongTermMemoryGateway
from tests.memory.conftest import rows_of


@pytest.fixture
def gateway(ltm):
    return JavaLongTermMemoryGateway(ltm)


def ok(answer):
    assert isinstance(answer, list) and len(answer) == 1, answer
    return answer[0]


def test_results_come_back_as_plain_lists_and_dicts(gateway):
    ids = ok(gateway.add("notes", "alice", "obs", False, ["the sky is blue"], [{"topic": "sky"}]))
    hits = ok(gateway.search("notes", "alice", "obs", False, "sky", 1, None, {}))
    got = ok(gateway.get("notes", "alice", "obs", False, ids, None, 100))

    assert len(ids) == 1 and isinstance(ids[0], str)
    assert [h["value"] for h in hits] == ["the sky is blue"]
    assert set(hits[0]) == {"memory_set_name", "id", "value", "metadata", "created_at",
                            "updated_at", "score"}
    assert got[0]["metadata"]["topic"] == "sky" and got[0]["score"] is None
    assert ok(gateway.delete("notes", "alice", "obs", False, None)) == ids


def test_python_failures_become_typed_envelopes_with_the_python_message(gateway):
    unbound = gateway.add("notes", None, "obs", False, ["x"], None)
    empty = gateway.get("notes", " ", "obs", False, None, None, 10)
    bad_type = gateway.add("notes", "alice", "obs", False, [42], None)
    bad_limit = gateway.search("notes", "alice", "obs", False, "q", 0, None, {})

    assert unbound["error"] == "unbound" and unbound["message"] == unbound_message("add", "notes")
    assert empty["error"] == "empty_key" and empty["message"] == empty_key_message("get", "notes")
    assert bad_type["error"] == "type" and "item 0 is int" in bad_type["message"]
    assert bad_limit["error"] == "value" and "Traceback" in bad_limit["traceback"]
    assert {unbound["error"], empty["error"], bad_type["error"]} <= java_gateway.ERROR_KINDS


def test_delete_memory_set_acts_on_the_key_java_passes(gateway, ltm, recording_memory):
    ltm.switch_context("alice", None, True)
    ltm.get_memory_set("notes").add("alice's")
    ltm.switch_context("bob", None, True)
    ltm.get_memory_set("notes").add("bob's")

    assert ok(gateway.delete_memory_set("notes", "alice", None, True)) is True

    assert rows_of(recording_memory, "alice") == []
    assert rows_of(recording_memory, "bob") == ["bob's"]


def test_a_java_owned_memory_leaves_the_mailbox_check_to_java_and_closes_once(tmp_path):
    handle = ok(java_gateway.open_long_term_memory(
        "gateway-test", {"long-term-memory.embedded.base-dir": str(tmp_path),
                         "long-term-memory.vector-store": {
                             "provider": "qdrant",
                             "config": {"collection_name": "c", "path": ":memory:"}}}))
    gateway = java_gateway.gateway(handle)
    assert gateway.ltm.job_id == "gateway-test"
    # Pemja calls arrive on Java threads, and Java ran its own mailbox check already.
    answers = []
    worker = threading.Thread(target=lambda: answers.append(
        gateway.delete_memory_set("notes", "alice", None, True)))
    worker.start()
    worker.join()
    assert answers == [[False]]

    assert ok(java_gateway.close_long_term_memory(handle)) is True
    assert ok(java_gateway.close_long_term_memory(handle)) is False
    with pytest.raises(LookupError, match="closed"):
        java_gateway.gateway(handle)


def test_a_vector_store_given_as_json_text_opens_that_store_instead_of_the_embedded_one(
        tmp_path):
    handle = ok(java_gateway.open_long_term_memory(
        "gateway-json", {"long-term-memory.embedded.base-dir": str(tmp_path),
                         "long-term-memory.vector-store": ' {"provider": "qdrant", "config": '
                         '{"collection_name": "c", "path": ":memory:"}}'}))
    try:
        assert ok(java_gateway.gateway(handle).add("notes", "alice", "o", True, ["hi"], None))
        assert not (tmp_path / "gateway-json" / "qdrant").exists()  # not the embedded store
    finally:
        java_gateway.close_long_term_memory(handle)


def test_malformed_vector_store_json_from_java_is_refused_naming_the_option(tmp_path):
    answer = java_gateway.open_long_term_memory(
        "gateway-bad-json", {"long-term-memory.embedded.base-dir": str(tmp_path),
                             "long-term-memory.vector-store": '{"provider": "pgvector",'})

    assert answer["error"] == "value"
    assert answer["message"].startswith(
        "option 'long-term-memory.vector-store' is not valid JSON (")
    assert not (tmp_path / "gateway-bad-json").exists()  # refused before any store opened


def test_flink_agents_key_of_the_vector_store_from_java_opens_that_store(tmp_path):
    # Java's long-term memory config may use Apache Flink Agents' keys too (api/options.py)
    handle = ok(java_gateway.open_long_term_memory(
        "gateway-upstream-key", {"long-term-memory.embedded.base-dir": str(tmp_path),
                                 "long-term-memory.mem0.vector-store": '{"provider": "qdrant", '
                                 '"config": {"collection_name": "c", "path": ":memory:"}}'}))
    try:
        assert ok(java_gateway.gateway(handle).add("notes", "alice", "o", True, ["hi"], None))
        assert not (tmp_path / "gateway-upstream-key" / "qdrant").exists()
    finally:
        java_gateway.close_long_term_memory(handle)


def test_end_action_answers_a_completed_actions_observations_and_the_items_it_added(gateway):
    ids = ok(gateway.add("notes", "alice", "obs-done", False, ["tea", "cake"], None))
    ok(gateway.search("notes", "alice", "obs-done", False, "tea", 1, None, {}))

    outcome = ok(gateway.end_action("obs-done", True))

    assert outcome["items_added"] == 2
    assert [(o["op"], o["key"], o["set"]) for o in outcome["observations"]] == [
        ("add", "alice", "notes"), ("search", "alice", "notes")]
    assert outcome["observations"][0]["ids"] == ids
    assert type(outcome["observations"]) is list and type(outcome["observations"][0]) is dict
    # The action is forgotten: a second end finds nothing.
    assert ok(gateway.end_action("obs-done", True)) == {"observations": [], "items_added": 0}


def test_items_stored_by_counts_an_actions_adds_without_ending_it(gateway):
    assert ok(gateway.items_stored_by("obs-count")) == 0
    first = ok(gateway.add("notes", "alice", "obs-count", False, ["tea", "cake"], None, "call0"))
    ok(gateway.search("notes", "alice", "obs-count", False, "tea", 1, None, {}))

    assert ok(gateway.items_stored_by("obs-count")) == 2
    # Not ended: the next add at the same position gets the next ordinals' ids.
    assert ok(gateway.add("notes", "alice", "obs-count", False, ["jam"], None, "call0"))[0] \
        not in first
    assert ok(gateway.end_action("obs-count", False))["items_added"] == 3


def test_end_action_of_a_failed_attempt_drops_its_observations_but_counts_its_items(gateway):
    first = ok(gateway.add("notes", "alice", "obs-try", False, ["tea"], None, "body"))

    outcome = ok(gateway.end_action("obs-try", False))

    assert outcome == {"observations": [], "items_added": 1}
    # Ending forgot the attempt's ids: the next attempt of the step mints the same ones.
    assert ok(gateway.add("notes", "alice", "obs-try", False, ["tea"], None, "body")) == first


def test_a_ttl_java_leaves_out_is_the_default_and_one_it_gives_is_checked_by_python(gateway, ltm):
    ltm.set_clock(lambda: 1_000.0)
    short = ok(gateway.add("notes", "alice", None, True, ["short"], None, "body", True, 10.0))
    forever = ok(gateway.add("notes", "alice", None, True, ["forever"], None, "body", True, None))
    default = ok(gateway.add("notes", "alice", None, True, ["default"], None))
    assert ok(gateway.update("notes", "alice", None, True, default[0], "default, 5 s", None,
                             True, 5.0)) is True
    negative = gateway.add("notes", "alice", None, True, ["x"], None, "body", True, -1.0)

    ltm.set_clock(lambda: 1_011.0)
    left = ok(gateway.get("notes", "alice", None, True, None, None, 100))

    assert [item["id"] for item in left] == forever and short[0] not in forever
    assert negative["error"] == "value" and negative["message"].startswith("add(ttl=...)")
    assert ok(gateway.sweep_expired(10)) == 2
    assert gateway.sweep_expired(0)["message"] == "limit must be a positive int, got 0"


def test_erase_key_erases_the_key_java_passes_and_python_checks_it(gateway, ltm,
                                                                   recording_memory):
    ok(gateway.add("notes", "alice", None, True, ["alice's"], None))
    ok(gateway.add("orders", "alice", None, True, ["alice's order"], None))
    ok(gateway.add("notes", "bob", None, True, ["bob's"], None))

    assert ok(gateway.erase_key("alice")) == 2
    assert rows_of(recording_memory, "alice") == []
    assert rows_of(recording_memory, "bob") == ["bob's"]
    assert gateway.erase_key(" ")["message"] == empty_key_message("erase_key", None)
    assert gateway.erase_key(None)["error"] == "unbound"


def test_a_java_reranker_is_a_python_class_named_in_the_config():
    from flink_agents_ltm.integrations.rerankers.lexical import LexicalReranker

    built = java_gateway._java_resources(
        "reranker", "flink_agents_ltm.integrations.rerankers.lexical.LexicalReranker")
    assert isinstance(built, LexicalReranker)
    with pytest.raises(ValueError, match="module-qualified Python class"):
        java_gateway._java_resources("reranker", "lexical")
